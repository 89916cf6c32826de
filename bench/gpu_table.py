#!/usr/bin/env python3
"""The GPU yardstick table: dtsim's CUDA backend vs the emitted Triton module (same schedule, same
sizes, both timed with the L2 flushed between launches) vs the torch equivalent, one row per workload.

usage (on a machine with a GPU, python3 with torch and triton, from the repository root):
  python3 bench/gpu_table.py PATH/TO/dtsim [--only NAME[,NAME...]] [--json-dir DIR] [--dtsim-flag FLAG]...

By default (`--timer do_bench`) every column is timed the same way, in this process, with
triton.testing.do_bench (median, L2 flushed before each launch): dtsim's kernel is compiled from FILE
by the Python module (dtsim._dtsim.compile_file) and launched over torch tensors (a CudaLauncher:
no copies, the caller's stream); the Triton column is the same program emitted as Triton (`dtsim emit
--triton`), imported and launched over the same tensors; the torch column is the torch equivalent on
inputs of the same range ([-1, 1)). The outputs of dtsim and Triton are compared before timing (a
mismatch is a CHECK FAILED note). `--rounds R` times the three R times, alternated (dtsim, Triton,
torch, then the reverse), and reports each one's median over the rounds with the range of the
per-round dtsim/Triton ratios. `dtsim bench --json --reps 5` gives each row's FLOP and byte counts.
This needs the Python module built for this python3 (target _dtsim; PYTHONPATH=BUILD/python, or
--pythonpath).

`--timer events` is the older method: each row runs `dtsim bench FILE --vs-triton --json` (dtsim
timed with CUDA events after writing a buffer twice the L2 size, in its own process; the emitted
module with do_bench in a python3 process of its own) and torch with do_bench here.
The table is printed last. Ratio = dtsim time / Triton time (1.00 = as fast).

Schedule options on both sides: `--dtsim-flag=--warp-specialize` (or `--persistent`, their `--no-`
forms, `--persistent-ctas N`) asks dtsim's plan for the option and writes it into the emitted module
in Triton's spelling too (`tl.range(..., warp_specialize=True)`, tutorial 09's persistent loop), so
the row compares the same schedule; e.g. the 128x256 f16 matmul with a producer warp on both sides:
  python3 bench/gpu_table.py build/dtsim --only "matmul f16 4096^3 128x256" --dtsim-flag=--warp-specialize
`--cluster` has no Triton spelling: the Triton column then runs without clusters.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, file, --arg values, what the figure is, torch equivalent (built by torch_case below)
WORKLOADS = [
    ("add 2^28 f32", "bench/gpu/add.tile", {}, "GB/s"),
    ("softmax 32768x4096 f32", "bench/gpu/softmax.tile", {}, "GB/s"),
    ("layernorm 8192x8192 f32", "examples/layernorm.dt", {"x_SIZE": 8192, "y_SIZE": 8192}, "GB/s"),
    ("rmsnorm 8192x8192 f32", "examples/rmsnorm.dt", {"x_SIZE": 8192, "y_SIZE": 8192}, "GB/s"),
    ("DyT 128x65536 f32", "examples/dyt.dt", {"x_SIZE": 128, "y_SIZE": 65536}, "GB/s"),
    ("matmul f16 4096^3", "bench/gpu/matmul_f16.tile", {"M": 4096, "N": 4096, "K": 4096}, "TFLOP/s"),
    ("matmul f16 8192^3", "bench/gpu/matmul_f16.tile", {"M": 8192, "N": 8192, "K": 8192}, "TFLOP/s"),
    ("matmul bf16 4096^3", "bench/gpu/matmul_bf16.tile", {"M": 4096, "N": 4096, "K": 4096}, "TFLOP/s"),
    ("matmul bf16 8192^3", "bench/gpu/matmul_bf16.tile", {"M": 8192, "N": 8192, "K": 8192}, "TFLOP/s"),
    # The same at 128 x 256 x 64 tiles, 4 stages (both dtsim and Triton on that schedule).
    ("matmul f16 4096^3 128x256", "bench/gpu/matmul_f16_wide.tile", {"M": 4096, "N": 4096, "K": 4096}, "TFLOP/s"),
    ("matmul f16 8192^3 128x256", "bench/gpu/matmul_f16_wide.tile", {"M": 8192, "N": 8192, "K": 8192}, "TFLOP/s"),
    ("matmul bf16 4096^3 128x256", "bench/gpu/matmul_bf16_wide.tile", {"M": 4096, "N": 4096, "K": 4096}, "TFLOP/s"),
    ("matmul bf16 8192^3 128x256", "bench/gpu/matmul_bf16_wide.tile", {"M": 8192, "N": 8192, "K": 8192}, "TFLOP/s"),
    ("matmul f16 4096^3 256x128", "bench/gpu/matmul_f16_tall.tile", {"M": 4096, "N": 4096, "K": 4096}, "TFLOP/s"),
    ("matmul f16 8192^3 256x128", "bench/gpu/matmul_f16_tall.tile", {"M": 8192, "N": 8192, "K": 8192}, "TFLOP/s"),
    ("matmul f32 4096^3", "bench/gpu/matmul_f32.tile", {}, "TFLOP/s"),
    # The slides give no attention sizes: 4096 queries, 256 keys, head dimension 64 (the whole key
    # dimension is one tile in this schedule, so its value tile must fit in shared memory).
    ("attention 4096x256 d64", "examples/attention.dt", {"m_SIZE": 4096, "n_SIZE": 64, "k_SIZE": 64, "l_SIZE": 256}, "TFLOP/s"),
    ("2mm outer m512 n1024 k32 l32", "examples/2mm_outer.dt", {"m_SIZE": 512, "n_SIZE": 1024, "k_SIZE": 32, "l_SIZE": 32}, "TFLOP/s"),
    ("2mm inner m1024 n1024 k64 l64", "examples/2mm_inner.dt", {"m_SIZE": 1024, "n_SIZE": 1024, "k_SIZE": 64, "l_SIZE": 64}, "TFLOP/s"),
    # The DT examples at sizes that fill the chip (at least several CTAs per SM).
    ("mm.dt 4096^3 f32", "examples/mm.dt", {"x_SIZE": 4096, "y_SIZE": 4096, "k_SIZE": 4096}, "TFLOP/s"),
    ("mmsigmoid.dt 4096^3 f16", "examples/mmsigmoid.dt", {"x_SIZE": 4096, "y_SIZE": 4096, "k_SIZE": 4096}, "TFLOP/s"),
    ("attention 16384x256 d64", "examples/attention.dt", {"m_SIZE": 16384, "n_SIZE": 64, "k_SIZE": 64, "l_SIZE": 256}, "TFLOP/s"),
    ("2mm outer m8192 n1024 k32 l32", "examples/2mm_outer.dt", {"m_SIZE": 8192, "n_SIZE": 1024, "k_SIZE": 32, "l_SIZE": 32}, "TFLOP/s"),
    ("2mm inner m4096 n4096 k64 l64", "examples/2mm_inner.dt", {"m_SIZE": 4096, "n_SIZE": 4096, "k_SIZE": 64, "l_SIZE": 64}, "TFLOP/s"),
]


def torch_case(name, a, torch):
    """The torch equivalent of a workload, as a zero-argument function (inputs made once)."""
    dev = "cuda"
    F = torch.nn.functional
    if name.startswith("add"):
        x, y = _rand(torch, 1 << 28), _rand(torch, 1 << 28)
        z = torch.empty_like(x)
        return lambda: torch.add(x, y, out=z)
    if name.startswith("softmax"):
        x = _rand(torch, 32768, 4096)
        return lambda: torch.softmax(x, 1)
    if name.startswith("layernorm"):
        x, w, b = _rand(torch, 8192, 8192), _rand(torch, 8192), _rand(torch, 8192)
        return lambda: F.layer_norm(x, (8192,), w, b, 1e-5)
    if name.startswith("rmsnorm"):
        x, w = _rand(torch, 8192, 8192), _rand(torch, 8192)
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x, (8192,), w, 1e-5)
        return lambda: x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-5) * w
    if name.startswith("DyT"):
        x, g, b = _rand(torch, 128, 65536), _rand(torch, 65536), _rand(torch, 65536)
        return lambda: g * torch.tanh(0.5 * x) + b
    if name.startswith("matmul f16") or name.startswith("matmul bf16"):
        s, t = a["M"], torch.float16 if "f16 " in name and "bf16" not in name else torch.bfloat16
        x, y = _rand(torch, s, s, dtype=t), _rand(torch, s, s, dtype=t)
        return lambda: x @ y
    if name.startswith("matmul f32"):
        torch.backends.cuda.matmul.allow_tf32 = False
        x, y = _rand(torch, 4096, 4096), _rand(torch, 4096, 4096)
        return lambda: x @ y
    if name.startswith("mm.dt"):
        torch.backends.cuda.matmul.allow_tf32 = False
        x, y = _rand(torch, a["x_SIZE"], a["k_SIZE"]), _rand(torch, a["k_SIZE"], a["y_SIZE"])
        return lambda: x @ y
    if name.startswith("mmsigmoid"):
        x = _rand(torch, a["x_SIZE"], a["k_SIZE"], dtype=torch.float16)
        y = _rand(torch, a["k_SIZE"], a["y_SIZE"], dtype=torch.float16)
        return lambda: torch.sigmoid(x @ y)
    if name.startswith("attention"):
        torch.backends.cuda.matmul.allow_tf32 = False
        m, n, k_, l_ = a["m_SIZE"], a["n_SIZE"], a["k_SIZE"], a["l_SIZE"]
        q = _rand(torch, m, k_)
        k = _rand(torch, k_, l_)
        v = _rand(torch, l_, n)
        scale = 1.0 / math.sqrt(l_)
        return lambda: torch.softmax(q @ k * scale, 1) @ v
    if name.startswith("2mm"):
        torch.backends.cuda.matmul.allow_tf32 = False
        x = _rand(torch, a["m_SIZE"], a["k_SIZE"])
        y = _rand(torch, a["k_SIZE"], a["l_SIZE"])
        z = _rand(torch, a["l_SIZE"], a["n_SIZE"])
        return lambda: (x @ y) @ z
    raise KeyError(name)


def _rand(torch, *shape, dtype=None):
    """Inputs in [-1, 1), the range dtsim and the emitted module give their inputs."""
    t = torch.rand(*shape, device="cuda") * 2 - 1
    return t if dtype is None else t.to(dtype)


def run_dtsim(dtsim, file, args, timeout, flags=(), vs_triton=True, reps=None):
    cmd = [dtsim, "bench", file, "--json", *flags] + (["--vs-triton"] if vs_triton else [])
    if reps:
        cmd += ["--reps", str(reps)]
    for k, v in args.items():
        cmd += ["--arg", f"{k}={v}"]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s", time.time() - t0
    objs = []
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            objs.append(json.loads(line))
    if not objs:
        why = (r.stdout + r.stderr).strip().splitlines()
        return None, (why[-1] if why else f"exit {r.returncode}"), time.time() - t0
    # One row per workload: the whole module when it has several kernels.
    obj = next((o for o in objs if o["kernel"] == "<module>"), objs[0])
    return obj, None, time.time() - t0


def schedule_of(flags):
    """The CUDA backend's schedule options that `--dtsim-flag`s ask for, as compile_file takes them."""
    out, it = {}, iter(flags)
    for f in it:
        name, _, value = f.partition("=")
        if name == "--persistent-ctas":
            out["persistent_ctas"] = int(value or next(it))
            continue
        neg = name.startswith("--no-")
        key = name[5 if neg else 2:].replace("-", "_")
        if key not in ("warp_specialize", "cluster", "persistent"):
            raise SystemExit(f"gpu_table: --dtsim-flag {f}: only --[no-]warp-specialize, --[no-]cluster, "
                             "--[no-]persistent and --persistent-ctas N take effect with --timer do_bench")
        out[key] = -1 if neg else 1
    return out


