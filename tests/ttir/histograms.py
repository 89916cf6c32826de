"""tl.histogram as the IR's own histogram: 4096 lanes into 512 bins (a [4096, 512] comparison tile,
past 2^20 elements, when it was a masked sum over one more axis), with and without a mask (a tile
and a scalar), values outside [0, bins) on both sides, inputs of every integer width, the method
form, and an input with undefined lanes (a masked load without `other`): counted where the mask is
off it is a located finding, under the load's mask it is clean. Each histogram is checked against
numpy's bincount of the values in [0, bins). Triton 3.9's frontend takes 32-bit inputs only (its
ValueError is checked there); Triton 3.8's and dtsim's own reader (DTSIM_STANDIN=1) take i8, i16
and i64 too, and dtsim's own reader knows u8 from i8 (TTIR has one signless i8). Run with
`python -m dtsim histograms.py`."""

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import at, check, finish, report

STANDIN = triton.__version__.endswith("+dtsim")
VERSION = tuple(int(v) for v in triton.__version__.split("+")[0].split(".")[:2])


@triton.jit
def hist(x_ptr, m_ptr, h_ptr, hm_ptr, N: tl.constexpr, B: tl.constexpr):
    n = tl.arange(0, N)
    x = tl.load(x_ptr + n)
    b = tl.arange(0, B)
    tl.store(h_ptr + b, tl.histogram(x, B))
    tl.store(hm_ptr + b, tl.histogram(x, B, mask=tl.load(m_ptr + n) != 0))


@triton.jit
def method(x_ptr, h_ptr, flag, N: tl.constexpr, B: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(h_ptr + tl.arange(0, B), x.histogram(B, mask=flag > 0))


@triton.jit
def tail(x_ptr, h_ptr, n, N: tl.constexpr, B: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MASKED:
        h = tl.histogram(x, B, mask=offs < n)
    else:
        h = tl.histogram(x, B)  # counts the undefined lanes
    tl.store(h_ptr + tl.arange(0, B), h)


def want(x, bins, keep=None):
    v = x.astype(np.int64)
    sel = (v >= 0) & (v < bins)
    if keep is not None:
        sel &= keep
    return np.bincount(v[sel], minlength=bins).astype(np.int32)


def run(name, x, bins, rng):
    n = x.size
    m = (rng.random(n) < 0.6).astype(np.int32)
    h = np.zeros(bins, np.int32)
    hm = np.zeros(bins, np.int32)
    hist[(1,)](x, m, h, hm, N=n, B=bins)
    check(name, h, want(x, bins))
    check(name + " masked", hm, want(x, bins, m != 0))


def main():
    rng = np.random.default_rng(22)
    N = 4096
    # 4096 lanes into 512 bins, 1/8 of them outside [0, 512) on either side
    x = rng.integers(-64, 512 + 64, N).astype(np.int32)
    run("i32: 4096 lanes into 512 bins", x, 512, rng)
    u = rng.integers(0, 600, N).astype(np.uint32)
    u[::7] = [0x80000000 + i for i in range(len(u[::7]))]  # past 2^31: dropped, not negative bins
    u[3] = 0xFFFFFFFF
    run("u32 (values past 2^31)", u, 512, rng)

    h = np.zeros(64, np.int32)
    for flag in (1, 0):
        method[(1,)](x[:256], h, flag, N=256, B=64)
        check("x.histogram(B, mask=scalar %d)" % flag, h, want(x[:256], 64) * flag)

    narrow = [("i8", rng.integers(-128, 128, N).astype(np.int8), 64),
              ("u8", rng.integers(0, 256, N).astype(np.uint8), 64),
              ("i16", rng.integers(-3000, 3000, N).astype(np.int16), 2048),
              ("i64", rng.integers(-600, 600, N).astype(np.int64) + np.where(rng.random(N) < 0.2, 1 << 32, 0), 512)]
    if STANDIN:  # u8 values of 128 and more are bins 128 ... 255 (zero-extended)
        narrow.append(("u8 into 256 bins", rng.integers(0, 256, N).astype(np.uint8), 256))
    for name, v, bins in narrow:
        if STANDIN or VERSION < (3, 9):
            run(name, v, bins, rng)
            continue
        try:  # Triton 3.9's frontend: "histogram only supports 32-bit integer input"
            run(name, v, bins, rng)
            report(name + " refused by Triton 3.9", False, "(ran)")
        except Exception as e:  # noqa: BLE001 - raised by Triton's frontend through dtsim
            report(name + " refused by Triton 3.9", "32-bit integer input" in str(e), str(e).splitlines()[0][:80])

    # undefined lanes: a finding where they are counted, none under the load's mask
    if dtsim.config()["backend"] != "cuda":
        dtsim.config(undefined_lanes=True)
        xt = rng.integers(0, 32, 128).astype(np.int32)
        ht = np.zeros(32, np.int32)
        tail[(1,)](xt, ht, 100, N=128, B=32, MASKED=True)
        check("undefined lanes masked off: clean", ht, want(xt[:100], 32))
        try:
            tail[(1,)](xt, ht, 100, N=128, B=32, MASKED=False)
            report("undefined lanes counted", False, "(no finding)")
        except dtsim.KernelError as e:
            msg = str(e)
            report("undefined lanes counted", e.kind == "uninitialized-read" and at(__file__, "h = tl.histogram(x, B)  #") in msg and
                   "counted by this histogram" in msg, msg.splitlines()[0])
        dtsim.config(undefined_lanes=None)
    finish("histograms: all ok (%s)" % ("dtsim's .py reader" if STANDIN else "Triton %s's TTIR" % triton.__version__))


if __name__ == "__main__":
    main()
