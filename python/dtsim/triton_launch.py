"""dtsim under the installed Triton: Triton's own host package stays (`triton.__version__`, Config,
autotune, heuristics, testing, runtime, tools), and dtsim takes over at the launch, where
TRITON_INTERPRET=1 does: after Triton has bound the arguments, specialized the constexprs and
computed the grid. The launched specialization is lowered by Triton's own frontend to TTIR (its
first stage: no GPU is needed), and dtsim lowers TTIR to its tile IR and runs it on the interpreter
(or its CUDA backend). Every construct Triton accepts is read as Triton reads it.

On a machine without a GPU driver, dtsim registers itself as Triton's active driver: a CPU "device"
whose benchmarker times launches by wall clock, so host code that asks the driver for the device,
its properties or the target keeps working."""
import functools
import hashlib
import inspect
import os
import re
import sys
import time

from . import _dtsim

_TARGET_ARCH = int(os.environ.get("DTSIM_TARGET_ARCH", "90"))


def triton_available():
    """True when a real Triton (not dtsim's stand-in) can be imported."""
    import importlib.util
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return False
    return "dtsim" not in os.path.dirname(spec.origin)


# ---- the CPU driver ----

class _Utils:
    def get_device_properties(self, device=None):
        # an H100 SXM's figures: host code sizes its launches from them, as on the GPU dtsim emulates
        return {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132, "warpSize": 32,
                "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}


class _DeviceInterface:
    """What triton.testing and the autotuner ask of the device: synchronization is a no-op (a launch
    has finished when it returns), events are wall-clock stamps."""

    class Event:
        def __init__(self, enable_timing=True):
            self.t = None

        def record(self, stream=None):
            self.t = time.perf_counter()

        def elapsed_time(self, other):
            return (other.t - self.t) * 1000.0

        def synchronize(self):
            pass

    @staticmethod
    def synchronize(device=None):
        pass

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def is_available():
        return True


def wall_bench(fn, warmup=None, rep=None, grad_to_none=None, quantiles=None, return_mode="mean", **_):
    """triton.testing.do_bench on dtsim's interpreter: the wall time of one call, in ms (labelled as
    such in the docs: it is the interpreter's time, not a GPU's)."""
    fn()  # the first call compiles
    t = time.perf_counter()
    fn()
    ms = (time.perf_counter() - t) * 1000.0
    if quantiles is not None:
        return [ms for _ in quantiles]
    if return_mode == "all":
        return [ms]
    return ms


def _answer_torch_cuda_queries():
    """Host code that finds the target to be CUDA goes on to ask torch about the device
    (`torch.cuda.get_device_capability()[0] >= 9`, `get_device_properties("cuda").multi_processor_count`).
    Where torch has no GPU, those queries answer as the H100 this driver presents, consistently with
    get_current_target() and utils.get_device_properties(); nothing else of torch.cuda changes."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(torch.cuda, "_dtsim_answers", False):
        return
    try:
        if torch.cuda.is_available():
            return
    except Exception:
        pass
    import types
    p = _Utils().get_device_properties()
    props = types.SimpleNamespace(
        name="NVIDIA H100 80GB HBM3 (dtsim CPU driver)", major=_TARGET_ARCH // 10, minor=_TARGET_ARCH % 10,
        multi_processor_count=p["multiprocessor_count"], total_memory=80 * 2**30, L2_cache_size=50 * 2**20,
        warp_size=p["warpSize"], max_threads_per_multi_processor=2048, regs_per_multiprocessor=p["max_num_regs"],
        shared_memory_per_block_optin=p["max_shared_mem"], is_integrated=False)
    torch.cuda.get_device_capability = lambda device=None: (props.major, props.minor)
    torch.cuda.get_device_properties = lambda device=None: props
    torch.cuda.get_device_name = lambda device=None: props.name
    torch.cuda._dtsim_answers = True


class CpuDriver:
    """Triton's active driver while kernels run on dtsim's interpreter and no GPU driver is active."""

    def __init__(self):
        self.utils = _Utils()
        self.backend = "cuda"

    @classmethod
    def is_active(cls):
        return True

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        _answer_torch_cuda_queries()
        try:
            from triton.backends.compiler import GPUTarget
        except ImportError:  # dtsim's stand-in package: a target of the same shape
            import collections
            GPUTarget = collections.namedtuple("GPUTarget", "backend arch warp_size")
        return GPUTarget("cuda", _TARGET_ARCH, 32)

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def get_device_interface(self):
        return _DeviceInterface

    def get_benchmarker(self):
        return wall_bench

    def get_empty_cache_for_benchmark(self):
        import torch
        return torch.empty(1, dtype=torch.int8)

    def clear_cache(self, cache):
        pass

    def map_python_to_cpp_type(self, ty):
        return ty


# ---- TTIR from the installed Triton ----

class _Frontend:
    """The installed Triton's frontend, up to its TTIR stage, for one target."""

    def __init__(self, target):
        from triton.compiler.compiler import make_backend
        from triton._C.libtriton import ir
        self.ir = ir
        self.target = target
        self.backend = make_backend(target)
        self.ir_takes_target = None  # ASTSource.make_ir's first argument is the target (not in Triton 3.4)

    def ttir(self, src, options):
        ir = self.ir
        context = ir.context()
        ir.load_dialects(context)
        self.backend.load_dialects(context)
        codegen_fns = self.backend.get_codegen_implementation(options)
        module_map = self.backend.get_module_map()
        if self.ir_takes_target is None:
            import inspect
            self.ir_takes_target = "target" in inspect.signature(src.make_ir).parameters
        if self.ir_takes_target:
            module = src.make_ir(self.target, options, codegen_fns, module_map, context)
        else:  # Triton 3.4: no target argument
            module = src.make_ir(options, codegen_fns, module_map, context)
        stages = {}
        self.backend.add_stages(stages, options, src.language)
        module = stages["ttir"](module, {})
        return str(module)


def _ttir_cache_entry(fe, src, options):
    """Where this specialization's TTIR is kept between processes: Triton's cache manager under
    Triton's own compilation key (its version, the kernel's source and dependencies, the backend, the
    options and the environment variables that change compilation) with dtsim's prefix, so Triton's
    own entries are apart. None where that key is not available (Triton before 3.5), caching is off
    (DTSIM_TTIR_CACHE=0, TRITON_ALWAYS_COMPILE=1), or the key cannot be made."""
    if os.environ.get("DTSIM_TTIR_CACHE", "1") == "0":
        return None
    try:
        knobs = _knobs()
        if getattr(knobs.compilation, "always_compile", False):
            return None
        from triton.runtime.cache import get_cache_key, get_cache_manager
        from triton._C.libtriton import get_cache_invalidating_env_vars
        key = "dtsim-ttir-1-" + get_cache_key(src, fe.backend, options, env_vars=get_cache_invalidating_env_vars())
        return get_cache_manager(hashlib.sha256(key.encode("utf-8")).hexdigest()), src.name[:150] + ".dtsim.ttir"
    except Exception:
        return None


def _cached_ttir(fe, src, options):
    """The TTIR of a specialization: from the disk cache when an earlier process made it (Triton's
    frontend takes 0.05-0.5 s a specialization), else from Triton's frontend, then kept there."""
    entry = _ttir_cache_entry(fe, src, options)
    if entry is not None:
        manager, name = entry
        path = manager.get_file(name)
        if path is not None:
            try:
                with open(path) as f:
                    text = f.read()
                if text.startswith("module") or "tt.func" in text:
                    return text
            except OSError:
                pass
    ttir = fe.ttir(src, options)
    if entry is not None:
        try:
            manager.put(ttir, name, binary=False)
        except OSError:
            pass  # a read-only cache: compile every time
    return ttir


@functools.lru_cache(maxsize=None)
def _frontend(arch):
    from triton.backends.compiler import GPUTarget
    return _Frontend(GPUTarget("cuda", arch, 32))


# Bytes of an element by the type's name (TTIR's and the tile IR's spellings alike).
ELEM_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}