def load_emitted(dtsim, file, args, flags, tmpdir, tag):
    """The program emitted as Triton (dtsim emit --triton), imported as a module."""
    import importlib.util
    path = os.path.join(tmpdir, f"emitted_{tag}.py")
    cmd = [dtsim, "emit", "--triton", file, "-o", path, *flags]
    for k, v in args.items():
        cmd += ["--arg", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError("emit --triton: " + (r.stderr.strip().splitlines() or ["failed"])[-1])
    spec = importlib.util.spec_from_file_location(f"emitted_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same_process_times(dtsim, file, args, flags, rounds, torch_fn, torch, do_bench, tmpdir, tag):
    """dtsim, Triton (the emitted module) and torch timed by do_bench in this process over the same
    tensors, `rounds` times alternated. Returns (dtsim ms, Triton ms, torch ms, ratio range, note)."""
    from dtsim import _dtsim
    sargs = {k: str(v) for k, v in args.items()}
    mod = load_emitted(dtsim, file, args, flags, tmpdir, tag)
    params = mod.bind({k: v for k, v in sargs.items() if k in mod.PARAMS})  # (.dt sizes are lowered in)
    bufs = mod.make_buffers(params, device="cuda", exact=False)
    c = _dtsim.compile_file(os.path.join(ROOT, file), sargs, schedule=schedule_of(flags))
    decl = c.buffers(c.launch_args)
    dev = [(n, bufs[n].data_ptr(), dt, list(shape)) for n, dt, shape, _ in decl]
    launcher = _dtsim.cuda_launcher(c, c.launch_args, dev, sanitize="none")
    if launcher is None:
        raise RuntimeError("the program has buffers the launcher cannot bind")
    ptrs = [bufs[n].data_ptr() for n, *_ in decl]
    stream = torch.cuda.current_stream().cuda_stream
    outs = [n for n, _, _, io in decl if io in ("out", "inout")]

    def run_dtsim_once():
        launcher.launch(ptrs, stream)

    def run_triton_once():
        mod.run(bufs, params)

    # Correctness on the same inputs first (inout buffers start from the same values on both sides).
    start = {n: bufs[n].clone() for n in outs}
    run_dtsim_once()
    torch.cuda.synchronize()
    got = {n: bufs[n].clone() for n in outs}
    for n in outs:
        bufs[n].copy_(start[n])
    run_triton_once()
    torch.cuda.synchronize()
    note = ""
    for n in outs:
        a, b = got[n].float(), bufs[n].float()
        tol = 2e-2 if got[n].dtype in (torch.float16, torch.bfloat16) else 1e-3
        if not torch.allclose(a, b, rtol=tol, atol=tol):
            note = f"CHECK FAILED: {n} differs from Triton's (max |diff| {float((a - b).abs().max()):.3g})"
    fns = [("dtsim", run_dtsim_once), ("triton", run_triton_once)] + ([("torch", torch_fn)] if torch_fn else [])
    times = {k: [] for k, _ in fns}
    for r in range(rounds):
        for k, fn in (fns if r % 2 == 0 else fns[::-1]):
            times[k].append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    ratios = [d / t for d, t in zip(times["dtsim"], times["triton"])]
    return med["dtsim"], med["triton"], med.get("torch"), (min(ratios), max(ratios)), note


def figure(kind, obj, ms):
    if ms is None or not ms or obj is None:
        return None
    if kind == "TFLOP/s":
        return obj["flops"] / (ms * 1e-3) / 1e12 if obj.get("flops") else None
    return obj["bytes"] / (ms * 1e-3) / 1e9


def fmt(v, f="%.3f"):
    return "-" if v is None else f % v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtsim", help="path to a dtsim binary built with the CUDA backend")
    ap.add_argument("--only", default="", help="comma-separated substrings of workload names to run")
    ap.add_argument("--timeout", type=int, default=150, help="seconds per dtsim bench call")
    ap.add_argument("--json-dir", default=None, help="also write each dtsim JSON object there")
    ap.add_argument("--dtsim-flag", action="append", default=[], help="a flag for every dtsim bench call (e.g. --warp-specialize: on both sides)")
    ap.add_argument("--timer", choices=("do_bench", "events"), default="do_bench",
                    help="do_bench: all three columns by do_bench in this process (default); events: dtsim bench's own loop")
    ap.add_argument("--rounds", type=int, default=3, help="--timer do_bench: alternated rounds (default 3)")
    ap.add_argument("--pythonpath", default=None, help="where the dtsim package is (default: BUILD/python beside the binary)")
    a = ap.parse_args()
    dtsim = os.path.abspath(a.dtsim)
    import tempfile
    import torch
    import triton
    from triton.testing import do_bench
    if a.timer == "do_bench":
        sys.path.insert(0, a.pythonpath or os.path.join(os.path.dirname(dtsim), "python"))
        from dtsim import _dtsim  # noqa: F401  (fails here, not per row, when the module is missing)
    tmpdir = tempfile.mkdtemp(prefix="gpu_table-")

    p = torch.cuda.get_device_properties(0)
    print(f"device {p.name}, {p.multi_processor_count} SMs; torch {torch.__version__}, triton {triton.__version__}", flush=True)
    rows = []
    start = time.time()
    for name, file, args, kind in WORKLOADS:
        if a.only and not any(s in name for s in a.only.split(",")):
            continue
        by_events = a.timer == "events"
        obj, why, secs = run_dtsim(dtsim, file, args, a.timeout, a.dtsim_flag, vs_triton=by_events,
                                   reps=None if by_events else 5)
        torch_ms, fn = None, None
        try:
            fn = torch_case(name, args, torch)
            if by_events:
                torch_ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
        except Exception as e:  # a torch op missing in this version, or out of memory
            print(f"  torch {name}: {type(e).__name__}: {e}", flush=True)
            fn = None
        spread = None
        if by_events:
            d_ms = obj["median_ms"] if obj else None
            t_ms = obj.get("triton_ms") if obj else None
            note = why or (obj.get("triton_skipped") if obj else None) or ""
            if obj and obj.get("check") == "fail":
                note = "CHECK FAILED: " + obj.get("check_note", "")
        else:
            t0 = time.time()
            try:
                d_ms, t_ms, torch_ms, spread, note = same_process_times(
                    dtsim, file, args, a.dtsim_flag, a.rounds, fn, torch, do_bench, tmpdir, len(rows))
            except Exception as e:
                d_ms = t_ms = None
                note = f"{type(e).__name__}: {e}"
            secs += time.time() - t0
            note = note or why or ""
        fn = None
        torch.cuda.empty_cache()
        if spread and not note:
            note = f"rounds {spread[0]:.2f}-{spread[1]:.2f}x"
        rows.append((name, d_ms, t_ms, torch_ms, (d_ms / t_ms) if d_ms and t_ms else None, kind,
                     figure(kind, obj, d_ms), figure(kind, obj, t_ms), figure(kind, obj, torch_ms), note))
        print(f"  {name}: dtsim {fmt(d_ms)} ms, triton {fmt(t_ms)} ms, torch {fmt(torch_ms)} ms ({secs:.0f} s) {note}", flush=True)
        if a.json_dir and obj:
            os.makedirs(a.json_dir, exist_ok=True)
            with open(os.path.join(a.json_dir, name.split()[0] + "_" + str(len(rows)) + ".json"), "w") as f:
                json.dump(obj, f)
    method = (f"all columns by do_bench in one process, {a.rounds} rounds alternated" if a.timer == "do_bench"
              else "dtsim by dtsim bench's event loop, Triton and torch by do_bench")
    print(f"\n{len(rows)} workloads in {time.time() - start:.0f} s on {p.name} ({method})\n")
    head = ("workload", "dtsim ms", "Triton ms", "torch ms", "dtsim/Triton", "unit", "dtsim", "Triton", "torch", "note")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        name, d, t, tt, ratio, kind, fd, ft, ftt, note = r
        print(f"| {name} | {fmt(d, '%.4f')} | {fmt(t, '%.4f')} | {fmt(tt, '%.4f')} | {fmt(ratio, '%.2fx')} | {kind} | "
              f"{fmt(fd, '%.1f')} | {fmt(ft, '%.1f')} | {fmt(ftt, '%.1f')} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
