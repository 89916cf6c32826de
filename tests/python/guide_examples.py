# Host code as the practitioner's guide writes it (numpy instead of torch), launching the kernels of
# examples/triton through `import triton`: run with `python -m dtsim guide_examples.py`. Every output
# is checked against numpy; the script exits non-zero on a mismatch.
import os
import sys

os.environ['TRITON_INTERPRET'] = '1'  # the guide's switch: harmless under dtsim

import numpy as np
import triton
import triton.language as tl

EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "triton")
sys.path.insert(0, EX)  # matmul_naive.py imports matmul_helpers.py


def example(name):
    """examples/triton/NAME.py as a module (by path: copy.py would be the standard library's copy)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("example_" + name, os.path.join(EX, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


add_kernel = example("add").add_kernel
copy_k = example("copy").copy_k
_layer_norm_fwd = example("layernorm")._layer_norm_fwd
matmul_kernel = example("matmul_act").matmul_kernel
naive_matmul_k = example("matmul_naive").naive_matmul_k
rgb2grey_k = example("rgb2grey").rgb2grey_k
softmax_kernel = example("softmax").softmax_kernel

assert triton.__version__.endswith("+dtsim"), "import triton did not resolve to dtsim's stand-in"
rng = np.random.default_rng(0)


def check(name, got, want, tol):
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if got.size else 0.0
    print("%-14s max abs err %.3g" % (name, err))
    if not err <= tol:
        sys.exit("%s: mismatch (max abs err %g > %g)" % (name, err, tol))


def add(x, y):
    out = np.empty_like(x)
    n = x.size
    grid = lambda meta: (triton.cdiv(n, meta['BLOCK']),)
    add_kernel[grid](x, y, out, n)
    return out


x, y = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
check("add", add(x, y), x + y, 0)
check("add (cached)", add(y, x), x + y, 0)
# a runtime scalar changes without a new compilation; the rest of `out` is untouched (in place)
out = np.full(1000, 7.0, dtype=np.float32)
add_kernel[(triton.cdiv(600, 256),)](x, y, out, 600)
check("add n=600", out, np.concatenate([x[:600] + y[:600], np.full(400, 7.0, np.float32)]), 0)
assert len(add_kernel.cache) == 2, "expected 2 compiled signatures, got %d" % len(add_kernel.cache)


def copy(x, bs, kernel_fn):
    z = np.zeros_like(x)
    n = x.size
    n_blocks = triton.cdiv(n, bs)
    grid = (n_blocks,)
    kernel_fn[grid](x, z, n, bs)
    return z


x = np.arange(12, dtype=np.float32)
check("copy", copy(x, 4, copy_k), x, 0)


def rgb2grey(x, bs):
    h, w, c = x.shape
    out = np.empty((h, w), dtype=x.dtype)
    grid = lambda meta: (triton.cdiv(h, meta['bs0']), triton.cdiv(w, meta['bs1']))
    rgb2grey_k[grid](x, out, h, w, bs0=bs[0], bs1=bs[1])
    return out


img = rng.random((37, 50, 3), dtype=np.float32)
check("rgb2grey", rgb2grey(img, (16, 32)), 0.2989 * img[..., 0] + 0.5870 * img[..., 1] + 0.1140 * img[..., 2], 1e-5)


def matmul(a, b, bs=16):
    (m, k), (_, n) = a.shape, b.shape
    c = np.empty((m, n), dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(m, meta['bm']), triton.cdiv(n, meta['bn']))
    naive_matmul_k[grid](a, b, c, m, n, k, a.strides[0] // 4, a.strides[1] // 4, b.strides[0] // 4, b.strides[1] // 4,
                         c.strides[0] // 4, c.strides[1] // 4, bm=bs, bn=bs, bk=bs)
    return c


a, b = rng.standard_normal((40, 50), dtype=np.float32), rng.standard_normal((50, 30), dtype=np.float32)
check("matmul_naive", matmul(a, b), a @ b, 1e-4)
# a transposed view: the buffer is its span of storage, the strides say how to walk it
bt = np.ascontiguousarray(b.T).T
check("matmul_naive bT", matmul(a, bt), a @ b, 1e-4)

a16, b16 = rng.standard_normal((70, 40)).astype(np.float16), rng.standard_normal((40, 50)).astype(np.float16)
c16 = np.empty((70, 50), dtype=np.float16)
matmul_kernel[lambda meta: (triton.cdiv(70, meta['BM']) * triton.cdiv(50, meta['BN']),)](a16, b16, c16, 70, 50, 40,
                                                                                          ACTIVATION="leaky_relu")
ref = a16.astype(np.float32) @ b16.astype(np.float32)
check("matmul_act", c16, np.where(ref >= 0, ref, 0.01 * ref).astype(np.float16), 2e-2)


def softmax(x):
    rows, cols = x.shape
    y = np.empty_like(x)
    softmax_kernel[(rows,)](y, x, x.strides[0] // 4, y.strides[0] // 4, cols, BLOCK=triton.next_power_of_2(cols))
    return y


x = rng.uniform(-3, 3, (10, 50)).astype(np.float32)
e = np.exp(x - x.max(axis=1, keepdims=True))
check("softmax", softmax(x), e / e.sum(axis=1, keepdims=True), 1e-6)

x = rng.standard_normal((6, 100), dtype=np.float32)
w, bias = rng.standard_normal(100, dtype=np.float32), rng.standard_normal(100, dtype=np.float32)
y, mean, rstd = np.empty_like(x), np.empty(6, np.float32), np.empty(6, np.float32)
_layer_norm_fwd[(6,)](x, y, w, bias, mean, rstd, 100, 100, BLOCK_SIZE=64)
mu, var = x.mean(axis=1), x.var(axis=1)
check("layernorm", y, (x - mu[:, None]) / np.sqrt(var[:, None] + 1e-5) * w + bias, 1e-4)
check("layernorm mean", mean, mu, 1e-5)
print("all outputs match numpy")
