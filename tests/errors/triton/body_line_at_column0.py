# expect-error: 11:5: unexpected indent
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1 --out z_ptr=/dev/null
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
x = tl.load(x_ptr + o)
    tl.store(z_ptr + o, x)
