# expect-error: 9:9: tl.make_block_ptr is not supported yet
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    p = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (64,), (0,))
