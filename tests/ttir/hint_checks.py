"""Compiler hints checked by the sanitizer: tl.multiple_of, tl.max_contiguous and tl.max_constancy
that hold run clean and give the results of the unchecked run bit for bit; a false one of each kind
is a finding at the hint's line naming the first lane that breaks it and the instance; the old
matmul form with `tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)` runs clean at odd
sizes (its wrapped lanes restart at 0); --sanitize=none (sanitize='none') does not check hints.
Run by Triton's frontend (TTIR) and, with DTSIM_STANDIN=1, by dtsim's own .py reader."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
import ttir_check

failures = []
CUDA = dtsim.config()["backend"] == "cuda"  # hints are checked on the interpreter only


def expect(name, fn, *needles):
    if CUDA:
        print("%-28s skipped on backend='cuda' (hints unchecked there, as on Triton's GPU build)" % name)
        return
    try:
        fn()
    except dtsim.KernelError as e:
        text = str(e)
        missing = [n for n in needles if n not in text]
        if missing:
            print("%-28s FAILED: %r not in message:\n%s" % (name, missing, text))
            failures.append(name)
        else:
            print("%-28s ok" % name)
        return
    print("%-28s FAILED: no finding" % name)
    failures.append(name)


def clean(name, fn):
    try:
        fn()
    except dtsim.KernelError as e:
        print("%-28s FAILED: a finding where the hints hold:\n%s" % (name, e))
        failures.append(name)
        return
    print("%-28s ok" % name)


@triton.jit
def aligned_copy(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    base = tl.program_id(0) * BLOCK + shift
    offs = tl.multiple_of(base + tl.arange(0, BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def scalar_start(x_ptr, y_ptr, step, BLOCK: tl.constexpr):
    start = tl.multiple_of(tl.program_id(0) * step, 16)
    offs = start + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def strided_gather(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    idx = tl.max_contiguous(tl.arange(0, BLOCK) * stride, 8)
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + idx))


@triton.jit
def grouped(x_ptr, y_ptr, div, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    g = tl.max_constancy(offs // div, 4)
    tl.store(y_ptr + offs, tl.load(x_ptr + g))


@triton.jit
def rows_2d(x_ptr, y_ptr, ld, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None] * ld
    offs = tl.multiple_of(rows + tl.arange(0, C)[None, :], [2, C])
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    group = pid // width
    size_m = min(grid_m - group * GROUP_M, GROUP_M)
    pid_m = group * GROUP_M + (pid % size_m)
    pid_n = (pid % width) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + ram[:, None] * s_am + rk[None, :] * s_ak
    b_ptrs = b_ptr + rk[:, None] * s_bk + rbn[None, :] * s_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * s_ak
        b_ptrs += BLOCK_K * s_bk
    c_ptrs = c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def at(text):
    return ttir_check.at(__file__, text)


x = np.arange(512, dtype=np.float32)
y = np.zeros_like(x)

# divisibility: a run of consecutive values starts at a multiple of BLOCK (or the hint is false)
clean("multiple_of holds", lambda: aligned_copy[(6,)](x, y, 100, 16, BLOCK=16))
if not np.array_equal(y[16:100], x[16:100]):
    print("aligned copy FAILED: wrong result")
    failures.append("aligned copy")
expect("multiple_of false", lambda: aligned_copy[(4,)](x, y, 100, 3, BLOCK=16),
       at("offs = tl.multiple_of(base"), "tl.multiple_of", "not a multiple of 16", "lane 0: 3", "pid [0]")
clean("scalar multiple_of holds", lambda: scalar_start[(3,)](x, y, 32, BLOCK=16))
expect("scalar multiple_of false", lambda: scalar_start[(3,)](x, y, 24, BLOCK=16),
       at("start = tl.multiple_of("), "not a multiple of 16", "pid [1]")
clean("2-d multiple_of holds", lambda: rows_2d[(1,)](x, y, 16, R=8, C=8))
expect("2-d multiple_of false", lambda: rows_2d[(1,)](x, y, 12, R=8, C=8),
       at("offs = tl.multiple_of(rows"), "along dimension 1", "not a multiple of 8", "lane [1, 0]: 12")

# contiguity: aligned groups of 8 lanes hold consecutive values
clean("max_contiguous holds", lambda: strided_gather[(1,)](x, y, 1, BLOCK=32))
expect("max_contiguous false", lambda: strided_gather[(1,)](x, y, 2, BLOCK=32),
       at("idx = tl.max_contiguous("), "tl.max_contiguous", "consecutive values", "lane 1: 2, 0", "pid [0]")

# constancy: aligned groups of 4 lanes hold one value
clean("max_constancy holds", lambda: grouped[(2,)](x, y, 4, BLOCK=32))
expect("max_constancy false", lambda: grouped[(2,)](x, y, 2, BLOCK=32),
       at("g = tl.max_constancy("), "tl.max_constancy", "one value", "lane 2: 1, 0", "pid [0]")

# the sanitizer off: hints are not checked
dtsim.config(sanitize="none")
try:
    aligned_copy[(4,)](x, y, 100, 3, BLOCK=16)
    strided_gather[(1,)](x, y, 2, BLOCK=32)
    print("%-28s ok" % "sanitize='none'")
except dtsim.KernelError as e:
    print("sanitize='none' FAILED: a hint was checked:\n%s" % e)
    failures.append("sanitize none")
dtsim.config(sanitize="all")

# the matmul with its hints at odd sizes: no finding, and the result of the unchecked run bit for bit
rng = np.random.default_rng(3)
for M, N, K in ((67, 45, 33), (100, 129, 40), (16, 16, 16)):
    a = rng.integers(-2, 3, (M, K)).astype(np.float32)
    b = rng.integers(-2, 3, (K, N)).astype(np.float32)
    runs = []
    for mode in ("all", "none"):
        dtsim.config(sanitize=mode)
        c = np.zeros((M, N), np.float32)
        grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
        clean("matmul %dx%dx%d (%s)" % (M, N, K, mode),
              lambda: matmul[grid](a, b, c, M, N, K, a.strides[0] // 4, 1, b.strides[0] // 4, 1, c.strides[0] // 4, 1,
                                   BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=4))
        runs.append(c)
    dtsim.config(sanitize="all")
    if not np.array_equal(runs[0], a @ b) or runs[0].tobytes() != runs[1].tobytes():
        print("matmul %dx%dx%d FAILED: wrong result" % (M, N, K))
        failures.append("matmul")

if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("hints: true ones clean, false ones located")
