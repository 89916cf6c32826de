# Launch edge cases and option checks of the package, each with Triton's behaviour or a clear
# exception of the right type before anything runs (issue: empty grid, bad grids, bad options,
# an edit of the kernel file after decoration, a read-only output bound as a copy).
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def copy_k(x_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask), mask)


def raises(exc, fn, *words):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return e
    raise AssertionError("%s not raised" % exc.__name__)


x = np.arange(8, dtype=np.float32)
z = np.zeros_like(x)

# an empty grid launches nothing, as Triton
copy_k[(triton.cdiv(0, 64),)](x, z, 0, BLOCK=64)
copy_k[(0, 2)](x, z, 0, BLOCK=64)
assert not z.any()

# grids: a string, floats, bools are refused before running
raises(TypeError, lambda: copy_k["12"](x, z, 8, BLOCK=4), "grid must be an int or a tuple of ints", "'12'")
raises(TypeError, lambda: copy_k[(1.5,)](x, z, 8, BLOCK=4), "grid entries must be ints", "1.5")
raises(TypeError, lambda: copy_k[(True,)](x, z, 8, BLOCK=4), "grid entries must be ints")
raises(ValueError, lambda: copy_k[(-1,)](x, z, 8, BLOCK=4), ">= 0")
assert not z.any()
copy_k[(np.int64(2),)](x, z, 8, BLOCK=4)  # numpy integers are ints
assert np.array_equal(x, z)

# options: the checks of `dtsim run`'s flags
raises(ValueError, lambda: dtsim.config(threads=100000), "threads expects an integer in [1, 1024], got '100000'")
raises(ValueError, lambda: dtsim.config(threads=2**40), "threads expects an integer in [1, 1024]")
raises(ValueError, lambda: dtsim.config(threads=0), "threads expects an integer in [1, 1024]")
raises(TypeError, lambda: dtsim.config(threads="4"), "threads expects an int")
raises(ValueError, lambda: dtsim.config(order="shuffle:-1"), "order expects shuffle:SEED", "'shuffle:-1'")
raises(ValueError, lambda: dtsim.config(order="random"), "order expects sequential, reverse or shuffle:SEED")
raises(ValueError, lambda: dtsim.config(sanitize="most"), "sanitize expects none, bounds, conflicts or all")
raises(ValueError, lambda: dtsim.config(max_steps=-5), "max_steps expects an integer in [1, ")
raises(ValueError, lambda: dtsim.config(timeout=-1), "timeout expects a number of seconds > 0")
raises(TypeError, lambda: dtsim.config(print_if=[('pid0==0',)]), "print_if expects (COND, EXPRS)")
raises(TypeError, lambda: dtsim.config(print_if=('pid0==0', 5)), "expressions must be a string")
raises(TypeError, lambda: dtsim.config(nonsense=1), "unknown option 'nonsense'")
assert dtsim.config()["threads"] == 1 and dtsim.config()["order"] == "sequential", "a refused option changed the config"
dtsim.config(threads=2, order="shuffle:3", max_steps=1000, timeout=60)
copy_k[(2,)](x, z, 8, BLOCK=4)
dtsim.config(threads=1, order="sequential", max_steps=0, timeout=0)

# a 70-bit integer argument
raises(ValueError, lambda: copy_k[(2,)](x, z, 2**70, BLOCK=4), "does not fit in 64 bits")

# the environment: refused the same way (by config() and at a launch; python -m dtsim: a usage error)
here = os.path.dirname(os.path.abspath(__file__))
for var, value, words in [("DTSIM_THREADS", "100000", "threads expects an integer in [1, 1024]"),
                          ("DTSIM_ORDER", "shuffle:-1", "order expects shuffle:SEED")]:
    r = subprocess.run([sys.executable, "-c", "import dtsim; dtsim.config()"], env=dict(os.environ, **{var: value}),
                       capture_output=True, text=True)
    assert r.returncode != 0 and words in r.stderr and "Segmentation" not in r.stderr, (var, r.stderr)
    r = subprocess.run([sys.executable, "-m", "dtsim", os.path.join(here, "break_script.py")],
                       env=dict(os.environ, **{var: value}), capture_output=True, text=True)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, (var, r.returncode, r.stderr)
# python -m dtsim flags: the CLI's checks, usage errors with exit 2
for flag, words in [("--threads=abc", "'--threads' expects an integer in [1, 1024], got 'abc'"),
                    ("--order=shuffle:-1", "'--order' expects shuffle:SEED"),
                    ("--max-steps=0", "'--max-steps' expects an integer"),
                    ("--timeout=soon", "'--timeout' expects a number of seconds")]:
    r = subprocess.run([sys.executable, "-m", "dtsim", flag, os.path.join(here, "break_script.py")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, (flag, r.returncode, r.stderr)

# the source is the one of decoration time: an edit of the file afterwards does not change what runs
tmp = tempfile.mkdtemp()
try:
    kfile = os.path.join(tmp, "kmod.py")
    with open(kfile, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef fill_k(z_ptr):\n"
                "    tl.store(z_ptr + tl.arange(0, 4), tl.full((4,), 1.0, tl.float32))\n")
    sys.path.insert(0, tmp)
    import kmod
    with open(kfile, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef fill_k(z_ptr):\n"
                "    tl.store(z_ptr + tl.arange(0, 4), tl.full((4,), 2.0, tl.float32))\n")
    out = np.zeros(4, dtype=np.float32)
    kmod.fill_k[(1,)](out)
    assert np.array_equal(out, np.ones(4, dtype=np.float32)), out
finally:
    shutil.rmtree(tmp)

# a read-only output bound as a copy (non-native byte order) is refused before running
big = np.zeros(8, dtype=">f4")
big.flags.writeable = False
raises(TypeError, lambda: copy_k[(2,)](x, big, 8, BLOCK=4), "read-only array")
print("launch edge cases ok")
