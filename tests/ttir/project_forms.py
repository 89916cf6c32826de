"""Constructs met in other projects' Triton kernels, each in a small kernel of its own, checked
against numpy through Triton's TTIR (python -m dtsim with Triton installed):
libdevice's classifications (isnan, isinf, isfinited: i32 results) and powi (an f32 base, an i32
exponent), as FlagGems' isclose, nan_to_num and tanh-GELU call them; a runtime if/elif chain that
chooses one of several pointer arguments by program id (FlagGems' cat and stack); integer division
and remainder by values loaded with a mask and no `other` (FlagGems' pointwise floor_divide and
remainder: the masked-off lanes, undefined in Triton, are no division by zero, while a zero the load
read still is); numpy views with negative strides as pointer arguments (the pointer addresses the
view's first element, the buffer spans the view from its lowest address), and an access past that
span still an out-of-bounds finding; a kernel renamed by `@triton.jit(repr=...)` (aiter names each
specialization after its constexprs: the TTIR's function then has that name); Triton's host hooks as
triton_kernels uses them: knobs.runtime.launch_enter_hook / launch_exit_hook with the kernel's
launch_metadata function, jit_cache_hook and jit_post_compile_hook once per compile, the launch's
result's `hash`."""
import sys

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def classify(x_ptr, nan_ptr, inf_ptr, fin_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(nan_ptr + offs, libdevice.isnan(x), mask=m)
    tl.store(inf_ptr + offs, libdevice.isinf(x).to(tl.int8), mask=m)
    tl.store(fin_ptr + offs, libdevice.isfinited(x.to(tl.float64)), mask=m)


@triton.jit
def powi(x_ptr, e_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    e = tl.load(e_ptr + offs, mask=m, other=0)
    tl.store(y_ptr + offs, libdevice.pow(x, e), mask=m)


@triton.jit
def pick_source(out_ptr, a_ptr, b_ptr, c_ptr, na, nb, nc, BLOCK: tl.constexpr):
    """Instance (i, j) copies block i of source j (a, b or c) into row j of out."""
    pid = tl.program_id(0)
    src = tl.program_id(1)
    if src == 0:
        p = a_ptr
        n = na
    elif src == 1:
        p = b_ptr
        n = nb
    else:
        p = c_ptr
        n = nc
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + src * 64 + offs, tl.load(p + offs, mask=m), mask=m)


@triton.jit
def int_divide(x_ptr, y_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32).to(tl.int64)  # through a float and back
    tl.store(q_ptr + offs, x // y, mask=mask)
    tl.store(r_ptr + offs, x % y, mask=mask)


x = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0, 0.0, 3e38, -np.nan], np.float32)
nan, inf, fin = np.zeros(8, np.int32), np.zeros(8, np.int8), np.zeros(8, np.int32)
classify[(1,)](x, nan, inf, fin, 8, BLOCK=8)
for name, got, want in (("isnan", nan, np.isnan(x)), ("isinf", inf, np.isinf(x)), ("isfinited", fin, np.isfinite(x))):
    if not np.array_equal(got, want.astype(got.dtype)):
        sys.exit("%s: got %s, want %s" % (name, got, want.astype(got.dtype)))
print("isnan, isinf, isfinited: match numpy")

rng = np.random.default_rng(7)
xb = rng.uniform(-3, 3, 100).astype(np.float32)
e = rng.integers(-4, 6, 100).astype(np.int32)
y = np.zeros(100, np.float32)
powi[(1,)](xb, e, y, 100, BLOCK=128)
want = np.power(xb.astype(np.float64), e.astype(np.float64))
err = np.max(np.abs(y - want) / np.maximum(np.abs(want), 1e-30))
if not err < 1e-6:
    sys.exit("powi: relative error %g" % err)
print("powi: relative error %.3g" % err)

a, b, c = (rng.standard_normal(k).astype(np.float32) for k in (64, 40, 17))
out = np.full(3 * 64, -1.0, np.float32)
pick_source[(2, 3)](out, a, b, c, 64, 40, 17, BLOCK=32)
want = np.full(3 * 64, -1.0, np.float32)
want[:64], want[64:104], want[128:145] = a, b, c
if not np.array_equal(out, want):
    sys.exit("pick_source: rows differ")
print("a pointer chosen by a runtime if/elif: matches")

xi = rng.integers(-100, 100, 37).astype(np.int32)
yi = rng.integers(1, 9, 37).astype(np.int32) * rng.choice([-1, 1], 37).astype(np.int32)
qo, ro = np.zeros(37, np.int64), np.zeros(37, np.int64)
int_divide[(3,)](xi, yi, qo, ro, 37, BLOCK=16)  # the last block's lanes 37..47 are masked off
want_q = np.trunc(xi / yi).astype(np.int64)
if not (np.array_equal(qo, want_q) and np.array_equal(ro, xi - want_q * yi)):
    sys.exit("integer division with masked-off divisor lanes: wrong result")