def _shared_estimate(ttir):
    """Shared memory a GPU build would plausibly use: the largest tile's bytes (at least 1 KiB; host
    code divides by it when it sizes a persistent grid)."""
    size = ELEM_BYTES
    best = 1024
    for dims, elem in re.findall(r"tensor<((?:\d+x)+)([a-z0-9]+)>", ttir):
        n = 1
        for d in dims.rstrip("x").split("x"):
            n *= int(d)
        best = max(best, n * size.get(elem, 4))
    return best


class _Asm(dict):
    """A compiled kernel's `asm`: the TTIR dtsim runs; the later stages' texts (ttgir, llir, ptx, cubin)
    are made by Triton's GPU compiler, which `python -m dtsim` does not run."""

    def __missing__(self, key):
        raise KeyError("%r: a kernel run by dtsim has only its TTIR ('ttir'); %r is made by Triton's GPU compiler "
                       "stages, which python -m dtsim does not run" % (key, key))


class CompiledKernel:
    """What Triton's launch returns: the specialization dtsim runs. Host code that reads a compiled
    kernel's resources (tutorial 02 sizes its grid from them) gets the figures of an sm_90 build it
    would plausibly have; `kernel[grid](*args)` launches it again."""

    def __init__(self, fn, ttir, options):
        self.fn = fn
        self.asm = _Asm(ttir=ttir)
        # the kernel's name in its TTIR: the function's, or what @triton.jit(repr=...) made of it
        m = re.search(r"tt\.func public @([\w$.]+)", ttir)
        self.name = m.group(1) if m else fn.__name__
        self.hash = hashlib.sha256(ttir.encode()).hexdigest()  # (Triton's is its cache key's hash: a hex string)
        self.function = 0  # no device function: launches run on dtsim
        self.n_regs = 32
        self.n_spills = 0
        self.n_max_threads = 1024
        num_warps = getattr(options, "num_warps", 4)
        num_stages = getattr(options, "num_stages", 3)
        self.metadata = type("KernelMetadata", (), {"shared": _shared_estimate(ttir), "num_warps": num_warps,
                                                    "num_stages": num_stages, "num_ctas": 1, "name": self.name})()
        self.num_warps, self.num_stages = num_warps, num_stages
        self.lowered = {}  # (buffers, grid) -> _dtsim.Compiled
        self.launchers = {}  # _device_key's key -> (_dtsim.CudaLauncher, _dtsim.Compiled)
        self.arg_kinds = None  # per runtime parameter: (name, 'desc' | 'ptr' | 'value'), set at the first launch

    def _init_handles(self):
        pass

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            opts = {k: v for k, v in (("num_warps", self.num_warps), ("num_stages", self.num_stages))
                    if k not in self.fn.arg_names and k not in kwargs}
            return self.fn.run(*args, grid=grid, warmup=False, **opts, **kwargs)
        return launch


# ---- the launch ----

def _grid_of(grid, bound_args, name):
    g = grid(bound_args) if callable(grid) else grid
    if type(g) is tuple and 1 <= len(g) <= 3 and all(type(x) is int for x in g):
        return g
    if isinstance(g, int) or not hasattr(g, "__len__"):
        g = (g,)
    if isinstance(g, (str, bytes)):
        raise TypeError("%s: the grid must be a tuple of integers, got %r" % (name, g))
    out = []
    for x in g:
        v = getattr(x, "value", x)
        if isinstance(v, bool) or not isinstance(v, int) and not (hasattr(v, "__index__")):
            raise TypeError("%s: grid entries must be integers, got %r" % (name, x))
        out.append(int(v.__index__()) if not isinstance(v, int) else v)
    if not 1 <= len(out) <= 3:
        raise ValueError("%s: the grid has %d axes (1 to 3)" % (name, len(out)))
    return tuple(out)


class _DtypeName(str):
    """A dtype's name (what Triton's launcher reads) that also tells its element size and, as torch's
    dtype does, whether it is a float (TensorDescriptor(padding="nan") asks)."""
    itemsize = 0
    is_floating_point = False


class HostArray:
    """A numpy array as Triton's launcher sees a tensor (data_ptr, dtype name), so that scripts may
    pass numpy arrays to @triton.jit kernels under dtsim as they pass torch CPU tensors."""
    __slots__ = ("array", "dtype")

    def __init__(self, array):
        self.array = array
        self.dtype = _DtypeName("bfloat16" if array.dtype.names == ("bfloat16",) else array.dtype.name)
        self.dtype.itemsize = array.dtype.itemsize
        self.dtype.is_floating_point = array.dtype.kind == "f" or self.dtype == "bfloat16"

    def data_ptr(self):
        return self.array.ctypes.data


_PLAIN = (int, float, bool, type(None), str)  # launch arguments _wrap passes through at once
_NDARRAY = []


def _wrap(v):
    if type(v) in _PLAIN:
        return v
    if not _NDARRAY:
        import numpy as np
        _NDARRAY.append(np.ndarray)
    ndarray = _NDARRAY[0]
    if isinstance(v, ndarray):
        return HostArray(v)
    if type(v) is tuple:  # a tuple argument: its members wrapped
        return tuple(_wrap(x) for x in v)
    if type(v).__name__ == "TensorDescriptor" and isinstance(getattr(v, "base", None), ndarray):
        import dataclasses
        return dataclasses.replace(v, base=HostArray(v.base))  # a host descriptor over a numpy array
    return v


