# GPU memory as pointer arguments (torch CUDA tensors, anything with __cuda_array_interface__), checked
# without touching it: the interpreter refuses it with a TypeError naming the argument, and the
# buffer dtsim would bind on the CUDA backend is the memory's shape when C-contiguous, else its span
# of storage (the same rule as host views). The fake address is never dereferenced.
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim


class FakeGpuMemory:
    def __init__(self, shape, typestr="<f4", strides=None, ptr=1 << 32, readonly=False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3}


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


d = dtsim._device_array(FakeGpuMemory((10, 4)), "x")
assert (d.ptr, d.dt, d.shape, d.readonly) == (1 << 32, "f32", [10, 4], False), vars(d)
d = dtsim._device_array(FakeGpuMemory((10,), strides=(16,)), "x")  # a column of a (10, 4) f32 matrix
assert d.shape == [37], d.shape
d = dtsim._device_array(FakeGpuMemory((3, 4), "<i8", strides=(32, 8)), "x")  # C-contiguous, strides given
assert (d.dt, d.shape) == ("i64", [3, 4]), vars(d)
assert dtsim._device_array(np.zeros(3), "x") is None
d = dtsim._device_array(FakeGpuMemory((4,), "|u1"), "x")  # unsigned: the signless type of its width
assert (d.dt, d.shape) == ("i8", [4]), vars(d)
for bad, what in ((FakeGpuMemory((4,), "<c8"), "not supported"), (FakeGpuMemory((4,), ptr=(1 << 32) + 2), "aligned"),
                  (FakeGpuMemory((4,), strides=(-4,)), "negative")):
    try:
        dtsim._device_array(bad, "x")
        sys.exit("accepted: %r" % bad.__cuda_array_interface__)
    except TypeError as e:
        assert what in str(e), e

x = np.zeros(100, np.float32)
dtsim.config(backend="interp")
try:
    add_kernel[(1,)](x, FakeGpuMemory((100,)), x, 100, BLOCK=128)
    sys.exit("the interpreter accepted GPU memory")
except TypeError as e:
    print(e)
    assert "'y_ptr'" in str(e) and "GPU memory" in str(e), e
print("GPU memory: typed, refused by the interpreter")
