# expect-error: 8:21: constexpr parameter 'BLOCK' has no value: give --arg BLOCK=VALUE
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(z_ptr + o, 1.0)