def _specialize(fn, args, kwargs):
    """Triton's own binding and specialization of a launch: (bound_args, key, options, signature,
    constexprs, attrs, backend)."""
    caches = fn.device_caches[0]
    if len(caches) == 4:  # Triton 3.4: no key cache, the key is the specialization's text
        kernel_cache, target, backend, binder = caches
        bound_args, specialization, options = binder(*args, **kwargs)
        return bound_args, specialization, options, str(specialization) + str(options), backend, target
    kernel_cache, kernel_key_cache, target, backend, binder = caches
    bound_args, specialization, options = binder(*args, **kwargs)
    key = _compute_cache_key()(kernel_key_cache, specialization, options)
    return bound_args, specialization, options, key, backend, target


def _pack_args(fn, backend, kwargs, bound_args, specialization, options):
    """Triton's (options, signature, constexprs, attrs) of a launch being compiled: JITFunction's own
    _pack_args where it has one (3.5 on); for Triton 3.4, the same built here from the specialization
    ((type, attribute) per parameter, tuples nested) as its launch builds them."""
    if hasattr(fn, "_pack_args"):
        return fn._pack_args(backend, kwargs, bound_args, specialization, options)
    from triton._utils import find_paths_if, get_iterable_path
    options = backend.parse_options(kwargs)
    names = [p.name for p in fn.params]
    types = [s[0] for s in specialization]
    for k in kwargs:
        if k not in options.__dict__ and k not in names:
            raise KeyError("Keyword argument %s was specified but unrecognised" % k)
    signature = dict(zip(names, types))
    values = list(bound_args.values())
    constexprs = {path: get_iterable_path(values, path) for path in find_paths_if(types, lambda _, t: t == "constexpr")}
    attr_values = [s[1] for s in specialization]
    attrs = {path: backend.parse_attr(get_iterable_path(attr_values, path))
             for path in find_paths_if(attr_values, lambda _, a: isinstance(a, str))}
    return options, signature, constexprs, attrs


@functools.lru_cache(maxsize=None)
def _compute_cache_key():
    from triton.runtime.jit import compute_cache_key
    return compute_cache_key


@functools.lru_cache(maxsize=None)
def _knobs():
    from triton import knobs
    return knobs


def _arg_kinds(signature):
    """(name, kind) of each runtime parameter in launch order: 'desc' (a host TensorDescriptor), 'ptr'
    (a pointer), 'value' (a scalar)."""
    out = []
    for n, t in signature.items():
        if t == "constexpr":
            continue
        kind = "value"
        if isinstance(t, str) and t.startswith("tensordesc"):
            kind = "desc"
        elif isinstance(t, str) and t.startswith("*"):
            kind = "ptr"
        out.append((n, kind))
    return out


def _device_key(kernel, bound_args, g, sanitize):
    """For a launch whose every tensor is GPU memory (torch CUDA tensors, descriptors over them): the
    key of its CudaLauncher (grid, sanitize mode, each tensor's dtype, shape and strides, each scalar's
    type and value: dtsim._value_key) and the tensors' device addresses in launch order; None for any other launch."""
    kinds = kernel.arg_kinds
    if kinds is None:
        kinds = kernel.arg_kinds = _arg_kinds(kernel.signature)
    key, ptrs = [g, sanitize], []
    value_key = sys.modules["dtsim"]._value_key
    for name, kind in kinds:
        v = bound_args[name]
        if kind == "value":
            key.append(value_key(v))
            continue
        t = v.base if kind == "desc" else v
        if getattr(t, "is_cuda", False) is not True:
            return None
        ptrs.append(t.data_ptr())
        if kind == "desc":
            key.append((t.dtype, t.shape, t.stride(), tuple(v.shape), tuple(v.strides), getattr(v, "padding", "zero")))
        else:
            key.append((t.dtype, t.shape, t.stride()))
    key = sys.modules["dtsim"]._launcher_key(key)
    return None if key is None else (key, ptrs)


def _debug_on(fn, kwargs):
    knobs = _knobs()
    return bool(kwargs.get("debug", getattr(fn, "debug", None)) or knobs.runtime.debug)


_GUIDE_HELPERS = ("breakpoint_if", "print_if", "breakpoint", "pdb.set_trace")


def _calls_guide_helper(src):
    """Whether source text calls one of _GUIDE_HELPERS: its tokens, so that comments and strings
    (a commented-out `# pdb.set_trace()`, a docstring) do not count; a substring test where the text
    does not tokenize."""
    import io
    import tokenize
    if not any(h in src for h in _GUIDE_HELPERS):
        return False
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(src).readline)
                if t.type in (tokenize.NAME, tokenize.OP)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return any(h + "(" in src for h in _GUIDE_HELPERS)
    for i, t in enumerate(toks):
        if t.string != "(" or i == 0:
            continue
        name = toks[i - 1].string
        if name in ("breakpoint_if", "print_if"):  # the guide's helpers, also through a module (dbg.print_if)
            return True
        if i >= 3 and toks[i - 2].string == "." and toks[i - 3].type == tokenize.NAME:
            name = toks[i - 3].string + "." + name
            if i >= 4 and toks[i - 4].string == ".":  # an attribute of something else: x.pdb.set_trace(
                continue
        elif i >= 2 and toks[i - 2].string == ".":
            name = "." + name  # a method (x.breakpoint()): no helper of the guide
        if name in _GUIDE_HELPERS:
            return True
    return False


def _uses_guide_helpers(fn):
    """Kernels that call the practitioner's guide's host helpers (breakpoint_if, print_if), Python's
    breakpoint() or pdb.set_trace() inside their body: Triton's compiler rejects such calls; dtsim's
    own .py reader gives them meaning (breakpoint() stops there) or names what works instead.
    Remembered per source text."""
    src = getattr(fn, "src", "") or ""
    got = fn.__dict__.get("_dtsim_guide")
    if got is None or got[0] is not src:
        got = fn.__dict__["_dtsim_guide"] = (src, _calls_guide_helper(src))
    return got[1]


