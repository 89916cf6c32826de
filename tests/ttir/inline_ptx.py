"""The inline PTX forms dtsim runs (`tl.inline_asm_elementwise`, TTIR tt.elementwise_inline_asm),
checked against numpy: `prmt.b32 $0, $a, $b, $c;`, the byte permute a 4-bit FP decoder uses to look
bytes up in a table held in two registers (lmdeploy's FP4 MoE kernels), with sign-replicating
selector nibbles; `bar.sync 0;` as a statement (lmdeploy's paged attention), a barrier among one
instance's threads; `cvt.rp.ue8m0x2.f32 $0, 0.0, $1;` (torchao's RCEIL MX scales: an f32 rounded up
to a power of two, as an e8m0 byte) and its rz / satfinite forms, two f32 operands packed into 16
bits; `max.NaN.xorsign.abs.f32` and `min.` (triton_kernels' flexpoint absmax), written across lines in
braces as that project does. Another PTX form stops at a located error that quotes it."""
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
    y = tl.inline_asm_elementwise("{ .reg .b32 t; ld.global.b32 t, [$1]; mov.b32 $0, t; }", "=r,l", args=[x], dtype=tl.uint32,
                                  is_pure=True, pack=1)
    tl.store(x_ptr + o, y.to(tl.float32))


