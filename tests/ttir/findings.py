"""Findings and errors of kernels read through Triton's frontend point at the kernel's .py lines:
an out-of-bounds load, a tl.assume that does not hold, a device assert (only with debug=True, as
Triton compiles it), two instances storing different values to the same rows through a tensor
descriptor (equal values there are a warning on stderr, not a finding), an op dtsim cannot run yet,
and a Gluon kernel (which dtsim does not run)."""
import contextlib
import io
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
import ttir_check

failures = []


def expect(name, fn, exc, *needles):
    try:
        fn()
    except exc as e:
        text = str(e)
        missing = [n for n in needles if n not in text]
        if missing:
            print("%-24s FAILED: %r not in message:\n%s" % (name, missing, text))
            failures.append(name)
        else:
            print("%-24s ok" % name)
        return
    print("%-24s FAILED: no %s raised" % (name, exc.__name__))
    failures.append(name)


@triton.jit
def copy_le(x_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n  # the bug: one element too many
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x, mask=mask)


@triton.jit
def assumes(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.assume(pid < 2)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


@triton.jit
def asserts(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(x_ptr + offs, x, mask=offs < n)


@triton.jit
def inline_asm(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise("ld.global.b32 $0, [$1];", "=r,l", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(h_ptr + tl.arange(0, BLOCK), y)


@triton.jit
def scale_rows(x_ptr, y_ptr, G, R, D: tl.constexpr, BR: tl.constexpr, SKEW: tl.constexpr):
    # Groups of 2 heads of R rows each in [G * 2 * R, D] tensors; the first row of (group, head)
    # should be (g * 2 + h) * R, but the group is not scaled: (1, 0) overlaps (0, 0) when G > 1.
    # SKEW adds the group: overlapping rows then get different values.
    pid_r, pid_gh = tl.program_id(0), tl.program_id(1)
    g, h = pid_gh // 2, pid_gh % 2
    row = g + h * R + pid_r * BR
    src = tl.make_tensor_descriptor(x_ptr, shape=[G * 2 * R, D], strides=[D, 1], block_shape=[BR, D])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[G * 2 * R, D], strides=[D, 1], block_shape=[BR, D])
    dst.store([row, 0], src.load([row, 0]) * 2.0 + SKEW * g)


try:  # Triton's Gluon (explicit layouts): a kernel dtsim says it does not run
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def gluon_copy(x_ptr, y_ptr, N: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offs = gl.arange(0, N, layout=layout)
        gl.store(y_ptr + offs, gl.load(x_ptr + offs))
except ImportError:
    gluon_copy = None


def at(text):
    return ttir_check.at(__file__, text)


x = np.arange(200, dtype=np.float32)
z = np.empty_like(x)
expect("out of bounds", lambda: copy_le[(4,)](x, z, 200, BLOCK=64), dtsim.KernelError,
       at("x = tl.load(x_ptr + offs, mask=mask)"), "out-of-bounds load from 'x_ptr'", "pid [3]")
copy_le[(4,)](x, z, 199, BLOCK=64)
if not np.array_equal(z[:200], x):
    print("copy with n=199 FAILED")
    failures.append("copy")
expect("tl.assume", lambda: assumes[(3,)](np.zeros(300, np.float32), 300, BLOCK=128), dtsim.KernelError,
       at("tl.assume(pid < 2)"), "tl.assume")
neg = -np.ones(10, np.float32)
asserts[(1,)](neg, 10, BLOCK=16)  # device asserts are off without debug, as in Triton
print("%-24s ok" % "assert off by default")
expect("assert with debug", lambda: asserts[(1,)](neg, 10, BLOCK=16, debug=True), dtsim.KernelError,
       at("tl.device_assert(x >= 0"), "x must be non-negative")
xs = np.arange(2 * 2 * 32 * 16, dtype=np.float32).reshape(-1, 16)
ys = np.zeros_like(xs)
scale_rows[(2, 2)](xs[:64], ys[:64], 1, 32, D=16, BR=16, SKEW=1.0)  # one group: the rows are disjoint
if not np.array_equal(ys[:64], xs[:64] * 2):
    print("descriptor rows, one group FAILED")
    failures.append("descriptor rows")
expect("descriptor rows overlap", lambda: scale_rows[(2, 4)](xs, ys, 2, 32, D=16, BR=16, SKEW=1.0), dtsim.KernelError,
       at("dst.store([row, 0]"), "error: instances", "both store", "y_ptr")
err = io.StringIO()
with contextlib.redirect_stderr(err):  # the same rows with equal values: a warning, the launch runs
    scale_rows[(2, 4)](xs, ys, 2, 32, D=16, BR=16, SKEW=0.0)
if at("dst.store([row, 0]") not in err.getvalue() or "with equal values" not in err.getvalue() or not np.array_equal(ys[:65], xs[:65] * 2):
    print("descriptor rows overlap, equal values FAILED:\n" + err.getvalue())
    failures.append("descriptor rows, equal values")
else:
    print("%-24s ok" % "descriptor rows, equal")
expect("unsupported op", lambda: inline_asm[(1,)](np.zeros(8, np.int32), np.zeros(8, np.int32), 8, BLOCK=8), dtsim.CompileError,
       at("y = tl.inline_asm_elementwise("), "not supported yet")
if gluon_copy is not None:
    expect("a Gluon kernel", lambda: gluon_copy[(1,)](np.zeros(128, np.float32), np.zeros(128, np.float32), 128), dtsim.CompileError,
           at("@gluon.jit"), "is a Gluon kernel", "does not run Gluon kernels")
if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("all findings located")
