# expect-error: 9:22: static assertion failed: BLOCK must be a multiple of 32
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr, BLOCK: tl.constexpr = 48):
    tl.static_assert(BLOCK % 32 == 0, 'BLOCK must be a multiple of 32')
    tl.store(z_ptr + tl.arange(0, 64), 1.0)
