"""The TTIR of each specialization is kept on disk under Triton's own compilation key (in Triton's
cache folder, TRITON_CACHE_DIR): a second process launching the same kernel does not run Triton's
frontend again; DTSIM_TTIR_CACHE=0 turns it off. Three child processes share a fresh cache folder:
the first compiles; the second, whose frontend is made to fail, runs from the cache; the third, with
caching off, reaches the failing frontend. Skipped (77) on Triton without triton.runtime.cache's
get_cache_key (before 3.5)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import triton
import triton.language as tl


@triton.jit
def axpy(x, y, out, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


if len(sys.argv) > 1:
    if sys.argv[1] == "no-frontend":
        import dtsim.triton_launch as tlaunch

        def refuse(self, src, options):
            raise RuntimeError("Triton's frontend was asked for TTIR")
        tlaunch._Frontend.ttir = refuse
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    axpy[(4,)](x, y, out, 2.0, 100, BLOCK=32)
    sys.exit(0 if np.array_equal(out, 2 * x + 1) else 3)

try:
    from triton.runtime.cache import get_cache_key  # noqa: F401
except ImportError:
    print("skipped: Triton %s has no triton.runtime.cache.get_cache_key" % triton.__version__)
    sys.exit(77)

env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp())


def child(mode, **extra):
    r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", os.path.abspath(__file__), mode],
                       capture_output=True, text=True, timeout=240, env=dict(env, **extra))
    return r.returncode, r.stdout + r.stderr


failures = []
rc, text = child("compile")
if rc != 0:
    failures.append("first process: rc %d\n%s" % (rc, text[-2000:]))
rc, text = child("no-frontend")
if rc != 0:
    failures.append("second process (from the cache): rc %d\n%s" % (rc, text[-2000:]))
rc, text = child("no-frontend", DTSIM_TTIR_CACHE="0")
if rc == 0 or "Triton's frontend was asked for TTIR" not in text:
    failures.append("DTSIM_TTIR_CACHE=0: the frontend was not asked (rc %d)" % rc)
if failures:
    sys.exit("\n".join(failures))
print("ttir_cache: a second process reads the TTIR from Triton's cache folder; DTSIM_TTIR_CACHE=0 compiles again")
