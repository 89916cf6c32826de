"""libdevice's Bessel functions j0 j1 y0 y1 jn yn cyl_bessel_i0 cyl_bessel_i1 (f32 and f64) read through
Triton's frontend, checked against mpmath at 40 digits on random and edge inputs (0, -0, subnormals,
negative x, the first zeros of J0 / J1 / Y0 / Y1, the ends of each computed range (1, 25), huge x,
infinities, NaN; orders -2 .. 60 for jn / yn). The error is measured as
|got - f(x)| / max(|f(x)|, min(1, sqrt(2 / (pi |x|)))): relative where f is not near a zero, absolute
against the envelope of the oscillation near its zeros (cyl_bessel_i*: relative). Prints each
function's largest error and fails past the documented bound (docs/triton.md): f64 1e-14 (jn and yn
1e-13), f32 2^-24 + the f64 bound (the f64 value rounded once). Needs mpmath (skipped without it)."""
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
mpmath.mp.dps = 40


@triton.jit
def bessel_fns(x_ptr, n_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    n = tl.load(n_ptr + o)
    tl.store(out_ptr + 0 * N + o, ld.j0(x))
    tl.store(out_ptr + 1 * N + o, ld.j1(x))
    tl.store(out_ptr + 2 * N + o, ld.y0(x))
    tl.store(out_ptr + 3 * N + o, ld.y1(x))
    tl.store(out_ptr + 4 * N + o, ld.cyl_bessel_i0(x))
    tl.store(out_ptr + 5 * N + o, ld.cyl_bessel_i1(x))
    tl.store(out_ptr + 6 * N + o, ld.jn(n, x))
    tl.store(out_ptr + 7 * N + o, ld.yn(n, x))


def ref(name, n, x):
    if math.isnan(x):
        return mpmath.nan
    if name in ("y0", "y1", "yn"):
        if x < 0 or (name == "yn" and n < 0):
            return mpmath.nan
        if x == 0:
            return -mpmath.inf
    if name == "jn" and n < 0:
        return mpmath.nan
    if math.isinf(x):
        if name.startswith("cyl"):  # I0 even, I1 odd
            return -mpmath.inf if name == "cyl_bessel_i1" and x < 0 else mpmath.inf
        return mpmath.mpf(0)
    order = {"j0": 0, "j1": 1, "y0": 0, "y1": 1, "cyl_bessel_i0": 0, "cyl_bessel_i1": 1}.get(name, n)
    if name.startswith("cyl"):
        return mpmath.besseli(order, x)
    if name[0] == "j":
        return mpmath.besselj(order, x)
    return mpmath.bessely(order, x)


def error(name, got, want, x, dtype):
    if mpmath.isnan(want):
        return 0.0 if math.isnan(got) else math.inf
    if mpmath.isinf(want) or abs(want) > float(np.finfo(dtype).max):
        return 0.0 if math.isinf(got) and (got > 0) == (want > 0) else math.inf
    if math.isnan(got) or math.isinf(got):
        return math.inf
    scale = abs(want)
    if not name.startswith("cyl") and x != 0:
        scale = max(scale, min(mpmath.mpf(1), mpmath.sqrt(2 / (mpmath.pi * abs(x)))))
    if scale == 0:
        return 0.0 if got == 0 else math.inf
    tiny = float(np.finfo(dtype).smallest_subnormal)
    if scale < tiny:  # underflowed results: within the subnormal spacing
        return 0.0 if abs(got - want) <= tiny else math.inf
    return float(abs(mpmath.mpf(got) - want) / scale)


rng = np.random.default_rng(7)
N = 512
zeros = [2.404825557695773, 5.520078110286311, 3.831705970207512, 0.8935769662791675, 3.957678419314858, 2.197141326031017, 5.429681040794135]
edges = [0.0, -0.0, 1.0, 0.9999999, 25.0, 24.999999, 1e-300, 5e-324, -1e-300, 1e-8, -3.0, -30.0, 1e6, -1e6, 1e15, 1e20,
         700.0, 713.9, 714.0, -714.0, 50.0, 100.0, math.nan, math.inf, -math.inf, 2.0, 8.0, 20.0, 24.0, 26.0] + zeros
xs = np.concatenate([np.float64(edges), rng.uniform(-40, 40, 260), np.exp(rng.uniform(-40, 6, 120)), np.exp(rng.uniform(3, 40, 40))])
xs = np.concatenate([xs, rng.uniform(0, 30, N - len(xs))])
ns = rng.integers(-2, 61, N).astype(np.int32)
ns[:40] = np.int32([0, 1, 2, 3, 5, 10, 40, 60, -1, 2] * 4)
names = ["j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1", "jn", "yn"]
failures = []
for dtype, eps in ((np.float32, 2.0**-24), (np.float64, 0.0)):
    with np.errstate(over="ignore", under="ignore"):
        x = xs.astype(dtype)
    out = np.zeros(8 * N, dtype)
    bessel_fns[(1,)](x, ns, out, N=N)
    out = out.reshape(8, N)
    for k, name in enumerate(names):
        bound = eps + (1e-13 if name in ("jn", "yn") else 1e-14)
        worst, at = 0.0, None
        for i in range(N):
            xi, ni = float(x[i]), int(ns[i])
            err = error(name, float(out[k][i]), ref(name, ni, xi), xi, dtype)
            if err > worst:
                worst, at = err, (ni, xi) if name in ("jn", "yn") else xi
        print("%-13s %s: max error %.3g%s" % (name, np.dtype(dtype).name, worst, "" if at is None else " (at %r)" % (at,)))
        if worst > bound:
            failures.append("%s %s" % (name, np.dtype(dtype).name))
if failures:
    sys.exit("past the documented bound: " + ", ".join(failures))
print("libdevice: the Bessel functions within their bounds")
