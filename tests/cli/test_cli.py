#!/usr/bin/env python3
"""End-to-end tests of the `dtsim` command line: summaries, .npy input/output, threads, help texts,
usage errors and bad input files. No numpy needed: .npy files are written and read by hand.
usage: test_cli.py DTSIM SOURCE_DIR [CASE...]"""
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

DTSIM = ""
SRC = ""
TMP = ""


class Fail(Exception):
    pass


def check(cond, msg, r=None):
    if not cond:
        if r is not None:
            msg += f"\n  exit {r.returncode}\n  stdout: {r.stdout[-2000:]}\n  stderr: {r.stderr[-2000:]}"
        raise Fail(msg)


def dtsim(*args, cwd=None, stdin="", env=None):
    r = subprocess.run([DTSIM, *args], capture_output=True, text=True, timeout=300, cwd=cwd or SRC, input=stdin,
                       env=None if env is None else {**os.environ, **env})
    check(r.returncode >= 0 and r.returncode != 3, f"dtsim {' '.join(args)} crashed or hit an internal error", r)
    return r


def tmp(name):
    return os.path.join(TMP, name)


# ---- .npy by hand ----
def write_npy(path, descr, shape, values, fortran=False, version=1, big=False):
    fmt = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?", ">f4": "f", "|i1": "b", "<i2": "h", "|u1": "B"}[descr]
    shape_s = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_s)
    lenb = 2 if version == 1 else 4
    pad = (64 - (6 + 2 + lenb + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    out = b"\x93NUMPY" + bytes([version, 0]) + len(header).to_bytes(lenb, "little") + header.encode()
    out += struct.pack((">" if big else "<") + fmt * len(values), *values)
    with open(path, "wb") as f:
        f.write(out)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    check(data[:6] == b"\x93NUMPY", f"{path}: bad magic")
    lenb = 2 if data[6] == 1 else 4
    hlen = int.from_bytes(data[8:8 + lenb], "little")
    start = 8 + lenb + hlen
    check(start % 64 == 0, f"{path}: data not 64-byte aligned")
    header = data[8 + lenb:start].decode()
    descr = re.search(r"'descr': '([^']+)'", header).group(1)
    check("'fortran_order': False" in header, f"{path}: fortran order")
    shape = tuple(int(x) for x in re.search(r"'shape': \(([^)]*)\)", header).group(1).replace(",", " ").split())
    fmt = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?", "<f2": "e", "|i1": "b", "<i2": "h"}[descr]
    n = math.prod(shape)
    size = struct.calcsize("<" + fmt)
    check(len(data) - start == n * size, f"{path}: {len(data) - start} data bytes for {n} elements")
    return descr, shape, list(struct.unpack("<" + fmt * n, data[start:]))


def summary_line(stdout, name):
    m = re.search(r"^%s: (\S+) checksum=(\S+) first=\[(.*)\]$" % re.escape(name), stdout, re.M)
    check(m is not None, f"no summary line for '{name}' in:\n{stdout}")
    return m


# ---- cases ----
def case_run_default():
    r = dtsim("run", "examples/add.tile")
    check(r.returncode == 0, "run add.tile failed", r)
    m = summary_line(r.stdout, "z")
    check(m.group(1) == "f32[98432]", f"type {m.group(1)}", r)
    check(len(m.group(3).split(", ")) == 9 and m.group(3).endswith("..."), "8 first values then ...", r)
    check(re.search(r"^sanitizer: all: no findings \(\d+ instances\)$", r.stdout, re.M), "sanitizer line", r)


def case_flags_before_file():
    r = dtsim("--threads", "2", "examples/add.tile")
    check(r.returncode == 0 and "z: f32[98432]" in r.stdout, "flags before the file mean run", r)


def case_out_npy_matches_summary():
    out = tmp("z.npy")
    r = dtsim("run", "examples/add.tile", "--out", "z=" + out)
    check(r.returncode == 0, "run --out failed", r)
    descr, shape, vals = read_npy(out)
    check(descr == "<f4" and shape == (98432,), f"header {descr} {shape}")
    m = summary_line(r.stdout, "z")
    checksum = float(m.group(2))
    check(abs(sum(vals) - checksum) <= 1e-4 * max(1.0, abs(checksum)), f"sum {sum(vals)} vs checksum {checksum}")
    first = [float(v) for v in m.group(3).split(", ")[:8]]
    check(all(abs(a - b) <= 1e-5 * max(1, abs(b)) for a, b in zip(first, vals[:8])), "first values")
    check(not [f for f in os.listdir(TMP) if ".tmp" in f], "temporary files left behind")


def case_in_round_trip():
    n = 1000
    xs = [i * 0.5 for i in range(n)]
    ys = [1.0 - i * 0.25 for i in range(n)]
    write_npy(tmp("x.npy"), "<f4", (n,), xs)
    write_npy(tmp("y.npy"), "<f4", (n,), ys, version=2)
    r = dtsim("run", "examples/add.tile", "--arg", "n=1000", "--in", "x=" + tmp("x.npy"), "--in", "y=" + tmp("y.npy"),
              "--out=z=" + tmp("z_in.npy"))
    check(r.returncode == 0, "run with --in failed", r)
    _, shape, zs = read_npy(tmp("z_in.npy"))
    check(shape == (n,), f"shape {shape}")
    check(all(z == x + y for z, x, y in zip(zs, xs, ys)), "z != x + y")


def case_threads_identical():
    for ex, extra in (("examples/add.tile", []), ("examples/matmul.tile", ["--arg", "M=77"])):
        a = dtsim("run", ex, *extra)
        b = dtsim("run", ex, *extra, "--threads", "2")
        c = dtsim("run", ex, *extra, "--order=shuffle:7")
        check(a.returncode == 0 and b.returncode == 0 and c.returncode == 0, f"{ex} runs", b)
        strip = lambda s: [l for l in s.splitlines() if not l.startswith("sanitizer:")]
        check(strip(a.stdout) == strip(b.stdout), f"{ex}: --threads 2 changed the output:\n{a.stdout}\n{b.stdout}")
        check(strip(a.stdout) == strip(c.stdout), f"{ex}: --order=shuffle changed the output")


def case_seed_changes_data():
    a = dtsim("run", "examples/add.tile", "--seed", "1")
    b = dtsim("run", "examples/add.tile", "--seed", "2")
    check(summary_line(a.stdout, "z").group(2) != summary_line(b.stdout, "z").group(2), "seed has no effect")


def case_help_texts():
    r = dtsim("--help")
    check(r.returncode == 0 and "dtsim run" in r.stdout and "dtsim emit" in r.stdout, "dtsim --help", r)
    r = dtsim("run", "--help")
    check(r.returncode == 0 and "--break-if" in r.stdout and "--out NAME=FILE.npy" in r.stdout, "run --help", r)
    r = dtsim("debug", "--help")
    check(r.returncode == 0 and "before the first statement" in r.stdout, "debug --help", r)
    r = dtsim("emit", "--help")
    check(r.returncode == 0 and "--ptx" in r.stdout and "--ast" in r.stdout, "emit --help", r)
    r = dtsim("difftest", "--help")
    check(r.returncode == 0 and "difftest" in r.stdout, "difftest --help", r)
    r = dtsim("--version")
    check(r.returncode == 0 and r.stdout.startswith("dtsim "), "--version", r)
    r = dtsim()
    check(r.returncode == 2 and "usage" in r.stderr, "no arguments: usage on stderr, exit 2", r)


def case_int_range():
    # Integers beyond int64 are an error, not a float or a string (Triton would type 2**63..2**64-1
    # as uint64, which dtsim does not have); what looks like an expression is not a number.
    add = ["run", "examples/triton/add.py", "--buf", "x_ptr=f32[100]", "--buf", "y_ptr=f32[100]", "--buf", "out_ptr=f32[100]",
           "--grid", "1", "--arg"]
    for v, want in (("9223372036854775808", "does not fit in int64 (Triton passes integers up to 2**64 - 1 as uint64"),
                    ("1180591620717411303424", "does not fit in int64"), ("-9223372036854775809", "does not fit in int64"),
                    ("2**63", "not a number"), ("2**70", "not a number")):
        r = dtsim(*add, "n_elements=" + v)
        check(r.returncode == 2 and f"--arg n_elements={v}: " in r.stderr and want in r.stderr and "checksum" not in r.stdout,
              f"--arg n_elements={v} was not refused", r)
    r = dtsim(*add, "n_elements=9223372036854775807")
    check(r.returncode in (0, 1) and "does not fit" not in r.stderr, "the largest int64 was refused", r)
    r = dtsim("run", "examples/add.tile", "--arg", "n=9223372036854775808")
    check(r.returncode == 2 and "bad value '9223372036854775808'" in r.stderr, "a .tile --arg beyond int64 accepted", r)


def case_usage_errors():
    cases = [
        (["run", "examples/add.tile", "--foo"], "dtsim: error: unknown flag '--foo' (see 'dtsim run --help')"),
        (["run", "examples/add.tile", "--arg"], "missing value for '--arg'"),
        (["run", "examples/add.tile", "--arg", "n"], "expects NAME=VALUE"),
        (["run", "examples/add.tile", "--threads", "zero"], "'--threads' expects an integer"),
        (["run", "examples/add.tile", "--sanitize=most"], "'--sanitize' expects none, bounds, conflicts or all"),
        (["run", "examples/add.tile", "--order=random"], "'--order' expects"),
        (["run", "examples/add.tile", "--check"], "--check needs a .dt file"),
        (["run", "examples/add.tile", "--arg", "nope=3"], "nope"),
        (["run", "examples/add.tile", "--kernel", "nope"], "no kernel named 'nope'"),
        (["run", "examples/add.tile", "--out", "w=" + "w.npy"], "no buffer parameter 'w'"),
        (["run", "examples/add.tile", "--in", "z=" + "z.npy"], "only in/inout buffers take input data"),
        (["run", "examples/add.tile", "examples/matmul.tile"], "unexpected argument"),
        (["run"], "no input file"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["run", "no/such/file.tile"], "cannot open 'no/such/file.tile'"),
        (["run", "README.md"], "expected a .tile, .dt or .py file"),
        (["emit", "examples/add.tile"], "say what to emit"),
        (["emit", "--ast", "examples/add.tile"], "--ast needs a .dt file"),
        (["emit", "--tile", "--ptx", "examples/add.tile"], "choose one of"),
        (["emit", "--plan", "--layouts", "examples/add.tile"], "choose one of"),
        (["run", "--plan", "examples/add.tile"], "--plan"),
        (["emit", "--after=opt", "examples/add.tile"],
         "'--after' expects a stage of the pass list (parse, check, bind-sizes, schedule, lower, verify), got 'opt'"),
        # difftest and tune parse their flags as every command does (one table in tools/Args.cpp)
        (["difftest", "examples/add.tile", "--bogus"], "dtsim: error: unknown flag '--bogus' (see 'dtsim difftest --help')"),
        (["difftest", "examples/add.tile", "--trials", "0"], "'--trials' expects an integer in [1, 1000000000], got '0'"),
        (["difftest", "examples/add.tile", "--oracle=gpu"], "'--oracle' expects cuda or triton, got 'gpu'"),
        (["difftest", "examples/add.tile", "--sanitize=all"], "'--sanitize' expects bounds or none, got 'all'"),
        (["difftest", "examples/add.tile", "--out", "z=z.npy"], "unknown flag '--out' (see 'dtsim difftest --help')"),
        (["difftest"], "no input file (see 'dtsim difftest --help')"),
        (["difftest", "README.md", "--oracle=triton"], "expected a .tile, .dt or .py file"),
        (["tune", "examples/dyt.dt", "--reps", "3"], "unknown flag '--reps' (see 'dtsim tune --help')"),
        (["bench", "examples/add.tile", "--budget", "3"], "unknown flag '--budget' (see 'dtsim bench --help')"),
    ]
    for args, msg in cases:
        r = dtsim(*args)
        check(r.returncode == 2, f"dtsim {' '.join(args)}: exit {r.returncode}, expected 2", r)
        check(msg in r.stderr, f"dtsim {' '.join(args)}: stderr lacks {msg!r}", r)


def run_bad_input(npy, expect):
    out = tmp("never.npy")
    r = dtsim("run", "examples/add.tile", "--in", "x=" + npy, "--out", "z=" + out)
    check(r.returncode == 2, f"bad input {npy}: exit {r.returncode}", r)
    check(expect in r.stderr, f"bad input {npy}: stderr lacks {expect!r}", r)
    check(not os.path.exists(out), "an output file was written after an input error")


def case_bad_npy_inputs():
    run_bad_input(tmp("missing.npy"), tmp("missing.npy") + ": error: cannot open file")
    with open(tmp("garbage.npy"), "wb") as f:
        f.write(b"this is not an array file at all")
    run_bad_input(tmp("garbage.npy"), "bad magic")
    write_npy(tmp("short.npy"), "<f4", (98432,), [1.0] * 98432)
    with open(tmp("short.npy"), "r+b") as f:
        f.truncate(os.path.getsize(tmp("short.npy")) - 8)
    run_bad_input(tmp("short.npy"), "truncated data")
    with open(tmp("cut.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f4'")
    run_bad_input(tmp("cut.npy"), "truncated header")
    write_npy(tmp("small.npy"), "<f4", (10,), [0.0] * 10)
    run_bad_input(tmp("small.npy"), tmp("small.npy") + ": error: shape (10,) does not match parameter 'x' *f32[98432]")
    write_npy(tmp("f64.npy"), "<f8", (98432,), [0.0] * 98432)
    run_bad_input(tmp("f64.npy"), "dtype f64 does not match parameter 'x' *f32[98432]")
    write_npy(tmp("fortran.npy"), "<f4", (98432,), [0.0] * 98432, fortran=True)
    run_bad_input(tmp("fortran.npy"), "Fortran-order")
    write_npy(tmp("big.npy"), ">f4", (98432,), [0.0] * 98432, big=True)
    run_bad_input(tmp("big.npy"), "big-endian")


def case_finding_writes_nothing():
    out = tmp("oob_out.npy")
    r = dtsim("run", os.path.join(SRC, "tests/cli/oob.tile"), "--out", "z=" + out)
    check(r.returncode == 1, f"a run with an out-of-bounds store must exit 1 (got {r.returncode})", r)
    check("oob.tile:" in r.stderr and "error:" in r.stderr, "the finding is printed with its location", r)
    check(re.search(r"^sanitizer: all: [1-9]\d* findings? ", r.stdout, re.M), "sanitizer line counts findings", r)
    check(not os.path.exists(out), "an output file was written after a finding")
    r = dtsim("run", os.path.join(SRC, "tests/cli/oob.tile"), "--keep-going", "--out", "z=" + out)
    check(r.returncode == 1 and not os.path.exists(out), "--keep-going: still exit 1 and no output", r)


def case_equal_stores():
    f = os.path.join(SRC, "tests/cli/equal_stores.tile")
    out = tmp("equal_out.npy")
    for extra in ([], ["--order=reverse"], ["--order=shuffle:5"], ["--threads", "4"]):
        r = dtsim("run", f, "--out", "z=" + out, *extra)
        check(r.returncode == 0, f"equal values {extra}: exit 0", r)
        check(r.stderr.count("warning:") == 1 and "equal_stores.tile:7:3: warning: instances [" in r.stderr
              and "] both store z[0] (index [0]) with equal values" in r.stderr
              and "192 element stores in this run found the bits they store" in r.stderr, f"equal values {extra}: the warning", r)
        check("sanitizer: all: no findings, 1 warning (4 instances)" in r.stdout, f"equal values {extra}: the summary", r)
        check(os.path.exists(out), f"equal values {extra}: the output is written")
        os.remove(out)
    for extra in ([], ["--order=reverse"], ["--threads", "4"]):
        r = dtsim("run", f, "--arg", "skew=1", "--out", "z=" + out, *extra)
        check(r.returncode == 1 and "equal_stores.tile:7:3: error: instances [" in r.stderr and "] both store z[0] (index [0])" in r.stderr
              and "with equal values" not in r.stderr, f"different values {extra}: a write-write conflict", r)
        check(not os.path.exists(out), f"different values {extra}: no output")
    r = dtsim("run", f, "--arg", "skew=1", "--sanitize=bounds")
    check(r.returncode == 0 and "warning" not in r.stderr, "--sanitize=bounds: conflicts not checked", r)
    # difftest: equal values are no interpreter finding (the case goes on to the GPU, or is skipped
    # without one); different values are
    r = dtsim("difftest", f, "--trials", "1")
    if "without the CUDA backend" not in r.stdout + r.stderr:
        check(r.returncode == 0 and "INTERPRETER FINDING" not in r.stdout + r.stderr, "difftest, equal values: no finding", r)
        r = dtsim("difftest", f, "--trials", "1", "--arg", "skew=1")
        check(r.returncode != 0 and "with interpreter findings" in r.stdout + r.stderr, "difftest, different values: a finding", r)


def case_equal_stores_option():
    # The planted forgotten program id: every instance stores z[0:64] with equal values. A warning by
    # default; with --equal-stores=conflict (or DTSIM_EQUAL_STORES=conflict) a write-write conflict.
    f = os.path.join(SRC, "examples/bugs/copy_nopid.tile")
    conflict = "copy_nopid.tile:10:3: error: instances [0] and [1] both store z[0] (index [0])"
    for flags, env, strict in (([], None, False), (["--equal-stores=warn"], None, False), (["--equal-stores=conflict"], None, True),
                               (["--equal-stores", "conflict", "--threads", "4"], None, True),
                               ([], {"DTSIM_EQUAL_STORES": "conflict"}, True),
                               (["--equal-stores=warn"], {"DTSIM_EQUAL_STORES": "conflict"}, False),
                               ([], {"DTSIM_EQUAL_STORES": "warn"}, False)):
        r = dtsim("run", f, *flags, env=env)
        what = f"{flags} {env}"
        if strict:
            # several threads: any two instances may be the first to meet, and more than one pair may be
            # reported before the run stops
            found = (re.search(r"copy_nopid\.tile:10:3: error: instances \[\d\] and \[\d\] both store z\[0\] \(index \[0\]\)", r.stderr)
                     if "--threads" in flags else conflict in r.stderr)
            check(r.returncode == 1 and found and "with equal values" not in r.stderr and "warning:" not in r.stderr,
                  f"{what}: a write-write conflict", r)
        else:
            check(r.returncode == 0 and r.stderr.count("warning:") == 1
                  and "copy_nopid.tile:10:3: warning: instances [0] and [1] both store z[0] (index [0]) with equal values" in r.stderr,
                  f"{what}: a warning", r)
    r = dtsim("viz", f, "--equal-stores=conflict")
    check(r.returncode == 0 and "write-write conflict" in r.stdout, "viz --equal-stores=conflict: a conflict drawn", r)
    r = dtsim("bench", f, "--backend=interp", "--reps", "1", "--equal-stores=conflict")
    check(r.returncode == 1 and conflict in r.stderr, "bench --backend=interp --equal-stores=conflict: the conflict", r)
    r = dtsim("run", f, "--equal-stores=strict")
    check(r.returncode == 2 and r.stderr.strip().count("\n") == 0
          and "'--equal-stores' expects warn or conflict, got 'strict'" in r.stderr, "a bad value: one line, exit 2", r)
    r = dtsim("run", f, env={"DTSIM_EQUAL_STORES": "1"})
    check(r.returncode == 2 and r.stderr.strip().count("\n") == 0
          and "DTSIM_EQUAL_STORES=1: expects warn or conflict, got '1'" in r.stderr, "a bad DTSIM_EQUAL_STORES: one line, exit 2", r)
    r = dtsim("emit", "--tile", f, "--equal-stores=conflict")
    check(r.returncode == 2 and "unknown flag '--equal-stores'" in r.stderr, "emit takes no --equal-stores", r)
    r = dtsim("run", "--help")
    check(r.returncode == 0 and "--equal-stores=warn|conflict" in r.stdout and "DTSIM_EQUAL_STORES" in r.stdout, "run --help", r)


def case_emit_tile_round_trip():
    out = tmp("add_emitted.tile")
    r = dtsim("emit", "--tile", "examples/add.tile", "-o", out)
    check(r.returncode == 0 and r.stdout == "" and os.path.exists(out), "emit --tile -o", r)
    a = dtsim("run", "examples/add.tile")
    b = dtsim("run", out)
    check(b.returncode == 0 and summary_line(a.stdout, "z").group(0) == summary_line(b.stdout, "z").group(0),
          "the emitted IR runs like the original", b)
    r2 = dtsim("emit", "--tile", out)
    with open(out) as f:
        check(r2.stdout == f.read(), "print(parse(print(m))) == print(m)")


MACHINE_TILE = """kernel k(out ids: *i32[16], out ts: *i64[16]) grid(8) {
  p = program_id(0)
  t0 = machine(globaltimer)
  store(ids + 2 * p, machine(smid))
  store(ids + 2 * p + 1, machine(nsmid))
  store(ts + 2 * p, t0)
  store(ts + 2 * p + 1, machine(clock64))
}
"""


def case_machine_readings():
    src = tmp("machine.tile")
    with open(src, "w") as f:
        f.write(MACHINE_TILE)
    for threads in ("1", "2"):
        before = time.time_ns()
        r = dtsim("run", src, "--threads", threads, "--out", "ids=" + tmp("ids.npy"), "--out", "ts=" + tmp("ts.npy"))
        after = time.time_ns()
        check(r.returncode == 0, "run machine.tile", r)
        _, _, ids = read_npy(tmp("ids.npy"))
        _, _, ts = read_npy(tmp("ts.npy"))
        sm, nsm = ids[0::2], ids[1::2]
        check(all(n == int(threads) for n in nsm) and all(0 <= s < n for s, n in zip(sm, nsm)),
              f"--threads {threads}: smid {sm} below nsmid {nsm} (the OpenMP threads)")
        check(all(before <= t <= after for t in ts[0::2]), f"globaltimer {ts[0::2]} is not the host's time in ns during the run")
        check(all(c > 0 for c in ts[1::2]), f"clock64 {ts[1::2]}")
    r = dtsim("emit", "--tile", src)
    check(r.returncode == 0 and "machine(globaltimer)" in r.stdout and "machine(nsmid)" in r.stdout, "emit --tile prints machine()", r)
    r = dtsim("emit", "--triton", src)
    check(r.returncode == 0 and 'tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64' in r.stdout
          and '"mov.u32 $0, %smid;", "=r"' in r.stdout, "emit --triton reads the registers with inline PTX", r)
    bad = tmp("machine_bad.tile")
    with open(bad, "w") as f:
        f.write(MACHINE_TILE.replace("machine(smid)", "machine(tid)"))
    r = dtsim("run", bad)
    check(r.returncode != 0 and "machine_bad.tile:4:30: error: machine() reads one of globaltimer, globaltimer_lo" in r.stderr,
          "machine(tid): a located error", r)


def case_cuda_backend_unavailable_is_clean():
    r = dtsim("run", "examples/add.tile", "--backend=cuda")
    if r.returncode == 0:  # a machine with a GPU: the result must match the interpreter
        a = dtsim("run", "examples/add.tile")
        check(summary_line(a.stdout, "z").group(1) == summary_line(r.stdout, "z").group(1), "cuda summary", r)
        return
    check(r.returncode == 2 and "error:" in r.stderr, "--backend=cuda without a GPU: a clean error", r)


def case_dt_examples_check():
    dts = sorted(f for f in os.listdir(os.path.join(SRC, "examples")) if f.endswith(".dt"))
    for f in dts:
        r = dtsim("run", "examples/" + f, "--check")
        check(r.returncode == 0 and "PASS" in r.stdout and "FAIL" not in r.stdout, f"{f} --check", r)


def case_dt_emit_tile_runs_alike():
    dts = sorted(f for f in os.listdir(os.path.join(SRC, "examples")) if f.endswith(".dt"))
    for f in dts:
        lowered = tmp(f[:-3] + "_lowered.tile")
        r = dtsim("emit", "--tile", "examples/" + f, "-o", lowered)
        check(r.returncode == 0, f"emit --tile {f}", r)
        a, b = dtsim("run", "examples/" + f), dtsim("run", lowered)
        check(a.returncode == 0 and b.returncode == 0, f"{f} and its lowered IR run", b)
        check(a.stdout == b.stdout, f"{f}: the lowered IR printed by emit --tile runs differently:\n{a.stdout}\n{b.stdout}")


def case_debug_restart_and_quit():
    r = dtsim("debug", "examples/copy.tile", stdin="quit\n")
    check(r.returncode == 0 and "(dtsim)" in r.stdout and "checksum=" not in r.stdout,
          "quit at the first stop: exit 0, no summary", r)
    r = dtsim("debug", "examples/copy.tile", stdin="continue\nrestart\ncontinue\n")
    check(r.returncode == 0 and r.stdout.count("z: f32[1000] checksum=") == 1, "restart runs again; one summary", r)
    plain = dtsim("run", "examples/copy.tile")
    check(summary_line(plain.stdout, "z").group(0) == summary_line(r.stdout, "z").group(0), "same result after restart")
    r = dtsim("run", "examples/copy.tile", "--break-if", "pid0 >", stdin="")
    check(r.returncode == 2 and "<break-if>" in r.stderr, "a bad condition is a usage error pointing into it", r)


def case_dt_in_out_check():
    X, Y, K = 20, 24, 10
    a = [((i * 7) % 13 - 6) / 8.0 for i in range(X * K)]
    b = [((i * 5) % 11 - 5) / 4.0 for i in range(K * Y)]
    write_npy(tmp("A.npy"), "<f4", (X, K), a)
    write_npy(tmp("B.npy"), "<f4", (K, Y), b)
    r = dtsim("run", "examples/mm.dt", "--arg", f"x_SIZE={X}", "--arg", f"y_SIZE={Y}", "--arg", f"k_SIZE={K}",
              "--in", "A=" + tmp("A.npy"), "--in", "B=" + tmp("B.npy"), "--out", "mm=" + tmp("mm.npy"), "--check")
    check(r.returncode == 0 and re.search(r"^mm: max rel err = \S+  PASS \(tol 0.0001\)$", r.stdout, re.M),
          "mm.dt with --in files passes --check", r)
    _, shape, c = read_npy(tmp("mm.npy"))
    check(shape == (X, Y), f"mm shape {shape}")
    for i in range(X):
        for j in range(Y):
            want = sum(a[i * K + k] * b[k * Y + j] for k in range(K))  # exact in f32: small dyadic values
            check(c[i * Y + j] == want, f"mm[{i}, {j}] = {c[i * Y + j]}, expected {want}")


def case_emit_layouts():
    r = dtsim("emit", "--layouts", "examples/softmax.tile")
    if "without the CUDA backend" in r.stderr:
        return
    check(r.returncode == 0, "emit --layouts failed", r)
    out = r.stdout
    check(out.startswith("kernel softmax: 4 warps") and "target sm_90" in out, "emit --layouts: no kernel header", r)
    check("# load [1024]: 4-element vectors" in out and "# v: blocked{vec=[4], lanes=[32], warps=[4], regs=8}" in out,
          "emit --layouts: the load's layout and vector width are missing", r)
    check("5 shuffle step(s)" in out and "through shared memory ->" in out and "convert" not in out,
          "emit --layouts: the reductions are not shuffles, or a conversion appeared", r)
    r = dtsim("emit", "--layouts", "--arch", "sm_90a", "examples/matmul_f16.tile")
    check(r.returncode == 0 and "wgmma m64n128k16" in r.stdout and "pipelined: 3 shared buffers" in r.stdout,
          "emit --layouts --arch sm_90a: the dot is not on wgmma or the loop is not pipelined", r)
    # A loop whose loads feed an FMA dot (num_stages 4): the C tile is loaded one iteration ahead;
    # not where the second set of registers would not fit (mm.dt: 128 accumulators). With bounds
    # checks, the loop's checks are hoisted and only its unchecked copy prefetches (the checked copy
    # keeps the interpreter's order of findings).
    r = dtsim("emit", "--layouts", "tests/cli/2mm_outer_loop.dt")
    check(r.returncode == 0 and "# prefetched: C_tile loaded one iteration ahead into registers" in r.stdout,
          "emit --layouts: 2mm_outer's C tile is not prefetched", r)
    r = dtsim("emit", "--layouts", "examples/mm.dt")
    check(r.returncode == 0 and "prefetched" not in r.stdout, "emit --layouts: mm.dt prefetches past its registers", r)
    r = dtsim("emit", "--layouts", "--sanitize=bounds", "tests/cli/2mm_outer_loop.dt")
    check(r.returncode == 0 and "bounds checks hoisted" in r.stdout and r.stdout.count("prefetched") == 1
          and "bounds-checked against C" in r.stdout,
          "emit --layouts --sanitize=bounds: the loop's checks are not hoisted, its copies do not prefetch once, or no checks shown", r)
    # Triton's `a_ptrs += BK`: a pointer advanced in the loop keeps its contiguity and divisibility,
    # so the loop's loads are vectors (they were per-element accesses); with num_stages > 1 the loop
    # is pipelined, its copies reading the pointers as computed from k.
    mm = ["examples/triton/matmul_act.py", "--buf", "a_ptr=f16[256,256]", "--buf", "b_ptr=f16[256,256]",
          "--buf", "c_ptr=f16[256,256]", "--arg", "M=256", "--arg", "N=256", "--arg", "K=256", "--arg", "BM=128",
          "--arg", "BN=128", "--arg", "BK=64", "--arg", "num_warps=8", "--grid", "cdiv(M, BM) * cdiv(N, BN)"]
    r = dtsim("emit", "--layouts", *mm, "--arg", "num_stages=1")
    check(r.returncode == 0 and "# load [128, 64]: 4-element vectors" in r.stdout and "# load [64, 128]: 4-element vectors" in r.stdout
          and "scalar accesses" not in r.stdout and "pipelined" not in r.stdout,
          "emit --layouts: the loads through carried pointers (a_ptrs += BK) are not vectorized", r)
    r = dtsim("emit", "--layouts", "--arch", "sm_90a", *mm, "--arg", "num_stages=3")
    check(r.returncode == 0 and "# pipelined: 3 shared buffers, cp.async of a and b 2 iteration(s) ahead; a_ptrs, b_ptrs computed from k"
          in r.stdout and "wgmma m64n128k16" in r.stdout,
          "emit --layouts: the loop advancing a_ptrs and b_ptrs is not pipelined onto wgmma", r)
    # 4 warps (one warpgroup) on a 128-row tile: two m64 wgmma tiles per k step.
    r = dtsim("emit", "--layouts", "--arch", "sm_90a", *mm, "--arg", "num_warps=4")
    check(r.returncode == 0 and "wgmma m64n128k16, 1 warpgroup(s) of 2 tiles" in r.stdout,
          "emit --layouts: a 128x128 dot on 4 warps is not two wgmma tiles", r)
    out_file = tmp("layouts.txt")
    r = dtsim("emit", "--layouts", "--arch", "foo", "examples/add.tile", "-o", out_file)
    check(r.returncode == 2 and "'--arch' expects a GPU target" in r.stderr and not os.path.exists(out_file),
          "a bad --arch is not a usage error, or left a file", r)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def fp8_values(mbits, bias, has_inf):
    """Every finite non-negative value of an fp8 format, by its definition, in bit-pattern order."""
    out = []
    for p in range(128):
        e, m = p >> mbits, p & ((1 << mbits) - 1)
        if e == (1 << (7 - mbits)) - 1 and (has_inf or m == (1 << mbits) - 1):
            break
        out.append(m * 2.0 ** (1 - bias - mbits) if e == 0 else (m + (1 << mbits)) * 2.0 ** (e - bias - mbits))
    return out


E4M3, E5M2 = fp8_values(3, 7, False), fp8_values(2, 15, True)


def fp8_bits(v, table):
    """The pattern of v rounded to nearest (ties to the even pattern), saturating at the largest value."""
    a = min(abs(v), table[-1])
    p = min(range(len(table)), key=lambda i: (abs(table[i] - a), i % 2))
    return p | (0x80 if math.copysign(1, v) < 0 else 0)


def fp8(v, table):
    b = fp8_bits(v, table)
    return math.copysign(table[b & 0x7F], -1 if b & 0x80 else 1)


def wrap(v, bits):
    return (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def case_narrow_types():
    # examples/narrow_types.tile on chosen inputs, every output against a reference computed here
    # from the formats' definitions; and the default run's summary against its golden text.
    n = 1000
    x = [f32(((i * 37) % 200 - 100) / 97.0) for i in range(n)]
    x[0], x[1], x[2] = 0.9, -0.8, 0.0  # beyond 448 / 57344 after scaling: saturation
    b = [(i * 11) % 256 - 128 for i in range(n)]
    h = [(i * 4099) % 65536 - 32768 for i in range(n)]
    write_npy(tmp("x.npy"), "<f4", [n], x)
    write_npy(tmp("b.npy"), "|i1", [n], b)
    write_npy(tmp("h.npy"), "<i2", [n], h)
    wv = [f32(((i * 53) % 256 - 128) / 100.0) for i in range(1024)]
    write_npy(tmp("w.npy"), "<f4", [1024], wv)
    outs = ["y8", "y16", "e4", "e5", "bits", "r", "c"]
    args = ["run", "examples/narrow_types.tile", "--arg", f"n={n}", "--in", "x=" + tmp("x.npy"), "--in", "b=" + tmp("b.npy"),
            "--in", "h=" + tmp("h.npy"), "--in", "w=" + tmp("w.npy")]
    for o in outs:
        args += ["--out", f"{o}={tmp(o + '.npy')}"]
    r = dtsim(*args)
    check(r.returncode == 0 and "sanitizer: all: no findings" in r.stdout, "narrow_types.tile did not run clean", r)
    got = {o: read_npy(tmp(o + ".npy")) for o in outs}
    check(got["y8"][0] == "|i1" and got["y16"][0] == "<i2" and got["e4"][0] == "<f4", f"dtypes {[got[o][0] for o in outs]}")
    q = [fp8(f32(v * 600.0), E4M3) for v in x]
    p = [fp8(f32(v * 70000.0), E5M2) for v in x]
    want = {
        "y8": [wrap(i * 40 + 7, 8) for i in b],
        "y16": [wrap(j * 5000 + i, 16) for i, j in zip(b, h)],
        "e4": [fp8(2 * v, E4M3) for v in q],
        "e5": [fp8(v * 0.5, E5M2) for v in p],
        "bits": [wrap(fp8_bits(v, E4M3) ^ 1, 8) for v in q],
        "r": [f32(f32(f32(f32(qv + pv) + (i >> 1)) + tdiv(j, 3)) + tdiv(wrap(i * 100, 8), 7)) for qv, pv, i, j in zip(q, p, b, h)],
    }
    for o, w in want.items():
        bad = [k for k, (g, e) in enumerate(zip(got[o][2], w)) if g != e]
        check(not bad, f"{o}: element {bad[:1]} is {[got[o][2][k] for k in bad[:3]]}, expected {[w[k] for k in bad[:3]]}")
    a = [[fp8(f32(wv[i * 32 + k] * 8.0), E4M3) for k in range(32)] for i in range(16)]
    bm = [[fp8(f32(wv[512 + k * 16 + j] * 4.0), E5M2) for j in range(16)] for k in range(32)]
    c = [sum(a[i][k] * bm[k][j] for k in range(32)) for i in range(16) for j in range(16)]  # products exact in f32
    bad = [k for k, (g, e) in enumerate(zip(got["c"][2], c)) if abs(g - e) > 1e-6 * max(1.0, abs(e))]
    check(got["c"][1] == (16, 16) and not bad, f"c: element {bad[:1]} is {[got['c'][2][k] for k in bad[:3]]}, expected {[c[k] for k in bad[:3]]}")
    r = dtsim("run", "examples/narrow_types.tile")
    check(r.returncode == 0, "the default run failed", r)
    with open(os.path.join(SRC, "tests", "golden", "run", "narrow_types.expected")) as f:
        golden = f.read()
    check(r.stdout == golden, f"the default run's output differs from tests/golden/run/narrow_types.expected:\n{r.stdout}")


def case_undefined_lanes():
    # a .py kernel storing the lanes a tl.load without `other` masks off: reported only when asked
    # for (DTSIM_UNDEFINED_LANES=1) with --sanitize=all, at the store, naming the load's line
    src = tmp("undef.py")
    with open(src, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
                "    offs = tl.arange(0, BLOCK)\n"
                "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
                "    tl.store(y_ptr + offs, x + 1.0)\n")
    args = ["run", src, "--grid", "1", "--buf", "x_ptr=f32[16]", "--buf", "y_ptr=f32[16]", "--arg", "n=10", "--arg", "BLOCK=16"]
    os.environ.pop("DTSIM_UNDEFINED_LANES", None)
    r = dtsim(*args)
    check(r.returncode == 0 and "no findings" in r.stdout, "not asked for: no finding", r)
    os.environ["DTSIM_UNDEFINED_LANES"] = "1"
    try:
        r = dtsim(*args)
        out = r.stdout + r.stderr
        check(r.returncode == 1 and "undef.py:9:5: error: lanes masked off by the load at line 8" in out
              and "reach this store" in out and "6 of 16 lanes undefined (first: lane 10)" in out, "the finding", r)
        r = dtsim(*args, "--sanitize=conflicts")
        check(r.returncode == 0, "--sanitize=conflicts: not checked", r)
    finally:
        os.environ.pop("DTSIM_UNDEFINED_LANES", None)


def case_py_package_helpers():
    # a .py kernel whose helper comes from a package outside its folder: found through PYTHONPATH, as
    # Python finds it; without it, the name is host code (located)
    src = tmp("uses_pkg.py")
    with open(src, "w") as f:
        f.write("import triton\nimport triton.language as tl\nimport outside_pkg\n\n\n@triton.jit\n"
                "def k(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
                "    offs = tl.arange(0, BLOCK)\n"
                "    tl.store(y_ptr + offs, outside_pkg.neg(tl.load(x_ptr + offs)))\n")
    write_npy(tmp("x16.npy"), "<f4", (16,), [i - 7.5 for i in range(16)])
    args = ["run", src, "--grid", "1", "--in", "x_ptr=" + tmp("x16.npy"), "--buf", "y_ptr=f32[16]", "--arg", "BLOCK=16",
            "--out", "y_ptr=" + tmp("neg.npy")]
    r = dtsim(*args, env={"PYTHONPATH": "/nonexistent:" + os.path.join(SRC, "tests", "ttir", "roots")})
    check(r.returncode == 0 and os.path.exists(tmp("neg.npy")), "through PYTHONPATH", r)
    if os.path.exists(tmp("neg.npy")):
        check(read_npy(tmp("neg.npy"))[2] == [7.5 - i for i in range(16)], "the helper ran", r)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([DTSIM, *args], capture_output=True, text=True, timeout=300, cwd=SRC, env=env)
    check(r.returncode == 2 and "uses_pkg.py:9:39: error: 'outside_pkg.neg' is host code" in r.stderr, "without it: host code, located", r)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global DTSIM, SRC, TMP
    DTSIM, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sys.argv[3:] or list(CASES)
    failed = []
    with tempfile.TemporaryDirectory(prefix="dtsim-cli-") as d:
        TMP = d
        for name in names:
            try:
                CASES[name]()
                print(f"ok   {name}")
            except Fail as e:
                failed.append(name)
                print(f"FAIL {name}: {e}")
    print(f"{len(names) - len(failed)}/{len(names)} passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
