"""`import triton` on a machine without Triton (or with DTSIM_STANDIN=1), under `python -m dtsim` or
DTSIM_TRITON=1 with the start-up hook: the names Triton scripts use on the host, backed by dtsim
(kernels are read by dtsim's own .py reader). Where Triton is installed, Triton's own package is
used instead (dtsim.triton_launch). The module layout follows Triton's: triton.language (with
extra.libdevice and extra.cuda.libdevice), triton.runtime (driver, jit, autotuner), triton.testing."""
import sys as _sys
import types as _types

import dtsim as _d
from dtsim import language  # noqa: F401
from dtsim import Config, autotune, cdiv, heuristics, jit, next_power_of_2  # noqa: F401
from dtsim import JITFunction, KernelError, CompileError  # noqa: F401

# A version string that parses as a version (packaging.version.Version, int(v.split(".")[0])): the
# Triton release whose language the stand-in follows, marked as dtsim's.
__version__ = "3.6.0+dtsim"


def _module(name, doc, **attrs):
    m = _types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    return m


def set_allocator(allocator):
    """Kernels on dtsim's interpreter need no device scratch memory; the allocator is kept."""
    global _allocator
    _allocator = allocator


_allocator = None


class OutOfResources(Exception):
    pass


from dtsim.triton_launch import CpuDriver as _CpuDriver, wall_bench as _wall_bench  # noqa: E402


class _DriverConfig:
    def __init__(self):
        self.active = _CpuDriver()
        self.default = self.active

    def set_active(self, d):
        self.active = d

    def reset_active(self):
        self.active = self.default


def _assert_close(x, y, atol=None, rtol=None, err_msg=""):
    import numpy as np
    xa = np.asarray(x.detach().cpu().float() if hasattr(x, "detach") else x, dtype=np.float64)
    ya = np.asarray(y.detach().cpu().float() if hasattr(y, "detach") else y, dtype=np.float64)
    np.testing.assert_allclose(xa, ya, atol=1e-2 if atol is None else atol, rtol=0 if rtol is None else rtol, err_msg=err_msg)


class _Benchmark:
    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args, ylabel="", styles=None,
                 x_log=False, y_log=False, **rest):
        self.__dict__.update(locals())


def _perf_report(benchmarks):
    def deco(fn):
        class _Runner:
            def run(self, show_plots=False, print_data=False, **kw):
                bs = benchmarks if isinstance(benchmarks, list) else [benchmarks]
                for b in bs:
                    for x in b.x_vals:
                        xs = dict(zip(b.x_names, x if isinstance(x, (list, tuple)) else [x] * len(b.x_names)))
                        for lv in b.line_vals:
                            r = fn(**xs, **{b.line_arg: lv}, **b.args)
                            if print_data:
                                print(b.plot_name, xs, lv, r)

            def __call__(self, *a, **k):
                return fn(*a, **k)
        return _Runner()
    return deco


runtime = _module("triton.runtime", "Triton's runtime, as dtsim's stand-in provides it",
                  driver=_DriverConfig(), OutOfResources=OutOfResources)
runtime.jit = _module("triton.runtime.jit", None, JITFunction=JITFunction, jit=jit)
runtime.autotuner = _module("triton.runtime.autotuner", None, autotune=autotune, heuristics=heuristics, Config=Config,
                            Autotuner=_d.Autotuner, Heuristics=_d.Heuristics, OutOfResources=OutOfResources)
runtime.JITFunction = JITFunction
testing = _module("triton.testing", "Timing and checking helpers (wall-clock timing of the interpreter)",
                  do_bench=_wall_bench, assert_close=_assert_close, Benchmark=_Benchmark, perf_report=_perf_report)
tools = _module("triton.tools", None)
tools.__path__ = []  # a package: `import triton.tools.tensor_descriptor` finds the module below


