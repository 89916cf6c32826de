"""Integer arithmetic on boolean tiles, read through Triton's TTIR and checked against numpy: Triton
spells `m1 * m2` of two masks as arith.muli on i1 (a 2-D store mask built as
`mask_m[:, None] * mask_n[None, :]`, as lmdeploy's fused LoRA kernel does), `m1 + m2` and `m1 - m2`
as arith.addi / arith.subi, tl.maximum / tl.minimum as arith.maxui / arith.minui. MLIR's i1
arithmetic is modulo 2: a product is `and`, a sum or a difference `xor`, the unsigned max `or`, the
unsigned min `and`; the results stay i1, usable as masks."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def product_mask(out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """out[i, j] = i * 100 + j where i < M and j < N; the rest untouched."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm < M)[:, None] * (rn < N)[None, :]
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], rm[:, None] * 100 + rn[None, :], mask=mask)


@triton.jit
def bool_ops(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o) != 0
    b = tl.load(b_ptr + o) != 0
    tl.store(out_ptr + 0 * N + o, (a * b).to(tl.int32))
    tl.store(out_ptr + 1 * N + o, (a + b).to(tl.int32))
    tl.store(out_ptr + 2 * N + o, (a - b).to(tl.int32))
    tl.store(out_ptr + 3 * N + o, tl.maximum(a, b).to(tl.int32))
    tl.store(out_ptr + 4 * N + o, tl.minimum(a, b).to(tl.int32))
    # a sum used as a mask: the lanes where exactly one of a, b holds
    tl.store(out_ptr + 5 * N + o, o + 1, mask=a + b)


out = np.full((8, 16), -1, dtype=np.int32)
product_mask[(1,)](out, 5, 9, BM=8, BN=16)
want = np.full((8, 16), -1, dtype=np.int32)
i, j = np.meshgrid(np.arange(5), np.arange(9), indexing="ij")
want[:5, :9] = i * 100 + j
if not np.array_equal(out, want):
    sys.exit("product of masks: got\n%s\nwant\n%s" % (out, want))

a = np.array([0, 0, 1, 1, 1, 0, 1, 0], np.int32)
b = np.array([0, 1, 0, 1, 1, 1, 0, 0], np.int32)
got = np.zeros((6, 8), np.int32)
bool_ops[(1,)](a, b, got, N=8)
x, y = a != 0, b != 0
want = np.stack([x & y, x ^ y, x ^ y, x | y, x & y, np.where(x ^ y, np.arange(1, 9), 0)]).astype(np.int32)
if not np.array_equal(got, want):
    sys.exit("i1 arithmetic (rows: *, +, -, max, min, + as a mask): got\n%s\nwant\n%s" % (got, want))
print("i1 arithmetic: * is and, + and - are xor, max is or, min is and; a product of masks masks a store")
