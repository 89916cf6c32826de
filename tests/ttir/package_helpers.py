"""@triton.jit helpers reached through packages: a package's own function (`pkg.f`), a function its
__init__.py takes from a submodule with `import *`, a submodule imported from the package (`from pkg
import sub`), a dotted `import pkg.sub.mod` used as `pkg.sub.mod.f`, relative imports one and two
levels up inside the package, a package's tl.constexpr, and a package found only through sys.path
(not the kernel's folder). Run with `python -m dtsim package_helpers.py`: the installed Triton's
frontend reads the kernel, and DTSIM_STANDIN=1 dtsim's own reader, which must resolve the same
imports (it looks in the kernel's folder, then sys.path)."""
import os
import sys

import numpy as np
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "roots"))

import helper_pkg  # noqa: E402
import helper_pkg.nested.ops  # noqa: E402
import outside_pkg as outside  # noqa: E402
from helper_pkg import scale, twice  # noqa: E402
from helper_pkg.nested import ops as nops  # noqa: E402

import dtsim  # noqa: E402,F401
from ttir_check import check, finish  # noqa: E402


@triton.jit
def through_packages(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(y_ptr + 0 * N + o, helper_pkg.twice(x))
    tl.store(y_ptr + 1 * N + o, helper_pkg.halve(x))
    tl.store(y_ptr + 2 * N + o, scale.cube(x))
    tl.store(y_ptr + 3 * N + o, helper_pkg.nested.ops.twice_halve_plus(x, 1.0))
    tl.store(y_ptr + 4 * N + o, nops.twice_halve_plus(x, helper_pkg.SHIFT))
    tl.store(y_ptr + 5 * N + o, outside.neg(twice(x)))
    tl.store(y_ptr + 6 * N + o, helper_pkg.scale_mod.halve(x))


n = 64
x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
y = np.zeros(7 * n, np.float32)
through_packages[(1,)](x, y, N=n)
y = y.reshape(7, n)
check("pkg.f (the package's own)", y[0], x * 2)
check("pkg.f (from a submodule with import *)", y[1], x * np.float32(0.5))
check("from pkg import submodule", y[2], x * x * x)
check("import pkg.sub.mod; pkg.sub.mod.f", y[3], x + np.float32(1.0))
check("relative imports and pkg.CONSTEXPR", y[4], x + np.float32(3.0))
check("a package reached through sys.path", y[5], -(x * 2))
check("from . import sub as alias", y[6], x * np.float32(0.5))
finish("package_helpers: %d helpers through packages" % 7)