def _needs_triton(what):
    def missing(name):
        if name.startswith("__"):
            raise AttributeError(name)
        # ModuleNotFoundError, as a Triton build without the module gives: code that imports it
        # optionally (`try: from triton.tools.tensor_descriptor import ... except ModuleNotFoundError`) goes on
        raise ModuleNotFoundError("%s.%s: %s need Triton (pip install triton); dtsim's stand-in is in use (Triton is not "
                          "installed, or DTSIM_STANDIN=1) and its .py reader does not take them" % (what, name, _NEEDS[what]))
    return missing


_NEEDS = {"triton.tools.tensor_descriptor": "host tensor descriptors"}
tools.tensor_descriptor = _module("triton.tools.tensor_descriptor", None)
tools.tensor_descriptor.__getattr__ = _needs_triton("triton.tools.tensor_descriptor")
compiler = _module("triton.compiler", None, CompilationError=CompileError)


# The fp8 dtypes by the name dtsim binds their bytes under (dtsim._FP8_NAMES).
_FP8_BYTES = {"float8e4nv": "float8_e4m3fn", "float8e5": "float8_e5m2", "float8e4b8": "float8_e4m3fnuz",
              "float8e5b16": "float8_e5m2fnuz", "float8e4b15": "float8_e4b15"}


def reinterpret(tensor, dtype):
    """triton.reinterpret(tensor, dtype): the tensor's memory as elements of `dtype` (of the same
    width), to pass to a kernel. fp8 formats (float8e4b15 included, which torch has not got) become a
    NumPy view of the bytes naming the format; other types a view of the tensor as that type."""
    import numpy as np
    name = getattr(dtype, "name", str(dtype))
    bits = getattr(dtype, "primitive_bitwidth", None)
    if hasattr(tensor, "data_ptr") and hasattr(tensor, "element_size"):  # torch
        if bits is not None and tensor.element_size() * 8 != bits:
            raise TypeError("triton.reinterpret: a tensor of %s as %s changes the element width" % (tensor.dtype, name))
        if name in _FP8_BYTES:
            import torch
            return tensor.detach().view(torch.uint8).numpy().view(_d._fp8(_FP8_BYTES[name]))
        import torch
        return tensor.view(getattr(torch, name))
    arr = np.asarray(tensor)
    if bits is not None and arr.itemsize * 8 != bits:
        raise TypeError("triton.reinterpret: an array of %s as %s changes the element width" % (arr.dtype, name))
    if name in _FP8_BYTES:
        return arr.view(np.uint8).view(_d._fp8(_FP8_BYTES[name]))
    return arr.view(_d._bf16() if name == "bfloat16" else np.dtype(name))


def install_modules():
    """Registers the submodules under their Triton names."""
    _sys.modules["triton.runtime"] = runtime
    _sys.modules["triton.runtime.driver"] = runtime  # `from triton.runtime.driver import driver` works too
    runtime.__dict__.setdefault("driver", runtime.driver)
    _sys.modules["triton.runtime.jit"] = runtime.jit
    _sys.modules["triton.runtime.autotuner"] = runtime.autotuner
    _sys.modules["triton.testing"] = testing
    _sys.modules["triton.tools"] = tools
    _sys.modules["triton.tools.tensor_descriptor"] = tools.tensor_descriptor
    _sys.modules["triton.compiler"] = compiler
    extra = _module("triton.language.extra", None)
    libdevice = language.__getattr__("libdevice")
    extra.libdevice = libdevice
    extra.cuda = _module("triton.language.extra.cuda", None, libdevice=libdevice, globaltimer=language.__getattr__("globaltimer"),
                         smid=language.__getattr__("smid"))
    language.extra = extra
    _sys.modules["triton.language.extra"] = extra
    _sys.modules["triton.language.extra.libdevice"] = libdevice
    _sys.modules["triton.language.extra.cuda"] = extra.cuda
    _sys.modules["triton.language.extra.cuda.libdevice"] = libdevice


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError("module 'triton' (dtsim's stand-in; Triton is not installed) has no attribute '%s'; installing "
                         "Triton (pip install triton) lets dtsim run scripts with Triton's own host package" % name)


_ = _d
