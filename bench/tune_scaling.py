#!/usr/bin/env python3
"""How `dtsim tune --gpus` scales: for each operation, the same search (seed, budget) on one GPU in one
process, then with one timing worker per entry of --gpus (each searching one shard, their results
merged); the wall time, schedules timed per minute in all and per GPU, the best time of each and
whether the best schedule is the same, and the scaling figure (rate with the workers / rate alone).

usage (on a GPU machine, from the repository root):
  python3 bench/tune_scaling.py PATH/TO/dtsim --gpus all [--only softmax,mmsigmoid] [--budget N]
  python3 bench/tune_scaling.py PATH/TO/dtsim --gpus 0,0      # two workers on one GPU: the mechanism

With two workers on one GPU the two time on the same device at once, so the figure says how much the
CPU side (lowering, checking, compiling) overlaps, not what more GPUs give. The shards refine around
their own fastest schedules, so the best can differ from the one-process search; the column says so.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tune_experiment import OPS, size_args  # noqa: E402


def tune(dtsim, file, sizes, budget, seed, extra):
    t0 = time.time()
    r = subprocess.run([dtsim, "tune", file, *size_args(sizes), "--budget", str(budget), "--seed", str(seed), "--json", *extra],
                       capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1])
    return json.loads(r.stdout), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtsim")
    ap.add_argument("--gpus", default="all", help="the workers (dtsim tune --gpus)")
    ap.add_argument("--only", default="softmax,mmsigmoid")
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    dtsim = os.path.abspath(a.dtsim)
    rows = []
    for name, file, sizes, _ in OPS:
        if name not in a.only.split(","):
            continue
        one, w1 = tune(dtsim, file, sizes, a.budget, a.seed, [])
        many, wn = tune(dtsim, file, sizes, a.budget, a.seed, ["--gpus", a.gpus])
        r1, rn = one["timed"] * 60 / w1, many["timed"] * 60 / wn
        same = bool(one["best"] and many["best"] and one["best"]["index"] == many["best"]["index"])
        rows.append((name, one, w1, r1, many, wn, rn, same))
        print(f"  {name}: one GPU {w1:.1f} s, {r1:.0f} timed/min; {many['workers']} workers {wn:.1f} s, {rn:.0f} timed/min", flush=True)
    print(f"\n--gpus {a.gpus}, budget {a.budget}, seed {a.seed}\n")
    print("| op | workers | wall s (one / workers) | timed (one / workers) | timed per min (one / workers) | per GPU worker | scaling | "
          "best ms (one / workers) | same best schedule |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, one, w1, r1, many, wn, rn, same in rows:
        n = many["workers"]
        b1 = one["best"]["ms"] if one["best"] else float("nan")
        bn = many["best"]["ms"] if many["best"] else float("nan")
        print(f"| {name} | {n} | {w1:.1f} / {wn:.1f} | {one['timed']} / {many['timed']} | {r1:.0f} / {rn:.0f} | {rn / n:.0f} | "
              f"{(f'{rn / r1:.2f}x' if r1 else '-')} (target {0.8 * n:.1f}x) | {b1:.4f} / {bn:.4f} | {'yes' if same else 'no'} |")
    print("\nscaling: timed schedules per minute of wall time with the workers over the same alone (one process, one GPU).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
