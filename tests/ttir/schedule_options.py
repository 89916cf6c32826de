"""A Triton kernel asking for warp specialization (tl.range(..., warp_specialize=True)) read by the
installed Triton's frontend: its TTIR loop carries {tt.warp_specialize}, and the lowered kernel has
the schedule option warp_specialize (the tile IR's header says so), which the CUDA backend's plan
takes as a request. The interpreter ignores the option: the product must match numpy. Run with
`python -m dtsim schedule_options.py` where Triton is installed."""
import importlib.util
import os
import sys

import numpy as np
import triton

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("matmul_ws", os.path.join(here, "..", "triton", "matmul_ws.py"))
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)

M, N, K = 150, 130, 200
rng = np.random.default_rng(3)
a = rng.standard_normal((M, K)).astype(np.float16)
b = rng.standard_normal((K, N)).astype(np.float16)
c = np.zeros((M, N), np.float16)
mod.matmul_ws[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32)
want = a.astype(np.float32) @ b.astype(np.float32)
err = float(np.max(np.abs(c.astype(np.float32) - want)))
ok = err <= 0.05 * max(1.0, float(np.max(np.abs(want))))
print("matmul_ws result: %s (max abs err %.3g)" % ("ok" if ok else "FAILED", err))

fn = mod.matmul_ws
while not isinstance(fn, triton.runtime.jit.JITFunction):
    fn = fn.fn
kernels = list(fn.__dict__.get("_dtsim_kernels", {}).values())
ttir = [k.asm["ttir"] for k in kernels]
irs = [c.tile_ir for k in kernels for c in k.lowered.values()]
has_attr = any("tt.warp_specialize" in t for t in ttir)
has_option = bool(irs) and all(" warp_specialize {" in t for t in irs)
print("TTIR loop attribute tt.warp_specialize: %s" % ("yes" if has_attr else "NO"))
print("tile IR schedule option warp_specialize: %s" % ("yes" if has_option else "NO"))
sys.exit(0 if ok and has_attr and has_option else 1)
