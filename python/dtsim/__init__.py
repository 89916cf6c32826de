"""dtsim from Python: launch @triton.jit kernels on dtsim's interpreter (sanitizer, debugger).

    import dtsim
    @dtsim.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr): ...
    add_kernel[(dtsim.cdiv(n, 256),)](x, y, out, n, BLOCK=256)   # numpy arrays, written in place

`python -m dtsim script.py` runs an unmodified Triton script with `import triton` resolved to this
package (see docs/python.md). A sanitizer finding raises KernelError; bad kernels raise CompileError
with the frontend's `file.py:line:col: error: ...` message."""
import bdb
import inspect
import math as _math
import os
import re
import sys

from . import language
from ._dtsim import BackendError, CompileError  # noqa: F401  (re-exported)
from . import _dtsim

__all__ = ["jit", "config", "KernelError", "CompileError", "BackendError", "Quit", "cdiv", "next_power_of_2", "Config",
           "autotune", "heuristics", "language"]


class KernelError(Exception):
    """A sanitizer or runtime finding of a launch. `findings` holds every finding kept (dicts with
    kind, message, file, line, pid, buffer, index, lanes); the attributes are the first one's."""

    def __init__(self, findings, count=None):
        self.findings = findings
        self.count = len(findings) if count is None else count
        first = findings[0]
        self.kind, self.buffer, self.pid = first["kind"], first["buffer"], tuple(first["pid"])
        self.file, self.line, self.index, self.lanes = first["file"], first["line"], first["index"], first["lanes"]
        text = "".join(f["message"] if f["message"].endswith("\n") else f["message"] + "\n" for f in findings)
        hidden = self.count - len(findings)
        if hidden > 0:
            text += "... and %d more finding%s not shown\n" % (hidden, "" if hidden == 1 else "s")
        super().__init__(text.rstrip("\n"))


class Quit(bdb.BdbQuit):
    """The debugger's `quit` (or Ctrl-D, end of input) ended the program, as pdb's `q` does: raised
    from the launch, it unwinds the host script (`python -m dtsim` then exits with status 0, as
    `python -m pdb` does). `findings` are those the launch reported before the quit (dicts, as in
    KernelError), `launch` its number among the script's launches."""

    def __init__(self, kernel, launch, findings):
        self.kernel, self.launch, self.findings = kernel, launch, findings
        text = "quit in launch %d (kernel %s)" % (launch, kernel)
        if findings:
            text += "; %d finding%s reported before:\n%s" % (
                len(findings), "" if len(findings) == 1 else "s",
                "".join(f["message"] if f["message"].endswith("\n") else f["message"] + "\n" for f in findings).rstrip("\n"))
        super().__init__(text)


# ---- options of every launch: dtsim.config(...) and the environment ----

_config = {
    "sanitize": "all",
    "threads": 1,
    "order": "sequential",
    "keep_going": False,
    "break_if": [],
    "break_at": [],
    "backend": "interp",
    "print_if": [],
    "max_steps": 0,
    "timeout": 0,
    "viz": None,
    "view_bounds": "warn",
    "undefined_lanes": None,
    "equal_stores": None,
    "autotune": None,
}
_ENV = {"sanitize": "DTSIM_SANITIZE", "threads": "DTSIM_THREADS", "order": "DTSIM_ORDER", "keep_going": "DTSIM_KEEP_GOING",
        "break_if": "DTSIM_BREAK_IF", "break_at": "DTSIM_BREAK_AT", "backend": "DTSIM_BACKEND",
        "max_steps": "DTSIM_MAX_STEPS", "timeout": "DTSIM_TIMEOUT", "viz": "DTSIM_VIZ",
        "view_bounds": "DTSIM_VIEW_BOUNDS", "autotune": "DTSIM_AUTOTUNE"}


def _split_exprs(text):
    """'x, mask[0], f(a, b)' -> ['x', 'mask[0]', 'f(a, b)'] (commas inside brackets stay)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [e for e in out if e]


_PRINT_IF_FORM = "print_if expects (COND, EXPRS) or (COND, EXPRS, LINE) (e.g. ('pid0==1', 'offs, x')), or a list of them"


def _print_if_list(v):
    """print_if=('pid0==1', 'offs, mask') or (COND, EXPRS, LINE) or a list of them."""
    if v is None:
        return []
    if isinstance(v, tuple) and v and isinstance(v[0], str):
        v = [v]
    if not isinstance(v, (list, tuple)):
        raise TypeError("%s, got %r" % (_PRINT_IF_FORM, v))
    out = []
    for item in v:
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise TypeError("%s, got %r" % (_PRINT_IF_FORM, item))
        cond, exprs = item[0], item[1]
        if not isinstance(cond, str):
            raise TypeError("print_if: the condition must be a string (such as 'pid0==1' or ''), got %r" % (cond,))
        if isinstance(exprs, str):
            exprs = _split_exprs(exprs)
        elif isinstance(exprs, (list, tuple)) and all(isinstance(e, str) for e in exprs):
            exprs = list(exprs)
        else:
            raise TypeError("print_if: the expressions must be a string such as 'offs, x' (or a list of strings), got %r" % (exprs,))
        if not exprs:
            raise ValueError("print_if %r: no expression to print" % (tuple(item),))
        line = item[2] if len(item) > 2 else 0
        if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 0):
            raise TypeError("print_if: LINE must be a line number (int >= 1), got %r" % (line,))
        out.append((cond, exprs, int(line or 0)))
    return out


def _check(name, text):
    """The check `dtsim run`'s flags use (one C++ function): ValueError naming the option."""
    err = _dtsim.check_option(name, text)
    if err:
        raise ValueError("%s %s" % (name, err))


def _viz_path(pattern, launch, kernel):
    """The file of one launch's picture: '{launch}' (1, 2, ...) and '{kernel}' replaced."""
    return pattern.format(launch=launch, kernel=kernel)

