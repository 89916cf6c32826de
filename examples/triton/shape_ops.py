"""Triton's shape ops on one tile: tl.gather, tl.histogram, tl.cat, tl.join / tl.interleave and a
rank-3 tl.permute (checked against plain Python by tests/pyfront/run_kernel.py)."""
import triton
import triton.language as tl


@triton.jit
def shape_ops(x_ptr, idx_ptr, g_ptr, h_ptr, c_ptr, il_ptr, j_ptr, p_ptr, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    i = tl.load(idx_ptr + offs)
    tl.store(g_ptr + offs, tl.gather(x, i, 0))  # x[i]
    tl.store(h_ptr + tl.arange(0, BINS), tl.histogram(i % BINS, BINS))
    tl.store(c_ptr + tl.arange(0, 2 * N), tl.cat(x, x * 2.0, can_reorder=True))
    tl.store(il_ptr + tl.arange(0, 2 * N), tl.interleave(x, x + 1.0))
    pair = tl.join(x, -x)  # [N, 2]
    tl.store(j_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], pair)
    y = tl.reshape(x, (2, 4, N // 8))
    tl.store(p_ptr + offs, tl.reshape(tl.permute(y, (2, 0, 1)), (N,)))
