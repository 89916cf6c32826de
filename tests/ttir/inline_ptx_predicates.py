"""Inline PTX whose registers are written under predicates (`@p` / `@!p`), checked against numpy: an
output written first under p and then under !p (every lane writes it under one of the two), a chain
of instructions under !p that reads what the chain wrote under !p before the @p write completes the
register, a declared register filled under complementary predicates and read unguarded, a guarded
write that keeps the old value where its predicate is false, and two results each filled under its own
predicate pair. Registers a lane may read unwritten are located errors: an output written only under
p, a read under a predicate other than the one it was written under, and writes under p and !p of two
different values of p (a setp between them)."""
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim


@triton.jit
def softplus(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    # ln(1 + e^x) in base 2 where x <= 20, x itself above: @p first, then a chain under @!p that
    # reads its own result
    y = tl.inline_asm_elementwise("""
    {
        .reg .pred big;
        setp.gt.f32 big, $1, 20.0;
        @big mov.f32 $0, $1;
        @!big mul.f32 $0, $1, 0f3FB8AA3B;   // x * log2(e)
        @!big ex2.approx.f32 $0, $0;
        @!big add.f32 $0, $0, 1.0;
        @!big lg2.approx.f32 $0, $0;
        @!big mul.f32 $0, $0, 0f3F317218;   // * ln(2)
    }
    """, "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + o, y)
    # the same with the chain under @!p first and @p last
    z = tl.inline_asm_elementwise("""
    {
        .reg .pred big;
        setp.gt.f32 big, $1, 20.0;
        @!big mul.f32 $0, $1, 0f3FB8AA3B;
        @!big ex2.approx.f32 $0, $0;
        @!big add.f32 $0, $0, 1.0;
        @!big lg2.approx.f32 $0, $0;
        @!big mul.f32 $0, $0, 0f3F317218;
        @big mov.f32 $0, $1;
    }
    """, "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(z_ptr + o, z)


@triton.jit
def ints(a_ptr, b_ptr, abs_ptr, lo_ptr, hi_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    # |a| + 3 through a declared register set under complementary predicates, then read unguarded;
    # then a guarded write that keeps the old value: +100 where a is a multiple of 4
    r = tl.inline_asm_elementwise("""
    {
        .reg .b32 t;
        .reg .pred neg, four;
        setp.lt.s32 neg, $1, 0;
        @neg sub.s32 t, 0, $1;
        @!neg mov.b32 t, $1;
        add.s32 $0, t, 3;
        and.b32 t, $1, 3;
        setp.eq.s32 four, t, 0;
        @four add.s32 $0, $0, 100;
    }
    """, "=r,r", [a], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(abs_ptr + o, r)
    # min and max of a and b as two results, each filled under its own predicate pair
    lo, hi = tl.inline_asm_elementwise("""
    {
        .reg .pred p, q;
        setp.lt.s32 p, $2, $3;
        setp.ge.s32 q, $2, $3;
        @p mov.b32 $0, $2;
        @q mov.b32 $1, $2;
        @!q mov.b32 $1, $3;
        @!p mov.b32 $0, $3;
    }
    """, "=r,=r,r,r", [a, b], dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(lo_ptr + o, lo)
    tl.store(hi_ptr + o, hi)


@triton.jit
def half_written(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    y = tl.inline_asm_elementwise("{ .reg .pred p; setp.gt.f32 p, $1, 0.0; @p mov.f32 $0, $1; }", "=f,f", [tl.load(x_ptr + o)], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + o, y)


@triton.jit
def wrong_guard(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    y = tl.inline_asm_elementwise("{ .reg .pred p; setp.gt.f32 p, $1, 0.0; @p mov.f32 $0, $1; @!p add.f32 $0, $0, 1.0; }", "=f,f", [tl.load(x_ptr + o)], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + o, y)


@triton.jit
def reset_between(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    y = tl.inline_asm_elementwise("{ .reg .pred p; setp.gt.f32 p, $1, 0.0; @p mov.f32 $0, $1; setp.gt.f32 p, $1, 1.0; @!p mov.f32 $0, 0.0; }", "=f,f", [tl.load(x_ptr + o)], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + o, y)


ERRORS = {
    "half_written": (half_written, "it writes $0 only under @p, so it is undefined where that predicate does not hold"),
    "wrong_guard": (wrong_guard, "'@!p add.f32 $0, $0, 1.0' reads $0 under @!p, which is written only under @p before it"),
    "reset_between": (reset_between, "it writes $0 only under @!p (p as its setp 2 of 2 left it) or @p (p as its setp 1 of 2 left it), so it is undefined where none of those holds"),
}
if len(sys.argv) > 1:
    kernel = ERRORS[sys.argv[1]][0]
    kernel[(1,)](np.ones(8, np.float32), np.zeros(8, np.float32), N=8)
    sys.exit("no error for " + sys.argv[1])


def fail(what, got, want, bad):
    bad = bad[:4]
    sys.exit("%s: lanes %s got %s, want %s" % (what, bad, got[bad], want[bad]))


N = 256
rng = np.random.default_rng(3)
x = np.concatenate([np.float32([20.0, 20.5, -30.0, 0.0, 19.99, 100.0]), (rng.standard_normal(N - 6) * 12).astype(np.float32)])
y, z = np.zeros(N, np.float32), np.zeros(N, np.float32)
softplus[(1,)](x, y, z, N=N)
with np.errstate(over="ignore"):
    want = np.where(x > 20, x, np.log1p(np.exp(x.astype(np.float64)))).astype(np.float32)
gpu = dtsim.config()["backend"] == "cuda"  # the GPU's ex2 / lg2 .approx are a few ulp off
for name, got in [("@p then @!p", y), ("@!p then @p", z)]:
    ok = np.isclose(got, want, rtol=2e-5 if gpu else 2e-6, atol=1e-6 if gpu else 1e-7)  # and the constants' rounding
    if not ok.all():
        fail("softplus, " + name, got, want, np.flatnonzero(~ok))
big = x > 20
if not (np.array_equal(y[big], x[big]) and np.array_equal(z[big], x[big])):
    sys.exit("softplus: the @p lanes are not x itself")

a = rng.integers(-1000, 1000, N).astype(np.int32)
b = rng.integers(-1000, 1000, N).astype(np.int32)
a[:4], b[:4] = [0, -4, 7, -7], [0, 5, 7, -8]
r, lo, hi = (np.zeros(N, np.int32) for _ in range(3))
ints[(1,)](a, b, r, lo, hi, N=N)
want_r = (np.abs(a) + 3 + np.where(a % 4 == 0, 100, 0)).astype(np.int32)
for name, got, want in [("abs under complementary predicates", r, want_r), ("min", lo, np.minimum(a, b)), ("max", hi, np.maximum(a, b))]:
    if not np.array_equal(got, want):
        fail(name, got, want, np.flatnonzero(got != want))

for name, (_, msg) in ERRORS.items():
    res = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, name], capture_output=True, text=True)
    line = next(i for i, t in enumerate(open(__file__), 1) if t.startswith("def " + name)) + 2
    if res.returncode == 0 or "inline_ptx_predicates.py:%d:" % line not in res.stderr or msg not in res.stderr:
        sys.exit("%s: rc %d, stderr:\n%s" % (name, res.returncode, res.stderr[-2000:]))
print("inline PTX under predicates: softplus under @p / @!p in both orders, |a| through a register filled under complementary predicates, "
      "min and max as two results match numpy on %d lanes; %d registers a lane may read unwritten are located errors" % (N, len(ERRORS)))