def _option(k, v):
    """The value of option k as stored, after the same checks as `dtsim run --k=v`."""
    if k in ("break_if", "break_at"):
        v = [] if v is None else [v] if isinstance(v, str) else list(v)
        if not all(isinstance(x, str) for x in v):
            raise TypeError("%s expects a string or a list of strings, got %r" % (k, v))
        return v
    if k == "print_if":
        return _print_if_list(v)
    if k == "undefined_lanes":
        if v is not None and not isinstance(v, bool):
            raise TypeError("undefined_lanes expects True, False or None, got %r" % (v,))
        return v
    if k == "equal_stores":
        if v is not None:
            if not isinstance(v, str):
                raise TypeError("equal_stores expects 'warn', 'conflict' or None, got %r" % (v,))
            _check(k, v)
        return v
    if k == "autotune":
        if v not in (None, "all", "first"):
            raise ValueError("autotune expects 'all' (every config of @triton.autotune is run), 'first' (only the first) "
                             "or None (each package's default), got %r" % (v,))
        return v
    if k == "keep_going":
        if not isinstance(v, (bool, int)):
            raise TypeError("keep_going expects True or False, got %r" % (v,))
        return bool(v)
    if k in ("threads", "max_steps"):
        if v is None and k == "max_steps":
            return 0
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("%s expects an int, got %r" % (k, v))
        if k == "max_steps" and v == 0:
            return 0
        _check(k, str(v))
        return v
    if k == "timeout":
        if v is None or (not isinstance(v, bool) and isinstance(v, (int, float)) and v == 0):
            return 0
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError("timeout expects a number of seconds, got %r" % (v,))
        _check(k, repr(float(v)))
        return float(v)
    if k == "viz":
        if v is not None and not (isinstance(v, str) and v.endswith((".svg", ".html")) and len(v) > 5):
            raise ValueError("viz expects a file name ending in .svg or .html (or None), got %r" % (v,))
        if v is not None:
            try:
                _viz_path(v, 1, "k")
            except (KeyError, IndexError, ValueError):
                raise ValueError("viz %r: only {launch} and {kernel} may appear in braces" % (v,))
        return v
    if k == "view_bounds":
        if v not in ("warn", "span", "storage"):
            raise ValueError("view_bounds expects 'warn', 'span' or 'storage', got %r" % (v,))
        return v
    if not isinstance(v, str):
        raise TypeError("%s expects a string, got %r" % (k, v))
    _check(k, v)
    return "interp" if v == "interpreter" else v


def config(**options):
    """Sets launch options for every later launch and returns the current ones:
    sanitize ('all', 'bounds', 'none'), threads (int in [1, 1024]), order ('sequential', 'reverse',
    'shuffle:SEED'), keep_going (bool), max_steps (statements per program instance; 0 = no budget),
    timeout (seconds of a launch; 0 = none), print_if ((COND, 'x, mask') or (COND, EXPRS, LINE):
    prints the expressions in the instances where COND holds, at the end of the instance or before
    the statement on LINE; or a list of them), break_if (a condition such as 'pid0==1' or the guide's
    '=1,>0'; a string or a list), break_at ('kernel.py:LINE [if COND]'; a string or a list),
    backend ('interp', or 'cuda': the CUDA backend, the arrays copied to the GPU and back, accesses
    bounds-checked unless sanitize='none'; BackendError at launch without a GPU), viz ('out.svg' or
    'out.html': each launch writes `dtsim viz`'s picture of it there, findings or not; '{launch}' and
    '{kernel}' in the name give each launch its own file, else the last launch's picture stays; None:
    no picture), view_bounds (a tensor argument's buffer is its elements' span; an access past the
    view's last element but inside its storage: 'warn', the default, runs it and prints a warning
    once per statement; 'span' reports it out of bounds; 'storage' runs it silently, the buffer
    going on to the storage's end), undefined_lanes (True: the lanes a tl.load without `other` leaves
    undefined are tracked to where they matter, on the interpreter with sanitize='all'; False: not;
    None, the default: as DTSIM_UNDEFINED_LANES=1 says at each lowering), equal_stores (two instances'
    plain stores of bit-identical values to one element: 'warn', a warning printed once per statement;
    'conflict', a write-write conflict as for different values, so that a forgotten program id fails;
    None, the default: as DTSIM_EQUAL_STORES (warn or conflict; unset: warn) says at each launch),
    autotune (@triton.autotune: 'all' runs every config (Triton's autotuner times each one its pruning
    keeps, as on a GPU; the stand-in's runs each and checks that their outputs agree); 'first' runs only
    the first config (the first one that Triton's pruning keeps), untimed; None, the default: 'all'
    under the installed Triton, 'first' with the stand-in; DTSIM_AUTOTUNE sets it).
    Values are checked as `dtsim run` checks its flags (ValueError, TypeError) before anything
    changes. The environment sets the defaults: DTSIM_SANITIZE, DTSIM_THREADS, DTSIM_ORDER,
    DTSIM_KEEP_GOING=1, DTSIM_BREAK_IF, DTSIM_BREAK_AT, DTSIM_BACKEND, DTSIM_MAX_STEPS, DTSIM_TIMEOUT,
    DTSIM_VIZ, DTSIM_VIEW_BOUNDS, DTSIM_AUTOTUNE."""
    if _ENV_ERROR:
        raise ValueError(_ENV_ERROR[0])
    new = {}
    for k, v in options.items():
        if k not in _config:
            raise TypeError("dtsim.config() got an unknown option '%s' (options: %s)" % (k, ", ".join(sorted(_config))))
        new[k] = _option(k, v)
    _config.update(new)
    return dict(_config)


_ENV_ERROR = []


def _config_from_env():
    for k, var in _ENV.items():
        text = os.environ.get(var, "")
        if not text:
            continue
        if k == "keep_going":
            _config[k] = text == "1"
            continue
        if k in ("break_if", "break_at"):
            _config[k] = [text]
            continue
        if k in ("viz", "view_bounds", "autotune"):
            try:
                _config[k] = _option(k, text)
            except ValueError as e:
                _ENV_ERROR.append("%s=%s: %s" % (var, text, e))
            continue
        err = _dtsim.check_option(k, text)
        if err:  # raised by config() and by every launch (not at import: `python -m dtsim` reports it)
            _ENV_ERROR.append("%s=%s: %s %s" % (var, text, k, err))
            continue
        _config[k] = int(text) if k in ("threads", "max_steps") else float(text) if k == "timeout" else \
            ("interp" if text == "interpreter" else text)


_config_from_env()


# ---- what a launch tells the debugger: its number and the host script's call site ----

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_launches = [0]


def _host_stack():
    """The host program's frames down to the launch, outermost first, as `where` shows them:
    'script.py:42 in main: add[grid](x, y, out, n)'. dtsim's, Triton's and the runner's frames are
    left out."""
    import linecache
    out = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        mod = f.f_globals.get("__name__", "") or ""
        if not (code.co_filename.startswith(_PKG_DIR) or mod.split(".")[0] in ("dtsim", "triton", "runpy", "importlib")
                or code.co_filename.startswith("<")):
            src = linecache.getline(code.co_filename, f.f_lineno).strip()
            out.append("%s:%d in %s%s" % (code.co_filename, f.f_lineno, code.co_name, ": " + src if src else ""))
        f = f.f_back
    out.reverse()
    return out[-8:]


_printoptions = [None]


def _sync_printoptions():
    """Values print as numpy prints arrays, with numpy's current np.set_printoptions settings."""
    np = sys.modules.get("numpy")
    if np is None:
        return
    o = np.get_printoptions()
    key = (int(o["precision"]), int(o["linewidth"]), min(int(o["threshold"]), 2**62), int(o["edgeitems"]))
    if key != _printoptions[0]:
        _dtsim.set_print_options(*key)
        _printoptions[0] = key


def _hint_checks():
    """Whether kernels are lowered with their compiler hints (tl.multiple_of, tl.max_contiguous,
    tl.max_constancy) checked: on the interpreter with the sanitizer on."""
    return _config["sanitize"] != "none" and _config["backend"] != "cuda"


