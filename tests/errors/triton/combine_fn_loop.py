# expect-error: 9:5: a combine_fn with a loop is not supported yet
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[1] --grid 1 --kernel k
import triton
import triton.language as tl


@triton.jit
def shrink(a, b):
    while a > b:
        a = a - 1.0
    return a


@triton.jit
def k(x_ptr, z_ptr):
    tl.store(z_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, 64)), 0, shrink))
