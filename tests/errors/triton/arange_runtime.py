# expect-error: 9:22: tl.arange() argument 'end' must be a compile-time int, got scalar i32
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1 --arg n=64
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr, n):
    o = tl.arange(0, n)
    tl.store(z_ptr + o, 1.0)
