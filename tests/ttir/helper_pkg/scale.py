import triton
import triton.language as tl


@triton.jit
def halve(x):
    return x * 0.5


@triton.jit
def cube(x):
    return x * x * x
