# Triton's enable_fp_fusion reaches the CUDA backend, without a GPU: each launch's compiled kernel
# carries fp_fusion (on by default, as Triton's option; off when the launch passes
# enable_fp_fusion=False), and the CudaLauncher is made from that compiled kernel (_dtsim.cuda_launcher
# recorded, GPU tensors faked). Under the installed Triton the option comes from Triton's own options
# (compile_ttir's fp_fusion); under dtsim's own reader (DTSIM_STANDIN=1) from the launch's keyword.
import triton
import dtsim
from fake_cuda import FakeCuda, axpy, record_compiled

compiles, made = record_compiled("fp_fusion")

dtsim.config(backend="cuda", sanitize="none")
n = 1000
x, y, o = FakeCuda(n, 4096), FakeCuda(n, 8192), FakeCuda(n, 12288)
grid = (triton.cdiv(n, 256),)
axpy[grid](x, y, o, n, 2.0, BLOCK=256)
assert compiles == [True] and made == [True], (compiles, made)
axpy[grid](x, y, o, n, 2.0, BLOCK=256, enable_fp_fusion=False)
assert compiles == [True, False] and made == [True, False], (compiles, made)
# Fusion asked for explicitly: the default's compiled kernel again under dtsim's own reader; under
# the installed Triton another specialization (its options differ), compiled with fusion on.
axpy[grid](x, y, o, n, 2.0, BLOCK=256, enable_fp_fusion=True)
axpy[grid](x, y, o, n, 2.0, BLOCK=256, enable_fp_fusion=False)  # its launcher again
assert compiles[:2] == [True, False] and all(compiles[2:]) and len(compiles) <= 3, (compiles, made)
assert all(made[2:]) and len(made) <= 3, (compiles, made)
print("enable_fp_fusion reaches the CUDA backend (default on, off when the launch says so): ok")
