# expect-error: 10:9: return inside a runtime if/for/while of a helper function is not supported y
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1 --arg n=3
import triton
import triton.language as tl


@triton.jit
def h(v, n):
    if n > 2:
        return v
    return v + 1


@triton.jit
def k(x_ptr, z_ptr, n):
    tl.store(z_ptr + tl.arange(0, 64), h(1.0, n))
