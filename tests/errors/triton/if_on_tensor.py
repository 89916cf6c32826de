# expect-error: 10:10: an if condition must be a scalar, got tensor i1[64] (use tl.where for 
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    if x > 0:
        tl.store(z_ptr + tl.arange(0, 64), x)
