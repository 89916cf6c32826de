"""Module-level names that host code binds to Triton functions (`exp = pick_exp()`, in a helper
module the kernel imports from). Triton's frontend reads the values Python computed; dtsim's own
reader cannot run host code, so the Python package tells it what each such name holds. The kernel
uses a block pointer, so under Triton 3.9 it goes through the own reader too (as under the stand-in)."""
import sys

import numpy as np
import triton
import triton.language as tl

from host_chosen_helper import fast_exp, natural_log


@triton.jit
def exp_log(x, y, n, BLOCK: tl.constexpr):
    xp = tl.make_block_ptr(x, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    v = tl.load(xp, boundary_check=(0,), padding_option="zero")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, fast_exp(v) + natural_log(v + 1.0), mask=offs < n)


x = np.linspace(0, 3, 50).astype(np.float32)
y = np.zeros(50, np.float32)
exp_log[(4,)](x, y, 50, BLOCK=16)
want = np.exp(x) + np.log(x + np.float32(1))
if not np.allclose(y, want, rtol=2e-6):
    sys.exit("host_chosen: max error %g" % np.abs(y - want).max())
print("host_chosen: names bound by host code (a libdevice function, tl.log) read as Python bound them")
