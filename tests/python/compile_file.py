# dtsim._dtsim.compile_file: a .tile or .dt file compiled at --arg values (what bench/gpu_table.py
# launches over torch tensors on the GPU), its buffers() at those values, and a run of it over numpy
# arrays on the interpreter: one kernel (examples/add.tile), a module of two kernels whose second reads
# the first's output (examples/rmsnorm_materialized.dt), and the errors of a wrong file or option.
import os
import sys

import numpy as np
from dtsim import _dtsim

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def raises(fn, kind, text):
    try:
        fn()
    except kind as e:
        check(text in str(e), f"error text {str(e)!r} lacks {text!r}")
        return
    except Exception as e:  # the wrong kind
        check(False, f"{type(e).__name__}: {e} where {kind.__name__} was expected")
        return
    check(False, f"no error where {kind.__name__} ({text}) was expected")


# One kernel, its size given at compile time and again as the launch's scalar.
args = {"n": "1000"}
c = _dtsim.compile_file(os.path.join(ROOT, "examples/add.tile"), args)
bufs = c.buffers(args)
check(bufs == [("x", "f32", [1000], "in"), ("y", "f32", [1000], "in"), ("z", "f32", [1000], "out")], f"add buffers {bufs}")
check(c.buffers({"n": "7"})[2][2] == [7], "buffers() evaluates the shapes at the values given")
rng = np.random.default_rng(1)
x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
z = np.zeros(1000, np.float32)
res = _dtsim.run(c, args, [("x", x, "f32"), ("y", y, "f32"), ("z", z, "f32")])
check(res["findings_count"] == 0, f"add findings {res['findings_count']}")
check(np.array_equal(z, x + y), "add result")

# A module of two kernels: ms (the row statistic, an intermediate buffer) then rms reading it.
sizes = {"x_SIZE": "6", "y_SIZE": "100"}
c = _dtsim.compile_file(os.path.join(ROOT, "examples/rmsnorm_materialized.dt"), sizes)
check(c.launch_args == {}, f"the .dt sizes are lowered in, not launch scalars: {c.launch_args}")
check(_dtsim.compile_file(os.path.join(ROOT, "examples/add.tile"), args).launch_args == args, "a .tile's --arg is a launch scalar")
bufs = {name: (dt, shape, io) for name, dt, shape, io in c.buffers(c.launch_args)}
check(set(bufs) == {"X", "w", "ms", "rms"}, f"rmsnorm buffers {sorted(bufs)}")
check(bufs["X"][1] == [6, 100] and bufs["ms"][1] == [6] and bufs["rms"][1] == [6, 100], f"rmsnorm shapes {bufs}")
X = rng.standard_normal((6, 100)).astype(np.float32)
w = rng.standard_normal(100).astype(np.float32)
ms = np.zeros(6, np.float32)
rms = np.zeros((6, 100), np.float32)
res = _dtsim.run(c, c.launch_args, [("X", X, "f32"), ("w", w, "f32"), ("ms", ms, "f32"), ("rms", rms, "f32")])
check(res["findings_count"] == 0, f"rmsnorm findings {res['findings_count']}")
ref_ms = (X.astype(np.float64) ** 2).mean(1)
ref = X / np.sqrt(ref_ms + 1e-5)[:, None] * w
check(np.allclose(ms, ref_ms, rtol=1e-5), "rmsnorm's intermediate ms")
check(np.allclose(rms, ref, rtol=1e-4, atol=1e-5), "rmsnorm result")

# Schedule options are checked when compiled (they take effect on the CUDA backend).
tile = os.path.join(ROOT, "examples/matmul_f16.tile")
c = _dtsim.compile_file(tile, {}, schedule={"warp_specialize": 1, "cluster": -1, "persistent": 0, "persistent_ctas": 3},
                       fp_fusion=True, approx_div=True)
check(c.fp_fusion and c.approx_div, "fp_fusion and approx_div reach the compiled kernel")
check(not _dtsim.compile_file(tile, {}).fp_fusion, "fp_fusion is off unless asked")
raises(lambda: _dtsim.compile_file(tile, {}, schedule={"warp_specialise": 1}), ValueError, "not one of")
raises(lambda: _dtsim.compile_file(tile, {}, schedule={"cluster": 2}), ValueError, "1 (asked), -1 (refused) or 0")
raises(lambda: _dtsim.compile_file(tile, {}, schedule={"persistent_ctas": -1}), ValueError, "persistent_ctas")
# Not a .tile or .dt file; a file that does not exist; an unknown buffer name.
raises(lambda: _dtsim.compile_file(os.path.join(ROOT, "examples/triton/add.py"), {}), Exception, "takes a .tile or .dt file")
raises(lambda: _dtsim.compile_file(os.path.join(ROOT, "examples/nosuch.tile"), {}), Exception, "nosuch.tile")
c = _dtsim.compile_file(os.path.join(ROOT, "examples/add.tile"), args)
raises(lambda: _dtsim.run(c, args, [("q", x, "f32")]), Exception, "has no pointer parameter 'q'")

print("compile_file:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
