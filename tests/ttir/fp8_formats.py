"""The fp8 formats besides e4m3 / e5m2. tl.float8e4b15 (bias 15, every pattern finite): Triton's TTIR
holds it as i8 and converts with inline PTX, which the TTIR reader runs; dtsim's own reader types it
f8e4b15. Both must decode every bit pattern as Triton's PTX widening does (the f16 S.0EEEE.MMM0000000),
convert f32 as Triton's conversion does (toward zero to f16, then halves away from zero, saturating at
1.75, NaN and infinities to +-1.75), and dot it as f16. tl.float8e4b8 / tl.float8e5b16 (the "fnuz"
formats, torch.float8_e4m3fnuz / float8_e5m2fnuz): Triton refuses them for every CUDA target, so the
TTIR reader stops with a located error saying so; dtsim's own reader (DTSIM_STANDIN=1) decodes them as
torch, converts as Triton's software conversion for AMD GPUs (to nearest even, finite overflow
saturating, infinities and NaN to the NaN 0x80, zero to +0) and dots them. Needs torch (the
compatibility venv); exits 77 otherwise. Run with `python -m dtsim fp8_formats.py`, and with
DTSIM_STANDIN=1."""
import math
import struct
import sys

try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import at, finish, report

STANDIN = triton.__version__.endswith("+dtsim")


@triton.jit
def widen(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, tl.load(x_ptr + o).to(tl.float32))


@triton.jit
def narrow(x_ptr, y_ptr, N: tl.constexpr, DT: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, tl.load(x_ptr + o).to(DT))


@triton.jit
def tail_other(x_ptr, y_ptr, n, N: tl.constexpr):
    o = tl.arange(0, N)
    o2 = tl.arange(0, 2)
    one = tl.full((1, 1), 1.5, tl.float16)  # Triton converts it with pack=4 inline PTX: a [1, 1] tile
    v = tl.load(x_ptr + o[:, None] * 2 + o2[None, :], mask=o[:, None] < n, other=one)
    tl.store(y_ptr + o[:, None] * 2 + o2[None, :], v.to(tl.float32))
    w = tl.load(x_ptr + o, mask=o < n, other=-1.25)  # a scalar
    tl.store(y_ptr + 2 * N + o, w.to(tl.float32))


@triton.jit
def via_e4b8(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, tl.load(x_ptr + o).to(tl.float8e4b8).to(tl.float32))  # through e4b8


