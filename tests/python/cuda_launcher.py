# backend='cuda' launches of @triton.jit kernels on torch CUDA tensors through the launcher kept per
# launch signature: repeated launches with other tensors (other addresses) and other scalar values
# give what the interpreter gives on host copies; a launch goes on torch's current stream (a side
# stream's work is ordered after what that stream did before, without a synchronize between) and
# works from another thread; with the sanitizer on, a kernel's failed bounds check still comes back
# from such a launch as KernelError.
# Exits 77 (skip) without a usable GPU or without torch with CUDA.
import sys
import threading

import numpy as np
import triton
import triton.language as tl
import dtsim
from dtsim import _dtsim

ok, why = _dtsim.cuda_available()
if not ok:
    print("%s: skipped" % why)
    sys.exit(77)
try:
    import torch
    if not torch.cuda.is_available():
        raise ImportError
except ImportError:
    print("torch with CUDA is not installed: skipped")
    sys.exit(77)


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def shifted(x_ptr, out_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs + shift))


def on_interp(fn, grid, *args, **kw):
    """The kernel on dtsim's interpreter over host copies; the outputs as numpy arrays."""
    dtsim.config(backend="interp")
    host = [a.cpu().numpy().copy() if isinstance(a, torch.Tensor) else a for a in args]
    fn[grid](*host, **kw)
    dtsim.config(backend="cuda")
    return host


n, B = 3000, 512
grid = (triton.cdiv(n, B),)
dtsim.config(backend="cuda", sanitize="none")
g = torch.Generator().manual_seed(3)
for rep in range(4):  # other tensors every time, and a scalar that changes every other launch
    x, y = (torch.randn(n, generator=g).cuda() for _ in range(2))
    out = torch.full((n,), 7.0, device="cuda")
    a = 0.5 if rep % 2 else 2.0
    kernel = axpy[grid](x, y, out, n, a, BLOCK=B)
    want = on_interp(axpy, grid, x, y, out, n, a, BLOCK=B)[2]
    assert np.array_equal(out.cpu().numpy(), want), (rep, np.abs(out.cpu().numpy() - want).max())
# one launcher per scalar value of `a`: on the launch's compiled kernel under the installed Triton, on
# the kernel itself under dtsim's stand-in (DTSIM_STANDIN=1)
launchers = getattr(kernel, "launchers", None)
if launchers is None:
    launchers = axpy.launchers
assert len(launchers) == 2, len(launchers)
print("repeated launches, other addresses and scalars: match the interpreter (%d launchers)" % len(launchers))

# Stream order: the side stream fills x, the kernel on that stream reads it, nothing synchronizes between.
s = torch.cuda.Stream()
x = torch.zeros(n, device="cuda")
y = torch.ones(n, device="cuda")
out = torch.zeros(n, device="cuda")
torch.cuda.synchronize()
with torch.cuda.stream(s):
    big = torch.ones(1 << 24, device="cuda")
    for _ in range(20):  # keeps the stream busy for a while before x is written
        big.mul_(1.0001)
    x.fill_(3.0)
    axpy[grid](x, y, out, n, 2.0, BLOCK=B)
s.synchronize()
assert torch.all(out == 7.0).item(), out[:4]
print("launch on torch's current stream: ordered after the stream's earlier work")

# The same launcher, with the same addresses, from a thread that has done no CUDA work (its CUDA
# context is not current until the launch makes it so).
got = {}
out.zero_()
torch.cuda.synchronize()


def in_thread():
    try:
        axpy[grid](x, y, out, n, 2.0, BLOCK=B)
    except Exception as e:  # reported by the main thread
        got["error"] = e


t = threading.Thread(target=in_thread)
t.start()
t.join()
torch.cuda.synchronize()
assert "error" not in got, got.get("error")
assert torch.all(out == 7.0).item(), out[:4]
print("a launch from another thread: ok")

# With the sanitizer on, the launch synchronizes and reads the kernel's checks.
dtsim.config(sanitize="bounds")
src = torch.arange(64, dtype=torch.float32, device="cuda")
dst = torch.zeros(64, device="cuda")
shifted[(1,)](src, dst, 0, BLOCK=64)
assert torch.equal(dst, src)
for attempt in range(2):  # the first launch makes the launcher, the second reuses it
    try:
        shifted[(1,)](src, dst, 8, BLOCK=64)
    except dtsim.KernelError as e:
        assert "out-of-bounds" in str(e) or "out of bounds" in str(e), str(e)
    else:
        raise AssertionError("an out-of-bounds load was not reported (attempt %d)" % attempt)
print("bounds checks through the launcher: reported on every launch")
