#!/usr/bin/env python3
"""The GPU yardstick table: dtsim's CUDA backend vs the emitted Triton module (same schedule, same
sizes, both timed with the L2 flushed between launches) vs the torch equivalent, one row per workload.

usage (on a machine with a GPU, python3 with torch and triton, from the repository root):
  python3 bench/gpu_table.py PATH/TO/dtsim [--only NAME[,NAME...]] [--json-dir DIR] [--dtsim-flag FLAG]...

Each row runs `dtsim bench FILE --vs-triton --json --arg ...` (dtsim times with CUDA events after
flushing L2; the emitted module with triton.testing.do_bench, median) and times the torch equivalent
with do_bench (median). The table is printed last. Ratio = dtsim time / Triton time (1.00 = as fast).

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
        x, y = torch.rand(1 << 28, device=dev), torch.rand(1 << 28, device=dev)
        z = torch.empty_like(x)
        return lambda: torch.add(x, y, out=z)
    if name.startswith("softmax"):
        x = torch.rand(32768, 4096, device=dev)
        return lambda: torch.softmax(x, 1)
    if name.startswith("layernorm"):
        x, w, b = torch.rand(8192, 8192, device=dev), torch.rand(8192, device=dev), torch.rand(8192, device=dev)
        return lambda: F.layer_norm(x, (8192,), w, b, 1e-5)
    if name.startswith("rmsnorm"):
        x, w = torch.rand(8192, 8192, device=dev), torch.rand(8192, device=dev)
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x, (8192,), w, 1e-5)
        return lambda: x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-5) * w
    if name.startswith("DyT"):
        x, g, b = torch.rand(128, 65536, device=dev), torch.rand(65536, device=dev), torch.rand(65536, device=dev)
        return lambda: g * torch.tanh(0.5 * x) + b
    if name.startswith("matmul f16") or name.startswith("matmul bf16"):
        s, t = a["M"], torch.float16 if "f16 " in name and "bf16" not in name else torch.bfloat16
        x, y = torch.rand(s, s, device=dev, dtype=t), torch.rand(s, s, device=dev, dtype=t)
        return lambda: x @ y
    if name.startswith("matmul f32"):
        torch.backends.cuda.matmul.allow_tf32 = False
        x, y = torch.rand(4096, 4096, device=dev), torch.rand(4096, 4096, device=dev)
        return lambda: x @ y
    if name.startswith("mm.dt"):
        torch.backends.cuda.matmul.allow_tf32 = False
        x, y = torch.rand(a["x_SIZE"], a["k_SIZE"], device=dev), torch.rand(a["k_SIZE"], a["y_SIZE"], device=dev)
        return lambda: x @ y
    if name.startswith("mmsigmoid"):
        x = torch.rand(a["x_SIZE"], a["k_SIZE"], device=dev, dtype=torch.float16)
        y = torch.rand(a["k_SIZE"], a["y_SIZE"], device=dev, dtype=torch.float16)
        return lambda: torch.sigmoid(x @ y)
    if name.startswith("attention"):
        torch.backends.cuda.matmul.allow_tf32 = False
        m, n, k_, l_ = a["m_SIZE"], a["n_SIZE"], a["k_SIZE"], a["l_SIZE"]
        q = torch.rand(m, k_, device=dev)
        k = torch.rand(k_, l_, device=dev)
        v = torch.rand(l_, n, device=dev)
        scale = 1.0 / math.sqrt(l_)
        return lambda: torch.softmax(q @ k * scale, 1) @ v
    if name.startswith("2mm"):
        torch.backends.cuda.matmul.allow_tf32 = False
        x = torch.rand(a["m_SIZE"], a["k_SIZE"], device=dev)
        y = torch.rand(a["k_SIZE"], a["l_SIZE"], device=dev)
        z = torch.rand(a["l_SIZE"], a["n_SIZE"], device=dev)
        return lambda: (x @ y) @ z
    raise KeyError(name)


def run_dtsim(dtsim, file, args, timeout, flags=()):
    cmd = [dtsim, "bench", file, "--vs-triton", "--json", *flags]
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
    a = ap.parse_args()
    dtsim = os.path.abspath(a.dtsim)
    import torch
    import triton
    from triton.testing import do_bench

    p = torch.cuda.get_device_properties(0)
    print(f"device {p.name}, {p.multi_processor_count} SMs; torch {torch.__version__}, triton {triton.__version__}", flush=True)
    rows = []
    start = time.time()
    for name, file, args, kind in WORKLOADS:
        if a.only and not any(s in name for s in a.only.split(",")):
            continue
        obj, why, secs = run_dtsim(dtsim, file, args, a.timeout, a.dtsim_flag)
        torch_ms = None
        try:
            fn = torch_case(name, args, torch)
            torch_ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
            del fn
            torch.cuda.empty_cache()
        except Exception as e:  # a torch op missing in this version, or out of memory
            print(f"  torch {name}: {type(e).__name__}: {e}", flush=True)
        d_ms = obj["median_ms"] if obj else None
        t_ms = obj.get("triton_ms") if obj else None
        note = why or (obj.get("triton_skipped") if obj else None) or ""
        if obj and obj.get("check") == "fail":
            note = "CHECK FAILED: " + obj.get("check_note", "")
        rows.append((name, d_ms, t_ms, torch_ms, (d_ms / t_ms) if d_ms and t_ms else None, kind,
                     figure(kind, obj, d_ms), figure(kind, obj, t_ms), figure(kind, obj, torch_ms), note))
        print(f"  {name}: dtsim {fmt(d_ms)} ms, triton {fmt(t_ms)} ms, torch {fmt(torch_ms)} ms ({secs:.0f} s) {note}", flush=True)
        if a.json_dir and obj:
            os.makedirs(a.json_dir, exist_ok=True)
            with open(os.path.join(a.json_dir, name.split()[0] + "_" + str(len(rows)) + ".json"), "w") as f:
                json.dump(obj, f)
    print(f"\n{len(rows)} workloads in {time.time() - start:.0f} s on {p.name}\n")
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
