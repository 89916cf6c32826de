"""Kernels read by the installed Triton's frontend (TTIR) and run on dtsim, launched with numpy
arrays; each result is checked against numpy. Run with `python -m dtsim kernels.py` in an
environment where Triton is installed."""

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

from helpers import ext as tle
from ttir_check import check, finish


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for r in tl.range(start, n_rows, step, num_stages=STAGES):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        row = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=-float("inf"))
        row = row - tl.max(row, axis=0)
        num = tl.exp(row)
        tl.store(out_ptr + r * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def grouped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, GROUP_M: tl.constexpr, ACT: tl.constexpr):
    pid = tle.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    group_size = min(num_pid_m - first_m, GROUP_M)  # Python's min on runtime values
    pid_m = first_m + ((pid % in_group) % group_size)
    pid_n = (pid % in_group) // group_size
    tl.assume(pid_m >= 0)
    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    if ACT == "leaky_relu":
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(c_ptr.dtype.element_ty)  # dtype introspection
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + scm * rows[:, None] + scn * cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def layernorm_rows(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * tl.load(W + cols, mask=mask) + tl.load(B + cols, mask=mask), mask=mask)


@triton.jit
def control_flow(x_ptr, out_ptr, idx_ptr, n, step, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = (offs < n) and (offs >= 0)  # `and` on tensors
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if pid % 2 == 0:  # a runtime if with a result
        y = x * 2.0
    else:
        y = tle.scaled(x, 3.0)
    i = 0
    while i < n:  # a runtime while
        y += 0.5
        i += tle.twice(step) // 2  # a noinline helper (tt.call)
    if not (pid > 100):
        y = y - 1.0
    tl.store(out_ptr + offs, tle.clamp01(y * 0.25), mask=mask)
    tl.store(idx_ptr + pid, tl.argmax(x, axis=0))


@triton.jit
def math_ops(x_ptr, out_ptr, n, BLOCK: tl.constexpr, DT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0).to(DT)
    r = libdevice.tanh(x) + tl.sigmoid(x) + tl.exp2(x) * 0.125 + tl.rsqrt(tl.abs(x) + 1.0) + tl.fma(x, x, 1.0)
    r += tl.clamp(x, -0.5, 0.5) + tl.minimum(x, 0.25) + tl.maximum(x, -0.25) + (offs // 3 % 5).to(tl.float32)
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def desc_in_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    x = src.load([pid_m * BM, pid_n * BN])  # lanes past the edge read 0
    dst.store([pid_m * BM, pid_n * BN], x * 2.0 + 1.0)  # and are not written


@triton.jit(noinline=True)
def make_desc(p, B: tl.constexpr):
    return tl.make_tensor_descriptor(p, shape=[B], strides=[1], block_shape=[B])


@triton.jit(noinline=True)
def negate_desc(src, dst):
    dst.store([0], -src.load([0]))


@triton.jit
def desc_calls(x_ptr, y_ptr, z_ptr, B: tl.constexpr):
    # descriptors returned by and passed to noinline functions
    make_desc(y_ptr, B).store([0], make_desc(x_ptr, B).load([0]) * 2)
    negate_desc(tl.make_tensor_descriptor(x_ptr, shape=[B], strides=[1], block_shape=[B]), make_desc(z_ptr, B))


@triton.jit
def desc_from_host(desc, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    x = desc.load([pid * BM, 0])
    rows = pid * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tl.sum(x, axis=1)[:, None] + 0.0 * x)


@triton.jit
def desc_pair(pair, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    # a tuple argument holding a host descriptor and a row offset
    x = pair[0].load([pair[1], 0])
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], x)


@triton.jit
def early_return(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:  # an early return: branches between blocks in TTIR
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if tl.sum(x, axis=0) > 1000.0:
        tl.store(y_ptr + offs, x, mask=offs < n)
        return
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


@triton.jit
def split_join(x_ptr, y_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    half = tl.arange(0, N // 2)[None, :]
    x = tl.load(x_ptr + rows * N + tl.arange(0, N)[None, :])
    acc = tl.permute(tl.reshape(x, (M, 2, N // 2)), (0, 2, 1))  # tutorial 09's epilogue subtiling
    lo, hi = tl.split(acc)
    b0, b1 = tl.split(tl.join(hi, lo))
    tl.store(y_ptr + rows * (N // 2) + half, b1)
    tl.store(z_ptr + rows * (N // 2) + half, b0)


@triton.jit
def random_numbers(iout_ptr, fout_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(iout_ptr + offs, tl.randint(seed, offs), mask=offs < n)
    tl.store(fout_ptr + offs, tl.rand(seed, offs), mask=offs < n)


def philox_randint(seed, offs, rounds=10):
    """Philox4x32-10, the first of the four words, on counter (offs, 0, 0, 0) and key seed: the
    generator tl.randint is specified as (an independent numpy version)."""
    m = np.uint64(0xFFFFFFFF)
    c0, c1, c2, c3 = (offs.astype(np.uint64) & m, np.zeros(offs.shape, np.uint64), np.zeros(offs.shape, np.uint64),
                      np.zeros(offs.shape, np.uint64))
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    for _ in range(rounds):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0) & m, p1 & m, ((p0 >> np.uint64(32)) ^ c3 ^ k1) & m, p0 & m
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return c0.astype(np.uint32).view(np.int32)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 300), dtype=np.float32)
    y = np.empty_like(x)
    softmax_rows[(8,)](y, x, x.shape[1], y.shape[1], 37, 300, BLOCK=512, STAGES=2)
    e = np.exp(x - x.max(1, keepdims=True))
    check("softmax (tl.range)", y, e / e.sum(1, keepdims=True), tol=1e-5)

    M, N, K = 70, 90, 100
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.empty((M, N), np.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    grouped_matmul[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=32, BN=32, BK=32, GROUP_M=4, ACT="leaky_relu")
    ref = a.astype(np.float32) @ b.astype(np.float32)
    check("grouped matmul f16", c, np.where(ref >= 0, ref, 0.01 * ref), tol=5e-3)

    xs = rng.standard_normal((13, 200), dtype=np.float32)
    w = rng.standard_normal(200, dtype=np.float32)
    bb = rng.standard_normal(200, dtype=np.float32)
    ys, mean, rstd = np.empty_like(xs), np.empty(13, np.float32), np.empty(13, np.float32)
    layernorm_rows[(13,)](xs, ys, w, bb, mean, rstd, 200, 200, 1e-5, BLOCK=64)
    mu = xs.mean(1, keepdims=True)
    sd = 1 / np.sqrt(((xs - mu) ** 2).mean(1, keepdims=True) + 1e-5)
    check("layernorm", ys, (xs - mu) * sd * w + bb, tol=1e-4)
    check("layernorm rstd", rstd, sd[:, 0], tol=1e-4)

    n = 1000
    xv = rng.standard_normal(n, dtype=np.float32)
    out = np.empty(n, np.float32)
    idx = np.empty(8, np.int32)
    control_flow[(8,)](xv, out, idx, n, 300, BLOCK=128)
    pid = np.arange(n) // 128
    want = np.where(pid % 2 == 0, xv * 2.0, xv * 3.0) + 0.5 * 4 - 1.0
    check("if/while/helpers", out, np.clip(want * 0.25, 0.0, 1.0), tol=1e-5)
    check("argmax", idx, [np.argmax(np.where(np.arange(p * 128, p * 128 + 128) < n, np.pad(xv, (0, 24))[p * 128:p * 128 + 128], 0.0)) for p in range(8)], tol=1e-5)

    mo = np.empty(n, np.float32)
    math_ops[(triton.cdiv(n, 256),)](xv, mo, n, BLOCK=256, DT=tl.float32)
    o = np.arange(n)
    want = (np.tanh(xv) + 1 / (1 + np.exp(-xv)) + np.exp2(xv) * 0.125 + 1 / np.sqrt(np.abs(xv) + 1) + xv * xv + 1 +
            np.clip(xv, -0.5, 0.5) + np.minimum(xv, 0.25) + np.maximum(xv, -0.25) + (o // 3 % 5))
    check("math and libdevice", mo, want, tol=1e-5)

    xe = np.arange(100, dtype=np.float32)
    ye = np.full(100, -1.0, np.float32)
    early_return[(8,)](xe, ye, 100, BLOCK=32)
    sums = np.add.reduceat(xe, [0, 32, 64, 96])
    check("early return", ye, np.concatenate([np.where(s > 1000, 1.0, 2.0) * xe[i * 32:i * 32 + 32] for i, s in enumerate(sums)]), tol=1e-5)

    ri, rf = np.zeros(1000, np.int32), np.zeros(1000, np.float32)
    random_numbers[(4,)](ri, rf, 1234, 1000, BLOCK=256)
    want_i = philox_randint(1234, np.arange(1000))
    check("tl.randint (Philox)", ri, want_i)
    check("tl.rand", rf, np.where(want_i < 0, -want_i.astype(np.float64) - 1, want_i) * 4.6566127342e-10, tol=1e-7)

    xs2 = rng.standard_normal((4, 16), dtype=np.float32)
    lo, hi = np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32)
    split_join[(1,)](xs2, lo, hi, M=4, N=16)
    check("permute/split/join", np.concatenate([lo, hi], 1), xs2, tol=1e-5)

    xm = rng.standard_normal((50, 70), dtype=np.float32)
    ym = np.full((50, 70), 7.0, np.float32)
    desc_in_kernel[(triton.cdiv(50, 16), triton.cdiv(70, 32))](xm, ym, 50, 70, BM=16, BN=32)
    check("tensor descriptor (kernel)", ym, xm * 2.0 + 1.0, tol=1e-5)

    xd = np.arange(4, dtype=np.float32)
    yd, zd = np.zeros(4, np.float32), np.zeros(4, np.float32)
    desc_calls[(1,)](xd, yd, zd, B=4)
    check("tensor descriptors through noinline calls", np.concatenate([yd, zd]), np.concatenate([xd * 2, -xd]))

    from triton.tools.tensor_descriptor import TensorDescriptor
    xh = rng.standard_normal((64, 40), dtype=np.float32)
    oh = np.zeros((64, 64), np.float32)
    from dtsim.triton_launch import HostArray  # a numpy array as a tensor (data_ptr, dtype)
    d = TensorDescriptor(HostArray(xh), list(xh.shape), [40, 1], [16, 64])
    desc_from_host[(4,)](d, oh, 64, BM=16, BN=64)
    check("tensor descriptor (host)", oh[:, :40], np.repeat(xh.sum(1, keepdims=True), 40, 1), tol=1e-5)
    # in a tuple, with padding="nan": rows 56..71 and columns 0..63 of a 64 x 40 tensor, NaN outside
    for pad in ("zero", "nan"):
        op = np.full((16, 64), -1, np.float32)
        dn = TensorDescriptor(HostArray(xh), list(xh.shape), [40, 1], [16, 64], padding=pad)
        desc_pair[(1,)]((dn, 56), op, BM=16, BN=64)
        want = np.full((16, 64), np.nan if pad == "nan" else 0, np.float32)
        want[:8, :40] = xh[56:, :]
        check("tensor descriptor in a tuple, padding=%r" % pad, op, want)

    finish("all kernels match")


main()
