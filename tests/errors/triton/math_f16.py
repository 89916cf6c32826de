# expect-error: 10:16: tl.exp(): expected dtype ['fp32', 'fp64'] but got fp16, as Triton's math functions check (convert with .to(tl.float32))
# args: --buf x_ptr=f16[64] --buf z_ptr=f16[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    y = tl.exp(x)
    tl.store(z_ptr + tl.arange(0, 64), y)
