#!/usr/bin/env python3
"""Runs one Triton example kernel (examples/triton/*.py) through `dtsim run` on chosen inputs and
compares every output with a reference computed here in plain Python (no numpy, no triton).
  run_kernel.py DTSIM CASE                     on the interpreter (CASE: one of CASES; `list` prints them)
  run_kernel.py DTSIM CASE --backend=cuda      on the GPU backend; exit 77 (skip) without a GPU
  run_kernel.py DTSIM CASE --triton-interpret  the .py file itself under TRITON_INTERPRET=1 (Triton's
                                               interpreter, torch tensors) against the same reference;
                                               exit 77 where triton or torch is not importable
  bug_* cases: the planted bug is reported (exit 1, the finding's text) and no --out file is written."""
import math
import os
import re
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EX = os.path.join(ROOT, "examples", "triton")

_CODES = {"f32": ("<f4", "f", 4), "f16": ("<f2", "e", 2), "i32": ("<i4", "i", 4), "f64": ("<f8", "d", 8),
          "i8": ("|i1", "b", 1), "i16": ("<i2", "h", 2)}


def write_npy(path, shape, values, dtype="f32"):
    descr, fmt, _ = _CODES[dtype]
    shape_txt = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    header = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def read_npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode("latin1")
    for descr, (code, fmt, size) in ((v[0], v) for v in _CODES.values()):
        if "'%s'" % descr in header:
            n = (len(data) - 10 - hlen) // size
            return list(struct.unpack("<%d%s" % (n, fmt), data[10 + hlen:]))
    raise SystemExit("FAIL: unexpected dtype in " + header)


def rand(n, seed, lo=-1.0, hi=1.0):
    r = random.Random(seed)
    return [r.uniform(lo, hi) for _ in range(n)]


def f16(v):
    return struct.unpack("<e", struct.pack("<e", v))[0]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def matmul(a, b, m, k, n):
    return [sum(a[i * k + p] * b[p * n + j] for p in range(k)) for i in range(m) for j in range(n)]


def swizzle2d(i, j, size_i, size_j, size_g):
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = min(size_i - off_i, size_g)
    ij = ij % size_gj
    return off_i + ij % size_g, ij // size_g


# Each case: (file, flags, inputs {name: (shape, dtype, values)}, outputs {name: (shape, dtype)},
#             reference(inputs) -> {name: values}, tolerance, extra checks on stdout)
def case_add():
    n = 1000
    x, y = rand(n, 1), rand(n, 2)
    return ("add.py", ["--arg", "n_elements=%d" % n, "--grid", "cdiv(n_elements, BLOCK)"],
            {"x_ptr": ([n], "f32", x), "y_ptr": ([n], "f32", y)}, {"out_ptr": ([n], "f32")},
            lambda: {"out_ptr": [f32(a + b) for a, b in zip(x, y)]}, 1e-6, None)


def case_copy():
    n = 200
    x = [f32(v) for v in rand(n, 3)]

    def prints(out):
        lines = [l for l in out.splitlines() if l.startswith("pid [")]
        want = ["pid [1] pid = 1", "pid [1] offs = [ 64", "pid [1] mask = [ True", "pid [1] x = ["]
        if len(lines) != 4 or any(not l.startswith(w) for l, w in zip(lines, want)):
            return "print_if('=1') should print 4 lines for pid 1 only, got:\n" + "\n".join(lines)
        return None
    return ("copy.py", ["--arg", "n=%d" % n, "--grid", "cdiv(n, bs)"], {"x_ptr": ([n], "f32", x)},
            {"z_ptr": ([n], "f32")}, lambda: {"z_ptr": x}, 0, prints)


