"""Combine functions with if/else on their runtime arguments, shared by tests/ttir/combine_ifs.py
(both .py readers), tests/ttir/combine_returns.py (both) and tests/ttir/combine_branches.py (Triton's
frontend)."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def positive_parts(a, b):  # a + b counting only what is above zero
    if a > 0:
        if b > 0:
            r = a + b
        else:
            r = a
    else:
        if b > 0:
            r = b
        else:
            r = a * 0
    return r


@triton.jit
def first_max(av, ai, bv, bi):  # the larger value; the lower index on ties
    if av > bv:
        v = av
        i = ai
    elif av == bv:
        v = av
        i = tl.minimum(ai, bi)
    else:
        v = bv
        i = bi
    return v, i


@triton.jit
def larger_magnitude_returns(a, b):  # a return in each branch, nothing after the if
    ma = tl.abs(a)
    mb = tl.abs(b)
    if ma > mb:
        return ma
    else:
        return mb


def forward_fill(v):
    """numpy's answer for a scan that keeps the last nonzero value (0 before the first)."""
    out, last = [], 0
    for e in v:
        last = e if e != 0 else last
        out.append(last)
    return np.array(out, np.int32)
