# Runs a script (under python -m dtsim) with every @triton.jit launch given enable_fp_fusion=False:
# the same-machine baseline without fp fusion. usage: python -m dtsim --backend=cuda bench/no_fp_fusion.py SCRIPT [ARGS...]
import runpy
import sys
from triton.runtime import jit as _jit

_orig = _jit.JITFunction.run


def _run(self, *args, grid, warmup, **kwargs):
    kwargs["enable_fp_fusion"] = False
    return _orig(self, *args, grid=grid, warmup=warmup, **kwargs)


_jit.JITFunction.run = _run
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
