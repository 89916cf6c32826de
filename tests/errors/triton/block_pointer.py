# expect-error: 9:58: tl.load(boundary_check=...) needs a block pointer (tl.make_block_ptr)
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64), boundary_check=(0,))
    tl.store(z_ptr + tl.arange(0, 64), x)
