#!/usr/bin/env python3
"""How `dtsim tune --gpus` scales: for each operation, the same search (seed, budget) on one GPU in one
process, then with one timing worker per entry of --gpus (each searching one shard, the shards
exchanging each round's outcomes, so that together they are the one-process search; their results
merged); the wall time, schedules timed per minute in all and per GPU, the scaling figure (rate with
the workers / rate alone), how many draws the two searches share before they part, the best time of
each and whether the best schedule is the same.

usage (on a GPU machine, from the repository root):
  python3 bench/tune_scaling.py PATH/TO/dtsim --gpus all [--only softmax,mmsigmoid] [--budget N]
  python3 bench/tune_scaling.py PATH/TO/dtsim --gpus 0,0      # two workers on one GPU: the mechanism

With two workers on one GPU the two time on the same device at once, so the figure says how much the
CPU side (lowering, checking, compiling) overlaps, not what more GPUs give. The two searches draw
the same schedules until timing noise (two runs never time a schedule alike) changes which schedules
are the fastest and so what the refinement draws next: "same draws" counts the draws before the
first difference (all of them: the same search throughout), and where the best schedules differ,
the last column gives how far the workers' best is from the one-process best.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tune_experiment import OPS, size_args  # noqa: E402


def tune(dtsim, file, sizes, budget, seed, extra):
    # Each search compiles into a PTX cache of its own: one left by an earlier search would hand the
    # later one its compiled candidates and inflate its rate.
    cache = tempfile.mkdtemp(prefix="dtsim-ptx-")
    t0 = time.time()
    r = subprocess.run([dtsim, "tune", file, *size_args(sizes), "--budget", str(budget), "--seed", str(seed), "--json",
                        "--cache-dir", cache, *extra],
                       capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1])
    return json.loads(r.stdout), wall


def save(a, name, result):
    if a.json_dir:
        os.makedirs(a.json_dir, exist_ok=True)
        with open(os.path.join(a.json_dir, name + ".json"), "w") as f:
            json.dump(result, f)


def phases(r):
    """Where a search's time went (a merged result adds its workers' seconds)."""
    return (f" (search {r['seconds']:.1f} s: checking {r['check_seconds']:.1f} s, timing {r['timing_seconds']:.1f} s"
            f" of which waiting for compiles {r['compile_wait_seconds']:.1f} s, both at once {r.get('overlap_seconds', 0):.1f} s;"
            f" {r.get('rounds', '?')} rounds" + (f"; timed by each worker: {', '.join(map(str, r['gpu_timed']))}" if len(r.get("gpu_timed", [])) > 1 else "")
            + ")")


def shared_draws(one, many):
    """The draws, in order, that the two searches have in common before their first difference."""
    a = [c["index"] for c in sorted(one["candidates"], key=lambda c: c["draw"])]
    b = [c["index"] for c in sorted(many["candidates"], key=lambda c: c["draw"])]
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtsim")
    ap.add_argument("--gpus", action="append", help="the workers (dtsim tune --gpus); repeat for several "
                    "worker sets, each against the same one-GPU search (default: all)")
    ap.add_argument("--only", default="softmax,mmsigmoid")
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json-dir", help="also write each search's JSON result there")
    ap.add_argument("--timed-ms", type=float, help="dtsim tune --timed-ms for every search (default: dtsim's)")
    a = ap.parse_args()
    window = ["--timed-ms", str(a.timed_ms)] if a.timed_ms else []
    a.gpus = a.gpus or ["all"]
    dtsim = os.path.abspath(a.dtsim)
    rows = []
    for name, file, sizes, _ in OPS:
        if name not in a.only.split(","):
            continue
        one, w1 = tune(dtsim, file, sizes, a.budget, a.seed, window)
        r1 = one["timed"] * 60 / w1
        save(a, f"{name}-one", one)
        print(f"  {name}: one GPU {w1:.1f} s, {r1:.0f} timed/min{phases(one)}", flush=True)
        for gpus in a.gpus:
            many, wn = tune(dtsim, file, sizes, a.budget, a.seed, ["--gpus", gpus, *window])
            rn = many["timed"] * 60 / wn
            save(a, f"{name}-gpus-{gpus.replace(',', '_')}", many)
            same = bool(one["best"] and many["best"] and one["best"]["index"] == many["best"]["index"])
            rows.append((name, one, w1, r1, many, wn, rn, same, shared_draws(one, many)))
            print(f"  {name}: --gpus {gpus}: {many['workers']} workers {wn:.1f} s, {rn:.0f} timed/min{phases(many)}", flush=True)
    print(f"\n--gpus {' / '.join(a.gpus)}, budget {a.budget}, seed {a.seed}\n")
    print("| op | workers | wall s (one / workers) | timed (one / workers) | timed per min (one / workers) | per GPU worker | scaling | "
          "same draws | best ms (one / workers) | same best schedule |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, one, w1, r1, many, wn, rn, same, shared in rows:
        n = many["workers"]
        b1 = one["best"]["ms"] if one["best"] else float("nan")
        bn = many["best"]["ms"] if many["best"] else float("nan")
        drawn = max(len(one["candidates"]), len(many["candidates"]))
        verdict = "yes" if same else f"no ({(bn / b1 - 1) * 100:+.1f}%)" if b1 == b1 and bn == bn else "no"
        print(f"| {name} | {n} | {w1:.1f} / {wn:.1f} | {one['timed']} / {many['timed']} | {r1:.0f} / {rn:.0f} | {rn / n:.0f} | "
              f"{(f'{rn / r1:.2f}x' if r1 else '-')} (target {0.8 * n:.1f}x) | {shared} of {drawn} | {b1:.4f} / {bn:.4f} | {verdict} |")
    print("\nscaling: timed schedules per minute of wall time with the workers over the same alone (one process, one GPU).")
    print("same draws: the draws (by position) in which the two searches agree before they first differ; they differ only where "
          "timing noise changed what the refinement drew.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
