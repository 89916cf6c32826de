#!/usr/bin/env python3
"""Runs one example through `dtsim run` and checks the outcome its kind calls for:
  ok     examples/*.tile: exit 0, a summary line per output, "sanitizer: all: no findings"
  bug    examples/bugs/*: exit 1, at least one `FILE:LINE:COL: error:` finding, findings counted
  check  examples/*.dt:   `--check` exits 0 and every output line says PASS
  warn   examples/bugs/* whose instances store equal values: exit 0, one `FILE:LINE:COL: warning:`
         naming the equal values, "no findings, 1 warning"
usage: run_example.py DTSIM FILE ok|bug|check|warn"""
import re
import subprocess
import sys


def main():
    dtsim, path, kind = sys.argv[1:4]
    args = [dtsim, "run", path] + (["--check"] if kind == "check" else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    problems = []
    if kind in ("ok", "check"):
        if r.returncode != 0:
            problems.append(f"exit {r.returncode}, expected 0")
        if not re.search(r"^\w+: \w+\[[\d, ]+\] checksum=\S+ first=\[", r.stdout, re.M):
            problems.append("no summary line")
        if "sanitizer: all: no findings" not in r.stdout:
            problems.append("the sanitizer line does not say 'no findings'")
        if kind == "check":
            verdicts = re.findall(r"max rel err = \S+\s+(PASS|FAIL)", r.stdout)
            if not verdicts or "FAIL" in verdicts:
                problems.append(f"--check verdicts: {verdicts}")
    elif kind == "warn":
        if r.returncode != 0:
            problems.append(f"exit {r.returncode}, expected 0 (a warning)")
        name = path.rsplit("/", 1)[-1]
        if len(re.findall(r"%s:\d+:\d+: warning: instances .* with equal values" % re.escape(name), r.stderr)) != 1:
            problems.append("not one equal-value warning with a source location on stderr")
        if "sanitizer: all: no findings, 1 warning" not in r.stdout:
            problems.append("the sanitizer line does not say 'no findings, 1 warning'")
    else:
        if r.returncode != 1:
            problems.append(f"exit {r.returncode}, expected 1 (a finding)")
        name = path.rsplit("/", 1)[-1]
        if not re.search(r"%s:\d+:\d+: error:" % re.escape(name), r.stderr):
            problems.append("no finding with a source location on stderr")
        if not re.search(r"^sanitizer: all: [1-9]\d* findings?", r.stdout, re.M):
            problems.append("the sanitizer line does not count the findings")
    if problems:
        print("FAIL: " + "; ".join(problems))
        print("---- stdout ----\n" + r.stdout[-4000:] + "\n---- stderr ----\n" + r.stderr[-4000:])
        sys.exit(1)
    print(f"ok: {path} ({kind})")


if __name__ == "__main__":
    main()
