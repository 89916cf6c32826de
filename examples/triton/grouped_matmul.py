# Grouped matmul c = a @ b: the instances are reordered with tl.swizzle2d so that group_sz rows of
# blocks run together (better L2 reuse on a GPU), as in the practitioner's guide and Triton's
# matmul tutorial. Row-major a [m, k], b [k, n], c [m, n].
#   dtsim run examples/triton/grouped_matmul.py --in a_ptr=a.npy --in b_ptr=b.npy --buf c_ptr=f32[m,n] \
#       --arg m=.. --arg n=.. --arg k=.. --grid 'cdiv(m, bm), cdiv(n, bn)'
import triton
import triton.language as tl


@triton.autotune(  # dtsim ignores autotuning: the --arg values (or the defaults) decide
    configs=[
        triton.Config({'bm': 64, 'bn': 64, 'bk': 32, 'group_sz': 4}, num_stages=3, num_warps=4),
        triton.Config({'bm': 32, 'bn': 32, 'bk': 16, 'group_sz': 2}, num_stages=4, num_warps=2),
    ],
    key=['m', 'n', 'k'],
)
@triton.jit
def grouped_matmul_k(
    a_ptr, b_ptr, c_ptr, m, n, k,
    bm: tl.constexpr = 32, bn: tl.constexpr = 32, bk: tl.constexpr = 16, group_sz: tl.constexpr = 2,
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    num_pid_m, num_pid_n = tl.num_programs(0), tl.num_programs(1)
    pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, num_pid_m, num_pid_n, group_sz)

    rm = pid_m * bm + tl.arange(0, bm)
    rn = pid_n * bn + tl.arange(0, bn)
    rk = tl.arange(0, bk)
    acc = tl.zeros((bm, bn), dtype=tl.float32)
    for kk in tl.range(0, k, bk, num_stages=3):
        a = tl.load(a_ptr + rm[:, None] * k + (rk[None, :] + kk),
                    mask=(rm[:, None] < m) & (rk[None, :] + kk < k), other=0.0)
        b = tl.load(b_ptr + (rk[:, None] + kk) * n + rn[None, :],
                    mask=(rk[:, None] + kk < k) & (rn[None, :] < n), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc, mask=(rm[:, None] < m) & (rn[None, :] < n))
