#!/usr/bin/env python3
"""Tests of `dtsim tune` that need no GPU (on a GPU machine the same cases also time):
  budget                    --budget 20 enumerates, checks and reports (timing skipped or done)
  printed_schedules_check   every schedule tune prints or lists as passing parses and passes
                            `dtsim run --check`, at the tuned sizes and at other sizes
  exhaustive                a 48-schedule space is enumerated whole; every schedule is different
  csv_json                  --csv / --json hold every candidate; the same seed gives the same search;
                            --plot writes an SVG when something was timed, else says why not
  bad_flags                 usage errors and files without schedule freedom: exit 2, one error, no
                            output file
  shards                    --shard I/N: the shards of a sampled and an exhaustive search are disjoint
                            and together, by draw, the unsharded search; the seeds come after the
                            file's own schedule and each is in one shard; shards run at once with
                            --exchange DIR are the unsharded search too
  merge                     --merge of the shards' --out files: the unsharded candidates, one report,
                            CSV; shards of different searches, a shard twice, bad JSON: exit 2
  gpus                      --gpus cpu,cpu (two workers that only check) = the unsharded search;
                            --gpus all without a GPU: exit 2 with one error line
  gpu                       (label gpu; exit 77 without a GPU) timing, best, references, CSV, SVG,
                            the PTX cache on a re-run, --gpus 0,0 (two workers on one GPU),
                            --backend=triton
usage: test_tune.py DTSIM SOURCE_DIR CASE"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

SCHEDULE_CALL = re.compile(r"^\s*[A-Za-z_]\w*\.(block|tensorize|map|fuse_at|num_warps|num_stages|compile|compile_to_kernel)\(")
STATUSES = {"timed", "checked", "pruned", "illegal", "check-failed", "no-triton-form", "gpu-failed"}


def run(dtsim, src, *args, timeout=600):
    return subprocess.run([dtsim, *args], capture_output=True, text=True, cwd=src, timeout=timeout)


def check(cond, msg, r=None):
    if not cond:
        if r is not None:
            msg += f"\n  exit {r.returncode}\n  stdout: {r.stdout[-3000:]}\n  stderr: {r.stderr[-3000:]}"
        print("FAIL: " + msg)
        sys.exit(1)


def tune(dtsim, src, *args):
    r = run(dtsim, src, "tune", *args)
    check(r.returncode == 0, "dtsim tune " + " ".join(args) + " failed", r)
    return r


def with_schedule(src, file, schedule):
    """The file's algorithm (every line that is not a schedule call) followed by `schedule`."""
    with open(os.path.join(src, file)) as f:
        algo = [l for l in f.read().splitlines() if not SCHEDULE_CALL.match(l)]
    return "\n".join(algo) + "\n" + schedule


def passes_check(dtsim, src, file, schedule, sizes_list, tmp):
    path = os.path.join(tmp, "candidate.dt")
    with open(path, "w") as f:
        f.write(with_schedule(src, file, schedule))
    for sizes in sizes_list:
        args = [a for k, v in sizes.items() for a in ("--arg", f"{k}={v}")]
        r = run(dtsim, src, "run", path, "--check", *args)
        check(r.returncode == 0 and "FAIL" not in r.stdout and r.stdout.count("PASS") >= 1,
              f"schedule from tune fails --check at {sizes}:\n{schedule}", r)


def printed_schedule(out):
    """The schedule printed after 'best schedule ...:' or 'the first that passed the check ...:'."""
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("best schedule") or l.startswith("no schedule was timed; the first that passed"):
            body = []
            for m in lines[i + 1:]:
                if not SCHEDULE_CALL.match(m):
                    break
                body.append(m)
            return "\n".join(body) + "\n"
    return None


def budget(dtsim, src):
    r = tune(dtsim, src, "examples/softmax.dt", "--budget", "20")
    out = r.stdout
    check(out.startswith("tune examples/softmax.dt [x=64 y=1000]: "), "header line", r)
    m = re.search(r"searched (\d+) of (\d+) schedules \((sampled|exhaustive)\): (\d+) pruned, (\d+) illegal, (\d+) failed the check, (\d+) passed the check", out)
    check(m is not None, "the summary line", r)
    searched, space = int(m.group(1)), int(m.group(2))
    check(space > 20 and m.group(3) == "sampled", "softmax's space is larger than 20, so it is sampled", r)
    check(sum(int(m.group(i)) for i in range(4, 8)) == searched, "every searched schedule is counted once", r)
    # The budget counts schedules lowered legally (checked); pruned and illegal draws come on top.
    check(int(m.group(6)) + int(m.group(7)) == 20 and searched >= 20, "20 schedules checked", r)
    check(int(m.group(7)) > 0, "some schedules pass the check", r)
    check("timing skipped: " in out or "timed " in out, "timing skipped (no GPU) or done", r)
    check(re.search(rf"^[\d.]+ candidates per minute \({searched} in ", out, re.M) is not None, "candidates per minute", r)
    check(printed_schedule(out), "a schedule printed", r)
    check(r.stderr == "", "nothing on stderr when it is not a terminal", r)


