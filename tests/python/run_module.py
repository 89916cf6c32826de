# `python -m dtsim -m MODULE ARGS` runs a module as `python -m MODULE ARGS` would (pytest suites, say),
# its kernels on dtsim: the module is found from the working folder, runs as __main__ with its own
# argv, its exit status is the process's, and a finding is raised in it as from a script.
import os
import subprocess
import sys
import tempfile

MODULE = '''
import sys
import numpy as np
import triton
import triton.language as tl


@triton.jit
def scale_k(x_ptr, y_ptr, n, limit, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < limit)


assert __name__ == "__main__", __name__
LIMIT = 1 << 30 if sys.argv[1] == "good" else 0
x = np.arange(10, dtype=np.float32)
y = np.zeros(10, np.float32)
scale_k[(2,)](x, y, 10, LIMIT, BLOCK=8)   # 16 lanes for 10 elements: the "bad" run's store mask is missing
assert (y == 3 * x).all(), y
print("module ran:", sys.argv[0].endswith("kmod.py"), sys.argv[1:])
sys.exit(int(sys.argv[2]))
'''


def run(args, cwd):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "dtsim"] + args, cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240)


with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "kmod.py"), "w") as f:
        f.write(MODULE.replace("mask=offs < limit", "mask=(offs < n) & (offs < limit)"))
    with open(os.path.join(d, "kbad.py"), "w") as f:  # the store has no bounds mask: out of bounds
        f.write(MODULE.replace("kmod.py", "kbad.py").replace("mask=offs < limit", "mask=offs >= 0"))
    p = run(["-m", "kmod", "good", "0"], d)
    assert p.returncode == 0 and "module ran: True ['good', '0']" in p.stdout, p.stdout
    p = run(["-m", "kmod", "good", "5"], d)  # the module's exit status is the process's
    assert p.returncode == 5, (p.returncode, p.stdout)
    p = run(["--sanitize=all", "-m", "kbad", "good", "0"], d)
    assert p.returncode != 0 and "out of bounds" in p.stdout and "kbad.py:11:5: error: out-of-bounds store" in p.stdout, p.stdout
    p = run(["-m", "no_such_module_here"], d)
    assert p.returncode == 1 and "No module named no_such_module_here" in p.stdout, p.stdout
    p = run(["-m"], d)
    assert p.returncode == 2 and "'-m' needs a module name" in p.stdout, p.stdout
print("ok")
