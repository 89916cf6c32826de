#!/usr/bin/env python3
"""A Triton user's script on dtsim against the same script under TRITON_INTERPRET=1: the kernels of
examples/triton launched from Python as the practitioner's guide does (`kernel[grid](tensors)`),
once through dtsim's drop-in (`python -m dtsim`, numpy arrays, one thread) and once through
Triton's own interpreter (torch CPU tensors), in one call. Each launch is timed best of REPS after a
warm-up launch (which compiles); the outputs of the two runs are compared.

usage (on a machine with triton and torch, with dtsim's package on PYTHONPATH):
  python3 bench/python_vs_triton_interp.py [--reps R] [--only NAME]

Prints one row per workload: Triton's interpreter ms, dtsim ms with the sanitizer on (`all`, the
default) and off, the ratios, and the geometric means. A workload that Triton's interpreter cannot
run on this machine is listed with its error and left out of the means. Exit status 1 when an output
differs (beyond the workload's tolerance), dtsim fails, or no workload could be compared.
(Internally it runs itself as `--side dtsim|triton --json FILE`.)"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(HERE, "..", "examples", "triton")

# name: (description, tolerance on the max abs difference between the two runs)
WORKLOADS = {
    "add": ("add n=2^20 BLOCK=1024", 0.0),
    "softmax": ("softmax 512x1000 BLOCK=1024", 1e-6),
    "layernorm": ("layernorm 512x1024 BLOCK_SIZE=256", 1e-4),
    "matmul_naive": ("matmul f32 256^3 bm=bn=bk=32", 1e-3),
    "matmul_act": ("matmul f16 256^3 32x32x32 leaky_relu", 2e-2),
    "rgb2grey": ("rgb2grey 512x512x3 16x32", 1e-5),
}


def example(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location("example_" + name, os.path.join(EX, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def side(which, reps, only, out_json):
    import numpy as np
    import triton
    if which == "dtsim":
        assert hasattr(triton, "dtsim") or "dtsim" in triton.__version__, "run through python -m dtsim"
        import dtsim
        # numpy arrays: under the installed Triton dtsim hands them to Triton's launcher as tensors
        wrap, unwrap = (lambda a: a), (lambda t: np.asarray(t))
    else:
        assert os.environ.get("TRITON_INTERPRET") == "1"
        import torch
        wrap, unwrap = torch.from_numpy, (lambda t: t.numpy())
    sys.path.insert(0, EX)  # matmul_naive.py imports matmul_helpers.py
    rng = np.random.default_rng(0)
    f32 = np.float32

    def add():
        k = example("add").add_kernel
        n = 1 << 20
        x, y = wrap(rng.standard_normal(n, dtype=f32)), wrap(rng.standard_normal(n, dtype=f32))
        out = wrap(np.zeros(n, f32))
        return (lambda: k[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)), [out]

    def softmax():
        k = example("softmax").softmax_kernel
        rows, cols = 512, 1000
        x = wrap(rng.uniform(-3, 3, (rows, cols)).astype(f32))
        y = wrap(np.zeros((rows, cols), f32))
        return (lambda: k[(rows,)](y, x, cols, cols, cols, BLOCK=1024)), [y]

    def layernorm():
        k = example("layernorm")._layer_norm_fwd
        rows, cols = 512, 1024
        x = wrap(rng.standard_normal((rows, cols), dtype=f32))
        w, b = wrap(rng.standard_normal(cols, dtype=f32)), wrap(rng.standard_normal(cols, dtype=f32))
        y, mean, rstd = wrap(np.zeros((rows, cols), f32)), wrap(np.zeros(rows, f32)), wrap(np.zeros(rows, f32))
        return (lambda: k[(rows,)](x, y, w, b, mean, rstd, cols, cols, BLOCK_SIZE=256)), [y, mean, rstd]

    def matmul_naive():
        k = example("matmul_naive").naive_matmul_k
        n = 256
        a, b = wrap(rng.standard_normal((n, n), dtype=f32)), wrap(rng.standard_normal((n, n), dtype=f32))
        c = wrap(np.zeros((n, n), f32))
        return (lambda: k[(n // 32, n // 32)](a, b, c, n, n, n, n, 1, n, 1, n, 1, bm=32, bn=32, bk=32)), [c]

    def matmul_act():
        k = example("matmul_act").matmul_kernel
        n = 256
        a = wrap(rng.standard_normal((n, n)).astype(np.float16))
        b = wrap(rng.standard_normal((n, n)).astype(np.float16))
        c = wrap(np.zeros((n, n), np.float16))
        return (lambda: k[((n // 32) * (n // 32),)](a, b, c, n, n, n, BM=32, BN=32, BK=32,
                                                   ACTIVATION="leaky_relu")), [c]

    def rgb2grey():
        k = example("rgb2grey").rgb2grey_k
        h, w = 512, 512
        x = wrap(rng.random((h, w, 3), dtype=f32))
        out = wrap(np.zeros((h, w), f32))
        return (lambda: k[(triton.cdiv(h, 16), triton.cdiv(w, 32))](x, out, h, w, bs0=16, bs1=32)), [out]

    makers = {"add": add, "softmax": softmax, "layernorm": layernorm, "matmul_naive": matmul_naive,
              "matmul_act": matmul_act, "rgb2grey": rgb2grey}
    modes = ["all", "none"] if which == "dtsim" else [""]
    result = {}
    outdir = os.path.dirname(out_json)
    for name in WORKLOADS:
        if only and name not in only:
            continue
        launch, outs = makers[name]()
        row = {}
        try:
            for mode in modes:
                if which == "dtsim":
                    dtsim.config(sanitize=mode, threads=1)
                launch()  # warm-up: compiles
                best = math.inf
                for _ in range(reps):
                    t0 = time.perf_counter()
                    launch()
                    best = min(best, time.perf_counter() - t0)
                row["ms" + ("_" + mode if mode else "")] = best * 1e3
        except Exception as e:  # noqa: BLE001
            if which == "dtsim":
                raise
            # Triton's interpreter cannot run this workload here (e.g. its int() of a one-element
            # array under numpy >= 2.5): the row says so and the comparison goes on without it.
            msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            result[name] = {"error": msg[:160]}
            print("%s %-14s failed: %s" % (which, name, msg), file=sys.stderr, flush=True)
            continue
        path = os.path.join(outdir, "%s_%s.npz" % (which, name))
        np.savez(path, *[unwrap(o) for o in outs])
        row["out"] = path
        result[name] = row
        print("%s %-14s %s" % (which, name, "  ".join("%s %.2f" % (k, v) for k, v in row.items() if k != "out")),
              file=sys.stderr, flush=True)
    with open(out_json, "w") as f:
        json.dump(result, f)


def run_sides(doc, choices, side_fn, prefix):
    """The command line this bench and bench/liger_vs_triton_interp.py share: with --side, runs that
    side (side_fn(which, reps, only, json_path)) and returns None; else runs the dtsim side under
    `python -m dtsim` and the Triton side under TRITON_INTERPRET=1, each in its own process, and
    returns (args, {side: results}) (None for the runs when a side failed). With --processes P the
    dtsim side runs in P processes one after another: each timing of an op is then the slowest
    process's best (what holds in every process; the best time varies from process to process with
    the heap's and the buffers' placement), with `<key>_range` [fastest, slowest] beside it."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", action="append", default=[], choices=sorted(choices))
    ap.add_argument("--side", choices=["dtsim", "triton"])
    ap.add_argument("--json")
    ap.add_argument("--processes", type=int, default=1, help="dtsim side: this many processes, the slowest's best reported")
    a = ap.parse_args()
    if a.side:
        side_fn(a.side, a.reps, a.only, a.json)
        return None
    tmp = tempfile.mkdtemp(prefix=prefix)
    me = os.path.abspath(sys.argv[0])
    extra = ["--reps", str(a.reps)] + sum((["--only", o] for o in a.only), [])
    runs = {}
    for which in ["dtsim"] * max(1, a.processes) + ["triton"]:
        js = os.path.join(tmp, "%s%d.json" % (which, len(runs.get(which, []))))
        env = dict(os.environ)
        if which == "dtsim":
            cmd = [sys.executable, "-W", "ignore", "-m", "dtsim", me, "--side", "dtsim", "--json", js] + extra
            env.pop("TRITON_INTERPRET", None)
        else:
            cmd = [sys.executable, "-W", "ignore", me, "--side", "triton", "--json", js] + extra
            env["TRITON_INTERPRET"] = "1"
        r = subprocess.run(cmd, env=env)
        if r.returncode != 0:
            print("the %s side failed (exit %d): %s" % (which, r.returncode, " ".join(cmd)), file=sys.stderr)
            return a, None
        with open(js) as f:
            runs.setdefault(which, []).append(json.load(f))
    return a, {which: slowest_of(got) for which, got in runs.items()}


