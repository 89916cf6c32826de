"""Reductions and scans of two operands with a combine function (tl.reduce((a, b), axis, fn),
tl.associative_scan((a, b), axis, fn)), read through the installed Triton's frontend (TTIR) and run
on dtsim, each checked against numpy. Run with `python -m dtsim tuples.py` where Triton is
installed."""
import sys

import numpy as np
import triton
import triton.language as tl

failures = []


def check(name, got, want):
    ok = got.shape == want.shape and np.array_equal(got, want)
    print("%-40s %s" % (name, "ok" if ok else "FAILED"))
    if not ok:
        print("  got ", got.ravel()[:16], "\n  want", want.ravel()[:16])
        failures.append(name)


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


def main():
    rng = np.random.default_rng(5)
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

    if failures:
        print("FAILED:", ", ".join(failures))
        sys.exit(1)
    print("all tuple combines match")


main()
