#!/usr/bin/env python3
"""Tests of bench/tune_experiment.py's pieces that need no GPU:
  tutorial_loader   a tutorial-like file keeps its imports, functions, classes and assignments; its
                    top-level tests and benchmarks (expressions, asserts, if/for blocks, assignments
                    that call a function of the file that launches a kernel) do not run
  table             one column per baseline, the fastest baseline over dtsim's best, '-' where none
usage: test_experiment.py SOURCE_DIR CASE"""
import contextlib
import io
import os
import sys
import tempfile

TUTORIAL = '''import math
RAN = []
def helper():
    return 2
def launch(x):
    KERNEL[(1,)](x)
def run_me(x):
    RAN.append(x)
    launch(x)
    return x
class Thing:
    pass
SCALE = math.sqrt(4) * helper()
result = run_me(1)
run_me(2)
assert False, "a test"
if __name__ == "__main__":
    run_me(3)
for i in range(3):
    run_me(4)
'''


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg)
        sys.exit(1)


def tutorial_loader(te):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "01-made-up.py")
        with open(path, "w") as f:
            f.write(TUTORIAL)
        mod = te.load_tutorial(path)
        check(mod.SCALE == 4.0 and mod.helper() == 2 and isinstance(mod.Thing(), mod.Thing), "definitions kept")
        check(mod.RAN == [] and not hasattr(mod, "result"), "nothing of the file's own tests ran")
        check(mod.run_me.__code__.co_filename == path, "functions keep their file (Triton reads their source)")


def table(te):
    rows = [{"op": "softmax", "sizes": "x=8 y=8", "baselines": {"torch": 0.5, "torch.compile": 0.4, "Liger": 0.2}, "best_ms": 0.25,
             "notes": ["Triton tutorial: not run (no --tutorials DIR)"]},
            {"op": "matmul", "sizes": "x=8 y=8 k=8", "baselines": {}, "best_ms": None, "notes": []}]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        te.print_table(rows, "a device")
    lines = out.getvalue().splitlines()
    head = next(l for l in lines if l.startswith("| op |"))
    for b in te.BASELINES:
        check(f"| {b} ms |" in head, f"a column for {b}")
    soft = next(l for l in lines if l.startswith("| softmax |"))
    check("| Liger | 0.80x |" in soft, "the fastest baseline and its time over dtsim's best: " + soft)
    mm = next(l for l in lines if l.startswith("| matmul |"))
    check("| - | - |" in mm, "no baseline, no ratio")


if __name__ == "__main__":
    src, case = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(src, "bench"))
    import tune_experiment
    globals()[case](tune_experiment)
    print("ok")
