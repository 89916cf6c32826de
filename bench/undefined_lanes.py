#!/usr/bin/env python3
"""The cost of tracking the lanes a tl.load without `other` leaves undefined (docs/triton.md,
"Undefined lanes of masked loads"; bench/NOTES.md 61): Triton's tutorial 01 form (two masked loads
without `other`, a masked store) on n = 2^20 + 3 elements, BLOCK 1024, the sanitizer at `all`, one
thread, launched through `python -m dtsim`'s Triton path; the check on (DTSIM_UNDEFINED_LANES=1,
read at each lowering), then off (the default); and the same kernel with `other=0.0` with the check
on, which leaves it as it is; then a kernel whose check stays (x - mean(x) stored under the mask:
the mean's companion is a reduction), on and off. Prints the best of R launches in ms.
  python -m dtsim bench/undefined_lanes.py [--quick]"""
import os
import sys
import time

import numpy as np
import triton
import triton.language as tl

import dtsim


@triton.jit
def add_no_other(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x + y, mask=mask)


@triton.jit
def add_other(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(z_ptr + offs, x + y, mask=mask)


@triton.jit
def center(x_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    mean = tl.sum(tl.where(mask, x, 0.0), axis=0) / BLOCK
    tl.store(z_ptr + offs, x - mean, mask=mask)


def best(kernel, args, reps):
    n = args[-1]
    grid = (triton.cdiv(n, 1024),)
    kernel[grid](*args, BLOCK=1024)  # lowers
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        kernel[grid](*args, BLOCK=1024)
        t.append(time.perf_counter() - s)
    return min(t) * 1e3


def main():
    reps = 2 if "--quick" in sys.argv else 7
    n = 2**20 + 3
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    args = (x, y, z, n)
    os.environ["DTSIM_UNDEFINED_LANES"] = "1"
    on = best(add_no_other, args, reps)
    assert np.array_equal(z, x + y)
    other = best(add_other, args, reps)
    del os.environ["DTSIM_UNDEFINED_LANES"]
    off = best(add_no_other, args, reps)
    os.environ["DTSIM_UNDEFINED_LANES"] = "1"
    c_on = best(center, (x, z, n), reps)
    del os.environ["DTSIM_UNDEFINED_LANES"]
    c_off = best(center, (x, z, n), reps)
    print("no other, check on : %8.2f ms" % on)
    print("no other, check off: %8.2f ms  (on / off = %.2f)" % (off, on / off))
    print("other=0.0, check on: %8.2f ms" % other)
    print("center, check on   : %8.2f ms" % c_on)
    print("center, check off  : %8.2f ms  (on / off = %.2f)" % (c_off, c_on / c_off))


main()
