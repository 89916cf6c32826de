#!/usr/bin/env python3
"""Whether `dtsim tune`'s timed window ranks the schedules as a longer one does: for each operation,
the same one-process search (seed, budget) with --timed-ms LONG (100: `dtsim bench`'s window) and
with --timed-ms SHORT (default 25, tune's default), each with a PTX cache of its own. The two draw the
same schedules until timing noise changes what the refinement draws; over the schedules both timed,
the table gives the median and largest relative difference of their times, the rank correlation
(Spearman), whether each search's best is within 1% of the other's time for it, and the wall time and
timed schedules per minute of each.

usage (on a GPU machine, from the repository root):
  python3 bench/tune_window.py PATH/TO/dtsim [--only softmax,layernorm,rmsnorm] [--budget N] [--long 100] [--short 25]
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tune_experiment import OPS  # noqa: E402
from tune_scaling import tune  # noqa: E402


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    for k, i in enumerate(order):
        r[i] = float(k)
    return r


def spearman(a, b):
    n = len(a)
    if n < 3:
        return float("nan")
    ra, rb = ranks(a), ranks(b)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtsim")
    ap.add_argument("--only", default="softmax,layernorm,rmsnorm")
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--long", type=float, default=100)
    ap.add_argument("--short", type=float, default=25)
    a = ap.parse_args()
    dtsim = os.path.abspath(a.dtsim)
    print(f"budget {a.budget}, seed {a.seed}: --timed-ms {a.long:g} against {a.short:g}\n")
    print("| op | wall s (long / short) | timed per min (long / short) | both timed | median diff | largest diff | "
          "Spearman | best (long / short), ms | each best within 1% in the other |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, file, sizes, _ in OPS:
        if name not in a.only.split(","):
            continue
        lo, wl = tune(dtsim, file, sizes, a.budget, a.seed, ["--timed-ms", str(a.long)])
        sh, ws = tune(dtsim, file, sizes, a.budget, a.seed, ["--timed-ms", str(a.short)])
        tl = {c["index"]: c["ms"] for c in lo["candidates"] if c.get("ms")}
        ts = {c["index"]: c["ms"] for c in sh["candidates"] if c.get("ms")}
        both = sorted(set(tl) & set(ts))
        diffs = sorted(abs(ts[i] / tl[i] - 1) for i in both)
        med = diffs[len(diffs) // 2] if diffs else float("nan")
        rho = spearman([tl[i] for i in both], [ts[i] for i in both])
        bl, bs = lo["best"], sh["best"]
        agree = "-"
        if bl and bs and bl["index"] in ts and bs["index"] in tl:
            agree = "yes" if ts[bl["index"]] <= 1.01 * bs["ms"] and tl[bs["index"]] <= 1.01 * bl["ms"] else "no"
        print(f"| {name} | {wl:.1f} / {ws:.1f} | {lo['timed'] * 60 / wl:.0f} / {sh['timed'] * 60 / ws:.0f} | {len(both)} | "
              f"{med * 100:.2f}% | {(diffs[-1] * 100 if diffs else float('nan')):.2f}% | {rho:.3f} | "
              f"{(bl['ms'] if bl else float('nan')):.4f} / {(bs['ms'] if bs else float('nan')):.4f} | {agree} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
