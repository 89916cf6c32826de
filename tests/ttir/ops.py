"""Atomics, scans, bitcasts and math functions read through the installed Triton's frontend (TTIR)
and run on dtsim, each checked against numpy; the sanitizer's rules for atomics (atomics of several
instances on one element are legal, a plain store racing an atomic is a conflict, accesses under a
spin lock are ordered); Python's min() and max() on runtime values. Run with `python -m dtsim ops.py`
where Triton is installed (python/ops_standin runs it through dtsim's own .py reader)."""
import os

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

import dtsim
from ttir_check import check, finish, report


@triton.jit
def histogram_add(x_ptr, bins_ptr, old_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    old = tl.atomic_add(bins_ptr + x % NBINS, 1.0, mask=m)
    tl.store(old_ptr + offs, old, mask=m)


@triton.jit
def counters(cnt_ptr, mx_ptr, mn_ptr, fmx_ptr, fmn_ptr, bits_ptr, x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.atomic_add(cnt_ptr, 1)
    xi = (x * 1000).to(tl.int32)
    tl.atomic_max(mx_ptr + tl.arange(0, BLOCK), xi)
    tl.atomic_min(mn_ptr + tl.arange(0, BLOCK), xi, sem="relaxed", scope="cta")
    tl.atomic_max(fmx_ptr + tl.arange(0, BLOCK), x)  # Triton: integer max/umin on a bitcast pointer
    tl.atomic_min(fmn_ptr + tl.arange(0, BLOCK), x)
    tl.atomic_or(bits_ptr, 1 << pid)
    tl.atomic_xor(bits_ptr + 1, 1 << pid)
    tl.atomic_and(bits_ptr + 2, ~(1 << pid))


@triton.jit
def locked_sum(x_ptr, acc_ptr, lock_ptr, count_ptr, N, BLOCK: tl.constexpr):
    # tutorial 05's pattern: a spin lock around plain loads and stores of a shared row
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    part = tl.load(x_ptr + row * N + cols, mask=m, other=0.0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    count = tl.load(count_ptr)
    if count == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        part += tl.load(acc_ptr + cols, mask=m)
    tl.store(acc_ptr + cols, part, mask=m)
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def racy(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if tl.program_id(0) == 0:
        tl.store(x_ptr + offs, 1.0)
    else:
        tl.atomic_add(x_ptr + offs, 1.0)


@triton.jit
def max_fn(a, b):
    return tl.maximum(a, b)


@triton.jit
def scans(x_ptr, s_ptr, r_ptr, p_ptr, m_ptr, i_ptr, BLOCK: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + rows)
    tl.store(s_ptr + rows, tl.cumsum(x, axis=1))
    tl.store(r_ptr + rows, tl.cumsum(x, axis=0, reverse=True))
    tl.store(p_ptr + rows, tl.cumprod(x, 1))
    tl.store(m_ptr + rows, tl.associative_scan(x, 1, max_fn))
    xi = (x * 10).to(tl.int32)
    tl.store(i_ptr + rows, tl.cumsum(xi, axis=1))


@triton.jit
def keyed_add(x, y):  # a segmented sum: (key << 16) | count, the count restarting at each new key
    kx = x & -65536
    ky = y & -65536
    return tl.where(kx == ky, x + y - kx, y)


@triton.jit
def absmax(a, b):
    return tl.where(tl.abs(a) > tl.abs(b), a, b)


@triton.jit
def combines(k_ptr, seg_ptr, x_ptr, am_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    keys = tl.load(k_ptr + offs)
    tl.store(seg_ptr + offs, tl.associative_scan((keys << 16) | 1, 0, keyed_add) & 0xFFFF)
    x = tl.load(x_ptr + offs)
    tl.store(am_ptr, tl.reduce(x, 0, absmax))


@triton.jit
def sorts(x_ptr, srt_ptr, N: tl.constexpr):  # Triton's bitonic sort: tl.reshape to [2] * log2(N), xor_sum
    offs = tl.arange(0, N)
    tl.store(srt_ptr + offs, tl.sort(tl.load(x_ptr + offs)))


@triton.jit
def maths(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    k = 0
    tl.store(out_ptr + k * BLOCK + offs, tl.erf(x))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, tl.floor(x * 3))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, tl.ceil(x * 3))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, tl.sin(x) + tl.cos(y))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.asin(x * 0.5) + libdevice.acos(y * 0.25))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.atan(x) + libdevice.tan(y * 0.5))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.pow(tl.abs(x) + 0.5, y))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.atan2(x, y + 3.0))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.log1p(tl.abs(x)) + libdevice.expm1(y * 0.5))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.sinh(x) + libdevice.cosh(y * 0.5) + libdevice.cbrt(x))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.trunc(x * 3) + libdevice.rint(y * 3) + libdevice.round(x * 2.5))
    k += 1
    tl.store(out_ptr + k * BLOCK + offs, libdevice.erfc(x) + libdevice.log10(tl.abs(y) + 1.0) + libdevice.hypot(x, y))
    k += 1
    bits = x.to(tl.int32, bitcast=True)
    tl.store(out_ptr + k * BLOCK + offs, ((bits & 0x7FFFFFFF).to(tl.float32, bitcast=True)))


