# expect-error: 10:48: tl.load() got an unexpected keyword argument 'msk'
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.load(x_ptr + o, msk=o < 3))
