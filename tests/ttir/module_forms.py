"""Module-level forms real kernel files use, read alike by both Triton readers (the installed Triton's
frontend, and dtsim's own with DTSIM_STANDIN=1): libdevice functions bound by a module-level
`try: from triton.language.extra.libdevice import ... except ModuleNotFoundError: ...` inside an `if`,
a helper defined in one branch of a module-level `if`/`else`, `@triton.autotune` whose configs are a
comprehension, `ptr.dtype.element_ty` of a pointer tensor (the store's conversion), and `tl.split` /
`x.split()` (the halves of a last dimension of 2, bit for bit)."""
import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401
from ttir_check import check, finish

if hasattr(tl, "arange"):
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt

if hasattr(tl, "arange"):
    @triton.jit
    def scaled(x):
        return x * 3.0
else:
    @triton.jit
    def scaled(x):
        return x * 5.0


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in [64] for w in [1, 2]], key=["n"])
@triton.jit
def norm_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0).to(tl.float32)
    r = rsqrt(tl.sum(x * x, axis=0) / n + 1e-6)
    out = y_ptr + row * n
    tl.store(out + offs, scaled(x * r).to(out.dtype.element_ty), mask=mask)


@triton.jit
def halves(x_ptr, a_ptr, b_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None]
    cols = tl.arange(0, 2)[None, :]
    x = tl.load(x_ptr + rows * 2 + cols)
    a, b = tl.split(x)
    c, d = x.split()
    tl.store(a_ptr + tl.arange(0, N), a)
    tl.store(b_ptr + tl.arange(0, N), b)
    tl.store(a_ptr + N + tl.arange(0, N), d)
    tl.store(b_ptr + N + tl.arange(0, N), c)


rng = np.random.default_rng(5)
x = rng.standard_normal((6, 50)).astype(np.float32)
y = np.zeros((6, 50), np.float16)
norm_rows[(6,)](x, y, 50)
want = (x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * 3.0).astype(np.float16)
check("try/if libdevice import, if/else helper, comprehension configs, element_ty", y, want, tol=2e-3)

n = 32
bits = rng.integers(-2**31, 2**31, (n, 2)).astype(np.int32)
bits[0] = [np.float32(-0.0).view(np.int32), 0x7fc01234]  # -0.0 and a NaN payload
xs = bits.view(np.float32)
a = np.zeros(2 * n, np.float32)
b = np.zeros(2 * n, np.float32)
halves[(1,)](xs, a, b, N=n)
check("tl.split: first halves", a.view(np.int32)[:n], bits[:, 0])
check("tl.split: second halves", b.view(np.int32)[:n], bits[:, 1])
check("x.split()", np.stack([b.view(np.int32)[n:], a.view(np.int32)[n:]], axis=1), bits)
finish("module_forms: conditional imports, comprehension configs, element_ty, split")
