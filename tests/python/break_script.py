# Host code for repl_session.py: copies 12 elements with 4 per instance.
import numpy as np
import triton
import triton.language as tl


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * bs + tl.arange(0, bs)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)


x = np.arange(12, dtype=np.float32)
z = np.zeros_like(x)
copy_k[(3,)](x, z, 12, bs=4)
assert np.array_equal(x, z)
print("copy ok")
