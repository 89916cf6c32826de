# torch CPU tensors as pointer arguments (bound through tensor.numpy(), without a copy), written in
# place, including a non-contiguous view, float32 and bfloat16, and torch's device queries answered
# before the first launch. Exits 77 (CTest's skip) when torch
# is not installed.
import sys

try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

import triton
import triton.language as tl

# host code that sizes a grid from the device before anything launched (a persistent kernel's
# NUM_SMS): on a machine without a GPU, torch answers as the device dtsim presents
if not torch.cuda.is_available() or "dtsim" in triton.__version__:
    props = torch.cuda.get_device_properties(0)
    assert props.multi_processor_count > 0 and torch.cuda.get_device_capability() >= (8, 0), props


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, sx, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * sx, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


n = 1000
x = torch.rand(n)
y = torch.rand(n)
out = torch.empty(n)
add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, 1, BLOCK=256)
assert torch.equal(out, x + y)
m = torch.rand(n, 3)
col = m[:, 1]  # stride 3
add_kernel[(triton.cdiv(n, 256),)](col, y, out, n, 3, BLOCK=256)
assert torch.equal(out, col + y)
# bfloat16 (tensor.numpy() has none): bound as its bits, written in place; torch's bfloat16 add
# (float32, rounded to nearest even) is what the kernel computes
bx, by = x.to(torch.bfloat16), y.to(torch.bfloat16)
bout = torch.zeros(n, dtype=torch.bfloat16)
add_kernel[(triton.cdiv(n, 256),)](bx, by, bout, n, 1, BLOCK=256)
assert torch.equal(bout, bx + by)
bcol = m.to(torch.bfloat16)[:, 2]
add_kernel[(triton.cdiv(n, 256),)](bcol, by, bout, n, 3, BLOCK=256)
assert torch.equal(bout, bcol + by)
print("torch CPU tensors: in place (float32 and bfloat16)")
