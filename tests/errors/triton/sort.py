# expect-error: 10:9: tl.sort(): static assertion failed: only the last dimension can be sorted
# args: --buf x_ptr=i32[64] --buf z_ptr=i32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
    h = tl.sort(tl.load(x_ptr + o), dim=0)
    tl.store(z_ptr + o, h)
