"""Runs the Liger-Kernel drivers (tests/compat/liger/cases.py), each case in its own process, and prints one
line per case:

    PASS   rms_norm
    FAIL   softmax: MISMATCH: output 0: max abs error 0.25 (atol 1e-06, rtol 1e-05)
    ERROR  geglu: dtsim._dtsim.CompileError: .../geglu.py:40:18: error: ...
    XFAIL  ... (an expected failure, with its recorded reason)
    XPASS  ... (a case listed as expected to fail that now passes: reported, not a failure)

FAIL is a result that differs from the torch reference; ERROR is an exception (or a timeout) before a
result. The exit status is 1 when a case that is not listed in the expected-failures file fails or errs,
or when the file names a case that does not exist; 0 otherwise.

    python3 tests/compat/run_liger.py --python VENV/bin/python --pythonpath BUILD/python [CASE...]

--interpret runs the same cases under TRITON_INTERPRET=1 instead of python -m dtsim (for comparison; the
expected-failures file does not apply then). --device cuda runs them on a GPU: the cases' tensors are made on
cuda and dtsim runs with --backend=cuda; with --triton instead of dtsim, Triton itself compiles and runs them
(the GPU baseline)."""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_PY = os.path.join(HERE, "liger", "cases.py")

# The line naming an exception at the end of a traceback: `ValueError: ...`, `dtsim._dtsim.CompileError: ...`
EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)|MISMATCH)\b(:.*)?$")


def read_expected(path):
    """`case  reason` per line; `#` starts a comment. Returns {case: reason}."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            out[name] = reason.strip() or "(no reason given)"
    return out


def first_error(text):
    """The exception line that ended the run (the last one in the output: the one the process died of)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    hits = [ln for ln in lines if EXC_LINE.match(ln.strip())]
    if hits:
        return hits[-1].strip()
    return lines[-1].strip() if lines else "no output"


def run_case(name, args, cases_py):
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["DTSIM_COMPAT_DEVICE"] = args.device
    env.pop("TRITON_INTERPRET", None)
    if args.interpret:
        env["TRITON_INTERPRET"] = "1"
        cmd = [args.python, cases_py, name]
    elif args.triton:
        cmd = [args.python, cases_py, name]
    else:
        backend = ["--backend=cuda"] if args.device == "cuda" else []
        cmd = [args.python, "-m", "dtsim"] + backend + [cases_py, name]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "ERROR", "timed out after %d s" % args.timeout, time.time() - t0
    out = p.stdout
    if args.verbose:
        sys.stdout.write(out)
    if p.returncode == 0 and "CASE-PASS" in out:
        return "PASS", "", time.time() - t0
    if p.returncode == 3 and "MISMATCH:" in out:
        return "FAIL", first_error(out), time.time() - t0
    return "ERROR", first_error(out), time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="the interpreter that has torch, triton, liger-kernel")
    ap.add_argument("--pythonpath", default="", help="prepended to PYTHONPATH (the build's python/ folder)")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_failures.txt"))
    ap.add_argument("--timeout", type=int, default=300, help="seconds per case")
    ap.add_argument("--interpret", action="store_true", help="run under TRITON_INTERPRET=1 instead of dtsim")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="where the cases' tensors live (cuda: dtsim runs with --backend=cuda)")
    ap.add_argument("--triton", action="store_true", help="run the cases with Triton itself (needs --device cuda)")
    ap.add_argument("--verbose", action="store_true", help="show each case's output")
    ap.add_argument("--cases", dest="cases_file", default=CASES_PY, help="the drivers' file (default: liger/cases.py)")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    if args.triton and (args.interpret or args.device != "cuda"):
        ap.error("--triton runs Triton's own GPU compiler: it needs --device cuda and excludes --interpret")

    listed = subprocess.run([args.python, args.cases_file, "--list"], stdout=subprocess.PIPE, text=True, check=True)
    all_cases = listed.stdout.split()
    cases = args.cases or all_cases
    unknown = [c for c in cases if c not in all_cases]
    if unknown:
        print("run_liger: unknown case(s): %s" % ", ".join(unknown), file=sys.stderr)
        return 2
    expected = {} if (args.interpret or args.triton) else read_expected(args.expected)
    bad = 0
    stale = [c for c in expected if c not in all_cases]
    for c in stale:
        print("STALE  %s: listed in %s but no such case" % (c, args.expected))
        bad += 1
    counts = {}
    for name in cases:
        status, msg, secs = run_case(name, args, args.cases_file)
        tag = status
        if name in expected:
            tag = "XPASS" if status == "PASS" else "XFAIL"
        elif status != "PASS":
            bad += 1
        counts[tag] = counts.get(tag, 0) + 1
        line = "%-6s %s (%.1f s)" % (tag, name, secs)
        if msg:
            line += ": " + msg
        if tag == "XFAIL":
            line += "  [expected: %s]" % expected[name]
        elif tag == "XPASS":
            line += "  [listed as expected to fail: %s; remove it from the list]" % expected[name]
        print(line, flush=True)
    print("run_liger: %s" % ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