def _live_arrays():
    """Every live torch CPU tensor (the garbage collector tracks them), and every numpy array held by
    a tracked list, tuple or dict (a module's globals, a list of arrays) or by a local variable of a
    function on the call stack: the memory a kernel may be given addresses of."""
    import gc
    import numpy as np
    torch = sys.modules.get("torch")
    tensor = torch.Tensor if torch is not None else ()
    kinds = {}

    def kind(o):
        t = type(o)
        k = kinds.get(t)
        if k is None:
            k = kinds[t] = 1 if tensor and issubclass(t, tensor) else 2 if issubclass(t, np.ndarray) else \
                3 if t in (list, tuple, dict) else 0
        return k

    for o in gc.get_objects():
        k = kind(o)
        if k == 1 or k == 2:
            yield o
        elif k == 3:
            for x in (o.values() if type(o) is dict else o):
                if kind(x) == 2:
                    yield x
    f = sys._getframe(1)
    while f is not None:  # the local variables of the functions that launch the kernel
        for x in list(f.f_locals.values()):
            if kind(x) == 2:
                yield x
        f = f.f_back


def _storage_view(obj):
    """(base address, 1-D array over the whole storage of `obj`, dtype name), or None for memory
    dtsim cannot bind (GPU memory, element types it lacks, empty storage)."""
    if type(obj).__module__.startswith("torch"):
        if getattr(obj, "is_cuda", False) or getattr(obj, "is_meta", False) or obj.dtype.is_complex:
            return None
        st = obj.untyped_storage()
        n = st.nbytes() // obj.element_size()
        if n == 0:
            return None
        whole = obj.detach().as_strided((n,), (1,), 0)
        arr = dtsim_module()._as_array(whole, "memory")
    else:
        arr = _numpy_root(obj)
        if not arr.flags.c_contiguous or arr.size == 0:
            return None
        arr = arr.reshape(-1)
    if arr is None or arr.ctypes.data == 0:
        return None
    dt = dtsim_module()._dtype_table().get(arr.dtype)
    if dt is None:
        return None
    return arr.ctypes.data, arr, dt


def dtsim_module():
    import dtsim
    return dtsim


def _address_memory(arrays, scalars):
    """The memory a kernel that makes pointers from integers (tt.int_to_ptr) reaches: every address
    among its int64 array arguments' elements and its integer scalars is looked up in the live
    arrays (_live_arrays), and each storage that holds one becomes a buffer of the run, named by its
    base address. Addresses in the kernel's own arguments need nothing more; an address in no
    storage is left for the interpreter to report where the kernel converts it."""
    import bisect
    import numpy as np
    addrs = set()
    bound = []
    for _, view, dt in arrays:
        bound.append((view.ctypes.data, view.ctypes.data + view.nbytes))
        if dt == "i64" and view.size <= (1 << 20):
            addrs.update(int(a) for a in np.unique(view) if a > 0)
    for text in scalars.values():
        try:
            v = int(text)
        except ValueError:
            continue
        if v > 0:
            addrs.add(v)
    addrs = sorted(a for a in addrs if not any(lo <= a < hi for lo, hi in bound))
    if not addrs:
        return []
    memory, seen = [], set()
    for obj in _live_arrays():
        try:
            lo = obj.untyped_storage().data_ptr() if type(obj).__module__.startswith("torch") else None
        except Exception:
            continue
        if lo is not None and lo in seen:
            continue
        got = _storage_view(obj)
        if got is None:
            continue
        base, arr, dt = got
        if base in seen:
            continue
        i = bisect.bisect_left(addrs, base)
        if i < len(addrs) and addrs[i] < base + arr.nbytes:
            seen.add(base)
            memory.append(("memory@0x%x" % base, arr, dt))
    return memory


_POINTER_HOMES = []  # torch tensors whose storage held the last pointer objects' addresses
# Triton dtypes (their str) a triton.reinterpret'ed tensor may take, with the torch dtype of its view
# (fp8e4b15, which torch has not got, is viewed as uint8: Triton's TTIR holds it as i8)
_REINTERPRET_AS = {"fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz",
                   "fp8e5b16": "float8_e5m2fnuz", "fp8e4b15": "uint8", "fp16": "float16", "bf16": "bfloat16",
                   "fp32": "float32", "fp64": "float64", "int8": "int8", "int16": "int16", "int32": "int32",
                   "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64"}


def _pointer_object_view(obj, name):
    """A torch CPU tensor over the memory that a pointer object addresses: any object with
    data_ptr() and a torch dtype that is not itself a tensor (Triton takes such objects as pointer
    arguments, e.g. a wrapper with its own shape, strides and offset into a tensor). The storage that
    holds data_ptr() is found among the live torch tensors; the view has the object's shape and
    strides when it has them, else it runs from the address to the storage's end. None when `obj` is
    no such object. (A shape and strides that reach past the storage's end are not the memory's
    layout: the view then also runs from the address to the storage's end; one that reaches before its
    start is a TypeError.)"""
    torch = sys.modules.get("torch")
    if torch is None or isinstance(obj, torch.Tensor):
        return None
    if type(obj).__name__ == "TensorWrapper" and isinstance(getattr(obj, "base", None), torch.Tensor):
        # triton.reinterpret(tensor, dtype): the tensor's memory as a Triton dtype of the same width
        if isinstance(obj.dtype, torch.dtype):  # triton.reinterpret(t, torch.float32): a torch dtype as is
            td = obj.dtype
            bits = td.itemsize * 8
        else:
            td = getattr(torch, _REINTERPRET_AS.get(str(obj.dtype), ""), None)
            bits = getattr(obj.dtype, "primitive_bitwidth", 0)
        if td is None or td.itemsize * 8 != bits:
            raise TypeError("argument '%s': triton.reinterpret as %s is not supported (%s)"
                            % (name, obj.dtype, ", ".join(sorted(_REINTERPRET_AS))))
        return obj.base.view(td)
    if not callable(getattr(obj, "data_ptr", None)) or not isinstance(getattr(obj, "dtype", None), torch.dtype):
        return None
    ptr = int(obj.data_ptr())
    item = obj.dtype.itemsize

    def holds(t):
        if t.device.type != "cpu" or t.is_meta:
            return False
        st = t.untyped_storage()
        return st.data_ptr() <= ptr < st.data_ptr() + st.nbytes()

    home = next((t for t in _POINTER_HOMES if holds(t)), None)
    if home is None:
        home = next((t for t in _live_arrays() if isinstance(t, torch.Tensor) and holds(t)), None)
        if home is None:
            raise TypeError("argument '%s': %s: address 0x%x is in no live CPU tensor" % (name, type(obj).__name__, ptr))
        _POINTER_HOMES.insert(0, home)
        del _POINTER_HOMES[4:]
    st = home.untyped_storage()
    if (ptr - st.data_ptr()) % item:
        raise TypeError("argument '%s': %s: address 0x%x is not aligned to its %s elements" % (name, type(obj).__name__, ptr, obj.dtype))
    whole = torch.empty(0, dtype=obj.dtype).set_(st)
    offset, n = (ptr - st.data_ptr()) // item, st.nbytes() // item
    shape, strides = getattr(obj, "shape", None), getattr(obj, "stride", None)
    if shape is None or not callable(strides):
        return whole.as_strided((n - offset,), (1,), offset)
    shape, strides = tuple(int(d) for d in shape), tuple(int(x) for x in strides())
    first = offset + sum((d - 1) * x for d, x in zip(shape, strides) if x < 0) if all(shape) else offset
    last = offset + sum((d - 1) * x for d, x in zip(shape, strides) if x > 0) if all(shape) else offset - 1
    if first < 0:
        raise TypeError("argument '%s': %s of shape %s and strides %s reaches outside its storage" % (name, type(obj).__name__, shape, strides))
    if last >= n:
        # a logical shape past the storage's end, which is not the memory's layout (e.g. a swizzled
        # one's): Triton passes the address only, so the buffer runs from the address to the
        # storage's end, accesses checked there
        return whole.as_strided((n - offset,), (1,), offset)
    if any(x < 0 for x in strides):  # torch has no such view: numpy's, over the storage (bound by _lowest_first)
        import numpy as np
        flat = dtsim_module()._as_array(whole, name)
        return np.lib.stride_tricks.as_strided(flat[offset:], shape, tuple(x * flat.itemsize for x in strides))
    return whole.as_strided(shape, strides, offset)


