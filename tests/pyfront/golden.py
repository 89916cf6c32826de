#!/usr/bin/env python3
"""Golden test of the Triton frontend: `dtsim emit --tile KERNEL.py FLAGS...` must print exactly
EXPECTED, and the printed .tile must print back to the same text (it is a valid .tile program).
DTSIM_UPDATE_GOLDEN=1 rewrites EXPECTED.
usage: golden.py DTSIM ROOT KERNEL.py EXPECTED FLAGS..."""
import os
import subprocess
import sys
import tempfile


def main():
    dtsim, root, kernel, expected = sys.argv[1:5]
    flags = sys.argv[5:]
    r = subprocess.run([dtsim, "emit", "--tile", kernel] + flags, cwd=root, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print("FAIL: emit --tile exited %d\n%s" % (r.returncode, r.stderr))
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
        print("FAIL: emit --tile differs from %s\n---- got ----\n%s" % (expected, r.stdout))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        tile = os.path.join(tmp, "k.tile")
        with open(tile, "w") as f:
            f.write(r.stdout)
        back = subprocess.run([dtsim, "emit", "--tile", tile], capture_output=True, text=True, timeout=120)
        if back.returncode != 0 or back.stdout != r.stdout:
            print("FAIL: the printed .tile does not print back to itself\n" + back.stderr + back.stdout)
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
