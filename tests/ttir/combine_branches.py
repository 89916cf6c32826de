"""Combine functions with if/else (an scf.if that yields per branch inside tt.reduce's or tt.scan's
combine region; each yielded value is a select), checked against numpy: the largest magnitude
(returns in both branches) along either axis and an argmax of f64 values with i64 indices that
prefers the lower index on ties (a pair that does not pack into one i64). A combine function with a
loop is a located error that says so. Nested ifs, the packed f32 / i32 argmax and the scans are
tests/ttir/combine_ifs.py's, which both .py readers run."""
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl
from combine_fns import first_max, larger_magnitude_returns
from ttir_check import check, finish

import dtsim


@triton.jit
def looped(a, b):
    r = a
    for _ in range(b.to(tl.int32) % 3):
        r = r + b
    return r


@triton.jit
def reduces(x_ptr, f_ptr, l_ptr, mag0_ptr, mag1_ptr, lv_ptr, li_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(mag0_ptr + tl.arange(0, N), tl.reduce(x, 0, larger_magnitude_returns))
    tl.store(mag1_ptr + tl.arange(0, M), tl.reduce(x, 1, larger_magnitude_returns))
    f = tl.load(f_ptr + rows * N + cols)
    lidx = tl.load(l_ptr + rows * N + cols)
    v2, i2 = tl.reduce((f, lidx), 1, first_max)  # f64 and i64: the general tuple path
    tl.store(lv_ptr + tl.arange(0, M), v2)
    tl.store(li_ptr + tl.arange(0, M), i2)


@triton.jit
def loop_combine(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr, tl.reduce(tl.load(x_ptr + o), 0, looped))


if len(sys.argv) > 1 and sys.argv[1] == "loop":
    loop_combine[(1,)](np.ones(8, np.float32), np.zeros(1, np.float32), N=8)
    sys.exit("no error for a combine function with a loop")


M, N = 8, 32
rng = np.random.default_rng(5)
x = (rng.standard_normal((M, N)) * 4).astype(np.float32)
x[0, :] = np.round(x[0, :])  # ties in row 0
x[1, 3], x[1, 9] = 50.0, -50.0
f = np.round(rng.standard_normal((M, N)) * 3).astype(np.float64)
lidx = np.broadcast_to((np.arange(N) * 3 + 2**40).astype(np.int64), (M, N)).copy()
mag0, mag1, lv, li = np.zeros(N, np.float32), np.zeros(M, np.float32), np.zeros(M), np.zeros(M, np.int64)
reduces[(1,)](x, f, lidx, mag0, mag1, lv, li, M=M, N=N)
check("largest magnitude along 0", mag0, np.abs(x).max(0))
check("largest magnitude along 1", mag1, np.abs(x).max(1))
check("argmax value (f64, i64)", lv, f.max(1))
check("argmax index (f64, i64)", li, lidx[np.arange(M), f.argmax(1)])

r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, "loop"], capture_output=True, text=True)
if r.returncode == 0 or "a combine function with a loop is not supported yet" not in r.stderr or "combine_branches.py:" not in r.stderr:
    sys.exit("a combine function with a loop: rc %d, stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
finish("combine functions with if/else: largest magnitude on both axes (returns in branches), an f64 / i64 argmax "
      "match numpy; a combine function with a loop is a located error")
