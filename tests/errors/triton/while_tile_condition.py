# expect-error: 11:11: a while condition must be a scalar, got tensor i1[64]
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    offs = tl.arange(0, 64)
    x = tl.load(x_ptr + offs)
    while x < 1.0:
        x = x * 2.0
    tl.store(z_ptr + offs, x)
