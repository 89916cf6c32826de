#!/usr/bin/env python3
"""Must-fail test: runs `dtsim run FILE` and checks the diagnostic against FILE's first line,
`# expect-error: LINE:COL: MESSAGE-SUBSTRING`:
  * the exit status is 1 or 2 (not 0, not a crash, not an internal error),
  * stderr has a line starting `FILE:LINE:COL: error:` that contains MESSAGE-SUBSTRING,
  * the source line is echoed and a caret line follows it.
An optional second line `# args: FLAGS` adds command-line flags; a value `NAME=@DTYPE(D0,D1,...)`
(e.g. `--in A=@f32(10,20)`) becomes a generated .npy file of that dtype and shape.
usage: check_error.py DTSIM FILE"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from npyfile import write_npy  # noqa: E402


def fail(msg, stderr=""):
    print("FAIL: " + msg)
    if stderr:
        print("---- dtsim stderr ----\n" + stderr)
    sys.exit(1)


def main():
    dtsim, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        second = f.readline()
    m = re.match(r"\s*(#|//)\s*expect-error:\s*(\d+):(\d+):\s*(.*?)\s*$", first)
    if not m:
        fail(f"{path}: the first line must be '# expect-error: LINE:COL: MESSAGE'")
    line, col, want = m.group(2), m.group(3), m.group(4)
    tmp = tempfile.TemporaryDirectory()
    flags = []
    a = re.match(r"\s*(#|//)\s*args:\s*(.*?)\s*$", second)
    for word in (a.group(2).split() if a else []):
        m = re.fullmatch(r"(\w+)=@(\w+)\(([\d,]*)\)", word)
        if m:
            npy = os.path.join(tmp.name, "%s_%d.npy" % (m.group(1), len(flags)))
            write_npy(npy, [int(d) for d in m.group(3).split(",") if d], m.group(2))
            word = "%s=%s" % (m.group(1), npy)
        flags.append(word)
    try:
        r = subprocess.run([dtsim, "run", path] + flags, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail("dtsim did not finish within 120 s")
    finally:
        tmp.cleanup()
    if r.returncode == 0:
        fail("dtsim exited 0; an error was expected", r.stderr)
    if r.returncode not in (1, 2):
        fail(f"dtsim exited {r.returncode} (a crash or an internal error)", r.stderr)
    lines = r.stderr.splitlines()
    prefix = f"{path}:{line}:{col}: error:"
    hits = [i for i, l in enumerate(lines) if l.startswith(prefix)]
    if not hits:
        fail(f"no line starting with '{prefix}'", r.stderr)
    i = hits[0]
    if want and want not in lines[i]:
        fail(f"the error line lacks '{want}'", r.stderr)
    if i + 2 >= len(lines) or not re.fullmatch(r"\s*\^\s*", lines[i + 2]):
        fail("no caret line under the echoed source line", r.stderr)
    print(f"ok: {prefix} ... {want}")


if __name__ == "__main__":
    main()