@triton.jit
def dot8(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def e4b15_value(b):
    """Triton's widening: the fp8 byte's sign, exponent and mantissa moved into an f16."""
    h = np.array([((b & 0x80) << 8) | ((b & 0x7F) << 7)], dtype=np.uint16)
    return float(h.view(np.float16)[0])


def e4b15_of(v):
    """Triton's f32 -> float8e4b15 (sm_80 and newer): cvt.rz.f16.f32, the magnitude's f16 bits min'ed
    with 1.75's (min.f16x2 gives the number where one side is NaN), + 0x40, >> 7, the sign or'ed in."""
    sign = 0x80 if math.copysign(1.0, v) < 0 else 0
    if math.isnan(v):
        h = 0x3F00
    else:
        a = min(abs(v), 65504.0)
        if a == math.inf:
            h = 0x3F00
        else:
            e = max(math.frexp(a)[1] - 1, -14) if a else -14
            q = 2.0 ** (e - 10)
            h = int(np.array([math.floor(a / q) * q], dtype=np.float16).view(np.uint16)[0])
            h = min(h, 0x3F00)
    return ((h + 0x40) >> 7) | sign


def fp8_arg(t, name):
    """A uint8 tensor's bytes as the Triton fp8 dtype `name`."""
    return triton.reinterpret(t, getattr(tl, name))


# ---- float8e4b15: both readers ----
codes = torch.arange(256, dtype=torch.uint8)
y = torch.zeros(256, dtype=torch.float32)
widen[(1,)](fp8_arg(codes, "float8e4b15"), y, N=256)
want = [e4b15_value(b) for b in range(256)]
report("e4b15: every pattern decodes", all(f32_bits(g) == f32_bits(w) for g, w in zip(y.tolist(), want)),
       "(0x7f: %r, 0x01: %r)" % (y[0x7F].item(), y[1].item()))

vals = [0.0, -0.0, 1.0625, -1.0625, 1.1875, 1.75, 1.8, 1.875, 2.0, 1e5, -1e30, math.inf, -math.inf, math.nan,
        2.0 ** -18, 3 * 2.0 ** -19, 2.0 ** -30]
for b in range(127):  # every midpoint between neighbours and the f32s beside it
    m = (e4b15_value(b) + e4b15_value(b + 1)) / 2
    for v in (m, np.nextafter(np.float32(m), np.float32(np.inf)), np.nextafter(np.float32(m), np.float32(-np.inf))):
        vals += [float(v), -float(v)]
vals += [float(v) for v in np.random.RandomState(0).standard_normal(200).astype(np.float32)]
n = 1 << (len(vals) - 1).bit_length()
x = torch.tensor(vals + [0.0] * (n - len(vals)), dtype=torch.float32)
out = torch.zeros(n, dtype=torch.uint8)
narrow[(1,)](x, fp8_arg(out, "float8e4b15"), N=n, DT=tl.float8e4b15)
got = out.tolist()[:len(vals)]
bad = [(v, g, e4b15_of(v)) for v, g in zip(vals, got) if g != e4b15_of(v)]
report("e4b15: f32 converts as Triton's PTX", not bad, "(%d values; first wrong: %r)" % (len(vals), bad[:1]))
report("e4b15: ties away from zero, saturation, NaN", got[2:8] == [0x79, 0xF9, 0x7A, 0x7E, 0x7E, 0x7E] and
       got[11:14] == [0x7E, 0xFE, 0x7E], str(got[:14]))

rs = np.random.RandomState(1)
a8 = torch.tensor(rs.randint(0, 256, (16, 16)), dtype=torch.uint8)
b8 = torch.tensor(rs.randint(0, 256, (16, 16)), dtype=torch.uint8)
c = torch.zeros(16, 16, dtype=torch.float32)
dot8[(1,)](fp8_arg(a8, "float8e4b15"), fp8_arg(b8, "float8e4b15"), c, M=16, N=16, K=16)
dec = np.array(want, dtype=np.float64)
ref = dec[a8.numpy()] @ dec[b8.numpy()]
report("e4b15: tl.dot", np.allclose(c.numpy(), ref, rtol=1e-6, atol=1e-6), "(max error %g)" % np.abs(c.numpy() - ref).max())

ys = torch.zeros(3 * 8, dtype=torch.float32)
tail_other[(1,)](fp8_arg(codes[:16].clone(), "float8e4b15"), ys, 3, N=8)
want = [e4b15_value(b) for b in range(6)] + [1.5] * 10 + [e4b15_value(b) for b in range(3)] + [-1.25] * 5
report("e4b15: other= of shape [1, 1] and a scalar", ys.tolist() == want, str(ys.tolist()))

# ---- float8e4b8 / float8e5b16 ----
FNUZ = {"float8e4b8": (torch.float8_e4m3fnuz, 240.0), "float8e5b16": (torch.float8_e5m2fnuz, 57344.0)}
if not STANDIN:  # Triton's frontend refuses them for CUDA targets: a located error of dtsim's
    for name, (tdt, _) in FNUZ.items():
        try:
            widen[(1,)](codes.view(tdt), y, N=256)
            report("%s: refused" % name, False, "(ran)")
        except dtsim.CompileError as e:
            # also a triton.CompilationError, as Triton's own refusal is (host code catches that class)
            report("%s: refused" % name, at(__file__, "def widen(") in str(e) and ("Triton refuses tl.%s for every CUDA target" % name) in str(e)
                   and isinstance(e, triton.CompilationError),
                   str(e).splitlines()[0][:160])
    try:
        via_e4b8[(1,)](x, x, N=n)
        report("float8e4b8: a cast refused where it is", False, "(ran)")
    except dtsim.CompileError as e:
        report("float8e4b8: a cast refused where it is", at(__file__, "# through e4b8") in str(e), str(e).splitlines()[0][:120])
    finish("fp8 formats: e4b15 runs, the fnuz formats are Triton's refusal")
    sys.exit(0)

for name, (tdt, mx) in FNUZ.items():
    widen[(1,)](codes.view(tdt), y, N=256)
    want = codes.view(tdt).float()
    same = all((math.isnan(w) and math.isnan(g)) or f32_bits(g) == f32_bits(w) for g, w in zip(y.tolist(), want.tolist()))
    report("%s: every pattern decodes as torch" % name, same and math.isnan(y[0x80].item()) and y[0x7F].item() == mx)
    fin = sorted({v for v in want.tolist() if not math.isnan(v)})
    mids = [(p + q) / 2 for p, q in zip(fin, fin[1:])]
    inr = mids + [float(v) for v in np.random.RandomState(2).standard_normal(100).astype(np.float32)]
    special = [mx * 1.04, 1e30, -1e30, math.inf, -math.inf, math.nan, -0.0, -1e-30]
    vals = inr + special
    n = 1 << (len(vals) - 1).bit_length()
    x = torch.tensor(vals + [0.0] * (n - len(vals)), dtype=torch.float32)
    out = torch.zeros(n, dtype=torch.uint8)
    narrow[(1,)](x, out.view(tdt), N=n, DT=getattr(tl, name))
    got = out.tolist()
    ref = torch.tensor(inr, dtype=torch.float32).to(tdt).view(torch.uint8).tolist()
    report("%s: f32 rounds to nearest even as torch" % name, got[:len(inr)] == ref, "(%d values)" % len(inr))
    report("%s: saturation, NaN, +0" % name, got[len(inr):len(vals)] == [0x7F, 0x7F, 0xFF, 0x80, 0x80, 0x80, 0, 0],
           str(got[len(inr):len(vals)]))
    a8 = torch.tensor(rs.randint(0, 256, (16, 16)), dtype=torch.uint8)
    a8[a8 == 0x80] = 0  # no NaN operands
    dec = np.nan_to_num(codes.view(tdt).double().numpy())
    c = torch.zeros(16, 16, dtype=torch.float32)
    dot8[(1,)](a8.view(tdt), a8.t().contiguous().view(tdt), c, M=16, N=16, K=16)
    ref = dec[a8.numpy()] @ dec[a8.t().contiguous().numpy()]
    report("%s: tl.dot" % name, np.allclose(c.numpy(), ref, rtol=1e-5, atol=1e-5), "(max error %g)" % np.abs(c.numpy() - ref).max())
yv = torch.zeros(n, dtype=torch.float32)
via_e4b8[(1,)](x, yv, N=n)
ref = x.to(torch.float8_e4m3fnuz).float()
report("float8e4b8: a cast in the kernel", all(abs(v) > 240 or (math.isnan(g) and math.isnan(w)) or f32_bits(g) == f32_bits(w)
                                               for v, g, w in zip(x.tolist(), yv.tolist(), ref.tolist())))
finish("fp8 formats: e4b15, e4b8 and e5b16 on dtsim's own reader")
