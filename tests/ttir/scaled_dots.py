"""tl.dot_scaled (TTIR tt.dot_scaled: microscaled dots, as MX / NV-FP4 matmuls use them) in a small
kernel of its own, checked against a numpy reference of the OCP microscaling definition, the scaled
operands rounded to Triton's compute type (fp16 where an operand is fp16, else bf16; an fp16 overflow
is an infinity, as in Triton's decomposition on GPUs without scaled MMA): every pair of
operand formats (e2m1 packed two per byte with the first value in the low nibble, e4m3, e5m2, bf16,
fp16), e8m0 scales (2^(s - 127), one per 32 values along K; 0xFF is NaN) or none, e2m1 packed along
M / N (lhs_k_pack / rhs_k_pack = False), fp8 e4m3 scales over groups of 16 (NV-FP4), an accumulator,
and NaN scales with and without fast_math. Run with `python -m dtsim scaled_dots.py` (Triton's TTIR;
`--backend=cuda` on a GPU: the same lowering on the CUDA backend, exit 77 without one)."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
from dtsim import _dtsim

if dtsim.config()["backend"] == "cuda" and not _dtsim.cuda_available()[0]:
    print("%s: skipped" % _dtsim.cuda_available()[1])
    sys.exit(77)


@triton.jit
def scaled(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, AR: tl.constexpr, AC: tl.constexpr, BR: tl.constexpr,
           BC: tl.constexpr, M: tl.constexpr, N: tl.constexpr, G: tl.constexpr, FA: tl.constexpr,
           FB: tl.constexpr, HAS_SA: tl.constexpr, HAS_SB: tl.constexpr, KPA: tl.constexpr, KPB: tl.constexpr,
           FAST: tl.constexpr, FP8_SCALES: tl.constexpr):
    """c = dot_scaled(a, sa, FA, b, sb, FB, c): a is AR x AC, b BR x BC as stored (e2m1 packed)."""
    a = tl.load(a_ptr + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])
    b = tl.load(b_ptr + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])
    sa = None
    sb = None
    if HAS_SA:
        sa = tl.load(sa_ptr + tl.arange(0, M)[:, None] * G + tl.arange(0, G)[None, :])
    if HAS_SB:
        sb = tl.load(sb_ptr + tl.arange(0, N)[:, None] * G + tl.arange(0, G)[None, :])
    if FP8_SCALES:  # NV-FP4's e4m3 scales, read as bytes
        sa = sa.to(tl.float8e4nv, bitcast=True)
        sb = sb.to(tl.float8e4nv, bitcast=True)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    acc = tl.load(c_ptr + offs)
    acc = tl.dot_scaled(a, sa, FA, b, sb, FB, acc, fast_math=FAST, lhs_k_pack=KPA, rhs_k_pack=KPB)
    tl.store(c_ptr + offs, acc)


E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1(nib):
    v = E2M1[nib & 7]
    return np.where(nib & 8, -v, v)


def fp8(byte, ebits):
    mbits, bias = 7 - ebits, (1 << (ebits - 1)) - 1
    s, e, m = byte >> 7, (byte >> mbits) & ((1 << ebits) - 1), byte & ((1 << mbits) - 1)
    v = np.where(e == 0, m / 2.0**mbits * 2.0**(1 - bias), (1 + m / 2.0**mbits) * 2.0**(e.astype(np.int64) - bias))
    if ebits == 5:  # e5m2: IEEE-like infinities and NaNs
        v = np.where(e == 31, np.where(m == 0, np.inf, np.nan), v)
    else:  # e4m3fn: only S.1111.111 is NaN
        v = np.where((e == 15) & (m == 7), np.nan, v)
    return np.where(s == 1, -v, v)


def half(v):
    """float64 -> the nearest fp16 (infinity past 65504), as float64"""
    with np.errstate(over="ignore"):
        return v.astype(np.float16).astype(np.float64)


def bf16(v):
    """float64 -> the nearest bf16 (ties to even), as float64"""
    bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isnan(v), np.nan, bits.view(np.float32).astype(np.float64))


def unpack(packed, axis):
    """Two e2m1 values per byte along `axis`, the first in the low nibble."""
    lo, hi = e2m1(packed & 0xF), e2m1(packed >> 4)
    return np.stack([lo, hi], axis=axis + 1).reshape(
        tuple(d * 2 if i == axis else d for i, d in enumerate(packed.shape)))


def data(fmt, shape, rng):
    """(the array the kernel reads, its values as float64)"""
    if fmt == "e2m1":
        raw = rng.integers(0, 256, shape, dtype=np.uint8)
        return raw, None
    if fmt in ("e4m3", "e5m2"):
        ebits = 4 if fmt == "e4m3" else 5
        raw = rng.integers(0, 256, shape, dtype=np.uint8)
        bad = (raw & 0x7F) >= (0x7C if ebits == 5 else 0x7F)  # no infinities or NaNs among the values
        raw[bad] &= 0xBF
        return raw, fp8(raw, ebits)
    if fmt == "bf16":
        f = (rng.standard_normal(shape) * 4).astype(np.float32)
        raw = (f.view(np.uint32) >> 16).astype(np.uint16)
        return raw, (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    f = (rng.standard_normal(shape) * 4).astype(np.float16)
    return f, f.astype(np.float64)


def run(fa, fb, rng, M=16, N=16, K=64, sa_kind="e8m0", sb_kind="e8m0", kpa=True, kpb=True, nan_at=None, fast=False):
    group = 16 if "fp8" in (sa_kind, sb_kind) else 32
    G = K // group
    ashape = [M, K]
    if fa == "e2m1":
        ashape[1 if kpa else 0] //= 2
    bshape = [K, N]
    if fb == "e2m1":
        bshape[0 if kpb else 1] //= 2
    a, av = data(fa, ashape, rng)
    b, bv = data(fb, bshape, rng)
    if fa == "e2m1":
        av = unpack(a, 1 if kpa else 0)
    if fb == "e2m1":
        bv = unpack(b, 0 if kpb else 1)

    def scales(kind, rows):
        if kind == "e8m0":
            s = rng.integers(120, 135, (rows, G), dtype=np.uint8)
            return s, 2.0**(s.astype(np.int64) - 127)
        if kind == "fp8":  # e4m3 values 0.5 .. 8
            s = rng.integers(0x30, 0x50, (rows, G), dtype=np.uint8)
            return s, fp8(s, 4)
        return np.zeros((rows, G), np.uint8), None

    sa, sav = scales(sa_kind, M)
    sb, sbv = scales(sb_kind, N)
    if nan_at is not None:
        sa[nan_at] = 0xFF
        sav[nan_at] = np.nan
    acc = rng.integers(-4, 5, (M, N)).astype(np.float32)
    x = av if sav is None else av * np.repeat(sav, group, axis=1)
    y = bv if sbv is None else bv * np.repeat(sbv, group, axis=1).T
    rnd = half if "fp16" in (fa, fb) else bf16  # Triton's compute type
    with np.errstate(invalid="ignore", over="ignore"):
        want = rnd(x) @ rnd(y) + acc
    c = acc.copy()
    scaled[(1,)](a, sa, b, sb, c, AR=a.shape[0], AC=a.shape[1], BR=b.shape[0], BC=b.shape[1], M=M, N=N, G=G,
                 FA=fa, FB=fb, HAS_SA=sav is not None, HAS_SB=sbv is not None, KPA=kpa, KPB=kpb, FAST=fast,
                 FP8_SCALES=sa_kind == "fp8")
    name = "%s x %s (scales %s, %s%s%s%s)" % (fa, fb, sa_kind if sav is not None else "none",
                                            sb_kind if sbv is not None else "none", "" if kpa else ", lhs packed along M",
                                            "" if kpb else ", rhs packed along N", ", fast_math" if fast else "")
    if not np.array_equal(np.isnan(c), np.isnan(want)):
        sys.exit("%s: NaN at %s, want NaN at %s" % (name, np.argwhere(np.isnan(c))[:4].tolist(),
                                                    np.argwhere(np.isnan(want))[:4].tolist()))
    inf = np.isinf(want)
    if not np.array_equal(c[inf], want[inf]) or np.isinf(c[~inf]).any():
        sys.exit("%s: infinities differ: at %s, want at %s" % (name, np.argwhere(np.isinf(c))[:4].tolist(),
                                                               np.argwhere(inf)[:4].tolist()))
    ok = np.isfinite(want)
    if not np.allclose(c[ok], want[ok], rtol=1e-5, atol=1e-5 * np.abs(want[ok]).max()):
        bad = np.argwhere(~np.isclose(c, want, rtol=1e-5) & ok)[:4].tolist()
        sys.exit("%s: got %s, want %s at %s" % (name, c[tuple(bad[0])], want[tuple(bad[0])], bad))
    return name


rng = np.random.default_rng(7)
formats = ["e2m1", "e4m3", "e5m2", "bf16", "fp16"]
n = 0
for fa in formats:
    for fb in formats:
        run(fa, fb, rng)
        n += 1
print("dot_scaled: %d format pairs with e8m0 scales match numpy" % n)
names = [
    run("bf16", "e2m1", rng, sa_kind="none"),
    run("e4m3", "fp16", rng, sb_kind="none"),
    run("bf16", "bf16", rng, sa_kind="none", sb_kind="none"),
    run("e2m1", "e2m1", rng, kpa=False),
    run("e2m1", "e2m1", rng, kpb=False),
    run("e2m1", "e4m3", rng, kpa=False, M=32),
    run("e2m1", "e2m1", rng, sa_kind="fp8", sb_kind="fp8"),
    run("e2m1", "e2m1", rng, nan_at=(3, 1)),
    run("e4m3", "e2m1", rng, nan_at=(0, 0), fast=True),
]
for name in names:
    print("dot_scaled: %s matches numpy" % name)
