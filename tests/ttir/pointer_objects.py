"""Host objects other projects pass as Triton pointer arguments (torch CPU tensors, python -m dtsim
with Triton installed):
- an object that is not a tensor but has data_ptr() and a torch dtype (and here its own shape,
  strides and element offset into a tensor, as FlagGems' StridedBuffer): bound to the memory of the
  live tensor that holds its address, so a copy through it reads and writes the right elements, also
  with negative strides (FlagGems' flip: the pointer is the window's last element in memory); its
  address in no live tensor, or a window reaching before its storage, are TypeErrors naming the
  argument; a shape reaching past the storage's end is a logical one (triton_kernels' swizzled MX
  scales): the buffer runs from the address to the storage's end, and an access past it is an
  out-of-bounds finding;
- triton.reinterpret(tensor, dtype) (Triton's TensorWrapper, as tests of fp8 matmuls pass uint8 data
  as fp8): the tensor's memory as the Triton dtype (fp8e4b15, which torch has not got, as the bytes
  Triton's TTIR reads as i8);
- a view with a zero stride (as_strided to an index's shape, FlagGems' gather): the kernel adds the
  skipped axis's offsets itself, so the view is bound up to the end of its storage, and a gather
  that reads past the view's own span is no out-of-bounds finding."""
import sys

import torch
import triton
import triton.language as tl

import dtsim

if dtsim.config()["backend"] == "cuda":
    print("skipped: objects exposing data_ptr() over host memory are the interpreter's (backend='cuda' refuses them)")
    sys.exit(77)


class Window:
    """A 2-D window into a tensor's storage: shape, strides and an element offset of its own."""

    def __init__(self, base, shape, strides, offset):
        self.base, self.shape, self.strides, self.offset, self.dtype = base, shape, strides, offset, base.dtype

    def data_ptr(self):
        return self.base.data_ptr() + self.offset * self.base.element_size()

    def stride(self):
        return self.strides


