"""tl.fma (and libdevice's fma / fmaf) rounds once: f32 lanes whose f64 sum falls exactly on a tie
between two f32 values while the exact value does not (a * b = 1 + 2^-11 + 2^-24, a midpoint, plus
c = +-2^-70) give the f32 nearest to the exact value, not the tie's even neighbour that rounding the
f64 sum again would give; random lanes match the exact rational result too."""
import sys
from fractions import Fraction as F

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def fmas(a_ptr, b_ptr, c_ptr, o_ptr, q_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    c = tl.load(c_ptr + o)
    tl.store(o_ptr + o, tl.fma(a, b, c))
    tl.store(q_ptr + o, libdevice.fma(a, b, c))


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
fmas[(1,)](a, b, c, o, q, N=N)
want = np.array([nearest_f32(F(float(x)) * F(float(y)) + F(float(z))) for x, y, z in zip(a, b, c)], np.float32)
twice = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
if (twice[:4] == want[:4]).all():
    sys.exit("the tie lanes do not tell one rounding from two")
for name, got in (("tl.fma", o), ("libdevice.fma", q)):
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    if bad.size:
        sys.exit("%s: %d lanes differ from one rounding, e.g. lane %d: %r, want %r" % (name, bad.size, bad[0], got[bad[0]], want[bad[0]]))
print("fma: %d lanes rounded once (%d of them where rounding the f64 sum again would differ)" % (N, int((twice != want).sum())))
