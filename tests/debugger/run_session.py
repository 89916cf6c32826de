#!/usr/bin/env python3
"""Scripted debugger session: runs `dtsim ARGS` (ARGS from CASE.args, run in the source root) with
stdin from CASE.in (REPL commands; empty when absent) and compares stdout+stderr and the exit code
with CASE.expected. `--update` rewrites the expected file from the actual output."""
import argparse
import difflib
import os
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtsim", required=True)
    ap.add_argument("--root", required=True, help="source root (the working directory of the run)")
    ap.add_argument("--case", required=True, help="path of the case without extension")
    ap.add_argument("--update", action="store_true")
    a = ap.parse_args()

    with open(a.case + ".args") as f:
        args = shlex.split(" ".join(l for l in f.read().splitlines() if not l.startswith("#")))
    stdin = b""
    if os.path.exists(a.case + ".in"):
        with open(a.case + ".in", "rb") as f:
            stdin = f.read()
    env = dict(os.environ, DTSIM_HISTORY=os.devnull)
    p = subprocess.run([a.dtsim] + args, cwd=a.root, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=120)
    actual = p.stdout.decode("utf-8", "replace") + "[exit %d]\n" % p.returncode

    if a.update:
        with open(a.case + ".expected", "w") as f:
            f.write(actual)
        print("updated", a.case + ".expected")
        return 0
    try:
        with open(a.case + ".expected") as f:
            expected = f.read()
    except FileNotFoundError:
        print("missing", a.case + ".expected (run with --update)")
        print(actual)
        return 1
    if actual == expected:
        return 0
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                               "expected", "actual"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
