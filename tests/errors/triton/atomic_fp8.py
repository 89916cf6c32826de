# expect-error: 10:5: tl.atomic_add() on a pointer to fp8e5: Triton rejects it ("atomic_add does not support fp8e5")
# args: --buf h_ptr=f8e5m2[8] --buf x_ptr=f32[8] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(h_ptr, x_ptr):
    o = tl.arange(0, 8)
    tl.atomic_add(h_ptr + o, tl.load(x_ptr + o).to(tl.float8e5))