def _lowest_first(arr):
    """A view with negative strides as (the same elements with every stride made positive, so the view
    starts at its lowest address; the flat position of the original first element in it)."""
    flipped = arr[tuple(slice(None, None, -1) if st < 0 else slice(None) for st in arr.strides)]
    return flipped, (arr.ctypes.data - flipped.ctypes.data) // arr.itemsize


def _call_jit_hook(fn, name, hook_args):
    """Triton's knobs.runtime.<name> (jit_cache_hook, jit_post_compile_hook) called as Triton's launch
    calls it, through the JITFunction's own _call_hook (key, repr, fn, the compile's specialization
    data); its result, or None without a hook."""
    hook = getattr(_knobs().runtime, name, None)
    if hook is None or not hasattr(fn, "_call_hook"):
        return None
    key, signature, target, device, constexprs, options, configs, warmup = hook_args
    params = list(inspect.signature(fn._call_hook).parameters)
    if "target" in params:
        return fn._call_hook(hook, key, signature, target, device, constexprs, options, configs, warmup)
    return fn._call_hook(hook, key, signature, device, constexprs, options, configs, warmup)


class _LaunchMetadata:
    """What Triton's launch hooks get: get() gives the kernel's name, function and stream, with what
    the kernel's launch_metadata function adds (computed at the first get())."""

    def __init__(self, data, extra):
        self.data, self.extras = data, [extra] if extra else []

    def get(self):
        for func, args in self.extras:
            self.data = self.data | func(*args)
        self.extras.clear()
        return self.data


def _launch_metadata(fn, kernel, grid, bound_args, knobs):
    """The argument of knobs.runtime.launch_enter_hook / launch_exit_hook for this launch, or None
    without an enter hook (as Triton's CompiledKernel.launch_metadata)."""
    if getattr(knobs.runtime, "launch_enter_hook", None) is None:
        return None
    extra = None
    if getattr(fn, "launch_metadata", None) is not None:
        args = {n: v.array if type(v) is HostArray else v for n, v in bound_args.items()}  # the caller's own objects
        extra = (fn.launch_metadata, (grid, kernel.metadata, args))
    return _LaunchMetadata({"name": kernel.name, "function": kernel.function, "stream": 0}, extra)


_REFUSALS = {}


def _triton_refusal(triton_error):
    """An error class that is both dtsim.CompileError and `triton_error` (the class of the exception
    Triton's frontend raised, e.g. triton.CompilationError): host code that catches Triton's errors
    catches dtsim's located version of them."""
    cls = _REFUSALS.get(triton_error)
    if cls is None:
        dtsim_error = sys.modules["dtsim"].CompileError

        class TritonRefusal(dtsim_error, triton_error):
            def __init__(self, message):
                Exception.__init__(self, message)
                self.message, self.src, self.node, self.error_message = message, None, None, message

            def __str__(self):
                return self.message

            def __reduce__(self):
                return type(self), (self.message,)

        TritonRefusal.__name__ = TritonRefusal.__qualname__ = "CompileError"
        cls = _REFUSALS[triton_error] = TritonRefusal
    return cls


def _refused_fnuz(fn, e):
    """Triton's frontend refuses the fnuz fp8 formats (tl.float8e4b8, tl.float8e5b16: AMD's) for every
    CUDA target, the only kind dtsim compiles TTIR for: that refusal as dtsim's located error."""
    m = re.search(r"type (fp8e4b8|fp8e5b16) not supported in this architecture", str(e))
    if m is None:
        return
    node = getattr(e, "node", None)
    code = getattr(getattr(fn, "fn", None), "__code__", None)
    # the `def` line, which the node's lines count from (Triton before 3.8 has no def_file_line_number:
    # its source starts at the decorators, its parsed text at the def)
    first = getattr(fn, "def_file_line_number", None)
    src, start = getattr(fn, "raw_src", None), getattr(fn, "starting_line_number", None)
    if not first and isinstance(src, list) and start:
        first = start + next((i for i, line in enumerate(src) if line.lstrip().startswith("def ")), 0)
    if not first and code is not None:
        first = code.co_firstlineno
    where = ""
    if code is not None and first and getattr(node, "lineno", None):
        where = "%s:%d:%d: " % (code.co_filename, first + node.lineno - 1, node.col_offset + 1)
    name = {"fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16"}[m.group(1)]
    raise _triton_refusal(type(e))(
        where + "error: Triton refuses tl.%s for every CUDA target (%s; its frontend takes the fnuz fp8 formats for "
        "AMD GPUs only), and dtsim reads Triton's TTIR for a CUDA target; dtsim's own .py reader runs them "
        "(DTSIM_STANDIN=1)" % (name, m.group(0))) from None