def slowest_of(results):
    """One side's results of several processes as one: per op, each timing the slowest process's
    (`<key>_range`: [fastest, slowest]); an op that failed in any process, that process's error."""
    merged = {}
    for name in results[0]:
        per = [r.get(name, {"error": "not run"}) for r in results]
        bad = [p for p in per if "error" in p]
        if bad:
            merged[name] = bad[0]
            continue
        m = dict(per[0])
        for k, v in per[0].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and len(per) > 1:
                vals = [p[k] for p in per]
                m[k] = max(vals)
                m[k + "_range"] = [min(vals), max(vals)]
        merged[name] = m
    return merged


def main():
    got = run_sides(__doc__, WORKLOADS, side, "dtsim_vs_triton_")
    if got is None:
        return 0
    if got[1] is None:
        return 1
    runs = got[1]
    import numpy as np
    bad = 0
    rows = []
    skipped = []
    for name, (desc, tol) in WORKLOADS.items():
        if name not in runs["dtsim"]:
            continue
        d, t = runs["dtsim"][name], runs["triton"][name]
        if "error" in t:
            skipped.append((desc, d, t["error"]))
            continue
        a_out, b_out = np.load(d["out"]), np.load(t["out"])
        err = max(float(np.max(np.abs(a_out[k].astype(np.float64) - b_out[k].astype(np.float64)))) if a_out[k].size else 0.0
                  for k in a_out.files)
        same = err <= tol
        bad += not same
        rows.append((desc, t["ms"], d["ms_all"], d["ms_none"], err, same))
    print("| workload | Triton interpreter ms | dtsim ms (sanitizer all) | dtsim ms (none) | x (all) | x (none) "
          "| max abs diff | outputs |")
    print("|---|---|---|---|---|---|---|---|")
    for desc, tm, da, dn, err, same in rows:
        print("| %s | %.1f | %.2f | %.2f | %.0fx | %.0fx | %.3g | %s |" % (desc, tm, da, dn, tm / da, tm / dn, err,
                                                                      "same" if same else "DIFFER"))
    if rows:
        g_all = math.exp(sum(math.log(r[1] / r[2]) for r in rows) / len(rows))
        g_none = math.exp(sum(math.log(r[1] / r[3]) for r in rows) / len(rows))
        print("| geometric mean | | | | **%.0fx** | %.0fx | | |" % (g_all, g_none))
    for desc, d, err in skipped:
        print("| %s | (Triton's interpreter failed: %s) | %.2f | %.2f | | | | not compared |" % (desc, err.replace("|", "/"), d["ms_all"], d["ms_none"]))
    if skipped:
        print("(the geometric means leave out the %d workload(s) Triton's interpreter could not run)" % len(skipped))
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
