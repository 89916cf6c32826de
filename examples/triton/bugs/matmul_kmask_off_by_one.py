# BUG (planted): Triton's tutorial matmul with an off-by-one K mask on a (`<= K - k * BK`): at the
# last K step each row reads one element past its end, which for the last row of a lies beyond the
# buffer (a_ptr is f16[64, 40]: flat index 2560). The sanitizer reports that load at pid (2, 0, 0),
# the first instance holding row 63.
#   dtsim run examples/triton/bugs/matmul_kmask_off_by_one.py --buf a_ptr=f16[64,40] --buf b_ptr=f16[40,64] \
#       --buf c_ptr=f16[64,64] --arg M=64 --arg N=64 --arg K=40 --grid 'cdiv(M, BM) * cdiv(N, BN)'
# The fix is examples/triton/matmul_act.py: `offs_k[None, :] < K - k * BK`.
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr = 32, BN: tl.constexpr = 32, BK: tl.constexpr = 32):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BN)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_m[:, None] * K + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None] * N + offs_n[None, :])
    accumulator = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] <= K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BK
        b_ptrs += BK * N
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, accumulator.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
