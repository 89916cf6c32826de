"""Makes `import triton` and `import triton.language as tl` resolve to dtsim's modules (and the
guide's `triton_util` where no such module exists), whether or not Triton is installed."""
import importlib.util
import sys


def install():
    import dtsim
    import dtsim.language
    import dtsim.triton
    sys.modules["triton"] = dtsim.triton
    sys.modules["triton.language"] = dtsim.language
    sys.modules["triton.language.math"] = dtsim.language
    dtsim.triton.language = dtsim.language
    if "triton_util" not in sys.modules and importlib.util.find_spec("triton_util") is None:
        import dtsim.triton_util
        sys.modules["triton_util"] = dtsim.triton_util
