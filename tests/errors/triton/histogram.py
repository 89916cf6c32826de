# expect-error: 10:9: tl.histogram is not supported yet
# args: --buf x_ptr=i32[64] --buf z_ptr=i32[8] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    h = tl.histogram(tl.load(x_ptr + o), 8)
    tl.store(z_ptr + tl.arange(0, 8), h)
