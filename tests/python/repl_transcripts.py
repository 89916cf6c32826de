#!/usr/bin/env python3
"""Transcripts of `python -m dtsim` under a terminal (tmux), as a user types them: Ctrl-C in a runaway
loop (KeyboardInterrupt naming the loop; under the debugger, back to the prompt), `quit` and Ctrl-D
ending the script as pdb's quit does (exit 0, later launches not run, findings of the launch
reported), breakpoints, `delete`, `disable`, `condition` and displays carried over to the next
launch, `where` showing the host call site and the launch number, completion after `info `, and
Triton expressions (completion after `tl.`, tl.* functions, methods, attributes, indexing).
usage: repl_transcripts.py SOURCE_DIR BUILD_DIR [CASE...]; exits 77 (skipped) without tmux."""
import os
import shutil
import subprocess
import sys
import time

SRC, BUILD = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable


class Fail(Exception):
    pass


class Tmux:
    """One command in a detached tmux session (a real terminal: readline, SIGINT from Ctrl-C)."""

    def __init__(self, args, name):
        self.sock = "dtsim_%d_%s" % (os.getpid(), name)
        env = "PYTHONPATH=%s HOME=%s DTSIM_HISTORY=/dev/null INPUTRC=/dev/null TERM=xterm" % (
            os.path.join(BUILD, "python"), BUILD)
        cmd = "trap : INT; cd %s && env %s %s; echo EXIT=$?; sleep 600" % (SRC, env, " ".join("'%s'" % a for a in args))
        subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y",
                        "100", cmd], check=True)

    def keys(self, *keys):
        subprocess.run(["tmux", "-L", self.sock, "send-keys", "-t", "t", *keys], check=True)

    def line(self, text):
        subprocess.run(["tmux", "-L", self.sock, "send-keys", "-t", "t", "-l", text], check=True)
        self.keys("Enter")

    def screen(self):
        r = subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p", "-J", "-t", "t", "-S", "-3000"],
                           capture_output=True, text=True)
        return r.stdout

    def wait_for(self, text, timeout=60, after=0):
        """Waits until `text` appears (its count exceeds `after`); returns the seconds it took."""
        start = time.time()
        while time.time() - start < timeout:
            if self.screen().count(text) > after:
                return time.time() - start
            time.sleep(0.02)
        raise Fail("waiting for %r\n--- screen ---\n%s" % (text, self.screen()))

    def prompt(self, n):
        """Waits for the n-th '(dtsim) ' prompt."""
        self.wait_for("(dtsim) ", after=n - 1)

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def check(cond, msg, t):
    if not cond:
        raise Fail(msg + "\n--- screen ---\n" + t.screen())


def dtsim(name, *args):
    return Tmux([PY, "-m", "dtsim", *args], name)


THREE = os.path.join(HERE, "three_launches.py")
RUNAWAY = os.path.join(HERE, "runaway.py")


def case_ctrl_c_runaway():
    """No debugger: Ctrl-C in a loop of one instance raises KeyboardInterrupt naming the loop, exit 130."""
    t = dtsim("ctrlc", RUNAWAY)
    try:
        t.wait_for("first launch ok")
        time.sleep(1.0)  # well inside the runaway loop
        t.keys("C-c")
        took = t.wait_for("EXIT=")
        s = t.screen()
        check("KeyboardInterrupt" in s, "no KeyboardInterrupt", t)
        check("EXIT=130" in s, "exit status is not 130", t)
        check("runaway.py" in s and "spin_k" in s, "the message does not say where the run stopped", t)
        check("the runaway launch returned" not in s, "the launch returned", t)
        print("ctrl_c_runaway: stopped %.2f s after Ctrl-C" % took)
    finally:
        t.close()


def case_ctrl_c_debugger():
    """Under the debugger, Ctrl-C in a runaway loop returns to the prompt; quit then ends the script."""
    t = dtsim("ctrlcdbg", "--break-if", "trips > 100", RUNAWAY)
    try:
        t.wait_for("first launch ok")
        t.prompt(1)
        t.line("continue")
        time.sleep(1.0)
        t.keys("C-c")
        t.wait_for("Interrupted (Ctrl-C)")
        t.prompt(2)
        t.line("print i > 1000")
        t.wait_for("i > 1000: i1 = True")
        t.line("quit")
        t.wait_for("EXIT=")
        check("EXIT=0" in t.screen(), "quit did not exit 0", t)
        check("the runaway launch returned" not in t.screen(), "the script went on after quit", t)
    finally:
        t.close()


def case_quit_ends_script():
    """quit ends the script (no later launch, no 'all launches ok'), exit 0 as python -m pdb."""
    t = dtsim("quit", "--break-if", "pid0==1", THREE)
    try:
        t.prompt(1)
        t.line("quit")
        t.wait_for("EXIT=")
        s = t.screen()
        check("EXIT=0" in s, "exit status is not 0", t)
        check("launch 1 ok" not in s and "all launches ok" not in s, "the script went on after quit", t)
    finally:
        t.close()


def case_ctrl_d_ends_script():
    t = dtsim("eof", "--break-if", "pid0==1", THREE)
    try:
        t.prompt(1)
        t.keys("C-d")
        t.wait_for("EXIT=")
        s = t.screen()
        check("EXIT=0" in s and "launch 1 ok" not in s, "Ctrl-D did not end the script", t)
    finally:
        t.close()


