# dtsim.config(backend='cuda') on a GPU: the same launches as on the interpreter give the same
# outputs (numpy arrays copied to the GPU and back, in place), a planted out-of-bounds load is
# reported by the GPU's bounds checks with the interpreter's line and pid, and the guide's host code
# (guide_examples.py) passes on the GPU. Exits 77 (skip) without a usable GPU.
import os
import runpy
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim
from dtsim import _dtsim

ok, why = _dtsim.cuda_available()
if not ok:
    print("%s: skipped" % why)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def row_softmax(x_ptr, y_ptr, stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr):
    pid = tl.program_id(0)
    mask = pid * bs + tl.arange(0, bs) < n
    offs = pid * n + tl.arange(0, bs)
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)


def on(backend, fn):
    dtsim.config(backend=backend)
    try:
        return fn()
    finally:
        dtsim.config(backend="interp")


rng = np.random.default_rng(1)
x, y = rng.standard_normal(5000, dtype=np.float32), rng.standard_normal(5000, dtype=np.float32)


def add(n):
    out = np.full(5000, 7.0, np.float32)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


for n in (5000, 3000):  # a new runtime scalar: a second runner of the same compiled kernel
    a, b = on("interp", lambda: add(n)), on("cuda", lambda: add(n))
    assert np.array_equal(a, b), (n, np.abs(a - b).max())
    assert (b[n:] == 7).all()
print("add: the GPU matches the interpreter")

xs = rng.uniform(-3, 3, (33, 100)).astype(np.float32)


def softmax():
    ys = np.empty_like(xs)
    row_softmax[(33,)](xs, ys, 100, 100, BLOCK=128)
    return ys


a, b = on("interp", softmax), on("cuda", softmax)
assert np.allclose(a, b, rtol=1e-5, atol=1e-6), np.abs(a - b).max()
print("softmax: the GPU matches the interpreter (max abs diff %.3g)" % np.abs(a - b).max())

found = {}
for backend in ("interp", "cuda"):
    try:
        on(backend, lambda: copy_k[(3,)](np.arange(12, dtype=np.float32), np.zeros(12, np.float32), 12, 4))
        sys.exit("%s: the planted out-of-bounds load was not reported" % backend)
    except dtsim.KernelError as e:
        print(e)
        found[backend] = (e.kind, e.line, e.pid, e.buffer)
assert found["cuda"] == found["interp"], found
print("planted bug: the GPU reports", found["cuda"])

dtsim.config(backend="cuda")
runpy.run_path(os.path.join(HERE, "guide_examples.py"), run_name="__main__")
print("guide examples on the GPU: ok")