def _module_roots():
    """The folders where dtsim's own .py reader looks for the modules a kernel file imports helpers
    from (after the file's own folder): sys.path, as Python would ('' is the working directory), less
    the standard library's folders (no @triton.jit there; `import pdb` stays host code)."""
    import sysconfig
    std = {os.path.realpath(p) for k, p in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib")}
    return [p or os.getcwd() for p in sys.path
            if isinstance(p, str) and os.path.isdir(p or ".") and os.path.realpath(p or ".") not in std]


_STDLIB_PREFIXES = tuple(os.path.realpath(p) for p in {os.path.dirname(os.__file__)})


def _host_values(fn):
    """Module-level names that host code bound to a Triton function (`exp = get_tl_exp()` picking a
    libdevice function by the installed version; `FAST = tl.constexpr(not os.getenv(...))`), which
    dtsim's own reader cannot run: by module file (real path), name -> "tl.NAME" or "py:VALUE" (a
    number or bool). The kernel's module, those of the @triton.jit functions it reaches
    through them, the loaded modules of their top-level packages (where helpers are imported from),
    and the loaded modules outside site-packages and the standard library (the user's own files)."""
    out, seen, packages = {}, set(), set()
    todo, scanned = [getattr(fn, "__globals__", None)], set()
    here = os.path.dirname(os.path.realpath(__file__))
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if isinstance(f, str) and f.endswith(".py") and "-packages" not in f and not f.startswith(_STDLIB_PREFIXES) \
                and not os.path.realpath(f).startswith(here):
            todo.append(mod.__dict__)
    while len(seen) < 512:
        if not todo:
            packages -= scanned | {"triton", "torch", "dtsim", "numpy"}
            if not packages:
                break
            for mname, mod in list(sys.modules.items()):
                if mname.split(".")[0] in packages and isinstance(getattr(mod, "__dict__", None), dict):
                    todo.append(mod.__dict__)
            scanned |= packages
            continue
        g = todo.pop()
        if not isinstance(g, dict) or not isinstance(g.get("__file__"), str):
            continue
        path = os.path.realpath(g["__file__"])
        if path in seen:
            continue
        seen.add(path)
        if isinstance(g.get("__name__"), str) and g["__name__"] != "__main__":
            packages.add(g["__name__"].split(".")[0])
        names = {}
        for k, v in list(g.items()):
            inner = getattr(v, "fn", None)
            if inner is not None and hasattr(inner, "__globals__") and hasattr(v, "run"):  # a @triton.jit function
                todo.append(inner.__globals__)
                continue
            if isinstance(v, language._KernelOnly):  # the stand-in's tl.* functions
                names[k] = "tl." + v.__name__.split(".")[-1]
                continue
            if type(v).__name__ == "constexpr" and hasattr(v, "value"):  # tl.constexpr(<host code>): its value
                v = v.value
            if type(v) in (bool, int, float) and (type(v) is not float or _math.isfinite(v)):
                names[k] = "py:" + repr(v)
                continue
            mod = getattr(v, "__module__", None)
            if callable(v) and isinstance(mod, str) and mod.startswith("triton.language") and isinstance(getattr(v, "__name__", None), str):
                names[k] = "tl." + v.__name__
        if names:
            out[path] = names
    return out


def _undefined_lanes():
    """Whether kernels are lowered with the lanes a tl.load without `other` leaves undefined tracked
    to where they matter (a store, an atomic, an address, a branch): asked for with
    dtsim.config(undefined_lanes=True) or, while that option is None, DTSIM_UNDEFINED_LANES=1 (read at
    each lowering); on the interpreter with the sanitizer at "all"."""
    want = _config["undefined_lanes"]
    if want is None:
        want = os.environ.get("DTSIM_UNDEFINED_LANES") == "1"
    return want and _config["sanitize"] == "all" and _config["backend"] != "cuda"


def _equal_stores():
    """What two instances' plain stores of bit-identical values to one element are: 'warn' or
    'conflict', as dtsim.config(equal_stores=...) says or, while that option is None,
    DTSIM_EQUAL_STORES (read at each launch; unset or empty: 'warn')."""
    v = _config["equal_stores"]
    if v is None:
        v = os.environ.get("DTSIM_EQUAL_STORES", "") or "warn"
        err = _dtsim.check_option("equal_stores", v)
        if err:
            raise ValueError("DTSIM_EQUAL_STORES=%s: equal_stores %s" % (v, err))
    return v


def _launch_extras(compiled):
    """The keyword arguments of _dtsim.run besides the launch itself: budgets, launch number, and
    (only when the debugger may stop) the host call stack."""
    if _ENV_ERROR:
        raise ValueError(_ENV_ERROR[0])
    _launches[0] += 1
    _sync_printoptions()
    c = _config
    debugging = c["break_if"] or c["break_at"] or compiled.has_breakpoints or _dtsim.debugger_active()
    viz = _viz_path(c["viz"], _launches[0], compiled.kernel) if c["viz"] else ""
    return {"max_steps": int(c["max_steps"]), "timeout": float(c["timeout"]), "launch": _launches[0],
            "host_stack": _host_stack() if debugging else [], "viz": viz, "equal_stores": _equal_stores()}



_WARNED = set()


def _print_warnings(result):
    """Prints the run's warnings (stores of equal values by two instances, accesses past a view inside
    its storage) to stderr, each statement's once per process."""
    for w in result.get("warnings", ()):
        head = (w["message"].split("\n", 1)[0], w["buffer"])
        if head in _WARNED or len(_WARNED) > 1000:
            continue
        _WARNED.add(head)
        sys.stderr.write(w["message"] if w["message"].endswith("\n") else w["message"] + "\n")


def _check_result(compiled, result, launch_extras):
    """Raises what the launch's result calls for: Quit after the REPL's quit, KernelError for findings."""
    if result.get("quit"):
        raise Quit(compiled.kernel, launch_extras["launch"], result["findings"])
    if result["findings"]:
        raise KernelError(result["findings"], result["findings_count"])


_STREAM = []


def _current_stream():
    """torch's current CUDA stream (a CUstream, as an integer), where Triton launches too; 0 (the
    legacy default stream) without torch."""
    if not _STREAM:
        torch = sys.modules.get("torch")
        c = getattr(torch, "_C", None)
        get, dev = getattr(c, "_cuda_getCurrentRawStream", None), getattr(c, "_cuda_getDevice", None)
        _STREAM.append((lambda: get(dev())) if get and dev else (lambda: 0))
    return _STREAM[0]()


def _launch_on_gpu(launcher, compiled, ptrs):
    """One launch through a CudaLauncher: no synchronize unless a check of the kernel can report."""
    if _ENV_ERROR:
        raise ValueError(_ENV_ERROR[0])
    _launches[0] += 1
    sys.stdout.flush()
    sys.stderr.flush()
    result = launcher.launch(ptrs, _current_stream())
    if result is not None:
        _check_result(compiled, result, {"launch": _launches[0]})


def _gpu_launchers_on():
    """Whether a launch may go through a CudaLauncher: backend='cuda' without a debugger option."""
    c = _config
    return c["backend"] == "cuda" and not (c["break_if"] or c["break_at"] or c["print_if"] or c["viz"])


def _launcher_key(parts):
    """A CudaLauncher's key from its parts; None where one is unhashable (the launch then goes the
    long way, which reports it)."""
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _launch_known(launchers, fast):
    """Launches through the CudaLauncher kept under fast = (key, addresses); the compiled kernel, or
    None when there is none yet."""
    got = launchers.get(fast[0])
    if got is None:
        return None
    _launch_on_gpu(got[0], got[1], fast[1])
    return got[1]


def _launch_new(launchers, fast, compiled, scalars, device_arrays):
    """Makes the CudaLauncher of fast = (key, addresses), keeps it and launches through it; False
    where the run has buffers outside `device_arrays` (run() does that launch)."""
    launcher = _dtsim.cuda_launcher(compiled, scalars, device_arrays, _config["sanitize"])
    if launcher is None:
        return False
    if len(launchers) > 64:
        launchers.clear()
    launchers[fast[0]] = (launcher, compiled)
    _launch_on_gpu(launcher, compiled, fast[1])
    return True


# ---- Triton's host helpers ----

def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n):
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


