# Naive matmul c = a @ b built from @triton.jit helper functions (imported from a sibling module),
# one bm x bn block of c per program instance, as in the practitioner's guide.
#   dtsim run examples/triton/matmul_naive.py --in a_ptr=a.npy --in b_ptr=b.npy --buf c_ptr=f32[m,n] \
#       --arg m=.. --arg n=.. --arg k=.. --arg stride_am=k ... --grid 'cdiv(m, bm), cdiv(n, bn)'
import triton
import triton.language as tl
from matmul_helpers import get_1d_offset, get_2d_offset, get_2d_mask


@triton.jit
def naive_matmul_k(
    a_ptr, b_ptr, c_ptr,
    m, n, k,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    bm: tl.constexpr = 16, bn: tl.constexpr = 16, bk: tl.constexpr = 16,
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    # chunks along m/n/k for this instance
    rm = get_1d_offset(size=bm, n_prev_chunks=pid_m)
    rn = get_1d_offset(size=bn, n_prev_chunks=pid_n)
    rk = get_1d_offset(size=bk, n_prev_chunks=0)
    # relevant offsets of a, b
    offs_a = a_ptr + get_2d_offset(rm, rk, stride_am, stride_ak)
    offs_b = b_ptr + get_2d_offset(rk, rn, stride_bk, stride_bn)
    acc = tl.zeros((bm, bn), dtype=tl.float32)
    for kk in range(0, k, bk):
        a = tl.load(offs_a, mask=get_2d_mask(rm, rk + kk, m, k), other=0.0)
        b = tl.load(offs_b, mask=get_2d_mask(rk + kk, rn, k, n), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        offs_a += bk * stride_ak
        offs_b += bk * stride_bk
    c = c_ptr + get_2d_offset(rm, rn, stride_cm, stride_cn)
    mask = get_2d_mask(rm, rn, m, n)
    tl.store(c, acc, mask=mask)
