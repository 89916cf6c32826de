"""A scripted debugger session from Python: `python -m dtsim --break-if 'pid0==1' copy_script.py` with
the REPL's commands on stdin (not a terminal: the REPL reads stdin). Checks that the run stopped in
pid 1 only and printed its offsets, and that the outputs were still written."""
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
