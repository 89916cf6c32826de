"""Pointer bitcasts and helpers that return early, read through the installed Triton's frontend (TTIR)
and run on dtsim, each checked against numpy: bool tiles stored to and loaded from a bool array
(Triton reads and writes *i1 data through an *i8 view of the same bytes), a float array read and
written through an integer view (a pointer tile bitcast, and a base pointer bitcast then offset), the located error for a view of another width, noinline helpers
with an early `return` (several blocks in TTIR), with and without results, called in a loop and from
each other, a 3-D tensor descriptor accessed as 2-D tiles (Triton folds the tl.reshape of a
[1, BM, BN] block into the descriptor load and store), and tl.where choosing one of two arrays. Run with `python -m dtsim views_returns.py` where Triton is installed."""

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import finish, report


@triton.jit
def keep_mask(x_ptr, mask_ptr, out_ptr, n, p, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    x = tl.load(x_ptr + offs, mask=inb, other=0.0)
    keep = x > p
    tl.store(mask_ptr + offs, keep, mask=inb)  # a bool store: extui to i8 through an *i8 view
    again = tl.load(mask_ptr + offs, mask=inb, other=0)  # a bool load: i8, then != 0
    tl.store(out_ptr + offs, tl.where(again, x, -1.0), mask=inb)


@triton.jit
def float_bits(x_ptr, bits_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    xi = (x_ptr + offs).to(tl.pointer_type(tl.int32))  # the f32 array seen as int32
    b = tl.load(xi)
    tl.store(bits_ptr + offs, b)
    yi = (y_ptr + offs).to(tl.pointer_type(tl.int32))
    tl.store(yi, b ^ -2147483648)  # the sign flipped, stored as bits into an f32 array


@triton.jit
def abs_in_place(x_ptr, m_ptr, count_ptr, BLOCK: tl.constexpr):
    # the base pointers bitcast, then offset and broadcast: a view carried through addptr and splat
    offs = tl.arange(0, BLOCK)
    xi = x_ptr.to(tl.pointer_type(tl.int32)) + offs
    tl.store(xi, tl.load(xi) & 0x7FFFFFFF)
    mb = m_ptr.to(tl.pointer_type(tl.int8))
    both = tl.load(mb + offs[:, None] + tl.zeros([BLOCK, 2], tl.int32))  # bool bytes read as int8
    tl.store(count_ptr + offs, tl.sum(both.to(tl.int32), axis=1))


@triton.jit
def narrow_view(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load((x_ptr + offs).to(tl.pointer_type(tl.int16)))
    tl.store(out_ptr + offs, h)


@triton.jit
def store_if_inside(out_ptr, row, vals, n_rows, BLOCK: tl.constexpr):
    if row >= n_rows:
        return
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), vals)


@triton.jit
def clip_to(x, lim):
    if tl.max(x, 0) > lim:
        return tl.minimum(x, lim), 1
    return x, 0


@triton.jit
def clip_and_store(out_ptr, row, x, lim, n_rows, BLOCK: tl.constexpr):
    y, clipped = clip_to(x, lim)
    if clipped == 0:
        store_if_inside(out_ptr, row, y, n_rows, BLOCK)
        return clipped
    store_if_inside(out_ptr, row, y * 2.0, n_rows, BLOCK)
    return clipped


@triton.jit
def rows(x_ptr, out_ptr, flag_ptr, n_rows, lim, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    for r in range(0, ROWS):
        row = tl.program_id(0) * ROWS + r
        x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK), mask=row < n_rows, other=0.0)
        f = clip_and_store(out_ptr, row, x, lim, n_rows, BLOCK)
        tl.store(flag_ptr + row, f, mask=row < n_rows)


@triton.jit
def expert_blocks(w_ptr, out_ptr, E, M, N, BM: tl.constexpr, BN: tl.constexpr):
    e, pid_m = tl.program_id(0), tl.program_id(1)
    src = tl.make_tensor_descriptor(w_ptr, shape=[E, M, N], strides=[M * N, N, 1], block_shape=[1, BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[E, N, M], strides=[N * M, M, 1], block_shape=[1, BN, BM])
    w = tl.reshape(src.load([e, pid_m * BM, 0]), (BM, BN))  # lanes past M read 0
    dst.store([e, 0, pid_m * BM], tl.reshape(w.T * 2.0, (1, BN, BM)))


@triton.jit
def pick_array(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.where(pid < 1, a_ptr, b_ptr)  # one of two arrays per program
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + pid * BLOCK + offs, tl.load(src + offs))


def main():
    rng = np.random.default_rng(0)
    x = rng.random(100).astype(np.float32)
    mask = np.zeros(100, np.bool_)
    out = np.zeros(100, np.float32)
    keep_mask[(2,)](x, mask, out, 100, 0.3, BLOCK=64)
    report("bool store and load (*i1 as *i8)", np.array_equal(mask, x > 0.3) and np.array_equal(out, np.where(x > 0.3, x, -1.0)))

    x = rng.standard_normal(32).astype(np.float32)
    bits = np.zeros(32, np.int32)
    y = np.zeros(32, np.float32)
    float_bits[(1,)](x, bits, y, BLOCK=32)
    report("f32 array through an int32 view", np.array_equal(bits, x.view(np.int32)) and np.array_equal(y, -x))

    x0 = rng.standard_normal(32).astype(np.float32)
    x = x0.copy()
    m = rng.random(32) > 0.5
    count = np.zeros(32, np.int32)
    abs_in_place[(1,)](x, m, count, BLOCK=32)
    report("bitcast base pointers, then offset", np.array_equal(x, np.abs(x0)) and np.array_equal(count, 2 * m.astype(np.int32)))

    try:
        narrow_view[(1,)](x, np.zeros(32, np.int16), BLOCK=32)
        report("view of another width refused", False, "(no error)")
    except dtsim.CompileError as e:
        msg = str(e).splitlines()[0]
        report("view of another width refused", "views_returns.py:" in msg and "to a narrower element type (f32 -> i16) is not supported yet" in msg, msg)

    n_rows, block = 10, 16
    x = rng.random((n_rows, block)).astype(np.float32)
    out = np.zeros((n_rows, block), np.float32)
    flags = np.full(n_rows, 7, np.int32)
    rows[(3,)](x, out, flags, n_rows, 0.9, ROWS=4, BLOCK=block)
    clipped = x.max(axis=1) > 0.9
    want = np.where(clipped[:, None], np.minimum(x, np.float32(0.9)) * 2, x)
    report("helpers returning early (results, nested)", np.array_equal(flags, clipped.astype(np.int32)) and np.array_equal(out, want))

    w = rng.standard_normal((3, 40, 16)).astype(np.float32)
    wt = np.zeros((3, 16, 40), np.float32)
    expert_blocks[(3, 3)](w, wt, 3, 40, 16, BM=16, BN=16)
    report("3-D descriptor as 2-D tiles", np.array_equal(wt, 2 * w.transpose(0, 2, 1)))

    a, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    ab = np.zeros(32, np.float32)
    pick_array[(2,)](a, b, ab, BLOCK=16)
    report("tl.where choosing one of two arrays", np.array_equal(ab, np.concatenate([a, b])))

    finish("all views and early returns match")


main()
