"""A helper of tests/ttir/undefined_lanes.py in a module of its own: a finding about its load names
this file."""
import triton
import triton.language as tl


@triton.jit
def load_tail(p, offs, n):
    return tl.load(p + offs, mask=offs < n)  # a helper's load without `other`
