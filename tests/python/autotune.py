# triton.autotune with several configs (one with num_stages=0: no pipelining) and triton.heuristics, numpy host code. Under
# `python -m dtsim` the first config runs; with DTSIM_AUTOTUNE=all every config runs and their
# outputs must agree. A kernel that depends on the block size makes the configs disagree.
import os
import sys

import numpy as np
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=2), triton.Config({'BLOCK': 128}, num_warps=4),
                          triton.Config({'BLOCK': 256}, num_warps=8, num_stages=0)], key=['n'])
@triton.heuristics({'EVEN': lambda args: args['n'] % args['BLOCK'] == 0})
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, x * alpha)
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * alpha, mask=mask)


@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})], key=['n'])
@triton.jit
def block_id_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 0 + pid, mask=offs < n)


for n in (1000, 1024):
    x = np.random.default_rng(n).standard_normal(n, dtype=np.float32)
    out = np.zeros_like(x)
    scale_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK']),)](x, out, n, 0.5)
    assert np.array_equal(out, x * np.float32(0.5)), "scale_kernel n=%d" % n
print("autotune + heuristics: outputs match numpy")

out = np.zeros(256, dtype=np.int32)
try:
    block_id_kernel[lambda meta: (triton.cdiv(256, meta['BLOCK']),)](out, 256)
except AssertionError as e:
    print("disagreement:", e)
    sys.exit(0 if os.environ.get("DTSIM_AUTOTUNE") == "all" else 1)
assert np.array_equal(out, np.arange(256) // 64), "first config's result"
sys.exit(1 if os.environ.get("DTSIM_AUTOTUNE") == "all" else 0)
