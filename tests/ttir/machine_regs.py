"""Readings of the machine: tl.extra.cuda.globaltimer() and smid(), and inline PTX that reads the
special registers %globaltimer, %globaltimer_lo, %clock64, %clock, %smid, %nsmid, %ctaid.x and
%nctaid.x. On the interpreter the timer is the host's clock in ns since the Unix epoch (so it lies
between the host's time before and after the launch), clock64 a steady ns count, smid the OpenMP
thread of the instance (below nsmid); %ctaid / %nctaid are the instance's program id and the grid.
On the GPU the same relations hold except the epoch. A thread's register (%tid.x) is a located error
(tests/ttir/inline_ptx.py)."""
import sys
import time

import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import globaltimer, smid

import dtsim


@triton.jit
def readings(t_ptr, id_ptr, c_ptr, x_ptr, y_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    t0 = globaltimer()
    o = tl.arange(0, N)
    x = tl.load(x_ptr + pid * N + o)
    y = tl.sqrt(x * x + 1.0)
    for _ in range(8):
        y = tl.sqrt(y * y + 1.0)
    tl.store(y_ptr + pid * N + o, y)
    t1 = tl.extra.cuda.globaltimer()
    lo = tl.inline_asm_elementwise("mov.u32 $0, %globaltimer_lo;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    c0 = tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    c1 = tl.inline_asm_elementwise("{ .reg .u64 a, b; mov.u64 a, %clock64; mov.u64 b, %clock64; sub.u64 $0, b, a; }", "=l", [],
                                   dtype=tl.int64, is_pure=False, pack=1)
    ck = tl.inline_asm_elementwise("mov.u32 $0, %clock;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    cta = tl.inline_asm_elementwise("mov.u32 $0, %ctaid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)
    ncta = tl.inline_asm_elementwise("mov.u32 $0, %nctaid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)
    nsm = tl.inline_asm_elementwise("mov.u32 $0, %nsmid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(t_ptr + pid * 3 + 0, t0)
    tl.store(t_ptr + pid * 3 + 1, t1)
    tl.store(t_ptr + pid * 3 + 2, lo.to(tl.int64) & 0xFFFFFFFF)
    tl.store(id_ptr + pid * 5 + 0, smid())
    tl.store(id_ptr + pid * 5 + 1, nsm)
    tl.store(id_ptr + pid * 5 + 2, cta)
    tl.store(id_ptr + pid * 5 + 3, ncta)
    tl.store(id_ptr + pid * 5 + 4, ck)
    tl.store(c_ptr + pid * 2 + 0, c0)
    tl.store(c_ptr + pid * 2 + 1, c1)


G, N = 12, 64
t = np.zeros((G, 3), np.int64)
ids = np.full((G, 5), -1, np.int32)
c = np.zeros((G, 2), np.int64)
x = np.random.default_rng(0).standard_normal((G, N)).astype(np.float32)
y = np.zeros_like(x)
before = time.time_ns()
readings[(G,)](t, ids, c, x, y, N=N)
after = time.time_ns()
gpu = dtsim._config["backend"] == "cuda"

want = x.astype(np.float64)
want = np.sqrt(want * want + 1)
for _ in range(8):
    want = np.sqrt(want * want + 1)
if not np.allclose(y, want, rtol=1e-5):
    sys.exit("the kernel's arithmetic is wrong")
if not (ids[:, 2] == np.arange(G)).all() or not (ids[:, 3] == G).all():
    sys.exit("%%ctaid.x / %%nctaid.x are not the program id and the grid: %s, %s" % (ids[:, 2], ids[:, 3]))
if not ((ids[:, 1] >= 1) & (ids[:, 0] >= 0) & (ids[:, 0] < ids[:, 1])).all():
    sys.exit("smid() not below %%nsmid: %s, %s" % (ids[:, 0], ids[:, 1]))
if not (t[:, 1] >= t[:, 0]).all() or not (t[:, 0] > 0).all():
    sys.exit("globaltimer() went back within an instance: %s" % t[:, :2])
# Read right after t1 (and %clock right after %clock64): each low half a little ahead of the wider reading's.
if not ((t[:, 2] - (t[:, 1] & 0xFFFFFFFF)) % 2**32 < 10**9).all():
    sys.exit("%%globaltimer_lo is not the low half of the timer: %s, %s" % (t[:, 2], t[:, 1]))
if not (c[:, 0] > 0).all() or not (c[:, 1] >= 0).all():
    sys.exit("%%clock64 readings: %s" % c)
if not (((ids[:, 4].astype(np.int64) & 0xFFFFFFFF) - (c[:, 0] & 0xFFFFFFFF)) % 2**32 < 10**9).all():
    sys.exit("%%clock is not the low half of %%clock64: %s, %s" % (ids[:, 4], c[:, 0]))
if not gpu:
    if not ((t[:, :2] >= before) & (t[:, :2] <= after)).all():
        sys.exit("globaltimer() outside the launch on the interpreter: %s not within [%d, %d]" % (t[:, :2], before, after))
print("machine readings: %d instances, globaltimer %s, smid < nsmid (%d), ctaid/nctaid = pid/grid, clock and clock64 steady"
      % (G, "steady in each instance (its epoch not checked on the GPU)" if gpu else "within the launch by the host's clock", ids[0, 1]))
