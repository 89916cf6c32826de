#!/usr/bin/env python3
"""The Decoupled Triton slides' experiment, run by dtsim itself: for each operation, the size of its
schedule space, how many schedules were searched and how many are competitive (within 10% of the
best), the best schedule's time through dtsim's CUDA backend and through the emitted Triton (the same
schedule), against every baseline of the slides on the same inputs (dtsim's seeded data, made on the
GPU by the emitted Triton module's generator): torch eager, torch.compile, torch.compile(mode=
"max-autotune"), Liger-Kernel's kernel where one exists, and the Triton tutorials' kernels where one
exists; the file's own schedule; the search's rate. One table at the end, with the ratio of the
fastest baseline to dtsim's best.

usage (on a machine with a GPU, python3 with torch and triton, from the repository root):
  python3 bench/tune_experiment.py PATH/TO/dtsim [--only NAME[,NAME...]] [--budget N | --tune-time S]
          [--tutorials DIR] [--gpus LIST] [--deadline S] [--out-dir DIR]
  python3 bench/tune_experiment.py --table DIR        # the table of earlier runs' JSON in DIR

Each operation: the baselines timed with triton.testing.do_bench (median, L2 flushed) on dtsim's
input data; then `dtsim tune FILE --arg ... --budget N --json --csv --plot --ref ...` (CUDA backend,
bench's protocol; one --ref per baseline); then the best schedule written into a copy of the file and
timed by `dtsim bench --vs-triton` (dtsim's backend again, and the emitted Triton under do_bench).
Everything of an operation goes to --out-dir (JSON, CSV, SVG, the best .dt file).

Liger-Kernel is used when `import liger_kernel` works (its autograd Functions' forward: softmax,
layer norm, RMS norm, DyT). The Triton tutorials are not on PyPI: put 02-fused-softmax.py,
03-matrix-multiplication.py, 05-layer-norm.py and 06-fused-attention.py (of the Triton version
installed) in a folder and pass it as --tutorials DIR; their definitions are imported, not their
tests and benchmarks. Without it the column says '-' and the notes say "not run".
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


BASELINES = ("torch", "torch.compile", "max-autotune", "Liger", "Triton tutorial")


def liger_fn(name, s, t, torch):
    """Liger-Kernel's forward kernel for the operation (its public autograd Function), or None where
    Liger has none (it has no plain matmul or attention)."""
    try:
        from liger_kernel.ops import dyt, layer_norm, rms_norm, softmax
    except ImportError as e:
        raise RuntimeError(f"liger_kernel not importable ({e})")
    if name == "softmax":
        return lambda: softmax.LigerSoftmaxFunction.apply(t["A"])
    if name == "layernorm":
        return lambda: layer_norm.LigerLayerNormFunction.apply(t["X"], t["w"], t["b"], 1e-5)
    if name == "rmsnorm":  # offset 0, Llama's casting (f32 in, f32 out: no cast)
        return lambda: rms_norm.LigerRMSNormFunction.apply(t["X"], t["w"], 1e-5)
    if name == "dyt":
        alpha = torch.full((1,), 0.5, device=t["X"].device, dtype=t["X"].dtype)
        return lambda: dyt.LigerDyTFunction.apply(t["X"], alpha, t["gamma"], t["beta"])
    return None


TUTORIAL_FILES = {"softmax": "02-fused-softmax.py", "matmul": "03-matrix-multiplication.py", "layernorm": "05-layer-norm.py",
                  "attention": "06-fused-attention.py"}


def load_tutorial(path):
    """The definitions of a Triton tutorial file (imports, functions, classes, assignments), without its
    top-level statements that test or benchmark (expressions, asserts, if/for/with blocks, assignments
    that call one of its functions that launch a kernel): a module whose @triton.jit functions keep
    their source lines (compiled with the file's own name)."""
    import ast
    import types
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    keep = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.Try)
    funcs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}

    def calls(node):  # names of the file's own functions that `node` calls
        return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in funcs}

    # The functions that launch a kernel (`kernel[grid](...)`), directly or through one another.
    launching = {name for name, f in funcs.items()
                 if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) for n in ast.walk(f))}
    while True:
        more = {name for name, f in funcs.items() if name not in launching and calls(f) & launching}
        if not more:
            break
        launching |= more
    body = []
    for node in tree.body:
        if not isinstance(node, keep):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and calls(node) & launching:  # runs a kernel: the tutorial's own test
            continue
        body.append(node)
    tree.body = body
    mod = types.ModuleType(os.path.splitext(os.path.basename(path))[0].replace("-", "_"))
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    exec(compile(tree, path, "exec"), mod.__dict__)
    return mod


