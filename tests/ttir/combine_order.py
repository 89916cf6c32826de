"""tl.reduce with a combine function folds each line as a tree of adjacent pairs, the order kept, as
the GPU's reduction associates it: a float sum through a combine function has a rounding error that
grows with log n (1.0 followed by 255 values of 1e-8 sums to about 1.0000025, where a left-to-right
fold stays at exactly 1.0), and a combine that is associative but not commutative (the last nonzero
element; a (value, index) pair whose ties go to the later index) still gives the left-to-right
answer. Scans (tl.associative_scan) stay left to right."""
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def add(a, b):
    return a + b


@triton.jit
def last_nonzero(a, b):
    return tl.where(b != 0, b, a)


@triton.jit
def max_last(a, ai, b, bi):
    take_b = (b > a) | ((b == a) & (bi > ai))
    return tl.where(take_b, b, a), tl.where(take_b, bi, ai)


@triton.jit
def reduce_kernel(x, sums, lasts, mx, mi, scan, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    tl.store(sums, tl.reduce(v, 0, add))
    tl.store(lasts, tl.reduce(tl.where(r % 7 == 3, r, 0), 0, last_nonzero))
    m, i = tl.reduce((tl.floor(v * 1e8 % 4), r), 0, max_last)
    tl.store(mx, m)
    tl.store(mi, i)
    tl.store(scan + r, tl.associative_scan(v, 0, add))


N = 256
x = np.full(N, 1e-8, np.float32)
x[0] = 1.0
out = [np.zeros(1, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, np.int32), np.zeros(N, np.float32)]
reduce_kernel[(1,)](x, *out, N=N)
failures = []
exact = 1.0 + 255e-8
if not abs(float(out[0][0]) - exact) < 1e-6 or out[0][0] == np.float32(1.0):
    failures.append("sum through a combine function: %.9g (exact %.9g; a left-to-right fold gives 1.0)" % (out[0][0], exact))
want_last = max(r for r in range(N) if r % 7 == 3)
if int(out[1][0]) != want_last:
    failures.append("last nonzero: %d, want %d" % (out[1][0], want_last))
keys = np.floor(x.astype(np.float32) * np.float32(1e8) % 4)
want_i = max(i for i in range(N) if keys[i] == keys.max())
if float(out[2][0]) != keys.max() or int(out[3][0]) != want_i:
    failures.append("max with ties to the later index: (%g, %d), want (%g, %d)" % (out[2][0], out[3][0], keys.max(), want_i))
seq = np.float32(0)
want_scan = []
for v in x:
    seq = np.float32(seq + v)
    want_scan.append(seq)
if not np.array_equal(out[4], np.array(want_scan, np.float32)):
    failures.append("scan: not the left-to-right prefix sums")
if failures:
    sys.exit("\n".join(failures))
print("combine_order: reduces fold as a tree of adjacent pairs in order, scans left to right")
