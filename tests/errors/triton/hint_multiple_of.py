# expect-error: 11:13: tl.multiple_of(start, 16) does not hold
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --arg step=24 --grid 2
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr, step):
    # the promise is false for pid 1 (24 is not a multiple of 16)
    start = tl.program_id(0) * step
    start = tl.multiple_of(start, 16)
    o = start + tl.arange(0, 8)
    tl.store(z_ptr + o, tl.load(x_ptr + o))
