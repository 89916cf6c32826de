# A Triton matmul asking for warp specialization the Triton way, tl.range(..., warp_specialize=True):
# both readers (dtsim's own, and the TTIR of Triton's frontend: the loop's {tt.warp_specialize})
# give the kernel the schedule option warp_specialize, so on sm_90a its TMA ring gets a producer warp
# (emit --plan: "warp_specialize: asked for by the kernel"). The operands are boxes of row-major
# tensors masked by their extents (no pointers carried by the loop), as a TMA ring needs.
import triton
import triton.language as tl


@triton.jit
def matmul_ws(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr = 128, BN: tl.constexpr = 128, BK: tl.constexpr = 64):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        a = tl.load(a_ptr + rm[:, None] * K + (rk[None, :] + k), mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptr + (rk[:, None] + k) * N + rn[None, :], mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
