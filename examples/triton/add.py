# Vector add in the style of Triton's first tutorial: each program instance adds BLOCK elements.
#   dtsim run examples/triton/add.py --in x_ptr=x.npy --in y_ptr=y.npy --buf out_ptr=f32[1000] \
#       --arg n_elements=1000 --grid 'cdiv(n_elements, BLOCK)' --out out_ptr=out.npy
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr = 256):
    """z = x + y, BLOCK elements per program instance."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements  # the last block is partial
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
