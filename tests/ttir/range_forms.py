"""Loops over range() with a negative compile-time step (`for t in range(T - 1, -1, -1)`, a backward
pass over time steps), on both readers: Triton's frontend lowers them to a counting loop, dtsim's own
reader counts k = 0 .. cdiv(start - stop, -step) and binds start + k * step. Runtime and
compile-time bounds, steps of -1, -2 and -3, and loops that run no iteration."""
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def weighted_backward(x, out, T, S: tl.constexpr):
    acc = 0.0
    w = 1.0
    for t in range(T - 1, -1, -S):  # runtime start, compile-time step
        acc += tl.load(x + t) * w
        w = w * 2.0
    for t in range(3, 7, -1):  # never runs
        acc += 1000.0
    for t in range(7, 3, -2):  # compile-time bounds: 7, 5
        acc += tl.load(x + t) * 0.5
    tl.store(out, acc)


failures = []
for T, S in ((10, 1), (10, 3), (1, 1), (0, 2), (7, 2)):
    x = np.arange(10, dtype=np.float32) + 1
    o = np.zeros(1, np.float32)
    weighted_backward[(1,)](x, o, T, S=S)
    acc, w = 0.0, 1.0
    for t in range(T - 1, -1, -S):
        acc += float(x[t]) * w
        w *= 2
    for t in range(7, 3, -2):
        acc += float(x[t]) * 0.5
    if o[0] != np.float32(acc):
        failures.append("T=%d step=-%d: %g, want %g" % (T, S, o[0], acc))
if failures:
    sys.exit("\n".join(failures))
print("range_forms: negative steps match Python's range")
