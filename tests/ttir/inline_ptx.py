"""The inline PTX forms dtsim runs (`tl.inline_asm_elementwise`, TTIR tt.elementwise_inline_asm),
checked against numpy: `prmt.b32 $0, $a, $b, $c;`, the byte permute a 4-bit FP decoder uses to look
bytes up in a table held in two registers (lmdeploy's FP4 MoE kernels), with sign-replicating
selector nibbles; `bar.sync 0;` as a statement (lmdeploy's paged attention), a barrier among one
instance's threads. Another PTX form stops at a located error that quotes it."""
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def permute(a_ptr, b_ptr, s_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    s = tl.load(s_ptr + o)
    # the selector is operand 1 and 4 ($1 unused), as lmdeploy passes it
    r = tl.inline_asm_elementwise("prmt.b32 $0, $2, $3, $4;", "=r,r,r,r,r", args=[s, a, b, s],
                                  dtype=tl.uint32, is_pure=True, pack=1)
    tl.inline_asm_elementwise("bar.sync 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(out_ptr + o, r)


@triton.jit
def other_ptx(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    y = tl.inline_asm_elementwise("cvt.rp.ue8m0x2.f32 $0, 0.0, $1;", "=h,r", args=[x], dtype=tl.uint16,
                                  is_pure=True, pack=1)
    tl.store(x_ptr + o, y.to(tl.float32))


def prmt(a, b, c):
    pool = [(int(a) >> (8 * i)) & 255 for i in range(4)] + [(int(b) >> (8 * i)) & 255 for i in range(4)]
    r = 0
    for i in range(4):
        nib = (int(c) >> (4 * i)) & 15
        byte = pool[nib & 7]
        if nib & 8:
            byte = 255 if byte & 128 else 0
        r |= byte << (8 * i)
    return r


if len(sys.argv) > 1 and sys.argv[1] == "other":
    other_ptx[(1,)](np.ones(8, np.float32), N=8)
    sys.exit("no error for an unsupported PTX form")

N = 256
rng = np.random.default_rng(0)
a, b, s = (rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32) for _ in range(3))
s[:16] = 0x3210        # the identity on a
s[16:32] = 0x7654      # b's bytes
s[32:48] = 0xBA98      # a's bytes 3, 2, 0 with their sign replicated
out = np.zeros(N, np.uint32)
permute[(1,)](a, b, s, out, N=N)
want = np.array([prmt(x, y, z) for x, y, z in zip(a, b, s)], np.uint32)
if not np.array_equal(out, want):
    bad = np.flatnonzero(out != want)[:4]
    sys.exit("prmt.b32: lanes %s got %s, want %s" % (bad, out[bad], want[bad]))

r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, "other"], capture_output=True, text=True)
msg = "inline asm 'cvt.rp.ue8m0x2.f32 $0, 0.0, $1;' is not supported yet"
if r.returncode == 0 or "inline_ptx.py:33:" not in r.stderr or msg not in r.stderr:
    sys.exit("unsupported PTX: rc %d, stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
print("inline PTX: prmt.b32 matches numpy on %d lanes, bar.sync 0 runs; another form is a located error" % N)
