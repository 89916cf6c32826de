#!/usr/bin/env python3
"""What one launch of a @triton.jit kernel costs the host: a vector add over 1024 elements (one program
instance, a few microseconds of GPU time), launched back to back from Python on torch CUDA tensors, so
the time per launch is the launch path's (binding, specialization lookup, the driver call), not the
kernel's. Run once with Triton compiling the kernel and once under dtsim on the GPU:

  python3 bench/launch_overhead.py --label triton
  python3 -m dtsim --backend=cuda --sanitize=none bench/launch_overhead.py --label dtsim

Each line printed is one JSON object: label, n, `async_us` (microseconds per launch over --reps
launches issued back to back, one synchronize at the end: the host cost when nothing waits for the
GPU) and `sync_us` (a launch followed by torch.cuda.synchronize(), per launch: the round trip), both
medians of --rounds rounds, and whether the output is right.
"""
import argparse
import json
import time

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", default="triton")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    x = torch.randn(a.n, device="cuda")
    y = torch.randn(a.n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(a.n, 1024),)
    add_kernel[grid](x, y, out, a.n, BLOCK=1024)  # compiles
    torch.cuda.synchronize()
    ok = bool(torch.equal(out, x + y))
    async_us, sync_us = [], []
    for _ in range(a.rounds):
        t = time.perf_counter()
        for _ in range(a.reps):
            add_kernel[grid](x, y, out, a.n, BLOCK=1024)
        torch.cuda.synchronize()
        async_us.append((time.perf_counter() - t) * 1e6 / a.reps)
        t = time.perf_counter()
        for _ in range(a.reps // 4):
            add_kernel[grid](x, y, out, a.n, BLOCK=1024)
            torch.cuda.synchronize()
        sync_us.append((time.perf_counter() - t) * 1e6 / (a.reps // 4))
    med = lambda v: sorted(v)[len(v) // 2]
    print(json.dumps({"label": a.label, "n": a.n, "async_us": round(med(async_us), 2), "sync_us": round(med(sync_us), 2),
                      "correct": ok}), flush=True)


if __name__ == "__main__":
    main()
