"""Inline PTX `fns.b32 d, mask, base, offset` (find the n-th set bit; adasplash v2's block iterator):
the |offset|-th set bit of `mask` counted from bit `base` (itself included), toward bit 31 for a
positive offset and toward bit 0 for a negative one; offset 0 asks whether bit `base` is set; -1
(0xffffffff) where there is none. Checked against a model of the PTX ISA's definition on the ISA's
own examples and on random masks, every base and offsets from -34 to 34. Run with `python -m dtsim
inline_ptx_fns.py` (both readers)."""
import numpy as np
import triton
import triton.language as tl

import dtsim  # noqa: F401
from ttir_check import check, finish


@triton.jit
def fns(m_ptr, b_ptr, o_ptr, d_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    m = tl.load(m_ptr + i)
    b = tl.load(b_ptr + i)
    o = tl.load(o_ptr + i)
    d = tl.inline_asm_elementwise("fns.b32 $0, $1, $2, $3;", "=r,r,r,r", [m, b, o], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(d_ptr + i, d)


def model(mask, base, offset):
    mask &= 0xFFFFFFFF
    if offset == 0:
        return base if (mask >> base) & 1 else -1
    step = 1 if offset > 0 else -1
    left = abs(offset)
    pos = base
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            left -= 1
            if left == 0:
                return pos
        pos += step
    return -1


rng = np.random.default_rng(11)
cases = [(0xAAAAAAAA, 3, 1), (0xAAAAAAAA, 3, -1), (0xAAAAAAAA, 2, 1), (0xAAAAAAAA, 2, -1)]  # the ISA's examples
want_isa = [3, 3, 3, 1]
for _ in range(2044):
    bits = rng.integers(0, 33)
    mask = 0
    for p in rng.choice(32, size=bits, replace=False):
        mask |= 1 << int(p)
    cases.append((mask, int(rng.integers(0, 32)), int(rng.integers(-34, 35))))
N = len(cases)
m = np.array([c[0] for c in cases], np.uint32).view(np.int32)
b = np.array([c[1] for c in cases], np.int32)
o = np.array([c[2] for c in cases], np.int32)
d = np.zeros(N, np.int32)
fns[(1,)](m, b, o, d, N=N)
check("the ISA's examples", d[:4], np.array(want_isa, np.int32))
check("random masks, every base, offsets -34..34", d, np.array([model(*c) for c in cases], np.int32))
finish("inline_ptx_fns: %d lanes match the ISA's definition" % N)