def printed_schedules_check(dtsim, src):
    cases = [
        ("examples/dyt.dt", {"x_SIZE": 8, "y_SIZE": 3000}, [{}, {"x_SIZE": 5, "y_SIZE": 777}]),
        ("examples/softmax.dt", {}, [{}, {"x_SIZE": 9, "y_SIZE": 333}]),
        ("examples/layernorm.dt", {}, [{}, {"x_SIZE": 7, "y_SIZE": 129}]),
        ("examples/mm.dt", {"x_SIZE": 40, "y_SIZE": 48, "k_SIZE": 24}, [{"x_SIZE": 40, "y_SIZE": 48, "k_SIZE": 24},
                                                                         {"x_SIZE": 17, "y_SIZE": 33, "k_SIZE": 5}]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for file, tune_sizes, check_sizes in cases:
            args = [a for k, v in tune_sizes.items() for a in ("--arg", f"{k}={v}")]
            r = tune(dtsim, src, file, "--budget", "12", "--seed", "3", *args)
            passes_check(dtsim, src, file, printed_schedule(r.stdout), check_sizes, tmp)
            r = tune(dtsim, src, file, "--budget", "12", "--seed", "3", "--json", *args)
            doc = json.loads(r.stdout)
            ok = [c for c in doc["candidates"] if c["status"] in ("checked", "timed")]
            check(len(ok) > 0, f"{file}: some candidates pass", r)
            for c in ok:
                passes_check(dtsim, src, file, c["schedule"], check_sizes, tmp)


def exhaustive(dtsim, src):
    r = tune(dtsim, src, "tests/tune/tiny.dt", "--budget", "50")
    check("searched 48 of 48 schedules (exhaustive): 0 pruned, 0 illegal, 0 failed the check, 48 passed the check" in r.stdout,
          "the 48-schedule space enumerated whole", r)
    r = tune(dtsim, src, "tests/tune/tiny.dt", "--json")
    doc = json.loads(r.stdout)
    check(doc["space"] == 48 and doc["mode"] == "exhaustive" and doc["searched"] == 48, "space, mode, searched in JSON", r)
    check(sorted(c["index"] for c in doc["candidates"]) == list(range(48)), "every index once", r)
    check(len({c["schedule"] for c in doc["candidates"]}) == 48, "48 different schedules", r)
    check(all(c["phase"] == "enumerated" for c in doc["candidates"]), "phase enumerated", r)


def csv_json(dtsim, src):
    with tempfile.TemporaryDirectory() as tmp:
        out_csv, out_svg = os.path.join(tmp, "t.csv"), os.path.join(tmp, "t.svg")
        r = tune(dtsim, src, "examples/dyt.dt", "--budget", "10", "--seed", "7", "--csv", out_csv, "--plot", out_svg)
        with open(out_csv) as f:
            rows = list(csv.DictReader(f))
        check(len(rows) >= 10 and sum(row["status"] in ("checked", "timed", "check-failed", "gpu-failed") for row in rows) == 10,
              "one CSV row per candidate; 10 of them checked", r)
        check(list(rows[0].keys()) == ["index", "status", "phase", "ms", "gbps", "tflops", "reason", "schedule"], "CSV columns", r)
        check(all(row["status"] in STATUSES for row in rows), "known statuses", r)
        check(all("dyt.compile();" in row["schedule"] for row in rows), "the schedule text in every row", r)
        check(rows[0]["phase"] == "own" and rows[0]["schedule"].startswith("dyt.block(x:1, y:1024); dyt.tensorize(y:1024);"),
              "the first candidate is the file's own schedule (phase own)", r)
        timed = [row for row in rows if row["status"] == "timed"]
        if timed:
            check(os.path.exists(out_svg) and open(out_svg).read().startswith("<svg"), "an SVG when something was timed", r)
            check(all(float(row["ms"]) > 0 and float(row["gbps"]) > 0 for row in timed), "times and GB/s", r)
        else:
            check(not os.path.exists(out_svg), "no SVG without times", r)
            check("no plot was written" in r.stderr, "--plot says why nothing was written", r)
        a = json.loads(tune(dtsim, src, "examples/dyt.dt", "--budget", "10", "--seed", "7", "--json").stdout)
        b = json.loads(tune(dtsim, src, "examples/dyt.dt", "--budget", "10", "--seed", "8", "--json").stdout)
        check([c["index"] for c in a["candidates"]] == [int(row["index"]) for row in rows], "the same seed, the same search", r)
        check([c["index"] for c in a["candidates"]] != [c["index"] for c in b["candidates"]], "another seed, another sample", r)
        one = json.loads(tune(dtsim, src, "examples/layernorm.dt", "--budget", "10", "--jobs", "1", "--json").stdout)
        two = json.loads(tune(dtsim, src, "examples/layernorm.dt", "--budget", "10", "--jobs", "3", "--json").stdout)
        key = lambda d: [(c["index"], c["status"], c["reason"], c["schedule"]) for c in d["candidates"]]
        check(key(one) == key(two), "--jobs 1 and --jobs 3 give the same candidates, statuses and reasons", r)
        for key in ("file", "sizes", "backend", "space", "mode", "searched", "pruned", "illegal", "check_failed", "passed_check",
                    "timed", "timing", "within_10pct", "candidates_per_minute", "best", "references", "reasons", "candidates"):
            check(key in a, f"JSON key {key}", r)


def bad_flags(dtsim, src):
    with tempfile.TemporaryDirectory() as tmp:
        bad_dt = os.path.join(tmp, "bad.dt")
        with open(bad_dt, "w") as f:
            f.write("Func f; In A; Var x;\nf[x] = A[x] +;\nf.compile();\n")
        out_csv = os.path.join(tmp, "never.csv")
        cases = [
            (["examples/dyt.dt", "--budget", "0"], "'--budget' expects an integer"),
            (["examples/dyt.dt", "--budget", "5", "--time", "3"], "give --budget N or --time S, not both"),
            (["examples/dyt.dt", "--time", "-1"], "'--time' expects a positive number"),
            (["examples/dyt.dt", "--backend=interp"], "'--backend' expects cuda or triton"),
            (["examples/dyt.dt", "--plot", "t.png"], "'--plot' expects a file name ending in .svg"),
            (["examples/dyt.dt", "--ref", "torch=fast"], "'--ref torch' expects a positive number"),
            (["examples/dyt.dt", "--bogus"], "unknown flag '--bogus'"),
            (["examples/dyt.dt", "--seed"], "missing value for '--seed'"),
            (["examples/dyt.dt", "--jobs", "0"], "'--jobs' expects an integer"),
            (["examples/dyt.dt", "--shard", "2/2"], "'--shard' expects an integer"),
            (["examples/dyt.dt", "--shard", "1"], "'--shard' expects I/N"),
            (["examples/dyt.dt", "--gpus", "0,x"], "'--gpus' expects all or a list"),
            (["examples/dyt.dt", "--gpus", "0,1", "--shard", "0/2"], "--gpus spreads the shards itself"),
            (["examples/dyt.dt", "--gpus", "0,1", "--exchange", "x"], "--gpus makes its own exchange folder; drop --exchange"),
            (["examples/dyt.dt", "--shard", "0/2", "--exchange-timeout", "0"], "'--exchange-timeout' expects a positive number"),
            (["examples/dyt.dt", "--timed-ms", "0"], "'--timed-ms' expects a positive number"),
            (["examples/dyt.dt", "examples/mm.dt"], "unexpected argument 'examples/mm.dt'"),
            (["examples/dyt.dt", "--arg", "x_SIZE=0"], "x_SIZE"),
            ([], "no input file"),
            (["examples/add.tile"], "examples/add.tile: error: a .tile kernel has its schedule written into it, so there is nothing to search"),
            (["missing.dt"], "cannot open 'missing.dt'"),
            ([bad_dt], bad_dt + ":2:"),
        ]
        for args, want in cases:
            r = run(dtsim, src, "tune", "--csv", out_csv, *args)
            check(r.returncode == 2, f"tune {args}: exit 2", r)
            check(r.stdout == "", f"tune {args}: nothing on stdout", r)
            first = r.stderr.splitlines()[0] if r.stderr else ""
            check(want in first and "error: " in first, f"tune {args}: error line with '{want}'", r)
            check("Traceback" not in r.stderr and "internal" not in r.stderr, f"tune {args}: no crash", r)
            check(not os.path.exists(out_csv), f"tune {args}: no partial output file", r)
        r = run(dtsim, src, "tune", "--help")
        check(r.returncode == 0 and r.stdout.startswith("usage: dtsim tune FILE.dt"), "tune --help", r)


SHARD_CASES = [
    ("examples/softmax.dt", ["--budget", "30", "--seed", "5"]),
    ("examples/mm.dt", ["--arg", "x_SIZE=40", "--arg", "y_SIZE=48", "--arg", "k_SIZE=24", "--budget", "24", "--seed", "1"]),
    ("tests/tune/tiny.dt", []),
]


def key(c):
    return (c["index"], c["status"], c["phase"], c["reason"], c["schedule"])


def shards(dtsim, src):
    for file, args in SHARD_CASES:
        whole = json.loads(tune(dtsim, src, file, *args, "--json", "--check-only").stdout)
        if file != "tests/tune/tiny.dt":
            phases = [c["phase"] for c in whole["candidates"]]
            check(phases[0] == "own" and phases[1] == "seeded", f"{file}: the file's schedule, then the seeds: {phases[:6]}")
            seeds = [c["index"] for c in whole["candidates"] if c["phase"] == "seeded"]
        halves = None
        for n in (2, 3):
            parts = [json.loads(tune(dtsim, src, file, *args, "--json", "--check-only", "--shard", f"{i}/{n}").stdout) for i in range(n)]
            sets = [{c["index"] for c in p["candidates"]} for p in parts]
            for i in range(n):
                check(parts[i]["shard"] == f"{i}/{n}", f"{file}: shard {i}/{n} says so")
                for j in range(i):
                    check(not (sets[i] & sets[j]), f"{file}: shards {i}/{n} and {j}/{n} are disjoint")
            union = sorted((c for p in parts for c in p["candidates"]), key=lambda c: c["draw"])
            check([key(c) for c in union] == [key(c) for c in whole["candidates"]], f"{file}: the {n} shards are the whole search")
            if file != "tests/tune/tiny.dt":
                check(all(sum(s in x for x in sets) == 1 for s in seeds), f"{file}: each seed in one shard of {n}")
            halves = halves or parts
        # The same seed, the same shard: the same candidates.
        again = json.loads(tune(dtsim, src, file, *args, "--json", "--check-only", "--shard", "1/2").stdout)
        check([key(c) for c in again["candidates"]] == [key(c) for c in halves[1]["candidates"]], f"{file}: a shard is repeatable")
    # Shards run at once, exchanging each round through a folder: together the unsharded search.
    file, args = SHARD_CASES[0]
    whole = json.loads(tune(dtsim, src, file, *args, "--json", "--check-only").stdout)
    with tempfile.TemporaryDirectory() as tmp:
        procs = [subprocess.Popen([dtsim, "tune", file, *args, "--json", "--check-only", "--shard", f"{i}/3", "--exchange", os.path.join(tmp, "x")],
                                  cwd=src, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
        outs = [p.communicate(timeout=600) for p in procs]
        for p, (out, err) in zip(procs, outs):
            check(p.returncode == 0, f"an exchanging shard failed: {err}")
        union = sorted((c for out, _ in outs for c in json.loads(out)["candidates"]), key=lambda c: c["draw"])
        check([key(c) for c in union] == [key(c) for c in whole["candidates"]], f"{file}: 3 exchanging shards are the whole search")
        names = sorted(os.listdir(os.path.join(tmp, "x")))
        check([n for n in names if n.startswith("round-")][:3] == ["round-0.shard-0-of-3", "round-0.shard-1-of-3", "round-0.shard-2-of-3"],
              "the round reports in the folder")
        claimed = [int(n.split(".")[1].split("-")[0]) for n in names if n.startswith("check-")]
        check(sorted(claimed) == sorted(c["draw"] for c in union), "each draw claimed once for its check")
    r = tune(dtsim, src, "examples/softmax.dt", "--budget", "10", "--shard", "1/3")
    check("shard 1/3 of the search" in r.stdout and "merge the shards' --out files with dtsim tune --merge" in r.stdout, "the text says shard", r)


def merge(dtsim, src):
    with tempfile.TemporaryDirectory() as tmp:
        file, args = SHARD_CASES[0]
        args = args + ["--check-only"]  # the same candidates on a GPU machine (times differ run to run)
        whole = json.loads(tune(dtsim, src, file, *args, "--json").stdout)
        outs = []
        for i in range(3):
            outs.append(os.path.join(tmp, f"s{i}.json"))
            tune(dtsim, src, file, *args, "--shard", f"{i}/3", "--out", outs[-1])
        out_csv, out_svg = os.path.join(tmp, "m.csv"), os.path.join(tmp, "m.svg")
        r = tune(dtsim, src, "--merge", *outs, "--csv", out_csv, "--plot", out_svg)
        check(r.stdout.startswith(f"tune {file} [x=64 y=1000]: ") and "merged 3 result(s)" in r.stdout, "merge header", r)
        check("merged shards 0/3, 1/3, 2/3 (seed 5, budget 30)" in r.stdout, "merge names the shards", r)
        check(printed_schedule(r.stdout) is not None, "a schedule printed", r)
        m = json.loads(tune(dtsim, src, "--merge", *outs, "--json").stdout)
        check([key(c) for c in m["candidates"]] == [key(c) for c in whole["candidates"]], "merged = the unsharded search")
        check(m["shards_merged"] == [0, 1, 2] and m["workers"] == 3, "shards_merged, workers")
        check(m["best"] == whole["best"], "merged best = unsharded best")
        with open(out_csv) as f:
            rows = list(csv.DictReader(f))
        check([int(row["index"]) for row in rows] == [c["index"] for c in whole["candidates"]], "merged CSV")
        # Two shards of three: a note on what is missing; merged with the third later, the same.
        r = tune(dtsim, src, "--merge", outs[0], outs[2], "--out", os.path.join(tmp, "02.json"))
        check("note: the merged result holds 2 of 3 shards (missing 1/3)" in r.stderr, "missing shards noted", r)
        again = json.loads(tune(dtsim, src, "--merge", os.path.join(tmp, "02.json"), outs[1], "--json").stdout)
        check([key(c) for c in again["candidates"]] == [key(c) for c in whole["candidates"]], "a merged result merges again")
        other = os.path.join(tmp, "other.json")
        tune(dtsim, src, file, "--budget", "30", "--seed", "6", "--shard", "1/3", "--check-only", "--out", other)
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"file": "x.dt",\n "sizes": [1,\n')
        never = os.path.join(tmp, "never.csv")
        for files, want in [([outs[0], outs[0]], "shard 0/3 is given twice"),
                            ([outs[0], other], "not shards of one search: seed '5' and '6'"),
                            ([outs[0], bad], bad + ":3:1: error: not a dtsim tune JSON result"),
                            ([os.path.join(tmp, "missing.json")], "cannot open")]:
            r = run(dtsim, src, "tune", "--merge", *files, "--csv", never)
            check(r.returncode == 2 and r.stdout == "" and want in r.stderr.splitlines()[0], f"merge {files}: exit 2 with '{want}'", r)
            check(not os.path.exists(never), "no partial output", r)


def gpus(dtsim, src):
    for file, args in SHARD_CASES[:2]:
        whole = json.loads(tune(dtsim, src, file, *args, "--json", "--check-only").stdout)
        r = tune(dtsim, src, file, *args, "--gpus", "cpu,cpu", "--json")
        doc = json.loads(r.stdout)
        check([key(c) for c in doc["candidates"]] == [key(c) for c in whole["candidates"]], f"{file}: two check-only workers = the search", r)
        check(doc["workers"] == 2 and doc["shards_merged"] == [0, 1], "two workers, two shards", r)
    r = tune(dtsim, src, "examples/dyt.dt", "--budget", "8", "--gpus", "cpu,cpu")
    check(r.stdout.startswith("tune examples/dyt.dt [x=8 y=3000]: 2 worker(s) (cpu, cpu), shard i/2 each"), "the workers named", r)
    r = run(dtsim, src, "tune", "examples/dyt.dt", "--budget", "8", "--gpus", "all")
    if r.returncode == 2:
        check(r.stderr.startswith("dtsim: error: --gpus all: ") and "--gpus cpu,cpu" in r.stderr and r.stdout == "", "--gpus all without a GPU", r)
    else:
        check(r.returncode == 0 and "worker(s) (GPU " in r.stdout, "--gpus all on a GPU machine", r)
    r = run(dtsim, src, "tune", "examples/dyt.dt", "--budget", "8", "--gpus", "0", "--json")
    if r.returncode == 2:  # no GPU here: the worker given GPU 0 could not time
        check(r.stderr.startswith("dtsim: error: --gpus: the worker on GPU 0 could not time: ") and r.stdout == "", "--gpus 0 without a GPU", r)
    else:
        check(r.returncode == 0 and json.loads(r.stdout)["timed"] > 0, "--gpus 0 on a GPU machine", r)


def gpu(dtsim, src):
    """On a GPU: candidates timed, the best and the references reported, CSV times, the SVG written;
    a second run reads every PTX from the cache; --backend=triton times too when Triton can run.
    Exit 77 (CTest skip) without a GPU."""
    with tempfile.TemporaryDirectory() as tmp:
        out_csv, out_svg, cache = os.path.join(tmp, "t.csv"), os.path.join(tmp, "t.svg"), os.path.join(tmp, "ptx")
        args = ["examples/dyt.dt", "--arg", "x_SIZE=64", "--arg", "y_SIZE=8192", "--budget", "16", "--cache-dir", cache]
        r = tune(dtsim, src, *args, "--csv", out_csv, "--plot", out_svg, "--ref", "made-up=0.05")
        if "timing skipped: " in r.stdout:
            print("SKIPPED: " + r.stdout.split("timing skipped: ")[1].splitlines()[0])
            sys.exit(77)
        m = re.search(r"^timed (\d+) on .* through dtsim's CUDA backend", r.stdout, re.M)
        check(m is not None and int(m.group(1)) >= 1, "candidates timed on the GPU", r)
        check(re.search(r"^best: [\d.]+ ms \([\d.]+ GB/s\), schedule \d+; \d+ schedule\(s\) within 10% of it", r.stdout, re.M) is not None,
              "the best and the number within 10%", r)
        check("  file's schedule: " in r.stdout and "  made-up: 0.0500 ms" in r.stdout, "the references", r)
        with open(out_csv) as f:
            rows = [row for row in csv.DictReader(f) if row["status"] == "timed"]
        check(len(rows) == int(m.group(1)) and all(float(row["ms"]) > 0 and float(row["gbps"]) > 0 for row in rows), "CSV times", r)
        check(os.path.exists(out_svg), "the SVG", r)
        passes_check(dtsim, src, "examples/dyt.dt", printed_schedule(r.stdout), [{"x_SIZE": 5, "y_SIZE": 999}], tmp)
        again = tune(dtsim, src, *args)
        check(re.search(r"PTX cache: [1-9]\d* hit\(s\), 0 compiled", again.stdout) is not None, "a re-run compiles nothing", again)
        # Two timing workers on the one GPU, each a shard: the merged result is timed, by two workers.
        two = json.loads(tune(dtsim, src, *args, "--gpus", "0,0", "--json").stdout)
        check(two["workers"] == 2 and two["shards_merged"] == [0, 1] and two["timed"] >= 1 and two["best"] is not None,
              "--gpus 0,0: two workers timed and merged", r)
        check(two["timed_per_minute_per_gpu"] > 0, "--gpus 0,0: a rate per GPU", r)
        # ... from one queue: each worker's GPU timed some of the candidates, every one once
        check(len(two["gpu_timed"]) == 2 and sum(two["gpu_timed"]) == two["timed"] + two["gpu_failed"] and min(two["gpu_timed"]) >= 1,
              "--gpus 0,0: both GPUs' workers timed from the queue", r)
        # --timed-ms 100 (dtsim bench's window) finds a best as fast as the default window's, within 10% (the kernels are
        # ~10 us: launch noise; bench/tune_window.py compares the rankings on larger ones)
        long = json.loads(tune(dtsim, src, *args, "--timed-ms", "100", "--json").stdout)
        short = json.loads(tune(dtsim, src, *args, "--json").stdout)
        check(long["best"] is not None and short["best"] is not None and abs(short["best"]["ms"] / long["best"]["ms"] - 1) < 0.10,
              "--timed-ms 100 and 25: the best within 10%", r)
        t = tune(dtsim, src, *args, "--backend=triton", "--budget", "4")
        if "timing skipped: " not in t.stdout:
            check(re.search(r"^timed [1-9]\d* on .* through the emitted Triton", t.stdout, re.M) is not None, "Triton timing", t)


if __name__ == "__main__":
    dtsim, src, case = sys.argv[1], sys.argv[2], sys.argv[3]
    globals()[case](dtsim, src)
    print("ok")
