"""`import triton` under dtsim's drop-in (`python -m dtsim script.py`, or DTSIM_TRITON=1 with the
hook in dtsim/sitecustomize.py): the names Triton scripts use on the host, backed by dtsim."""
import dtsim as _d
from dtsim import language  # noqa: F401
from dtsim import Config, autotune, cdiv, heuristics, jit, next_power_of_2  # noqa: F401
from dtsim import JITFunction, KernelError, CompileError  # noqa: F401

__version__ = "dtsim"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError("module 'triton' (dtsim's drop-in) has no attribute '%s'; dtsim provides jit, autotune, heuristics, "
                         "Config, cdiv, next_power_of_2 and triton.language" % name)


_ = _d
