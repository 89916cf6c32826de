"""Every function of the installed Triton's libdevice module (triton/language/extra/cuda/libdevice.py)
called once under dtsim with each argument-type signature the module declares: the signatures are read
from the module's source, one small kernel per function and signature is generated into a temporary
directory, and each is launched on a few values. Lists the functions dtsim refuses and fails when any
is refused that is not in EXPECTED (a function added to dtsim must leave that list; one that fails
must not slip past). The forms that only this list asked for are checked by value too: the 64-bit
popc / clz / brev / ffs (popcll ...), llabs and the integer abs, mul64hi and umul64hi, norm4d and
rnorm4d, normcdf of f64."""
import importlib.util
import inspect
import math
import os
import re
import sys
import tempfile

import numpy as np
import triton
import triton.language as tl  # noqa: F401
from triton.language.extra.cuda import libdevice

import dtsim  # noqa: F401 (python -m dtsim)

# refused by dtsim, each with its reason (docs/triton.md, the libdevice rows)
EXPECTED = {
}

NP = {"fp32": "np.float32", "fp64": "np.float64", "int32": "np.int32", "uint32": "np.uint32", "int64": "np.int64", "uint64": "np.uint64",
      "int16": "np.int16", "fp16": "np.float16"}
src = inspect.getsource(libdevice)
sigs = {}
for m in re.finditer(r"def (\w+)\((.*?)\):\n(.*?)(?=\n@core\.extern|\Z)", src, re.S):
    name, body = m.group(1), m.group(3)
    for sm in re.finditer(r"\(\s*((?:core\.dtype\(\"\w+\"\),?\s*)+)\)\s*:\s*\(\s*\"(\w+)\",\s*core\.dtype\(\"(\w+)\"\)\s*\)", body):
        args = re.findall(r"core\.dtype\(\"(\w+)\"\)", sm.group(1))
        sigs.setdefault(name, []).append((args, sm.group(2), sm.group(3)))

lines = ["import triton", "import triton.language as tl", "from triton.language.extra.cuda import libdevice as ld", ""]
kernels = []
for name, forms in sorted(sigs.items()):
    for i, (args, sym, ret) in enumerate(forms):
        if any(a not in NP for a in args) or ret not in NP:
            continue
        kn = "k_%s_%d" % (name, i)
        ps = ", ".join("p%d" % j for j in range(len(args)))
        lines += ["@triton.jit", "def %s(o, %s):" % (kn, ps), "    r = tl.arange(0, 8)"]
        lines += ["    a%d = tl.load(p%d + r)" % (j, j) for j in range(len(args))]
        lines += ["    tl.store(o + r, ld.%s(%s))" % (name, ", ".join("a%d" % j for j in range(len(args)))), ""]
        kernels.append((name, sym, kn, args, ret))
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "libdevice_calls.py")
with open(path, "w") as f:
    f.write("\n".join(lines))
spec = importlib.util.spec_from_file_location("libdevice_calls", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)


def values(t):
    if t.startswith("fp"):
        return np.array([0.5, -1.5, 2.0, 0.25, 3.0, -0.0, 1.0, 7.0], getattr(np, {"fp32": "float32", "fp64": "float64", "fp16": "float16"}[t]))
    return np.array([1, 2, 3, 5, 0, 7, 11, 4], getattr(np, {"int32": "int32", "uint32": "uint32", "int64": "int64", "uint64": "uint64", "int16": "int16"}[t]))