def tutorial_fn(a, name, s, t, torch):
    """The Triton tutorial's kernel for the operation, or None where there is none (with why)."""
    if not a.tutorials:
        return None, "not run (no --tutorials DIR)"
    file = TUTORIAL_FILES.get("matmul" if name == "mmsigmoid" else name)
    if not file:
        return None, None
    path = os.path.join(a.tutorials, file)
    if not os.path.exists(path):
        return None, f"not run ({file} not in {a.tutorials})"
    mod = load_tutorial(path)
    if name == "softmax":
        return (lambda: mod.softmax(t["A"])), None
    if name == "layernorm":
        w = (s["y_SIZE"],)
        return (lambda: mod.layer_norm(t["X"], w, t["w"], t["b"], 1e-5)), None
    if name == "mmsigmoid":  # the tutorial's f16 matmul (f16 out), then the sigmoid in f32 by torch
        return (lambda: torch.sigmoid(mod.matmul(t["A"], t["B"]).float())), None
    if name == "matmul":
        return None, "not run (the tutorial's matmul is f16 in and out; this one is f32)"
    if name == "attention":
        return None, "not run (the tutorial's attention takes q, k, v of one length and head dim, in f16)"
    return None, None


def short(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"


def time_baselines(a, name, file, sizes, torch, do_bench, which):
    """{baseline: ms} and notes, on dtsim's own input data, for the baselines in `which`: torch eager,
    torch.compile, torch.compile(mode="max-autotune"), Liger-Kernel and the Triton tutorial where
    they exist."""
    notes, ms = [], {}

    def bench(label, fn):
        try:
            with torch.no_grad():
                fn()  # compiles (torch.compile, Triton's JIT and autotuning) outside the timing
                torch.cuda.synchronize()
                ms[label] = do_bench(fn, warmup=25, rep=100, return_mode="median")
        except Exception as e:  # inductor missing a compiler, out of memory, an API of another version
            notes.append(f"{label}: {short(e)}")

    try:
        t = dtsim_inputs(a, file, sizes, torch)
    except Exception as e:
        return ms, [f"inputs: {short(e)}"]
    fn = torch_fn(name, sizes, t, torch)
    if "torch" in which:
        bench("torch", fn)
    if "torch.compile" in which:
        torch._dynamo.reset()
        bench("torch.compile", torch.compile(fn))
    if "max-autotune" in which:
        torch._dynamo.reset()
        bench("max-autotune", torch.compile(fn, mode="max-autotune"))
    if "Liger" in which:
        try:
            lf = liger_fn(name, sizes, t, torch)
            if lf:
                bench("Liger", lf)
        except Exception as e:
            notes.append(f"Liger: {short(e)}")
    if "Triton tutorial" in which:
        try:
            tf, why = tutorial_fn(a, name, sizes, t, torch)
            if tf:
                bench("Triton tutorial", tf)
            elif why and a.tutorials:
                notes.append(f"Triton tutorial: {why}")
        except Exception as e:
            notes.append(f"Triton tutorial: {short(e)}")
    del t, fn
    torch.cuda.empty_cache()
    return ms, notes


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
    """The first pass over an operation: the baselines but max-autotune, then the search."""
    row = {"op": name, "sizes": " ".join(f"{k[:-5]}={v}" for k, v in sizes.items()), "kind": kind, "notes": []}
    t0 = time.time()
    row["baselines"], notes = time_baselines(a, name, file, sizes, torch, do_bench, ("torch", "torch.compile", "Liger", "Triton tutorial"))
    row["baseline_s"] = time.time() - t0
    row["notes"] += notes
    refs = []
    for label in BASELINES:
        if label in row["baselines"]:
            refs += ["--ref", f"{label}={row['baselines'][label]:.6f}"]
    out = os.path.join(a.out_dir, name)
    search = ["--time", str(a.tune_time)] if a.tune_time else ["--budget", str(a.budget)]
    cmd = [a.dtsim, "tune", file, *size_args(sizes), *search, "--seed", str(a.seed), "--json",
           "--csv", out + ".csv", "--plot", out + ".svg", *refs]
    if a.gpus:
        cmd += ["--gpus", a.gpus]
    r, why, secs = run(cmd, a.timeout)
    row["tune_s"] = secs
    if r is None or r.returncode != 0:
        row["notes"].append("tune: " + (why or (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]))
        return row
    doc = json.loads(r.stdout)
    with open(out + ".json", "w") as f:
        json.dump(doc, f)
    for k in ("space", "searched", "mode", "within_10pct", "passed_check", "timed", "candidates_per_minute", "checked_per_minute",
              "timed_per_minute_per_gpu", "workers", "bytes", "flops", "timing"):
        row[k] = doc.get(k)
    row["best_ms"] = doc["best"]["ms"] if doc.get("best") else None
    row["best_phase"] = next((c["phase"] for c in doc.get("candidates", []) if doc.get("best") and c["index"] == doc["best"]["index"]), None)
    own = [x["ms"] for x in doc.get("references", []) if x["name"] == "file's schedule"]
    row["file_ms"] = own[0] if own else None
    if not doc.get("best"):
        row["notes"].append("no schedule timed: " + str(doc.get("timing")))
        return row
    with open(out + "_best.dt", "w") as f:
        f.write(with_schedule(file, doc["best"]["schedule"]))
    return row


def triton_check(a, row, file, sizes):
    """The best schedule through dtsim's backend and the emitted Triton (`dtsim bench --vs-triton`)."""
    out = os.path.join(a.out_dir, row["op"])
    r, why, _ = run([a.dtsim, "bench", out + "_best.dt", *size_args(sizes), "--vs-triton", "--json"], a.timeout)
    if r is None or not r.stdout.strip():
        lines = r.stderr.strip().splitlines() if r is not None else []
        err = [l.split(": error: ", 1)[1] for l in lines if ": error: " in l]
        row["notes"].append("bench --vs-triton: " + (why or (err[0] if err else (lines or ["no output"])[-1])))
        return
    objs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    obj = next((o for o in objs if o["kernel"] == "<module>"), objs[0])
    row["bench_ms"] = obj.get("median_ms")
    row["triton_ms"] = obj.get("triton_ms")
    if obj.get("triton_skipped"):
        row["notes"].append("triton: " + obj["triton_skipped"])
    if obj.get("check") == "fail":
        row["notes"].append("CHECK FAILED: " + obj.get("check_note", ""))


def fmt(v, f="%.4f"):
    return "-" if v is None else f % v


def best_baseline(r):
    """(name, ms) of the fastest baseline, or (None, None)."""
    b = r.get("baselines") or {}
    if not b:
        return None, None
    name = min(b, key=b.get)
    return name, b[name]


def print_table(rows, device):
    print(f"\n{len(rows)} operation(s) on {device}\n")
    head = ("op", "sizes", "space", "searched", "within 10%", "dtsim best ms", "best found by", "same as Triton ms", *[f"{b} ms" for b in BASELINES],
            "best baseline", "best baseline / dtsim best", "file's schedule ms", "timed / min / GPU", "notes")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        best = r.get("best_ms")
        bname, bms = best_baseline(r)
        ratio = f"{bms / best:.2f}x" if best and bms else "-"
        base = r.get("baselines") or {}
        print(f"| {r['op']} | {r['sizes']} | {r.get('space', '-')} | {r.get('searched', '-')} ({r.get('mode', '-')}) | "
              f"{r.get('within_10pct', '-')} | {fmt(best)} | {r.get('best_phase') or '-'} | {fmt(r.get('triton_ms'))} | "
              + " | ".join(fmt(base.get(b)) for b in BASELINES) +
              f" | {bname or '-'} | {ratio} | {fmt(r.get('file_ms'))} | {fmt(r.get('timed_per_minute_per_gpu'), '%.0f')} | "
              f"{'; '.join(r.get('notes', []))} |")
    print("\nbest baseline / dtsim best: the fastest baseline's time over dtsim's best time (1.00x or more: dtsim at least as\n"
          "fast as every baseline). Baselines on dtsim's own input data: torch eager, torch.compile, torch.compile(mode=\n"
          "\"max-autotune\"), Liger-Kernel's forward kernel where it has one, the Triton tutorial's kernel where it has one\n"
          "(--tutorials DIR; '-' where none). 'same as Triton': the best schedule through the emitted Triton module (do_bench).\n"
          "'best found by': the search phase of the best schedule (own, seeded, random, refined, enumerated). Times are\n"
          "medians in ms, L2 flushed. timed / min / GPU: schedules lowered, checked and timed per minute of each timing\n"
          "worker's wall time.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtsim", nargs="?", help="path to a dtsim binary built with the CUDA backend")
    ap.add_argument("--only", default="", help="comma-separated substrings of operation names to run")
    ap.add_argument("--budget", type=int, default=200, help="schedules per operation (dtsim tune --budget)")
    ap.add_argument("--tune-time", type=float, default=0, help="seconds of search per operation instead (dtsim tune --time; "
                    "it enumerates spaces of up to 100000 schedules in index order, so DyT's is better searched with a budget)")
    ap.add_argument("--gpus", default="", help="pass --gpus LIST to dtsim tune (one timing worker per GPU)")
    ap.add_argument("--tutorials", default="", help="folder holding the Triton tutorials (02-fused-softmax.py, 03-matrix-"
                    "multiplication.py, 05-layer-norm.py, 06-fused-attention.py): their kernels are baselines")
    ap.add_argument("--deadline", type=float, default=0, help="seconds for the whole run: past it, the passes of "
                    "max-autotune and of the Triton timing stop (the first pass, baselines and search, runs whole; 0: no limit)")
    ap.add_argument("--no-triton", action="store_true", help="skip timing the best schedule through the emitted Triton")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per dtsim call")
    ap.add_argument("--out-dir", default="tune_out", help="where each operation's JSON, CSV, SVG and best .dt go")
    ap.add_argument("--table", metavar="DIR", help="print the table of the rows saved in DIR and stop")
    a = ap.parse_args()
    if a.table:
        rows = [json.load(open(os.path.join(a.table, f))) for f in sorted(os.listdir(a.table)) if f.endswith(".row.json")]
        for r in rows:  # rows of runs before the baselines were one dict
            r.setdefault("baselines", {k: v for k, v in (("torch", r.get("torch_ms")), ("torch.compile", r.get("compile_ms"))) if v})
        print_table(rows, rows[0].get("device", "?") if rows else "?")
        return 0
    if not a.dtsim:
        ap.error("give the path to dtsim (or --table DIR)")
    a.dtsim = os.path.abspath(a.dtsim)
    a.out_dir = os.path.abspath(a.out_dir)
    a.tutorials = os.path.abspath(a.tutorials) if a.tutorials else ""
    deadline = time.time() + a.deadline if a.deadline else float("inf")
    os.makedirs(a.out_dir, exist_ok=True)
    import torch
    import triton
    from triton.testing import do_bench

    p = torch.cuda.get_device_properties(0)
    device = f"{p.name} ({p.multi_processor_count} SMs), torch {torch.__version__}, triton {triton.__version__}"
    try:
        import liger_kernel  # noqa: F401
        from importlib.metadata import version
        device += f", liger-kernel {version('liger-kernel')}"
    except Exception:
        device += ", no liger-kernel"
    search = f"{a.tune_time:g} s of search" if a.tune_time else f"budget {a.budget}"
    print(f"device {device}; {search} per operation", flush=True)
    ops = [op for op in OPS if not a.only or any(s in op[0] for s in a.only.split(","))]
    rows = []

    def save(row):
        with open(os.path.join(a.out_dir, row["op"] + ".row.json"), "w") as f:
            json.dump(row, f)

    try:
        # 1. every operation: the baselines but max-autotune, and the search (the table's core)
        for name, file, sizes, kind in ops:
            t0 = time.time()
            row = one_op(a, name, file, sizes, kind, torch, do_bench)
            row["device"] = device
            rows.append(row)
            save(row)
            base = ", ".join(f"{k} {fmt(v)}" for k, v in row["baselines"].items())
            print(f"  {name}: best {fmt(row.get('best_ms'))} ms ({row.get('best_phase') or '-'}); {base}; "
                  f"{row.get('searched', '-')} searched, {row.get('within_10pct', '-')} within 10%, "
                  f"{fmt(row.get('timed_per_minute_per_gpu'), '%.0f')} timed/min/GPU ({time.time() - t0:.0f} s) {'; '.join(row['notes'])}",
                  flush=True)
        # 2. max-autotune (minutes of compiling and autotuning), while the --deadline allows
        for (name, file, sizes, kind), row in zip(ops, rows):
            if time.time() >= deadline:
                row["notes"].append("max-autotune: not run (the --deadline passed)")
                continue
            t0 = time.time()
            ms, notes = time_baselines(a, name, file, sizes, torch, do_bench, ("max-autotune",))
            row["baselines"].update(ms)
            row["notes"] += notes
            save(row)
            print(f"  {name}: max-autotune {fmt(ms.get('max-autotune'))} ms ({time.time() - t0:.0f} s)", flush=True)
        # 3. the best schedule through the emitted Triton, while the --deadline allows
        for (name, file, sizes, kind), row in zip(ops, rows):
            if a.no_triton or not row.get("best_ms"):
                continue
            if time.time() >= deadline:
                row["notes"].append("same as Triton: not run (the --deadline passed)")
                continue
            triton_check(a, row, file, sizes)
            save(row)
    finally:
        print_table(rows, device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
