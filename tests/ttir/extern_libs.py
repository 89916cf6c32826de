"""A libdevice function launched with extern_libs={'libdevice': PATH}, as Triton's tutorial 07 does:
the option is accepted (the path need not exist: dtsim evaluates the libdevice functions it knows
itself) and the result matches numpy; through Triton's TTIR (python -m dtsim with Triton installed)
or dtsim's own reader (DTSIM_STANDIN=1), where a malformed extern_libs is a TypeError."""
import os
import sys

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

import dtsim  # noqa: F401 (python -m dtsim)


@triton.jit
def asin_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, libdevice.asin(tl.load(x_ptr + offs, mask=m)), mask=m)


n = 1000
x = np.random.default_rng(3).random(n).astype(np.float32)
libs = {"libdevice": os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-such-dir", "libdevice.10.bc")}
for kw in ({}, {"extern_libs": libs}):
    y = np.zeros(n, np.float32)
    asin_k[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, **kw)
    err = float(np.max(np.abs(y.astype(np.float64) - np.arcsin(x.astype(np.float64)))))
    if not err < 3e-7:  # 2.5 ulps at pi/2
        sys.exit("asin with %r: max error %g" % (kw, err))
    print("asin %s: max error %.3g" % ("with extern_libs" if kw else "without extern_libs", err))
if triton.__version__.endswith("+dtsim"):
    try:
        asin_k[(1,)](x, np.zeros(n, np.float32), n, BLOCK=256, extern_libs=["libdevice"])
        sys.exit("a list as extern_libs was accepted")
    except TypeError as e:
        assert "extern_libs must be a dict" in str(e), e
        print("a malformed extern_libs: TypeError")