def run(fn, /, *args, grid, warmup, **kwargs):
    """JITFunction.run under dtsim."""
    dtsim = sys.modules["dtsim"]
    if type(fn).__module__.startswith("triton.experimental.gluon"):
        raise dtsim.CompileError(_def_where(fn) + "error: '%s' is a Gluon kernel (@gluon.jit: explicit layouts, Triton's GPU dialect); "
                                 "dtsim runs @triton.jit kernels, whose TTIR has no layouts, and does not run Gluon kernels" % fn.__name__)
    knobs = _knobs()
    if _uses_guide_helpers(fn) or fn.__dict__.get("_dtsim_block_pointers"):
        return _own_reader_run(fn, args, kwargs, grid, warmup)
    launch_args, launch_kwargs = args, dict(kwargs)
    kwargs["debug"] = _debug_on(fn, kwargs)
    if hasattr(knobs.compilation, "instrumentation_mode"):
        kwargs.setdefault("instrumentation_mode", knobs.compilation.instrumentation_mode)
    for hook in getattr(fn, "pre_run_hooks", []):
        hook(*args, **kwargs)
    args = tuple([_wrap(a) for a in args])
    kwargs = {k: _wrap(v) for k, v in kwargs.items()}
    bound_args, specialization, options, key, backend, target = _specialize(fn, args, dict(kwargs))
    cache = fn.__dict__.setdefault("_dtsim_kernels", {})
    kernel = cache.get(key)
    if kernel is None:
        from triton.compiler.compiler import ASTSource
        options, signature, constexprs, attrs = _pack_args(fn, backend, kwargs, bound_args, specialization, options)
        hook_args = (key, signature, target, 0, constexprs, options, [attrs], warmup)
        if _call_jit_hook(fn, "jit_cache_hook", hook_args):
            return None  # the hook took the compile over, as Triton's launch then does
        src = ASTSource(fn, signature, constexprs, attrs)
        try:
            ttir = _cached_ttir(_frontend(target.arch), src, options)
        except Exception as e:
            if "Block pointers have been removed" in str(e):
                return _block_pointers_run(fn, e, launch_args, launch_kwargs, grid, warmup)
            _refused_fnuz(fn, e)
            raise
        kernel = CompiledKernel(fn, ttir, options)
        kernel.signature = signature
        kernel.debug = bool(options.debug)
        # Triton's enable_fp_fusion (default True; part of the options, so of `key`): on backend='cuda'
        # a multiply and an add may be contracted into fma.rn, as Triton's own GPU build does
        kernel.fp_fusion = bool(getattr(options, "enable_fp_fusion", True))
        cache[key] = kernel
        _call_jit_hook(fn, "jit_post_compile_hook", hook_args)
    if warmup:
        return kernel
    g = _grid_of(grid, bound_args, fn.__name__)
    if 0 in g:
        return kernel  # an empty grid launches nothing, as on the GPU
    # Triton's launch hooks (knobs.runtime.launch_enter_hook / launch_exit_hook) around the launch
    meta = _launch_metadata(fn, kernel, g, bound_args, knobs)
    if meta is not None:
        knobs.runtime.launch_enter_hook(meta)
    _launch(fn, kernel, bound_args, g)
    if meta is not None and knobs.runtime.launch_exit_hook is not None:
        knobs.runtime.launch_exit_hook(meta)
    return kernel


def _def_where(fn):
    """'file:line:1: ' of a kernel's decorated `def` (its first line), for messages; '' where unknown."""
    code = getattr(getattr(fn, "fn", None), "__code__", None)
    return "%s:%d:1: " % (code.co_filename, code.co_firstlineno) if code is not None else ""


def _own_reader_run(fn, args, kwargs, grid, warmup):
    """Runs the launch through dtsim's own .py reader (the kernel's source, read by dtsim's C++
    frontend instead of Triton's), kept per kernel."""
    reader = fn.__dict__.get("_dtsim_reader")
    if reader is None:
        reader = fn.__dict__["_dtsim_reader"] = sys.modules["dtsim"].JITFunction(fn.fn)
    if warmup:
        return reader.warmup(*args, grid=grid, **kwargs)
    return reader.run(*args, grid=grid, **kwargs)


def _block_pointers_run(fn, refusal, args, kwargs, grid, warmup):
    """Triton 3.9's frontend refuses block pointers (tl.make_block_ptr / tl.advance); dtsim's own
    .py reader has them (as Triton 3.8 lowers them: pointer arithmetic and masks), so the kernel runs
    through it, with a warning once per kernel. Where the own reader refuses something else of the
    kernel, that error carries a note naming Triton's refusal and the versions that read the kernel."""
    version = getattr(sys.modules.get("triton"), "__version__", "?")
    where = _def_where(fn)
    if not fn.__dict__.get("_dtsim_block_pointers"):
        fn.__dict__["_dtsim_block_pointers"] = True
        sys.stderr.write("%swarning: Triton %s's frontend has no block pointers (tl.make_block_ptr / tl.advance); dtsim "
                         "reads kernel '%s' with its own .py reader, which lowers them as Triton 3.8 does\n"
                         % (where, version, fn.__name__))
    try:
        return _own_reader_run(fn, args, kwargs, grid, warmup)
    except sys.modules["dtsim"].CompileError as e:
        if hasattr(e, "add_note"):
            e.add_note("dtsim: Triton %s's frontend refused '%s' (%s), so dtsim read it with its own .py reader, which "
                       "stopped here; with Triton 3.8 or older installed (pip install 'triton<3.9'), whose frontend lowers "
                       "block pointers to pointer arithmetic, python -m dtsim reads it through Triton's frontend"
                       % (version, fn.__name__, str(refusal).strip().splitlines()[-1]))
        raise


_INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
_WRAPPED = set()


def _launcher_int(fn, name, v, ty):
    """A Python int passed for an integer parameter of type `ty`, as Triton's CUDA launcher passes it:
    signed types through a C long, unsigned through an unsigned long (beyond those an OverflowError),
    then the low bits of the parameter's width; returned as dtsim takes it (two's complement, signed).
    A value its type cannot hold is a warning, once per kernel parameter and process."""
    if ty in ("i1", "u1") and not isinstance(v, bool) and v not in (0, 1):
        raise TypeError("%serror: argument '%s' = %d for a one-bit parameter (%s) of '%s': pass True, False, 0 or 1"
                        % (_def_where(fn), name, v, ty, fn.__name__))
    bits = _INT_BITS.get(ty)
    if bits is None or isinstance(v, bool):
        return v
    if ty[0] == "u" and not 0 <= v < 2**64:
        raise OverflowError("argument '%s' = %d: Triton's launcher passes a %s parameter as a C unsigned long, which "
                            "cannot hold it" % (name, v, ty))
    if ty[0] == "i" and not -2**63 <= v < 2**63:
        raise OverflowError("argument '%s' = %d: Triton's launcher passes a %s parameter as a C long, which cannot "
                            "hold it" % (name, v, ty))
    w = v % 2**bits
    signed = w - 2**bits if w >= 2**(bits - 1) else w
    seen = w if ty[0] == "u" else signed
    if seen != v and (fn, name) not in _WRAPPED and len(_WRAPPED) < 1000:
        _WRAPPED.add((fn, name))
        where = _def_where(fn)
        sys.stderr.write("%swarning: argument '%s' = %d does not fit the kernel's %s parameter: the kernel sees its low %d "
                         "bits, %d (as Triton's launcher passes it)\n" % (where, name, v, ty, bits, seen))
    return signed


