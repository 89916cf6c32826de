# int8 arrays and fp8 bit patterns through dtsim's own .py reader (the stand-in `triton`, no Triton
# installed): int8 arithmetic wraps, int8 bits bitcast to tl.float8e4nv widen exactly, and a uint8
# array is read as tl.uint8 (its products wrap at 8 bits and zero-extend where the int8 ones sign-extend).
import numpy as np
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, f_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    tl.store(y_ptr + o, x * 3)
    tl.store(f_ptr + o, x.to(tl.float8e4nv, bitcast=True).to(tl.float32))


x = np.arange(-128, 128, dtype=np.int8)
y = np.zeros(256, np.int8)
f = np.zeros(256, np.float32)
k[(1,)](x, y, f, BLOCK=256)
assert (y == (x.astype(np.int64) * 3 + 128) % 256 - 128).all(), y
bits = x.view(np.uint8).astype(np.int64)
e, m = (bits >> 3) & 15, bits & 7
want = np.where(e == 0, m * 2.0 ** -9, (8 + m) * 2.0 ** (e - 10)) * np.where(bits & 0x80, -1, 1)
nan = (bits & 0x7F) == 0x7F
assert (np.isnan(f) == nan).all() and (f[~nan] == want[~nan]).all(), f
u = x.view(np.uint8)
y16 = np.zeros(256, np.int16)
k[(1,)](u, y16, f, BLOCK=256)  # uint8 * 3 wraps at 8 bits (a Python int takes the tensor's type), then zero-extends
assert (y16 == (u.astype(np.int64) * 3) % 256).all(), y16
print("int8 and fp8 through the .py reader: ok")