def case_rgb2grey():
    h, w = 37, 50
    img = rand(h * w * 3, 4, 0.0, 1.0)
    ref = [f32(0.2989 * img[3 * p] + 0.5870 * img[3 * p + 1] + 0.1140 * img[3 * p + 2]) for p in range(h * w)]
    return ("rgb2grey.py", ["--arg", "h=%d" % h, "--arg", "w=%d" % w, "--grid", "cdiv(h, bs0), cdiv(w, bs1)"],
            {"x_ptr": ([h, w, 3], "f32", img)}, {"out_ptr": ([h, w], "f32")}, lambda: {"out_ptr": ref}, 1e-5, None)


def case_matmul_naive():
    m, k, n = 40, 50, 30
    a, b = rand(m * k, 5), rand(k * n, 6)
    flags = ["--arg", "m=%d" % m, "--arg", "n=%d" % n, "--arg", "k=%d" % k, "--arg", "stride_am=%d" % k, "--arg", "stride_ak=1",
             "--arg", "stride_bk=%d" % n, "--arg", "stride_bn=1", "--arg", "stride_cm=%d" % n, "--arg", "stride_cn=1",
             "--grid", "cdiv(m, bm), cdiv(n, bn)"]
    return ("matmul_naive.py", flags, {"a_ptr": ([m, k], "f32", a), "b_ptr": ([k, n], "f32", b)}, {"c_ptr": ([m, n], "f32")},
            lambda: {"c_ptr": matmul(a, b, m, k, n)}, 1e-5, None)


def case_swizzle():
    gm, gn = 5, 4
    x = list(range(gm * gn))
    z = [0] * (gm * gn)
    for i in range(gm):
        for j in range(gn):
            ni, nj = swizzle2d(i, j, gm, gn, 3)
            z[ni * gn + nj] = x[i * gn + j]
    return ("swizzle.py", ["--grid", "%d,%d" % (gm, gn)], {"x_ptr": ([gm, gn], "i32", x)}, {"z_ptr": ([gm, gn], "i32")},
            lambda: {"z_ptr": z}, 0, None)


def case_grouped_matmul():
    m, k, n = 70, 40, 50
    a, b = rand(m * k, 7), rand(k * n, 8)
    return ("grouped_matmul.py", ["--arg", "m=%d" % m, "--arg", "n=%d" % n, "--arg", "k=%d" % k, "--grid", "cdiv(m, bm), cdiv(n, bn)"],
            {"a_ptr": ([m, k], "f32", a), "b_ptr": ([k, n], "f32", b)}, {"c_ptr": ([m, n], "f32")},
            lambda: {"c_ptr": matmul(a, b, m, k, n)}, 1e-5, None)


def case_softmax():
    rows, cols = 10, 50
    x = rand(rows * cols, 9, -3.0, 3.0)

    def ref():
        y = []
        for r in range(rows):
            row = x[r * cols:(r + 1) * cols]
            mx = max(row)
            e = [math.exp(v - mx) for v in row]
            s = sum(e)
            y += [v / s for v in e]
        return {"y_ptr": y}
    flags = ["--arg", "n_cols=%d" % cols, "--arg", "x_row_stride=%d" % cols, "--arg", "y_row_stride=%d" % cols, "--arg", "BLOCK=64",
             "--grid", str(rows)]
    return ("softmax.py", flags, {"x_ptr": ([rows, cols], "f32", x)}, {"y_ptr": ([rows, cols], "f32")}, ref, 1e-5, None)


def matmul_act(activation):
    m, k, n = 70, 40, 50
    a = [f16(v) for v in rand(m * k, 10)]
    b = [f16(v) for v in rand(k * n, 11)]

    def ref():
        c = matmul(a, b, m, k, n)
        if activation == "leaky_relu":
            c = [v if v >= 0 else 0.01 * v for v in c]
        return {"c_ptr": [f16(v) for v in c]}
    flags = ["--arg", "M=%d" % m, "--arg", "N=%d" % n, "--arg", "K=%d" % k, "--grid", "cdiv(M, BM) * cdiv(N, BN)"]
    if activation:
        flags += ["--arg", "ACTIVATION=" + activation]
    return ("matmul_act.py", flags, {"a_ptr": ([m, k], "f16", a), "b_ptr": ([k, n], "f16", b)}, {"c_ptr": ([m, n], "f16")},
            ref, 2e-3, None)


