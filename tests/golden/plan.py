#!/usr/bin/env python3
"""Golden test of the CUDA backend's plan: `dtsim emit --plan FILE FLAGS...` must print exactly
EXPECTED, and `dtsim emit --nvvm FILE FLAGS...` (emission from that plan) must succeed.
DTSIM_UPDATE_GOLDEN=1 rewrites EXPECTED.
usage: plan.py DTSIM ROOT FILE EXPECTED FLAGS..."""
import os
import subprocess
import sys


def main():
    dtsim, root, kernel, expected = sys.argv[1:5]
    flags = sys.argv[5:]
    r = subprocess.run([dtsim, "emit", "--plan", kernel] + flags, cwd=root, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print("FAIL: emit --plan exited %d\n%s" % (r.returncode, r.stderr))
        return 1
    path = os.path.join(root, expected)
    if os.environ.get("DTSIM_UPDATE_GOLDEN") == "1":
        with open(path, "w") as f:
            f.write(r.stdout)
        print("updated " + expected)
        return 0
    with open(path) as f:
        want = f.read()
    if r.stdout != want:
        print("FAIL: emit --plan differs from %s\n---- got ----\n%s" % (expected, r.stdout))
        return 1
    e = subprocess.run([dtsim, "emit", "--nvvm", kernel] + flags, cwd=root, capture_output=True, text=True, timeout=120)
    if e.returncode != 0 or "define void @" not in e.stdout:
        print("FAIL: emit --nvvm from the same plan failed\n" + e.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