@triton.jit
def int8_dot(a_ptr, b_ptr, c_ptr, o_ptr, p_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    out = m[:, None] * N + n[None, :]
    tl.store(o_ptr + out, tl.dot(a, b))  # i8 x i8 -> i32
    tl.store(p_ptr + out, tl.dot(a, b, tl.load(c_ptr + out), out_dtype=tl.int32))  # with an i32 accumulator (wrapping)


@triton.jit
def udiv64(x_ptr, y_ptr, q_ptr, r_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # uint64
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, x // y)
    tl.store(r_ptr + offs, x % y)
    tl.store(q_ptr + BLOCK + offs, tl.umulhi(x, y))  # the high 64 bits of the product


@triton.jit
def u64_floats(x_ptr, f_ptr, d_ptr, g_ptr, u_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # uint64
    tl.store(f_ptr + offs, x.to(tl.float32))  # uitofp
    tl.store(d_ptr + offs, x.to(tl.float64))
    g = tl.load(g_ptr + offs)  # float64 in [0, 2^64)
    tl.store(u_ptr + offs, g.to(tl.uint64))  # fptoui


@triton.jit
def py_min_max(x_ptr, o_ptr, n, G: tl.constexpr, BLOCK: tl.constexpr):
    # Python's min() and max() on runtime values (tutorial 03's group size), scalars and tiles
    pid = tl.program_id(0)
    group = min(n - pid * G, G)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = max(x, group.to(tl.float32), -2.0)
    tl.store(o_ptr + pid * BLOCK + offs, min(y, 3.0) + max(pid, 1, group))


def main():
    rng = np.random.default_rng(0)

    M, N, K = 32, 16, 64
    a8 = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b8 = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c32 = rng.integers(2**31 - 2**20, 2**31, (M, N)).astype(np.int32)  # near the top: the sums wrap
    o32, p32 = np.zeros((M, N), np.int32), np.zeros((M, N), np.int32)
    int8_dot[(1,)](a8, b8, c32, o32, p32, M=M, N=N, K=K)
    prod = a8.astype(np.int64) @ b8.astype(np.int64)
    check("tl.dot i8 -> i32", o32, prod)
    check("tl.dot i8, i32 acc (wraps)", p32, ((prod + c32 + 2**31) % 2**32 - 2**31))

    if "dtsim" not in triton.__version__:  # dtsim's own reader has no unsigned integers
        xu = np.concatenate([rng.integers(0, 2**64, 60, dtype=np.uint64), np.array([2**64 - 1, 2**63, 5, 2**64 - 1], np.uint64)])
        yu = np.concatenate([rng.integers(1, 2**64, 30, dtype=np.uint64), rng.integers(1, 2**20, 30, dtype=np.uint64),
                             np.array([2**63 + 1, 2**63, 2**64 - 1, 1], np.uint64)])
        qu, ru = np.zeros(128, np.uint64), np.zeros(64, np.uint64)
        udiv64[(1,)](xu, yu, qu, ru, BLOCK=64)
        hi = np.array([(int(a) * int(b)) >> 64 for a, b in zip(xu, yu)], np.uint64)
        for name, got, want in (("uint64 // (divui)", qu[:64], xu // yu), ("uint64 % (remui)", ru, xu % yu),
                                ("tl.umulhi of uint64", qu[64:], hi)):
            check(name, got, want)
        # conversions: numpy's uint64 -> float rounds to nearest even, as LLVM's uitofp
        xc = np.concatenate([xu[:48], np.array([2**63 + 2**39 + 1, 2**63 + 2**40, 2**64 - 2**39 - 1, 2**53 + 1,
                                                 2**63 - 1, 1, 0, 2**64 - 1], np.uint64),
                             rng.integers(0, 2**64, 8, dtype=np.uint64)])
        gc = np.concatenate([rng.uniform(0, 2**64, 60), np.array([2.0**63, 2.0**64 - 2**11, 0.0, 2.0**63 - 2**10])])
        fc, dc, uc = np.zeros(64, np.float32), np.zeros(64, np.float64), np.zeros(64, np.uint64)
        u64_floats[(1,)](xc, fc, dc, gc, uc, BLOCK=64)
        for name, got, want in (("uint64 -> f32 (uitofp)", fc, xc.astype(np.float32)), ("uint64 -> f64 (uitofp)", dc, xc.astype(np.float64)),
                                ("f64 -> uint64 (fptoui)", uc, gc.astype(np.uint64))):
            check(name, got, want)

    x = rng.integers(0, 1000, 300).astype(np.int32)
    bins, old = np.zeros(16, np.float32), np.zeros(300, np.float32)
    histogram_add[(triton.cdiv(300, 64),)](x, bins, old, 300, NBINS=16, BLOCK=64)
    check("atomic_add histogram", bins, np.bincount(x % 16, minlength=16), tol=1e-6)
    # the old values of each bin, in the order its lanes update it, are 0, 1, ... (any order of instances)
    report("atomic_add old values", all(sorted(old[(x % 16) == b].tolist()) == list(range(int(bins[b]))) for b in range(16)))

    xs = rng.standard_normal((5, 8)).astype(np.float32)
    cnt = np.zeros(1, np.int32)
    mx, mn = np.full(8, -2**31, np.int32), np.full(8, 2**31 - 1, np.int32)
    fmx, fmn = np.full(8, -np.inf, np.float32), np.full(8, np.inf, np.float32)
    bits = np.array([0, 0, -1], np.int32)
    counters[(5,)](cnt, mx, mn, fmx, fmn, bits, xs, BLOCK=8)
    check("atomic_add counter", cnt, [5], tol=1e-6)
    check("atomic_max/min i32", np.concatenate([mx, mn]), np.concatenate([(xs * 1000).astype(np.int32).max(0), (xs * 1000).astype(np.int32).min(0)]), tol=1e-6)
    check("atomic_max/min f32", np.concatenate([fmx, fmn]), np.concatenate([xs.max(0), xs.min(0)]), tol=1e-6)
    check("atomic_or/xor/and", bits, [31, 31, -32], tol=1e-6)

    rows = rng.standard_normal((6, 40)).astype(np.float32)
    acc, lock, count = np.zeros(40, np.float32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    locked_sum[(6,)](rows, acc, lock, count, 40, BLOCK=64)  # plain accesses under the lock: no finding
    check("spin lock (atomic_cas/xchg)", acc, rows.sum(0), tol=1e-5)

    try:
        racy[(2,)](np.zeros(8, np.float32), BLOCK=8)
        report("store racing an atomic", False, "(no finding)")
    except dtsim.KernelError as e:
        ok = "atomically" in str(e) and "ops.py:" in str(e)
        report("store racing an atomic", ok, "" if ok else "\n" + str(e))

    xs = (rng.standard_normal((4, 8)) * 0.5 + 1.0).astype(np.float32)
    outs = [np.zeros((4, 8), np.float32) for _ in range(4)] + [np.zeros((4, 8), np.int32)]
    scans[(1,)](xs, *outs, BLOCK=4, COLS=8)
    check("tl.cumsum", outs[0], np.cumsum(xs, 1), tol=1e-5)
    check("tl.cumsum reverse", outs[1], np.cumsum(xs[::-1], 0)[::-1], tol=1e-5)
    check("tl.cumprod", outs[2], np.cumprod(xs, 1), tol=1e-5)
    check("tl.associative_scan max", outs[3], np.maximum.accumulate(xs, 1), tol=1e-6)
    check("tl.cumsum i32", outs[4], np.cumsum((xs * 10).astype(np.int32), 1), tol=1e-6)

    keys = np.sort(rng.integers(0, 5, 32)).astype(np.int32)
    xs = rng.standard_normal(32).astype(np.float32)
    seg, am = np.zeros(32, np.int32), np.zeros(1, np.float32)
    combines[(1,)](keys, seg, xs, am, N=32)
    want_seg = np.array([1 + np.sum(keys[:i] == keys[i]) for i in range(32)])
    check("associative_scan (keyed add)", seg, want_seg, tol=1e-6)
    check("tl.reduce (abs max)", am, [xs[np.argmax(np.abs(xs))]], tol=1e-6)
    srt = np.zeros(16, np.float32)
    sorts[(1,)](xs, srt, N=16)
    check("tl.sort", srt, np.sort(xs[:16]), tol=1e-6)

    a = rng.uniform(-1, 1, 64).astype(np.float32)
    b = rng.uniform(-1, 1, 64).astype(np.float32)
    out = np.zeros(13 * 64, np.float32)
    maths[(1,)](a, b, out, BLOCK=64)
    d, e = a.astype(np.float64), b.astype(np.float64)
    from math import erf, erfc
    want = [np.vectorize(erf)(d), np.floor(d * 3), np.ceil(d * 3), np.sin(d) + np.cos(e), np.arcsin(d * .5) + np.arccos(e * .25),
            np.arctan(d) + np.tan(e * .5), np.power(np.abs(d) + .5, e), np.arctan2(d, e + 3), np.log1p(np.abs(d)) + np.expm1(e * .5),
            np.sinh(d) + np.cosh(e * .5) + np.cbrt(d), np.trunc(d * 3) + np.rint(e * 3) + np.sign(d * 2.5) * np.floor(np.abs(d * 2.5) + .5),
            np.vectorize(erfc)(d) + np.log10(np.abs(e) + 1) + np.hypot(d, e), np.abs(d)]
    names = ["erf", "floor", "ceil", "sin+cos", "asin+acos", "atan+tan", "pow", "atan2", "log1p+expm1", "sinh+cosh+cbrt",
             "trunc+rint+round", "erfc+log10+hypot", "bitcast"]
    for i, n in enumerate(names):
        check("math " + n, out[i * 64:(i + 1) * 64], want[i], tol=1e-5)

    x = (np.arange(8, dtype=np.float32) - 3) * 1.5
    o = np.zeros((4, 8), np.float32)
    py_min_max[(4,)](x, o, 10, G=3, BLOCK=8)
    want = []
    for pid in range(4):
        group = min(10 - pid * 3, 3)
        want.append(np.minimum(np.maximum(np.maximum(x, group), -2.0), 3.0) + max(pid, 1, group))
    check("Python min/max on runtime values", o, np.array(want), tol=1e-6)

    finish("all ops match")


main()
