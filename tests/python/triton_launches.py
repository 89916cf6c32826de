# dtsim.triton_launch.triton_launches(): inside the block, @triton.jit launches take the installed
# Triton's own launch path (bench/attention_vs_triton.py --alternate times both in one process);
# outside it, and after an exception inside it, they run on dtsim again.
import numpy as np
import triton
import triton.language as tl
from triton.runtime import jit as _jit

from dtsim.triton_launch import triton_launches


@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


dtsim_run = _jit.JITFunction.run
assert getattr(_jit.JITFunction, "_dtsim_installed", False), "run this under python -m dtsim"
assert dtsim_run is not _jit.JITFunction._dtsim_triton_run

x = np.arange(100, dtype=np.float32)
y = np.zeros_like(x)
twice[(4,)](x, y, 100, BLOCK=32)
assert np.array_equal(y, 2 * x), y

with triton_launches():
    assert _jit.JITFunction.run is _jit.JITFunction._dtsim_triton_run
assert _jit.JITFunction.run is dtsim_run

try:
    with triton_launches():
        raise KeyError("inside")
except KeyError:
    pass
assert _jit.JITFunction.run is dtsim_run

y[:] = 0
twice[(4,)](x, y, 100, BLOCK=32)
assert np.array_equal(y, 2 * x), y
print("ok")
