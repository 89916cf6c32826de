"""dtsim's two readers of @triton.jit kernels agree: each kernel of examples/triton runs once as the
installed Triton's frontend reads it (TTIR) and once through dtsim's own .py reader (the one used
where Triton is not installed), on the same inputs; the outputs must be identical (dot products:
equal within rounding)."""
import importlib.util
import os
import sys

import numpy as np
import triton

import dtsim

examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "triton")
sys.path.insert(0, examples)
rng = np.random.default_rng(1)


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(examples, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def base(k):
    while not isinstance(k, triton.runtime.jit.JITFunction):
        k = k.fn
    return k


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def cases():
    m = load("add")
    n = 1000
    yield "add", m.add_kernel, lambda: [f32(n), f32(n), np.zeros(n, np.float32), n], {}, (triton.cdiv(n, 256),), [2]
    m = load("copy")
    yield "copy", m.copy_k, lambda: [f32(n), np.zeros(n, np.float32), n], {}, (triton.cdiv(n, 64),), [1]
    m = load("softmax")
    yield "softmax", m.softmax_kernel, lambda: [np.zeros((7, 50), np.float32), f32(7, 50), 50, 50, 50], {"BLOCK": 64}, (7,), [0]
    m = load("layernorm")
    yield ("layernorm", m._layer_norm_fwd,
           lambda: [f32(5, 100), np.zeros((5, 100), np.float32), f32(100), f32(100), np.zeros(5, np.float32),
                    np.zeros(5, np.float32), 100, 100], {}, (5,), [1, 4, 5])
    m = load("features")
    yield ("features", m.features_k, lambda: [np.arange(16, dtype=np.float32), np.zeros(64, np.float32), 5000000000, -7],
           {}, (1,), [1])
    m = load("rgb2grey")
    yield "rgb2grey", m.rgb2grey_k, lambda: [f32(20, 40, 3), np.zeros((20, 40), np.float32), 20, 40], {}, (2, 2), [1]
    m = load("swizzle")
    yield "swizzle", m.swizzle_k, lambda: [np.arange(20, dtype=np.int32).reshape(5, 4), np.zeros((5, 4), np.int32)], {}, (5, 4), [1]
    m = load("matmul_naive")
    yield ("matmul_naive", m.naive_matmul_k,
           lambda: [f32(40, 30), f32(30, 20), np.zeros((40, 20), np.float32), 40, 20, 30, 30, 1, 20, 1, 20, 1], {},
           (3, 2), [2])
    m = load("matmul_act")
    yield ("matmul_act", m.matmul_kernel,
           lambda: [f32(64, 48).astype(np.float16), f32(48, 40).astype(np.float16), np.zeros((64, 40), np.float16), 64, 40, 48],
           {"ACTIVATION": "leaky_relu"}, (4,), [2])
    m = load("ragged_sum")
    offsets = np.array([0, 5, 5, 40, 41], np.int32)
    yield ("ragged_sum", m.ragged_sum_kernel,
           lambda: [f32(41), offsets, np.zeros(4, np.float32), np.zeros(4, np.int32)], {}, (4,), [2, 3])
    m = load("shape_ops")
    idx = rng.integers(0, 64, 64).astype(np.int32)
    yield ("shape_ops", m.shape_ops,
           lambda: [f32(64), idx, np.zeros(64, np.float32), np.zeros(16, np.int32), np.zeros(128, np.float32),
                    np.zeros(128, np.float32), np.zeros((64, 2), np.float32), np.zeros(64, np.float32)],
           {"N": 64, "BINS": 16}, (1,), [2, 3, 4, 5, 6, 7])
    m = load("unsigned")
    u = rng.integers(0, 2**32 - 16, 200, dtype=np.uint32)
    v = rng.integers(1, 2**32, 200, dtype=np.uint32)
    c = rng.integers(0, 256, 200, dtype=np.uint8)
    w = rng.integers(0, 2**64, 200, dtype=np.uint64)
    yield ("unsigned", m.unsigned_kernel,
           lambda: [u, v, c, w, np.zeros(200, np.uint32), np.zeros(200, np.uint32), np.zeros(200, np.uint64), np.zeros(200, np.int32),
                    np.zeros(200, np.uint32), np.zeros(200, np.float32), np.zeros(200, np.int32), np.zeros(200, np.uint32),
                    np.zeros(8, np.uint32), np.zeros(1, np.uint32), 200], {}, (4,), list(range(4, 14)))


failures = []
for name, kernel, make, kw, grid, outs in cases():
    jit = base(kernel)
    args_t = make()
    args_r = [a.copy() if isinstance(a, np.ndarray) else a for a in args_t]
    try:
        jit[grid](*args_t, **kw)
        dtsim.JITFunction(jit.fn)[grid](*args_r, **kw)
    except Exception as e:  # noqa: BLE001 (reported per case)
        print("%-14s FAILED: %s" % (name, str(e).splitlines()[0]))
        failures.append(name)
        continue
    same = all(np.array_equal(args_t[i], args_r[i]) or
               (name.startswith("matmul") and np.allclose(args_t[i].astype(np.float64), args_r[i].astype(np.float64), rtol=1e-2, atol=1e-2))
               for i in outs)
    print("%-14s %s" % (name, "same" if same else "DIFFERENT"))
    if not same:
        failures.append(name)
if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("both readers agree on every example")
