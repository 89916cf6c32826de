# expect-error: 11:5: this return gives i32 and an earlier return of the combine_fn f32
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[1] --grid 1 --kernel k
import triton
import triton.language as tl


@triton.jit
def pick(a, b):
    if a > b:
        return a
    return 0


@triton.jit
def k(x_ptr, z_ptr):
    tl.store(z_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, 64)), 0, pick))
