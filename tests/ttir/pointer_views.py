"""pointer_views: a pointer bitcast to a wider element type, `(p_u8 + off).to(tl.pointer_type(tl.float32))`
(packed KV caches keep fp8 values and their f32 scales in one uint8 buffer): each element read or written
through the view is that many consecutive elements of the buffer, little-endian as on the GPU; offsets
added to the view step whole view elements; masks and `other` apply per view element; the sanitizer
checks every buffer element the view touches."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim


@triton.jit
def pack_scales(S, Buf, N: tl.constexpr, HEADER: tl.constexpr):
    o = tl.arange(0, N)
    dst = (Buf + HEADER + o * 4).to(tl.pointer_type(tl.float32))  # a tile of viewed pointers
    tl.store(dst, tl.load(S + o) * 2.0)
    back = tl.load(dst)
    tl.store(Buf + o, (back > 0).to(tl.uint8))


@triton.jit
def scalar_view(Buf, Out, N: tl.constexpr, HEADER: tl.constexpr):
    base = (Buf + HEADER).to(tl.pointer_type(tl.float32))  # one viewed pointer, then view offsets
    o = tl.arange(0, N)
    tl.store(Out + o, tl.load(base + o) + tl.load(base + 1 + o))


@triton.jit
def halves(Buf, Out, n, N: tl.constexpr):
    o = tl.arange(0, N)
    h = Buf.to(tl.pointer_type(tl.float16))
    m = o < n
    x = tl.load(h + o, mask=m, other=-1.0)
    tl.store(Out + o, x.to(tl.float32))
    tl.store(h + o, x * 2, mask=m)


@triton.jit
def wide_ints(Buf, Out, N: tl.constexpr):
    o = tl.arange(0, N)
    q = Buf.to(tl.pointer_type(tl.int64))
    v = tl.load(q + o)
    tl.store(Out + o, v)
    tl.store(q + o, -v)


@triton.jit
def short_view(Buf, Out, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Out + o, tl.load(Buf.to(tl.pointer_type(tl.float32)) + o))


def fail(msg):
    sys.exit("pointer_views: " + msg)


rng = np.random.default_rng(11)
N, H = 16, 64
s = rng.standard_normal(N).astype(np.float32)
buf = np.zeros(H + 4 * N, np.uint8)
pack_scales[(1,)](s, buf, N=N, HEADER=H)
if not np.array_equal(buf[H:].view(np.float32), s * 2) or not np.array_equal(buf[:N], (s > 0).astype(np.uint8)):
    fail("f32 through a *u8 tile of pointers: got %s" % buf[H:H + 8].view(np.float32))

vals = rng.standard_normal(N + 1).astype(np.float32)
buf = np.concatenate([np.arange(8, dtype=np.uint8), vals.view(np.uint8)])
out = np.zeros(N, np.float32)
scalar_view[(1,)](buf, out, N=N, HEADER=8)
if not np.array_equal(out, vals[:N] + vals[1:]):
    fail("a scalar viewed pointer plus view offsets: got %s, want %s" % (out[:3], (vals[:N] + vals[1:])[:3]))

hv = rng.standard_normal(N).astype(np.float16)
buf = hv.view(np.int8).copy()
out = np.zeros(N, np.float32)
halves[(1,)](buf, out, 11, N=N)
want = np.where(np.arange(N) < 11, hv.astype(np.float32), -1.0)
if not np.array_equal(out, want):
    fail("masked f16 loads from an int8 buffer with other=-1: got %s" % out)
hw = hv.copy()
hw[:11] *= 2
if not np.array_equal(buf.view(np.float16), hw):
    fail("masked f16 stores into an int8 buffer: got %s, want %s" % (buf.view(np.float16), hw))

iv = np.array([1, -1, 2**40 + 3, -(2**62), 0, 255, -256, 2**63 - 1], np.int64)
buf = iv.view(np.uint8).copy()
out = np.zeros(8, np.int64)
wide_ints[(1,)](buf, out, N=8)
if not np.array_equal(out, iv) or not np.array_equal(buf.view(np.int64), -iv):
    fail("i64 through a *u8 view (sign bits, every byte): got %s and %s" % (out, buf.view(np.int64)))

fv = rng.standard_normal(8).astype(np.float32)
sb = fv.view(np.int16).copy()
out = np.zeros(8, np.float32)
short_view[(1,)](sb, out, N=8)
if not np.array_equal(out, fv):
    fail("f32 through an *i16 view: got %s" % out)

# reading past the buffer's end through the view: out of bounds, in the buffer's own elements
try:
    short_view[(1,)](sb[:15].copy(), out, N=8)
except Exception as e:  # noqa: BLE001 (dtsim.KernelError)
    text = str(e)
    for w in ("out-of-bounds load", "'Buf'", "index [15]"):
        if w not in text:
            fail("the out-of-bounds read through the view is reported without %r:\n%s" % (w, text))
else:
    fail("a read through the view past the buffer's end was not reported")
print("pointer views: f32, f16, i64 through *u8 / *i8 / *i16 buffers read and write the buffer's bytes; "
      "view offsets, masks and bounds per element")