@triton.jit
def copy2d(src, dst, s0, s1, d0, d1, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i = tl.arange(0, BM)[:, None]
    j = tl.arange(0, BN)[None, :]
    m = (i < M) & (j < N)
    tl.store(dst + i * d0 + j * d1, tl.load(src + i * s0 + j * s1, mask=m), mask=m)


@triton.jit
def gather_cols(inp, idx, out, s0, s1, dim_stride, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i = tl.arange(0, BM)[:, None]
    j = tl.arange(0, BN)[None, :]
    m = (i < M) & (j < N)
    k = tl.load(idx + i * N + j, mask=m, other=0)
    tl.store(out + i * N + j, tl.load(inp + i * s0 + j * s1 + k * dim_stride, mask=m), mask=m)


base = torch.arange(100, dtype=torch.float32)
dst = torch.zeros(100)
win_src = Window(base, (3, 4), (10, 2), 21)      # elements 21 + 10 i + 2 j
win_dst = Window(dst, (3, 4), (4, 1), 50)        # a 3x4 block at element 50
copy2d[(1,)](win_src, win_dst, 10, 2, 4, 1, 3, 4, BM=4, BN=4)
want = torch.zeros(100)
want[50:62] = base.as_strided((3, 4), (10, 2), 21).reshape(-1)
if not torch.equal(dst, want):
    sys.exit("a copy through pointer objects: wrong elements %s" % dst[48:64].tolist())
print("pointer objects with their own shape, strides and offset: copied")

rev = torch.zeros(100)
copy2d[(1,)](Window(base, (3, 4), (-10, -2), 47), Window(rev, (3, 4), (4, 1), 0), -10, -2, 4, 1, 3, 4, BM=4, BN=4)
want = torch.zeros(100)
want[:12] = torch.tensor([47.0 - 10 * i - 2 * j for i in range(3) for j in range(4)])  # base[47 - 10 i - 2 j]
if not torch.equal(rev, want):
    sys.exit("a copy through a pointer object with negative strides: wrong elements %s" % rev[:12].tolist())
print("a pointer object with negative strides: copied in reverse")

for bad, text in ((Window(base, (3, 4), (-10, 2), 15), "reaches outside its storage"),):
    try:
        copy2d[(1,)](bad, win_dst, 10, 2, 4, 1, 3, 4, BM=4, BN=4)
        sys.exit("a pointer object with %s was accepted" % text)
    except TypeError as e:
        if "argument 'src'" not in str(e) or text not in str(e):
            sys.exit("unexpected message: %s" % e)
        print("TypeError:", e)


store = torch.zeros(2, 64).t()  # 128 elements of storage, strides (1, 64)
logical = Window(store, (8, 256), (1, 64), 0)  # a layout's logical shape, far past the storage
copy2d[(1,)](base, logical, 1, 0, 1, 0, 100, 1, BM=128, BN=1)
if not torch.equal(store.t().reshape(-1)[:100], base):
    sys.exit("a pointer object with a logical shape past its storage: wrong elements")
try:
    copy2d[(1,)](base, Window(store, (8, 256), (1, 64), 100), 1, 0, 1, 0, 100, 1, BM=128, BN=1)
    sys.exit("a store past the storage through a logical shape was not reported")
except dtsim.KernelError as e:
    if "out-of-bounds store" not in str(e):
        sys.exit("unexpected finding: %s" % e)
print("a pointer object whose shape is logical: bound to its storage, an access past it reported")


class Stray:
    dtype = torch.float32

    def data_ptr(self):
        return 16  # in no tensor


try:
    copy2d[(1,)](Stray(), win_dst, 10, 2, 4, 1, 3, 4, BM=4, BN=4)
    sys.exit("a pointer object at an address in no tensor was accepted")
except TypeError as e:
    if "argument 'src'" not in str(e) or "in no live CPU tensor" not in str(e):
        sys.exit("unexpected message: %s" % e)
    print("TypeError:", e)

torch.manual_seed(0)
x = torch.randn(9, 30)
idx = torch.randint(0, 30, (9, 5))
restrided = x.as_strided(idx.shape, (x.stride(0), 0))  # the gathered axis's stride zeroed
out = torch.empty(9, 5)
gather_cols[(1,)](restrided, idx, out, x.stride(0), 0, x.stride(1), 9, 5, BM=16, BN=8)
if not torch.equal(out, torch.gather(x, 1, idx)):
    sys.exit("gather through a zero-stride view: wrong result")
print("gather through a zero-stride view: matches torch.gather")


@triton.jit
def widen(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n).to(tl.float32), mask=offs < n)


bits = torch.randint(0, 120, (50,), dtype=torch.uint8)  # positive finite e5m2 and e4m3 patterns
for tdt, torch_dt in ((tl.float8e5, torch.float8_e5m2), (tl.float8e4nv, torch.float8_e4m3fn)):
    wide = torch.zeros(50)
    widen[(1,)](triton.reinterpret(bits, tdt), wide, 50, BLOCK=64)
    if not torch.equal(wide, bits.view(torch_dt).float()):
        sys.exit("triton.reinterpret as %s: wrong values" % tdt)
    print("triton.reinterpret as %s: read as torch's %s" % (tdt, torch_dt))
# a torch dtype names the reinterpretation as well as a tl dtype (Triton's conversion tests pass them)
wide = torch.zeros(50)
widen[(1,)](triton.reinterpret(bits, torch.float8_e5m2), wide, 50, BLOCK=64)
if not torch.equal(wide, bits.view(torch.float8_e5m2).float()):
    sys.exit("triton.reinterpret as torch.float8_e5m2: wrong values")
print("triton.reinterpret as torch.float8_e5m2: read as that dtype")
# fp8e4b15 (no torch dtype; i8 in Triton's TTIR): its bytes, widened by Triton's PTX (an f16 of the
# same bias: the byte's exponent and mantissa moved up 7 bits)
wide = torch.zeros(50)
widen[(1,)](triton.reinterpret(bits, tl.float8e4b15), wide, 50, BLOCK=64)
want = ((bits.to(torch.int32) & 0x7F) << 7).to(torch.int16).view(torch.float16).float()
if not torch.equal(wide, want):
    sys.exit("triton.reinterpret as fp8e4b15: wrong values")
print("triton.reinterpret as fp8e4b15: read as Triton's conversion widens it")