# ---- binding arguments ----

_NP_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16", "int32": "i32",
              "int64": "i64", "bool": "i1"}
# Unsigned integers are bound as the signless type of their width (their bits): Triton's TTIR keeps
# their unsignedness in its ops (extui, uitofp, divui, cmpi ult...); dtsim's own .py reader is told
# the pointer's element type as u8..u64 (see _compile_dtype) and types the values tl.uint8 ... tl.uint64.
_NP_UNSIGNED = {"uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64"}
_DTYPE_OF = {}  # numpy dtype -> dtsim element type (filled at the first launch)
# fp8 has no numpy dtype: fp8 tensors (torch.float8_e4m3fn / float8_e5m2 / float8_e4m3fnuz /
# float8_e5m2fnuz, ml_dtypes) are bound as views of their bytes with a one-field structured dtype
# naming the format, as bf16 is. float8_e4b15 (Triton's float8e4b15, which torch has not got) names
# the bytes of triton.reinterpret(t, tl.float8e4b15) for dtsim's own reader.
_FP8_NAMES = {"float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2", "float8_e4m3fnuz": "f8e4b8",
              "float8_e5m2fnuz": "f8e5b16", "float8_e4b15": "f8e4b15"}


def _dtype_table():
    import numpy as np
    if not _DTYPE_OF:
        _DTYPE_OF.update({np.dtype(k): v for k, v in _NP_DTYPES.items()})
        _DTYPE_OF.update({np.dtype(k): v for k, v in _NP_UNSIGNED.items()})
        _DTYPE_OF[_bf16()] = "bf16"
        for n, dt in _FP8_NAMES.items():
            _DTYPE_OF[_fp8(n)] = dt
    return _DTYPE_OF


def _fp8_name(name):
    """"float8_e4m3fn" for torch.float8_e4m3fn / ml_dtypes float8_e4m3fn (likewise the other fp8
    formats of _FP8_NAMES), else None."""
    n = name[6:] if name.startswith("torch.") else name
    return n if n in _FP8_NAMES else None


def _fp8(name):
    import numpy as np
    return np.dtype([(name, "u1")])


_BF16 = []


def _bf16():
    """NumPy has no bfloat16: bf16 tensors (torch.bfloat16, ml_dtypes.bfloat16) are bound as views of
    their 2-byte elements with this type, which says what the bits are."""
    if not _BF16:
        import numpy as np
        _BF16.append(np.dtype([("bfloat16", "=u2")]))
    return _BF16[0]


def _is_bf16_name(name):
    return name in ("bfloat16", "torch.bfloat16")


class _WritableAlias:
    """An __array_interface__ over an array's memory, without its read-only flag (see _as_array)."""

    def __init__(self, arr):
        self.keep = arr  # keeps the producer's memory alive as long as the alias
        ai = dict(arr.__array_interface__)
        ai["data"] = (ai["data"][0], False)
        self.__array_interface__ = ai


def _as_array(obj, name):
    """The numpy view of a tensor argument, without a copy: numpy arrays, torch CPU tensors
    (tensor.numpy()), objects with __array_interface__ or DLPack (__dlpack__). None for anything
    else, GPU memory included (see _device_array)."""
    import numpy as np
    if isinstance(obj, np.ndarray):
        return obj
    if obj is None or isinstance(obj, (int, float, bool, str, np.generic, language.constexpr, language.dtype)):
        return None
    if hasattr(obj, "numpy") and hasattr(obj, "data_ptr"):  # torch
        if getattr(obj, "is_cuda", False):
            return None  # GPU memory: _device_array
        t = _restrided_span(obj.detach())
        if _is_bf16_name(str(t.dtype)):  # tensor.numpy() has no bfloat16: its bits, as int16
            import torch
            return t.view(torch.int16).numpy().view(_bf16())
        f8 = _fp8_name(str(t.dtype))
        if f8:  # nor fp8: its bytes
            import torch
            return t.view(torch.uint8).numpy().view(_fp8(f8))
        return t.numpy()
    if hasattr(obj, "__cuda_array_interface__"):
        return None
    if hasattr(obj, "__array_interface__"):
        return np.asarray(obj)
    if hasattr(obj, "__dlpack__"):
        arr = np.from_dlpack(obj)
        if not arr.flags.writeable and int(np.__version__.split(".")[0]) < 2:
            # NumPy 1.x marks every DLPack import read-only, but a DLPack (< 1.0) tensor's memory is
            # the producer's to write, as Triton kernels do: alias it writable, still without a copy.
            arr = np.asarray(_WritableAlias(arr))
        return arr
    return None


def _restrided_span(t):
    """A torch view with a zero stride over an axis of more than one element (as_strided, expand:
    host code that gives a kernel the shape of an index and lets the kernel add the skipped axis's
    offsets itself, as FlagGems' gather does) does not describe the memory the kernel reads: it is
    bound as the 1-D span from its first element to the end of its storage. Other tensors as they are."""
    if t.is_contiguous() or not any(st == 0 and d > 1 for d, st in zip(t.shape, t.stride())) \
            or any(st < 0 for st in t.stride()) or t.dtype.is_complex:
        return t
    n = t.untyped_storage().nbytes() // t.element_size() - t.storage_offset()
    return t.as_strided((max(n, 0),), (1,), t.storage_offset())


class _DeviceArray:
    """GPU memory bound by its device address (backend='cuda'): address, dtype name, the buffer's
    shape (its shape when C-contiguous, else its span of storage), read-only flag."""

    def __init__(self, ptr, dt, shape, readonly):
        self.ptr, self.dt, self.shape, self.readonly = ptr, dt, shape, readonly


