# expect-error: 11:27: shapes [64] and [32] do not broadcast
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    a = tl.arange(0, 64)
    b = tl.arange(0, 32)
    tl.store(z_ptr + a, a + b)
