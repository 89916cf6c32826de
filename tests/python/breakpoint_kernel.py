"""Python's breakpoint() inside a kernel stops the debugger at that line in every instance (as
breakpoint() stops pdb under TRITON_INTERPRET=1); pdb.set_trace() in a kernel is an error naming what
works; at the stop the REPL evaluates Triton expressions (tl.max(x, axis=0), x[3], x.shape) over the
instance's values. Runs a child `python -m dtsim` with debugger commands on its stdin, under whichever package
the interpreter has (Triton's own, or dtsim's stand-in). Exits 0 when both behave."""
import os
import subprocess
import sys
import tempfile

CHILD = '''import numpy as np
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    breakpoint()
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


x = np.arange(100, dtype=np.float32)
k[(2,)](x, 100, BLOCK=64)
print("after the launch:", x[:3], x[99])
'''

PDB = '''import pdb
import numpy as np
import triton
import triton.language as tl


@triton.jit
def k(x_ptr):
    pdb.set_trace()
    tl.store(x_ptr, 1.0)


k[(1,)](np.zeros(1, np.float32))
'''


def run(src, stdin):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kern.py")
        with open(path, "w") as f:
            f.write(src)
        p = subprocess.run([sys.executable, "-m", "dtsim", path], input=stdin, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONWARNINGS="ignore"))
        return p.returncode, p.stdout + p.stderr


failures = []
rc, out = run(CHILD, "p x\np tl.max(x, axis=0)\np x[3]\np x.shape\np (x * 2)[1:3]\nc\nwhere\nc\n")
checks = [
    (rc == 0, "exit 0"),
    (out.count("kern.py:10  breakpoint()") == 2, "a stop at line 10 in each of the 2 instances"),
    ("pid [0]" in out and "pid [1]" in out, "both pids named"),
    ("x: f32[64] = [ 0.  1.  2." in out, "the instance's values printable at the stop"),
    ("tl.max(x, axis=0): f32 = 63.0" in out, "a tl.* function of the instance's values"),
    ("x[3]: f32 = 3.0" in out, "an element of a tile"),
    ("x.shape = (64,)" in out, "a tensor attribute"),
    ("(x * 2)[1:3]: f32[2] = [2. 4.]" in out, "a slice of an expression's value"),
    ("after the launch: [1. 2. 3.] 100.0" in out, "the kernel ran to its end after `c`"),
]
rc2, out2 = run(PDB, "")
checks += [
    (rc2 != 0, "pdb.set_trace() in a kernel fails"),
    ("kern.py:9:" in out2 and "breakpoint()" in out2 and "--break-at" in out2, "its message names breakpoint() and --break-at"),
]
for ok, what in checks:
    print("%-60s %s" % (what, "ok" if ok else "FAILED"))
    if not ok:
        failures.append(what)
if failures:
    print(out)
    print(out2)
    sys.exit(1)
print("breakpoint() and pdb.set_trace() in kernels behave")
