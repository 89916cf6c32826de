# tl.dot's input_precision on f32 operands: Triton's default (tf32: operands rounded to 10 mantissa
# bits first), input_precision="ieee" (exact products), and the older allow_tf32=False spelling.
#   dtsim run examples/triton/dot_precision.py --in a_ptr=a.npy --in b_ptr=b.npy --buf c_default=f32[32,32] \
#       --buf c_ieee=f32[32,32] --buf c_no_tf32=f32[32,32] --grid 1
import triton
import triton.language as tl


@triton.jit
def dot_precision_k(a_ptr, b_ptr, c_default, c_ieee, c_no_tf32, N: tl.constexpr = 32):
    r = tl.arange(0, N)
    offs = r[:, None] * N + r[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(c_default + offs, tl.dot(a, b))
    tl.store(c_ieee + offs, tl.dot(a, b, input_precision="ieee"))
    tl.store(c_no_tf32 + offs, tl.dot(a, b, allow_tf32=False))
