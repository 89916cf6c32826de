"""Under dtsim's stand-in package (no Triton installed, or DTSIM_STANDIN=1), torch is told that Triton is
not installed: its Inductor utilities (which torch.compile, torch.library.triton_op and libraries
importing them reach) import, and a @triton.jit kernel still runs on dtsim. Run with
`DTSIM_STANDIN=1 python -m dtsim standin_torch.py` in a Python with torch."""
import sys

import torch
import triton
import triton.language as tl

import dtsim
from ttir_check import check, finish, report

if not getattr(triton, "__file__", "").startswith(dtsim.__path__[0]):
    print("standin_torch: Triton's own package is in use (run with DTSIM_STANDIN=1)")
    sys.exit(77)


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1, mask=m)


import torch._inductor.utils  # noqa: E402,F401  (imported Triton's compiler modules when torch took the stand-in for Triton)
import torch.utils._triton as torch_triton  # noqa: E402

report("torch sees no Triton", not torch_triton.has_triton_package() and not torch_triton.has_triton())
x = torch.zeros(10)
add_one[(1,)](x, 10, BLOCK=16)
check("a kernel after torch's Inductor import", x.numpy(), torch.ones(10).numpy())
finish("standin_torch: torch's Inductor imports under the stand-in, kernels run")
