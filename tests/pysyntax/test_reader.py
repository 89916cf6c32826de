#!/usr/bin/env python3
"""The .py reader beyond the syntax check: only the launched kernel and what it calls must be in the
supported subset. A kernel that is never launched may use what the subset lacks (raise, with, try,
a nested def) without blocking the others; launching it, or calling a helper that does, reports the
construct at its line. usage: test_reader.py DTSIM"""
import os
import subprocess
import sys
import tempfile

SRC = '''import triton
import triton.language as tl


@triton.jit
def good(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.load(x_ptr + o) + 1.0)


@triton.jit
def unsupported(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    if o.shape[0] != 64:
        raise ValueError("bad shape")
    tl.store(z_ptr + o, 1.0)


@triton.jit
def helper(x):
    with open("f") as f:
        pass
    return x


@triton.jit
def calls_helper(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, helper(tl.load(x_ptr + o)))
'''


def main():
    dtsim = sys.argv[1]
    failed = []

    def check(cond, what, r):
        if not cond:
            failed.append(f"{what}\n  exit {r.returncode}\n  stdout: {r.stdout[-1500:]}\n  stderr: {r.stderr[-1500:]}")

    with tempfile.TemporaryDirectory(prefix="dtsim-reader-") as d:
        path = os.path.join(d, "kernels.py")
        with open(path, "w") as f:
            f.write(SRC)
        base = [dtsim, "run", path, "--buf", "x_ptr=f32[64]", "--buf", "z_ptr=f32[64]", "--grid", "1", "--kernel"]
        run = lambda k: subprocess.run(base + [k], capture_output=True, text=True, timeout=120)
        r = run("good")
        check(r.returncode == 0 and "z_ptr: f32[64]" in r.stdout, "a kernel beside one that uses raise did not run", r)
        r = run("unsupported")
        check(r.returncode == 2 and f"{path}:15:9: error:" in r.stderr and "raise" in r.stderr,
              "launching the kernel that uses raise did not report it at its line", r)
        r = run("calls_helper")
        check(r.returncode == 2 and f"{path}:21:5: error:" in r.stderr and "with" in r.stderr,
              "a called helper that uses with was not reported at its line", r)
        # Without --kernel: the entry points are the kernels no other calls (helper is called).
        r = subprocess.run(base[:-1], capture_output=True, text=True, timeout=120)
        check(r.returncode == 2 and "several kernels (good, unsupported, calls_helper)" in r.stderr,
              "the entry points of a file with an unreadable kernel", r)
    for f in failed:
        print("FAIL", f)
    print(f"{4 - len(failed)}/4 passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
