# A kernel outside dtsim's Triton subset: the launch raises dtsim.CompileError with the frontend's
# located message (file:line:col, source line, caret). Exits 0 when it does.
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def count_k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.atomic_load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + tl.arange(0, 16), h)


x = np.zeros(10, dtype=np.int32)
try:
    count_k[(1,)](x, 10, BLOCK=16)
except dtsim.CompileError as e:
    print(e)
    line = next(i for i, l in enumerate(open(__file__), 1) if "h = tl.atomic_load(" in l)
    assert "compile_error.py:%d:" % line in str(e) and "tl.atomic_load is not supported yet" in str(e), str(e)
    sys.exit(0)
sys.exit("no CompileError")
