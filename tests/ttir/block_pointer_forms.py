"""Block pointers and in-kernel tensor descriptors in the forms kernels use them, on every reader:
Triton 3.8 and older lower both in their own TTIR stage (dtsim reads that); Triton 3.9's frontend
refuses block pointers, so dtsim reads those kernels with its own .py reader (with a warning once per
kernel) and descriptors through TTIR; the stand-in reads everything itself. Checked against numpy:
a 2-D copy checking one axis, a block pointer through @triton.jit helpers, a walk whose step is a
runtime value with an advance inside an `if`, a 3-D block with another order, byte elements, and
descriptors loading and storing across the edges with zero and NaN padding."""
import contextlib
import io
import os
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim

version = tuple(int(x) for x in triton.__version__.split("+")[0].split(".")[:2])
standin = "dtsim" in os.path.dirname(triton.__file__)
own_reader_for_blocks = standin or version >= (3, 9)


@triton.jit
def copy_cols(x, y, M, N, sx, sy, BM: tl.constexpr, BN: tl.constexpr):
    # rows always inside (the grid covers M exactly); columns checked
    xp = tl.make_block_ptr(base=x, shape=(M, N), strides=(sx, 1), offsets=(tl.program_id(0) * BM, tl.program_id(1) * BN),
                           block_shape=(BM, BN), order=(1, 0))
    yp = tl.make_block_ptr(y, (M, N), (sy, 1), (tl.program_id(0) * BM, tl.program_id(1) * BN), (BM, BN), (1, 0))
    tl.store(yp, tl.load(xp, boundary_check=(1,), padding_option="zero") * 2, boundary_check=(1,))


@triton.jit
def load_block(p):
    return tl.load(p, boundary_check=(0,), padding_option="zero")


@triton.jit
def step(p, BLOCK: tl.constexpr):
    return tl.advance(p, (BLOCK,))


@triton.jit
def helpers_sum(x, out, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x, (n,), (1,), (0,), (BLOCK,), (0,))
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(tl.cdiv(n, BLOCK)):
        acc += load_block(p)
        p = step(p, BLOCK)
    tl.store(out, tl.sum(acc))


@triton.jit
def strided_walk(x, out, n, stride_blocks, BLOCK: tl.constexpr):
    # every stride_blocks-th block, and the block after each odd one: a runtime step, an advance in an
    # if (a for loop: Triton 3.6's rewrite of block pointers has no while loops)
    p = tl.make_block_ptr(x, (n,), (1,), (0,), (BLOCK,), (0,))
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(tl.cdiv(n, stride_blocks * BLOCK)):
        acc += tl.load(p, boundary_check=(0,), padding_option="zero")
        if i % 2 == 1:
            q = tl.advance(p, (BLOCK,))
            acc += tl.load(q, boundary_check=(0,), padding_option="zero")
        p = tl.advance(p, (stride_blocks * BLOCK,))
    tl.store(out + tl.arange(0, BLOCK), acc)