def _device_array(obj, name):
    """A _DeviceArray for GPU memory (torch CUDA tensors, anything with __cuda_array_interface__),
    else None."""
    import numpy as np
    if hasattr(obj, "numpy") and hasattr(obj, "data_ptr"):  # torch: only CUDA tensors
        if getattr(obj, "is_cuda", False) is not True:
            return None
        obj = obj.detach()
        if _is_bf16_name(str(obj.dtype)):  # torch gives no __cuda_array_interface__ for bfloat16
            cai = {"data": (obj.data_ptr(), False), "shape": tuple(obj.shape), "typestr": "bf16",
                   "strides": tuple(st * 2 for st in obj.stride())}
        elif _fp8_name(str(obj.dtype)):  # nor for fp8
            cai = {"data": (obj.data_ptr(), False), "shape": tuple(obj.shape), "typestr": _FP8_NAMES[_fp8_name(str(obj.dtype))],
                   "strides": tuple(obj.stride())}
        else:
            cai = obj.__cuda_array_interface__
    else:
        cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        return None
    if cai["typestr"] == "bf16":
        dt, itemsize = "bf16", 2
    elif cai["typestr"] in _FP8_NAMES.values():
        dt, itemsize = cai["typestr"], 1
    else:
        dtype = np.dtype(cai["typestr"])
        dt, itemsize = _dtype_table().get(dtype), dtype.itemsize
    if dt is None:
        raise TypeError("argument '%s': element type %s (GPU memory) is not supported (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, "
                        "float16, bfloat16, float32, float64, int8, int16, int32, int64, their unsigned forms, bool in "
                        "native byte order)" % (name, cai["typestr"]))
    ptr, readonly = int(cai["data"][0]), bool(cai["data"][1])
    shape = tuple(int(d) for d in cai["shape"]) or (1,)
    strides = cai.get("strides")
    size = 1
    for d in shape:
        size *= d
    step, contiguous = itemsize, True
    if strides is not None:
        for d, st in zip(reversed(shape), reversed(strides)):
            contiguous = contiguous and (d <= 1 or st == step)
            step *= d
    if contiguous:
        bshape = list(shape)
    else:
        if any(st < 0 or st % itemsize for st in strides):
            raise TypeError("argument '%s': a view with negative or unaligned strides is not supported" % name)
        bshape = [1 + sum((d - 1) * st for d, st in zip(shape, strides)) // itemsize if size else 0]
    if ptr % itemsize:
        raise TypeError("argument '%s': GPU memory not aligned to its element size" % name)
    return _DeviceArray(ptr, dt, bshape, readonly)


def _buffer_of(arr, name):
    """The buffer a pointer argument addresses: the array itself when C-contiguous, else the span
    of storage from its first to its last element (1-D), as a view; bound without a copy. Returns
    (array to bind, dtype name, converted): an array in non-native byte order or with unaligned data
    is bound as a native, aligned copy, and `converted` is the span the copy is written back into.
    Unsigned integer arrays are bound as the signless type of their width."""
    import numpy as np
    dt = _dtype_table().get(arr.dtype)
    if dt is None and _is_bf16_name(arr.dtype.name) and arr.dtype.itemsize == 2:  # ml_dtypes.bfloat16
        arr, dt = arr.view(_bf16()), "bf16"
    if dt is None and _fp8_name(arr.dtype.name) and arr.dtype.itemsize == 1:  # ml_dtypes float8
        arr = arr.view(_fp8(_fp8_name(arr.dtype.name)))
        dt = _FP8_NAMES[_fp8_name(arr.dtype.names[0])]
    convert = False
    if dt is None and not arr.dtype.isnative:
        dt = _DTYPE_OF.get(arr.dtype.newbyteorder("="))
        convert = True
    if dt is None:
        raise TypeError("argument '%s': element type %s is not supported (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float16, "
                        "bfloat16, float32, float64, int8, int16, int32, int64, their unsigned forms, bool)"
                        % (name, arr.dtype.name))
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if not arr.flags.c_contiguous:
        if any(s < 0 for s in arr.strides) or any(s % arr.itemsize for s in arr.strides):
            raise TypeError("argument '%s': a view with negative or unaligned strides is not supported" % name)
        span = 1 + sum((d - 1) * s for d, s in zip(arr.shape, arr.strides)) // arr.itemsize
        if arr.size == 0:
            span = 0
        arr = np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(arr.itemsize,))
    if convert or not arr.flags.aligned:
        return np.array(arr, dtype=arr.dtype.newbyteorder("="), order="C", copy=True), dt, arr
    return arr, dt, None


def _compile_dtype(arr, dt):
    """The element type the .py reader is told for a bound array: u8..u64 for unsigned integer data
    (bound as i8..i64, their bits), else the bound type."""
    return "u" + dt[1:] if arr.dtype.kind == "u" else dt


_INT_ANNOTATIONS = {"int1": "i1", "uint1": "u1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
                    "uint32": "u32", "uint64": "u64"}


def _int_annotation(p):
    """'i32', 'u32' ... for a parameter annotated with an integer dtype (tl.int32, "tl.uint32", the
    installed Triton's), else None."""
    a = p.annotation
    if a is inspect.Parameter.empty:
        return None
    name = a if isinstance(a, str) else getattr(a, "name", None)
    return _INT_ANNOTATIONS.get(name.split(".")[-1]) if isinstance(name, str) else None


def _is_constexpr_param(p):
    a = p.annotation
    if a is inspect.Parameter.empty:
        return False
    if a is language.constexpr or isinstance(a, language.constexpr):
        return True
    # the installed Triton's tl.constexpr (a kernel read by this reader under `python -m dtsim`)
    if isinstance(a, type) and a.__name__ == "constexpr" and a.__module__.startswith("triton."):
        return True
    return isinstance(a, str) and a.split(".")[-1] == "constexpr"


def _value_key(v):
    """A scalar launch argument's part of a CudaLauncher's key: its type and value, and for a zero that
    is not an integer its text too (0.0 == -0.0 and they hash alike, but the kernel reads the sign)."""
    t = type(v)
    if t is int or t is bool:
        return (t, v)
    try:
        if v == 0:
            return (t, v, str(v))
    except (TypeError, ValueError):  # no truth value (an array): the key's hash decides
        pass
    return (t, v)


# Triton's dtype.name spellings where they differ from the tl attribute names (tl.float32.name == "fp32")
_TRITON_DTYPE_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "fp8e4nv": "float8e4nv",
                       "fp8e5": "float8e5", "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16"}


def _scalar_text(v, name):
    """The value as dtsim's frontend reads it, and its Triton type (for the cache key)."""
    import numpy as np
    v = language._unwrap(v)
    if isinstance(v, (bool, np.bool_)):
        return ("True" if v else "False"), "i1"
    if isinstance(v, (int, np.integer)):
        v = int(v)
        if not -2**63 <= v < 2**64:
            raise ValueError("argument '%s': the integer %d does not fit in 64 bits" % (name, v))
        if v >= 2**63:  # Triton types [2**63, 2**64) as uint64; dtsim's integers are signed
            raise ValueError("argument '%s': the integer %d does not fit in int64 (Triton passes it as uint64, "
                             "which dtsim does not support)" % (name, v))
        return str(v), ("i32" if -2**31 <= v < 2**31 else "i64")
    if isinstance(v, (float, np.floating)):
        t = repr(float(v))
        if _math.isfinite(float(v)) and not any(c in t for c in ".e"):
            t += ".0"
        return t, "f32"
    if v is None:
        return "None", "none"
    if isinstance(v, language.dtype):
        return v.dtsim_arg, "dtype"
    if type(v).__module__.startswith("triton.language") and isinstance(getattr(v, "name", None), str) \
            and hasattr(v, "is_floating") and not hasattr(v, "element_ty"):
        # the installed Triton's dtype (tl.float32 passed by host code to a kernel this reader reads)
        return "tl." + _TRITON_DTYPE_NAMES.get(v.name, v.name), "dtype"
    if isinstance(v, str):
        return "'" + v + "'", "str"
    raise TypeError("argument '%s': %s values are not supported as kernel arguments" % (name, type(v).__name__))


