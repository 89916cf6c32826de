"""A helper module whose names host code binds at import (as projects pick libdevice functions by
the installed Triton's version); read by tests/ttir/host_chosen.py."""
import triton
import triton.language as tl


def _pick_exp():
    try:
        from triton.language.extra.cuda.libdevice import fast_expf as f
    except ModuleNotFoundError:
        from triton.language.extra.libdevice import fast_expf as f
    return f


def _pick_log(version):
    return tl.log if version else tl.log2


fast_exp = _pick_exp()
natural_log = _pick_log(triton.__version__)
