# Non-contiguous views as pointer arguments: the buffer is the view's span of storage, so a kernel
# that walks it with the right stride reads and writes the viewed elements in place, and one that
# walks past the span gets an out-of-bounds finding (Triton's interpreter would read whatever lies
# there). Also kernel.warmup (lowering without a run) and kernel.run.
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def strided_scale(x_ptr, z_ptr, n, sx, sz, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i * sx, mask=m)
    tl.store(z_ptr + i * sz, x * alpha, mask=m)


base = np.arange(30, dtype=np.float32).reshape(10, 3)
out = np.full((10, 4), -1.0, dtype=np.float32)
col_x, col_z = base[:, 1], out[:, 2]  # strides 3 and 4 elements
strided_scale[(triton.cdiv(10, 4),)](col_x, col_z, 10, 3, 4, 2.0, BLOCK=4)
want = np.full((10, 4), -1.0, dtype=np.float32)
want[:, 2] = 2.0 * base[:, 1]
assert np.array_equal(out, want), out
print("column views: in place, other columns untouched")

compiled = strided_scale.warmup(col_x, col_z, 10, 3, 4, 2.0, BLOCK=4, grid=(3,))
assert "strided_scale" in compiled.tile_ir and "x_ptr" in compiled.tile_ir, compiled.tile_ir
strided_scale.run(col_x, col_z, 10, 3, 4, 3.0, BLOCK=4, grid=(3,))
assert np.array_equal(col_z, 3.0 * base[:, 1])
print("warmup + run: ok (%d compiled signatures)" % len(strided_scale.cache))

try:
    strided_scale[(3,)](col_x, col_z, 10, 4, 4, 2.0, BLOCK=4)  # wrong stride: walks past the column's span
except dtsim.KernelError as e:
    print(e)
    line = next(i for i, l in enumerate(open(__file__), 1) if "x = tl.load(x_ptr + i * sx" in l)
    assert e.kind == "out-of-bounds" and e.buffer == "x_ptr" and e.line == line, (e.kind, e.buffer, e.line)
    sys.exit(0)
sys.exit("the access past the view's span was not reported")
