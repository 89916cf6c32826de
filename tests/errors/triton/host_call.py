# expect-error: 13:9: 'helper' is not a @triton.jit function and cannot be called from a ker
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


def helper(x):
    return x


@triton.jit
def k(x_ptr, z_ptr):
    o = helper(tl.arange(0, 64))
    tl.store(z_ptr + o, 1.0)
