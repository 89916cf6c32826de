"""tl.map_elementwise: a scalar @triton.jit function applied lane by lane. Triton's TTIR gives its body
as blocks joined by branches (cf.cond_br / cf.br with block arguments); dtsim runs the body's ops on
whole tiles and turns the branches into selects. Checked against numpy: two results from an if/else,
early returns with a constant result, nested conditions on integers, an integer division that only
its branch's lanes run (`if b != 0: return a // b`: no division by zero), a function of three
operands; a loop in the mapped function is a located error."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim


@triton.jit
def gap_and_max(a, b):
    if a > b:
        return a - b, a
    return b - a, b


@triton.jit
def soft_clip(x):
    if x > 1.0:
        return 1.0
    if x < -1.0:
        return -1.0
    return x * (1.5 - 0.5 * x * x)


@triton.jit
def step(n):
    if n % 2 == 0:
        if n % 4 == 0:
            return n // 4
        return n // 2
    return 3 * n + 1


@triton.jit
def safe_div(a, b):
    if b != 0:
        return a // b
    return -1


@triton.jit
def pick(c, a, b):
    if c > 0:
        return a
    return b


@triton.jit
def floats(x, y, gap, mx, clip, sel, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x + r)
    b = tl.load(y + r)
    g, m = tl.map_elementwise(gap_and_max, a, b)
    tl.store(gap + r, g)
    tl.store(mx + r, m)
    tl.store(clip + r, tl.map_elementwise(soft_clip, a))
    tl.store(sel + r, tl.map_elementwise(pick, r % 3 - 1, a, b))


@triton.jit
def ints(x, out, quot, N: tl.constexpr):
    r = tl.arange(0, N)
    n = tl.load(x + r)
    tl.store(out + r, tl.map_elementwise(step, n))
    tl.store(quot + r, tl.map_elementwise(safe_div, n, r % 3))


@triton.jit
def halve_until_odd(n):
    while n % 2 == 0:
        n = n // 2
    return n


@triton.jit
def looped(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out + r, tl.map_elementwise(halve_until_odd, tl.load(x + r)))


N = 64
rng = np.random.default_rng(7)
x = (rng.standard_normal(N) * 1.5).astype(np.float32)
y = (rng.standard_normal(N) * 1.5).astype(np.float32)
gap, mx, clip, sel = (np.zeros(N, np.float32) for _ in range(4))
floats[(1,)](x, y, gap, mx, clip, sel, N=N)
failures = []
if not np.array_equal(gap, np.abs(x - y)) or not np.array_equal(mx, np.maximum(x, y)):
    failures.append("two results of an if/else")
want_clip = np.where(x > 1, 1.0, np.where(x < -1, -1.0, x * (1.5 - 0.5 * x * x))).astype(np.float32)
if not np.allclose(clip, want_clip, rtol=1e-6, atol=1e-7):
    failures.append("early returns: %s" % (clip - want_clip))
r = np.arange(N)
if not np.array_equal(sel, np.where(r % 3 - 1 > 0, x, y)):
    failures.append("three operands")

n = rng.integers(1, 1000, N).astype(np.int32)
out, quot = np.zeros(N, np.int32), np.zeros(N, np.int32)
ints[(1,)](n, out, quot, N=N)
want = np.where(n % 2 == 0, np.where(n % 4 == 0, n // 4, n // 2), 3 * n + 1)
if not np.array_equal(out, want):
    failures.append("nested conditions on integers")
d = r % 3
if not np.array_equal(quot, np.where(d != 0, n // np.maximum(d, 1), -1)):
    failures.append("a division guarded by its branch: %s" % quot)

try:
    looped[(1,)](n, out, N=N)
    failures.append("a loop in the mapped function ran")
except dtsim.CompileError as e:
    if "map_elementwise.py:" not in str(e) or "a loop in the mapped function is not supported yet" not in str(e):
        failures.append("unexpected error for the loop: %s" % e)

if failures:
    sys.exit("\n".join(failures))
print("map_elementwise: if/else with two results, early returns, nested integer conditions, a guarded division and three operands "
      "match numpy; a loop is a located error")
