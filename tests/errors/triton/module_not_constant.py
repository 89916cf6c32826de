# expect-error: 8:14: 'torch.ones' is host code: a kernel can use only compile-time constant
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


import torch
SCALE = torch.ones(3)


@triton.jit
def k(x_ptr, z_ptr):
    tl.store(z_ptr + tl.arange(0, 64), SCALE)