def case_layernorm():
    rows, n = 6, 100
    x, w, b = rand(rows * n, 12), rand(n, 13), rand(n, 14)

    def ref():
        y, means, rstds = [], [], []
        for r in range(rows):
            row = x[r * n:(r + 1) * n]
            mean = sum(row) / n
            var = sum((v - mean) ** 2 for v in row) / n
            rstd = 1 / math.sqrt(var + 1e-5)
            y += [(v - mean) * rstd * w[i] + b[i] for i, v in enumerate(row)]
            means.append(mean)
            rstds.append(rstd)
        return {"Y": y, "Mean": means, "Rstd": rstds}
    return ("layernorm.py", ["--arg", "stride=%d" % n, "--arg", "N=%d" % n, "--grid", str(rows)],
            {"X": ([rows, n], "f32", x), "W": ([n], "f32", w), "B": ([n], "f32", b)},
            {"Y": ([rows, n], "f32"), "Mean": ([rows], "f32"), "Rstd": ([rows], "f32")}, ref, 1e-4, None)


def tf32(v):
    """Rounds an f32 value to tf32 (10 mantissa bits, to nearest, ties away from zero)."""
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    return struct.unpack("<f", struct.pack("<I", (bits + 0x1000) & 0xFFFFE000))[0]


def case_dot_precision():
    n = 32
    a, b = [f32(v) for v in rand(n * n, 15)], [f32(v) for v in rand(n * n, 16)]
    exact = matmul(a, b, n, n, n)
    rounded = matmul([tf32(v) for v in a], [tf32(v) for v in b], n, n, n)
    return ("dot_precision.py", ["--grid", "1"], {"a_ptr": ([n, n], "f32", a), "b_ptr": ([n, n], "f32", b)},
            {"c_default": ([n, n], "f32"), "c_ieee": ([n, n], "f32"), "c_no_tf32": ([n, n], "f32")},
            lambda: {"c_default": rounded, "c_ieee": exact, "c_no_tf32": exact}, 2e-6, None)


def interpreter_dot_precision():
    n = 32
    a, b = [f32(v) for v in rand(n * n, 15)], [f32(v) for v in rand(n * n, 16)]
    return {"c_default": matmul(a, b, n, n, n)}


def fp8_table(mbits, bias, has_inf):
    """Every finite non-negative fp8 value, by the format's definition (pattern order)."""
    out = []
    for p in range(128):
        e, m = p >> mbits, p & ((1 << mbits) - 1)
        if e == (1 << (7 - mbits)) - 1 and (has_inf or m == (1 << mbits) - 1):
            break
        out.append(m * 2.0 ** (1 - bias - mbits) if e == 0 else (m + (1 << mbits)) * 2.0 ** (e - bias - mbits))
    return out


def fp8_round(v, table):
    """v rounded to the nearest fp8 value (ties: the even pattern), saturating at the largest."""
    a = min(abs(v), table[-1])
    best = min(range(len(table)), key=lambda p: (abs(table[p] - a), p % 2))
    return math.copysign(table[best], v)


