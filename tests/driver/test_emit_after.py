#!/usr/bin/env python3
"""The compile driver's pass list, stage by stage: `dtsim emit --after=STAGE` on a .tile, a .dt and a
.py example. Each stage's dump is checked for what that stage did (and, as far as it can be seen,
what it has not done yet), an error a stage reports is reported by that stage and not before it, and
the lowered module of every dump is the module `emit --tile` prints.
usage: test_emit_after.py DTSIM SOURCE_DIR CASE"""
import os
import subprocess
import sys
import tempfile

DTSIM = ""
SRC = ""
TMP = ""
STAGES = ["parse", "check", "bind-sizes", "schedule", "lower", "verify"]


class Fail(Exception):
    pass


def check(cond, msg, r=None):
    if not cond:
        if r is not None:
            msg += f"\n  exit {r.returncode}\n  stdout: {r.stdout[-3000:]}\n  stderr: {r.stderr[-2000:]}"
        raise Fail(msg)


def dtsim(*args):
    r = subprocess.run([DTSIM, *args], capture_output=True, text=True, timeout=300, cwd=SRC)
    check(r.returncode in (0, 1, 2), f"dtsim {' '.join(args)} crashed or hit an internal error", r)
    return r


def dumps(path, *flags):
    """stage -> stdout of emit --after=stage (each must succeed)."""
    out = {}
    for s in STAGES:
        r = dtsim("emit", f"--after={s}", path, *flags)
        check(r.returncode == 0 and r.stderr == "", f"emit --after={s} {path}: exit 0, no message", r)
        out[s] = r.stdout
    return out


def body(text):
    """The dump without its '#' lines (notes, bindings): the tile IR."""
    return "".join(l + "\n" for l in text.splitlines() if not l.startswith("#"))


def notes(text):
    return [l for l in text.splitlines() if l.startswith("#")]


def one_error_line(r, what, where):
    check(r.returncode == 2, f"{what}: exit 2", r)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(len(lines) >= 1 and lines[0].startswith(where) and ": error: " in lines[0], f"{what}: located error at {where}", r)


def case_tile_stages():
    f = "examples/add.tile"
    d = dumps(f, "--arg", "n=100")
    tile = dtsim("emit", "--tile", f, "--arg", "n=100")
    check(tile.returncode == 0, "emit --tile add.tile", tile)
    check(notes(d["parse"]) == [] and body(d["parse"]) == tile.stdout, "after parse: the parsed module, nothing bound", tile)
    check(notes(d["check"]) == ["# tile: no 'check' stage: the verifier checks a .tile module, at 'verify'"],
          "after check: the stage a .tile file has not got is named")
    check("# bound: BLOCK=1024 n=100" in notes(d["bind-sizes"]), "after bind-sizes: the parameters bound (n from --arg)")
    check("# bound:" not in d["check"], "after check: nothing bound yet")
    check(any("no 'schedule' stage" in l for l in notes(d["schedule"])), "after schedule: no schedule stage for .tile")
    check(any("no 'lower' stage" in l for l in notes(d["lower"])), "after lower: no lower stage for .tile")
    check("# verified; add grid (1, 1, 1)" in notes(d["verify"]), "after verify: verified, the grid at n=100")
    check("# verified" not in d["lower"], "after lower: not verified yet")
    for s in STAGES:
        check(body(d[s]) == tile.stdout, f"after {s}: the module is the one emit --tile prints")
    # A dump is a .tile file: it runs as the example does.
    path = os.path.join(TMP, "dumped.tile")
    with open(path, "w") as fh:
        fh.write(d["verify"])
    a = dtsim("run", f, "--arg", "n=100")
    b = dtsim("run", path, "--arg", "n=100")
    check(a.returncode == 0 and a.stdout == b.stdout, "the verify dump runs like the file", b)
    # An error of the verifier is reported at verify, not before.
    bad = os.path.join(TMP, "bad_type.tile")
    with open(bad, "w") as fh:
        fh.write("kernel k(x: *f32[4]) grid(1) {\n  v = load(x + arange(0, 4))\n  store(x + arange(0, 4), v + undefined_name)\n}\n")
    r = dtsim("emit", "--after=lower", bad)
    check(r.returncode == 0, "a .tile file with an unknown name dumps up to lower", r)
    one_error_line(dtsim("emit", "--after=verify", bad), "unknown name at verify", bad + ":3:")


