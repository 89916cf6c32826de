# expect-error: 14:40: h() missing argument 'b'
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def h(a, b):
    return a + b


@triton.jit
def k(x_ptr, z_ptr):
    tl.store(z_ptr + tl.arange(0, 64), h(1.0))
