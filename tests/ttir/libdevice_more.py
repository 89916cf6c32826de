"""More of libdevice (triton.language.extra.libdevice) read through Triton's frontend and checked against
numpy and Python's math: reinterpretations (float_as_uint, uint_as_float, double2hiint/loint,
hiloint2double), integer <-> float conversions with their named rounding (rn, rd, ru, rz), ldexp and
scalbn, ilogb and logb, fdim, IEEE remainder, nextafter, llround, rcbrt, rsqrt_rn, rhypot, norm3d,
rnorm3d, tgamma, and the integer hadd / rhadd / mul24 / sad with their unsigned forms."""
import math

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice as ld

import dtsim  # noqa: F401 (python -m dtsim)
from ttir_check import check, finish


@triton.jit
def f32_fns(x_ptr, i_ptr, f_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(i_ptr + 0 * N + o, ld.float_as_uint(x).to(tl.int64))
    tl.store(i_ptr + 1 * N + o, ld.ilogb(x).to(tl.int64))
    tl.store(i_ptr + 2 * N + o, ld.llround(x))
    tl.store(i_ptr + 3 * N + o, ld.float2ll_rn(x))
    tl.store(i_ptr + 4 * N + o, ld.float2ll_rz(x))
    tl.store(i_ptr + 5 * N + o, ld.float2ll_rd(x))
    tl.store(i_ptr + 6 * N + o, ld.float2ll_ru(x))
    tl.store(i_ptr + 7 * N + o, ld.float2ull_rz(x).to(tl.int64, bitcast=True))
    tl.store(f_ptr + 0 * N + o, ld.logb(x))
    tl.store(f_ptr + 1 * N + o, ld.rcbrt(x))
    tl.store(f_ptr + 2 * N + o, ld.rsqrt_rn(x))
    tl.store(f_ptr + 3 * N + o, ld.tgamma(x))


@triton.jit
def f64_fns(d_ptr, i_ptr, f_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    d = tl.load(d_ptr + o)
    tl.store(i_ptr + 0 * N + o, ld.double2hiint(d).to(tl.int64))
    tl.store(i_ptr + 1 * N + o, ld.double2loint(d).to(tl.int64))
    tl.store(i_ptr + 2 * N + o, ld.double2int_rn(d).to(tl.int64))
    tl.store(i_ptr + 3 * N + o, ld.double2uint_rz(d).to(tl.int64))
    tl.store(i_ptr + 4 * N + o, ld.double2ll_rd(d))
    tl.store(i_ptr + 5 * N + o, ld.double2ull_ru(d).to(tl.int64, bitcast=True))
    tl.store(i_ptr + 6 * N + o, ld.ilogb(d).to(tl.int64))
    tl.store(f_ptr + 0 * N + o, ld.double2float_rn(d))
    tl.store(f_ptr + 1 * N + o, ld.double2float_rd(d))
    tl.store(f_ptr + 2 * N + o, ld.double2float_ru(d))
    tl.store(f_ptr + 3 * N + o, ld.double2float_rz(d))


@triton.jit
def rcp64h_fn(d_ptr, r_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(r_ptr + o, ld.rcp64h(tl.load(d_ptr + o)))


@triton.jit
def int_fns(a_ptr, b_ptr, c_ptr, i_ptr, f_ptr, g_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    c = tl.load(c_ptr + o)
    ua = a.to(tl.uint32, bitcast=True)
    ub = b.to(tl.uint32, bitcast=True)
    uc = c.to(tl.uint32, bitcast=True)
    tl.store(i_ptr + 0 * N + o, ld.hadd(a, b))
    tl.store(i_ptr + 1 * N + o, ld.rhadd(a, b))
    tl.store(i_ptr + 2 * N + o, ld.hadd(ua, ub).to(tl.int32, bitcast=True))
    tl.store(i_ptr + 3 * N + o, ld.rhadd(ua, ub).to(tl.int32, bitcast=True))
    tl.store(i_ptr + 4 * N + o, ld.mul24(a, b))
    tl.store(i_ptr + 5 * N + o, ld.mul24(ua, ub).to(tl.int32, bitcast=True))
    tl.store(i_ptr + 6 * N + o, ld.sad(a, b, uc))
    tl.store(i_ptr + 7 * N + o, ld.sad(ua, ub, uc).to(tl.int32, bitcast=True))
    tl.store(f_ptr + 0 * N + o, ld.int2float_rd(a))
    tl.store(f_ptr + 1 * N + o, ld.int2float_ru(a))
    tl.store(f_ptr + 2 * N + o, ld.int2float_rz(a))
    tl.store(f_ptr + 3 * N + o, ld.uint2float_ru(ua))
    tl.store(f_ptr + 4 * N + o, ld.uint_as_float(ua))
    tl.store(g_ptr + 0 * N + o, ld.int2double_rn(a))
    tl.store(g_ptr + 1 * N + o, ld.uint2double_rn(ua))
    tl.store(g_ptr + 2 * N + o, ld.hiloint2double(a, b))
    w = a.to(tl.int64) * 4294967296 + b.to(tl.int64)
    tl.store(g_ptr + 3 * N + o, ld.ll2double_rn(w))
    tl.store(g_ptr + 4 * N + o, ld.ull2double_rn(w.to(tl.uint64, bitcast=True)))
    tl.store(f_ptr + 5 * N + o, ld.ll2float_rn(w))
    tl.store(f_ptr + 6 * N + o, ld.ull2float_rn(w.to(tl.uint64, bitcast=True)))


@triton.jit
def pair_fns(x_ptr, y_ptr, n_ptr, f_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    y = tl.load(y_ptr + o)
    n = tl.load(n_ptr + o)
    tl.store(f_ptr + 0 * N + o, ld.ldexp(x, n))
    tl.store(f_ptr + 1 * N + o, ld.scalbn(x, n))
    tl.store(f_ptr + 2 * N + o, ld.fdim(x, y))
    tl.store(f_ptr + 3 * N + o, ld.remainder(x, y))
    tl.store(f_ptr + 4 * N + o, ld.nextafter(x, y))
    tl.store(f_ptr + 5 * N + o, ld.rhypot(x, y))
    tl.store(f_ptr + 6 * N + o, ld.norm3d(x, y, x * y))
    tl.store(f_ptr + 7 * N + o, ld.rnorm3d(x, y, x * y))


N = 64
rng = np.random.default_rng(11)
f32, f64 = np.float32, np.float64
inf, nan = np.inf, np.nan
x = np.concatenate([f32([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.5, 0.5, 1e-40, -3e-39, inf, -inf, nan, 3.4e38, -7.25, 1e20]),
                    (rng.standard_normal(N - 16) * 40).astype(f32)])
ints, flts = np.zeros(8 * N, np.int64), np.zeros(4 * N, f32)
f32_fns[(1,)](x, ints, flts, N=N)
I = ints.reshape(8, N)
F = flts.reshape(4, N)
x64 = x.astype(f64)
fin = np.isfinite(x)


def ilogb_ref(v):
    if v == 0 or math.isnan(v):
        return -2**31
    if math.isinf(v):
        return 2**31 - 1
    return math.frexp(v)[1] - 1


def to_int(v, rnd, lo, hi):
    return 0 if math.isnan(v) else int(min(max(rnd(v), lo), hi))


check("float_as_uint", I[0], x.view(np.int32).astype(np.int64))  # (Triton types its result int32)
check("ilogb f32", I[1], [ilogb_ref(float(v)) for v in x])
half_away = lambda v: math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)
L = (-2**63, 2**63 - 1)
check("llround", I[2], [to_int(float(v), lambda u: half_away(u) if math.isfinite(u) else u, *L) for v in x])
for k, (name, rnd) in enumerate([("float2ll_rn", round), ("float2ll_rz", math.trunc), ("float2ll_rd", math.floor), ("float2ll_ru", math.ceil)]):
    check(name, I[3 + k], [to_int(float(v), lambda u: rnd(u) if math.isfinite(u) else u, *L) for v in x])
check("float2ull_rz", I[7].view(np.uint64), np.array([to_int(float(v), lambda u: math.trunc(u) if math.isfinite(u) else u, 0, 2**64 - 1) for v in x], np.uint64))
logb_want = np.where(x == 0, -inf, np.where(np.isfinite(x), [float(ilogb_ref(float(v))) if v != 0 and np.isfinite(v) else 0 for v in x], np.abs(x))).astype(f32)
check("logb", F[0], logb_want)
check("rcbrt", F[1], (1.0 / np.cbrt(x64)).astype(f32), bits=True)
with np.errstate(invalid="ignore", divide="ignore"):
    check("rsqrt_rn", F[2], (1.0 / np.sqrt(x64)).astype(f32), bits=True)
    g_want = []
    for v in x64:
        try:
            g_want.append(math.gamma(v))
        except (ValueError, OverflowError):
            g_want.append(nan if math.isnan(v) or v == -inf or (v < 0 and v == math.floor(v)) else math.copysign(inf, v) if v == 0 else inf)
    check("tgamma", F[3], np.array(g_want).astype(f32), rtol=1e-5)

d = np.concatenate([f64([0.0, -0.0, 1.0 + 2.0**-30, -(1.0 + 2.0**-30), 1e300, -1e300, 5e-324, 2.5, -2.5, 3.5, nan, inf, -inf, 4.5e9, -3e18, 1.5e19]),
                    rng.standard_normal(N - 16) * 1e5])
ints, flts = np.zeros(7 * N, np.int64), np.zeros(4 * N, f32)
f64_fns[(1,)](d, ints, flts, N=N)
I = ints.reshape(7, N)
F = flts.reshape(4, N)
bits = d.view(np.int64)
check("double2hiint", I[0], (bits >> 32).astype(np.int32))
check("double2loint", I[1], (bits & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
fin_rnd = lambda rnd: (lambda u: rnd(u) if math.isfinite(u) else u)
check("double2int_rn", I[2], [to_int(float(v), fin_rnd(round), -2**31, 2**31 - 1) for v in d])
check("double2uint_rz", I[3], np.array([to_int(float(v), fin_rnd(math.trunc), 0, 2**32 - 1) for v in d], np.int64).astype(np.uint32).view(np.int32))  # (typed int32)
check("double2ll_rd", I[4], [to_int(float(v), fin_rnd(math.floor), *L) for v in d])
check("double2ull_ru", I[5].view(np.uint64), np.array([to_int(float(v), fin_rnd(math.ceil), 0, 2**64 - 1) for v in d], np.uint64))
check("ilogb f64", I[6], [ilogb_ref(float(v)) for v in d])
# rcp64h: the high word of 1/x rounded to nearest, its low word 0; subnormal operands and results
# zeros of their sign (rcp.approx.ftz.f64)
rd = np.concatenate([d, [3.0, -3.5, 14.0 / 15.0, 2.0**-1030, -(2.0**-1074), 2.0**1023 * 1.5, 0.0, -0.0, inf, -inf, nan],
                     rng.uniform(1, 2, 53) * np.exp2(rng.integers(-1030, 1030, 53)) * rng.choice([-1, 1], 53)])  # 128 lanes
rr = np.zeros_like(rd)
rcp64h_fn[(1,)](rd, rr, N=rd.size)
with np.errstate(all="ignore"):
    fz = np.where(np.abs(rd) < 2.0**-1022, rd * 0, rd)
    r1 = 1.0 / fz
    hi = (r1.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(f64)
    want_r = np.where(np.isnan(r1), r1, np.where(np.abs(hi) < 2.0**-1022, hi * 0, hi))
check("rcp64h", rr, want_r, bits=True)
check("rcp64h of 3, -3.5, 14/15 (bits)", rr[d.size:d.size + 3].view(np.uint64), np.array([0x3FD5555500000000, 0xBFD2492400000000, 0x3FF1249200000000], np.uint64))


def directed(v, mode):  # v (an f64) to f32: nearest, then one step where it went the wrong way
    r = f32(v)
    if math.isnan(v) or float(r) == v:
        return r
    if mode == "d" and float(r) > v or mode == "z" and abs(float(r)) > abs(v):
        return np.nextafter(r, f32(-inf) if mode == "d" or v > 0 else f32(inf))
    if mode == "u" and float(r) < v:
        return np.nextafter(r, f32(inf))
    return r


with np.errstate(over="ignore"):
    check("double2float_rn", F[0], d.astype(f32), bits=True)
    for k, m in enumerate("duz"):
        check("double2float_r" + m, F[1 + k], np.array([directed(float(v), m) for v in d], f32), bits=True)

a = np.concatenate([np.int32([0, 1, -1, 2**31 - 1, -2**31, 16777217, -16777217, 2**30 + 1]), rng.integers(-2**31, 2**31, N - 8, dtype=np.int64).astype(np.int32)])
b = np.concatenate([np.int32([0, 1, 1, 2**31 - 1, -2**31, 3, -5, 7]), rng.integers(-2**31, 2**31, N - 8, dtype=np.int64).astype(np.int32)])
c = rng.integers(0, 2**31, N, dtype=np.int64).astype(np.int32)
ints, flts, dbls = np.zeros(8 * N, np.int32), np.zeros(7 * N, f32), np.zeros(5 * N, f64)
int_fns[(1,)](a, b, c, ints, flts, dbls, N=N)
I, F, D = ints.reshape(8, N), flts.reshape(7, N), dbls.reshape(5, N)
A, B, C = a.astype(np.int64), b.astype(np.int64), c.astype(np.int64)
UA, UB = A & 0xFFFFFFFF, B & 0xFFFFFFFF
wrap = lambda v: (np.asarray(v, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
sx24 = lambda v: ((v & 0xFFFFFF) ^ 0x800000) - 0x800000
check("hadd", I[0], wrap((A + B) >> 1))
check("rhadd", I[1], wrap((A + B + 1) >> 1))
check("uhadd", I[2], wrap((UA + UB) >> 1))
check("urhadd", I[3], wrap((UA + UB + 1) >> 1))
check("mul24", I[4], wrap(sx24(A) * sx24(B)))
check("umul24", I[5], wrap((UA & 0xFFFFFF) * (UB & 0xFFFFFF)))
check("sad", I[6], wrap(np.abs(A - B) + C))
check("usad", I[7], wrap(np.abs(UA - UB) + C))
for k, m in enumerate("duz"):
    check("int2float_r" + m, F[k], np.array([directed(float(v), m) for v in A], f32), bits=True)
check("uint2float_ru", F[3], np.array([directed(float(v), "u") for v in UA], f32), bits=True)
check("uint_as_float", F[4], a.view(f32), bits=True)
check("int2double_rn", D[0], A.astype(f64), bits=True)
check("uint2double_rn", D[1], UA.astype(f64), bits=True)
check("hiloint2double", D[2], ((A << 32) | UB).astype(np.int64).view(f64), bits=True)
W = (A * 4294967296 + B)
check("ll2double_rn", D[3], W.astype(f64), bits=True)
check("ull2double_rn", D[4], W.astype(np.uint64).astype(f64), bits=True)
check("ll2float_rn", F[5], W.astype(f32), bits=True)
check("ull2float_rn", F[6], W.astype(np.uint64).astype(f32), bits=True)

xs = np.concatenate([f32([5.5, -5.5, 7.0, 1.0, 0.0, -0.0, 3e38, 1e-40, nan, inf, 2.0, -3.0, 6.5, 1.0, 0.0, 1e-45]), (rng.standard_normal(N - 16) * 8).astype(f32)])
ys = np.concatenate([f32([2.0, 2.0, 2.0, inf, 1.0, -1.0, 1.0, 2.0, 1.0, 2.0, nan, 4.0, -1.0, 1.0, -1.0, -1.0]), (rng.standard_normal(N - 16) * 3).astype(f32)])
ns = np.concatenate([np.int32([1, -3, 300, -300, 5, 0, 2, 100, 1, 1, 1, 200, -200, -149, 2**31 - 1, -2**31]), rng.integers(-40, 40, N - 16).astype(np.int32)])
out = np.zeros(8 * N, f32)
pair_fns[(1,)](xs, ys, ns, out, N=N)
F = out.reshape(8, N)
with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
    want_ld = np.array([math.ldexp(float(v), int(max(min(k, 400), -400))) if math.isfinite(v) and v != 0 else v for v, k in zip(xs, ns)])
    want_ld = np.where(np.abs(want_ld) > 3.5e38, np.copysign(inf, want_ld), want_ld).astype(f32)
    check("ldexp", F[0], want_ld, bits=True)
    check("scalbn", F[1], want_ld, bits=True)
    check("fdim", F[2], np.where(np.isnan(xs) | np.isnan(ys), nan, np.where(xs > ys, xs - ys, f32(0))).astype(f32), bits=True)
    rem = []
    for u, w in zip(xs.astype(float), ys.astype(float)):
        try:
            rem.append(math.remainder(u, w))
        except ValueError:
            rem.append(nan)
    check("remainder", F[3], np.array(rem, f32), bits=True)
    check("nextafter", F[4], np.nextafter(xs, ys), bits=True)
    x64, y64 = xs.astype(f64), ys.astype(f64)
    check("rhypot", F[5], (1.0 / np.hypot(x64, y64)).astype(f32), bits=True)
    z64 = (xs * ys).astype(f64)
    n3 = np.sqrt(x64 * x64 + y64 * y64 + z64 * z64)
    check("norm3d", F[6], n3.astype(f32), bits=True)
    check("rnorm3d", F[7], (1.0 / n3).astype(f32), bits=True)

finish("libdevice: 51 more function forms match numpy and Python's math")
