"""Constructs met in serving engines' Triton kernels, each in a small kernel of its own, checked
against numpy through Triton's TTIR (python -m dtsim with Triton installed): a tensor descriptor's
row gather and scatter (`desc.gather(rows, y)`, `desc.scatter(v, rows, y)`: tt.descriptor_gather /
tt.descriptor_scatter, as vLLM's fused MoE kernel gathers its tokens' rows), rows and columns outside
the descriptor's shape reading 0 and left unwritten."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def gather_scatter(a_ptr, idx_ptr, out_ptr, M, K, y, BR: tl.constexpr, BK: tl.constexpr):
    """out[i, :] = a[idx[i], y:y+BK]; then a[idx[i], y+BK:y+2BK] = 2 * out[i, :] (instance 0 only)."""
    d = tl.make_tensor_descriptor(a_ptr, shape=(M, K), strides=(K, 1), block_shape=(1, BK))
    rows = tl.load(idx_ptr + tl.arange(0, BR))
    v = d.gather(rows, y)
    tl.store(out_ptr + tl.arange(0, BR)[:, None] * BK + tl.arange(0, BK)[None, :], v)
    d.scatter(v * 2, rows, y + BK)


triton.set_allocator(lambda size, align, stream: np.empty(size, np.int8))
M, K, BR, BK = 10, 40, 8, 16
a = np.arange(M * K, dtype=np.float32).reshape(M, K) / 7
idx = np.array([3, 0, 9, 12, 3, -1, 5, 7], dtype=np.int32)  # rows 12 and -1 are outside the descriptor
for y in (4, 20):  # at 20 the scatter's columns 36..51 run past K = 40
    a_run = a.copy()
    out = np.full((BR, BK), -5, dtype=np.float32)
    gather_scatter[(1,)](a_run, idx, out, M, K, y, BR=BR, BK=BK)
    want = np.zeros((BR, BK), np.float32)
    want_a = a.copy()
    for i, r in enumerate(idx):
        cols = np.arange(y, y + BK)
        if 0 <= r < M:
            ok = cols < K
            want[i, ok] = a[r, cols[ok]]
            sc = np.arange(y + BK, y + 2 * BK)
            want_a[r, sc[sc < K]] = 2 * want[i, :][sc < K]
    if not np.array_equal(out, want):
        sys.exit("descriptor gather at y=%d: got\n%s\nwant\n%s" % (y, out, want))
    if not np.array_equal(a_run, want_a):
        sys.exit("descriptor scatter at y=%d: the array differs at %s" % (y, np.argwhere(a_run != want_a)[:4]))
print("descriptor gather and scatter: match numpy (rows and columns outside the shape read 0, not written)")
