# BUG (planted, the guide's first version): the offsets ignore the pid, so every instance copies the
# first bs elements: equal values stored to z[0:bs] by every instance (a sanitizer warning).
# The fix is examples/triton/copy.py: offs = pid * bs + tl.arange(0, bs).
import triton
import triton.language as tl


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr = 64):
    pid = tl.program_id(0)
    offs = tl.arange(0, bs)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)