def _launch(fn, kernel, bound_args, g):
    """Runs the launch of `kernel` (its bound arguments, grid g) on dtsim: the interpreter, or on
    backend='cuda' the GPU (through a launcher kept per launch signature when every array is GPU
    memory)."""
    dtsim = sys.modules["dtsim"]
    cfg = dtsim._config
    fast = None
    if dtsim._gpu_launchers_on():
        # GPU memory only: the launcher made at the first such launch binds the addresses and launches
        fast = _device_key(kernel, bound_args, g, cfg["sanitize"])
        if fast is not None and dtsim._launch_known(kernel.launchers, fast) is not None:
            return
    runtime, values, types, nan_padded = [], {}, {}, set()

    def add(n, t, v):
        runtime.append(n)
        if isinstance(t, str) and t.startswith("tensordesc"):
            if getattr(v, "padding", "zero") == "nan":
                nan_padded.add(n)
            # a host TensorDescriptor: its base tensor, then its shape and strides (as the kernel's
            # TTIR takes them)
            values[n] = v.base.array if type(v.base) is HostArray else v.base
            for i, x in enumerate(v.shape):
                runtime.append("%s.shape.%d" % (n, i))
                values[runtime[-1]] = int(x)
            for i, x in enumerate(v.strides):
                runtime.append("%s.stride.%d" % (n, i))
                values[runtime[-1]] = int(x)
        else:
            values[n] = v
            types[n] = t

    for n, t in kernel.signature.items():
        if t == "constexpr":
            continue
        v = bound_args[n]
        if isinstance(v, tuple) and not hasattr(v, "base"):
            # a tuple argument: its members are the kernel's parameters n.0, n.1, ... (nested: n.0.1),
            # constexpr members left out, as Triton's TTIR takes them (a descriptor member expanded
            # as a descriptor argument is)
            def flatten(name, ty, val):
                if isinstance(val, tuple) and not hasattr(val, "base"):
                    tys = ty if isinstance(ty, (tuple, list)) and len(ty) == len(val) else [None] * len(val)
                    for i, (tt, x) in enumerate(zip(tys, val)):
                        flatten("%s.%d" % (name, i), tt, x)
                elif ty != "constexpr":
                    add(name, ty, val)
            flatten(n, t, v)
            continue
        add(n, t, v)
    buffers, arrays, scalars, converted, device, starts, slack = [], [], {}, [], [], {}, {}
    for name in runtime:
        v = values[name]
        if type(v) is HostArray:
            v = v.array
        if cfg["view_bounds"] == "storage":
            v = _to_storage_end(v)
        arr = dtsim._as_array(v, name)
        if arr is None and not isinstance(v, (int, float, bool)) and v is not None:
            # pointer objects are resolved to host tensors on the interpreter; triton.reinterpret's
            # TensorWrapper is a view of its tensor on either backend (host or GPU memory)
            reinterpreted = type(v).__name__ == "TensorWrapper"
            ptr_view = _pointer_object_view(v, name) if cfg["backend"] != "cuda" or reinterpreted else None
            if ptr_view is not None:
                v = ptr_view
                arr = dtsim._as_array(v, name)
        if arr is None and not isinstance(v, (int, float, bool)) and v is not None:
            dev = dtsim._device_array(v, name)
            if dev is not None:
                if cfg["backend"] != "cuda":
                    raise TypeError("argument '%s': GPU memory (a CUDA tensor); the interpreter needs host arrays "
                                    "(tensor.cpu(), or dtsim.config(backend='cuda') to run on the GPU)" % name)
                buffers.append((name, dev.dt, list(dev.shape)))
                device.append((name, dev.ptr, dev.dt, list(dev.shape)))
                continue
        if arr is not None:
            if arr.size and any(st < 0 for st in arr.strides):  # the pointer addresses an element inside its span
                arr, starts[name] = _lowest_first(arr)
            view, dt, orig = dtsim._buffer_of(arr, name)
            buffers.append((name, dt, list(view.shape)))
            arrays.append((name, view, dt))
            if orig is not None:
                converted.append((name, orig, view))
            elif cfg["view_bounds"] != "storage" and name not in starts:
                slack[name] = _slack_of(v, view)
            continue
        if isinstance(v, int) and not isinstance(v, bool):
            if types.get(name) in _INT_BITS or types.get(name) in ("i1", "u1"):  # the bits Triton's launcher passes (u32 3e9: i32 -1294967296)
                v = _launcher_int(fn, name, v, types[name])
            elif 2**63 <= v < 2**64:  # Triton's u64: TTIR's i64, the same bits
                v -= 2**64
        text, _ = dtsim._scalar_text(v, name)
        scalars[name] = text
    hints = dtsim._hint_checks()
    undef = dtsim._undefined_lanes()
    lkey = (tuple((n, d, tuple(s)) for n, d, s in buffers), g, tuple(sorted(starts.items())), hints, undef,
            tuple(sorted(nan_padded)))
    compiled = kernel.lowered.get(lkey)
    if compiled is None:
        if len(kernel.lowered) > 64:
            kernel.lowered.clear()
        compiled = _dtsim.compile_ttir(kernel.asm["ttir"], "<ttir of %s>" % fn.__name__, kernel.name, runtime, buffers,
                                       list(g), kernel.num_warps, max(kernel.num_stages, 1), kernel.debug, kernel.fp_fusion, starts,
                                       hints, undef, nan_padded)
        kernel.lowered[lkey] = compiled
    for name, view, _ in arrays:
        if not view.flags.writeable and name in compiled.outputs:
            raise TypeError("%s: argument '%s' is a read-only array, and the kernel stores to it" % (fn.__name__, name))
    if fast is not None and not arrays and not compiled.has_breakpoints and "tt.int_to_ptr" not in kernel.asm["ttir"] \
            and dtsim._launch_new(kernel.launchers, fast, compiled, scalars, device):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    extras = dtsim._launch_extras(compiled)
    if "tt.int_to_ptr" in kernel.asm["ttir"] and cfg["backend"] != "cuda":  # on the GPU, addresses are device addresses
        extras["memory"] = _address_memory(arrays, scalars)
    try:
        result = _dtsim.run(compiled, scalars, arrays, cfg["sanitize"], int(cfg["threads"]), cfg["order"],
                            bool(cfg["keep_going"]), list(cfg["break_if"]), list(cfg["break_at"]), list(cfg["print_if"]),
                            cfg["backend"], device, slack=slack if cfg["view_bounds"] == "warn" else {}, **extras)
    finally:
        for name, orig, copy in converted:
            if name in compiled.outputs:
                orig[...] = copy
    dtsim._print_warnings(result)
    if cfg["view_bounds"] == "span":
        note_storage_past_views(result["findings"], slack)
    dtsim._check_result(compiled, result, extras)


