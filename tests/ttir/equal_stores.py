"""equal_stores: two program instances that store bit-identical values to one element (grouped
query heads sharing a key/value head, where both instances of a pair write the pair's output row)
are not a write-write conflict: the launch runs, the result is right, and one warning per statement
pair and buffer goes to stderr (file:line:col: warning: instances ... both store ... with equal
values). The same kernel storing values that differ between the instances is a write-write conflict
(dtsim.KernelError), in both instance orders. A load racing a store of the value memory already
holds stays a read/write conflict. dtsim.config(equal_stores='conflict'), or DTSIM_EQUAL_STORES=conflict
while that option is None (read at each launch), makes the equal values a write-write conflict too."""
import os
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
import ttir_check
from ttir_check import check, finish, report

if dtsim.config()["backend"] == "cuda":
    print("skipped: the GPU's conflict checks cannot compare two instances' values (docs/cuda-backend.md)")
    sys.exit(77)


@triton.jit
def pair_rows(x_ptr, y_ptr, D: tl.constexpr, SKEW: tl.constexpr):
    # Instances 2r and 2r + 1 both write row r (two query heads per key/value head); SKEW adds the
    # instance's own number, so that the two write different values.
    pid = tl.program_id(0)
    row = pid // 2
    cols = tl.arange(0, D)
    v = tl.load(x_ptr + row * D + cols) * 2.0 + SKEW * pid
    tl.store(y_ptr + row * D + cols, v)


@triton.jit
def rewrite(z_ptr, D: tl.constexpr):
    # Every instance loads the row; instance 1 stores back what it loaded.
    cols = tl.arange(0, D)
    v = tl.load(z_ptr + cols)
    tl.store(z_ptr + cols, v, mask=(tl.program_id(0) == 1) & (cols >= 0))


def run(launch):
    """(stderr text, KernelError text or None) of one launch."""
    return ttir_check.outcome(launch, dtsim.KernelError)


store_at = ttir_check.at(__file__, "tl.store(y_ptr + row * D + cols, v)")
R, D = 4, 16
x = np.arange(R * D, dtype=np.float32).reshape(R, D)
y = np.zeros_like(x)
err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0))
report("equal values: no finding", found is None, found or "")
check("equal values: the result", y, x * 2.0)
report("equal values: one warning", err.count("warning:") == 1 and store_at + "5: warning" in err
       and "warning: instances [0] and [1] both store y_ptr[0] (index [0, 0])" in err
       and "with equal values" in err and "%d element stores in this run" % (R * D) in err, "\n" + err)
for order in ("reverse", "shuffle:3"):
    dtsim.config(order=order)
    y[:] = 0
    err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0))
    report("equal values, order %s" % order, found is None and "with equal values" in err, found or "")
    check("equal values, order %s: the result" % order, y, x * 2.0)
    err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=1.0))
    report("different values, order %s: a conflict" % order, found is not None and store_at in found and " both store y_ptr[" in found,
           found or err)
dtsim.config(order="sequential")
err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=1.0))
report("different values: write-write conflict", found is not None and store_at in found
       and "error: instances [0] and [1] both store y_ptr[0] (index [0, 0])" in found,
       found or err)

z = np.arange(D, dtype=np.float32)
err, found = run(lambda: rewrite[(2,)](z, D=D))
report("a load racing a store of the same value: read/write conflict",
       found is not None and "instance [1] stores z_ptr[0] (index [0]), which instance [0] loads in the same launch" in found, found or err)

# The strict option: equal values conflict as different ones do (a forgotten program id then fails).
equal_conflict = "error: instances [0] and [1] both store y_ptr[0] (index [0, 0])"
for how in ("config", "env"):
    if how == "config":
        dtsim.config(equal_stores="conflict")
    else:
        dtsim.config(equal_stores=None)
        os.environ["DTSIM_EQUAL_STORES"] = "conflict"
    for order in ("sequential", "reverse"):
        dtsim.config(order=order)
        err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0))
        report("equal_stores=conflict (%s, %s): a write-write conflict" % (how, order),
               found is not None and store_at in found and " both store y_ptr[" in found and "with equal values" not in found
               and "warning:" not in err, found or err)
    dtsim.config(order="sequential")
    err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0))
    report("equal_stores=conflict (%s): the message" % how, found is not None and equal_conflict in found, found or err)
# the option wins over the environment; the environment is read at each launch (the warning was
# printed once already: these launches print none)
dtsim.config(equal_stores="warn")
y[:] = 0
err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0))
report("equal_stores='warn' over DTSIM_EQUAL_STORES=conflict", found is None and "error" not in err, found or err)
check("equal_stores='warn': the result", y, x * 2.0)
dtsim.config(equal_stores=None)
os.environ["DTSIM_EQUAL_STORES"] = "warn"
err, found = run(lambda: pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0))
report("DTSIM_EQUAL_STORES=warn", found is None and "error" not in err, found or err)
os.environ["DTSIM_EQUAL_STORES"] = "strict"
try:
    pair_rows[(2 * R,)](x, y, D=D, SKEW=0.0)
    bad_env = None
except ValueError as e:
    bad_env = str(e)
report("a bad DTSIM_EQUAL_STORES: ValueError at launch",
       bad_env == "DTSIM_EQUAL_STORES=strict: equal_stores expects warn or conflict, got 'strict'", str(bad_env))
del os.environ["DTSIM_EQUAL_STORES"]
for bad, exc in (("strict", ValueError), (1, TypeError), (True, TypeError)):
    try:
        dtsim.config(equal_stores=bad)
        got = None
    except (TypeError, ValueError) as e:
        got = e
    report("equal_stores=%r: %s" % (bad, exc.__name__), type(got) is exc and "equal_stores expects" in str(got)
           and dtsim.config()["equal_stores"] is None, repr(got))
r = subprocess.run([sys.executable, "-m", "dtsim", "--equal-stores=strict", __file__], capture_output=True, text=True, timeout=120)
report("python -m dtsim --equal-stores=strict: usage error", r.returncode == 2
       and "'--equal-stores' expects warn or conflict, got 'strict'" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
finish("equal-value stores: warnings (conflicts with equal_stores='conflict'); different values and read/write races: findings")