def _launch_grid(name, g):
    """The grid of a launch as a tuple of 1 to 3 non-negative ints: an int, or a tuple/list of ints
    (numpy integers and constexprs too). Strings, floats and bools are refused (TypeError), as
    Triton's launcher refuses them; a 0 extent is an empty launch."""
    if isinstance(g, (str, bytes)):
        raise TypeError("%s: the grid must be an int or a tuple of ints, got %r" % (name, g))
    if not isinstance(g, (tuple, list)):
        g = (g,)
    out = []
    for x in g:
        v = language._unwrap(x)
        if isinstance(v, bool) or not hasattr(v, "__index__") or isinstance(v, (str, bytes)):
            raise TypeError("%s: grid entries must be ints, got %r in the grid %r" % (name, x, tuple(g)))
        v = v.__index__()
        if v < 0:
            raise ValueError("%s: grid entries must be >= 0, got %d" % (name, v))
        if v >= 2**31:
            raise ValueError("%s: a grid extent must be below 2**31, got %d" % (name, v))
        out.append(v)
    if not 1 <= len(out) <= 3:
        raise ValueError("%s: the grid has %d axes (1 to 3)" % (name, len(out)))
    return tuple(out)


class _Launcher:
    def __init__(self, kernel, grid):
        self.kernel, self.grid = kernel, grid

    def __call__(self, *args, **kwargs):
        return self.kernel.run(*args, grid=self.grid, **kwargs)


class WarmedKernel:
    """What `kernel.warmup(...)` returns: the compiled specialization (its attributes, such as
    `tile_ir` and `outputs`, are the _dtsim.Compiled's), with what host code reads of a compiled
    Triton kernel (tutorial 02 sizes its grid from them): `n_regs`, `n_spills`, `n_max_threads` and
    `metadata` (`shared`, the largest tile's bytes, `num_warps`, `num_stages`, `name`) of an sm_90
    build it would plausibly have, `_init_handles()`, and `kernel[grid](*args)`, which launches the
    kernel with the specialization's options."""

    def __init__(self, fn, compiled, opts):
        self._fn, self._compiled, self._opts = fn, compiled, dict(opts)
        self.n_regs, self.n_spills, self.n_max_threads = 32, 0, 1024
        from .triton_launch import ELEM_BYTES as size
        shared = 1024
        for elem, dims in re.findall(r"(?<![*\w])(i1|i8|i16|i32|i64|f16|bf16|f32|f64)\[([0-9, ]+)\]", compiled.tile_ir):  # tiles, not buffers
            n = 1
            for d in dims.split(","):
                n *= int(d)
            shared = max(shared, n * size[elem])
        for lo, hi in re.findall(r"\barange\((-?\d+), (-?\d+)\)", compiled.tile_ir):  # (its tiles' types are not printed)
            shared = max(shared, (int(hi) - int(lo)) * 4)
        self.metadata = type("KernelMetadata", (), {"shared": shared, "num_warps": int(self._opts.get("num_warps") or 4),
                                                    "num_stages": int(self._opts.get("num_stages") or 3), "num_ctas": 1,
                                                    "name": fn.__name__})()

    def _init_handles(self):
        pass

    def __getattr__(self, name):
        if name.startswith("_"):  # (not the compiled kernel's: also keeps copy/pickle from recursing)
            raise AttributeError(name)
        return getattr(self._compiled, name)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            opts = {k: v for k, v in self._opts.items() if v is not None and k not in self._fn.arg_names and k not in kwargs}
            return self._fn.run(*args, grid=grid, **opts, **kwargs)
        return launch


class KernelInterface:
    """`kernel[grid](*args, **kwargs)` for jit functions and the autotune/heuristics wrappers."""

    def __getitem__(self, grid):
        return _Launcher(self, grid)


_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug", "stream", "warmup",
                   "extern_libs")


def _check_extern_libs(kernel, libs):
    """extern_libs={'libdevice': PATH} as Triton takes it (name -> path of a bitcode library). dtsim
    runs the libdevice functions it knows itself (docs/python.md), so the file is not read."""
    import os as _os
    if libs is None:
        return
    if not isinstance(libs, dict) or not all(isinstance(k, str) and isinstance(v, (str, _os.PathLike)) for k, v in libs.items()):
        raise TypeError("%s: extern_libs must be a dict of library name -> path, e.g. {'libdevice': '.../libdevice.10.bc'}, "
                        "got %r" % (kernel, libs))


