# expect-error: 9:5: a combine_fn with an if on a runtime value is not supported yet
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[1] --grid 1 --kernel k
import triton
import triton.language as tl


@triton.jit
def larger(a, b):
    if a > b:
        r = a
    else:
        r = b
    return r


@triton.jit
def k(x_ptr, z_ptr):
    tl.store(z_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, 64)), 0, larger))