def wrap(v, bits):
    return (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def case_narrow_types():
    n = 1024  # the dot reads v_ptr[0:1024]
    r = random.Random(18)
    x = [r.randrange(-128, 128) for _ in range(n)]
    h = [r.randrange(-32768, 32768) for _ in range(n)]
    v = [f32(t) for t in rand(n, 19, -500.0, 500.0)]
    e4, e5 = fp8_table(3, 7, False), fp8_table(2, 15, True)
    a = [fp8_round(v[i * 32 + j], e4) for i in range(32) for j in range(32)]
    b = [fp8_round(v[i + j * 32], e5) for i in range(32) for j in range(32)]
    return ("narrow_types.py", ["--arg", "n=%d" % n, "--grid", "cdiv(n, BLOCK)"],
            {"x_ptr": ([n], "i8", x), "h_ptr": ([n], "i16", h), "v_ptr": ([n], "f32", v)},
            {"y8_ptr": ([n], "i8"), "y16_ptr": ([n], "i16"), "q_ptr": ([n], "f32"), "c_ptr": ([32, 32], "f32")},
            lambda: {"y8_ptr": [wrap(t * t + t, 8) for t in x], "y16_ptr": [wrap(s * 3 - t, 16) for s, t in zip(h, x)],
                     "q_ptr": [f32(fp8_round(t, e4) + fp8_round(f32(t * 100000.0), e5)) for t in v],
                     "c_ptr": matmul(a, b, 32, 32, 32)}, 1e-6, None)


# Outputs where TRITON_INTERPRET=1 differs from Triton on the GPU (and from dtsim) by design.
INTERPRETER_REFERENCE = {"dot_precision": interpreter_dot_precision}


def case_ragged_sum():
    lengths = [5, 0, 16, 17, 50, 1, 33, 0, 32]
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    x = [f32(v) for v in rand(offsets[-1], 17)]
    segs, block = len(lengths), 16

    def ref():
        sums = [sum(x[offsets[s]:offsets[s + 1]]) for s in range(segs)]
        trips = [(n + block - 1) // block for n in lengths]
        return {"out_ptr": sums, "trips_ptr": trips}
    return ("ragged_sum.py", ["--grid", str(segs)],
            {"x_ptr": ([len(x)], "f32", x), "offsets_ptr": ([segs + 1], "i32", offsets)},
            {"out_ptr": ([segs], "f32"), "trips_ptr": ([segs], "i32")}, ref, 1e-5, None)


def case_shape_ops():
    n, bins = 64, 16
    x = [f32(v) for v in rand(n, 21)]
    r = random.Random(22)
    idx = [r.randrange(0, n) for _ in range(n)]

    def ref():
        q = n // 8  # y = x as [2, 4, q]; permute (2, 0, 1) -> [q, 2, 4]
        return {"g_ptr": [x[i] for i in idx], "h_ptr": [sum(1 for i in idx if i % bins == b) for b in range(bins)],
                "c_ptr": x + [f32(v * 2.0) for v in x], "il_ptr": [w for v in x for w in (v, f32(v + 1.0))],
                "j_ptr": [w for v in x for w in (v, -v)],
                "p_ptr": [x[a * 4 * q + b * q + c] for c in range(q) for a in range(2) for b in range(4)]}
    return ("shape_ops.py", ["--arg", "N=%d" % n, "--arg", "BINS=%d" % bins, "--grid", "1"],
            {"x_ptr": ([n], "f32", x), "idx_ptr": ([n], "i32", idx)},
            {"g_ptr": ([n], "f32"), "h_ptr": ([bins], "i32"), "c_ptr": ([2 * n], "f32"), "il_ptr": ([2 * n], "f32"),
             "j_ptr": ([n, 2], "f32"), "p_ptr": ([n], "f32")}, ref, 0, None)


FEATURES = [-4, 1, -3, -1, -3.5, 1, 1, 37, 7, -14, 1, -1, 10, 1, 0, 120, 15, 15, 0, 0, 6, 22, 38, 54, 28, 0, 24, 68, 1256, 0.5,
            14.5, 3, 3, 32, 8, 1, 14400, 16, 1, 6, 243, 2.5]


def case_features():
    x = [float(i) for i in range(16)]
    return ("features.py", ["--arg", "big=5000000000", "--arg", "neg=-7", "--grid", "1"], {"x_ptr": ([16], "f32", x)},
            {"out": ([64], "f32")}, lambda: {"out": FEATURES}, 1e-6, None)


def bug(file, message, line):
    def case():
        n = 200
        return (file, ["--arg", "n=%d" % n, "--grid", "cdiv(n, bs)"], {"x_ptr": ([n], "f32", rand(n, 3))}, {"z_ptr": ([n], "f32")},
                None, (message, line), None)
    return case


def matmul_bug(file, message, line):
    def case():
        m, k, n = 64, 40, 64
        flags = ["--arg", "M=%d" % m, "--arg", "N=%d" % n, "--arg", "K=%d" % k, "--grid", "cdiv(M, BM) * cdiv(N, BN)"]
        return (file, flags, {"a_ptr": ([m, k], "f16", [f16(v) for v in rand(m * k, 12)]),
                              "b_ptr": ([k, n], "f16", [f16(v) for v in rand(k * n, 13)])},
                {"c_ptr": ([m, n], "f16")}, None, (message, line), None)
    return case


CASES = {
    "add": case_add, "copy": case_copy, "rgb2grey": case_rgb2grey, "matmul_naive": case_matmul_naive, "swizzle": case_swizzle,
    "grouped_matmul": case_grouped_matmul, "softmax": case_softmax, "matmul_leaky_relu": lambda: matmul_act("leaky_relu"),
    "matmul_no_activation": lambda: matmul_act(None), "layernorm": case_layernorm, "features": case_features,
    "dot_precision": case_dot_precision, "ragged_sum": case_ragged_sum, "narrow_types": case_narrow_types,
    "shape_ops": case_shape_ops,
    "bug_copy_nopid": bug("bugs/copy_nopid.py", "warning: instances [0] and [1] both store z_ptr[0] (index [0]) with equal values", 14),
    "bug_copy_pid_n": bug("bugs/copy_pid_n.py", "error: out-of-bounds load from 'x_ptr'", 14),
    "bug_matmul_no_kmask": matmul_bug("bugs/matmul_no_kmask.py", "error: out-of-bounds load from 'b_ptr'", 25),
    "bug_matmul_kmask_off_by_one": matmul_bug("bugs/matmul_kmask_off_by_one.py", "error: out-of-bounds load from 'a_ptr'", 25),
}


def split_grid(text):
    out, cur, depth = [], "", 0
    for c in text:
        depth += c in "(["
        depth -= c in ")]"
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    return out + [cur.strip()]


def run_triton_interpret(dtsim, file, flags, inputs, outputs, tmp):
    """The kernel on Triton's interpreter (triton_launch.py); exit 77 without triton and torch."""
    import json
    probe = subprocess.run([sys.executable, "-c", "import triton, torch"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIPPED: triton or torch is not importable: " + (probe.stderr.strip().splitlines() or ["?"])[-1])
        sys.exit(77)
    args, grid = {}, []
    for i in range(0, len(flags), 2):
        if flags[i] == "--arg":
            k, v = flags[i + 1].split("=", 1)
            args[k] = v
        elif flags[i] == "--grid":
            grid = split_grid(flags[i + 1])
    tensors = dict(inputs)
    bufs = []
    for buf, (shape, dtype) in outputs.items():
        if buf not in tensors:
            n = 1
            for d in shape:
                n *= d
            tensors[buf] = (shape, dtype, [0] * n)
    for b, (shape, dtype, _) in tensors.items():
        bufs += ["--buf", "%s=%s[%s]" % (b, dtype, ",".join(map(str, shape)))]
    tile = subprocess.run([dtsim, "emit", "--tile", os.path.join(EX, file)] + flags + bufs, capture_output=True, text=True)
    kernel = re.search(r"^kernel (\w+)\(", tile.stdout, re.M).group(1)
    spec = {"file": os.path.join(EX, file), "kernel": kernel, "tensors": tensors, "args": args, "grid": grid, "outputs": list(outputs)}
    sp, op = os.path.join(tmp, "spec.json"), os.path.join(tmp, "out.json")
    json.dump(spec, open(sp, "w"))
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "triton_launch.py")
    r = subprocess.run([sys.executable, launcher, sp, op], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        print("FAIL: Triton's interpreter failed\n" + r.stdout + r.stderr)
        sys.exit(1)
    return json.load(open(op))


def main():
    dtsim, name = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else ""
    if name == "list":
        print("\n".join(CASES))
        return
    file, flags, inputs, outputs, reference, tol, extra = CASES[name]()
    tmp = tempfile.TemporaryDirectory()
    if mode == "--triton-interpret":
        got = run_triton_interpret(dtsim, file, flags, inputs, outputs, tmp.name)
        ref = reference()
        # Documented difference (docs/triton.md): Triton's interpreter multiplies f32 exactly where
        # tl.dot's default precision is tf32 on the GPU (and in dtsim).
        ref.update(INTERPRETER_REFERENCE.get(name, lambda: {})())
        compare(ref, lambda buf: got[buf], max(tol, 1e-5), name)
        return
    args = [dtsim, "run", os.path.join(EX, file)] + flags + ([mode] if mode else [])
    for buf, (shape, dtype, values) in inputs.items():
        p = os.path.join(tmp.name, buf + ".npy")
        write_npy(p, shape, values, dtype)
        args += ["--in", "%s=%s" % (buf, p)]
    for buf, (shape, dtype) in outputs.items():
        if buf not in inputs:
            args += ["--buf", "%s=%s[%s]" % (buf, dtype, ",".join(map(str, shape)))]
        args += ["--out", "%s=%s" % (buf, os.path.join(tmp.name, "out_" + buf + ".npy"))]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if mode == "--backend=cuda":
        for why in ("no CUDA driver found", "no GPU", "too old", "built without the CUDA backend"):
            if why in r.stdout + r.stderr:
                print("SKIPPED: " + why)
                sys.exit(77)
    if reference is None:  # a planted bug: the finding, exit 1, no output file (a warning: exit 0, the outputs)
        message, line = tol
        warns = message.startswith("warning:")
        where = "%s:%d:" % (os.path.join(EX, file), line)
        ok = r.returncode == (0 if warns else 1) and any(l.startswith(where) and message in l for l in r.stderr.splitlines())
        written = [os.path.exists(os.path.join(tmp.name, "out_" + b + ".npy")) for b in outputs]
        if not ok or any(w != warns for w in written):
            print("FAIL: expected exit %d and '%s ... %s' on stderr, %s; got exit %d\n%s" %
                  (0 if warns else 1, where, message, "the output files" if warns else "no output file", r.returncode, r.stderr))
            sys.exit(1)
        print("PASS " + name)
        return
    if mode == "--backend=cuda":
        tol = max(tol, 1e-5)
    if r.returncode != 0 or ("sanitizer: all: no findings" not in r.stdout and "backend: cuda" not in r.stdout):
        print("FAIL: %s exited %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    if extra:
        msg = extra(r.stdout)
        if msg and mode != "--backend=cuda":
            print("FAIL: " + msg)
            sys.exit(1)
    compare(reference(), lambda buf: read_npy(os.path.join(tmp.name, "out_" + buf + ".npy")), tol, name)


def compare(ref, read, tol, name):
    problems = []
    for buf, want in ref.items():
        got = read(buf)
        worst = 0.0
        for i, w in enumerate(want):
            err = abs(got[i] - w) / max(abs(w), 1.0)
            if not err <= tol:
                problems.append("%s[%d] = %r, expected %r" % (buf, i, got[i], w))
            worst = max(worst, err)
        print("%s: %d values, max rel err %.3g (tolerance %g)" % (buf, len(want), worst, tol))
    if problems:
        print("FAIL:\n" + "\n".join(problems[:20]))
        sys.exit(1)
    print("PASS " + name)


if __name__ == "__main__":
    main()
