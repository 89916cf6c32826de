"""Forms real projects use that dtsim's own .py reader must read as Triton's frontend does (run on
both readers): tl.math.div_rn of a scalar by a tensor (a tensor), a compile-time int's bit_length(),
a module-level tl.constexpr computed by host code (os.getenv), a helper imported from a file of CRLF
lines with a backslash continuation, and (the own reader) a kernel defined inside a function, refused
with its location."""
import os
import sys
import tempfile

import numpy as np
import triton
import triton.language as tl

import dtsim

STANDIN = "dtsim" in os.path.dirname(triton.__file__)
FAST = tl.constexpr(not os.getenv("DTSIM_TEST_UNSET_FLAG", ""))

helper_dir = tempfile.mkdtemp()
with open(os.path.join(helper_dir, "crlf_helper.py"), "wb") as f:
    f.write(b"import triton\r\nimport triton.language as tl\r\n\r\n\r\n@triton.jit\r\ndef pair(x):\r\n"
            b"    return x + 1, \\\r\n        x * 2\r\n")
sys.path.insert(0, helper_dir)
from crlf_helper import pair  # noqa: E402


@triton.jit
def forms(X, Y, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    r = tl.math.div_rn(1.0, x)
    tl.store(Y + i[:, None] + tl.zeros([N, 1], tl.int32), r[:, None])
    steps = 0
    for _ in range((M + 1).bit_length()):
        steps += 1
    a, b = pair(x)
    if FAST:
        tl.store(Y + N + i, a + b + steps)
    else:
        tl.store(Y + N + i, a)


x = np.arange(1, 9, dtype=np.float32)
y = np.zeros(16, np.float32)
forms[(1,)](x, y, M=100, N=8)
failures = []
if not np.array_equal(y[:8], np.float32(1) / x):
    failures.append("div_rn(1.0, x): %s" % y[:8])
if not np.array_equal(y[8:], (x + 1) + x * 2 + (101).bit_length()):
    failures.append("bit_length / host constexpr / CRLF helper: %s" % y[8:])


def make_kernel():
    @triton.jit
    def inner(X):
        tl.store(X, 1.0)
    return inner


if STANDIN:
    try:
        make_kernel()[(1,)](np.zeros(1, np.float32))
        failures.append("a kernel defined inside a function: no error")
    except dtsim.CompileError as e:
        if "own_reader_forms.py:" not in str(e) or "defined inside the function 'make_kernel'" not in str(e):
            failures.append("a kernel defined inside a function: %s" % e)
if failures:
    sys.exit("\n".join(failures))
print("own_reader_forms: div_rn of a scalar, bit_length, host constexprs, CRLF helpers read as Triton reads them")
