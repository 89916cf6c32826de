# expect-error: 10:5: a while loop on a runtime condition is not supported yet
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1 --arg n=3
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr, n):
    i = 0
    while i < n:
        i += 1
    tl.store(z_ptr + i, 1.0)
