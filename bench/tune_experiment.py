#!/usr/bin/env python3
"""The Decoupled Triton slides' experiment, run by dtsim itself: for each operation, the size of its
schedule space, how many schedules were searched and how many are competitive (within 10% of the
best), the best schedule's time through dtsim's CUDA backend and through the emitted Triton (the same
schedule), against torch eager and torch.compile on the same inputs (dtsim's seeded data, made on the
GPU by the emitted Triton module's generator), and the file's own schedule. One table at the end.

usage (on a machine with a GPU, python3 with torch and triton, from the repository root):
  python3 bench/tune_experiment.py PATH/TO/dtsim [--only NAME[,NAME...]] [--budget N] [--out-dir DIR]
  python3 bench/tune_experiment.py --table DIR        # the table of earlier runs' JSON in DIR

Each operation: torch eager and torch.compile timed with triton.testing.do_bench (median, L2
flushed) on dtsim's input data; then `dtsim tune FILE --arg ... --budget N --json --csv --plot --ref ...` (CUDA backend,
bench's protocol); then the best schedule written into a copy of the file and timed by
`dtsim bench --vs-triton` (dtsim's backend again, and the emitted Triton under do_bench).
Everything of an operation goes to --out-dir (JSON, CSV, SVG, the best .dt file).
Group the operations so that one device call stays within its time limit, e.g.
  --only softmax,layernorm,rmsnorm,dyt     and     --only matmul,mmsigmoid,2mm,attention
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEDULE_CALL = re.compile(r"^\s*[A-Za-z_]\w*\.(block|tensorize|map|fuse_at|num_warps|num_stages|compile|compile_to_kernel)\(")

# name, .dt file, sizes, figure of merit. DyT and the 2mm sizes are the slides' (2mm: their largest,
# (d)); the slides give none for the others: those of bench/gpu_table.py.
OPS = [
    ("softmax", "examples/softmax.dt", {"x_SIZE": 32768, "y_SIZE": 4096}, "GB/s"),
    ("layernorm", "examples/layernorm.dt", {"x_SIZE": 8192, "y_SIZE": 8192}, "GB/s"),
    ("rmsnorm", "examples/rmsnorm.dt", {"x_SIZE": 8192, "y_SIZE": 8192}, "GB/s"),
    ("dyt", "examples/dyt.dt", {"x_SIZE": 128, "y_SIZE": 65536}, "GB/s"),
    ("matmul", "examples/mm.dt", {"x_SIZE": 2048, "y_SIZE": 2048, "k_SIZE": 2048}, "TFLOP/s"),
    ("mmsigmoid", "examples/mmsigmoid.dt", {"x_SIZE": 4096, "y_SIZE": 4096, "k_SIZE": 4096}, "TFLOP/s"),
    ("2mm_outer", "examples/2mm_outer.dt", {"m_SIZE": 512, "n_SIZE": 1024, "k_SIZE": 32, "l_SIZE": 32}, "TFLOP/s"),
    ("2mm_inner", "examples/2mm_inner.dt", {"m_SIZE": 1024, "n_SIZE": 1024, "k_SIZE": 64, "l_SIZE": 64}, "TFLOP/s"),
    ("attention", "examples/attention.dt", {"m_SIZE": 4096, "n_SIZE": 64, "k_SIZE": 64, "l_SIZE": 256}, "TFLOP/s"),
]


def torch_fn(name, s, t, torch):
    """The torch form of an operation at sizes `s` on the input tensors `t` (name -> tensor), as a
    zero-argument function."""
    F = torch.nn.functional
    torch.backends.cuda.matmul.allow_tf32 = False  # dtsim's f32 dot is IEEE f32
    if name == "softmax":  # the .dt form sums exp(A) without subtracting the max; the same cost
        return lambda: torch.softmax(t["A"], 1)
    if name == "layernorm":
        return lambda: F.layer_norm(t["X"], (s["y_SIZE"],), t["w"], t["b"], 1e-5)
    if name == "rmsnorm":
        x, w = t["X"], t["w"]
        return lambda: x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-5) * w
    if name == "dyt":
        x, g, b = t["X"], t["gamma"], t["beta"]
        return lambda: g * torch.tanh(0.5 * x) + b
    if name == "matmul":
        return lambda: t["A"] @ t["B"]
    if name == "mmsigmoid":  # f16 inputs, f32 result
        return lambda: torch.sigmoid((t["A"] @ t["B"]).float())
    if name.startswith("2mm"):
        return lambda: (t["A"] @ t["B"]) @ t["C"]
    if name == "attention":
        scale = 1.0 / math.sqrt(s["l_SIZE"])
        return lambda: torch.softmax(t["A"] @ t["B"] * scale, 1) @ t["C"]
    raise KeyError(name)


def dtsim_inputs(a, file, sizes, torch):
    """dtsim's own seeded input data for `file` at `sizes` (what `dtsim run` and `dtsim bench` use),
    on the GPU, through the emitted Triton module's generator (the same stream per buffer name)."""
    import importlib.util
    py = os.path.join(a.out_dir, "inputs_" + os.path.basename(file).replace(".dt", ".py"))
    r = subprocess.run([a.dtsim, "emit", "--triton", file, *size_args(sizes), "-o", py], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError("emit --triton: " + (r.stderr.strip().splitlines() or ["failed"])[-1])
    spec = importlib.util.spec_from_file_location("dtsim_inputs", py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    params = mod.bind({})
    bufs = mod.make_buffers(params, a.seed, "cuda")
    return {name: bufs[name] for name, io, _, _ in mod.BUFFERS if io in ("in", "inout")}


def time_torch(a, name, file, sizes, torch, do_bench):
    """(eager ms, torch.compile ms, notes), on dtsim's own input data."""
    notes = []
    eager = compiled = None
    try:
        fn = torch_fn(name, sizes, dtsim_inputs(a, file, sizes, torch), torch)
        eager = do_bench(fn, warmup=25, rep=100, return_mode="median")
        try:
            cfn = torch.compile(fn)
            cfn()  # compile outside the timing
            compiled = do_bench(cfn, warmup=25, rep=100, return_mode="median")
        except Exception as e:  # inductor missing a compiler, or out of memory
            notes.append(f"torch.compile: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
        del fn
        torch.cuda.empty_cache()
    except Exception as e:
        notes.append(f"torch: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
    return eager, compiled, notes


def size_args(sizes):
    return [a for k, v in sizes.items() for a in ("--arg", f"{k}={v}")]


def run(cmd, timeout):
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s", time.time() - t0
    return r, None, time.time() - t0


def with_schedule(file, schedule):
    with open(os.path.join(ROOT, file)) as f:
        algo = [l for l in f.read().splitlines() if not SCHEDULE_CALL.match(l)]
    return "\n".join(algo) + "\n" + schedule


def one_op(a, name, file, sizes, kind, torch, do_bench):
    row = {"op": name, "sizes": " ".join(f"{k[:-5]}={v}" for k, v in sizes.items()), "kind": kind, "notes": []}
    row["torch_ms"], row["compile_ms"], notes = time_torch(a, name, file, sizes, torch, do_bench)
    row["notes"] += notes
    refs = []
    if row["torch_ms"]:
        refs += ["--ref", f"torch eager={row['torch_ms']:.6f}"]
    if row["compile_ms"]:
        refs += ["--ref", f"torch.compile={row['compile_ms']:.6f}"]
    out = os.path.join(a.out_dir, name)
    cmd = [a.dtsim, "tune", file, *size_args(sizes), "--budget", str(a.budget), "--seed", str(a.seed), "--json",
           "--csv", out + ".csv", "--plot", out + ".svg", *refs]
    r, why, secs = run(cmd, a.timeout)
    row["tune_s"] = secs
    if r is None or r.returncode != 0:
        row["notes"].append("tune: " + (why or (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]))
        return row
    doc = json.loads(r.stdout)
    with open(out + ".json", "w") as f:
        json.dump(doc, f)
    for k in ("space", "searched", "mode", "within_10pct", "passed_check", "timed", "candidates_per_minute", "checked_per_minute",
              "bytes", "flops", "timing"):
        row[k] = doc.get(k)
    row["best_ms"] = doc["best"]["ms"] if doc.get("best") else None
    own = [x["ms"] for x in doc.get("references", []) if x["name"] == "file's schedule"]
    row["file_ms"] = own[0] if own else None
    if not doc.get("best"):
        row["notes"].append("no schedule timed: " + str(doc.get("timing")))
        return row
    best_file = out + "_best.dt"
    with open(best_file, "w") as f:
        f.write(with_schedule(file, doc["best"]["schedule"]))
    r, why, _ = run([a.dtsim, "bench", best_file, *size_args(sizes), "--vs-triton", "--json"], a.timeout)
    if r is None or not r.stdout.strip():
        lines = r.stderr.strip().splitlines() if r is not None else []
        err = [l.split(": error: ", 1)[1] for l in lines if ": error: " in l]
        row["notes"].append("bench --vs-triton: " + (why or (err[0] if err else (lines or ["no output"])[-1])))
        return row
    objs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    obj = next((o for o in objs if o["kernel"] == "<module>"), objs[0])
    row["bench_ms"] = obj.get("median_ms")
    row["triton_ms"] = obj.get("triton_ms")
    if obj.get("triton_skipped"):
        row["notes"].append("triton: " + obj["triton_skipped"])
    if obj.get("check") == "fail":
        row["notes"].append("CHECK FAILED: " + obj.get("check_note", ""))
    return row


def fmt(v, f="%.4f"):
    return "-" if v is None else f % v


def print_table(rows, device):
    print(f"\n{len(rows)} operation(s) on {device}\n")
    head = ("op", "sizes", "space", "searched", "within 10%", "dtsim best ms", "same as Triton ms", "torch ms",
            "torch.compile ms", "file's schedule ms", "best vs torch", "timed / min", "notes")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        best = r.get("best_ms")
        vs = f"{r['torch_ms'] / best:.2f}x" if best and r.get("torch_ms") else "-"
        print(f"| {r['op']} | {r['sizes']} | {r.get('space', '-')} | {r.get('searched', '-')} ({r.get('mode', '-')}) | "
              f"{r.get('within_10pct', '-')} | {fmt(best)} | {fmt(r.get('triton_ms'))} | {fmt(r.get('torch_ms'))} | "
              f"{fmt(r.get('compile_ms'))} | {fmt(r.get('file_ms'))} | {vs} | {fmt(r.get('checked_per_minute'), '%.0f')} | "
              f"{'; '.join(r.get('notes', []))} |")
    print("\nbest vs torch: torch eager time / dtsim's best time (above 1: dtsim faster). 'same as Triton': the best\n"
          "schedule through the emitted Triton module (do_bench). Times are medians in ms, L2 flushed. timed / min:\n"
          "schedules lowered, checked and timed per minute of the search (pruned and illegal draws not counted).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtsim", nargs="?", help="path to a dtsim binary built with the CUDA backend")
    ap.add_argument("--only", default="", help="comma-separated substrings of operation names to run")
    ap.add_argument("--budget", type=int, default=200, help="schedules per operation (dtsim tune --budget)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per dtsim call")
    ap.add_argument("--out-dir", default="tune_out", help="where each operation's JSON, CSV, SVG and best .dt go")
    ap.add_argument("--table", metavar="DIR", help="print the table of the rows saved in DIR and stop")
    a = ap.parse_args()
    if a.table:
        rows = [json.load(open(os.path.join(a.table, f))) for f in sorted(os.listdir(a.table)) if f.endswith(".row.json")]
        print_table(rows, rows[0].get("device", "?") if rows else "?")
        return 0
    if not a.dtsim:
        ap.error("give the path to dtsim (or --table DIR)")
    a.dtsim = os.path.abspath(a.dtsim)
    a.out_dir = os.path.abspath(a.out_dir)
    os.makedirs(a.out_dir, exist_ok=True)
    import torch
    import triton
    from triton.testing import do_bench

    p = torch.cuda.get_device_properties(0)
    device = f"{p.name} ({p.multi_processor_count} SMs), torch {torch.__version__}, triton {triton.__version__}"
    print(f"device {device}; budget {a.budget} per operation", flush=True)
    rows = []
    for name, file, sizes, kind in OPS:
        if a.only and not any(s in name for s in a.only.split(",")):
            continue
        t0 = time.time()
        row = one_op(a, name, file, sizes, kind, torch, do_bench)
        row["device"] = device
        rows.append(row)
        with open(os.path.join(a.out_dir, name + ".row.json"), "w") as f:
            json.dump(row, f)
        print(f"  {name}: best {fmt(row.get('best_ms'))} ms, Triton {fmt(row.get('triton_ms'))} ms, torch {fmt(row.get('torch_ms'))} ms, "
              f"torch.compile {fmt(row.get('compile_ms'))} ms, {row.get('searched', '-')} searched, {row.get('within_10pct', '-')} within 10% "
              f"({time.time() - t0:.0f} s) {'; '.join(row['notes'])}", flush=True)
    print_table(rows, device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