def case_quit_keeps_findings():
    """A finding seen before quit is reported when the script ends."""
    t = dtsim("findings", "--break-if", "pid0==1", os.path.join(HERE, "planted_bug.py"))
    try:
        t.prompt(1)
        t.line("continue")
        t.wait_for("sanitizer finding in pid [1]")
        t.prompt(2)
        t.line("quit")
        t.wait_for("EXIT=")
        s = t.screen()
        check("EXIT=0" in s, "exit status is not 0", t)
        check("1 finding reported before" in s and "out of bounds" in s.split("(dtsim) quit")[1], "the finding was dropped", t)
        check("the planted bug was not reported" not in s, "the script went on after quit", t)
    finally:
        t.close()


def case_delete_persists():
    """delete in launch 1: launches 2 and 3 do not stop."""
    t = dtsim("delete", "--break-if", "pid0==1", THREE)
    try:
        t.prompt(1)
        t.line("delete")
        t.prompt(2)
        t.line("continue")
        t.wait_for("EXIT=")
        s = t.screen()
        check("EXIT=0" in s and "all launches ok" in s, "the script did not finish", t)
        check(s.count("Breakpoint 1") == 1, "stopped again after delete", t)
    finally:
        t.close()


def case_breakpoints_persist():
    """A breakpoint added in launch 1 stops in launch 2; disable, condition and display carry over;
    where shows the host's call stack and the launch number."""
    t = dtsim("persist", "--break-if", "pid0==1", THREE)
    try:
        t.prompt(1)
        t.line("break 16 if pid0 == 2")
        t.prompt(2)
        t.line("disable 1")
        t.prompt(3)
        t.line("display s")
        t.prompt(4)
        t.line("continue")
        t.wait_for("Breakpoint 2 at")
        t.prompt(5)
        t.line("continue")  # launch 2: breakpoint 1 disabled, breakpoint 2 in pid 2
        t.wait_for("launch 1 ok")
        t.prompt(6)
        s = t.screen()
        check("1: s = 2.0" in s, "the display did not carry over to launch 2", t)
        t.line("where")
        t.wait_for("(launch 2)")
        s = t.screen()
        check("three_launches.py:28 in <module>: z = scale(x, float(launch + 1))" in s, "where: no host call site", t)
        check("three_launches.py:21 in scale: scale_k[" in s, "where: no launch line", t)
        t.line("info breakpoints")
        t.wait_for("[disabled]")
        t.line("condition 2 pid0 == 0")
        t.wait_for("Breakpoint 2 if pid0 == 0")
        t.line("continue")  # launch 3: pid 0 only
        t.wait_for("launch 2 ok")
        t.prompt(9)
        t.line("print pid0")
        t.wait_for("pid0: i32 = 0")
        t.line("continue")
        t.wait_for("EXIT=")
        s = t.screen()
        check("EXIT=0" in s and "all launches ok" in s, "the script did not finish", t)
        check(s.count("Breakpoint 1 (") == 1, "disabled breakpoint 1 stopped again", t)
    finally:
        t.close()


def case_completion():
    """After `info ` only info's subcommands complete; the first word completes commands."""
    t = dtsim("complete", "--break-if", "pid0==1", THREE)
    try:
        t.prompt(1)
        t.line("")
        t.prompt(2)
        t.keys("i", "n", "f", "Tab")
        t.wait_for("(dtsim) info ")
        t.keys("Tab", "Tab")
        t.wait_for("breakpoints")
        s = t.screen().split("(dtsim) info")[-2 if t.screen().count("(dtsim) info") > 1 else -1]
        check("locals" in s and "memory" in s and "continue" not in s and "offs" not in s,
              "info's completions are not its subcommands", t)
        t.keys("C-u")
        t.line("quit")
        t.wait_for("EXIT=")
    finally:
        t.close()


def case_triton_expressions():
    """Triton expressions at the prompt of a script's launch: tl.* completed after `tl.` and evaluated
    over the instance's values, methods, attributes and indexing; an error with its caret."""
    t = dtsim("tlexpr", "--break-at", "three_launches.py:16 if pid0 == 1", THREE)
    try:
        t.prompt(1)
        t.keys("p", "r", "i", "n", "t", "Space", "t", "l", ".", "s", "u", "m", "Tab")  # (tl.su: sub, sum, squeeze)
        t.wait_for("(dtsim) print tl.sum")
        t.line("(offs * 2, axis=0)")
        t.wait_for("tl.sum(offs * 2, axis=0): i32 = 44")
        t.line("print offs[1], x.sum(0), offs.shape")
        t.wait_for("offs.shape = (4,)")
        s = t.screen()
        check("offs[1]: i32 = 5" in s and "x.sum(0): f32 = 22.0" in s, "method and index values", t)
        t.line("print offs[7]")
        t.wait_for("index 7 is out of bounds for axis 0 with size 4")
        check("  offs[7]\n" in t.screen() and "       ^" in t.screen(), "the error has no caret under the index", t)
        t.line("quit")
        t.wait_for("EXIT=")
    finally:
        t.close()


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main():
    if not shutil.which("tmux"):
        print("tmux is not installed (scripts/setup.sh installs it): skipped")
        return 77
    names = sys.argv[3:] or list(CASES)
    failed = []
    for n in names:
        try:
            CASES[n]()
            print("ok   %s" % n)
        except Fail as e:
            failed.append(n)
            print("FAIL %s: %s" % (n, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