@triton.jit
def cube(x, y, A, B, C, BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    # x is [A, B, C] contiguous; y gets x + 1 where x is inside on axes 0 and 2 (axis 1 always inside)
    xp = tl.make_block_ptr(x, (A, B, C), (B * C, C, 1), (tl.program_id(0) * BA, 0, tl.program_id(1) * BC), (BA, BB, BC), (2, 1, 0))
    yp = tl.make_block_ptr(y, (A, B, C), (B * C, C, 1), (tl.program_id(0) * BA, 0, tl.program_id(1) * BC), (BA, BB, BC), (2, 1, 0))
    tl.store(yp, tl.load(xp, boundary_check=(0, 2), padding_option="zero") + 1, boundary_check=(2, 0))


@triton.jit
def bytes_copy(x, y, n, BLOCK: tl.constexpr):
    xp = tl.make_block_ptr(x, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    yp = tl.make_block_ptr(y, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    tl.store(yp, tl.load(xp, boundary_check=(0,)) + 1, boundary_check=(0,))


@triton.jit
def desc_shift(x, y, M, N, dm, dn, BM: tl.constexpr, BN: tl.constexpr, NAN: tl.constexpr):
    # y's block (pm, pn) gets x's block shifted by (dm, dn): lanes outside x read the padding, and the
    # last blocks of y reach past y (those lanes are not written)
    if NAN:
        xd = tl.make_tensor_descriptor(x, (M, N), (N, 1), (BM, BN), padding_option="nan")
    else:
        xd = tl.make_tensor_descriptor(x, (M, N), (N, 1), (BM, BN))
    yd = tl.make_tensor_descriptor(y, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    v = xd.load([om + dm, on + dn])
    yd.store([om, on], v)


def run_quiet(f):
    """Runs f, returning what it wrote to stderr (dtsim's warnings)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        f()
    return err.getvalue()


rng = np.random.default_rng(5)
failures = []
warned = ""

M, N = 32, 45
x = rng.standard_normal((M, N)).astype(np.float32)
y = np.full((M, 64), -7, np.float32)
warned += run_quiet(lambda: copy_cols[(2, 3)](x, y, M, N, N, 64, BM=16, BN=16))
if not (np.array_equal(y[:, :N], x * 2) and (y[:, N:] == -7).all()):
    failures.append("copy_cols: wrong values or a store past the checked columns")

for n in (1, 16, 50):
    v = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    warned += run_quiet(lambda: helpers_sum[(1,)](v, out, n, BLOCK=16))
    if abs(float(out[0]) - float(v.sum())) > 1e-4:
        failures.append("helpers_sum n=%d: %g, want %g" % (n, out[0], v.sum()))

for n, sb in ((100, 2), (64, 1), (70, 3)):
    v = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(8, np.float32)
    warned += run_quiet(lambda: strided_walk[(1,)](v, out, n, sb, BLOCK=8))
    want = np.zeros(8, np.float64)
    padded = np.concatenate([v, np.zeros(64)])
    i = 0
    while i * sb * 8 < n:
        want += padded[i * sb * 8:i * sb * 8 + 8]
        if i % 2 == 1:
            want += padded[i * sb * 8 + 8:i * sb * 8 + 16]
        i += 1
    if not np.allclose(out, want, atol=1e-5):
        failures.append("strided_walk n=%d step=%d: %s, want %s" % (n, sb, out, want))

A, B, C = 5, 4, 7
xc = rng.standard_normal((A, B, C)).astype(np.float32)
yc = np.zeros((A, B, C), np.float32)
warned += run_quiet(lambda: cube[(3, 2)](xc, yc, A, B, C, BA=2, BB=4, BC=4))
if not np.allclose(yc, xc + 1):
    failures.append("cube: wrong values")

xb = np.arange(37, dtype=np.uint8) * 7
yb = np.zeros(40, np.uint8)
warned += run_quiet(lambda: bytes_copy[(3,)](xb, yb, 37, BLOCK=16))
if not (np.array_equal(yb[:37], (xb + 1).astype(np.uint8)) and (yb[37:] == 0).all()):
    failures.append("bytes_copy: %s" % yb)

M, N = 20, 24
x = rng.standard_normal((M, N)).astype(np.float32)
for nan in (False, True):
    for dm, dn in ((0, 0), (3, -5), (-4, 9)):
        y = np.full((M, N), -1, np.float32)
        desc_shift[(3, 3)](x, y, M, N, dm, dn, BM=8, BN=8, NAN=nan)
        pad = np.full((M + 64, N + 64), np.nan if nan else 0, np.float32)
        pad[32:32 + M, 32:32 + N] = x
        want = pad[32 + dm:32 + dm + M, 32 + dn:32 + dn + N]
        if not np.array_equal(y, want, equal_nan=True):
            failures.append("desc_shift nan=%s shift=(%d, %d): wrong values" % (nan, dm, dn))

kernels = ["copy_cols", "helpers_sum", "strided_walk", "cube", "bytes_copy"]
if version >= (3, 9) and not standin:
    for k in kernels:
        if "reads kernel '%s' with its own .py reader" % k not in warned:
            failures.append("no warning that Triton %s refused %s's block pointers" % (triton.__version__, k))
    if warned.count("warning:") != len(kernels):
        failures.append("the warning is not once per kernel:\n" + warned)
elif warned:
    failures.append("unexpected warnings:\n" + warned)

if own_reader_for_blocks:
    # a block pointer's dtype is pointer<block<elem>>; a dtype passed by host code as a constexpr
    # (the installed Triton's tl.float16 under Triton 3.9)
    @triton.jit
    def store_as_elem(pointer, value):
        tl.store(pointer, value.to(pointer.dtype.element_ty.element_ty), boundary_check=(0,))

    @triton.jit
    def half_copy(x, y, n, DT: tl.constexpr, BLOCK: tl.constexpr):
        xp = tl.make_block_ptr(x, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
        yp = tl.make_block_ptr(y, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
        v = tl.load(xp, boundary_check=(0,), padding_option="zero").to(DT) * 3
        store_as_elem(yp, v)

    xh = (np.arange(20, dtype=np.float32) / 7).astype(np.float32)
    yh = np.zeros(20, np.float16)
    run_quiet(lambda: half_copy[(2,)](xh, yh, 20, DT=tl.float16, BLOCK=16))
    if not np.array_equal(yh, xh.astype(np.float16) * np.float16(3)):
        failures.append("half_copy: %s" % yh)

    # a block pointer carried by a while loop (which Triton 3.6's rewrite refuses; the own reader has it)
    @triton.jit
    def while_sum(x, out, n, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(x, (n,), (1,), (0,), (BLOCK,), (0,))
        acc = tl.zeros((BLOCK,), tl.float32)
        i = 0
        while i * BLOCK < n:
            acc += tl.load(p, boundary_check=(0,), padding_option="zero")
            p = tl.advance(p, (BLOCK,))
            i += 1
        tl.store(out, tl.sum(acc))

    vw = rng.standard_normal(45).astype(np.float32)
    ow = np.zeros(1, np.float32)
    run_quiet(lambda: while_sum[(1,)](vw, ow, 45, BLOCK=8))
    if abs(float(ow[0]) - float(vw.sum())) > 1e-4:
        failures.append("while_sum: %g, want %g" % (ow[0], vw.sum()))

    # the own reader's errors for block pointers misused
    @triton.jit
    def nan_ints(x, n, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(x, (n,), (1,), (0,), (BLOCK,), (0,))
        tl.store(x, tl.sum(tl.load(p, boundary_check=(0,), padding_option="nan")))

    @triton.jit
    def bad_axis(x, n, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(x, (n,), (1,), (0,), (BLOCK,), (0,))
        tl.store(p, tl.load(p, boundary_check=(1,)))

    for kern, text in ((nan_ints, 'padding_option="nan" needs floating-point elements'),
                       (bad_axis, "boundary_check axis 1 of a rank-1 block")):
        try:
            run_quiet(lambda: kern[(1,)](np.zeros(4, np.int32), 4, BLOCK=4))
            failures.append("%s: no error" % kern.__name__)
        except dtsim.CompileError as e:
            if text not in str(e) or "block_pointer_forms.py:" not in str(e):
                failures.append("%s: unexpected error:\n%s" % (kern.__name__, e))

if failures:
    sys.exit("\n".join(failures))
print("block_pointer_forms: Triton %s%s: block pointers (%s) and descriptors match numpy" %
      (triton.__version__, " (stand-in)" if standin else "",
       "dtsim's own reader" if own_reader_for_blocks else "Triton's frontend"))