def _numpy_root(v):
    """The array that owns a numpy view's memory (the end of its chain of bases)."""
    import numpy as np
    while isinstance(v.base, np.ndarray):
        v = v.base
    return v


def _storage_rest(v):
    """(v's memory from its first element to its storage's end as a 1-D array or tensor, the number of
    elements there past v's last one) for a CPU torch tensor or a numpy view with non-negative
    strides; None for anything else."""
    import numpy as np
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(v, torch.Tensor):
        if v.device.type != "cpu" or v.is_meta or v.dtype.is_complex or v.numel() == 0 or min(v.stride(), default=0) < 0:
            return None
        n = v.untyped_storage().nbytes() // v.element_size()
        last = v.storage_offset() + sum((d - 1) * st for d, st in zip(v.shape, v.stride()))
        return v.detach().as_strided((n - v.storage_offset(),), (1,)), n - 1 - last
    if isinstance(v, np.ndarray) and v.size and min(v.strides, default=0) >= 0:
        root = _numpy_root(v)
        if root is v or root.dtype != v.dtype or not root.flags.c_contiguous:
            return None
        first = (v.ctypes.data - root.ctypes.data) // v.itemsize
        last = first + sum((d - 1) * st for d, st in zip(v.shape, v.strides)) // v.itemsize
        return root.reshape(-1)[first:], root.size - 1 - last
    return None


def _storage_bounds(v):
    """(first, end) addresses of the memory a CPU torch tensor's storage or a numpy array's
    C-contiguous root array holds; None for anything else."""
    import numpy as np
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(v, torch.Tensor):
        if v.device.type != "cpu" or v.is_meta:
            return None
        st = v.untyped_storage()
        return st.data_ptr(), st.data_ptr() + st.nbytes()
    if isinstance(v, np.ndarray):
        root = _numpy_root(v)
        if not root.flags.c_contiguous:
            return None
        return root.ctypes.data, root.ctypes.data + root.nbytes
    return None


def _slack_of(v, view):
    """How many elements of `v`'s storage lie past the end of `view` (the array bound for v, which
    must be memory of that storage, not a copy): what an access past the view may still reach under
    view_bounds='warn'. 0 when there is none or v is no CPU tensor or numpy array."""
    try:
        got = _storage_bounds(v.array if type(v) is HostArray else v)
    except Exception:
        return 0
    if got is None or not view.size:
        return 0
    first, end = got
    lo = view.ctypes.data
    hi = lo + view.nbytes
    if lo < first or hi > end:
        return 0
    return (end - hi) // view.itemsize


def _to_storage_end(v):
    """A tensor or array as the 1-D run from its first element to its storage's end
    (view_bounds='storage'); anything else, or one that already ends there, unchanged."""
    got = _storage_rest(v)
    return v if got is None or got[1] <= 0 else got[0]


def note_storage_past_views(findings, rest):
    """An out-of-bounds finding on a view whose storage goes on past its last element (`rest`: array
    name -> elements there, from _slack_of) gets a note naming view_bounds (a kernel may read or fill
    the storage through a slice)."""
    for f in findings:
        if "out-of-bounds" not in f["message"].split("\n", 1)[0] or rest.get(f.get("buffer"), 0) <= 0:
            continue
        f["message"] = f["message"].rstrip("\n") + ("\n  note: '%s' is a view whose storage goes on for %d elements past its last one; "
                                                    "--view-bounds=storage (DTSIM_VIEW_BOUNDS=storage) binds it to the storage's end, "
                                                    "--view-bounds=warn runs such accesses with a warning\n" % (f["buffer"], rest[f["buffer"]]))


def install():
    """Routes every @triton.jit launch of the installed Triton to dtsim."""
    import triton
    from triton.runtime import jit as _jit
    import importlib
    import dtsim
    drivers = importlib.import_module("triton.runtime.driver").driver
    if getattr(_jit.JITFunction, "_dtsim_installed", False):
        return
    gpu = False
    if dtsim._config["backend"] == "cuda":
        try:
            drivers.active  # the real driver, when a GPU is there
            gpu = True
        except Exception:
            gpu = False
    if not gpu:
        drivers.set_active(CpuDriver())
        import triton.testing
        triton.testing.do_bench = wall_bench

    def _run(self, /, *args, grid, warmup, **kwargs):
        return run(self, *args, grid=grid, warmup=warmup, **kwargs)

    _jit.JITFunction._dtsim_triton_run = _jit.JITFunction.run
    _jit.JITFunction.run = _run
    # dtsim.config(autotune='first'): the autotuner keeps the first config its own pruning leaves and
    # runs it untimed (Triton 3.9 skips timing a single config; older autotuners time it, so their
    # _bench answers without running it)
    from triton.runtime import autotuner as _autotuner
    prune, bench = _autotuner.Autotuner.prune_configs, _autotuner.Autotuner._bench

    def first_only():
        return (dtsim._config["autotune"] or "all") == "first"

    def _prune_configs(self, kwargs, *rest, **kw):
        configs = prune(self, kwargs, *rest, **kw)
        return list(configs)[:1] if first_only() and len(configs) > 1 else configs

    def _bench(self, *args, **kwargs):
        return [0.0, 0.0, 0.0] if first_only() else bench(self, *args, **kwargs)

    _autotuner.Autotuner.prune_configs = _prune_configs
    _autotuner.Autotuner._bench = _bench
    _jit.JITFunction._dtsim_installed = True
    triton.dtsim = dtsim


class triton_launches:
    """`with dtsim.triton_launch.triton_launches():` launches @triton.jit kernels through the installed
    Triton's own compiler and driver inside the block, as without dtsim (for timing both in one
    process: bench/attention_vs_triton.py --alternate). Outside `python -m dtsim`, it changes nothing."""

    def __enter__(self):
        from triton.runtime import jit as _jit
        self._saved = _jit.JITFunction.run
        if getattr(_jit.JITFunction, "_dtsim_installed", False):
            _jit.JITFunction.run = _jit.JITFunction._dtsim_triton_run
        return self

    def __exit__(self, *exc):
        from triton.runtime import jit as _jit
        _jit.JITFunction.run = self._saved
        return False
