# Pointer arguments that are not numpy arrays: an object exposing only __array_interface__, and one
# exposing only DLPack (__dlpack__ / __dlpack_device__), each bound without a copy: the kernel's
# stores land in the memory the object describes.
import numpy as np
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, alpha * x + y, mask=m)


class ArrayInterfaceOnly:
    """Memory described by __array_interface__ alone (as foreign array libraries do)."""

    def __init__(self, arr):
        self._arr = arr
        self.__array_interface__ = arr.__array_interface__


class DLPackOnly:
    """A tensor that offers only the DLPack protocol."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, stream=None):
        return self._arr.__dlpack__()

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


for wrap in (ArrayInterfaceOnly, DLPackOnly):
    assert not isinstance(wrap(np.zeros(1)), np.ndarray)
    n = 300
    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.arange(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    axpy[(triton.cdiv(n, 128),)](wrap(x), wrap(y), wrap(out), n, 2.0, BLOCK=128)
    assert np.allclose(out, 2.0 * x + y), out
    # A 2-D view through the protocol: the row slice's memory is written in place.
    grid2 = np.zeros((4, 100), np.float32)
    axpy[(1,)](wrap(x[:100]), wrap(y[:100]), wrap(grid2[2]), 100, 1.0, BLOCK=128)
    assert np.allclose(grid2[2], x[:100] + y[:100]) and not grid2[[0, 1, 3]].any()
    print("%s: in place" % wrap.__name__)
