"""libdevice's directed-rounding arithmetic read through Triton's frontend: add_rd/ru/rz, sub_rd/ru/rz
(f32: fadd_*, fsub_*; f64: dadd_*, dsub_*), fma_rd/ru/rz (f32: fmaf_*; f64: fma_*), mul, div, rcp and sqrt
(f32 and f64: dmul_*, ddiv_*, drcp_*, dsqrt_*), and the 64-bit integer conversions ll2float_*, ull2float_*, ll2double_*, ull2double_*. Each result is compared bit for bit with the exact value (fractions.Fraction) rounded in
the named direction: random operands of every magnitude, operands far apart in exponent (the sum is
not exact in f64 then), exact cancellations (the sign of zero), subnormals, overflow, infinities and
NaN."""
import math
import sys
from fractions import Fraction

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice as ld

import dtsim  # noqa: F401 (python -m dtsim)
from ttir_check import check, finish


@triton.jit
def f32_fns(a_ptr, b_ptr, c_ptr, o_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    c = tl.load(c_ptr + o)
    tl.store(o_ptr + 0 * N + o, ld.add_rd(a, b))
    tl.store(o_ptr + 1 * N + o, ld.add_ru(a, b))
    tl.store(o_ptr + 2 * N + o, ld.add_rz(a, b))
    tl.store(o_ptr + 3 * N + o, ld.sub_rd(a, b))
    tl.store(o_ptr + 4 * N + o, ld.sub_ru(a, b))
    tl.store(o_ptr + 5 * N + o, ld.sub_rz(a, b))
    tl.store(o_ptr + 6 * N + o, ld.fma_rd(a, b, c))
    tl.store(o_ptr + 7 * N + o, ld.fma_ru(a, b, c))
    tl.store(o_ptr + 8 * N + o, ld.fma_rz(a, b, c))
    tl.store(o_ptr + 9 * N + o, ld.mul_rd(a, b))
    tl.store(o_ptr + 10 * N + o, ld.div_ru(a, b))
    tl.store(o_ptr + 11 * N + o, ld.rcp_rz(a))
    tl.store(o_ptr + 12 * N + o, ld.sqrt_rd(a))


@triton.jit
def f64_fns(a_ptr, b_ptr, c_ptr, o_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    c = tl.load(c_ptr + o)
    tl.store(o_ptr + 0 * N + o, ld.add_rd(a, b))
    tl.store(o_ptr + 1 * N + o, ld.add_ru(a, b))
    tl.store(o_ptr + 2 * N + o, ld.add_rz(a, b))
    tl.store(o_ptr + 3 * N + o, ld.sub_rd(a, b))
    tl.store(o_ptr + 4 * N + o, ld.sub_ru(a, b))
    tl.store(o_ptr + 5 * N + o, ld.sub_rz(a, b))
    tl.store(o_ptr + 6 * N + o, ld.mul_rd(a, b))
    tl.store(o_ptr + 7 * N + o, ld.mul_ru(a, b))
    tl.store(o_ptr + 8 * N + o, ld.mul_rz(a, b))
    tl.store(o_ptr + 9 * N + o, ld.div_rd(a, b))
    tl.store(o_ptr + 10 * N + o, ld.div_ru(a, b))
    tl.store(o_ptr + 11 * N + o, ld.div_rz(a, b))
    tl.store(o_ptr + 12 * N + o, ld.rcp_rd(a))
    tl.store(o_ptr + 13 * N + o, ld.rcp_ru(a))
    tl.store(o_ptr + 14 * N + o, ld.rcp_rz(a))
    tl.store(o_ptr + 15 * N + o, ld.sqrt_rd(a))
    tl.store(o_ptr + 16 * N + o, ld.sqrt_ru(a))
    tl.store(o_ptr + 17 * N + o, ld.sqrt_rz(a))
    tl.store(o_ptr + 18 * N + o, ld.fma_rd(a, b, c))
    tl.store(o_ptr + 19 * N + o, ld.fma_ru(a, b, c))
    tl.store(o_ptr + 20 * N + o, ld.fma_rz(a, b, c))


@triton.jit
def int_fns(w_ptr, f_ptr, d_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    w = tl.load(w_ptr + o)
    u = w.to(tl.uint64, bitcast=True)
    tl.store(f_ptr + 0 * N + o, ld.ll2float_rd(w))
    tl.store(f_ptr + 1 * N + o, ld.ll2float_ru(w))
    tl.store(f_ptr + 2 * N + o, ld.ll2float_rz(w))
    tl.store(f_ptr + 3 * N + o, ld.ull2float_rd(u))
    tl.store(f_ptr + 4 * N + o, ld.ull2float_ru(u))
    tl.store(f_ptr + 5 * N + o, ld.ull2float_rz(u))
    tl.store(d_ptr + 0 * N + o, ld.ll2double_rd(w))
    tl.store(d_ptr + 1 * N + o, ld.ll2double_ru(w))
    tl.store(d_ptr + 2 * N + o, ld.ll2double_rz(w))
    tl.store(d_ptr + 3 * N + o, ld.ull2double_rd(u))
    tl.store(d_ptr + 4 * N + o, ld.ull2double_ru(u))
    tl.store(d_ptr + 5 * N + o, ld.ull2double_rz(u))


def directed(q, mode, dtype, zero_sign=1.0):
    """The exact rational q (or a non-finite float) rounded down / up / toward zero in dtype."""
    if isinstance(q, float):
        return dtype(q)
    if q == 0:
        return dtype(math.copysign(0.0, zero_sign))
    info = np.finfo(dtype)
    big = Fraction(float(info.max))
    # the nearest, then the neighbour on the named side
    with np.errstate(over="ignore"):
        r = dtype(float(q)) if abs(q) <= big else dtype(float(info.max) if q > 0 else -float(info.max))
    # float(q) rounds q to f64 first; correct it by comparing exactly
    def val(x):
        return Fraction(float(x)) if np.isfinite(x) else (Fraction(10) ** 1000 if x > 0 else -Fraction(10) ** 1000)  # beyond any product or quotient
    down = lambda x: np.nextafter(x, dtype(-math.inf))
    up = lambda x: np.nextafter(x, dtype(math.inf))
    while val(r) > q:
        r = down(r)
    while val(up(r)) <= q:
        r = up(r)
    # r is now the largest value <= q (the round-down result)
    if mode == "d" or val(r) == q:
        return r if val(r) != q or mode == "d" else r
    if mode == "u":
        return up(r)
    return r if q > 0 else up(r)  # toward zero


def exact(x):
    return Fraction(float(x))


def special(*xs):
    return any(not np.isfinite(v) for v in xs)


def check_rounding(name, got, want_fn, args, dtype):
    """Each lane of got against want_fn of its operands (the value rounded exactly), bit for bit (a NaN
    matches any NaN)."""
    want = np.array([want_fn(*(x[i] for x in args)) for i in range(len(got))], dtype)
    check("%s %s" % (name, np.dtype(dtype).name), got, want, bits=True)


def ieee(op, mode, dtype):
    def f(a, b, c=None):
        with np.errstate(all="ignore"):
            if op == "fma":
                if special(a, b, c):
                    if not special(a, b):  # a finite product plus an infinity or a NaN
                        return dtype(c)
                    return dtype(np.float64(a) * np.float64(b) + np.float64(c))
                q = exact(a) * exact(b) + exact(c)
                p_sign = math.copysign(1.0, float(a)) * math.copysign(1.0, float(b))
                zs = -1.0 if mode == "d" and not (p_sign > 0 and math.copysign(1.0, float(c)) > 0) else (1.0 if not (p_sign < 0 and math.copysign(1.0, float(c)) < 0) else -1.0)
                return directed(q, mode, dtype, zs)
            bb = -b if op == "sub" else b
            if special(a, bb):
                return dtype(np.float64(a) + np.float64(bb)) if dtype == np.float32 else a + bb
            q = exact(a) + exact(bb)
            sa, sb = math.copysign(1.0, float(a)), math.copysign(1.0, float(bb))
            zs = (-1.0 if not (sa > 0 and sb > 0) else 1.0) if mode == "d" else (-1.0 if sa < 0 and sb < 0 else 1.0)
            return directed(q, mode, dtype, zs)
    return f


def unary_ref(kind, mode, dtype):
    def f(a, b=None):
        with np.errstate(all="ignore"):
            if kind == "mul":
                return dtype(np.float64(a) * np.float64(b)) if special(a, b) else directed(exact(a) * exact(b), mode, dtype, math.copysign(1.0, float(a)) * math.copysign(1.0, float(b)))
            if kind == "div":
                if special(a, b) or b == 0 or a == 0:
                    return dtype(np.float64(a) / np.float64(b))
                return directed(exact(a) / exact(b), mode, dtype)
            if kind == "rcp":
                if special(a) or a == 0:
                    return dtype(1.0 / np.float64(a))
                return directed(1 / exact(a), mode, dtype)
            if a < 0 or special(a) or a == 0:
                return dtype(np.sqrt(np.float64(a)))
            # sqrt: the largest r with r^2 <= a, then up where not exact
            q = exact(a)
            r = dtype(math.sqrt(float(a)))
            while Fraction(float(r)) ** 2 > q:
                r = np.nextafter(r, dtype(-math.inf))
            while Fraction(float(np.nextafter(r, dtype(math.inf)))) ** 2 <= q:
                r = np.nextafter(r, dtype(math.inf))
            if mode == "d" or mode == "z" or Fraction(float(r)) ** 2 == q:
                return r
            return np.nextafter(r, dtype(math.inf))
    return f


rng = np.random.default_rng(3)
N = 512


def operands(dtype, n):
    info = np.finfo(dtype)
    e = info.maxexp
    sign = rng.choice([-1.0, 1.0], n)
    mags = np.exp2(rng.uniform(-e * 0.9, e * 0.9, n)) * rng.uniform(1, 2, n)
    return (sign * mags).astype(dtype)


for dtype in (np.float32, np.float64):
    info = np.finfo(dtype)
    a = operands(dtype, N)
    b = operands(dtype, N)
    c = operands(dtype, N)
    k = 0
    # near magnitudes (cancellation), far apart (inexact in f64), exact cancellation, zeros and specials
    near = slice(0, 120)
    b[near] = (a[near] * rng.uniform(-1.5, 1.5, 120).astype(dtype)).astype(dtype)
    far = slice(120, 200)
    b[far] = (a[far] * np.exp2(-rng.integers(20, 90, 80)).astype(dtype) * rng.choice([-1, 1], 80)).astype(dtype)
    a[200:230] = b[200:230]  # a - b == 0, a + (-a) ...
    b[230:260] = -a[230:260]
    sub = info.smallest_subnormal
    specials = [(0.0, 0.0), (0.0, -0.0), (-0.0, 0.0), (-0.0, -0.0), (1.0, sub), (-1.0, sub), (1.0, -sub), (sub, sub), (-sub, sub),
                (float(info.max), float(info.max)), (-float(info.max), -float(info.max)), (float(info.max), float(info.eps) * float(info.max)),
                (math.inf, 1.0), (-math.inf, 1.0), (math.inf, -math.inf), (math.nan, 1.0), (1.0, 2.0 ** -30), (1.0, -2.0 ** -30),
                (float(info.tiny), -float(info.tiny) / 3), (3.0, 1e-300 if dtype == np.float64 else 1e-40)]
    for i, (u, w) in enumerate(specials):
        a[260 + i], b[260 + i] = u, w
    c[300:340] = (-(a[300:340].astype(np.float64) * b[300:340].astype(np.float64))).astype(dtype)  # fma near cancellation
    if dtype == np.float32:
        out = np.zeros(13 * N, dtype)
        pos = np.abs(a)
        try:
            f32_fns[(1,)](a, b, c, out, N=N)
        except Exception as e:  # --backend=cuda without a GPU (ctest's gpu label): skipped
            if "no CUDA driver" in str(e):
                print("skipped: %s" % str(e).splitlines()[0])
                sys.exit(77)
            raise
        out = out.reshape(13, N)
        for j, (op, m) in enumerate([(o, m) for o in ("add", "sub", "fma") for m in "duz"]):
            args = (a, b, c) if op == "fma" else (a, b)
            check_rounding("%s_r%s" % (op, m), out[j], ieee(op, m, dtype), args, dtype)
        check_rounding("mul_rd", out[9], unary_ref("mul", "d", dtype), (a, b), dtype)
        check_rounding("div_ru", out[10], unary_ref("div", "u", dtype), (a, b), dtype)
        check_rounding("rcp_rz", out[11], unary_ref("rcp", "z", dtype), (a,), dtype)
        with np.errstate(invalid="ignore"):
            check_rounding("sqrt_rd", out[12], unary_ref("sqrt", "d", dtype), (a,), dtype)
    else:
        # products and quotients into the subnormal range and past the largest value
        a[340:380] = (np.exp2(rng.uniform(-540, -500, 40)) * rng.choice([-1, 1], 40)).astype(dtype)
        b[340:380] = (np.exp2(rng.uniform(-560, -500, 40)) * rng.choice([-1, 1], 40)).astype(dtype)
        a[380:400] = (np.exp2(rng.uniform(500, 540, 20))).astype(dtype)
        b[380:400] = (np.exp2(rng.uniform(480, 540, 20))).astype(dtype)
        b[400:420] = (np.exp2(rng.uniform(500, 1020, 20))).astype(dtype)  # a / b tiny
        a[420:430] = dtype(1.0)  # exact quotients and square roots
        b[420:430] = np.exp2(rng.integers(-8, 8, 10)).astype(dtype)
        a[430:440] = (np.arange(1, 11, dtype=dtype) ** 2) * dtype(2.0 ** -1070)
        c[340:380] = rng.integers(-2**40, 2**40, 40) * 2.0**-1074  # fma results below 2^-1022
        for i in range(440, 480):  # a * b + c just off a midpoint of the subnormal grid, either side
            mb = 1.5 + rng.random() * 0.5
            ma = float(np.nextafter(3.0 / mb, 4.0 if i % 4 < 2 else 0.0))
            sg = 1.0 if i % 2 else -1.0
            a[i], b[i], c[i] = sg * ma * 2.0**-537, mb * 2.0**-538, sg * 2.0**-1073
        a[480:484], b[480:484], c[480:484] = [2.0, -2.0, 0.0, -0.0], [3.0, 3.0, 5.0, 5.0], [-6.0, 6.0, -0.0, -0.0]  # exact zeros
        a[484:488], b[484:488], c[484:488] = [1e300] * 4, [1e300, -1e300, 1e300, -1e300], [1.0, 1.0, -info.max, info.max]  # overflow
        a[488:492], b[488:492], c[488:492] = [1e-300] * 4, [1e-300, -1e-300, 1e-300, -1e-300], [1.0, 1.0, -1.0, 0.0]  # c dominant, zero
        out = np.zeros(21 * N, dtype)
        f64_fns[(1,)](a, b, c, out, N=N)
        out = out.reshape(21, N)
        for j, (op, m) in enumerate([(o, m) for o in ("add", "sub") for m in "duz"]):
            check_rounding("%s_r%s" % (op, m), out[j], ieee(op, m, dtype), (a, b), dtype)
        for j, (kind, m) in enumerate([(o, m) for o in ("mul", "div") for m in "duz"]):
            check_rounding("%s_r%s" % (kind, m), out[6 + j], unary_ref(kind, m, dtype), (a, b), dtype)
        for j, m in enumerate("duz"):
            check_rounding("rcp_r%s" % m, out[12 + j], unary_ref("rcp", m, dtype), (a,), dtype)
            with np.errstate(invalid="ignore"):
                check_rounding("sqrt_r%s" % m, out[15 + j], unary_ref("sqrt", m, dtype), (a,), dtype)
            check_rounding("fma_r%s" % m, out[18 + j], ieee("fma", m, dtype), (a, b, c), dtype)
w = rng.integers(-2**63, 2**63, N, dtype=np.int64)
w[:40] = rng.integers(-2**30, 2**30, 40)  # exact in f32 where small
w[40:80] = (rng.integers(-2**40, 2**40, 40) << 23) | rng.integers(0, 2, 40)  # next to f32 / f64 values
w[80:90] = np.int64([0, 1, -1, 2**63 - 1, -2**63, 2**53 + 1, -(2**53 + 1), 2**24 + 1, 2**62 + 2**38, -(2**62) - 1])
fo, do = np.zeros(6 * N, np.float32), np.zeros(6 * N, np.float64)
int_fns[(1,)](w, fo, do, N=N)
fo, do = fo.reshape(6, N), do.reshape(6, N)
uw = w.view(np.uint64)
for j, (src, name) in enumerate([(w, "ll"), (w, "ll"), (w, "ll"), (uw, "ull"), (uw, "ull"), (uw, "ull")]):
    m = "duz"[j % 3]
    for out, dtype, tn in ((fo, np.float32, "float"), (do, np.float64, "double")):
        check_rounding("%s2%s_r%s" % (name, tn, m), out[j], lambda v, m=m, dtype=dtype: directed(Fraction(int(v)), m, dtype), (src,), dtype)
finish("libdevice: directed-rounding add, sub, mul, div, rcp, sqrt, fma and 64-bit integer conversions exact")
