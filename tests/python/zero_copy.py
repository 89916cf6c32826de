# Arrays are bound without copies: the interpreter reads and writes the caller's memory. Shown by
# aliasing (one array passed as two pointers: a later instance reads what an earlier one stored, as
# on the GPU), by memory (a 512 MiB input does not grow the process), and by the copies that remain
# (non-native byte order, unaligned data) writing their results back. Also: a read-only array the
# kernel stores to is refused, and a run stopped by a finding leaves what it stored up to there.
import resource
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def chain(x_ptr, out_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    tl.store(out_ptr + pid + 1, x + 1)


@triton.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


dtsim.config(order="sequential", threads=1)

# Aliasing: x_ptr and out_ptr are the same memory. With copies, every instance would read the
# original zeros and out would be [0, 1, 1, 1, 1].
a = np.zeros(5, np.float32)
chain[(4,)](a, a)
assert a.tolist() == [0, 1, 2, 3, 4], a
print("aliased pointers: instances see each other's stores", a)

# Memory: a 512 MiB input of which the kernel reads 256 elements. np.zeros leaves the pages untouched,
# so a copy into the run's buffer would grow the resident set by 512 MiB; a view grows it by nothing.
big = np.zeros(1 << 27, np.float32)
out = np.empty(256, np.float32)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
scale[(1,)](big, out, 256, 2.0, BLOCK=256)
grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
assert not out.any(), out
assert grown_mib < 64, "binding a 512 MiB input grew the process by %.0f MiB" % grown_mib
print("512 MiB input bound in place: the process grew by %.1f MiB" % grown_mib)
del big

# The copies that remain: big-endian arrays and unaligned data are converted, and written back.
xb = np.arange(10, dtype=">f4")
ob = np.full(10, -1, dtype=">f4")
scale[(3,)](xb, ob, 10, 3.0, BLOCK=4)
assert ob.dtype == np.dtype(">f4") and ob.tolist() == [3.0 * i for i in range(10)], ob
raw = bytearray(4 * 10 + 1)
ou = np.frombuffer(raw, dtype=np.float32, offset=1, count=10)
assert not ou.flags.aligned
scale[(3,)](np.arange(10, dtype=np.float32), ou, 10, 2.0, BLOCK=4)
assert ou.tolist() == [2.0 * i for i in range(10)], ou
print("big-endian and unaligned arrays: converted copies, written back")

# A read-only array may be read, not stored to.
ro = np.arange(10, dtype=np.float32)
ro.setflags(write=False)
o = np.zeros(10, np.float32)
scale[(3,)](ro, o, 10, 1.0, BLOCK=4)
assert np.array_equal(o, ro)
try:
    scale[(3,)](o, ro, 10, 1.0, BLOCK=4)
    sys.exit("a store into a read-only array was not refused")
except TypeError as e:
    print(e)
    assert "read-only" in str(e) and "out_ptr" in str(e), e

# A finding stops the run; the instances before it stored into the caller's array.
x = np.arange(10, dtype=np.float32)
o = np.zeros(10, np.float32)
try:
    scale[(3,)](x, o, 12, 1.0, BLOCK=4)  # n past the arrays: instance 2 goes out of bounds
    sys.exit("the out-of-bounds access was not reported")
except dtsim.KernelError as e:
    assert e.kind == "out-of-bounds" and e.pid == (2, 0, 0), (e.kind, e.pid)
assert o[:8].tolist() == list(range(8)) and not o[8:].any(), o
print("a finding in instance 2: instances 0 and 1 stored in place", o)
