# dtsim.config(print_if=...): the `--print-if COND EXPRS [--at LINE]` of `dtsim run` from Python,
# without editing the kernel. The prints (written by the interpreter to file descriptor 1) are
# captured here and must come from pid 1 only, with its offsets.
import os
import sys
import tempfile

import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * bs + tl.arange(0, bs)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)


store_line = next(i for i, l in enumerate(open(__file__), 1) if "tl.store(z_ptr + offs, x, mask)" in l)
dtsim.config(print_if=('pid0==1', 'offs, x', store_line))
x = np.arange(12, dtype=np.float32)
z = np.zeros_like(x)
with tempfile.TemporaryFile(mode="w+") as cap:
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(cap.fileno(), 1)
    try:
        copy_k[(3,)](x, z, 12, bs=4)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    cap.seek(0)
    text = cap.read()
dtsim.config(print_if=None)
print(text)
assert np.array_equal(x, z)
assert "[4 5 6 7]" in text and "[0 1 2 3]" not in text and "[8 9 10 11]" not in text, text
assert text.startswith("pid [1] | offs = [4 5 6 7], x = [4. 5. 6. 7.]"), text
print("print_if: pid 1 only")
