"""@triton.autotune under the installed Triton: by default its autotuner runs (and times) every config
that its pruning keeps, as on a GPU; dtsim.config(autotune='first') leaves it the first of them, run
untimed as Triton runs a single config. Counted through each config's pre_hook."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim

calls = {64: 0, 128: 0, 256: 0}


def counter(block):
    def hook(nargs):
        calls[block] += 1
    return hook


@triton.autotune(configs=[triton.Config({"BLOCK": b}, pre_hook=counter(b)) for b in (64, 128, 256)], key=["n"])
@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    double[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return np.array_equal(out, 2 * x)


failures = []
if not launch(1000) or min(calls.values()) == 0:
    failures.append("default: every config should run: %s" % calls)
for b in calls:
    calls[b] = 0
dtsim.config(autotune="first")
if not launch(777) or calls != {64: 1, 128: 0, 256: 0} or double.best_config.kwargs["BLOCK"] != 64:
    failures.append("autotune='first': only the first config, once: %s" % calls)
try:
    dtsim.config(autotune="fastest")
    failures.append("autotune='fastest' accepted")
except ValueError:
    pass
if failures:
    sys.exit("\n".join(failures))
print("autotune_modes: every config by default, the first with autotune='first'")
