# expect-error: 8:1: combine_fn 'pick' returns a value on some paths and nothing where it ends
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[1] --grid 1 --kernel k
import triton
import triton.language as tl


@triton.jit
def pick(a, b):
    if a > b:
        return a


@triton.jit
def k(x_ptr, z_ptr):
    tl.store(z_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, 64)), 0, pick))
