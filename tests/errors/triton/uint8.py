# expect-error: 10:49: the dtype tl.uint8 is not supported yet
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.load(x_ptr + o).to(tl.uint8))
