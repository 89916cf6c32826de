"""Triton's standard library (the functions Triton writes in Triton: tl.sort, tl.topk, tl.flip, tl.ravel,
tl.softmax, tl.squeeze / unsqueeze, Philox's tl.randint / randint4x / rand / rand4x / randn / randn4x /
philox, tl.sum / cumsum / cumprod's accumulation types, tl.max / min / argmax / argmin with NaNs,
tl.div_rn, tl.fdiv, tl.to_tensor, tl.add / sub / mul) through whichever reader `import triton` gives,
each checked against numpy: sorts and top-k against a numpy model of the bitonic network (ties, NaNs
and -0.0 end up where Triton's network puts them), flips bit for bit, max / min leaving NaNs out and
widening f16 and 8/16-bit integers, the random bits against a numpy Philox 4x32-10 (and 4x64-10),
rand's floats bit for bit, randn within rounding. Where Triton is installed every kernel also runs
through dtsim's own .py reader (dtsim.JITFunction) and the two readers' outputs must be identical bit
for bit. Run with `python -m dtsim stdlib_forms.py` (both readers: DTSIM_STANDIN=1 for dtsim's own
alone)."""

import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import at, check, finish, report

# The library as Triton 3.9 writes it (tl.flip's default dim, tl.topk(descending=...), x.flip() and
# the other tensor methods): an older Triton's frontend refuses some of these kernels.
_version = triton.__version__.split("+")[0].split(".")
if not triton.__version__.endswith("+dtsim") and tuple(int(p) for p in _version[:2] if p.isdigit()) < (3, 9):
    print("skipped: these kernels are written for Triton 3.9's library; Triton %s is installed" % triton.__version__)
    sys.exit(77)

TTIR = hasattr(triton, "dtsim")  # the installed Triton's frontend reads `@triton.jit` kernels


def launch(name, kernel, grid, args, outs, **kw):
    """Runs kernel[grid](*args, **kw) and returns copies of the output arrays (positions `outs`); under
    Triton's frontend it also runs through dtsim's own reader and checks both readers' outputs are the
    same bits."""
    first = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel[grid](*first, **kw)
    if TTIR:
        second = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        dtsim.JITFunction(kernel.fn)[grid](*second, **kw)
        same = all(first[i].tobytes() == second[i].tobytes() for i in outs)
        report(name + ": readers agree", same, "" if same else "own reader: %s" % second[outs[0]].reshape(-1)[:6])
    return [first[i] for i in outs]


# ---- sorting ----

