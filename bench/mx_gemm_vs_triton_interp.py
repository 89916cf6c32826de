#!/usr/bin/env python3
"""One launch of a blocked MX-FP4 GEMM (`tl.dot_scaled` of e2m1 x e2m1 with e8m0 scales, 128 x 128 x
1024, blocks 64 x 64 x 128: 4 program instances of 8 K steps), timed median of 3 after a warm-up.

usage (where Triton and torch are installed, dtsim's package on PYTHONPATH):
  python -m dtsim bench/mx_gemm_vs_triton_interp.py          # dtsim (DTSIM_SANITIZE=none: no sanitizer)
  TRITON_INTERPRET=1 python bench/mx_gemm_vs_triton_interp.py  # Triton's interpreter (torch CPU tensors)
Prints the median and the sum of the result (equal under both when they agree)."""
import os
import time

import numpy as np
import triton
import triton.language as tl


@triton.jit
def mx_gemm(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * (K // 2) + (k // 2 + tl.arange(0, BK // 2))[None, :])
        b = tl.load(b_ptr + (k // 2 + tl.arange(0, BK // 2))[:, None] * N + rn[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + (k // 32 + tl.arange(0, BK // 32))[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + (k // 32 + tl.arange(0, BK // 32))[None, :])
        acc = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


M = N = 128
K = 1024
rng = np.random.default_rng(0)
a = rng.integers(0, 256, (M, K // 2), dtype=np.uint8)
b = rng.integers(0, 256, (K // 2, N), dtype=np.uint8)
sa = rng.integers(124, 130, (M, K // 32), dtype=np.uint8)
sb = rng.integers(124, 130, (N, K // 32), dtype=np.uint8)
c = np.zeros((M, N), np.float32)
if os.environ.get("TRITON_INTERPRET") == "1":
    import torch
    a, b, sa, sb, c = map(torch.from_numpy, (a, b, sa, sb, c))
grid = (M // 64, N // 64)
mx_gemm[grid](a, sa, b, sb, c, M, N, K, BM=64, BN=64, BK=128)
ts = []
for _ in range(3):
    t = time.perf_counter()
    mx_gemm[grid](a, sa, b, sb, c, M, N, K, BM=64, BN=64, BK=128)
    ts.append(time.perf_counter() - t)
print("median %.1f ms, sum %.3f" % (sorted(ts)[1] * 1e3, float(np.asarray(c).sum())))
