"""@triton.jit helpers reached through a package import (`from helpers import ext as tle`)."""
import triton
import triton.language as tl


@triton.jit
def program_id(axis):
    return tl.program_id(axis)


@triton.jit
def scaled(x, s):
    return x * s


@triton.jit
def clamp01(x):
    return tl.minimum(tl.maximum(x, 0.0), 1.0)


@triton.jit(noinline=True)
def twice(s):
    return s * 2