@triton.jit
def timer_ptx(x_ptr, N: tl.constexpr):  # a thread's special register: no such thing in tile semantics
    o = tl.arange(0, N)
    t = tl.inline_asm_elementwise("mov.u32 $0, %tid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + o, t.to(tl.float32))


@triton.jit
def e8m0(x_ptr, y_ptr, rp_ptr, both_ptr, rz_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    y = tl.load(y_ptr + o)
    # torchao's form: 0.0 in the high byte, the value in the low one, then the low byte kept
    rp = tl.inline_asm_elementwise("cvt.rp.ue8m0x2.f32 $0, 0.0, $1;", "=h,r", args=[x], dtype=tl.uint16,
                                   is_pure=True, pack=1).to(tl.uint8)
    both = tl.inline_asm_elementwise("cvt.rp.satfinite.ue8m0x2.f32 $0, $1, $2;", "=h,r,r", args=[y, x],
                                     dtype=tl.uint16, is_pure=True, pack=1)
    rz = tl.inline_asm_elementwise("cvt.rz.satfinite.ue8m0x2.f32 $0, $1, 2.0;", "=r,r", args=[x],
                                   dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(rp_ptr + o, rp)
    tl.store(both_ptr + o, both)
    tl.store(rz_ptr + o, rz)


@triton.jit
def xorsign(a_ptr, b_ptr, mx_ptr, mn_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    mx = tl.inline_asm_elementwise("""
    {
        max.NaN.xorsign.abs.f32 $0, $1, $2;
    }
    """, "=r,r,r", [a, b], dtype=tl.float32, is_pure=True, pack=1)
    mn = tl.inline_asm_elementwise("min.NaN.xorsign.abs.f32 $0, $2, $1;", "=r,r,r", [a, b], dtype=tl.float32,
                                   is_pure=True, pack=1)
    tl.store(mx_ptr + o, mx)
    tl.store(mn_ptr + o, mn)


def e8m0_byte(v, up, sat):
    bits = int(np.array([v], np.float32).view(np.uint32)[0])
    e, m = (bits >> 23) & 255, bits & 0x7FFFFF
    r = e
    if up:
        r += (m > 0x400000) if e == 0 else (m != 0)
    if r >= 255:
        r = 255 if (e == 255 and m != 0) else (254 if sat else 255)
    return r


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
if len(sys.argv) > 1 and sys.argv[1] == "timer":
    timer_ptx[(1,)](np.ones(8, np.float32), N=8)
    sys.exit("no error for a thread's special register")

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

# e8m0: zero, f32 subnormals around 2^-127, powers of two and the values between, the top of the
# range (a round-up past 2^127), infinities, NaN, negative values (the sign is not read)
sub = np.array([0x00400000, 0x00400001, 0x003FFFFF, 0x00000001, 0x007FFFFF], np.uint32).view(np.float32)
special = np.concatenate([sub, np.float32([0.0, -0.0, 1.0, 1.5, 2.0, 3.0, 0.75, 2.0**-126, 2.0**127, 1.5 * 2.0**127,
                                           np.finfo(np.float32).max, np.inf, -np.inf, np.nan, -2.0, -3.5, 448.0, 1 / 448.0])])
x = np.concatenate([special, (rng.standard_normal(N - special.size) * 2.0 ** rng.integers(-60, 60, N - special.size))]).astype(np.float32)
y = rng.permutation(x).astype(np.float32)
rp, both, rz = np.zeros(N, np.uint8), np.zeros(N, np.uint16), np.zeros(N, np.uint32)
e8m0[(1,)](x, y, rp, both, rz, N=N)
want_rp = np.array([e8m0_byte(v, True, False) for v in x], np.uint8)
want_both = np.array([e8m0_byte(b, True, True) << 8 | e8m0_byte(a, True, True) for a, b in zip(x, y)], np.uint16)
want_rz = np.array([e8m0_byte(v, False, True) << 8 | 128 for v in x], np.uint32)
for name, got, want in [("rp", rp, want_rp), ("rp.satfinite", both, want_both), ("rz.satfinite", rz, want_rz)]:
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)[:4]
        sys.exit("cvt.%s.ue8m0x2.f32: lanes %s (x %s) got %s, want %s" % (name, bad, x[bad], got[bad], want[bad]))
# spot checks of the rule itself: 1.5 -> 2^1, 2^-127 -> byte 0, just above it -> byte 1, inf -> NaN (0xFF)
assert [e8m0_byte(v, True, False) for v in (1.5, sub[0], sub[1], np.inf, 0.0)] == [128, 0, 1, 255, 0]

# xorsign.abs: the larger / smaller magnitude, the sign the XOR of the operands' signs, the canonical NaN
# (0x7fffffff) where either is NaN; zeros of both signs, infinities, equal magnitudes
xa = np.concatenate([np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 3.0, -0.0, 5.0]),
                     rng.standard_normal(N - 10).astype(np.float32)])
xb = np.concatenate([np.float32([-0.0, -0.0, 1.0, 2.0, 1.0, np.nan, 2.0, -3.0, 1e-45, -5.0]),
                     rng.standard_normal(N - 10).astype(np.float32)])
mx, mn = np.zeros(N, np.float32), np.zeros(N, np.float32)
xorsign[(1,)](xa, xb, mx, mn, N=N)
ua, ub = xa.view(np.uint32) & 0x7FFFFFFF, xb.view(np.uint32) & 0x7FFFFFFF
sign = (xa.view(np.uint32) ^ xb.view(np.uint32)) & 0x80000000
nan = (ua > 0x7F800000) | (ub > 0x7F800000)
for name, got, mag in [("max", mx, np.maximum(ua, ub)), ("min", mn, np.minimum(ua, ub))]:
    want = np.where(nan, np.uint32(0x7FFFFFFF), mag | sign).astype(np.uint32)
    if not np.array_equal(got.view(np.uint32), want):
        bad = np.flatnonzero(got.view(np.uint32) != want)[:4]
        sys.exit("%s.NaN.xorsign.abs.f32: lanes %s (a %s, b %s) got %s, want %s" % (name, bad, xa[bad], xb[bad], got[bad],
                                                                                  want[bad].view(np.float32)))

r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, "other"], capture_output=True, text=True)
msg = "inline asm '{ .reg .b32 t; ld.global.b32 t, [$1]; mov.b32 $0, t; }': 'ld.global.b32' is not supported yet"
line = next(i for i, t in enumerate(open(__file__), 1) if "ld.global.b32" in t and "inline_asm" in t)
if r.returncode == 0 or "inline_ptx.py:%d:" % line not in r.stderr or msg not in r.stderr:
    sys.exit("unsupported PTX: rc %d, stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, "timer"], capture_output=True, text=True)
if r.returncode == 0 or "reads the special register '%tid.x', a thread's or cluster's position" not in r.stderr:
    sys.exit("special register: rc %d, stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
print("inline PTX: prmt.b32, cvt.rp/rz.ue8m0x2.f32 and max/min.NaN.xorsign.abs.f32 match numpy on %d lanes, bar.sync 0 runs; another form and a "
      "special register are located errors" % N)
