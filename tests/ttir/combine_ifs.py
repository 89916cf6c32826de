"""Combine functions of tl.reduce / tl.associative_scan with if/else on their runtime arguments, the
branches assigning variables (each lane takes the values of the branch its condition picks), checked
against numpy: the larger magnitude along either axis, a sum of the positive parts through nested
ifs, an if without else, an argmax of (value, index) pairs preferring the lower index on ties (an
elif), a forward fill by associative_scan (both directions) and a three-operand scan. Run by
Triton's frontend (TTIR) and, with DTSIM_STANDIN=1, by dtsim's own .py reader."""

import numpy as np
import triton
import triton.language as tl
from combine_fns import first_max, forward_fill, positive_parts
from ttir_check import check, finish


@triton.jit
def larger_magnitude(a, b):
    r = tl.abs(b)
    if tl.abs(a) > tl.abs(b):
        r = tl.abs(a)
    return r


@triton.jit
def last_set(a, b):  # b unless it is 0
    out = a
    if b != 0:
        out = b
    return out


@triton.jit
def widest(a0, a1, a2, b0, b1, b2):  # the (lo, hi) pair of the widest interval and its tag
    if b1 - b0 > a1 - a0:
        r0, r1, r2 = b0, b1, b2
    else:
        if b1 - b0 == a1 - a0:
            r0, r1, r2 = tl.minimum(a0, b0), tl.minimum(a1, b1), tl.minimum(a2, b2)
        else:
            r0, r1, r2 = a0, a1, a2
    return r0, r1, r2


@triton.jit
def reduces(x_ptr, i_ptr, mag0_ptr, mag1_ptr, pos_ptr, amv_ptr, ami_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(mag0_ptr + tl.arange(0, N), tl.reduce(x, 0, larger_magnitude))
    tl.store(mag1_ptr + tl.arange(0, M), tl.reduce(x, 1, larger_magnitude))
    iv = tl.load(i_ptr + rows * N + cols)
    tl.store(pos_ptr + tl.arange(0, M), tl.reduce(iv, 1, positive_parts))
    v, i = tl.reduce((x, tl.broadcast_to(cols, (M, N))), 1, first_max)
    tl.store(amv_ptr + tl.arange(0, M), v)
    tl.store(ami_ptr + tl.arange(0, M), i)


@triton.jit
def scans(i_ptr, fwd_ptr, rev_ptr, lo_ptr, hi_ptr, tag_ptr, t_lo_ptr, t_hi_ptr, t_tag_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    iv = tl.load(i_ptr + o)
    tl.store(fwd_ptr + o, tl.associative_scan(iv, 0, last_set))
    tl.store(rev_ptr + o, tl.associative_scan(iv, 0, last_set, reverse=True))
    a, b, c = tl.associative_scan((tl.load(lo_ptr + o), tl.load(hi_ptr + o), tl.load(tag_ptr + o)), 0, widest)
    tl.store(t_lo_ptr + o, a)
    tl.store(t_hi_ptr + o, b)
    tl.store(t_tag_ptr + o, c)


M, N = 8, 32
rng = np.random.default_rng(11)
x = (rng.standard_normal((M, N)) * 4).astype(np.float32)
x[0, :] = np.round(x[0, :])  # ties in row 0
x[1, 3], x[1, 9] = 50.0, -50.0
iv = rng.integers(-20, 20, (M, N)).astype(np.int32)
iv[2, :] = -1  # no positive part: the combine's 0
mag0, mag1 = np.zeros(N, np.float32), np.zeros(M, np.float32)
pos, amv, ami = np.zeros(M, np.int32), np.zeros(M, np.float32), np.zeros(M, np.int32)
reduces[(1,)](x, iv, mag0, mag1, pos, amv, ami, M=M, N=N)
check("largest magnitude along 0", mag0, np.abs(x).max(0))
check("largest magnitude along 1", mag1, np.abs(x).max(1))
check("positive parts (nested ifs)", pos, np.maximum(iv, 0).sum(1).astype(np.int32))
check("argmax value", amv, x.max(1))
check("argmax index, the first on ties", ami, x.argmax(1).astype(np.int32))

K = 64
s = np.where(rng.random(K) < 0.6, 0, rng.integers(1, 100, K)).astype(np.int32)
s[0] = 0
lo = rng.integers(0, 50, K).astype(np.int32)
hi = (lo + rng.integers(0, 10, K)).astype(np.int32)
tag = rng.integers(0, 1000, K).astype(np.int32)
fwd, rev, t_lo, t_hi, t_tag = (np.zeros(K, np.int32) for _ in range(5))
scans[(1,)](s, fwd, rev, lo, hi, tag, t_lo, t_hi, t_tag, N=K)



check("forward fill", fwd, forward_fill(s))
check("forward fill, reverse", rev, forward_fill(s[::-1])[::-1])
want = [[], [], []]
cur = None
for e in zip(lo, hi, tag):
    if cur is None or e[1] - e[0] > cur[1] - cur[0]:
        cur = e
    elif e[1] - e[0] == cur[1] - cur[0]:
        cur = tuple(min(p, q) for p, q in zip(cur, e))
    for j in range(3):
        want[j].append(cur[j])
check("widest interval, lo", t_lo, np.array(want[0], np.int32))
check("widest interval, hi", t_hi, np.array(want[1], np.int32))
check("widest interval, tag", t_tag, np.array(want[2], np.int32))
finish("combine functions with if/else: magnitudes, nested ifs, an if without else, argmax pairs, forward fills and a "
      "three-operand scan match numpy")
