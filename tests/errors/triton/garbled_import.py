# expect-error: 3:8: invalid syntax
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
impoCt triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, 1.0)
