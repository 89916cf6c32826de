"""Bits that must come through unchanged or as the GPU computes them: tl.split and tl.gather move -0.0 and
NaN payloads as they are (they select a lane, they do not add); shifts by a count at or past the width give
0 (and the sign for an arithmetic >>), for i32, u32 and i64, as the GPU clamps the count; libdevice's bit
and reinterpretation functions (popc, clz, brev, ffs, mulhi, umulhi, byte_perm, float_as_int,
int_as_float, float2int_rn/rz/rd/ru, copysign), normcdf / sinpi / cospi and erfinv / lgamma against numpy
and Python's math."""
import math
import sys

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

import dtsim  # noqa: F401 (python -m dtsim)
from ttir_check import check, finish


@triton.jit
def moves(x_ptr, i_ptr, a_ptr, b_ptr, g_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    a, b = tl.split(tl.reshape(x, (N // 2, 2)))
    h = tl.arange(0, N // 2)
    tl.store(a_ptr + h, a.to(tl.int32, bitcast=True))
    tl.store(b_ptr + h, b.to(tl.int32, bitcast=True))
    tl.store(g_ptr + o, tl.gather(x, tl.load(i_ptr + o), 0).to(tl.int32, bitcast=True))


@triton.jit
def shifts(x_ptr, s_ptr, sr_ptr, ur_ptr, sl_ptr, wr_ptr, wl_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    s = tl.load(s_ptr + o)
    tl.store(sr_ptr + o, x >> s)
    tl.store(ur_ptr + o, (x.to(tl.uint32, bitcast=True) >> s.to(tl.uint32)).to(tl.int32, bitcast=True))
    tl.store(sl_ptr + o, x << s)
    w = x.to(tl.int64) * 0x10001
    tl.store(wr_ptr + o, w >> (s * 2).to(tl.int64))
    tl.store(wl_ptr + o, w << (s * 2).to(tl.int64))


@triton.jit
def bits(i_ptr, j_ptr, f_ptr, out_ptr, fout_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    i = tl.load(i_ptr + o)
    j = tl.load(j_ptr + o)
    f = tl.load(f_ptr + o)
    tl.store(out_ptr + 0 * N + o, libdevice.popc(i))
    tl.store(out_ptr + 1 * N + o, libdevice.clz(i))
    tl.store(out_ptr + 2 * N + o, libdevice.brev(i))
    tl.store(out_ptr + 3 * N + o, libdevice.ffs(i))
    tl.store(out_ptr + 4 * N + o, libdevice.mulhi(i, j))
    tl.store(out_ptr + 5 * N + o, libdevice.mulhi(i.to(tl.uint32, bitcast=True), j.to(tl.uint32, bitcast=True)).to(tl.int32, bitcast=True))
    tl.store(out_ptr + 6 * N + o, libdevice.byte_perm(i, j, 0x5140))
    tl.store(out_ptr + 7 * N + o, libdevice.float_as_int(f))
    tl.store(out_ptr + 8 * N + o, libdevice.float2int_rn(f))
    tl.store(out_ptr + 9 * N + o, libdevice.float2int_rz(f))
    tl.store(out_ptr + 10 * N + o, libdevice.float2int_rd(f))
    tl.store(out_ptr + 11 * N + o, libdevice.float2int_ru(f))
    tl.store(fout_ptr + 0 * N + o, libdevice.int_as_float(i))
    tl.store(fout_ptr + 1 * N + o, libdevice.copysign(f, (j & 1).to(tl.float32) - 0.5))
    tl.store(fout_ptr + 2 * N + o, libdevice.normcdf(f * 0.01))
    tl.store(fout_ptr + 3 * N + o, libdevice.sinpi(f * 0.01))
    tl.store(fout_ptr + 4 * N + o, libdevice.cospi(f * 0.01))
    tl.store(fout_ptr + 5 * N + o, libdevice.erfinv(f * 0.005))
    tl.store(fout_ptr + 6 * N + o, libdevice.lgamma(f * 0.05))


N = 16
x = np.float32([-0.0, 1.0, 2.0, -0.0, -0.0, -0.0, -3.0, 4.0] * 2)
x.view(np.uint32)[5] = 0xFFC00123  # a negative quiet NaN with a payload
x.view(np.uint32)[9] = 0x7F800001  # a signaling NaN
idx = np.arange(N, dtype=np.int32)[::-1].copy()
a, b, g = np.zeros(N // 2, np.int32), np.zeros(N // 2, np.int32), np.zeros(N, np.int32)
moves[(1,)](x, idx, a, b, g, N=N)
xb = x.view(np.int32)
check("split[0]", a, xb[0::2])
check("split[1]", b, xb[1::2])
check("gather", g, xb[idx])

xs = np.int32([0x12345678, -0x12345678] * 8)
s = np.int32([0, 1, 8, 31, 32, 33, 40, 63, 0, 4, 16, 31, 32, 35, 39, -1])
sr, ur, sl = np.zeros(N, np.int32), np.zeros(N, np.int32), np.zeros(N, np.int32)
wr, wl = np.zeros(N, np.int64), np.zeros(N, np.int64)
shifts[(1,)](xs, s, sr, ur, sl, wr, wl, N=N)
cnt = s.astype(np.int64) & 0xFFFFFFFF  # the count as unsigned
check(">> (i32)", sr, np.where(cnt >= 32, np.where(xs < 0, -1, 0), xs.astype(np.int64) >> np.minimum(cnt, 31)).astype(np.int32))
check(">> (u32)", ur, np.where(cnt >= 32, 0, (xs.astype(np.int64) & 0xFFFFFFFF) >> np.minimum(cnt, 31)).astype(np.uint32).view(np.int32))
check("<< (i32)", sl, np.where(cnt >= 32, 0, (xs.astype(np.int64) << np.minimum(cnt, 31)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
w = xs.astype(np.int64) * 0x10001
c2 = np.where(s < 0, 1 << 62, s.astype(np.int64) * 2)  # the i64 count s * 2 as unsigned (negative: huge)
check(">> (i64)", wr, np.where(c2 >= 64, np.where(w < 0, -1, 0), w >> np.minimum(c2, 63)))
check("<< (i64)", wl, np.where(c2 >= 64, 0, np.array([(int(v) << int(k)) & (2**64 - 1) if k < 64 else 0 for v, k in zip(w, c2)], np.uint64).view(np.int64)))

rng = np.random.default_rng(5)
i = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
i[:3] = [0, 1, -1]
j = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
f = np.float32(rng.standard_normal(N) * 100)
f[:10] = [2.5, -2.5, 3.5, -0.5, 1e10, -1e10, 200.0, -200.0, 199.9, -150.0]
out, fout = np.zeros(12 * N, np.int32), np.zeros(7 * N, np.float32)
bits[(1,)](i, j, f, out, fout, N=N)
u = [int(v) for v in i.view(np.uint32)]
uj = [int(v) for v in j.view(np.uint32)]
check("popc", out[0:N], [bin(v).count("1") for v in u])
check("clz", out[N:2 * N], [32 - v.bit_length() for v in u])
check("brev", out[2 * N:3 * N], np.array([int(format(v, "032b")[::-1], 2) for v in u], np.uint32).view(np.int32))
check("ffs", out[3 * N:4 * N], [(v & -v).bit_length() for v in u])
check("mulhi", out[4 * N:5 * N], np.array([(int(p) * int(q)) >> 32 for p, q in zip(i, j)], np.int64).astype(np.int32))
check("umulhi", out[5 * N:6 * N], np.array([(int(p) * int(q)) >> 32 for p, q in zip(u, uj)], np.uint32).view(np.int32))
check("byte_perm", out[6 * N:7 * N], np.array([(p & 255) | ((q & 255) << 8) | (((p >> 8) & 255) << 16) | (((q >> 8) & 255) << 24) for p, q in zip(u, uj)], np.uint32).view(np.int32))
check("float_as_int", out[7 * N:8 * N], f.view(np.int32))
clamp = lambda v: np.clip(v, -2**31, 2**31 - 1).astype(np.int64).astype(np.int32)
check("float2int_rn", out[8 * N:9 * N], clamp(np.rint(f.astype(np.float64))))
check("float2int_rz", out[9 * N:10 * N], clamp(np.trunc(f.astype(np.float64))))
check("float2int_rd", out[10 * N:11 * N], clamp(np.floor(f.astype(np.float64))))
check("float2int_ru", out[11 * N:12 * N], clamp(np.ceil(f.astype(np.float64))))
check("int_as_float", fout[0:N].view(np.int32), i)
check("copysign", fout[N:2 * N], np.copysign(f, (j & 1).astype(np.float32) - np.float32(0.5)), bits=True)
x1 = (f * np.float32(0.01)).astype(np.float64)
for name, got, want in [("normcdf", fout[2 * N:3 * N], 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in x1])),
                        ("sinpi", fout[3 * N:4 * N], np.sin(np.pi * x1)), ("cospi", fout[4 * N:5 * N], np.cos(np.pi * x1))]:
    # (sin(pi x) in float64 loses the exact zeros of large integers x; an absolute floor covers them)
    err = np.abs(got.astype(np.float64) - want) / (1e-5 * np.abs(want) + 1e-6)
    if not (err <= 1).all():
        sys.exit("%s: error %g at lane %d" % (name, err.max(), int(err.argmax())))
# erfinv: erf of the result gives the argument back (|x| < 1), +-inf at +-1, NaN past; lgamma: log|gamma|
x2 = (f * np.float32(0.005)).astype(np.float64)
for v, got in zip(x2, fout[5 * N:6 * N]):
    if abs(v) < 1 and not abs(math.erf(float(got)) - v) <= 1e-6 * max(1.0, abs(float(got)) * math.exp(-float(got) ** 2) * 3):
        sys.exit("erfinv(%r) = %r: erf of it is %r" % (v, got, math.erf(float(got))))
    if abs(v) > 1 and not np.isnan(got):
        sys.exit("erfinv(%r) = %r, want NaN" % (v, got))
x3 = (f * np.float32(0.05)).astype(np.float64)
for v, got in zip(x3, fout[6 * N:7 * N]):
    want = math.lgamma(v) if not (v <= 0 and v == int(v)) else math.inf
    if not (got == want or abs(got - want) <= 1e-6 * abs(want) + 1e-6):
        sys.exit("lgamma(%r) = %r, want %r" % (v, got, want))
finish("bit-exact moves, shifts past the width and libdevice's bit functions match numpy on %d lanes" % N)
