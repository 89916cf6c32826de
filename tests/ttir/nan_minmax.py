"""tl.minimum / tl.maximum on floats with NaN operands, through whichever reader `import triton` gives
(Triton's TTIR, or dtsim's own .py reader with DTSIM_STANDIN=1): by default (propagate_nan=NONE) IEEE
minNum / maxNum, the other operand where one is NaN; with tl.PropagateNan.ALL a NaN operand gives NaN;
integers as before. Both run as the IR's minnum/maxnum and minimum/maximum ops. Checked against numpy's
fmin/fmax and minimum/maximum."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def minmax(x_ptr, y_ptr, i_ptr, out_ptr, iout_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    y = tl.load(y_ptr + o)
    tl.store(out_ptr + o, tl.minimum(x, y))
    tl.store(out_ptr + N + o, tl.maximum(x, y))
    tl.store(out_ptr + 2 * N + o, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 3 * N + o, tl.maximum(x, y, tl.PropagateNan.ALL))
    tl.store(out_ptr + 4 * N + o, tl.maximum(x.to(tl.float16), 0.5).to(tl.float32))  # a NaN lane gives 0.5
    i = tl.load(i_ptr + o)
    tl.store(iout_ptr + o, tl.maximum(i, 3) + tl.minimum(i, -2))


N = 8
nan = np.float32(np.nan)
x = np.float32([nan, 1.0, 8.0, -3.0, nan, 2.0, -0.5, 4.0])
y = np.float32([2.0, nan, 0.5, 5.0, nan, 1.0, -8.0, 9.0])
iv = np.int32([-5, -2, 0, 1, 3, 7, -100, 100])
out = np.zeros(5 * N, np.float32)
iout = np.zeros(N, np.int32)
minmax[(1,)](x, y, iv, out, iout, N=N)


def same(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and bool(((a == b) | (np.isnan(a) & np.isnan(b))).all())


checks = [
    ("minimum (NONE)", out[:N], np.fmin(x, y)),
    ("maximum (NONE)", out[N:2 * N], np.fmax(x, y)),
    ("minimum (ALL)", out[2 * N:3 * N], np.minimum(x, y)),
    ("maximum (ALL)", out[3 * N:4 * N], np.maximum(x, y)),
    ("maximum of f16 and a constant", out[4 * N:], np.fmax(x.astype(np.float16), np.float16(0.5)).astype(np.float32)),
    ("integers", iout, np.maximum(iv, 3) + np.minimum(iv, -2)),
]


@triton.jit
def clamp_nan(a, b, c, N: tl.constexpr):
    # tl.clamp's default propagate_nan=NONE: IEEE maxNum then minNum, so a NaN gives a bound
    # (min(lo, hi) where lo > hi); ALL propagates it
    bound = tl.load(b)
    v = tl.load(a + tl.arange(0, N))
    tl.store(c + tl.arange(0, N), tl.clamp(v, -bound, bound))
    tl.store(c + N + tl.arange(0, N), tl.clamp(v, -bound, bound, propagate_nan=tl.PropagateNan.ALL))


cv = np.array([np.nan, 2, -3, 0.25], np.float32)
for bv in (0.5, -0.5):
    cout = np.zeros(8, np.float32)
    clamp_nan[(1,)](cv, np.array([bv], np.float32), cout, N=4)
    lo, hi = np.float32(-bv), np.float32(bv)
    checks.append(("clamp %g..%g (NONE)" % (lo, hi), cout[:4], np.fmin(np.fmax(cv, lo), hi)))
    checks.append(("clamp %g..%g (ALL)" % (lo, hi), cout[4:], np.minimum(np.maximum(cv, lo), hi)))
bad = [name for name, got, want in checks if not same(got, want)]
for name, got, want in checks:
    print("%-32s %s" % (name, "ok" if name not in bad else "FAILED: got %s, want %s" % (got, np.float32(want))))
if bad:
    sys.exit(1)
print("tl.minimum / tl.maximum over NaN operands match numpy (%s)" % ("dtsim's .py reader" if triton.__version__.endswith("+dtsim") else "Triton's TTIR"))
