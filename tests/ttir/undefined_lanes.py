"""Lanes a tl.load without `other` leaves undefined (Triton's documented contract; its NVIDIA lowering
and the IR give 0) are tracked, with DTSIM_UNDEFINED_LANES=1, to where they matter: a store or atomic that
writes them, a dot / reduction whose result is stored, an address an access uses, a branch
condition or loop bound, an assert's condition. Each is a finding (kind uninitialized-read) at the
statement, naming the load's line (and its file where that is another: a helper's module) and the
first undefined lane. Loads through a wider pointer view (TTIR reader) are tracked as any load. Clean patterns stay clean and compute what an unchecked
run computes: a store under the load's mask, tl.where(mask, x, 0), other=, lanes never used, a dot
whose undefined rows are never stored, a mask combined with the loaded values, a cumsum whose
undefined tail is masked off. Without DTSIM_UNDEFINED_LANES=1, or with sanitize='bounds', nothing is
checked. Run by Triton's frontend (TTIR) and, with DTSIM_STANDIN=1, by dtsim's own .py reader."""
import os
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
import ttir_check
import undefined_helpers

STANDIN = triton.__version__.endswith("+dtsim")

if dtsim.config()["backend"] == "cuda":
    print("skipped: undefined lanes are tracked on the interpreter only")
    sys.exit(77)

failures = []


def expect(name, fn, *needles):
    try:
        fn()
    except dtsim.KernelError as e:
        text = str(e)
        missing = [n for n in needles if n not in text]
        if missing or e.kind != "uninitialized-read":
            print("%-30s FAILED: %r not in message (kind %s):\n%s" % (name, missing, e.kind, text))
            failures.append(name)
        else:
            print("%-30s ok" % name)
        return
    print("%-30s FAILED: no finding" % name)
    failures.append(name)


def clean(name, fn):
    try:
        fn()
    except dtsim.KernelError as e:
        print("%-30s FAILED: a finding in a clean kernel:\n%s" % (name, e))
        failures.append(name)
        return
    print("%-30s ok" % name)


def same(name, got, want, tol=1e-5):
    if not np.allclose(got, want, rtol=tol, atol=tol):
        print("%-30s FAILED: wrong result" % name)
        failures.append(name)


# ---- sinks ----

@triton.jit
def store_unmasked(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2.0)  # sink: store


@triton.jit
def atomic_unmasked(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.atomic_add(y_ptr + offs, x)  # sink: atomic


@triton.jit
def head_dim_attention(q_ptr, k_ptr, o_ptr, HEAD, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * HEAD + rd[None, :], mask=rd[None, :] < HEAD)
    k = tl.load(k_ptr + rn[:, None] * HEAD + rd[None, :], mask=rd[None, :] < HEAD)
    s = tl.dot(q, tl.trans(k))
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], s)  # sink: dot result


@triton.jit
def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr, tl.sum(x, axis=0))  # sink: reduction


@triton.jit
def gather(idx_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs, mask=offs < n)
    v = tl.load(x_ptr + idx)  # sink: address
    tl.store(y_ptr + offs, v, mask=offs < n)


