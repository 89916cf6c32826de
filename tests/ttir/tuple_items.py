"""A tuple or list holds the values its items had when it was made: a later assignment to a name an
item was read from (`a = a * 2`), or to a value an item's expression read (`w`, loaded again in every
round of an unrolled tl.static_range while `vv = vv + [vv[r] * w + 1.0]` grows a list), does not change
it; `a, b = -b, a` reads both values before assigning either (in straight code and in a loop). Both
readers, against numpy."""
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def rebinding(X, Out, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(X + i)
    t = (a, 1)
    a = a * 2.0
    tl.store(Out + i, t[0] + a)


@triton.jit
def growing(X, W, Out, R: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    vv = [tl.load(X + i)]
    for r in tl.static_range(R):
        w = tl.load(W + r)
        vv = vv + [vv[r] * w + 1.0]
    tl.store(Out + i, vv[R])


@triton.jit
def swaps(X, Out, N: tl.constexpr, R):
    i = tl.arange(0, N)
    a = tl.load(X + i)
    b = a * 10.0
    a, b = -b, a  # (a + bi) * i, as a complex multiply writes it
    for _ in range(R):
        a, b = b, a + b
    tl.store(Out + i, a)
    tl.store(Out + N + i, b)


x = np.arange(8, dtype=np.float32) - 3
out = np.zeros(8, np.float32)
failures = []
rebinding[(1,)](x, out, N=8)
if not np.array_equal(out, x + 2 * x):
    failures.append("rebinding: %s, want %s" % (out, x + 2 * x))
w = np.array([0.5, -2.0, 3.0], np.float32)
growing[(1,)](x, w, out, R=3, N=8)
want = x.copy()
for wi in w:
    want = want * wi + np.float32(1)
if not np.array_equal(out, want):
    failures.append("growing: %s, want %s" % (out, want))
sw = np.zeros(16, np.float32)
swaps[(1,)](x, sw, N=8, R=3)
a, b = -10 * x, x.copy()
for _ in range(3):
    a, b = b, a + b
if not np.array_equal(sw, np.concatenate([a, b])):
    failures.append("swaps: %s, want %s" % (sw, np.concatenate([a, b])))
if failures:
    sys.exit("\n".join(failures))
print("tuple_items: tuples keep the values their items had")