class JITFunction(KernelInterface):
    """A @triton.jit kernel: lowered by dtsim's C++ frontend from its source file, once per launch
    signature (buffer types and shapes, constexpr values, scalar types, grid)."""

    def __init__(self, fn, **options):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.path = os.path.abspath(inspect.getsourcefile(fn))
        try:  # the source as it is now: an edit of the file after decoration does not change what runs
            with open(self.path, encoding="utf-8") as f:
                self.source = f.read()
        except OSError:
            self.source = None
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.constexprs = {n for n, p in self.signature.parameters.items() if _is_constexpr_param(p)}
        self.defaults = {n: p.default for n, p in self.signature.parameters.items() if p.default is not inspect.Parameter.empty}
        self.int_types = {n: t for n, t in ((n, _int_annotation(p)) for n, p in self.signature.parameters.items()) if t}
        self.has_star = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self.signature.parameters.values())
        self.cache = {}
        self.launchers = {}  # _device_key's key -> (_dtsim.CudaLauncher, compiled kernel)
        self.options = options

    def __repr__(self):
        return "JITFunction(%s:%s)" % (self.path, self.__name__)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("%s is a @triton.jit kernel: launch it with %s[grid](...)" % (self.__name__, self.__name__))

    def bind(self, args, kwargs, partial=False):
        """name -> value of the kernel's arguments (defaults included) and the launch options."""
        opts = {k: kwargs.pop(k) for k in list(kwargs) if k in _LAUNCH_OPTIONS and k not in self.signature.parameters}
        if "extern_libs" in opts:
            _check_extern_libs(self.__name__, opts["extern_libs"])
        if len(args) <= len(self.arg_names) and not self.has_star:  # the common case, without inspect's binding
            values = dict(zip(self.arg_names, args))
            if not any(k in values or k not in self.signature.parameters for k in kwargs):
                values.update(kwargs)
                for n, d in self.defaults.items():
                    values.setdefault(n, d)
                if partial or len(values) == len(self.arg_names):
                    return {n: values[n] for n in self.arg_names if n in values}, opts
        try:
            bound = (self.signature.bind_partial if partial else self.signature.bind)(*args, **kwargs)
        except TypeError as e:
            raise TypeError("%s: %s" % (self.__name__, e)) from None
        bound.apply_defaults()
        return dict(bound.arguments), opts

    def _grid(self, grid, meta):
        return _launch_grid(self.__name__, grid(meta) if callable(grid) else grid)

    def prepare(self, args, kwargs, grid):
        """The compiled kernel for these arguments and what its run needs."""
        import numpy as np
        values, opts = self.bind(args, kwargs)
        meta = dict(values)
        meta.update(opts)
        g = self._grid(grid, meta)
        empty = 0 in g  # launches nothing (as Triton); still lowered, for warmup and the cache
        if empty:
            g = tuple(max(1, x) for x in g)
        key, compile_args, scalars, buffers, arrays, converted, slack = [g], {}, {}, [], [], [], {}
        for name, v in values.items():
            if _config["view_bounds"] == "storage":
                from .triton_launch import _to_storage_end
                v = _to_storage_end(v)
            arr = _as_array(v, name)
            if arr is None and not isinstance(v, (int, float, str)) and v is not None:
                dev = _device_array(v, name)
                if dev is not None:
                    if _config["backend"] != "cuda":
                        raise TypeError("argument '%s': GPU memory (a CUDA tensor); the interpreter needs host arrays "
                                        "(tensor.cpu(), or dtsim.config(backend='cuda') to run on the GPU)" % name)
                    buffers.append((name, dev.dt, dev.shape))
                    arrays.append((name, dev, dev.dt))
                    key.append((name, dev.dt, tuple(dev.shape)))
                    continue
            if arr is not None:
                view, dt, orig = _buffer_of(arr, name)
                cdt = _compile_dtype(view, dt)
                buffers.append((name, cdt, list(view.shape)))
                arrays.append((name, view, dt))
                key.append((name, cdt, view.shape))
                if orig is not None:
                    converted.append((name, orig, view))
                elif _config["view_bounds"] != "storage":
                    from .triton_launch import _slack_of
                    slack[name] = _slack_of(v, view)
                continue
            if name in self.int_types and isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                from .triton_launch import _launcher_int  # the bits Triton's launcher passes
                v = _launcher_int(self, name, int(v), self.int_types[name])
            text, typ = _scalar_text(v, name)
            compile_args[name] = text
            if name in self.constexprs or typ in ("none", "dtype", "str"):
                key.append((name, text))
            else:
                scalars[name] = text
                key.append((name, typ))
        for o in ("num_warps", "num_stages"):
            if opts.get(o) is not None:
                compile_args[o] = str(int(opts[o]))
                key.append((o, compile_args[o]))
        # Triton's enable_fp_fusion (default True): on backend='cuda', a multiply and an add may be
        # contracted into fma.rn as Triton's GPU build does; the interpreter never fuses
        fp_fusion = opts.get("enable_fp_fusion") is None or bool(opts["enable_fp_fusion"])
        key.append(("enable_fp_fusion", fp_fusion))
        hints = _hint_checks()
        key.append(("hint_checks", hints))
        undef = _undefined_lanes()
        key.append(("undefined_lanes", undef))
        key = tuple(key)
        compiled = self.cache.get(key)
        if compiled is None:
            qual = getattr(self.fn, "__qualname__", "")
            if "<locals>" in qual:  # the reader reads module-level functions of the file
                from .triton_launch import _def_where
                raise CompileError("%serror: '%s' is defined inside the function '%s': dtsim's own .py reader reads "
                                   "@triton.jit functions defined at a module's top level (with Triton installed, python -m "
                                   "dtsim reads this kernel through Triton's frontend)"
                                   % (_def_where(self), self.__name__, qual.split(".<locals>")[0]))
            try:
                compiled = _dtsim.compile(self.path, self.__name__, compile_args, buffers, [str(x) for x in g],
                                          {self.path: self.source} if self.source is not None else {}, fp_fusion, hints,
                                          undef, _module_roots(), _host_values(self.fn))
            except CompileError as e:
                if "not supported" in str(e) and getattr(sys.modules.get("triton"), "__version__", "").endswith("+dtsim"):
                    # the stand-in: name what reading the kernel as Triton does would need
                    raise CompileError(str(e) + "\n  (dtsim's stand-in for Triton is in use (Triton is not installed, or "
                                       "DTSIM_STANDIN=1), so dtsim read this kernel with its own .py reader; with Triton "
                                       "installed (pip install triton), python -m dtsim reads kernels through Triton's own "
                                       "frontend)") from None
                raise
            self.cache[key] = compiled
        for name, view, _ in arrays:
            if (view.readonly if type(view) is _DeviceArray else not view.flags.writeable) and name in compiled.outputs:
                raise TypeError("%s: argument '%s' is a read-only array, and the kernel stores to it" % (self.__name__, name))
        for name, orig, _ in converted:  # bound as a copy: the copy-back would fail after the run
            if not orig.flags.writeable and name in compiled.outputs:
                raise TypeError("%s: argument '%s' is a read-only array, and the kernel stores to it" % (self.__name__, name))
        return compiled, scalars, arrays, opts, converted, empty, slack

    def warmup(self, *args, grid, **kwargs):
        """Lowers the kernel for these arguments without running it; returns the compiled kernel (a
        WarmedKernel)."""
        compiled, _, _, opts = self.prepare(args, dict(kwargs), grid)[:4]
        return WarmedKernel(self, compiled, opts)

    def _device_key(self, args, kwargs, grid):
        """For a launch whose every tensor is a torch CUDA tensor: the key of its CudaLauncher (grid,
        sanitize mode, launch options, each tensor's dtype, shape and strides, every other argument's
        type and value) and the tensors' device addresses in argument order; None for any other launch."""
        values, opts = self.bind(args, dict(kwargs))
        meta = dict(values)
        meta.update(opts)
        g = self._grid(grid, meta)
        if 0 in g:
            return None
        key, ptrs = [g, _config["sanitize"]], []
        for name, v in values.items():
            if hasattr(v, "data_ptr") and hasattr(v, "stride"):  # torch
                if getattr(v, "is_cuda", False) is not True:
                    return None
                ptrs.append(v.data_ptr())
                key.append((v.dtype, v.shape, v.stride()))
            elif hasattr(v, "__cuda_array_interface__") or hasattr(v, "__array_interface__"):
                return None
            else:
                key.append(_value_key(v))
        key.append(tuple(sorted(opts.items())))
        key = _launcher_key(key)
        return None if key is None else (key, ptrs)

    def run(self, /, *args, grid, warmup=False, **kwargs):
        c = _config
        fast = None
        if not warmup and _gpu_launchers_on():
            # GPU memory only: the launcher made at the first such launch binds the addresses and launches
            fast = self._device_key(args, kwargs, grid)
            if fast is not None:
                got = _launch_known(self.launchers, fast)
                if got is not None:
                    return got
        compiled, scalars, arrays, opts, converted, empty, slack = self.prepare(args, dict(kwargs), grid)
        if warmup or empty:
            return compiled
        if fast is not None and all(type(a[1]) is _DeviceArray for a in arrays) and not compiled.makes_pointers \
                and not compiled.has_breakpoints \
                and _launch_new(self.launchers, fast, compiled, scalars, [(n, a.ptr, dt, a.shape) for n, a, dt in arrays]):
            return compiled
        sys.stdout.flush()
        sys.stderr.flush()
        device = []
        if c["backend"] == "cuda" and any(type(a[1]) is _DeviceArray for a in arrays):
            device = [(n, a.ptr, dt, a.shape) for n, a, dt in arrays if type(a) is _DeviceArray]
            arrays = [a for a in arrays if type(a[1]) is not _DeviceArray]
        extras = _launch_extras(compiled)
        if compiled.makes_pointers and c["backend"] != "cuda":  # on the GPU, addresses are device addresses
            from .triton_launch import _address_memory
            extras["memory"] = _address_memory(arrays, scalars)
        try:
            result = _dtsim.run(compiled, scalars, arrays, c["sanitize"], int(c["threads"]), c["order"], bool(c["keep_going"]),
                                list(c["break_if"]), list(c["break_at"]), list(c["print_if"]), c["backend"], device,
                                slack=slack if c["view_bounds"] == "warn" else {}, **extras)
        finally:
            for name, orig, copy in converted:  # the copies of non-native or unaligned arrays go back
                if name in compiled.outputs:
                    orig[...] = copy
        _print_warnings(result)
        if c["view_bounds"] == "span":
            from .triton_launch import note_storage_past_views
            note_storage_past_views(result["findings"], slack)
        _check_result(compiled, result, extras)
        return compiled


