# Integer kernel arguments beyond int64 are a ValueError before anything runs: Triton passes
# 2**63..2**64-1 as uint64, which dtsim does not have, and larger ones do not fit at all.
import numpy as np
import triton
import triton.language as tl


@triton.jit
def fill_k(z_ptr, n, v, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + offs, tl.zeros([BLOCK], tl.float32) + v, mask=offs < n)


z = np.zeros(8, np.float32)
for big, want in ((2**63, "does not fit in int64"), (2**64 - 1, "uint64"), (2**70, "does not fit in 64 bits"),
                  (-2**63 - 1, "does not fit in 64 bits")):
    try:
        fill_k[(1,)](z, 8, big, BLOCK=8)
    except ValueError as e:
        assert want in str(e), (big, str(e))
    else:
        raise AssertionError("%d was accepted as a kernel argument" % big)
fill_k[(1,)](z, 8, 2**63 - 1, BLOCK=8)  # the largest int64 runs (as a float when stored)
assert z[0] == np.float32(2**63 - 1), z
print("ok")
