#!/usr/bin/env python3
"""dtsim's interpreter against Triton's own interpreter (TRITON_INTERPRET=1) on the same CPU, in one
process call: the workloads of dtsim_bench (bench/interp_bench.cpp, kernels in bench/kernels/),
written here as Triton kernels with the same sizes and block shapes, each timed best of REPS after
one warm-up run; dtsim_bench times its side with `--only NAME --profile THREADS none|all REPS`.

usage (on a machine with python3, torch and triton; from anywhere):
  TRITON_INTERPRET=1 python3 bench/interp_vs_triton.py PATH/TO/dtsim_bench [--threads N] [--only NAME] [--reps R]

Prints one row per workload (Triton ms; dtsim 1 thread sanitizer all and off; dtsim N threads
sanitizer all; Triton / dtsim ratios) and the geometric means of the ratios. Exit status 1 when a
Triton result differs from torch's (the comparison would be meaningless) or dtsim_bench fails.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

if os.environ.get("TRITON_INTERPRET") != "1":
    sys.exit("run with TRITON_INTERPRET=1 (this times Triton's CPU interpreter)")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def add_k(x, y, z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def softmax_k(x, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=m, other=-float("inf"))
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(y + row * n_cols + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def matmul_k(a, b, c, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):  # K is constexpr: Triton 3.6's interpreter rejects a runtime bound here
        ta = tl.load(a + rm[:, None] * K + (rk[None, :] + k), mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        tb = tl.load(b + (rk[:, None] + k) * N + rn[None, :], mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(ta, tb, input_precision="ieee")
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def layernorm_k(x, w, b, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=m, other=0.0)
    mean = tl.sum(v, axis=0) / n_cols
    xc = tl.where(m, v - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + 0.00001)
    wv = tl.load(w + cols, mask=m)
    bv = tl.load(b + cols, mask=m)
    tl.store(y + row * n_cols + cols, xc * rstd * wv + bv, mask=m)


@triton.jit
def rmsnorm_k(x, w, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=m, other=0.0)
    ms = tl.sum(v * v, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(ms + 0.00001)
    wv = tl.load(w + cols, mask=m)
    tl.store(y + row * n_cols + cols, v * rstd * wv, mask=m)


def case_add(n, block):
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    return lambda: add_k[(triton.cdiv(n, block),)](x, y, z, n, BLOCK=block), lambda: torch.allclose(z, x + y)


def case_softmax(rows, cols):
    x, y = torch.randn(rows, cols), torch.empty(rows, cols)
    return lambda: softmax_k[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols)), lambda: torch.allclose(y, torch.softmax(x, 1), atol=1e-5)


def case_matmul(n, bm, bn, bk):
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
    grid = (triton.cdiv(n, bm), triton.cdiv(n, bn))
    return lambda: matmul_k[grid](a, b, c, n, n, n, BM=bm, BN=bn, BK=bk), lambda: torch.allclose(c, a @ b, atol=1e-3, rtol=1e-3)


def case_layernorm(rows, cols):
    x, w, b, y = torch.randn(rows, cols), torch.randn(cols), torch.randn(cols), torch.empty(rows, cols)
    ref = lambda: torch.nn.functional.layer_norm(x, (cols,), w, b, 1e-5)  # noqa: E731
    return lambda: layernorm_k[(rows,)](x, w, b, y, cols, BLOCK=triton.next_power_of_2(cols)), lambda: torch.allclose(y, ref(), atol=1e-4)


def case_rmsnorm(rows, cols):
    x, w, y = torch.randn(rows, cols), torch.randn(cols), torch.empty(rows, cols)
    ref = lambda: x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-5) * w  # noqa: E731
    return lambda: rmsnorm_k[(rows,)](x, w, y, cols, BLOCK=triton.next_power_of_2(cols)), lambda: torch.allclose(y, ref(), atol=1e-4)


# dtsim_bench workload name (its --only key), the Triton case, Triton repetitions (slow ones fewer)
WORKLOADS = [
    ("add n=2^20 BLOCK=1024", lambda: case_add(1 << 20, 1024), 3),
    ("add n=2^16 BLOCK=64", lambda: case_add(1 << 16, 64), 3),
    ("softmax 512x1000", lambda: case_softmax(512, 1000), 3),
    ("matmul 256^3 32x32x32", lambda: case_matmul(256, 32, 32, 32), 3),
    ("matmul 512^3 64x64x32", lambda: case_matmul(512, 64, 64, 32), 1),
    ("layernorm 4096x1024", lambda: case_layernorm(4096, 1024), 1),
    ("rmsnorm 4096x1024", lambda: case_rmsnorm(4096, 1024), 1),
]


def best_of(fn, reps):
    fn()
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def dtsim_ms(bench, name, threads, sanitize, reps):
    r = subprocess.run([bench, "--only", name, "--profile", str(threads), sanitize, str(reps)], capture_output=True, text=True, timeout=600)
    m = re.search(r"best of \d+: ([0-9.]+) ms", r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f"dtsim_bench failed on {name!r}:\n{r.stdout}{r.stderr}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dtsim_bench")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--only", default="")
    ap.add_argument("--reps", type=int, default=5, help="dtsim repetitions (best of)")
    a = ap.parse_args()
    torch.manual_seed(0)
    print(f"triton {triton.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads); dtsim N = {a.threads} threads", flush=True)
    head = ("workload", "triton ms", "1T all", "1T off", "NT all", "x 1T all", "x 1T off", "x NT all")
    print("%-24s %10s %9s %9s %9s %9s %9s %9s" % head, flush=True)
    logs = [[], [], []]
    anchor = []  # 1 thread sanitizer all, the five workloads of the anchor set (not the norms)
    for name, make, reps in WORKLOADS:
        if a.only and a.only not in name:
            continue
        run, ok = make()
        t = best_of(run, reps)
        if not ok():
            sys.exit(f"{name}: Triton's result differs from torch's")
        d1 = dtsim_ms(a.dtsim_bench, name, 1, "all", a.reps)
        d0 = dtsim_ms(a.dtsim_bench, name, 1, "none", a.reps)
        dn = dtsim_ms(a.dtsim_bench, name, a.threads, "all", a.reps)
        for i, d in enumerate((d1, d0, dn)):
            logs[i].append(math.log(t / d))
        if "norm" not in name:
            anchor.append(math.log(t / d1))
        print("%-24s %10.1f %9.2f %9.2f %9.2f %8.0fx %8.0fx %8.0fx" % (name, t, d1, d0, dn, t / d1, t / d0, t / dn), flush=True)
    if logs[0]:
        g = [math.exp(sum(l) / len(l)) for l in logs]
        print(f"geometric mean, Triton interpreter / dtsim: 1 thread sanitizer all {g[0]:.0f}x, off {g[1]:.0f}x; {a.threads} threads all {g[2]:.0f}x")
    if anchor:
        print(f"geometric mean over the add/softmax/matmul anchors, 1 thread sanitizer all: {math.exp(sum(anchor) / len(anchor)):.0f}x")


if __name__ == "__main__":
    main()