def case_dt_stages():
    f = "examples/add_out.dt"
    d = dumps(f, "--arg", "y_SIZE=300")
    check(d["parse"].startswith("DtProgram examples/add_out.dt\n"), "after parse: the syntax tree")
    check("  In A: f32  @5:4\n" in d["parse"], "after parse: In A has no dims yet (the checker fixes them)")
    check("  In A: f32 [x, y]  @5:4\n" in d["check"], "after check: In A indexed by [x, y]")
    check("  Var y = 1000  @7:12\n" in d["check"], "after check: y has its declared size")
    check("  Var y = 300  @7:12\n" in d["bind-sizes"], "after bind-sizes: y from --arg y_SIZE=300")
    check("Kernel add_out:" not in d["bind-sizes"], "after bind-sizes: not scheduled yet")
    check("Kernel add_out: block(x:1, y:256) tensorize(y:64) num_warps=4 num_stages=3\n" in d["schedule"],
          "after schedule: the kernel's resolved schedule")
    check("y_SIZE: constexpr = 300" in d["lower"] and d["lower"].startswith("kernel add_out_kernel("),
          "after lower: tile IR specialized to y = 300")
    check(notes(d["lower"]) == [], "after lower: nothing bound, no notes (.dt has every stage)")
    v = notes(d["verify"])
    check(len(v) == 2 and v[0] == "# bound: alpha=0.5 x_SIZE=6 y_SIZE=300" and v[1] == "# verified; add_out_kernel grid (12, 1, 1)",
          "after verify: bound and verified, 2 blocks of 256 over y times 6 over x", None)
    tile = dtsim("emit", "--tile", f, "--arg", "y_SIZE=300")
    check(body(d["lower"]) == tile.stdout and body(d["verify"]) == tile.stdout, "the lowered module is emit --tile's", tile)
    # Each stage reports its own errors, and no stage before it does.
    bad = os.path.join(TMP, "bad_name.dt")
    with open(bad, "w") as fh:
        fh.write("Func f;\nIn A;\nVar x;\nf[x] = A[x] + Bogus[x];\nf.compile();\n")
    check(dtsim("emit", "--after=parse", bad).returncode == 0, "an undeclared name parses")
    one_error_line(dtsim("emit", "--after=check", bad), "undeclared name at check", bad + ":4:")
    r = dtsim("emit", "--after=check", f, "--arg", "y_SIZE=0")
    check(r.returncode == 0, "a bad size is not the checker's business", r)
    r = dtsim("emit", "--after=bind-sizes", f, "--arg", "y_SIZE=0")
    check(r.returncode == 2 and "y_SIZE" in r.stderr, "a bad size is reported at bind-sizes", r)
    sched = os.path.join(TMP, "bad_schedule.dt")
    with open(sched, "w") as fh:
        fh.write("Func f;\nIn A;\nVar x;\nf[x] = A[x];\nf.block(x:0);\nf.compile();\n")
    check(dtsim("emit", "--after=bind-sizes", sched).returncode == 0, "a bad block size is not seen before schedule")
    one_error_line(dtsim("emit", "--after=schedule", sched), "bad block size at schedule", sched + ":5:")


def case_py_stages():
    f = "examples/triton/add.py"
    flags = ["--buf", "x_ptr=f32[100]", "--buf", "y_ptr=f32[100]", "--buf", "out_ptr=f32[100]",
             "--arg", "n_elements=100", "--grid", "cdiv(n_elements, BLOCK)"]
    d = dumps(f, *flags)
    one_step = "the partial evaluator parses, checks, specializes and lowers the launched kernel in one step, at 'lower'"
    check(notes(d["parse"]) == [f"# py: no 'parse' stage: {one_step}",
                                "# examples/triton/add.py: @triton.jit kernels (entry points): add_kernel"],
          "after parse: the file's kernels, and where the work happens")
    check(body(d["schedule"]) == "", "before lower: no tile IR yet")
    check(d["lower"].count("# py: no ") == 4 and "kernel add_kernel(" in d["lower"], "after lower: the kernel in tile IR")
    check("# verified; add_kernel grid (1, 1, 1)" in notes(d["verify"]), "after verify: the grid cdiv(100, 256)")
    tile = dtsim("emit", "--tile", f, *flags)
    check(tile.returncode == 0 and body(d["lower"]) == tile.stdout, "the lowered module is emit --tile's", tile)
    # The launch is checked where the kernel is specialized: at lower, not before.
    r = dtsim("emit", "--after=schedule", f)
    check(r.returncode == 0, "no launch flags: fine before lower", r)
    one_error_line(dtsim("emit", "--after=lower", f), "missing launch flags at lower", "examples/triton/add.py:9:")


def case_bad_stage():
    r = dtsim("emit", "--after=optimize", "examples/add.tile")
    check(r.returncode == 2, "unknown stage: exit 2", r)
    lines = r.stderr.splitlines()
    check(len(lines) == 1 and all(s in lines[0] for s in STAGES) and "'optimize'" in lines[0],
          "unknown stage: one line naming it and every valid stage", r)
    r = dtsim("emit", "--after=lower", "--tile", "examples/add.tile")
    check(r.returncode == 2 and "choose one of" in r.stderr, "--after with another emit: usage error", r)
    r = dtsim("emit", "--after", "examples/add.tile")
    check(r.returncode == 2, "--after without a stage: usage error", r)


def main():
    global DTSIM, SRC, TMP
    DTSIM, SRC, case = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as t:
        TMP = t
        try:
            globals()["case_" + case]()
        except Fail as e:
            print(f"FAIL {case}: {e}")
            return 1
    print(f"ok {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