@triton.jit
def branch(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if tl.max(x, axis=0) > 0:  # sink: condition
        tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def loop_bound(cnt_ptr, y_ptr, limit):
    c = tl.load(cnt_ptr, mask=limit > 0)
    acc = 0.0
    for i in range(0, c):  # sink: loop bound
        acc += 1.0
    tl.store(y_ptr, acc)


@triton.jit
def carried(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, 4):
        x = tl.load(x_ptr + i * BLOCK + offs, mask=offs < n)
        acc += x
    tl.store(y_ptr + offs, acc)  # sink: loop-carried value


@triton.jit
def reverse_cumsum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    c = tl.cumsum(x, axis=0, reverse=True)
    tl.store(y_ptr + offs, c, mask=offs < n)  # sink: suffix sums take the undefined tail


@triton.jit
def other_file(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = undefined_helpers.load_tail(x_ptr, offs, n)
    tl.store(y_ptr + offs, x)  # sink: a helper's load


@triton.jit(debug=True)
def asserted(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_assert(x >= 0.0, "negative")  # sink: assert
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def wide_view(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr.to(tl.pointer_type(tl.int32)) + offs, mask=offs < n)
    tl.store(y_ptr + offs, x)  # sink: a wider view's load


# ---- clean patterns ----

@triton.jit(debug=True)
def asserted_masked(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_assert((offs >= n) | (x >= 0.0), "negative")
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def wide_view_masked(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr.to(tl.pointer_type(tl.int32)) + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)
    w = tl.load(x_ptr.to(tl.pointer_type(tl.int32)) + offs, mask=offs < n, other=7)
    tl.store(y_ptr + BLOCK + offs, w)

@triton.jit
def same_mask(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x + 1.0, mask=offs < n)


@triton.jit
def where_zero(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    x = tl.where(offs < n, x, 0.0)
    tl.store(y_ptr, tl.sum(x, axis=0))


@triton.jit
def with_other(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr, tl.sum(x, axis=0))


@triton.jit
def unused(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    z = tl.exp(x) * 3.0
    tl.store(y_ptr + offs, offs.to(tl.float32))


@triton.jit
def rows_masked_dot(q_ptr, k_ptr, o_ptr, ROWS, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :], mask=rm[:, None] < ROWS)
    k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
    s = tl.dot(q, tl.trans(k))
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], s, mask=rm[:, None] < ROWS)


@triton.jit
def gather_same_mask(idx_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs, mask=offs < n)
    v = tl.load(x_ptr + idx, mask=offs < n)
    tl.store(y_ptr + offs, v, mask=offs < n)


@triton.jit
def value_mask(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    keep = (offs < n) & (x > 3.0)
    tl.store(y_ptr + offs, x, mask=keep)


@triton.jit
def forward_cumsum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    c = tl.cumsum(x, axis=0)
    tl.store(y_ptr + offs, c, mask=offs < n)


def at(text):
    return ttir_check.at(__file__, text)


def line(text):
    return "line %d" % ttir_check.line_of(__file__, text)


x = np.arange(64, dtype=np.float32)
y = np.zeros(64, dtype=np.float32)

# opt-in: without DTSIM_UNDEFINED_LANES=1 the kernel is left as it is (its lanes are 0, as on the GPU)
os.environ.pop("DTSIM_UNDEFINED_LANES", None)
clean("not asked for", lambda: store_unmasked[(1,)](x, y, 10, BLOCK=16))
same("not asked for", y[:16], np.where(np.arange(16) < 10, 2 * x[:16], 0))
# dtsim.config(undefined_lanes=...) decides over the environment; None hands it back
dtsim.config(undefined_lanes=True)
expect("asked for by config", lambda: store_unmasked[(1,)](x, y, 10, BLOCK=16), at("# sink: store"), "reach this store")
os.environ["DTSIM_UNDEFINED_LANES"] = "1"
dtsim.config(undefined_lanes=False)
clean("refused by config", lambda: store_unmasked[(1,)](x, y, 10, BLOCK=16))
dtsim.config(undefined_lanes=None)
LOAD = "x = tl.load(x_ptr + offs, mask=offs < n)"

expect("store", lambda: store_unmasked[(1,)](x, y, 10, BLOCK=16),
       at("# sink: store"), "the load at " + line(LOAD), "without `other`", "reach this store", "lane 10", "6 of 16 lanes undefined")
expect("atomic", lambda: atomic_unmasked[(1,)](x, y, 10, BLOCK=16), at("# sink: atomic"), "reach this atomic", "lane 10")
q = np.random.RandomState(0).rand(16, 16).astype(np.float32)
o = np.zeros((16, 16), dtype=np.float32)
expect("dot over a masked head dim", lambda: head_dim_attention[(1,)](q, q, o, 12, M=16, N=16, D=16),
       at("# sink: dot result"), "the load at " + line("q = tl.load(q_ptr + rm[:, None] * HEAD"), "reach this store", "lane [0, 0]")
expect("reduction", lambda: row_sum[(1,)](x, y, 10, BLOCK=16), at("# sink: reduction"), "reach this store")
idx = np.arange(16, dtype=np.int32)
expect("address", lambda: gather[(1,)](idx, x, y, 10, BLOCK=16), at("# sink: address"), "reach the pointer of this load", "lane 10")
expect("branch condition", lambda: branch[(1,)](x, y, 10, BLOCK=16), at("# sink: condition"), "reach the condition of this if")
cnt = np.array([3], dtype=np.int32)
expect("loop bound", lambda: loop_bound[(1,)](cnt, y, 0), at("# sink: loop bound"), "reach the end of this loop")
clean("loop bound, load on", lambda: loop_bound[(1,)](cnt, y, 1))
same("loop bound, load on", y[:1], [3.0])
expect("loop-carried", lambda: carried[(1,)](x, y, 10, BLOCK=16), at("# sink: loop-carried"), "reach this store", "lane 10")
expect("reverse cumsum", lambda: reverse_cumsum[(1,)](x, y, 10, BLOCK=16), at("# sink: suffix"), "lane 0")
helper_line = ttir_check.line_of(undefined_helpers.__file__, "# a helper's load")
expect("a helper's load, another file", lambda: other_file[(1,)](x, y, 10, BLOCK=16), at("# sink: a helper's load"),
       "the load at ", "undefined_helpers.py:%d (tl.load" % helper_line, "reach this store", "lane 10")
expect("assert", lambda: asserted[(1,)](x, y, 10, BLOCK=16), at("# sink: assert"), "reach the condition of this assert",
       "lane 10")
x16 = np.arange(128, dtype=np.int16)
y32 = np.zeros(64, dtype=np.int32)
if not STANDIN:  # dtsim's own reader does not take pointer casts
    expect("a wider view's load", lambda: wide_view[(1,)](x16, y32, 10, BLOCK=16), at("# sink: a wider view"), "reach this store",
           "lane 10")

y[:] = 0
clean("same mask", lambda: same_mask[(1,)](x, y, 10, BLOCK=16))
same("same mask", y[:10], x[:10] + 1)
clean("where(mask, x, 0)", lambda: where_zero[(1,)](x, y, 10, BLOCK=16))
same("where(mask, x, 0)", y[:1], [x[:10].sum()])
clean("other=", lambda: with_other[(1,)](x, y, 10, BLOCK=16))
same("other=", y[:1], [x[:10].sum()])
clean("unused lanes", lambda: unused[(1,)](x, y, 10, BLOCK=16))
clean("dot, undefined rows unstored", lambda: rows_masked_dot[(1,)](q, q, o, 5, M=16, N=16, D=16))
same("dot, undefined rows unstored", o[:5], q[:5] @ q.T, 1e-2)  # tf32 products
clean("address under the same mask", lambda: gather_same_mask[(1,)](idx[::-1].copy(), x, y, 10, BLOCK=16))
same("address under the same mask", y[:10], x[15:5:-1])
y[:] = -1
clean("mask from the values", lambda: value_mask[(1,)](x, y, 10, BLOCK=16))
same("mask from the values", y[:10], np.where(x[:10] > 3, x[:10], -1))
clean("cumsum, tail masked", lambda: forward_cumsum[(1,)](x, y, 10, BLOCK=16))
same("cumsum, tail masked", y[:10], np.cumsum(x[:10]))

clean("assert, masked lanes decided", lambda: asserted_masked[(1,)](x, y, 10, BLOCK=16))
if not STANDIN:
    clean("a wider view, same mask, other=", lambda: wide_view_masked[(1,)](x16, y32, 10, BLOCK=16))
    want = x16[:32].view(np.int32)
    same("a wider view, same mask, other=", np.concatenate([y32[:10], y32[16:32]]), np.concatenate([want[:10], want[:10], [7] * 6]))

# the check belongs to sanitize='all'; 'bounds' leaves the kernel as it is
dtsim.config(sanitize="bounds")
clean("sanitize='bounds'", lambda: store_unmasked[(1,)](x, y, 10, BLOCK=16))
dtsim.config(sanitize="all")

if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("all ok")
