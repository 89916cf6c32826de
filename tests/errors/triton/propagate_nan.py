# expect-error: 10:72: tl.maximum() argument 'propagate_nan' must be tl.PropagateNan.NONE or tl.PropagateNan.ALL
# args: --buf x_ptr=f32[8] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, N: tl.constexpr = 8):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(x_ptr + tl.arange(0, N), tl.maximum(x, 0.0, propagate_nan=3))
