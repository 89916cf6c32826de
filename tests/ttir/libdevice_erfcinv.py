"""libdevice's erfcinv, erfcx and normcdfinv (f32 and f64) read through Triton's frontend, checked against
mpmath at 50 digits on random and edge inputs (0, -0, subnormals, the ends of the domain, infinities,
NaN, values next to 1 and 2, tails down to the smallest subnormal). Prints each function's largest
error in ulps of the result type and fails past the documented bound (docs/triton.md): f32 results
within 1 ulp, f64 results within 8 ulps. Needs mpmath (skipped without it)."""
import math
import sys

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice as ld

import dtsim  # noqa: F401 (python -m dtsim)

try:
    import mpmath
except ImportError:
    print("skipped: mpmath is not installed")
    sys.exit(77)
mpmath.mp.dps = 50


@triton.jit
def inverse_fns(x_ptr, a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(a_ptr + o, ld.erfcinv(x))
    tl.store(b_ptr + o, ld.erfcx(x))
    tl.store(c_ptr + o, ld.normcdfinv(x))


def ref_erfcinv(y):
    if not (0 <= y <= 2) or math.isnan(y):
        return mpmath.nan
    if y == 0:
        return mpmath.inf
    if y == 2:
        return -mpmath.inf
    if y == 1:
        return mpmath.mpf(0)
    y = mpmath.mpf(y)
    s, sign = (y, 1) if y < 1 else (2 - y, -1)
    guess = math.sqrt(max(-math.log(float(s)), 1e-30)) if s < 0.5 else float(mpmath.erfinv(1 - s))
    return sign * mpmath.findroot(lambda x: mpmath.log(mpmath.erfc(x)) - mpmath.log(s), guess, tol=mpmath.mpf(10) ** -45)


def ref_erfcx(x):
    if math.isnan(x):
        return mpmath.nan
    if x == math.inf:
        return mpmath.mpf(0)
    if x == -math.inf:
        return mpmath.inf
    x = mpmath.mpf(x)
    if x > 1e8:  # the asymptotic series, its next term below 1e-48 here (mpmath's erfc gives up)
        return (1 - 1 / (2 * x * x) + 3 / (4 * x ** 4)) / (x * mpmath.sqrt(mpmath.pi))
    return mpmath.exp(x * x) * mpmath.erfc(x)


def ulp_error(got, want, dtype):
    """|got - want| in ulps of want in dtype (the subnormal spacing below the normal range)."""
    info = np.finfo(dtype)
    if mpmath.isnan(want):
        return 0.0 if math.isnan(got) else math.inf
    big = float(info.max)
    if mpmath.isinf(want) or abs(want) > big:
        return 0.0 if math.isinf(got) and (got > 0) == (want > 0) else math.inf
    if math.isnan(got) or math.isinf(got):
        return math.inf
    a = abs(want)
    e = max(int(mpmath.floor(mpmath.log(a, 2))) if a > 0 else -100000, int(np.log2(float(info.tiny))))
    ulp = mpmath.mpf(2) ** (e - info.nmant)
    return float(abs(mpmath.mpf(got) - want) / ulp)


rng = np.random.default_rng(16)
N = 1024
tiny64 = np.exp(rng.uniform(-744, -1, 160))
edges = [0.0, -0.0, 1.0, 2.0, 0.5, 1.5, -1e-30, 2.5, math.nan, math.inf, -math.inf, 5e-324, 1e-310, 2.0**-1022, 1e-300,
         1 - 2.0**-53, 1 + 2.0**-52, 2 - 2.0**-52, 1e-45, 1.4e-45, 1.17e-38, 0.999999, 1.000001, 26.0, 27.3, -26.0, -27.0,
         12.0, 11.999999, 1e6, 1e300, -5.0, 3.0, 1e-8, -1e-8]
xs64 = np.concatenate([np.float64(edges), rng.uniform(0, 2, 300), tiny64, 2 - np.exp(rng.uniform(-36, -0.7, 120)),
                       rng.uniform(-27, 30, 200), np.exp(rng.uniform(-20, 300, 40))])
xs64 = np.concatenate([xs64, rng.uniform(0, 1, N - len(xs64))])
failures = []
for dtype, bound in ((np.float32, 1.0), (np.float64, 8.0)):
    with np.errstate(over="ignore", under="ignore"):
        x = xs64.astype(dtype)
    if dtype == np.float32:  # f32 tails and subnormals of their own
        x[200:360] = np.exp(rng.uniform(-103, -1, 160)).astype(np.float32)
    outs = [np.zeros(N, dtype) for _ in range(3)]
    inverse_fns[(1,)](x, *outs, N=N)
    refs = (ref_erfcinv, ref_erfcx, lambda p: -mpmath.sqrt(2) * ref_erfcinv(2 * p) if not math.isnan(p) and 2 * p <= 2 else mpmath.nan)
    for name, out, ref in zip(("erfcinv", "erfcx", "normcdfinv"), outs, refs):
        worst, at = 0.0, None
        for xi, gi in zip(x, out):
            err = ulp_error(float(gi), ref(float(xi)), dtype)
            if err > worst:
                worst, at = err, float(xi)
        print("%-10s %s: max error %.3g ulp%s" % (name, np.dtype(dtype).name, worst, "" if at is None else " (at %r)" % at))
        if worst > bound:
            failures.append("%s %s" % (name, np.dtype(dtype).name))
if failures:
    sys.exit("past the documented bound: " + ", ".join(failures))
print("libdevice: erfcinv, erfcx and normcdfinv within their bounds (f32 1 ulp, f64 8 ulps)")