def jit(fn=None, **options):
    """@dtsim.jit / @triton.jit (also with arguments: @triton.jit(debug=True))."""
    if fn is None:
        return lambda f: JITFunction(f, **options)
    return JITFunction(fn, **options)


def _base(kernel):
    while not isinstance(kernel, JITFunction):
        kernel = kernel.fn
    return kernel


class Config:
    """triton.Config: constexpr values and launch options of one autotuning candidate."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None, **rest):
        self.kwargs = dict(kwargs)
        self.num_warps, self.num_stages, self.num_ctas, self.maxnreg, self.pre_hook = num_warps, num_stages, num_ctas, maxnreg, pre_hook

    def all_kwargs(self):
        out = dict(self.kwargs)
        out.update(num_warps=self.num_warps, num_stages=self.num_stages)
        return out

    def __repr__(self):
        return "Config(%r, num_warps=%d, num_stages=%d)" % (self.kwargs, self.num_warps, self.num_stages)


def _agree(a, b):
    import numpy as np
    if a.dtype == _bf16():  # the bits as float32
        a, b = ((x.view(np.uint16).astype(np.uint32) << 16).view(np.float32) for x in (a, b))
    if a.dtype.kind == "f":
        return np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-4, atol=1e-5, equal_nan=True)
    return np.array_equal(a, b)


class Autotuner(KernelInterface):
    """triton.autotune: runs the first config; with DTSIM_AUTOTUNE=all runs every config on the same
    inputs and raises AssertionError when their outputs disagree (the first config's stay)."""

    def __init__(self, fn, configs, key=(), reset_to_zero=None, restore_value=None, **rest):
        self.fn = fn
        self.configs = list(configs) or [Config({})]
        self.key = key
        self.reset_to_zero = list(reset_to_zero or [])
        self.__name__ = getattr(fn, "__name__", "kernel")

    def warmup(self, *args, grid, **kwargs):
        kw = dict(kwargs)
        kw.update(self.configs[0].all_kwargs())
        return self.fn.warmup(*args, grid=grid, **kw)

    def _launch(self, cfg, args, grid, kwargs):
        kw = dict(kwargs)
        kw.update(cfg.all_kwargs())
        if self.reset_to_zero:
            values, _ = _base(self).bind(args, dict(kw), partial=True)
            for n in self.reset_to_zero:
                arr = _as_array(values[n], n)
                if arr is not None:
                    arr[...] = 0
                elif hasattr(values[n], "zero_"):  # a CUDA tensor
                    values[n].zero_()
        if cfg.pre_hook:
            cfg.pre_hook(_base(self).bind(args, dict(kw), partial=True)[0])
        return self.fn.run(*args, grid=grid, **kw)

    def run(self, *args, grid, **kwargs):
        mode = _config["autotune"] or os.environ.get("DTSIM_AUTOTUNE") or "first"
        if mode != "all" or len(self.configs) == 1:
            return self._launch(self.configs[0], args, grid, kwargs)
        values, _ = _base(self).bind(args, dict(kwargs, **self.configs[0].all_kwargs()), partial=True)
        if any(_as_array(v, n) is None and _device_array(v, n) is not None for n, v in values.items()):
            raise TypeError("DTSIM_AUTOTUNE=all compares the configs' outputs on host arrays; pass CPU tensors or numpy arrays")
        arrays = {n: a for n, a in ((n, _as_array(v, n)) for n, v in values.items()) if a is not None}
        before = {n: a.copy() for n, a in arrays.items()}
        results = []
        for cfg in self.configs:
            for n, a in arrays.items():
                a[...] = before[n]
            compiled = self._launch(cfg, args, grid, kwargs)
            results.append((cfg, compiled, {n: arrays[n].copy() for n in compiled.outputs}))
        first_cfg, first_compiled, first = results[0]
        for cfg, _, got in results[1:]:
            for n, a in first.items():
                if n in got and not _agree(a, got[n]):
                    raise AssertionError("autotune configs disagree on '%s': %r and %r" % (n, first_cfg, cfg))
        for n, a in arrays.items():
            a[...] = first.get(n, before[n])
        return first_compiled


def autotune(configs, key=(), prune_configs_by=None, reset_to_zero=None, restore_value=None, **rest):
    return lambda fn: Autotuner(fn, configs, key, reset_to_zero, restore_value)


class Heuristics(KernelInterface):
    """triton.heuristics: each value is a function of the arguments (a dict) giving a constexpr."""

    def __init__(self, fn, values):
        self.fn, self.values = fn, dict(values)
        self.__name__ = getattr(fn, "__name__", "kernel")

    def _kwargs(self, args, kwargs):
        meta, opts = _base(self).bind(args, dict(kwargs), partial=True)
        meta.update(opts)
        kw = dict(kwargs)
        for name, f in self.values.items():
            kw[name] = f(meta)
            meta[name] = kw[name]
        return kw

    def warmup(self, *args, grid, **kwargs):
        return self.fn.warmup(*args, grid=grid, **self._kwargs(args, kwargs))

    def run(self, *args, grid, **kwargs):
        return self.fn.run(*args, grid=grid, **self._kwargs(args, kwargs))


def heuristics(values):
    return lambda fn: Heuristics(fn, values)
