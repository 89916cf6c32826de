"""Combine functions of tl.reduce / tl.associative_scan that return inside an if on their runtime
arguments (each lane takes the value of the first return on its path), checked against numpy: an
early return before the function's last one (a max), returns in both branches of a nested if (the
larger magnitude, the larger value on ties), an argmax of (value, index) pairs returning tuples from
two early returns, and a forward fill whose return sits in an inner if without else, with a
variable assigned before it read after it (both scan directions); and the larger magnitude with a
return in each branch and nothing after the if (combine_fns.py). Run by Triton's frontend (TTIR)
and, with DTSIM_STANDIN=1, by dtsim's own .py reader."""
import numpy as np
import triton
import triton.language as tl
from combine_fns import forward_fill, larger_magnitude_returns
from ttir_check import check, finish


@triton.jit
def early_max(a, b):
    if a > b:
        return a
    return b


@triton.jit
def magnitude_then_value(a, b):  # the larger |x|; on equal magnitudes the larger x
    ma = tl.abs(a)
    mb = tl.abs(b)
    if ma != mb:
        if ma > mb:
            return a
        else:
            return b
    return tl.maximum(a, b)


@triton.jit
def first_max_early(av, ai, bv, bi):  # the larger value; the lower index on ties
    if av > bv:
        return av, ai
    if bv > av:
        return bv, bi
    return av, tl.minimum(ai, bi)


@triton.jit
def fill_early(a, b):  # b unless it is 0 (then a)
    out = b
    if b == 0:
        out = a
        if a == 0:
            return a
    return out


@triton.jit
def reduces(x_ptr, m_ptr, mag_ptr, amv_ptr, ami_ptr, both_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(m_ptr + tl.arange(0, N), tl.reduce(x, 0, early_max))
    tl.store(mag_ptr + tl.arange(0, M), tl.reduce(x, 1, magnitude_then_value))
    tl.store(both_ptr + tl.arange(0, M), tl.reduce(x, 1, larger_magnitude_returns))
    v, i = tl.reduce((x, tl.broadcast_to(cols, (M, N))), 1, first_max_early)
    tl.store(amv_ptr + tl.arange(0, M), v)
    tl.store(ami_ptr + tl.arange(0, M), i)


@triton.jit
def scans(s_ptr, fwd_ptr, rev_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    s = tl.load(s_ptr + o)
    tl.store(fwd_ptr + o, tl.associative_scan(s, 0, fill_early))
    tl.store(rev_ptr + o, tl.associative_scan(s, 0, fill_early, reverse=True))


M, N = 8, 32
rng = np.random.default_rng(5)
x = np.round(rng.standard_normal((M, N)) * 4).astype(np.float32)  # integers: ties of value and magnitude
x[2, 5], x[2, 17] = -9.0, 9.0  # equal magnitudes, the positive one wins
x[3, :] = -1.0  # one value throughout: the first index
m, mag, amv, ami = np.zeros(N, np.float32), np.zeros(M, np.float32), np.zeros(M, np.float32), np.zeros(M, np.int32)
both = np.zeros(M, np.float32)
reduces[(1,)](x, m, mag, amv, ami, both, M=M, N=N)
check("early return: max along 0", m, x.max(0))
key = np.abs(x) * 4 + (x > 0)  # |x| first, then x (integers: no tie between keys of different x)
check("nested returns: magnitude, then value", mag, x[np.arange(M), key.argmax(1)])
check("a return in each branch: the larger magnitude", both, np.abs(x).max(1))
check("tuple returns: argmax value", amv, x.max(1))
check("tuple returns: argmax index, the first on ties", ami, x.argmax(1).astype(np.int32))

K = 64
s = np.where(rng.random(K) < 0.6, 0, rng.integers(1, 100, K)).astype(np.int32)
s[0] = 0
fwd, rev = np.zeros(K, np.int32), np.zeros(K, np.int32)
scans[(1,)](s, fwd, rev, N=K)



check("return in an inner if: forward fill", fwd, forward_fill(s))
check("return in an inner if: forward fill, reverse", rev, forward_fill(s[::-1])[::-1])
finish("combine functions returning inside ifs: an early return, nested returns, tuple returns and a fill match numpy")