@triton.jit
def wide_fns(w_ptr, i_ptr, x_ptr, d_ptr, f_ptr, g_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    w = tl.load(w_ptr + o)
    i = tl.load(i_ptr + o)
    x = tl.load(x_ptr + o)
    d = tl.load(d_ptr + o)
    tl.store(g_ptr + 0 * N + o, libdevice.popc(w).to(tl.int64))
    tl.store(g_ptr + 1 * N + o, libdevice.clz(w).to(tl.int64))
    tl.store(g_ptr + 2 * N + o, libdevice.brev(w))
    tl.store(g_ptr + 3 * N + o, libdevice.ffs(w).to(tl.int64))
    tl.store(g_ptr + 4 * N + o, libdevice.abs(w))
    tl.store(g_ptr + 5 * N + o, libdevice.abs(i).to(tl.int64))
    tl.store(g_ptr + 6 * N + o, libdevice.mulhi(w, w * 7 + 3))
    tl.store(g_ptr + 7 * N + o, libdevice.mulhi(w.to(tl.uint64, bitcast=True), (w * 7 + 3).to(tl.uint64, bitcast=True)).to(tl.int64, bitcast=True))
    tl.store(f_ptr + 0 * N + o, libdevice.norm4d(x, x * 2, x - 1, x * x).to(tl.float64))
    tl.store(f_ptr + 1 * N + o, libdevice.rnorm4d(x, x * 2, x - 1, x * x).to(tl.float64))
    tl.store(f_ptr + 2 * N + o, libdevice.norm4d(d, d * 2, d - 1, d * d))
    tl.store(f_ptr + 3 * N + o, libdevice.normcdf(d))


M = 256
rng = np.random.default_rng(5)
w = rng.integers(-2**63, 2**63, M, dtype=np.int64)
w[:8] = np.int64([0, 1, -1, -2**63, 2**63 - 1, 2**32, 1 << 40, -(1 << 33)])
iv = rng.integers(-2**31, 2**31, M, dtype=np.int64).astype(np.int32)
iv[0] = -2**31
x32 = rng.standard_normal(M).astype(np.float32) * 3
d64 = rng.standard_normal(M) * 3
g, f = np.zeros(8 * M, np.int64), np.zeros(4 * M, np.float64)
wide_fns[(1,)](w, iv, x32, d64, f, g, N=M)
g, f = g.reshape(8, M), f.reshape(4, M)
u = [int(v) & (2**64 - 1) for v in w]
to_s64 = lambda v: v - 2**64 if v >= 2**63 else v
wrong = []
want = {"popcll": [bin(v).count("1") for v in u], "clzll": [64 - v.bit_length() for v in u],
        "brevll": [to_s64(int(format(v, "064b")[::-1], 2)) for v in u], "ffsll": [(v & -v).bit_length() for v in u],
        "llabs": [to_s64(abs(int(v)) & (2**64 - 1)) for v in w], "abs": [(abs(int(v)) + 2**31) % 2**32 - 2**31 for v in iv]}
w2 = [to_s64((int(v) * 7 + 3) & (2**64 - 1)) for v in w]
want["mul64hi"] = [to_s64(((int(v) * y) >> 64) & (2**64 - 1)) for v, y in zip(w, w2)]
want["umul64hi"] = [to_s64(((int(v) & (2**64 - 1)) * (y & (2**64 - 1))) >> 64) for v, y in zip(w, w2)]
for k, (name, vals) in enumerate(want.items()):
    if list(g[k]) != vals:
        wrong.append(name)
x64 = x32.astype(np.float64)
n4 = np.sqrt(x64 ** 2 + (2 * x64) ** 2 + (x32 - np.float32(1)).astype(np.float64) ** 2 + (x32 * x32).astype(np.float64) ** 2)
if not np.array_equal(f[0], n4.astype(np.float32).astype(np.float64)):
    wrong.append("norm4df")
if not np.array_equal(f[1], (1 / n4).astype(np.float32).astype(np.float64)):
    wrong.append("rnorm4df")
d4 = np.sqrt(d64 ** 2 + (2 * d64) ** 2 + (d64 - 1) ** 2 + (d64 * d64) ** 2)
if np.max(np.abs(f[2] - d4) / d4) > 4e-16:
    wrong.append("norm4d")
ncdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in d64])
if np.max(np.abs(f[3] - ncdf) / ncdf) > 1e-13:  # erfc of the rounded -x / sqrt(2): relative 2 u^2 2^-53 in the left tail
    wrong.append("normcdf")
print("by value: %s" % ("all match" if not wrong else "differ: " + ", ".join(wrong)))

refused = {}
for name, sym, kn, args, ret in kernels:
    out = np.zeros(8, values(ret).dtype)
    try:
        getattr(mod, kn)[(1,)](out, *[values(a) for a in args])
    except BaseException as e:  # a refusal: dtsim's located error
        lines_e = [ln for ln in str(e).splitlines() if "error" in ln] or str(e).strip().splitlines() or [type(e).__name__]
        msg = lines_e[0].strip()
        refused.setdefault(name, []).append("%s (%s)" % (sym, msg[:160]))
print("%d libdevice functions, %d signatures called" % (len(sigs), len(kernels)))
for name in sorted(refused):
    print("refused: %-14s %s" % (name, "; ".join(refused[name])))
unexpected = sorted(set(refused) - set(EXPECTED))
stale = sorted(set(EXPECTED) - set(refused))
if stale:
    print("now supported (leave EXPECTED): " + ", ".join(stale))
if unexpected or stale or wrong:
    sys.exit("libdevice coverage: refused but not expected: %s; expected but not refused: %s; wrong values: %s" % (", ".join(unexpected) or "none", ", ".join(stale) or "none", ", ".join(wrong) or "none"))
print("libdevice: every function runs but the %d listed in EXPECTED" % len(EXPECTED))
