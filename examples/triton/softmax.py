# Fused row softmax, as in Triton's tutorial: one row per program instance, the row loaded once,
# max-subtracted exp, normalized, stored. BLOCK is the row length rounded up to a power of two.
#   dtsim run examples/triton/softmax.py --in x_ptr=x.npy --buf y_ptr=f32[rows,cols] \
#       --arg n_cols=.. --arg BLOCK=.. --grid rows
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float('inf'))
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + row * y_row_stride + cols, num / den, mask=mask)
