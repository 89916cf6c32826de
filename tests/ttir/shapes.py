"""tl.gather, tl.histogram, tl.cat, tl.interleave, tl.join of one value with itself and tl.permute
of a rank-3 tile, read through
the installed Triton's frontend (TTIR) and run on dtsim, each checked against numpy; a gather index
outside the gathered axis is a located finding. Run with `python -m dtsim shapes.py` where Triton is
installed."""

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import check, finish, report


@triton.jit
def gathers(x_ptr, i_ptr, j_ptr, o1_ptr, o0_ptr, R: tl.constexpr, C: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, R)
    x = tl.load(x_ptr + rows[:, None] * C + tl.arange(0, C)[None, :])
    i = tl.load(i_ptr + rows[:, None] * K + tl.arange(0, K)[None, :])
    tl.store(o1_ptr + rows[:, None] * K + tl.arange(0, K)[None, :], tl.gather(x, i, axis=1))
    j = tl.load(j_ptr + tl.arange(0, K)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(o0_ptr + tl.arange(0, K)[:, None] * C + tl.arange(0, C)[None, :], tl.gather(x, j, axis=0))


@triton.jit
def histograms(x_ptr, h_ptr, hm_ptr, N: tl.constexpr, B: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(h_ptr + tl.arange(0, B), tl.histogram(x, B))
    tl.store(hm_ptr + tl.arange(0, B), tl.histogram(x, B, mask=(tl.arange(0, N) % 3) != 0))


@triton.jit
def cats(a_ptr, b_ptr, c_ptr, m_ptr, il_ptr, jj_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(c_ptr + tl.arange(0, 2 * N), tl.cat(a, b, can_reorder=True))
    tl.store(m_ptr + tl.arange(0, 4 * N), tl.cat(tl.cat(a, a * 2, can_reorder=True), tl.cat(b, b, can_reorder=True), can_reorder=True))
    tl.store(il_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    tl.store(jj_ptr + tl.arange(0, 2 * N), tl.reshape(tl.join(a + 1, a + 1), (2 * N,)))


@triton.jit
def permutes(x_ptr, o_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, A * B * C)
    x = tl.reshape(tl.load(x_ptr + offs), (A, B, C))
    tl.store(o_ptr + offs, tl.reshape(tl.permute(x, (2, 0, 1)), (A * B * C,)))


def main():
    rng = np.random.default_rng(3)
    R, C, K = 8, 16, 4
    x = rng.standard_normal((R, C)).astype(np.float16)
    i = rng.integers(0, C, (R, K)).astype(np.int32)
    j = rng.integers(0, R, (K, C)).astype(np.int32)
    o1 = np.zeros((R, K), np.float16)
    o0 = np.zeros((K, C), np.float16)
    gathers[(1,)](x, i, j, o1, o0, R=R, C=C, K=K)
    check("tl.gather axis=1 (f16)", o1, np.take_along_axis(x, i, axis=1))
    check("tl.gather axis=0 (f16)", o0, np.take_along_axis(x, j, axis=0))

    bad = i.copy()
    bad[2, 1] = C
    try:
        gathers[(1,)](x, bad, j, o1, o0, R=R, C=C, K=K)
        report("tl.gather out of range", False, "(no finding)")
    except dtsim.KernelError as e:
        line = next(n for n, l in enumerate(open(__file__), 1) if "tl.gather(x, i, axis=1)" in l)
        report("tl.gather out of range", "shapes.py:%d:" % line in str(e) and "outside [0, 16)" in str(e), str(e).splitlines()[0])

    N, B = 64, 8
    xs = rng.integers(-2, B + 2, N).astype(np.int32)
    h = np.zeros(B, np.int32)
    hm = np.zeros(B, np.int32)
    histograms[(1,)](xs, h, hm, N=N, B=B)
    check("tl.histogram (out of range dropped)", h, np.bincount(xs[(xs >= 0) & (xs < B)], minlength=B).astype(np.int32))
    keep = (np.arange(N) % 3 != 0) & (xs >= 0) & (xs < B)
    check("tl.histogram with a mask", hm, np.bincount(xs[keep], minlength=B).astype(np.int32))

    N = 16
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    c = np.zeros(2 * N, np.float32)
    m = np.zeros(4 * N, np.float32)
    il = np.zeros(2 * N, np.float32)
    jj = np.zeros(2 * N, np.float32)
    cats[(1,)](a, b, c, m, il, jj, N=N)
    check("tl.cat (1-D)", c, np.concatenate([a, b]))
    check("tl.cat of cats", m, np.concatenate([a, a * 2, b, b]))
    check("tl.interleave", il, np.stack([a, b], axis=-1).ravel())
    check("tl.join of a value with itself", jj, np.repeat(a + 1, 2))

    x3 = rng.standard_normal(2 * 4 * 8).astype(np.float32)
    o3 = np.zeros_like(x3)
    permutes[(1,)](x3, o3, A=2, B=4, C=8)
    check("tl.permute of a rank-3 tile", o3, np.transpose(x3.reshape(2, 4, 8), (2, 0, 1)).ravel())

    finish("all shape ops match")


main()
