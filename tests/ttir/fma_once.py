"""tl.fma (and libdevice's fma / fmaf) rounds once: f32 lanes whose f64 sum falls exactly on a tie
between two f32 values while the exact value does not (a * b = 1 + 2^-11 + 2^-24, a midpoint, plus
c = +-2^-70) give the f32 nearest to the exact value, not the tie's even neighbour that rounding the
f64 sum again would give; random lanes match the exact rational result too. f64 likewise: products
that are f64 midpoints plus a tiny c, cancellation (c near -a * b), products past the largest value
or far below the smallest normal one with c bringing the sum back, a c that dominates, zeros (the sign
of an exact or underflowing zero), infinities and NaNs, results below 2^-1022 (midpoints of their
grid too), bit for bit against fractions.Fraction. Inline PTX's fma.rn.f32 / fma.rn.f64 likewise."""
import math
import sys
from fractions import Fraction as F

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice
from ttir_check import check, finish


@triton.jit
def fmas(a_ptr, b_ptr, c_ptr, o_ptr, q_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    c = tl.load(c_ptr + o)
    tl.store(o_ptr + o, tl.fma(a, b, c))
    tl.store(q_ptr + o, libdevice.fma(a, b, c))


@triton.jit
def ptx_fmas(a_ptr, b_ptr, c_ptr, o_ptr, N: tl.constexpr, F64: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    c = tl.load(c_ptr + o)
    if F64:
        r = tl.inline_asm_elementwise("fma.rn.f64 $0, $1, $2, $3;", "=d,d,d,d", [a, b, c], dtype=tl.float64, is_pure=True, pack=1)
    else:
        r = tl.inline_asm_elementwise("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", [a, b, c], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(o_ptr + o, r)


def nearest_f32(x):
    """The f32 nearest to the rational x, ties to even."""
    f = np.float32(float(x))
    lo, hi = (f, np.nextafter(f, np.float32(np.inf))) if F(float(f)) <= x else (np.nextafter(f, np.float32(-np.inf)), f)
    dl, dh = x - F(float(lo)), F(float(hi)) - x
    if dl != dh:
        return lo if dl < dh else hi
    return lo if int(lo.view(np.uint32)) % 2 == 0 else hi


u = 1 + 2**-12
ties_a = np.array([u, u, u, u], np.float32)
ties_b = np.array([u, u, -u, -u], np.float32)
ties_c = np.array([2**-70, -2**-70, 2**-70, -2**-70], np.float32)
rng = np.random.default_rng(7)
N = 2048
a = np.concatenate([ties_a, rng.standard_normal(N - 4).astype(np.float32)])
b = np.concatenate([ties_b, rng.standard_normal(N - 4).astype(np.float32)])
c = np.concatenate([ties_c, (rng.standard_normal(N - 4) * 1e-3).astype(np.float32)])
o = np.zeros(N, np.float32)
q = np.zeros(N, np.float32)
try:
    fmas[(1,)](a, b, c, o, q, N=N)
except Exception as e:  # --backend=cuda without a GPU (ctest's gpu label): skipped
    if "no CUDA driver" in str(e):
        print("skipped: %s" % str(e).splitlines()[0])
        sys.exit(77)
    raise
want = np.array([nearest_f32(F(float(x)) * F(float(y)) + F(float(z))) for x, y, z in zip(a, b, c)], np.float32)
twice = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
if (twice[:4] == want[:4]).all():
    sys.exit("the tie lanes do not tell one rounding from two")
p32 = np.zeros(N, np.float32)
ptx_fmas[(1,)](a, b, c, p32, N=N, F64=False)
for name, got in (("tl.fma", o), ("libdevice.fma", q), ("inline PTX fma.rn.f32", p32)):
    check(name + " f32, one rounding", got.view(np.uint32), want.view(np.uint32))


def exact_f64(x, y, z):
    """x * y + z rounded once to f64 (IEEE: NaN, infinities, the sign of a zero sum)."""
    if not all(math.isfinite(v) for v in (x, y, z)):
        with np.errstate(all="ignore"):
            p = np.float64(x) * np.float64(y)
            if math.isfinite(x) and math.isfinite(y):
                return np.float64(z)  # a finite product plus an infinity or a NaN
            return p + np.float64(z)
    e = F(x) * F(y) + F(z)
    if e == 0:  # an exact zero: -0 when both the product and z are -0 (or negative zeros), else +0
        neg_p = (math.copysign(1, x) * math.copysign(1, y)) < 0
        return np.float64(-0.0) if (neg_p and math.copysign(1, z) < 0) else np.float64(0.0)
    try:
        r = float(e)  # Fraction to float: rounded once, to nearest, ties to even (subnormals too)
    except OverflowError:
        r = math.inf if e > 0 else -math.inf
    if r == 0:
        r = math.copysign(0.0, e)
    return np.float64(r)


u1, u2 = 1 + 2.0**-26, 1 + 2.0**-27  # u1 * u2 = 1 + 2^-26 + 2^-27 + 2^-53: an f64 midpoint
rows = [(u1, u2, 2.0**-200), (u1, u2, -2.0**-200), (-u1, u2, 2.0**-200), (-u1, u2, -2.0**-200),
        (u1, u2, 2.0**-1074), (u1, -u2, -2.0**-1074),
        (2.0**600 * 1.25, 2.0**420, -(2.0**1020) * 1.25 * (1 + 2.0**-52)), (1.5 * 2.0**1023, 2.0, -np.finfo(np.float64).max),
        (2.0**600, 2.0**600, 1.0), (-(2.0**600), 2.0**600, 1.0), (2.0**-600, 2.0**-500, 2.0**-1000), (2.0**-600, 2.0**-500, -(2.0**-1000)),
        (2.0**-600, 3.0 * 2.0**-500, 1.0), (3.0, 5.0, 2.0**-1074), (1e-300, 1e-300, 0.0), (-1e-300, 1e-300, 0.0),
        (-1e-300, 1e-300, -0.0), (2.0, 3.0, -6.0), (-2.0, 3.0, 6.0), (0.0, 5.0, -0.0), (-0.0, 5.0, -0.0), (0.0, -5.0, 0.0),
        (math.inf, 0.0, 1.0), (math.inf, 2.0, -math.inf), (1e300, 1e300, -math.inf), (2.0, math.nan, 1.0), (2.0, 3.0, math.nan),
        (np.finfo(np.float64).max, 2.0, -np.finfo(np.float64).max), (2.0**-1074, 0.5, 0.0), (2.0**-1074, 2.0**-1074, 2.0**-1074),
        (1.0 + 2.0**-52, 1.0 - 2.0**-53, -1.0)]
M = 4096
rng = np.random.default_rng(9)
xa = rng.standard_normal(M) * np.exp2(rng.integers(-60, 60, M))
xb = rng.standard_normal(M) * np.exp2(rng.integers(-60, 60, M))
xc = rng.standard_normal(M) * np.exp2(rng.integers(-60, 60, M))
near = slice(1000, 2000)  # cancellation: c next to -a * b
xc[near] = -(xa[near] * xb[near]) * (1 + rng.integers(-8, 9, 1000) * 2.0**-52)
wide = slice(2000, 2600)  # exponents over the whole range
xa[wide] = rng.uniform(1, 2, 600) * np.exp2(rng.integers(-1000, 1000, 600)) * rng.choice([-1, 1], 600)
xb[wide] = rng.uniform(1, 2, 600) * np.exp2(rng.integers(-1000, 1000, 600)) * rng.choice([-1, 1], 600)
xc[wide] = rng.uniform(1, 2, 600) * np.exp2(rng.integers(-1070, 1020, 600)) * rng.choice([-1, 1], 600)
tiny = slice(2600, 3000)  # results below 2^-1022: tiny products and c, and cancellation down there
xa[tiny] = rng.uniform(1, 2, 400) * np.exp2(rng.integers(-560, -500, 400)) * rng.choice([-1, 1], 400)
xb[tiny] = rng.uniform(1, 2, 400) * np.exp2(rng.integers(-560, -500, 400))
xc[tiny] = rng.integers(-2**40, 2**40, 400) * 2.0**-1074
xc[2800:3000] = -(xa[2800:3000] * xb[2800:3000]) * (1 + rng.integers(-4, 5, 200) * 2.0**-52)
# midpoints of the subnormal grid: a * b = P 2^-1075 with P within 2^-51 of 3 (or of 1), c = 2^-1073,
# so that a * b + c lies just off (3 + 2) 2^-1075 or (1 + 2) 2^-1075, a midpoint between two multiples
# of 2^-1074, on either side; either sign
mids = []
while len(mids) < 96:
    mb = 1.5 + rng.random() * 0.5
    for ma in np.nextafter(3.0 / mb, [0.0, 4.0, 4.0, 0.0], dtype=np.float64)[:2].tolist() + [3.0 / mb]:
        P = F(ma) * F(mb)
        if P != 3 and abs(P - 3) < F(2)**-51 and len(mids) < 96:
            sg = 1.0 if len(mids) % 2 else -1.0
            mids.append((sg * ma * 2.0**-537, mb * 2.0**-538, sg * 2.0**-1073))
for i in range(32):
    mids.append(((1 + (i % 4) * 2.0**-52) * 2.0**-537, (1 + (i // 4) * 2.0**-52) * 2.0**-538, 2.0**-1073 * (1 if i % 3 else -1)))
for i, (x, y, z) in enumerate(mids):
    xa[3000 + i], xb[3000 + i], xc[3000 + i] = x, y, z
for i, (x, y, z) in enumerate(rows):
    xa[i], xb[i], xc[i] = x, y, z
oa, ob = np.zeros(M), np.zeros(M)
fmas[(1,)](xa, xb, xc, oa, ob, N=M)
with np.errstate(all="ignore"):
    want64 = np.array([exact_f64(float(x), float(y), float(z)) for x, y, z in zip(xa, xb, xc)])
    twice64 = xa * xb + xc
if (twice64[:4].view(np.int64) == want64[:4].view(np.int64)).all():
    sys.exit("the f64 tie lanes do not tell one rounding from two")
sub = np.abs(want64) < 2.0**-1022
p64 = np.zeros(M)
ptx_fmas[(1,)](xa, xb, xc, p64, N=M, F64=True)
for name, got in (("tl.fma", oa), ("libdevice.fma", ob), ("inline PTX fma.rn.f64", p64)):
    check(name + " f64, one rounding", got, want64, bits=True)
    check(name + " f64 below 2^-1022 (%d lanes)" % int(sub.sum()), got[sub], want64[sub], bits=True)
finish("fma: %d f32 lanes rounded once (%d where rounding the f64 sum again would differ); %d f64 lanes (%d where "
       "a * b + c rounds twice differently)" % (N, int((twice != want).sum()), M, int((twice64.view(np.int64) != want64.view(np.int64)).sum())))
