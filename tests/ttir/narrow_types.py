"""The narrow element types read through the installed Triton's frontend (TTIR) and run on dtsim,
each checked against numpy: uint8 data (Triton's unsigned ops on the signless i8: uitofp, fptoui,
divui, remui, shrui, cmpi ugt, maxui), int8 and int16 arithmetic that wraps at its width and a
tl.sum of int8 (in int32, as Triton), fp8 bit patterns bitcast to tl.float8e4nv / tl.float8e5 and
widened, f32 rounded to both fp8 formats (tt.fp_to_fp, round to nearest even, saturating), f32 to
f16 and bf16 rounded toward zero (`fp_downcast_rounding="rtz"`, tt.fp_to_fp's rounding = rtz), plain
copies of every f16, bf16 and fp8 bit pattern (NaN payloads, signaling or not, and e5m2's infinities
come back byte for byte on the interpreter, as a GPU copies them; on dtsim's CUDA backend fp8 NaNs
come back as the canonical 0x7F), and a tl.dot of fp8 operands accumulating in f32. fp8 values travel as uint8 bit patterns (numpy has no
fp8). Run with `python -m dtsim narrow_types.py` where Triton is installed."""

import numpy as np
import triton
import triton.language as tl
from ttir_check import check, finish


# ---- fp8 reference: decoding by the formats' definitions, encoding as the nearest decoded value ----

