# expect-error: 10:9: tl.sort is not supported yet
# args: --buf x_ptr=i32[64] --buf z_ptr=i32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    h = tl.sort(tl.load(x_ptr + o))
    tl.store(z_ptr + tl.arange(0, 64), h)