print("integer // and % with masked-off divisor lanes: match, no fault")
yi[5] = 0
if dtsim.config()["backend"] == "cuda":  # integer division by zero is undefined on the GPU, not a finding
    yi[5] = 1
try:
    int_divide[(3,)](xi, yi, qo, ro, 37, BLOCK=16)
    if dtsim.config()["backend"] != "cuda":
        sys.exit("a zero divisor the load read was not reported")
except dtsim.KernelError as e:
    if "integer division by zero" not in str(e) and "integer remainder by zero" not in str(e):
        sys.exit("unexpected finding: %s" % e)
    print("a zero divisor in a lane the load read: %s" % str(e).splitlines()[0])

src = np.arange(40, dtype=np.float32).reshape(5, 8)
int_view = src[::-1, ::-2]  # strides (-32, -8) bytes: element [0, 0] is src[4, 7]


@triton.jit
def copy_strided(src_ptr, dst_ptr, s0, s1, M, N, BM: tl.constexpr, BN: tl.constexpr, EXTRA: tl.constexpr):
    i = tl.arange(0, BM)[:, None]
    j = tl.arange(0, BN)[None, :]
    m = (i < M) & (j < N + EXTRA)
    tl.store(dst_ptr + i * N + j, tl.load(src_ptr + i * s0 + j * s1, mask=m), mask=(i < M) & (j < N))


out = np.zeros(20, np.float32)
copy_strided[(1,)](int_view, out, -8, -2, 5, 4, BM=8, BN=4, EXTRA=0)
if not np.array_equal(out, int_view.reshape(-1)):
    sys.exit("a view with negative strides: got %s" % out)
print("a numpy view with negative strides: read in place")
try:
    copy_strided[(1,)](int_view, out, -8, -2, 5, 4, BM=8, BN=8, EXTRA=1)  # one column past the view
    sys.exit("an access past a negative-strided view's span was not reported")
except dtsim.KernelError as e:
    if "out-of-bounds load" not in str(e):
        sys.exit("unexpected finding: %s" % e)
    print("past the view's span: %s" % str(e).splitlines()[0])


def repr_name(spec):
    return "scaled_by_%d" % spec.constants["S"]


@triton.jit(repr=repr_name)
def scaled(x_ptr, y_ptr, S: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o) * S)


x = np.arange(16, dtype=np.float32)
for s in (2, 3):
    y = np.zeros(16, np.float32)
    compiled = scaled[(1,)](x, y, S=s, BLOCK=16)
    if not np.array_equal(y, x * s):
        sys.exit("@triton.jit(repr=...): got %s" % y[:4])
    if compiled.name != "scaled_by_%d" % s:
        sys.exit("the launched kernel's name is %r, not the repr's" % compiled.name)
print("kernels renamed by @triton.jit(repr=...): run, named as their repr says")


def fill_meta(grid, kernel, args):
    return {"name": "fill[%d]" % args["N"], "bytes": args["X"].size * 4, "grid": grid}


@triton.jit(launch_metadata=fill_meta)
def fill(X, N, V: tl.constexpr):
    o = tl.arange(0, 16)
    tl.store(X + o, V, mask=o < N)


knobs = triton.knobs.runtime
events = []
knobs.launch_enter_hook = lambda m: events.append(("enter", m.get()))
knobs.launch_exit_hook = lambda m: events.append(("exit", m.get()["name"]))
knobs.jit_cache_hook = lambda *a, **k: events.append(("cache", k["compile"]["specialization_data"] != "")) and False
knobs.jit_post_compile_hook = lambda *a, **k: events.append(("compiled", k["repr"].startswith("fill")))
try:
    x = np.zeros(16, np.float32)
    first = fill[(1,)](x, 16, V=2.0)
    again = fill[(1,)](x, 32, V=2.0)  # the same specialization (a multiple of 16 again): no compile
finally:
    knobs.launch_enter_hook = knobs.launch_exit_hook = knobs.jit_cache_hook = knobs.jit_post_compile_hook = None
want = [("cache", True), ("compiled", True), ("enter", {"name": "fill[16]", "function": 0, "stream": 0, "bytes": 64, "grid": (1,)}),
        ("exit", "fill[16]"), ("enter", {"name": "fill[32]", "function": 0, "stream": 0, "bytes": 64, "grid": (1,)}),
        ("exit", "fill[32]")]
if events != want or not np.all(x == 2.0):
    sys.exit("Triton's hooks: got %s, want %s" % (events, want))
if not (isinstance(first.hash, str) and len(first.hash) == 64 and first is again):
    sys.exit("the launch's result: hash %r" % getattr(first, "hash", None))
print("Triton's launch and compile hooks: called as Triton calls them, launch metadata included")
