"""`python -m dtsim` and the start-up hook: where Triton is installed, Triton's own host package stays
and every @triton.jit launch runs on dtsim (dtsim.triton_launch); without Triton (or with
DTSIM_STANDIN=1), `import triton` and `import triton.language as tl` resolve to dtsim's stand-in
modules. The guide's `triton_util` is provided where no such module exists."""
import importlib.util
import os
import sys


def install():
    import dtsim
    from dtsim import triton_launch
    if os.environ.get("DTSIM_STANDIN") != "1" and triton_launch.triton_available():
        triton_launch.install()
    else:
        install_standin()
    if "triton_util" not in sys.modules and importlib.util.find_spec("triton_util") is None:
        import dtsim.triton_util
        sys.modules["triton_util"] = dtsim.triton_util
    return dtsim


def install_standin():
    import dtsim
    import dtsim.language
    import dtsim.triton
    sys.modules["triton"] = dtsim.triton
    sys.modules["triton.language"] = dtsim.language
    sys.modules["triton.language.math"] = dtsim.language
    dtsim.triton.language = dtsim.language
    dtsim.triton.install_modules()
