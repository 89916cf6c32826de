# Host code for the REPL transcripts (tests/python/repl_transcripts.py): one kernel launched three
# times from a helper function, then a check of every output.
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def scale_k(x_ptr, z_ptr, n, s, bs: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * bs + tl.arange(0, bs)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x * s, mask)


def scale(x, s):
    z = np.zeros_like(x)
    scale_k[(triton.cdiv(x.size, 4),)](x, z, x.size, s, bs=4)
    return z


if __name__ == "__main__":
    x = np.arange(12, dtype=np.float32)
    for launch in range(3):
        z = scale(x, float(launch + 1))
        assert np.array_equal(z, x * (launch + 1)), z
        print("launch %d ok" % (launch + 1))
    print("all launches ok")
    sys.exit(0)
