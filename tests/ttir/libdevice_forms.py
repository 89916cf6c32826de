"""libdevice's round-to-nearest arithmetic, fast_* approximations and bit-level helpers through
Triton's TTIR (`tt.extern_elementwise`), checked against numpy: add_rn, sub_rn, mul_rn, div_rn,
rcp_rn, sqrt_rn (f32 and f64: IEEE results, exact), fast_expf, fast_exp10f, fast_logf, fast_log2f,
fast_log10f, fast_sinf, fast_cosf, fast_tanf, fast_powf, fast_dividef (computed as the accurate
functions), exp10, nearbyint and llrint (halves to even), saturatef (NaN gives 0), signbit (of -0.0
and of NaNs too), copysign and fma (also tl.fma: one rounding); and `-x`, whose -0.0 of +0.0 copysign relies on. Run with `python -m dtsim libdevice_forms.py`."""
import inspect
import sys
from fractions import Fraction

import numpy as np
import triton
import triton.language as tl
import triton.language.semantic
from triton.language.extra import libdevice as ld

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def rn_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[k, i] = the k-th round-to-nearest op of x[i] and y[i] (f32 or f64 by the arrays)"""
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    tl.store(out_ptr + 0 * n + offs, ld.add_rn(x, y), mask=m)
    tl.store(out_ptr + 1 * n + offs, ld.sub_rn(x, y), mask=m)
    tl.store(out_ptr + 2 * n + offs, ld.mul_rn(x, y), mask=m)
    tl.store(out_ptr + 3 * n + offs, ld.div_rn(x, y), mask=m)
    tl.store(out_ptr + 4 * n + offs, ld.rcp_rn(y), mask=m)
    tl.store(out_ptr + 5 * n + offs, ld.sqrt_rn(tl.abs(x)), mask=m)
    tl.store(out_ptr + 6 * n + offs, ld.copysign(x, y), mask=m)
    tl.store(out_ptr + 7 * n + offs, ld.nearbyint(x * 4), mask=m)
    tl.store(out_ptr + 8 * n + offs, ld.signbit(y).to(x.dtype), mask=m)
    tl.store(out_ptr + 9 * n + offs, ld.llrint(x * 4).to(x.dtype), mask=m)
    tl.store(out_ptr + 10 * n + offs, ld.exp10(x), mask=m)
    tl.store(out_ptr + 11 * n + offs, -x, mask=m)


@triton.jit
def fast_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    ax = tl.abs(x) + 0.5
    tl.store(out_ptr + 0 * n + offs, ld.fast_expf(x), mask=m)
    tl.store(out_ptr + 1 * n + offs, ld.fast_exp10f(x), mask=m)
    tl.store(out_ptr + 2 * n + offs, ld.fast_logf(ax), mask=m)
    tl.store(out_ptr + 3 * n + offs, ld.fast_log2f(ax), mask=m)
    tl.store(out_ptr + 4 * n + offs, ld.fast_log10f(ax), mask=m)
    tl.store(out_ptr + 5 * n + offs, ld.fast_sinf(x), mask=m)
    tl.store(out_ptr + 6 * n + offs, ld.fast_cosf(x), mask=m)
    tl.store(out_ptr + 7 * n + offs, ld.fast_tanf(x), mask=m)
    tl.store(out_ptr + 8 * n + offs, ld.fast_powf(ax, y), mask=m)
    tl.store(out_ptr + 9 * n + offs, ld.fast_dividef(x, y), mask=m)
    tl.store(out_ptr + 10 * n + offs, ld.saturatef(x), mask=m)


@triton.jit
def directed_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """f32 mul, div, rcp and sqrt rounded toward zero, down and up"""
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    tl.store(out_ptr + 0 * n + offs, ld.div_rz(x, y), mask=m)
    tl.store(out_ptr + 1 * n + offs, ld.div_rd(x, y), mask=m)
    tl.store(out_ptr + 2 * n + offs, ld.div_ru(x, y), mask=m)
    tl.store(out_ptr + 3 * n + offs, ld.mul_rz(x, y), mask=m)
    tl.store(out_ptr + 4 * n + offs, ld.mul_rd(x, y), mask=m)
    tl.store(out_ptr + 5 * n + offs, ld.mul_ru(x, y), mask=m)
    tl.store(out_ptr + 6 * n + offs, ld.rcp_rz(y), mask=m)
    tl.store(out_ptr + 7 * n + offs, ld.sqrt_rd(tl.abs(x)), mask=m)
    tl.store(out_ptr + 8 * n + offs, ld.sqrt_ru(tl.abs(x)), mask=m)


def directed_ref(exact, mode, near):
    """The f32 rounding toward zero ('z'), down ('d') or up ('u') of the exact value that `exact`
    compares with (exact.le(c): c <= it; exact.eq(c): c is it), near the value rounded to nearest."""
    if np.isnan(near):
        return near
    f = np.float32
    cands = [np.nextafter(f(near), f(-np.inf)), f(near), np.nextafter(f(near), f(np.inf))]
    down = max(c for c in cands if exact.le(c))  # the largest f32 <= the exact value
    up = down if exact.eq(down) else min(c for c in cands if not exact.le(c))  # the smallest f32 >= it
    if mode == "z":
        return down if down >= 0 else up
    return down if mode == "d" else up


class Exact:
    """A rational value, compared exactly with f32 values (infinities included)."""
    def __init__(self, fr):
        self.fr = fr

    def le(self, c):
        return c < 0 if np.isinf(c) else Fraction(float(c)) <= self.fr

    def eq(self, c):
        return not np.isinf(c) and Fraction(float(c)) == self.fr


class ExactSqrt(Exact):
    """sqrt of a rational value: c <= sqrt(a) when c <= 0 or c * c <= a"""
    def le(self, c):
        return c <= 0 or (not np.isinf(c) and Fraction(float(c)) ** 2 <= self.fr)

    def eq(self, c):
        return not np.isinf(c) and c >= 0 and Fraction(float(c)) ** 2 == self.fr


# Whether the installed Triton's frontend negates floats (arith.negf: -(+0.0) is -0.0) or subtracts
# them from zero (earlier versions): dtsim follows the TTIR it is given.
FNEG = "create_fneg" in inspect.getsource(triton.language.semantic)

rng = np.random.default_rng(11)
n = 200
for dt in (np.float32, np.float64):
    x = (rng.standard_normal(n) * 3).astype(dt)
    y = (rng.standard_normal(n) * 3).astype(dt)
    x[:7] = [0.125, -0.375, 0.625, -0.0, 2.5, 1.5, 0.0]  # x * 4 at halves: ties to even
    y[:4] = [-0.0, 0.0, np.nan, -np.nan]
    out = np.zeros((12, n), dt)
    rn_ops[(1,)](x, y, out, n, BLOCK=256)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = [x + y, x - y, x * y, x / y, dt(1) / y, np.sqrt(np.abs(x)), np.copysign(x, y), np.rint(x * 4),
                np.signbit(y).astype(dt), np.rint(x * 4), np.power(dt(10), x), -x]
    if not FNEG:  # this Triton's frontend spells float -x as 0 - x: -(+0.0) is +0.0 there
        want[11] = dt(0) - x
    for k, (got, w) in enumerate(zip(out, want)):
        exact = k != 10
        same = np.array_equal(got, w, equal_nan=True) if exact else np.allclose(got, w, rtol=4e-7 if dt == np.float32 else 1e-15)
        if not same or (k in (6, 11) and not np.array_equal(np.signbit(got), np.signbit(w))):
            bad = np.argwhere(~np.isclose(got, w, equal_nan=True))[:3].ravel().tolist()
            sys.exit("%s op %d: got %s, want %s at %s" % (dt.__name__, k, got[bad], w[bad], bad))
print("add_rn sub_rn mul_rn div_rn rcp_rn sqrt_rn copysign nearbyint signbit llrint and -x (-0.0 of 0.0): exact, exp10 "
      "close (f32, f64)")

x = (rng.standard_normal(n) * 3).astype(np.float32)
y = (rng.standard_normal(n) * 3).astype(np.float32)
x[:3] = [np.nan, 1.5, -0.25]
out = np.zeros((11, n), np.float32)
fast_ops[(1,)](x, y, out, n, BLOCK=256)
ax = np.abs(x) + np.float32(0.5)
with np.errstate(invalid="ignore", over="ignore"):
    want = [np.exp(x), np.power(10.0, x), np.log(ax), np.log2(ax), np.log10(ax), np.sin(x), np.cos(x), np.tan(x),
            np.power(ax, y), x / y, np.where(x > 0, np.minimum(x, 1), 0)]
for k, (got, w) in enumerate(zip(out, want)):
    if not np.allclose(got, w.astype(np.float32), rtol=1e-6, atol=1e-6, equal_nan=True):
        bad = np.argwhere(~np.isclose(got, w, rtol=1e-6, atol=1e-6, equal_nan=True))[:3].ravel().tolist()
        sys.exit("fast op %d: got %s, want %s at %s" % (k, got[bad], w[bad], bad))
print("fast_expf fast_exp10f fast_logf fast_log2f fast_log10f fast_sinf fast_cosf fast_tanf fast_powf fast_dividef "
      "saturatef: match numpy")

x = (rng.standard_normal(n) * 3).astype(np.float32)
y = (rng.standard_normal(n) * 3).astype(np.float32)
x[:4] = [1.0, -1.0, 3.0e38, -0.0]
y[:4] = [3.0, 3.0, 0.25, 5.0]  # 1/3 and -1/3 inexact; 3e38 / 0.25 past the largest finite f32
out = np.zeros((9, n), np.float32)
directed_ops[(1,)](x, y, out, n, BLOCK=256)
with np.errstate(over="ignore", divide="ignore"):
    cases = [(lambda i: Exact(Fraction(float(x[i])) / Fraction(float(y[i]))), x / y, m) for m in "zdu"]
    cases += [(lambda i: Exact(Fraction(float(x[i])) * Fraction(float(y[i]))), x * y, m) for m in "zdu"]
    cases += [(lambda i: Exact(1 / Fraction(float(y[i]))), np.float32(1) / y, "z")]
    cases += [(lambda i: ExactSqrt(Fraction(float(abs(x[i])))), np.sqrt(np.abs(x)), m) for m in "du"]
for k, (ref, near, mode) in enumerate(cases):
    for i in range(n):
        w = directed_ref(ref(i), mode, near[i])
        if not (out[k, i] == w or (np.isnan(w) and np.isnan(out[k, i]))) or np.signbit(out[k, i]) != np.signbit(w):
            sys.exit("directed op %d (%s) at %d: x=%r y=%r got %r want %r" % (k, mode, i, x[i], y[i], out[k, i], w))
print("div_rz div_rd div_ru mul_rz mul_rd mul_ru rcp_rz sqrt_rd sqrt_ru (f32): match exact rationals")


@triton.jit
def fma_ops(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """tl.fma (math.fma) and libdevice.fma: one rounding of x * y + z"""
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    z = tl.load(z_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.fma(x, y, z), mask=m)
    tl.store(out_ptr + n + offs, ld.fma(x, y, z), mask=m)


for dt in (np.float32, np.float64):
    x = rng.standard_normal(n).astype(dt)
    y = rng.standard_normal(n).astype(dt)
    z = rng.standard_normal(n).astype(dt)
    x[0] = y[0] = 1 + 2.0**-12  # x * y = 1 + 2^-11 + 2^-24: a tie in f32, 2^-24 lost unless fused
    z[0] = -1
    out = np.zeros((2, n), dt)
    # (no fp fusion: the kernel's own multiplies and adds stay as written on backend='cuda')
    fma_ops[(1,)](x, y, z, out, n, BLOCK=256, enable_fp_fusion=False)
    if dt == np.float32:
        want = (x.astype(np.float64) * y + z).astype(np.float32)  # the product exact in f64: one rounding
    else:
        want = np.array([float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))) for a, b, c in zip(x, y, z)])  # one rounding
        if np.array_equal(want, x * y + z):
            sys.exit("f64: no lane tells one rounding from two")
    for k in range(2):
        if not np.array_equal(out[k], want):
            bad = np.argwhere(out[k] != want).ravel()[:3].tolist()
            sys.exit("%s fma %d: got %r, want %r at %s" % (dt.__name__, k, out[k][bad], want[bad], bad))
print("tl.fma and libdevice.fma: one rounding of x * y + z (f32: 1 + 2^-11 + 2^-24 - 1 kept; f64 too)")
