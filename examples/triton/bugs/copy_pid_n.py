# BUG (planted, the guide's second version): the block start is pid * n instead of pid * bs. The
# mask is computed from the intended offsets, so it does not guard the real ones: every instance
# but pid 0 reads beyond the end of x (the sanitizer reports the out-of-bounds load).
# The fix is examples/triton/copy.py: offs = pid * bs + tl.arange(0, bs).
import triton
import triton.language as tl


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr = 64):
    pid = tl.program_id(0)
    mask = pid * bs + tl.arange(0, bs) < n
    offs = pid * n + tl.arange(0, bs)
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)