def fp8_decode(bits, mbits, bias, has_inf):
    b = np.asarray(bits, np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e = (b & 0x7F) >> mbits
    m = b & ((1 << mbits) - 1)
    emax = (1 << (7 - mbits)) - 1
    v = np.where(e == 0, m * 2.0 ** (1 - bias - mbits), (m + (1 << mbits)) * 2.0 ** (e - bias - mbits))
    if has_inf:
        v = np.where(e == emax, np.where(m == 0, np.inf, np.nan), v)
    else:
        v = np.where((e == emax) & (m == (1 << mbits) - 1), np.nan, v)
    return sign * v


E4M3 = fp8_decode(np.arange(256), 3, 7, False)
E5M2 = fp8_decode(np.arange(256), 2, 15, True)


def fp8_encode(x, table, maxv):
    """The pattern of the value nearest x (ties: the even pattern), saturating at +-maxv."""
    x = np.clip(np.asarray(x, np.float64), -maxv, maxv)
    pos = np.arange(128)
    vals = table[:128]
    ok = np.isfinite(vals)
    out = []
    for v in x:
        d = np.abs(vals[ok] - abs(v))
        best = pos[ok][d == d.min()]
        p = int(best[0]) if len(best) == 1 else int(best[best % 2 == 0][0])
        out.append(p | (0x80 if np.signbit(v) else 0))
    return np.array(out, np.uint8)


# ---- kernels ----

@triton.jit
def u8_image(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    f = x.to(tl.float32) * 0.5 + 3.0
    tl.store(y_ptr + offs, f.to(tl.uint8), mask=m)
    q = x // 3 + (x >> 2) + (x % 7)
    z = tl.where(x > 200, q, tl.maximum(x, 17))
    tl.store(z_ptr + offs, z, mask=m)


@triton.jit
def small_ints(a_ptr, b_ptr, y8_ptr, y16_ptr, s_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(y8_ptr + offs, a * a + a)
    tl.store(y16_ptr + offs, b * 3 - a.to(tl.int16))
    tl.store(s_ptr, tl.sum(a, axis=0))


@triton.jit
def fp8_convert(bits_ptr, f4_ptr, f5_ptr, x_ptr, q4_ptr, q5_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    b = tl.load(bits_ptr + offs)
    tl.store(f4_ptr + offs, b.to(tl.float8e4nv, bitcast=True).to(tl.float32))
    tl.store(f5_ptr + offs, b.to(tl.float8e5, bitcast=True).to(tl.float32))
    x = tl.load(x_ptr + offs)
    tl.store(q4_ptr + offs, x.to(tl.float8e4nv).to(tl.uint8, bitcast=True))
    tl.store(q5_ptr + offs, x.to(tl.float8e5).to(tl.uint8, bitcast=True))


@triton.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(tl.float8e5, bitcast=True)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(tl.float8e5, bitcast=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def to_rtz(x_ptr, h_ptr, b_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(h_ptr + o, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(b_ptr + o, x.to(tl.bfloat16, fp_downcast_rounding="rtz").to(tl.float32))


@triton.jit
def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o))


@triton.jit
def through_values(u16_ptr, h_ptr, b_ptr, u8_ptr, e5_ptr, e4_ptr, BLOCK: tl.constexpr):
    # every pattern made a value of the type (bitcast) and taken back to its bits
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.load(u16_ptr + o)
    tl.store(h_ptr + o, u.to(tl.float16, bitcast=True).to(tl.int16, bitcast=True))
    tl.store(b_ptr + o, u.to(tl.bfloat16, bitcast=True).to(tl.int16, bitcast=True))
    m = o < 256
    v = tl.load(u8_ptr + o, mask=m, other=0)
    tl.store(e5_ptr + o, v.to(tl.float8e5, bitcast=True).to(tl.int8, bitcast=True), mask=m)
    tl.store(e4_ptr + o, v.to(tl.float8e4nv, bitcast=True).to(tl.int8, bitcast=True), mask=m)


def toward_zero(x, bits_of, value_of):
    """x (f64) rounded toward zero to a format given by f32 -> its bits (rounded to nearest) and back."""
    out = []
    for v in x:
        b = bits_of(np.float32(v))
        if abs(value_of(b)) > abs(v) and np.isfinite(v):
            b -= 1
        out.append(value_of(b))
    return np.array(out)


def main():
    rng = np.random.default_rng(5)

    n = 1000
    x = rng.integers(0, 256, n).astype(np.uint8)
    y = np.zeros(n, np.uint8)
    z = np.zeros(n, np.uint8)
    u8_image[(triton.cdiv(n, 256),)](x, y, z, n, BLOCK=256)
    xi = x.astype(np.int64)
    check("uint8: uitofp, fptoui", y, np.trunc(xi * 0.5 + 3.0))
    q = xi // 3 + (xi >> 2) + xi % 7
    check("uint8: divui shrui remui ugt maxui", z, np.where(xi > 200, q, np.maximum(xi, 17)) % 256)

    a = rng.integers(-128, 128, 128).astype(np.int8)
    b = rng.integers(-32768, 32768, 128).astype(np.int16)
    y8 = np.zeros(128, np.int8)
    y16 = np.zeros(128, np.int16)
    s = np.zeros(1, np.int32)
    small_ints[(1,)](a, b, y8, y16, s, BLOCK=128)
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    check("int8: a * a + a wraps", y8, ((ai * ai + ai + 128) % 256) - 128)
    check("int16: b * 3 - a wraps", y16, ((bi * 3 - ai + 32768) % 65536) - 32768)
    check("int8: tl.sum in int32", s, [ai.sum()])

    bits = np.arange(256, dtype=np.uint8)
    xs = np.concatenate([rng.normal(0, 30, 200), (E4M3[1:120:3] + E4M3[2:121:3]) / 2,
                         [1000.0, -1e9, 60000.0, 1e6, 2.0 ** -12, -2.0 ** -18]]).astype(np.float32)
    xs = np.resize(xs, 256).astype(np.float32)
    f4, f5 = np.zeros(256, np.float32), np.zeros(256, np.float32)
    q4, q5 = np.zeros(256, np.uint8), np.zeros(256, np.uint8)
    fp8_convert[(1,)](bits, f4, f5, xs, q4, q5, BLOCK=256)
    check("fp8e4nv: every pattern to f32", f4, E4M3)
    check("fp8e5: every pattern to f32", f5, E5M2)
    check("f32 to fp8e4nv (rtne, saturating)", q4, fp8_encode(xs, E4M3, 448.0))
    check("f32 to fp8e5 (rtne, saturating)", q5, fp8_encode(xs, E5M2, 57344.0))

    M = N = K = 32
    ab = fp8_encode(rng.normal(0, 2, M * K), E5M2, 57344.0)
    bb = fp8_encode(rng.normal(0, 2, K * N), E5M2, 57344.0)
    c = np.zeros(M * N, np.float32)
    fp8_dot[(1,)](ab, bb, c, M=M, N=N, K=K)
    want = E5M2[ab].reshape(M, K) @ E5M2[bb].reshape(K, N)
    check("tl.dot of fp8e5 operands", c.reshape(M, N), want, tol=1e-6)

    rng = np.random.default_rng(5)
    xr = np.concatenate([np.float32([1.0, -1.0, 65519.0, 65520.0, 70000.0, -70000.0, np.inf, -np.inf, 1e-8, -1e-8, 0.0, 3.0e38]),
                         (rng.standard_normal(116) * 10.0 ** rng.integers(-6, 5, 116)).astype(np.float32)])
    h, b = np.zeros(128, np.float16), np.zeros(128, np.float32)
    to_rtz[(1,)](xr, h, b, N=128)
    f16_bits = lambda v: int(np.float16(v).view(np.uint16))  # noqa: E731
    f16_value = lambda u: float(np.uint16(u).view(np.float16))  # noqa: E731

    def bf16_bits(v):  # round to nearest even
        u = int(np.float32(v).view(np.uint32))
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    bf16_value = lambda u: float(np.uint32(u << 16).view(np.float32))  # noqa: E731
    check("f32 to f16, rtz", h.astype(np.float64), toward_zero(xr.astype(np.float64), f16_bits, f16_value))
    check("f32 to bf16, rtz", b, toward_zero(xr.astype(np.float64), bf16_bits, bf16_value))

    every16 = np.arange(-32768, 32768).astype(np.int16)
    every8 = np.arange(-128, 128).astype(np.int8)
    h = np.zeros(65536, np.float16)
    copy[(16,)](every16.view(np.float16), h, BLOCK=4096)
    outs = [np.zeros(65536, np.int16), np.zeros(65536, np.int16), np.zeros(256, np.int8), np.zeros(256, np.int8)]
    through_values[(16,)](every16, outs[0], outs[1], every8, outs[2], outs[3], BLOCK=4096)
    for name, got, want in (("f16 copy", h.view(np.int16), every16), ("f16 value", outs[0], every16),
                            ("bf16 value", outs[1], every16), ("fp8e5 value", outs[2], every8), ("fp8e4nv value", outs[3], every8)):
        check("every %s pattern kept" % name, got, want)

    finish("all ok")


if __name__ == "__main__":
    main()
