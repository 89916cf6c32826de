# Triton's `/` reaches the CUDA backend as Triton compiles it, without a GPU: a kernel read through
# the installed Triton's frontend whose TTIR divides with arith.divf is compiled with approx_div
# (div.full.f32, as Triton's own GPU build); one that uses div_rn (tt.precise_divf) keeps IEEE
# division for every division. dtsim's own reader (no TTIR) compiles `/` and div_rn as Triton does.
import triton
import triton.language as tl
import dtsim
from fake_cuda import FakeCuda, record_compiled

compiles, made = record_compiled("approx_div")


@triton.jit
def ratio(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) / tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def ratio_rn(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.math.div_rn(x, y) + x / y, mask=m)


dtsim.config(backend="cuda", sanitize="none")
n = 1000
x, y, o = FakeCuda(n, 4096), FakeCuda(n, 8192), FakeCuda(n, 12288)
grid = (triton.cdiv(n, 256),)
ratio[grid](x, y, o, n, BLOCK=256)
ratio_rn[grid](x, y, o, n, BLOCK=256)  # both readers: div_rn makes the whole kernel's division IEEE
want = [True, False]
assert compiles == want and made == want, (compiles, made)
print("Triton's `/` reaches the CUDA backend as div.full.f32 (IEEE division where the kernel uses div_rn): ok")
