"""Scripted debugger sessions from Python: `python -m dtsim --break-if 'pid0==1' break_script.py` with
the REPL's commands on stdin (not a terminal: the REPL reads stdin). Checks that the run stopped in
pid 1 only and printed its offsets, and that the outputs were still written; then the same for the
guide's breakpoint_if inside a kernel (examples/triton/copy_break.py)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(HERE, "break_script.py")
r = subprocess.run([sys.executable, "-m", "dtsim", "--break-if", "pid0==1", script], input="next\nnext\nprint offs\ncontinue\n",
                   capture_output=True, text=True, timeout=120)
print(r.stdout)
print(r.stderr, file=sys.stderr)
assert r.returncode == 0, r.returncode
assert "pid [1]" in r.stdout and "pid [0]" not in r.stdout and "pid [2]" not in r.stdout, "stopped in the wrong instances"
assert "offs: i32[4] = [4 5 6 7]" in r.stdout, "print offs"
assert "copy ok" in r.stdout

# The guide's breakpoint_if inside the kernel (examples/triton/copy_break.py), no flag needed.
r = subprocess.run([sys.executable, "-m", "dtsim", os.path.join(HERE, "break_guide_script.py")], input="print x\ncontinue\n",
                   capture_output=True, text=True, timeout=120)
print(r.stdout)
print(r.stderr, file=sys.stderr)
assert r.returncode == 0, r.returncode
assert r.stdout.count("(dtsim) print x") == 1 and "pid [1]" in r.stdout, "stopped in the wrong instances"
assert "copy_break.py:16" in r.stdout, "not at the breakpoint_if line"
assert "x: f32[4] = [4. 5. 6. 7.]" in r.stdout, "print x"
assert "copy ok" in r.stdout
