"""Batched (3-D) dots in a small kernel of its own, checked against numpy: `tl.dot` of [B, M, K] and
[B, K, N] tiles with a [B, M, N] accumulator (f16, f32 with input_precision="ieee", int8 to int32),
and `tl.dot_scaled` of 3-D operands with 3-D e8m0 scales ([B, rows, K / 32]): e2m1 (packed two per
byte along K) with e4m3, and bf16 with e2m1, the scaled operands rounded to bf16 as Triton's
decomposition does. dtsim takes one 2-D dot per batch; each batch must equal numpy's own product.
On the interpreter each launch also runs through dtsim's own .py reader (the one used where Triton is
not installed), whose result must be bit-identical to the one read from Triton's TTIR."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import check, finish


@triton.jit
def bdot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
         IEEE: tl.constexpr, INT: tl.constexpr = False):
    bi = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + bi * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + bi * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    offs = bi * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    acc = tl.load(c_ptr + offs)
    if IEEE:
        acc = tl.dot(a, b, acc, input_precision="ieee")
    elif INT:  # an i32 accumulator named as the dot's type (older frontends take f32 otherwise)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    else:
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs, acc)


@triton.jit
def bscaled(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, B: tl.constexpr, AR: tl.constexpr, AC: tl.constexpr,
            BR: tl.constexpr, BC: tl.constexpr, M: tl.constexpr, N: tl.constexpr, G: tl.constexpr,
            FA: tl.constexpr, FB: tl.constexpr):
    bi = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + bi * AR * AC + tl.arange(0, AR)[None, :, None] * AC + tl.arange(0, AC)[None, None, :])
    b = tl.load(b_ptr + bi * BR * BC + tl.arange(0, BR)[None, :, None] * BC + tl.arange(0, BC)[None, None, :])
    sa = tl.load(sa_ptr + bi * M * G + tl.arange(0, M)[None, :, None] * G + tl.arange(0, G)[None, None, :])
    sb = tl.load(sb_ptr + bi * N * G + tl.arange(0, N)[None, :, None] * G + tl.arange(0, G)[None, None, :])
    offs = bi * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    acc = tl.load(c_ptr + offs)
    acc = tl.dot_scaled(a, sa, FA, b, sb, FB, acc)
    tl.store(c_ptr + offs, acc)


def launch(kernel, args, out, **kw):
    """kernel[(1,)](*args, **kw) as Triton's frontend reads it; on the interpreter, then once more on
    copies of the arguments through dtsim's own .py reader, which must store the same bits in
    args[out]."""
    mine = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    kernel[(1,)](*args, **kw)
    if dtsim.config()["backend"] == "cuda":
        return
    dtsim.JITFunction(kernel.fn)[(1,)](*mine, **kw)
    if not np.array_equal(args[out], mine[out]):
        sys.exit("%s: dtsim's .py reader and the TTIR reader differ: %s vs %s" % (
            kernel.fn.__name__, mine[out].ravel()[:4], args[out].ravel()[:4]))


def check_batches(name, got, want, tol):
    """Each batch within tol of numpy's, relative to its largest magnitude."""
    for i in range(want.shape[0]):
        check("batched %s, batch %d" % (name, i), got[i], want[i], tol=tol)


rng = np.random.default_rng(3)
B, M, N, K = 4, 16, 32, 32
# f16 operands, f32 accumulator
a = rng.standard_normal((B, M, K)).astype(np.float16)
b = rng.standard_normal((B, K, N)).astype(np.float16)
c = rng.standard_normal((B, M, N)).astype(np.float32)
want = a.astype(np.float64) @ b.astype(np.float64) + c
got = c.copy()
launch(bdot, [a, b, got], 2, B=B, M=M, N=N, K=K, IEEE=False)
check_batches("tl.dot f16", got, want, 1e-5)
# f32 exact products
a32 = rng.standard_normal((B, M, K)).astype(np.float32)
b32 = rng.standard_normal((B, K, N)).astype(np.float32)
want = a32.astype(np.float64) @ b32.astype(np.float64) + c
got = c.copy()
launch(bdot, [a32, b32, got], 2, B=B, M=M, N=N, K=K, IEEE=True)
check_batches("tl.dot f32 ieee", got, want, 1e-5)
# int8 -> int32, exact
a8 = rng.integers(-128, 128, (B, M, K), dtype=np.int8)
b8 = rng.integers(-128, 128, (B, K, N), dtype=np.int8)
c8 = rng.integers(-1000, 1000, (B, M, N)).astype(np.int32)
got = c8.copy()
launch(bdot, [a8, b8, got], 2, B=B, M=M, N=N, K=K, IEEE=False, INT=True)
want = a8.astype(np.int64) @ b8.astype(np.int64) + c8
check("batched tl.dot int8 -> int32, exact", got, want)

E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1(nib):
    v = E2M1[nib & 7]
    return np.where(nib & 8, -v, v)


def unpack_k(packed, axis):
    lo, hi = e2m1(packed & 0xF), e2m1(packed >> 4)
    return np.stack([lo, hi], axis=axis + 1).reshape(
        tuple(d * 2 if i == axis else d for i, d in enumerate(packed.shape)))


def e4m3(byte):
    e, m = (byte >> 3) & 15, byte & 7
    v = np.where(e == 0, m / 8.0 * 2.0**-6, (1 + m / 8.0) * 2.0**(e.astype(np.int64) - 7))
    return np.where(byte >> 7, -v, v)


def bf16(v):
    bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return bits.view(np.float32).astype(np.float64)


K = 64
G = K // 32
pairs = [("e2m1", "e4m3"), ("bf16", "e2m1")]
if tuple(int(x) for x in triton.__version__.split(".")[:2]) < (3, 8):  # 3.6 wants 2-D scales (3.8 and 3.9 take 3-D)
    print("tl.dot_scaled of 3-D operands skipped: Triton %s's frontend refuses 3-D scales" % triton.__version__)
    pairs = []
for fa, fb in pairs:
    if fa == "e2m1":
        a = rng.integers(0, 256, (B, M, K // 2), dtype=np.uint8)
        av = unpack_k(a, 2)
    else:
        f = (rng.standard_normal((B, M, K)) * 4).astype(np.float32)
        a = (f.view(np.uint32) >> 16).astype(np.uint16)
        av = (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if fb == "e2m1":
        b = rng.integers(0, 256, (B, K // 2, N), dtype=np.uint8)
        bv = unpack_k(b, 1)
    else:
        b = rng.integers(0, 256, (B, K, N), dtype=np.uint8)
        b[(b & 0x7F) == 0x7F] &= 0xBF  # no NaNs
        bv = e4m3(b)
    sa = rng.integers(120, 135, (B, M, G), dtype=np.uint8)
    sb = rng.integers(120, 135, (B, N, G), dtype=np.uint8)
    x = av * np.repeat(2.0**(sa.astype(np.int64) - 127), 32, axis=2)
    y = bv * np.swapaxes(np.repeat(2.0**(sb.astype(np.int64) - 127), 32, axis=2), 1, 2)
    acc = rng.integers(-4, 5, (B, M, N)).astype(np.float32)
    want = bf16(x) @ bf16(y) + acc
    got = acc.copy()
    launch(bscaled, [a, sa, b, sb, got], 4, B=B, AR=a.shape[1], AC=a.shape[2], BR=b.shape[1], BC=b.shape[2], M=M, N=N,
           G=G, FA=fa, FB=fb)
    check_batches("tl.dot_scaled %s x %s" % (fa, fb), got, want, 1e-5)
finish("batched tl.dot (f16, f32, int8) and tl.dot_scaled match numpy in every batch")
