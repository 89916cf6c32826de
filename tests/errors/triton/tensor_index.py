# expect-error: 10:23: indexing a tensor with a value (only ':' and None subscripts exist) is
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    tl.store(z_ptr, x[3])
