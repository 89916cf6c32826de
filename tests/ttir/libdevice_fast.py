"""libdevice's fast_* f32 functions and `x.to(tl.float16, fp_downcast_rounding="rtne")` on both
readers: the fast functions as the accurate ones (within f32 rounding of numpy's), the explicit
round-to-nearest-even downcast as the plain one (bit for bit numpy's astype)."""
import sys

import numpy as np
import triton
import triton.language as tl

try:
    from triton.language.extra.cuda.libdevice import fast_expf, fast_logf, fast_sinf, fast_powf, fast_dividef
except ModuleNotFoundError:
    from triton.language.extra.libdevice import fast_expf, fast_logf, fast_sinf, fast_powf, fast_dividef


@triton.jit
def fast(x, out, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.store(out + tl.arange(0, N), fast_expf(v))
    tl.store(out + N + tl.arange(0, N), fast_logf(v))
    tl.store(out + 2 * N + tl.arange(0, N), fast_sinf(v))
    tl.store(out + 3 * N + tl.arange(0, N), fast_powf(v, 1.5))
    tl.store(out + 4 * N + tl.arange(0, N), fast_dividef(v, 3.0))


@triton.jit
def downcast(x, out, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.store(out + tl.arange(0, N), v.to(tl.float16, fp_downcast_rounding="rtne"))


N = 64
x = np.linspace(0.1, 4.0, N).astype(np.float32)
out = np.zeros(5 * N, np.float32)
fast[(1,)](x, out, N=N)
want = np.concatenate([np.exp(x), np.log(x), np.sin(x), np.power(x, np.float32(1.5)), x / np.float32(3)]).astype(np.float32)
failures = []
if not np.allclose(out, want, rtol=2e-6, atol=1e-7):
    failures.append("fast_*: max error %g" % np.abs(out - want).max())
h = np.zeros(N, np.float16)
xs = (np.random.default_rng(1).standard_normal(N) * 1000).astype(np.float32)
downcast[(1,)](xs, h, N=N)
if not np.array_equal(h.view(np.uint16), xs.astype(np.float16).view(np.uint16)):
    failures.append("fp_downcast_rounding='rtne': differs from numpy's rounding")
if failures:
    sys.exit("\n".join(failures))
print("libdevice_fast: fast_* functions and the rtne downcast match numpy")
