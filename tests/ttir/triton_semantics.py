"""Semantics Triton's own language tests check, on dtsim's kernels: tl.maximum / tl.minimum (propagate_nan
NONE: IEEE maxNum / minNum), tl.max / tl.min / tl.argmax / tl.argmin and a running maximum
(associative_scan of tl.maximum) over NaN lanes (left out; all-NaN gives NaN); tl.maximum(...,
propagate_nan=ALL) still NaN; a one-element block made a scalar (tt.unsplat); a sum of i1 in i1 (modulo
2); int_to_ptr of an address in no buffer, selected and given back without an access; a tensor
descriptor over int32 (its block type spelled si32); a kernel parameter named `fn`; an integer argument
in [2^63, 2^64) (Triton's u64); an f64 tl.dot with out_dtype=tl.float32 (accumulated in f64, rounded
once); a launch's `asm` without 'ttgir' (a KeyError that says why); a (value, index) tl.reduce whose
combine looks like tl.argmax's but is not (NaN first, ties to the last index) run as written. A launch
with num_stages=0; i1 values compared (unsigned: true above false) and their argmax / argmin. Checked
against numpy."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def _fmax(a, b):
    return tl.maximum(a, b)


@triton.jit
def nans(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    y = tl.load(y_ptr + o)
    tl.store(out_ptr + o, tl.minimum(x, y))
    tl.store(out_ptr + N + o, tl.maximum(x, y))
    tl.store(out_ptr + 2 * N + o, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 3 * N + o, tl.associative_scan(x, 0, _fmax))
    tl.store(out_ptr + 4 * N + 0, tl.max(x, axis=0))
    tl.store(out_ptr + 4 * N + 1, tl.min(x, axis=0))
    tl.store(out_ptr + 4 * N + 2, tl.argmax(x, axis=0).to(tl.float32))
    tl.store(out_ptr + 4 * N + 3, tl.argmin(x, axis=0).to(tl.float32))
    tl.store(out_ptr + 4 * N + 4, tl.max(x * float("nan"), axis=0))  # every lane NaN


@triton.jit
def scalars(x_ptr, a_ptr, out_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, 1))
    s = tl.reshape(v, ())
    tl.store(out_ptr, s * 2.0)
    b = tl.load(x_ptr + tl.arange(0, N)) > 0
    tl.store(out_ptr + 1, tl.sum(b, axis=0, dtype=tl.int1).to(tl.float32))
    o = tl.arange(0, N)
    p = tl.load(a_ptr + o).to(tl.pointer_type(tl.float32))  # addresses in no buffer, never accessed
    q = tl.where(o % 2 == 0, p, p + 1)
    tl.store(a_ptr + o, q.to(tl.int64))


@triton.jit
def named_fn(x_ptr, fn: tl.constexpr, N: tl.constexpr):  # a parameter named as the launcher's own
    o = tl.arange(0, N)
    if fn == "neg":
        tl.store(x_ptr + o, -tl.load(x_ptr + o))


@triton.jit
def u64_arg(V, out_ptr):  # V >= 2^63: Triton types it uint64
    tl.store(out_ptr, (V >> 60).to(tl.int64))
    tl.store(out_ptr + 1, (V % 1000).to(tl.int64))
    tl.store(out_ptr + 2, (V > 5).to(tl.int64))


@triton.jit
def _nan_first_max(a, ai, b, bi):  # a NaN wins; ties to the higher index: not tl.argmax's combine
    pick = (a > b) | ((a != a) & (b == b)) | ((a == b) & (ai > bi)) | ((a != a) & (b != b) & (ai > bi))
    return tl.where(pick, a, b), tl.where(pick, ai, bi)


@triton.jit
def pair_reduces(x_ptr, v_ptr, i_ptr, N: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r * N + c)
    v, i = tl.reduce((x, c), 0, _nan_first_max)
    tl.store(v_ptr + r, v)
    tl.store(i_ptr + r, i)
    tl.store(i_ptr + 4 + r, tl.argmax(x, 0))


@triton.jit
def bools(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o) != 0
    b = tl.load(b_ptr + o) != 0
    tl.store(out_ptr + o, (a > b).to(tl.int32) + 2 * (a <= b).to(tl.int32))  # i1 compared unsigned
    tl.store(out_ptr + N, tl.argmax(b, 0))
    tl.store(out_ptr + N + 1, tl.argmin(a, 0))
    tl.store(out_ptr + N + 2, tl.max(a, 0).to(tl.int32))


@triton.jit
def dot64(x_ptr, y_ptr, z_ptr, N: tl.constexpr):  # f64 operands into an f32 result (out_dtype)
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + r[None, :])
    y = tl.load(y_ptr + r[:, None] * N + r[None, :])
    tl.store(z_ptr + r[:, None] * N + r[None, :], tl.dot(x, y, out_dtype=tl.float32))


@triton.jit
def described(src, dst, N: tl.constexpr):
    d_in = tl.make_tensor_descriptor(base=src, shape=[N], strides=[1], block_shape=[N])
    d_out = tl.make_tensor_descriptor(base=dst, shape=[N], strides=[1], block_shape=[N])
    d_out.store([0], d_in.load([0]) + 1)


N = 8
nan = np.float32(np.nan)
x = np.float32([nan, 1.0, 8.0, -3.0, nan, 2.0, -7.0, 4.0])
y = np.float32([2.0, nan, 0.5, 5.0, nan, 1.0, -8.0, 9.0])
out = np.zeros(5 * N, np.float32)
nans[(1,)](x, y, out, N=N, num_stages=0)  # num_stages=0: no pipelining, as Triton takes it


def same(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and bool(((a == b) | (np.isnan(a) & np.isnan(b))).all())


checks = [
    ("minimum", out[:N], np.fmin(x, y)),
    ("maximum", out[N:2 * N], np.fmax(x, y)),
    ("maximum (propagate_nan=ALL)", out[2 * N:3 * N], np.maximum(x, y)),
    ("cummax", out[3 * N:4 * N], [nan] + list(np.fmax.accumulate(np.where(np.isnan(x), -np.inf, x))[1:])),
    ("max, min, argmax, argmin, max of all NaN", out[4 * N:4 * N + 5], [8.0, -7.0, 2.0, 6.0, nan]),
]
for name, got, want in checks:
    if not same(got, want):
        sys.exit("%s: got %s, want %s" % (name, got, np.float32(want)))

xs = np.float32([3.5, 1, -2, 3, 0, 5, -2, 7])  # 5 positive: the i1 sum is 1
addrs = np.int64([8, 16, 0x100000000, 40, 1 << 40, 64, 72, 80])
res = np.zeros(2, np.float32)
want_a = np.where(np.arange(N) % 2 == 0, addrs, addrs + 4)
scalars[(1,)](xs, addrs, res, N=N)
if not same(res, [7.0, 1.0]):
    sys.exit("unsplat / i1 sum: got %s, want [7, 1]" % res)
if not np.array_equal(addrs, want_a):
    sys.exit("pointers in no buffer: got %s, want %s" % (addrs, want_a))

src = np.arange(16, dtype=np.int32)
dst = np.zeros(16, np.int32)
triton.set_allocator(lambda size, align, stream: np.empty(size, np.int8))
described[(1,)](src, dst, N=16)
if not np.array_equal(dst, src + 1):
    sys.exit("int32 tensor descriptor: %s" % dst)
a64 = np.random.default_rng(1).standard_normal((16, 16))
b64 = np.random.default_rng(2).standard_normal((16, 16))
z32 = np.zeros((16, 16), np.float32)
dot64[(1,)](a64, b64, z32, N=16)
if not np.array_equal(z32, (a64 @ b64).astype(np.float32)):
    sys.exit("f64 dot into f32: max difference %g" % np.abs(z32 - (a64 @ b64).astype(np.float32)).max())
v = np.arange(8, dtype=np.float32)
handle = named_fn[(1,)](v, fn="neg", N=8)
try:
    handle.asm["ttgir"]
    sys.exit("asm['ttgir'] of a kernel run by dtsim: no KeyError")
except KeyError as e:
    if "Triton's GPU compiler" not in str(e) or "tt.func" not in handle.asm["ttir"]:
        sys.exit("asm: %s" % e)
if not np.array_equal(v, -np.arange(8, dtype=np.float32)):
    sys.exit("a parameter named fn: %s" % v)
px = np.float32([[1, 3, 2, 3, 0, 3, 1, 1], [1, nan, 2, 9, 0, 3, 1, 1], [nan, 0, 0, 0, nan, 0, 0, 0], [5, 5, 5, 5, 5, 5, 5, 5]])
pv, pi = np.zeros(4, np.float32), np.zeros(8, np.int32)
pair_reduces[(4,)](px, pv, pi, N=8)
# the combine as written (NaN first, ties to the last); tl.argmax leaves NaN out, ties to the first
if not same(pv, [3, nan, nan, 5]) or list(pi) != [5, 1, 4, 7, 1, 3, 1, 0]:
    sys.exit("a pair reduce that is not tl.argmax's: got %s %s" % (pv, pi))
ba, bb = np.int32([0, 0, 1, 1, 1, 0, 1, 1]), np.int32([0, 1, 0, 1, 0, 0, 1, 0])
bout = np.zeros(N + 3, np.int32)
bools[(1,)](ba, bb, bout, N=N)
want_b = list((ba > bb).astype(int) + 2 * (ba <= bb).astype(int)) + [1, 0, 1]
if list(bout) != want_b:
    sys.exit("i1 compares and argmax: got %s, want %s" % (list(bout), want_b))
for big in (2**64 - 1, 2**63 + 1001):
    got64 = np.zeros(3, np.int64)
    u64_arg[(1,)](big, got64)
    if list(got64) != [int(big) >> 60, int(big) % 1000, 1]:
        sys.exit("u64 argument %d: got %s" % (big, got64))
print("maxNum/minNum over NaN lanes, unsplat, an i1 sum, pointers in no buffer and an int32 descriptor match numpy")
