# expect-error: 11:54: tl.dot(input_precision="tf32x3") (f32 operands: "ieee" or "tf32") is not supported yet
# args: --buf x_ptr=f32[256] --buf z_ptr=f32[256] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]
    a = tl.load(x_ptr + o)
    tl.store(z_ptr + o, tl.dot(a, a, input_precision="tf32x3"))
