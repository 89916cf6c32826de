"""inline_ptx_trap: `trap` in tl.inline_asm_elementwise, a kernel's own check that aborts the launch on
the GPU, is an assert: an instance that reaches it (a runtime `if` taken, or lanes where `@p trap`'s
predicate holds) fails with the asm's line and the pid; instances that do not reach it run on and
store their results."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim


@triton.jit
def _abort():
    tl.inline_asm_elementwise("trap; // keeps $0 unwritten", "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def gather_rows(X, Y, idx_ptr, n_rows, D: tl.constexpr):
    row = tl.program_id(0)
    src = tl.load(idx_ptr + row)
    if src >= n_rows:  # an index past the table: the kernel's own guard
        _abort()
    o = tl.arange(0, D)
    tl.store(Y + row * D + o, tl.load(X + src * D + o))


@triton.jit
def below(X, Y, limit, D: tl.constexpr):
    o = tl.arange(0, D)
    x = tl.load(X + o)
    y = tl.inline_asm_elementwise("{ .reg .pred p; setp.ge.s32 p, $1, $2; @p trap; add.s32 $0, $1, 1; }",
                                  "=r,r,r", [x, limit], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(Y + o, y)


def expect_trap(launch, line, pid, lanes):
    try:
        launch()
    except Exception as e:  # noqa: BLE001 (dtsim.KernelError)
        text = str(e)
        # a call over two lines is located at its first (Triton 3.9) or at its arguments (3.6)
        at = any("inline_ptx_trap.py:%d:" % n in text for n in (line, line + 1))
        want = ["inline PTX 'trap' executed", "pid [%d]" % pid, lanes]
        missing = [w for w in want if w not in text] + ([] if at else ["inline_ptx_trap.py:%d:" % line])
        if missing:
            sys.exit("trap reported without %r:\n%s" % (missing, text))
        return text
    sys.exit("a trap that runs was not reported")


rng = np.random.default_rng(5)
x = rng.standard_normal((8, 16)).astype(np.float32)
y = np.zeros((4, 16), np.float32)
gather_rows[(4,)](x, y, np.array([3, 1, 7, 0], np.int64), 8, D=16)
if not np.array_equal(y, x[[3, 1, 7, 0]]):
    sys.exit("rows gathered wrongly where no instance traps")
expect_trap(lambda: gather_rows[(4,)](x, y, np.array([3, 1, 9, 0], np.int64), 8, D=16), 16, 2, "1 of 1 lanes")

a = np.arange(16, dtype=np.int32)
b = np.zeros(16, np.int32)
below[(1,)](a, b, 100, D=16)
if not np.array_equal(b, a + 1):
    sys.exit("@p trap with p false everywhere changed the result: %s" % b)
expect_trap(lambda: below[(1,)](a, b, 5, D=16), 33, 0, "11 of 16 lanes false (first: lane 5)")
print("inline PTX trap: an instance that reaches it fails at the asm's line with its pid; the others run on")
