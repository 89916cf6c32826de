#!/usr/bin/env python3
"""Command-line errors of .py kernels (no source location): each case must exit 2 with its message
on stderr and write no output file; and `--kernel` may be left out when one @triton.jit function
is called by no other.
usage: cli.py DTSIM ROOT"""
import os
import subprocess
import sys
import tempfile


def main():
    dtsim, root = sys.argv[1], sys.argv[2]
    ex = os.path.join(root, "examples", "triton")
    tmp = tempfile.TemporaryDirectory()
    out = os.path.join(tmp.name, "z.npy")
    add = [os.path.join(ex, "add.py"), "--arg", "n_elements=100"]
    bufs = ["--buf", "x_ptr=f32[100]", "--buf", "y_ptr=f32[100]", "--buf", "out_ptr=f32[100]"]
    cases = [
        (add + bufs, "needs a launch grid: give --grid"),
        (add + ["--buf", "x_ptr=f32[100]", "--buf", "out_ptr=f32[100]", "--grid", "1"], "parameter 'y_ptr' has no value"),
        (add + bufs + ["--grid", "1", "--buf", "x_ptr=f32[3]"], "already has a type"),
        (add + bufs + ["--grid", "1", "--buf", "w=f32[3]"], "has no parameter 'w'"),
        (add + bufs[:4] + ["--buf", "out_ptr=f33[100]", "--grid", "1"], "unknown type 'f33'"),
        (add + bufs[:4] + ["--buf", "out_ptr=f32[-1]", "--grid", "1"], "extents must be positive integers"),
        (add + bufs + ["--grid", "1", "--kernel", "mul_kernel"], "no @triton.jit function named 'mul_kernel'"),
        (add + bufs + ["--grid", "1", "--arg", "nope=3"], "nope"),
        ([os.path.join(ex, "matmul_helpers.py"), "--grid", "1"], "several kernels"),
        (add + bufs + ["--grid", "1,2,3,4"], "'--grid' expects 1 to 3 extents"),
    ]
    bad = 0
    for args, want in cases:
        r = subprocess.run([dtsim, "run"] + args + ["--out", "out_ptr=" + out], capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or want not in r.stderr or os.path.exists(out):
            print("FAIL: %s\n  want exit 2 and %r, got exit %d: %s" % (" ".join(args), want, r.returncode, r.stderr.strip()))
            bad += 1
    # --kernel left out: add.py has exactly one entry point
    r = subprocess.run([dtsim, "run"] + add + bufs + ["--grid", "cdiv(n_elements, BLOCK)"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "out_ptr: f32[100]" not in r.stdout:
        print("FAIL: add.py without --kernel: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
        bad += 1
    # the other commands take the same launch flags: viz draws the .py kernel, emit --triton writes
    # a module that compiles, debug stops on the .py line
    copy = [os.path.join(ex, "copy.py"), "--buf", "x_ptr=f32[200]", "--buf", "z_ptr=f32[200]", "--arg", "n=200", "--grid", "cdiv(n, bs)"]
    svg = os.path.join(tmp.name, "v.svg")
    r = subprocess.run([dtsim, "viz"] + copy + ["-o", svg], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not open(svg).read().startswith("<svg"):
        print("FAIL: viz of copy.py: exit %d %s" % (r.returncode, r.stderr))
        bad += 1
    mod = os.path.join(tmp.name, "copy_emitted.py")
    r = subprocess.run([dtsim, "emit", "--triton"] + copy + ["-o", mod], capture_output=True, text=True, timeout=60)
    c = subprocess.run([sys.executable, "-m", "py_compile", mod], capture_output=True, text=True) if r.returncode == 0 else r
    if r.returncode != 0 or c.returncode != 0 or "@triton.jit" not in open(mod).read():
        print("FAIL: emit --triton of copy.py: %s %s" % (r.stderr, c.stderr))
        bad += 1
    r = subprocess.run([dtsim, "debug"] + copy, input="next\nquit\n", capture_output=True, text=True, timeout=60)
    if "copy.py:12  offs = pid * bs + tl.arange(0, bs)" not in r.stdout:
        print("FAIL: debug of copy.py does not step onto line 12:\n" + r.stdout + r.stderr)
        bad += 1
    print("FAIL" if bad else "PASS")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
