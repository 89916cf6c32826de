"""Reductions and scans of two operands with a combine function (tl.reduce((a, b), axis, fn),
tl.associative_scan((a, b), axis, fn)), of three (a Welford mean/variance, a max with its first
index and count, a running (sum, count, max)) and of a pair with a 64-bit payload, read through
the installed Triton's frontend (TTIR) and run on dtsim, each checked against numpy. Run with `python -m dtsim tuples.py` where Triton is
installed."""

import numpy as np
import triton
import triton.language as tl
from ttir_check import check, finish, report


@triton.jit
def max_with_payload(v1, p1, v2, p2):
    # the larger value and its payload; ties keep the larger payload
    take2 = (v2 > v1) | ((v2 == v1) & (p2 > p1))
    return tl.where(take2, v2, v1), tl.where(take2, p2, p1)


@triton.jit
def segmented_add(v1, f1, v2, f2):
    # a sum that restarts where the flag is set
    return tl.where(f2 != 0, v2, v1 + v2), f1 | f2


@triton.jit
def reduces(x_ptr, p_ptr, vmax_ptr, pmax_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
    p = tl.load(p_ptr + rows[:, None] * C + cols[None, :])
    v, q = tl.reduce((x, p), 1, max_with_payload)
    tl.store(vmax_ptr + rows, v)
    tl.store(pmax_ptr + rows, q)


@triton.jit
def scans(x_ptr, f_ptr, s_ptr, g_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    f = tl.load(f_ptr + offs)
    s, g = tl.associative_scan((x, f), 0, segmented_add)
    tl.store(s_ptr + offs, s)
    tl.store(g_ptr + offs, g)


@triton.jit
def welford_combine(m1, s1, w1, m2, s2, w2):  # mean, sum of squared deviations, weight
    w = w1 + w2
    d = m2 - m1
    f = tl.where(w == 0.0, 0.0, w2 / w)
    return m1 + d * f, s1 + s2 + d * d * w1 * f, w


@triton.jit
def max_first_count(v1, i1, c1, v2, i2, c2):  # the maximum, its first index, how often it occurs
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    c = tl.where(v1 == v2, c1 + c2, tl.where(v2 > v1, c2, c1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1), c


@triton.jit
def max_i64_payload(v1, p1, v2, p2):
    take2 = v2 > v1
    return tl.where(take2, v2, v1), tl.where(take2, p2, p1)


@triton.jit
def sum_count_max(s1, n1, m1, s2, n2, m2):
    return s1 + s2, n1 + n2, tl.maximum(m1, m2)


@triton.jit
def triples(x_ptr, k_ptr, mean_ptr, var_ptr, mx_ptr, ix_ptr, cnt_ptr, pv_ptr, pp_ptr, cs_ptr, cn_ptr, cm_ptr,
            R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    offs = rows[:, None] * C + cols[None, :]
    x = tl.load(x_ptr + offs)
    mean, m2, w = tl.reduce((x, tl.zeros_like(x), tl.full(x.shape, 1.0, tl.float32)), 1, welford_combine)
    tl.store(mean_ptr + rows, mean)
    tl.store(var_ptr + rows, m2 / w)
    k = tl.load(k_ptr + offs)
    idx = tl.broadcast_to(cols[None, :], (R, C))
    mx, ix, cnt = tl.reduce((k, idx, tl.full((R, C), 1, tl.int32)), 1, max_first_count)
    tl.store(mx_ptr + rows, mx)
    tl.store(ix_ptr + rows, ix)
    tl.store(cnt_ptr + rows, cnt)
    big = offs.to(tl.int64) * 4294967296 + 7  # a payload beyond 32 bits: not packed in a pair
    pv, pp = tl.reduce((x, big), 1, max_i64_payload)
    tl.store(pv_ptr + rows, pv)
    tl.store(pp_ptr + rows, pp)
    s, n, m = tl.associative_scan((k, tl.full((R, C), 1, tl.int32), k), 1, sum_count_max)
    tl.store(cs_ptr + offs, s)
    tl.store(cn_ptr + offs, n)
    tl.store(cm_ptr + offs, m)


def main():
    rng = np.random.default_rng(5)
    R, C = 4, 32
    x = rng.standard_normal((R, C)).astype(np.float32)
    k = rng.integers(-5, 5, (R, C)).astype(np.int32)
    outs = [np.zeros(R, np.float32), np.zeros(R, np.float32), np.zeros(R, np.int32), np.zeros(R, np.int32), np.zeros(R, np.int32),
            np.zeros(R, np.float32), np.zeros(R, np.int64), np.zeros((R, C), np.int32), np.zeros((R, C), np.int32), np.zeros((R, C), np.int32)]
    triples[(1,)](x, k, *outs, R=R, C=C)
    mean, var, mx, ix, cnt, pv, pp, cs, cn, cm = outs
    x64 = x.astype(np.float64)
    report("tl.reduce of three (Welford mean, variance)", np.allclose(mean, x64.mean(1), atol=1e-6) and np.allclose(var, x64.var(1), rtol=1e-5))
    check("tl.reduce of three: the maximum", mx, k.max(1))
    check("tl.reduce of three: its first index", ix, k.argmax(1).astype(np.int32))
    check("tl.reduce of three: its count", cnt, (k == k.max(1)[:, None]).sum(1).astype(np.int32))
    check("tl.reduce of (f32, i64) pairs: the maximum", pv, x.max(1))
    check("tl.reduce of (f32, i64) pairs: its payload", pp,
          (np.arange(R) * C + x.argmax(1)).astype(np.int64) * 4294967296 + 7)
    check("tl.associative_scan of three: sums", cs, np.cumsum(k, 1).astype(np.int32))
    check("tl.associative_scan of three: counts", cn, np.cumsum(np.ones_like(k), 1).astype(np.int32))
    check("tl.associative_scan of three: maxima", cm, np.maximum.accumulate(k, 1))

    R, C = 8, 32
    x = rng.integers(-4, 4, (R, C)).astype(np.float16)
    p = rng.integers(0, 1000, (R, C)).astype(np.int32)
    vmax = np.zeros(R, np.float16)
    pmax = np.zeros(R, np.int32)
    reduces[(1,)](x, p, vmax, pmax, R=R, C=C)
    want_v = x.max(axis=1)
    want_p = np.array([p[r][x[r] == want_v[r]].max() for r in range(R)], np.int32)
    check("tl.reduce of (f16, i32) pairs", vmax, want_v)
    check("tl.reduce: the payload of the maximum", pmax, want_p)

    N = 64
    xs = rng.standard_normal(N).astype(np.float32)
    fl = (rng.random(N) < 0.2).astype(np.int32)
    s = np.zeros(N, np.float32)
    g = np.zeros(N, np.int32)
    scans[(1,)](xs, fl, s, g, N=N)
    want_s = np.zeros(N, np.float32)
    acc = np.float32(0)
    for i in range(N):
        acc = xs[i] if (fl[i] or i == 0) else np.float32(acc + xs[i])
        want_s[i] = acc
    check("tl.associative_scan of (f32, i32) pairs", s, want_s)
    check("tl.associative_scan: the flags' or", g, np.maximum.accumulate(fl).astype(np.int32))

    finish("all tuple combines match")


main()