@triton.jit
def sort_k(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(o_ptr + offs, tl.sort(tl.load(x_ptr + offs), descending=DESC))


@triton.jit
def topk_k(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, K: tl.constexpr, DESC: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(o_ptr + tl.arange(0, R)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K, descending=DESC))


@triton.jit
def merge_k(x_ptr, o_ptr, C: tl.constexpr):
    offs = tl.arange(0, C)
    tl.store(o_ptr + offs, tl.bitonic_merge(tl.load(x_ptr + offs)))


@triton.jit
def sort_dim0_k(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(o_ptr + offs, tl.sort(tl.load(x_ptr + offs), dim=0))


def network(x, descending, k=None):
    """numpy model of Triton's bitonic sort / top-k along the last axis of a 2-D array: the same
    compare-and-swap steps (an element takes its mate where (x > mate) differs from the step's
    direction, so NaNs and -0.0 land as on Triton's network) and fmax / fmin halving for top-k."""
    n = int(np.log2(x.shape[1]))
    kk = n if k is None else int(np.log2(k))

    def exchange(h, j, desc):
        idx = np.arange(h.shape[1])
        mate = h[:, idx ^ (1 << j)]
        with np.errstate(invalid="ignore"):
            swap = (h > mate) != ((desc ^ ((idx >> j) & 1)) != 0)
        return np.where(swap, mate, h)

    def merge(h, stage, order):
        desc = (np.arange(h.shape[1]) >> stage) & 1 if order == 2 else int(order)
        for s in range(stage):
            h = exchange(h, stage - 1 - s, desc)
        return h

    h = x.copy()
    if kk == 0:
        return (np.fmax if descending else np.fmin).reduce(h, axis=1, keepdims=True)
    for i in range(1, kk + 1):
        h = merge(h, i, 2 if i < n else descending)
    for i in range(kk + 1, n + 1):
        idx = np.arange(h.shape[1] // 2)
        lo = (idx & ((1 << kk) - 1)) | ((idx >> kk) << (kk + 1))
        h = (np.fmax if descending else np.fmin)(h[:, lo], h[:, lo | (1 << kk)])
        h = merge(h, kk, 2 if i < n else descending)
    return h


def sorting(rng):
    ties = rng.integers(-3, 3, (4, 16)).astype(np.float32)
    special = ties.copy()
    special.flat[::5] = -0.0
    special.flat[2::7] = np.nan
    special.flat[3::9] = 0.0
    cases = [("f32 ties", ties), ("f32 NaN -0.0", special),
             ("uint32", rng.integers(0, 2**32, (4, 16), dtype=np.uint64).astype(np.uint32)),
             ("int16", rng.integers(-9, 9, (2, 32)).astype(np.int16)),
             ("f16", rng.standard_normal((2, 8)).astype(np.float16)),
             ("f32 1-wide", rng.standard_normal((4, 1)).astype(np.float32))]
    for name, x in cases:
        R, C = x.shape
        for desc in (False, True):
            (got,) = launch("sort %s desc=%s" % (name, desc), sort_k, (1,), [x, np.zeros_like(x)], [1], R=R, C=C, DESC=desc)
            check("sort %s desc=%s" % (name, desc), got.view(np.uint8), network(x, desc).astype(got.dtype).view(np.uint8))
            if "NaN" not in name:
                plain = np.sort(x, axis=1)
                check("sort %s desc=%s (numpy)" % (name, desc), got, plain[:, ::-1] if desc else plain, bits=True)

    for name, x in (cases[0], cases[1], cases[2], ("f16", rng.standard_normal((2, 16)).astype(np.float16))):
        R, C = x.shape
        for K in (1, 4, 8):
            for desc in (True, False):
                out_t = np.float32 if x.dtype == np.float16 else x.dtype  # tl.max widens f16 (Triton's top-k too)
                (got,) = launch("topk %s k=%d desc=%s" % (name, K, desc), topk_k, (1,), [x, np.zeros((R, K), out_t)], [1],
                                R=R, C=C, K=K, DESC=desc)
                want = network(x.astype(out_t), desc, K).astype(out_t)
                check("topk %s k=%d desc=%s" % (name, K, desc), got, want, bits="NaN" not in name)
                if "NaN" not in name:
                    plain = np.sort(x.astype(out_t), axis=1)
                    check("topk %s k=%d desc=%s (numpy)" % (name, K, desc), got, plain[:, ::-1][:, :K] if desc else plain[:, :K])
    bitonic = np.concatenate([np.sort(rng.standard_normal(8)), -np.sort(-rng.standard_normal(8))]).astype(np.float32)
    (got,) = launch("bitonic_merge", merge_k, (1,), [bitonic, np.zeros(16, np.float32)], [1], C=16)
    check("bitonic_merge of a bitonic run", got, np.sort(bitonic), bits=True)
    try:
        dtsim.JITFunction(sort_dim0_k.fn)[(1,)](ties, np.zeros_like(ties), R=4, C=16)
        report("tl.sort(dim=0) refused", False, "(no error)")
    except Exception as e:  # noqa: BLE001 - dtsim's CompileError
        msg = str(e)
        report("tl.sort(dim=0) refused", at(__file__, "tl.sort(tl.load(x_ptr + offs), dim=0)") in msg and "last dimension" in msg,
               msg.splitlines()[0])


@triton.jit
def _unsigned_max(a, b):
    return tl.where(a > b, a, b)  # compared as uint32 (a signed comparison would take 2^31 as the smallest)


@triton.jit
def keyed_k(x_ptr, s_ptr, m_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    keys = tl.sort(tl.load(x_ptr + offs), descending=True)  # uint32, some above 2^31
    tl.store(s_ptr + offs, tl.associative_scan(keys.flip(), 0, _unsigned_max))
    tl.store(m_ptr + tl.arange(0, 1), tl.reduce(keys, 0, _unsigned_max, keep_dims=True))


def unsigned_combine(rng):
    x = np.concatenate([rng.integers(0, 2**31, 16), rng.integers(2**31, 2**32, 16)]).astype(np.uint32)
    rng.shuffle(x)
    got_s, got_m = launch("scan / reduce of uint32", keyed_k, (1,), [x, np.zeros(32, np.uint32), np.zeros(1, np.uint32)], [1, 2], N=32)
    check("associative_scan of sorted uint32 (unsigned combine)", got_s, np.maximum.accumulate(np.sort(x)))
    check("tl.reduce of uint32 (unsigned combine)", got_m, [x.max()])


@triton.jit
def extremes_k(x_ptr, h_ptr, u_ptr, o_ptr, i_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    offs = rows[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + rows, tl.max(x, 1))
    tl.store(o_ptr + R + rows, x.min(1))
    tl.store(o_ptr + 2 * R + tl.arange(0, 1), tl.reshape(tl.max(x, keep_dims=True), (1,)))
    tl.store(o_ptr + 3 * R + rows, tl.max(tl.load(h_ptr + offs), 1) + 1e-4)  # f32: Triton's tl.max widens f16
    tl.store(i_ptr + rows, tl.max(tl.load(u_ptr + offs), 1) - 300)  # int32: uint8 widened
    y = tl.where(rows[:, None] == 2, 1.5, x)  # no row of NaNs only
    v, i = tl.max(y, 1, return_indices=True)
    tl.store(o_ptr + 4 * R + rows, v)
    tl.store(i_ptr + R + rows, i)
    tl.store(i_ptr + 2 * R + rows, tl.argmin(y, 1))
    tl.store(i_ptr + 3 * R + rows, y.argmax(1))


@triton.jit
def sums_k(i_ptr, h_ptr, o_ptr, u_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    i8 = tl.load(i_ptr + offs)
    h = tl.load(h_ptr + offs)
    u8 = i8.to(tl.uint8, bitcast=True)
    tl.store(o_ptr + tl.arange(0, 1), tl.reshape(tl.sum(i8, 0, keep_dims=True) * 1000, (1,)))  # int32: no int8 wrap
    tl.store(o_ptr + 1 + offs, i8.cumsum(0) * 1000)  # int32
    tl.store(o_ptr + 1 + N + offs, tl.cumsum(i8, 0, reverse=True, dtype=tl.int16).to(tl.int32))
    tl.store(u_ptr + offs, tl.cumprod(u8, 0) + tl.cumsum(i8 > 0, 0))  # uint32 (an unsigned scan), bools counted in uint32
    tl.store(h_ptr + N + tl.arange(0, 1), tl.reshape(tl.sum(h, 0, keep_dims=True), (1,)))  # f16 sum stays f16
    f = h.to(tl.float32)
    tl.store(h_ptr + N + 1 + offs, f.sigmoid() * f.exp() - f.exp().log().exp())  # tensor methods as Triton's


def sums(rng):
    N = 16
    i8 = rng.integers(-128, 128, N).astype(np.int8)
    i8[:4] = [120, 100, 90, -7]
    h = np.concatenate([rng.standard_normal(N).astype(np.float16), np.zeros(N + 1, np.float16)])
    o, u, hh = launch("sum / cumsum / cumprod types", sums_k, (1,), [i8, h, np.zeros(2 * N + 1, np.int32), np.zeros(N, np.uint32)],
                      [2, 3, 1], N=N)
    w = i8.astype(np.int64)
    check("tl.sum of int8 is int32", o[:1], [w.sum() * 1000])
    check("x.cumsum() of int8 is int32", o[1:N + 1], np.cumsum(w) * 1000)
    check("tl.cumsum(dtype=tl.int16, reverse=True)", o[N + 1:], np.cumsum(w[::-1])[::-1].astype(np.int16))
    prod = np.cumprod(i8.view(np.uint8).astype(np.uint64)) % 2**32
    check("tl.cumprod of uint8 (uint32) + tl.cumsum of bools", u, ((prod + np.cumsum(i8 > 0)) % 2**32).astype(np.uint32))
    check("tl.sum of f16 is f16", hh[N:N + 1], [h[:N].astype(np.float32).sum()], rtol=2e-3)
    f = h[:N].astype(np.float64)
    check("x.sigmoid(), x.exp(), x.log()", hh[N + 1:], np.exp(f) / (1 + np.exp(-f)) - np.exp(f), tol=2e-3)


def extremes(rng):
    x = rng.standard_normal((4, 16)).astype(np.float32)
    x[0, 3] = x[1, :8] = np.nan
    x[2, :] = np.nan
    x[3, :4] = [-0.0, 0.0, -0.0, 0.0]
    h = rng.standard_normal((4, 16)).astype(np.float16)
    u = rng.integers(0, 256, (4, 16)).astype(np.uint8)
    got, ints = launch("tl.max / tl.min", extremes_k, (1,), [x, h, u, np.zeros(20, np.float32), np.zeros(16, np.int32)], [3, 4], R=4, C=16)
    with np.errstate(invalid="ignore"):
        check("tl.max of f32 (NaN left out)", got[:4], np.fmax.reduce(x, axis=1))
        check("x.min(1) of f32 (NaN left out)", got[4:8], np.fmin.reduce(x, axis=1))
        check("tl.max of every axis", got[8:9], [np.nanmax(x)])
    check("tl.max of f16 is f32", got[12:16], h.max(axis=1).astype(np.float32) + np.float32(1e-4), bits=True)
    check("tl.max of uint8 is int32", ints[:4], u.max(axis=1).astype(np.int32) - 300)
    y = x.copy()
    y[2, :] = 1.5
    check("tl.max(return_indices=True) (NaN left out)", got[16:20], np.nanmax(y, axis=1))
    check("... its indices", ints[4:8], np.nanargmax(y, axis=1))
    check("tl.argmin, x.argmax (NaN left out)", ints[8:], np.concatenate([np.nanargmin(y, axis=1), np.nanargmax(y, axis=1)]))


# ---- flip, ravel, squeeze, softmax, division ----

@triton.jit
def flip_k(x_ptr, o_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, DIM: tl.constexpr):
    offs = tl.arange(0, A)[:, None, None] * B * C + tl.arange(0, B)[None, :, None] * C + tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + offs)
    if DIM is None:
        y = x.flip()
    else:
        y = tl.flip(x, DIM)
    tl.store(o_ptr + offs, y)


@triton.jit
def shapes_k(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    flat = tl.ravel(tl.trans(x))  # column-major order
    tl.store(o_ptr + tl.arange(0, R * C), flat)
    row = tl.squeeze(tl.unsqueeze(flat, 0), 0)
    tl.store(o_ptr + R * C + tl.arange(0, R * C), tl.unsqueeze(row, -1).ravel())


@triton.jit
def softmax_k(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, DIM: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.softmax(x, DIM))
    tl.store(o_ptr + R * C + offs, x.softmax(DIM, ieee_rounding=True))


@triton.jit
def divide_k(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.div_rn(x, y))
    tl.store(o_ptr + N + offs, tl.math.div_rn(x, 3.0))
    tl.store(o_ptr + 2 * N + offs, tl.fdiv(x, y))
    tl.store(o_ptr + 3 * N + offs, tl.fdiv(x, y, ieee_rounding=True))
    tl.store(o_ptr + 4 * N + offs, tl.sub(tl.mul(tl.add(x, 1.0), y, sanitize_overflow=False), tl.to_tensor(0.5)))


def shapes(rng):
    pat = np.array([0x80000000, 0x7FC00001, 0xFFC12345, 0x3F800000, 0x00000001, 0x7F800000, 0xFF800000, 0x00000000], np.uint32)
    x = np.concatenate([pat, rng.integers(0, 2**32, 56, dtype=np.uint64).astype(np.uint32)]).view(np.float32).reshape(2, 4, 8)
    for dim in (0, 1, 2, -1, None):
        (got,) = launch("flip dim=%s" % dim, flip_k, (1,), [x, np.zeros_like(x)], [1], A=2, B=4, C=8, DIM=dim)
        check("flip f32 bits dim=%s" % dim, got.view(np.uint32), np.flip(x, 2 if dim is None else dim).view(np.uint32))
    xi = rng.integers(0, 2**16, (2, 4, 8)).astype(np.uint16)
    (got,) = launch("flip uint16", flip_k, (1,), [xi, np.zeros_like(xi)], [1], A=2, B=4, C=8, DIM=1)
    check("flip uint16 dim=1", got, np.flip(xi, 1))

    m = rng.standard_normal((4, 8)).astype(np.float32)
    (got,) = launch("ravel squeeze unsqueeze", shapes_k, (1,), [m, np.zeros(64, np.float32)], [1], R=4, C=8)
    check("ravel of a transposed tile, squeeze(unsqueeze)", got, np.concatenate([m.T.reshape(-1)] * 2))

    s = (rng.standard_normal((4, 16)) * 4).astype(np.float32)
    for dim in (0, 1):
        (got,) = launch("softmax dim=%d" % dim, softmax_k, (1,), [s, np.zeros(128, np.float32)], [1], R=4, C=16, DIM=dim)
        e = np.exp(s.astype(np.float64) - s.max(axis=dim, keepdims=True))
        want = (e / e.sum(axis=dim, keepdims=True)).reshape(-1)
        check("softmax dim=%d" % dim, got, np.concatenate([want, want]), rtol=1e-5)

    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    b[:4] = [0.0, -0.0, 3.0, 1e-30]
    (got,) = launch("div_rn fdiv add sub mul to_tensor", divide_k, (1,), [a, b, np.zeros(320, np.float32)], [2], N=64)
    with np.errstate(divide="ignore"):
        q = a / b
        check("div_rn (IEEE f32)", got[:64], q, bits=True)
        check("math.div_rn(x, 3.0)", got[64:128], a / np.float32(3.0), bits=True)
        check("fdiv", got[128:192], q, bits=True)
        check("fdiv(ieee_rounding=True)", got[192:256], q, bits=True)
    check("tl.add / tl.mul / tl.sub / tl.to_tensor", got[256:], (a + np.float32(1)) * b - np.float32(0.5), bits=True)


@triton.jit
def misc_k(x_ptr, o_ptr, i_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, x + tl.load(x_ptr + tl.arange(0, 1)).item())
    tl.store(o_ptr + N + offs, tl.where((x > 0).logical_and(x < 1).logical_or(x < -1), 1.0, 0.0))
    col, row = tl.broadcast(tl.arange(0, 4)[None, :], tl.arange(0, 4)[:, None])
    a, b = tl.swizzle2d(row, col, 4, 4, 3)  # tiles of indices (the last group of rows is shorter)
    tl.store(i_ptr + tl.ravel(row * 4 + col), tl.ravel(a * 4 + b))


def misc(rng):
    N = 16
    x = (rng.standard_normal(N) * 2).astype(np.float32)
    o, idx = launch("item, logical_and, broadcast, swizzle2d of tiles", misc_k, (1,), [x, np.zeros(2 * N, np.float32), np.zeros(16, np.int32)],
                    [1, 2], N=N)
    check("x.item()", o[:N], x + x[0], bits=True)
    check("x.logical_and(y).logical_or(z)", o[N:], (((x > 0) & (x < 1)) | (x < -1)).astype(np.float32))
    want = []
    for i in range(4):
        for j in range(4):
            ij = i * 4 + j
            first = ij // 12 * 3
            rows = min(4 - first, 3)
            want.append((first + ij % 12 % rows) * 4 + ij % 12 // rows)
    check("tl.swizzle2d of tiles, tl.broadcast", idx, want)


# ---- Philox ----

@triton.jit
def random_k(o_ptr, f_ptr, seed, base, N: tl.constexpr):
    offs = base + tl.arange(0, N)
    i = tl.arange(0, N)
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(o_ptr + i, r0)
    tl.store(o_ptr + N + i, r1)
    tl.store(o_ptr + 2 * N + i, r2)
    tl.store(o_ptr + 3 * N + i, r3)
    tl.store(o_ptr + 4 * N + i, tl.randint(seed, offs))
    tl.store(f_ptr + i, tl.rand(seed, offs))
    u0, u1, u2, u3 = tl.rand4x(seed, offs)
    tl.store(f_ptr + N + i, u3)
    tl.store(f_ptr + 2 * N + i, tl.randn(seed, offs))
    n0, n1, n2, n3 = tl.randn4x(seed, offs)
    tl.store(f_ptr + 3 * N + i, n1)
    tl.store(f_ptr + 4 * N + i, n3)


@triton.jit
def random_const_k(o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.randint(1234, i))
    tl.store(o_ptr + N + i, tl.randint(7, i.to(tl.int64) + 4294967299))  # counters beyond 32 bits: the high word


@triton.jit
def philox64_k(c_ptr, o_ptr, seed, N: tl.constexpr):
    i = tl.arange(0, N)
    c = tl.load(c_ptr + i)
    a, b, x, y = tl.philox(seed, c, c + 1, c * 3, c ^ 5)
    tl.store(o_ptr + i, a)
    tl.store(o_ptr + N + i, b)
    tl.store(o_ptr + 2 * N + i, x)
    tl.store(o_ptr + 3 * N + i, y)


M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def philox_words(seed, c, bits=32, rounds=10):
    """Philox 4xW-10 on Python ints (W = 32 or 64): counters c = (c0, c1, c2, c3), key from the seed."""
    if bits == 32:
        mask, mul, weyl = M32, (0xD2511F53, 0xCD9E8D57), (0x9E3779B9, 0xBB67AE85)
        k = [seed & M32, (seed >> 32) & M32]
    else:
        mask, mul, weyl = M64, (0xD2E7470EE14C6C93, 0xCA5A826395121157), (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
        k = [seed & M64, 0]
    c0, c1, c2, c3 = c
    for _ in range(rounds):
        p0, p1 = mul[0] * c0, mul[1] * c2
        c0, c1, c2, c3 = ((p1 >> bits) ^ c1 ^ k[0]) & mask, p1 & mask, ((p0 >> bits) ^ c3 ^ k[1]) & mask, p0 & mask
        k = [(k[0] + weyl[0]) & mask, (k[1] + weyl[1]) & mask]
    return c0, c1, c2, c3


def randint4x_ref(seed, offs, wide=False):
    """randint4x's four words for each offset (wide: int64 offsets, whose high word is the second counter)."""
    words = [philox_words(seed & M64, (int(o) & M32, (int(o) >> 32) & M32 if wide else 0, 0, 0)) for o in offs]
    return np.array(words, np.uint64).T.astype(np.uint32)


def uniform(bits):
    v = bits.view(np.int32)
    return np.where(v < 0, ~v, v).astype(np.float32) * np.float32(4.6566127342e-10)


def normal(u1, u2):
    u1 = np.maximum(np.float32(1e-7), u1).astype(np.float64)
    r = np.sqrt(-2.0 * np.log(u1))
    th = 6.283185307179586 * u2.astype(np.float64)
    return r * np.cos(th), r * np.sin(th)


def philox(rng):
    N = 32
    for seed, base in ((0, 0), (42, 1000), (-7, 5), (2**40 + 5, 2**31 - 8), (2**31 + 3, 77)):
        got_i, got_f = launch("random seed=%d base=%d" % (seed, base), random_k, (1,),
                              [np.zeros(5 * N, np.uint32), np.zeros(5 * N, np.float32), seed, base], [0, 1], N=N)
        offs = base + np.arange(N, dtype=np.int64)
        offs = offs.astype(np.int32)  # int32 offsets (base is an int32 argument): past 2^31 they wrap
        want = randint4x_ref(seed, offs)
        check("randint4x seed=%d base=%d" % (seed, base), got_i[:4 * N].reshape(4, N), want)
        check("randint seed=%d" % seed, got_i[4 * N:], want[0])
        check("rand seed=%d (bits)" % seed, got_f[:N], uniform(want[0]), bits=True)
        check("rand4x seed=%d (bits)" % seed, got_f[N:2 * N], uniform(want[3]), bits=True)
        n0, _ = normal(uniform(want[0]), uniform(want[1]))
        _, n1 = normal(uniform(want[0]), uniform(want[1]))
        _, n3 = normal(uniform(want[2]), uniform(want[3]))
        check("randn seed=%d" % seed, got_f[2 * N:3 * N], n0, tol=1e-5)
        check("randn4x seed=%d" % seed, got_f[3 * N:], np.concatenate([n1, n3]), tol=1e-5)
    (got,) = launch("randint literal seed, int64 offsets", random_const_k, (1,), [np.zeros(2 * N, np.uint32)], [0], N=N)
    check("randint(1234, i)", got[:N], randint4x_ref(1234, np.arange(N))[0])
    check("randint(7, int64 offsets)", got[N:], randint4x_ref(7, np.arange(N, dtype=np.int64) + 4294967299, wide=True)[0])

    c = rng.integers(-2**62, 2**62, 8, dtype=np.int64)
    (got,) = launch("philox 4x64", philox64_k, (1,), [c, np.zeros(32, np.uint64), 99], [1], N=8)
    cs = [int(v) for v in c]
    want = [philox_words(99, (v & M64, (v + 1) & M64, (v * 3) & M64, (v ^ 5) & M64), bits=64) for v in cs]
    check("philox with 64-bit counters", got.reshape(4, 8), np.array(want, np.uint64).T)


def main():
    rng = np.random.default_rng(22)
    sorting(rng)
    unsigned_combine(rng)
    extremes(rng)
    sums(rng)
    misc(rng)
    shapes(rng)
    philox(rng)
    finish("stdlib_forms: all ok (%s)" % ("Triton's frontend and dtsim's own reader agree" if TTIR else "dtsim's own reader"))


if __name__ == "__main__":
    main()
