# `pip install --no-build-isolation --no-deps --target DIR .` of the source tree, then a kernel run
# from outside the source tree with only DIR on the path: the installed package (its _dtsim built by
# setup.py through CMake) is the one imported, through the DTSIM_TRITON=1 start-up hook and by
# `python -m dtsim`.
#   pip_install.py SOURCE_DIR BUILD_DIR   (BUILD_DIR: the CMake tree setup.py reuses, DTSIM_BUILD_DIR)
# Exits 77 (skip) when pip or setuptools is missing.
import os
import subprocess
import sys
import tempfile

source, build = sys.argv[1], sys.argv[2]
for mod in ("pip", "setuptools"):
    if subprocess.run([sys.executable, "-c", "import " + mod], capture_output=True).returncode != 0:
        print("python3 has no %s: skipped" % mod)
        sys.exit(77)

KERNEL = '''
import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


x = np.arange(1000, dtype=np.float32)
out = np.empty_like(x)
add_kernel[(triton.cdiv(1000, 256),)](x, x, out, 1000, BLOCK=256)
assert np.array_equal(out, 2 * x)
try:
    add_kernel[(4,)](x, x, out, 1024, BLOCK=256)
    raise SystemExit("no finding")
except dtsim.KernelError as e:
    assert e.kind == "out-of-bounds" and e.pid == (3, 0, 0), e
print("installed dtsim from", dtsim.__file__)
'''

with tempfile.TemporaryDirectory() as tmp:
    target = os.path.join(tmp, "site")
    env = dict(os.environ, DTSIM_BUILD_DIR=build, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-cache-dir", "--target", target,
           source]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    print(r.stdout[-3000:], r.stderr[-3000:])
    if r.returncode != 0:
        sys.exit("pip install failed (exit %d)" % r.returncode)
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    script = os.path.join(work, "script.py")
    with open(script, "w") as f:
        f.write(KERNEL)
    hook = dict(os.environ, PYTHONPATH=target + os.pathsep + os.path.join(target, "dtsim", "hook"), DTSIM_TRITON="1")
    for args, run_env in (([script], hook), (["-m", "dtsim", script], dict(os.environ, PYTHONPATH=target))):
        r = subprocess.run([sys.executable] + args, cwd=work, env=run_env, capture_output=True, text=True)
        print(r.stdout, r.stderr)
        if r.returncode != 0:
            sys.exit("the installed package failed: %s" % " ".join(args))
        installed = os.path.realpath(os.path.join(target, "dtsim"))
        if installed not in r.stdout:
            sys.exit("the package imported was not the installed one")
print("pip install --target: ok")
