# expect-error: 10:44: Cannot perform a binary operation between an unsigned tensor and a negative scalar
# args: --buf x_ptr=u32[64] --buf z_ptr=u32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.load(x_ptr + o) - -1)
