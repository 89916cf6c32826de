#!/usr/bin/env python3
"""The DT FlashAttention schedules (examples/attention_flash*.dt, causal and not) against Triton's
tutorial 06 forward, timed by one method: triton.testing.do_bench in one process over the same torch
tensors, rounds alternated (DT, tutorial, then the reverse). The DT kernels are compiled by the Python
package (dtsim._dtsim.compile_file, with fp fusion and div.full as Triton compiles its own) and
launched on torch's stream; the tutorial runs with its configuration pinned to the DT schedules'
(BLOCK_M 128, BLOCK_N 64, 4 warps, 3 stages at head dim 64, 2 at 128) and sm_scale = 1/sqrt(head
dim), the DT algorithm's rsqrt(len(k)), so the outputs are compared too. 32 heads, batch 1, f16.

usage (GPU machine with torch and Triton; the tutorial is not part of this repository):
  python3 bench/dt_attention_vs_tutorial.py TUTORIAL.py [--pythonpath BUILD/python] [--rounds R]
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("tutorial", help="a copy of Triton's python/tutorials/06-fused-attention.py (its TMA forward)")
ap.add_argument("--pythonpath", default=os.path.join(ROOT, "build", "python"), help="where the dtsim package is")
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()
import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402
sys.path.insert(0, a.pythonpath)
sys.path.insert(0, os.path.join(ROOT, "bench"))
from dtsim import _dtsim  # noqa: E402
import attention_vs_triton as A  # noqa: E402
mod = A.load_tutorial(a.tutorial)
kern = A.kernel_of(mod, True)
allc = list(kern.configs)
R = a.rounds
rows = []
for n in (4096, 16384):
    for d in (64, 128):
        want = {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 3 if d == 64 else 2}
        match = [c for c in allc if A.config_text(c) == want]
        if not match:
            sys.exit(f"the tutorial has no configuration {want}")
        kern.configs = match[:1]
        kern.cache.clear()
        for causal in (True, False):
            torch.manual_seed(0)
            q, k, v = (torch.randn((1, 32, n, d), dtype=torch.float16, device="cuda") for _ in range(3))
            f = "examples/attention_flash%s%s.dt" % ("" if d == 64 else "128", "_causal" if causal else "")
            args = {"z_SIZE": "32", "m_SIZE": str(n), "l_SIZE": str(n)}
            c = _dtsim.compile_file(os.path.join(ROOT, f), args, fp_fusion=True, approx_div=True)
            out = torch.empty_like(q)
            bufs = {"Q": q, "K": k, "V": v, "attention": out}
            decl = c.buffers(c.launch_args)
            L = _dtsim.cuda_launcher(c, c.launch_args, [(nm, bufs[nm].data_ptr(), dt, list(s)) for nm, dt, s, _ in decl], sanitize="none")
            ptrs = [bufs[nm].data_ptr() for nm, *_ in decl]
            st = torch.cuda.current_stream().cuda_stream
            fd = lambda: L.launch(ptrs, st)
            ft = lambda: mod.attention(q, k, v, causal, 1.0 / math.sqrt(d))
            fd(); o_t = ft(); torch.cuda.synchronize()
            err = float((out.float() - o_t.float()).abs().max())
            td, tt = [], []
            for r in range(R):
                for lab, fn in ([("d", fd), ("t", ft)] if r % 2 == 0 else [("t", ft), ("d", fd)]):
                    (td if lab == "d" else tt).append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
            md, mt = sorted(td)[R // 2], sorted(tt)[R // 2]
            ratios = [b / a for a, b in zip(td, tt)]
            rows.append((n, d, causal, md, mt, mt / md, min(ratios), max(ratios), err))
            print(json.dumps(rows[-1]), flush=True)
            del q, k, v, out, L, c
            torch.cuda.empty_cache()
print("\n| keys x hd | causal | DT on dtsim ms | tutorial 06 ms | tutorial / DT (median) | rounds | max |DT - tutorial| |")
print("|---|---|---|---|---|---|---|")
for n, d, causal, md, mt, r, lo, hi, err in rows:
    print(f"| {n} x {d} | {'yes' if causal else 'no'} | {md:.4f} | {mt:.4f} | {r:.3f}x | {lo:.3f}-{hi:.3f}x | {err:.2e} |")
