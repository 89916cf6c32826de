"""tl.gather as the IR's own gather: tiles whose gather would have needed a tile of more than 2^20
elements when it was a masked sum over one more axis (128 x 256 gathered along an axis of 256),
indices of every integer width, gathers of rank 3 along each axis, bit patterns kept (-0.0 and NaN
payloads), a gather of a loaded index of a gathered value (two in a row), and an index outside the
axis as a located finding. Each result is checked against numpy's take_along_axis. Run with
`python -m dtsim gathers.py` (both Triton readers: DTSIM_STANDIN=1 for dtsim's own)."""

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import at, check, finish, report


@triton.jit
def wide(x_ptr, i_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    i = tl.load(i_ptr + rows * C + cols)
    tl.store(o_ptr + rows * C + cols, tl.gather(x, i, axis=1))


@triton.jit
def rank3(x_ptr, i_ptr, o_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    offs = a * B * C + b * C + c
    x = tl.load(x_ptr + offs)
    i = tl.load(i_ptr + offs)
    tl.store(o_ptr + offs, tl.gather(x, i, axis=AXIS))


@triton.jit
def twice(x_ptr, i_ptr, j_ptr, o_ptr, N: tl.constexpr, K: tl.constexpr):
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(x_ptr + n)
    i = tl.load(i_ptr + k)
    # the first gather's values are indices into j, whose values index x again
    j = tl.load(j_ptr + n)
    tl.store(o_ptr + k, tl.gather(x, tl.gather(j, i, axis=0), axis=0))


@triton.jit
def bits(x_ptr, i_ptr, o_ptr, N: tl.constexpr):
    n = tl.arange(0, N)
    x = tl.load(x_ptr + n)
    tl.store(o_ptr + n, tl.gather(x, tl.load(i_ptr + n), axis=0))


@triton.jit
def butterfly(x_ptr, o_ptr, K: tl.constexpr, N: tl.constexpr):
    # four steps of a Walsh-Hadamard butterfly (strides 1, 2, 1, 2: the transform twice, 4x the
    # input). Triton's TTIR reuses step 1's index and mask in step 3 after the Python variables
    # `g` and `v` were given other values: each value must keep its own variable.
    z = tl.arange(0, K)[:, None]
    c = tl.arange(0, N)[None, :]
    v = tl.load(x_ptr + z * N + c)
    g = tl.gather(v, tl.broadcast_to(z ^ 1, (K, N)), 0)
    v = tl.where((z & 1) == 0, v + g, g - v)
    g = tl.gather(v, tl.broadcast_to(z ^ 2, (K, N)), 0)
    v = tl.where((z & 2) == 0, v + g, g - v)
    g = tl.gather(v, tl.broadcast_to(z ^ 1, (K, N)), 0)
    v = tl.where((z & 1) == 0, v + g, g - v)
    g = tl.gather(v, tl.broadcast_to(z ^ 2, (K, N)), 0)
    v = tl.where((z & 2) == 0, v + g, g - v)
    tl.store(o_ptr + z * N + c, v)


def main():
    rng = np.random.default_rng(7)
    R, C = 128, 256
    x = rng.standard_normal((R, C)).astype(np.float32)
    i = rng.integers(0, C, (R, C)).astype(np.int64)
    o = np.zeros((R, C), np.float32)
    wide[(1,)](x, i, o, R=R, C=C)
    check("gather 128x256 along 256 (i64 index)", o, np.take_along_axis(x, i, axis=1))

    A, B, Cc = 4, 8, 16
    x3 = rng.standard_normal((A, B, Cc)).astype(np.float32)
    for axis, itype in ((0, np.int8), (1, np.int16), (2, np.int32)):
        ext = (A, B, Cc)[axis]
        i3 = rng.integers(0, ext, (A, B, Cc)).astype(itype)
        o3 = np.zeros((A, B, Cc), np.float32)
        rank3[(1,)](x3, i3, o3, A=A, B=B, C=Cc, AXIS=axis)
        check("rank 3 along axis %d (%s index)" % (axis, np.dtype(itype).name), o3, np.take_along_axis(x3, i3.astype(np.int64), axis=axis))

    N, K = 64, 32
    xs = rng.standard_normal(N).astype(np.float32)
    js = rng.integers(0, N, N).astype(np.int32)
    ks = rng.integers(0, N, K).astype(np.int32)
    ot = np.zeros(K, np.float32)
    twice[(1,)](xs, ks, js, ot, N=N, K=K)
    check("gather of a gathered index", ot, xs[js[ks]])

    pat = np.array([0x80000000, 0x7FC00001, 0xFFC12345, 0x3F800000, 0x00000001, 0x7F800000, 0xFF800000, 0x00000000] * 2, np.uint32)
    xb = pat.view(np.float32)
    ib = rng.permutation(16).astype(np.int32)
    ob = np.zeros(16, np.float32)
    bits[(1,)](xb, ib, ob, N=16)
    report("bit patterns kept (-0.0, NaN payloads)", np.array_equal(ob.view(np.uint32), pat[ib]),
           " ".join("%08x" % v for v in ob.view(np.uint32)[:4]))

    bad = ib.copy()
    bad[5] = 16
    try:
        bits[(1,)](xb, bad, ob, N=16)
        report("index outside the axis", False, "(no finding)")
    except Exception as e:  # noqa: BLE001 - the finding's exception type is dtsim's
        msg = str(e)
        report("index outside the axis", at(__file__, "tl.gather(x, tl.load(i_ptr + n), axis=0)") in msg and "outside [0, 16)" in msg,
               msg.splitlines()[0])
    xh = np.arange(16, dtype=np.float32).reshape(4, 4)
    oh = np.zeros_like(xh)
    butterfly[(1,)](xh, oh, K=4, N=4)
    check("a butterfly's index reused after its variable was reassigned", oh, 4 * xh)
    finish("gathers: all ok")


if __name__ == "__main__":
    main()
