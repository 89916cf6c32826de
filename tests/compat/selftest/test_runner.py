"""Checks tests/compat/run_liger.py's verdicts without torch or Triton: it runs stand-in drivers
(stub_cases.py) under python -m dtsim and compares each run's lines and exit status with what the
expected-failures rules say (a listed failure is XFAIL, an unlisted one fails the run, a listed pass is
XPASS and does not, a listed name with no case fails).

usage: test_runner.py BUILD_PYTHON_DIR"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "run_liger.py")
STUB = os.path.join(HERE, "stub_cases.py")
failures = []


def run(expected_lines, cases):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("# comment line\n" + "".join(line + "\n" for line in expected_lines))
        path = f.name
    try:
        p = subprocess.run([sys.executable, RUNNER, "--python", sys.executable, "--pythonpath", sys.argv[1],
                            "--cases", STUB, "--expected", path, "--timeout", "120"] + cases,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    finally:
        os.unlink(path)
    return p.returncode, p.stdout


def check(what, cond, out):
    if not cond:
        failures.append("%s\n--- runner output ---\n%s" % (what, out))


rc, out = run([], ["ok"])
check("a passing case: exit 0 and a PASS line", rc == 0 and out.startswith("PASS   ok"), out)

rc, out = run([], ["differs"])
check("an unlisted mismatch: exit 1, FAIL with the MISMATCH line", rc == 1 and
      "FAIL   differs" in out and "MISMATCH: output 0: max abs error 0.5" in out, out)

rc, out = run([], ["raises"])
check("an unlisted exception: exit 1, ERROR with the exception's line", rc == 1 and
      "ERROR  raises" in out and "ValueError: kaboom in the op" in out, out)

rc, out = run(["differs  known: the reference disagrees", "raises   known: not supported yet"], [])
check("listed failures: exit 0, both XFAIL with their reasons, the pass still PASS", rc == 0 and
      "XFAIL  differs" in out and "[expected: known: the reference disagrees]" in out and
      "XFAIL  raises" in out and "PASS   ok" in out, out)

rc, out = run(["ok  was broken once"], ["ok"])
check("a listed case that passes: XPASS, exit 0", rc == 0 and "XPASS  ok" in out and "remove it" in out, out)

rc, out = run(["no_such_case  stale entry"], ["ok"])
check("a listed name with no case: STALE, exit 1", rc == 1 and "STALE  no_such_case" in out, out)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("run_liger.py verdicts: 6 scenarios as expected")
