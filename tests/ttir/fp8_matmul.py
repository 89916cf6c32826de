"""The fp8 path of a Triton matmul as Triton's tutorial 03 runs it: torch fp16 data converted with
`.to(torch.float8_e5m2)` (b transposed first, so its fp8 copy is column-major), a blocked kernel whose
K loop feeds tl.dot fp8 tiles and accumulates in f32, an f16 result compared with torch's matmul of
the fp16-widened operands (atol 0.125, as the tutorial). Also e4m3 operands, and an fp8 output
converted in the kernel. Needs torch and Triton (the compatibility venv); exits 77 otherwise. Run
with `python -m dtsim fp8_matmul.py`."""
import sys

try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

import triton
import triton.language as tl
from ttir_check import finish, report


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, out_dtype=torch.float16):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=out_dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4)
    return c


torch.manual_seed(0)
a = torch.randn((200, 160), dtype=torch.float16)
b = torch.randn((200, 160), dtype=torch.float16)
for fp8 in (torch.float8_e5m2, torch.float8_e4m3fn):
    a8 = a.to(fp8)
    b8 = b.T.to(fp8)  # column-major: strides (1, 160)
    got = matmul(a8, b8)
    want = torch.matmul(a8.to(torch.float16), b8.to(torch.float16))
    err = (got.float() - want.float()).abs().max().item()
    report("tl.dot %s -> f16 (tutorial 03)" % str(fp8).split(".")[-1], torch.allclose(got, want, atol=0.125, rtol=0),
           "(max abs err %.3g)" % err)
    # The exact f32 sums, rounded once: the kernel's f32 accumulation differs only by rounding order.
    exact = a8.double() @ b8.double()
    got32 = matmul(a8, b8, torch.float32)
    err32 = ((got32.double() - exact).abs() / exact.abs().clamp(min=1)).max().item()
    report("tl.dot %s -> f32 near the exact sum" % str(fp8).split(".")[-1], err32 < 1e-5, "(max rel err %.3g)" % err32)
    # An fp8 result: f32 accumulator -> fp8 in the kernel (round to nearest even) == torch's conversion.
    got8 = matmul(a8, b8, fp8)
    want8 = got32.to(fp8)
    same = torch.equal(got8.view(torch.uint8), want8.view(torch.uint8))
    report("tl.dot %s -> %s" % (str(fp8).split(".")[-1], str(fp8).split(".")[-1]), same)

finish("all ok")
