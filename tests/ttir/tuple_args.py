"""Tuple arguments (Triton 3's tuples of tensors and numbers as one kernel parameter): each member is a
parameter of its own in the kernel's TTIR (`bufs.0`, `bufs.1`, ..., nested `pair.1.0`); a member indexed
with a compile-time index under tl.static_range, a number in a tuple, and a nested tuple, checked against
numpy."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def add_each(bufs, scale_and_more, N: tl.constexpr, WORLD: tl.constexpr):
    o = tl.arange(0, N)
    scale = scale_and_more[0]
    for peer in tl.static_range(WORLD):
        p = bufs[peer]
        tl.store(p + o, tl.load(p + o) * scale + peer)
    q = scale_and_more[1][0]
    tl.store(q + o, tl.load(q + o) + scale_and_more[1][1])


N, W = 16, 3
bufs = tuple(np.full(N, float(i + 1), np.float32) for i in range(W))
extra = np.arange(N, dtype=np.float32)
add_each[(1,)](bufs, (2.0, (extra, 5)), N=N, WORLD=W)
for i, b in enumerate(bufs):
    if not np.array_equal(b, np.full(N, (i + 1) * 2.0 + i, np.float32)):
        sys.exit("tuple member %d: %s" % (i, b[:4]))
if not np.array_equal(extra, np.arange(N, dtype=np.float32) + 5):
    sys.exit("nested tuple member: %s" % extra[:4])
print("tuple arguments: %d tensors indexed under static_range, a number and a nested tuple" % W)
