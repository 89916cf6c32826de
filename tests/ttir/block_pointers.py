"""Block pointers (tl.make_block_ptr, tl.advance, loads and stores with boundary_check and
padding_option) under python -m dtsim. Triton 3.8 and older lower them to pointer arithmetic and
masks in their own TTIR stage, which dtsim reads as any other; Triton 3.9's frontend refuses them,
and dtsim then reads the kernel with its own .py reader (as it does under the stand-in): a tiled
matmul walking K with advance, a ragged store, NaN padding, a backward walk, and the sanitizer's
finding where a load leaves out the boundary check it needs."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim

version = tuple(int(x) for x in triton.__version__.split("+")[0].split(".")[:2])


@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ap = tl.make_block_ptr(a, (M, K), (sam, sak), (pm * BM, 0), (BM, BK), (1, 0))
    bp = tl.make_block_ptr(b, (K, N), (sbk, sbn), (0, pn * BN), (BK, BN), (0, 1))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        x = tl.load(ap, boundary_check=(0, 1), padding_option="zero")
        y = tl.load(bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(x, y, input_precision="ieee")
        ap = tl.advance(ap, (0, BK))
        bp = tl.advance(bp, (BK, 0))
    cp = tl.make_block_ptr(c, (M, N), (scm, scn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(cp, acc, boundary_check=(0, 1))


@triton.jit
def pad_nan(x, y, n, BLOCK: tl.constexpr):
    xp = tl.make_block_ptr(x, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    yp = tl.make_block_ptr(y, (BLOCK * tl.num_programs(0),), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    tl.store(yp, tl.load(xp, boundary_check=(0,), padding_option="nan"))


@triton.jit
def reverse_sum(x, out, n, BLOCK: tl.constexpr):
    # from the last block back to the first: advance by -BLOCK, the rows before 0 masked
    start = (tl.cdiv(n, BLOCK) - 1) * BLOCK
    xp = tl.make_block_ptr(x, (n,), (1,), (start,), (BLOCK,), (0,))
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(0, tl.cdiv(n, BLOCK)):
        acc += tl.load(xp, boundary_check=(0,), padding_option="zero")
        xp = tl.advance(xp, (-BLOCK,))
    tl.store(out, tl.sum(acc))


@triton.jit
def unchecked(x, y, n, BLOCK: tl.constexpr):
    xp = tl.make_block_ptr(x, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    yp = tl.make_block_ptr(y, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    tl.store(yp, tl.load(xp), boundary_check=(0,))  # the load's boundary check left out


rng = np.random.default_rng(3)
failures = []

for M, N, K in [(40, 24, 40), (16, 16, 16), (33, 70, 9)]:
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = np.asfortranarray(rng.standard_normal((K, N)).astype(np.float32))  # column-major: order (0, 1)
    C = np.full((M, N), np.nan, np.float32)
    BM = BN = BK = 16
    matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](A, B, C, M, N, K, K, 1, 1, K, N, 1, BM=BM, BN=BN, BK=BK)
    err = float(np.abs(C - A @ B).max())
    if not err < 1e-4:
        failures.append("matmul %dx%dx%d: max error %g" % (M, N, K, err))

x = rng.standard_normal(20).astype(np.float32)
y = np.zeros(32, np.float32)
pad_nan[(2,)](x, y, 20, BLOCK=16)
if not (np.array_equal(y[:20], x) and np.isnan(y[20:]).all()):
    failures.append("padding_option='nan': %s" % y)

for n in (1, 16, 37, 100):
    v = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    reverse_sum[(1,)](v, out, n, BLOCK=16)
    if abs(float(out[0]) - float(v.sum())) > 1e-4:
        failures.append("reverse walk n=%d: %g, want %g" % (n, out[0], v.sum()))

try:
    unchecked[(2,)](np.zeros(20, np.float32), np.zeros(20, np.float32), 20, BLOCK=16)
    failures.append("unchecked: no finding for the load past the end")
except dtsim.KernelError as e:
    text = str(e)
    if "block_pointers.py:58:" not in text or "out-of-bounds load from 'x'" not in text:
        failures.append("unchecked: unexpected finding:\n" + text)

if failures:
    sys.exit("\n".join(failures))
print("block_pointers: Triton %s: block pointers match numpy (matmul, NaN padding, a backward walk); "
      "an unchecked load is out of bounds" % triton.__version__)
