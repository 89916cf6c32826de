"""examples/triton/unsigned.py (tl.uint8, tl.uint32 and tl.uint64 data: // % >> comparisons,
maximum/minimum, umulhi, cdiv, uitofp, zero extension, unsigned max/min/argmax reductions and an
atomic_max on uint32 elements) against numpy, and a signed variable that reuses the name of an
unsigned one whose scope has closed. Runs through whichever reader `import triton` gives:
Triton's TTIR (`python -m dtsim unsigned.py` with Triton installed) or dtsim's own .py reader
(DTSIM_STANDIN=1, or no Triton)."""
import importlib.util
import os
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "triton", "unsigned.py")
spec = importlib.util.spec_from_file_location("unsigned_example", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)

rng = np.random.default_rng(7)
n, BLOCK = 200, 64
grid = triton.cdiv(n, BLOCK)
u32, u64 = np.uint32, np.uint64
a = np.concatenate([rng.integers(0, 2**32 - 16, n - 8, dtype=u32), np.array([2**32 - 17, 2**31, 2**31 - 1, 0, 1, 5, 2**32 - 20, 7], u32)])
b = np.concatenate([rng.integers(1, 2**32, n - 60, dtype=u32), rng.integers(1, 2**12, 60, dtype=u32)])
rng.shuffle(b)
b_odd = b | u32(1)  # the kernel's divisor
c = rng.integers(0, 256, n, dtype=np.uint8)
w = np.concatenate([rng.integers(0, 2**64, n - 4, dtype=u64), np.array([2**64 - 1, 2**63, 0, 999], u64)])
outs = dict(q=np.zeros(n, u32), r=np.zeros(n, u32), s=np.zeros(n, u64), cmp=np.zeros(n, np.int32), mm=np.zeros(n, u32),
            f=np.zeros(n, np.float32), z=np.zeros(n, np.int32), hi=np.zeros(n, u32), red=np.zeros(2 * grid, u32), amx=np.zeros(1, u32))
mod.unsigned_kernel[(grid,)](a, b, c, w, outs["q"], outs["r"], outs["s"], outs["cmp"], outs["mm"], outs["f"], outs["z"], outs["hi"],
                             outs["red"], outs["amx"], n, BLOCK=BLOCK)

with np.errstate(over="ignore"):
    bo = b_odd
    want = dict(q=a // bo, r=a % bo + (a >> u32(28)) + ((a >> u32(4)) + u32(15)) // u32(16),
                s=(w >> u64(60)) + w // (bo.astype(u64) + u64(1)) + w % u64(1000),
                mm=np.maximum(a, bo) ^ np.minimum(a, u32(2147483653)), f=a.astype(np.float32) + c.astype(np.float32),
                z=(c.astype(np.int32) + 1) % 256, hi=((a.astype(u64) * bo.astype(u64)) >> u64(32)).astype(u32))
cmp = (a < b_odd).astype(np.int32) + 2 * (c > 127) + 4 * (w >= a.astype(u64))
red = np.zeros(2 * grid, u32)
for p in range(grid):
    blk = a[p * BLOCK:(p + 1) * BLOCK]
    big = np.concatenate([blk, np.zeros(BLOCK - len(blk), u32)])
    red[2 * p], red[2 * p + 1] = big.max(), blk.min()
    i = p * BLOCK + int(np.argmax(big))
    if i < n:
        cmp[i] += 8
want.update(cmp=cmp, red=red, amx=np.array([a.max()], u32))
bad = [k for k in want if not np.array_equal(outs[k], want[k])]
for k in bad:
    d = np.nonzero(outs[k] != want[k])[0]
    print("%s differs at %d elements, first %d: got %r, want %r" % (k, len(d), d[0], outs[k][d[0]], want[k][d[0]]))
if bad:
    sys.exit(1)


@triton.jit
def scopes_k(u_ptr, s_ptr, out_ptr):
    o = tl.arange(0, 8)
    acc = tl.zeros((8,), tl.int32)
    for i in range(2):
        v = tl.load(u_ptr + o)  # uint32, a name of the loop's body
        acc += (v >> 1).to(tl.int32)
    for v in range(-3, -1):  # the same name again, an int32 loop variable: -2 + -1
        acc += v >> 1
    w = tl.load(s_ptr + o)
    tl.store(out_ptr + o, acc + (w >> 1) + 100 * (w < 0).to(tl.int32))


uu = np.array([0, 1, 2**31, 2**32 - 1, 7, 8, 2**31 + 3, 12], u32)
ss = np.array([-7, -1, 0, 5, -2**31, 2**31 - 1, -8, 9], np.int32)
out = np.zeros(8, np.int32)
scopes_k[(1,)](uu, ss, out)
with np.errstate(over="ignore"):
    want_scopes = ((2 * (uu >> u32(1))).astype(np.int64) - 3 + (ss >> 1) + 100 * (ss < 0)).astype(np.int32)
if not np.array_equal(out, want_scopes):
    sys.exit("a signed variable reusing an unsigned one's name: got %r, want %r" % (out, want_scopes))
print("unsigned integers (%s): all %d outputs match numpy" % ("dtsim's .py reader" if triton.__version__.endswith("+dtsim") else "Triton's TTIR", len(want)))
