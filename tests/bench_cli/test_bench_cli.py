#!/usr/bin/env python3
"""Tests of `dtsim bench` that need no GPU (a GPU machine runs the cuda cases for real):
  interp_text    the text report of the interpreter backend on a tiny size
  interp_json    --json: one parseable object per kernel (and "<module>"); executed dot FLOPs equal
                 the static count and 2*M*N*K by hand; bytes count buffers read through pointer
                 variables (matmul.tile)
  cuda_or_skip   --backend=cuda: 'SKIPPED: <why>' and exit 0 without a driver, else a full report
  bad_flags      usage errors exit 2 with one located line
usage: test_bench_cli.py DTSIM SOURCE_DIR CASE"""
import json
import subprocess
import sys


def run(dtsim, src, *args):
    return subprocess.run([dtsim, "bench", *args], capture_output=True, text=True, cwd=src, timeout=300)


def check(cond, msg, r=None):
    if not cond:
        if r is not None:
            msg += f"\n  exit {r.returncode}\n  stdout: {r.stdout[-3000:]}\n  stderr: {r.stderr[-3000:]}"
        print("FAIL: " + msg)
        sys.exit(1)


def interp_text(dtsim, src):
    r = run(dtsim, src, "examples/add.tile", "--backend=interp", "--arg", "n=1000", "--reps", "3")
    check(r.returncode == 0, "bench --backend=interp failed", r)
    lines = r.stdout.splitlines()
    check(lines[0] == "bench examples/add.tile: interpreter, 1 thread(s), sanitizer all", "header line", r)
    check(lines[1] == "add: 1 program instances", "kernel line", r)
    check(lines[2].startswith("  time      median ") and lines[2].endswith("(3 runs)"), "time line", r)
    check(lines[3].startswith("  rate      ") and "instances/s" in lines[3], "rate line", r)
    check(r.stderr == "", "nothing on stderr when it is not a terminal", r)


def interp_json(dtsim, src):
    r = run(dtsim, src, "examples/mm.dt", "--backend=interp", "--json", "--reps", "1")
    check(r.returncode == 0, "bench --json failed", r)
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    check(len(objs) == 1, "one object for one kernel", r)
    o = objs[0]
    for key in ("file", "kernel", "backend", "threads", "instances", "reps", "median_ms", "min_ms", "max_ms",
                "instances_per_s", "bytes", "flops", "flops_static"):
        check(key in o, f"key '{key}' missing", r)
    # 200x256 output in 128x128 tiles, K=96 in steps of 32: 4 instances do work (12 of the 16 in the
    # grouped order return at once), 3 trips each.
    want = 4 * 3 * 2 * 128 * 128 * 32
    check(o["flops"] == want and o["flops_static"] == want, f"dot FLOPs {o['flops']} / {o['flops_static']}, want {want}", r)
    check(o["bytes"] == 4 * (200 * 96 + 96 * 256 + 200 * 256), "bytes: A and B read once, mm written once", r)
    # A Triton-style kernel loads a and b through pointer variables (a_ptrs, b_ptrs, advanced in the
    # loop): they count as read. matmul.tile's defaults: M=100, N=70, K=90, all f32.
    r = run(dtsim, src, "examples/matmul.tile", "--backend=interp", "--json", "--reps", "1")
    check(r.returncode == 0, "bench matmul.tile --json failed", r)
    o = json.loads(r.stdout.splitlines()[0])
    want = 4 * (100 * 90 + 90 * 70 + 100 * 70)
    check(o["bytes"] == want, f"bytes {o['bytes']}: a f32[M,K] and b f32[K,N] read, c f32[M,N] written, want {want}", r)
    r = run(dtsim, src, "examples/rmsnorm_materialized.dt", "--backend=interp", "--json", "--reps", "1", "--threads", "2")
    check(r.returncode == 0, "bench of a two-kernel program failed", r)
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    check([o["kernel"] for o in objs] == ["ms_kernel", "rms_kernel", "<module>"], "each kernel, then the module", r)
    check(objs[2]["bytes"] == objs[0]["bytes"] + objs[1]["bytes"], "module bytes = sum of kernels", r)
    r = run(dtsim, src, "examples/attention.dt", "--backend=interp", "--json", "--reps", "1")
    check(r.returncode == 0, "bench attention.dt failed", r)
    for o in map(json.loads, r.stdout.splitlines()):
        check(o["flops"] > 0 and o["flops"] == o["flops_static"], "executed and static dot FLOPs agree", r)


def cuda_or_skip(dtsim, src):
    r = run(dtsim, src, "examples/add.tile", "--arg", "n=4096", "--vs-triton")
    check(r.returncode == 0, "bench --backend=cuda must exit 0 (skipped or measured)", r)
    if r.stdout.startswith("SKIPPED: "):
        check(r.stdout.count("\n") == 1, "exactly one SKIPPED line", r)
        print("ok (no GPU here): " + r.stdout.strip())
        return
    check("median" in r.stdout and "GB/s" in r.stdout and "check: " in r.stdout, "a full GPU report", r)


def bad_flags(dtsim, src):
    cases = [
        (["examples/add.tile", "--reps", "0"], "'--reps' expects an integer"),
        (["examples/add.tile", "--bogus"], "unknown flag '--bogus'"),
        (["examples/add.tile", "--backend=gpu"], "'--backend' expects interp or cuda"),
        (["examples/add.tile", "--backend=interp", "--vs-triton"], "--vs-triton compares with dtsim's CUDA backend"),
        (["examples/add.tile", "--check"], "unknown flag '--check'"),
        (["examples/add.tile", "--arg", "nope=3"], "nope"),
        ([], "no input file"),
    ]
    for args, want in cases:
        r = run(dtsim, src, *args)
        check(r.returncode == 2, f"bench {' '.join(args)}: exit 2", r)
        check(want in r.stderr and r.stdout == "", f"bench {' '.join(args)}: '{want}' on stderr only", r)
    r = run(dtsim, src, "examples/bugs/copy_pid_n.tile", "--backend=interp")
    check(r.returncode == 1 and "bench times runs without findings" in r.stderr, "a kernel with a finding is refused", r)


if __name__ == "__main__":
    dtsim, src, case = sys.argv[1:4]
    {"interp_text": interp_text, "interp_json": interp_json, "cuda_or_skip": cuda_or_skip, "bad_flags": bad_flags}[case](dtsim, src)
    print("ok")
