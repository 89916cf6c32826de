# dtsim.config(backend='cuda') on a machine without a usable GPU: the launch raises dtsim.BackendError
# naming the reason ("no CUDA driver found", "no GPU", or a build without the backend) and leaves the
# arrays alone; the debugger options are refused with the CUDA backend. Exits 77 (skip) where the
# CUDA backend can run (python/gpu_cuda_backend covers that).
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim
from dtsim import _dtsim

ok, why = _dtsim.cuda_available()
if ok:
    print("a GPU is usable: skipped")
    sys.exit(77)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


x = np.arange(100, dtype=np.float32)
out = np.full(100, -1.0, np.float32)
assert dtsim.config(backend="cuda")["backend"] == "cuda"
try:
    add_kernel[(1,)](x, x, out, 100, BLOCK=128)
    sys.exit("the launch on backend='cuda' did not fail without a GPU")
except dtsim.BackendError as e:
    print(e)
    assert str(e).startswith(why), (str(e), why)
    assert "backend='cuda'" in str(e), str(e)
    if "built without" not in why:
        assert why.startswith("no CUDA driver found") or why.startswith("no GPU"), why
assert (out == -1).all(), out


class FakeGpuMemory:  # never dereferenced: the launch stops before the GPU
    __cuda_array_interface__ = {"shape": (100,), "typestr": "<f4", "data": (1 << 32, False), "version": 3}


try:
    add_kernel[(1,)](x, FakeGpuMemory(), out, 100, BLOCK=128)
    sys.exit("a launch with GPU memory on backend='cuda' did not fail without a GPU")
except dtsim.BackendError as e:
    assert str(e).startswith(why), (str(e), why)

dtsim.config(break_if="pid0==0")
try:
    add_kernel[(1,)](x, x, out, 100, BLOCK=128)
    sys.exit("break_if with backend='cuda' was not refused")
except dtsim.CompileError as e:
    print(e)
    assert "runs on the interpreter" in str(e), str(e)

dtsim.config(backend="interp", break_if=None)
add_kernel[(1,)](x, x, out, 100, BLOCK=128)
assert np.array_equal(out, 2 * x)
try:
    dtsim.config(backend="rocm")
    sys.exit("an unknown backend was accepted")
except ValueError as e:
    print(e)
print("backend='cuda' without a GPU: BackendError")
