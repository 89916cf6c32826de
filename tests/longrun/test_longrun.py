#!/usr/bin/env python3
"""Long runs: --max-steps and --timeout stop a kernel whose loop runs 10^12 trips, with a message at
the loop naming the instance; a bad --out path fails before the run starts; Ctrl-C (through a
pseudo-terminal, as a user types it) stops `run` at an instance boundary with exit 130 and no
output file, stops `difftest` between cases, and returns `debug` to its prompt; a progress line is
drawn on a terminal. usage: test_longrun.py DTSIM SOURCE_DIR CASE..."""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "debugger"))
from pty_drive import Session  # noqa: E402

DTSIM = ""
SRC = ""
TMP = ""
HERE = os.path.dirname(os.path.abspath(__file__))
RUNAWAY = os.path.join(HERE, "runaway.tile")
SLOW = os.path.join(HERE, "slow.tile")
SLOW_TRIPS = "trips=200000"  # about 4096 x 200000 loop trips: far more than the few seconds a test waits


class Fail(Exception):
    pass


def check(cond, msg, out=""):
    if not cond:
        raise Fail(msg + ("\n--- output ---\n" + out if out else ""))


def dtsim(*args, timeout=60):
    start = time.time()
    r = subprocess.run([DTSIM, *args], capture_output=True, text=True, timeout=timeout, cwd=SRC)
    return r, time.time() - start


def text(r):
    return f"exit {r.returncode}\nstdout: {r.stdout[-3000:]}\nstderr: {r.stderr[-3000:]}"


def case_max_steps():
    r, _ = dtsim("run", RUNAWAY, "--max-steps", "1000")
    check(r.returncode == 1, "--max-steps did not fail the run with exit 1", text(r))
    first = r.stderr.splitlines()[0] if r.stderr else ""
    check(re.fullmatch(r".*runaway\.tile:8:3: error: program instance exceeded its budget of 1000 statements \(--max-steps\) "
                       r"in the loop over 'i' \(i = \d+\)", first) is not None, "unexpected first line", text(r))
    check("for i in range(0, trips) {" in r.stderr and "pid [0]" in r.stderr,
          "the message does not show the loop's line and the instance", text(r))
    check("z: f32" not in r.stdout or "sanitizer" in r.stdout, "unexpected output", text(r))
    # Statements count: a kernel of a few statements per instance runs clean under a small budget.
    r, _ = dtsim("run", "examples/copy.tile", "--max-steps", "10")
    check(r.returncode == 0, "copy.tile (5 statements per instance) failed under --max-steps 10", text(r))
    r, _ = dtsim("run", "examples/copy.tile", "--max-steps", "4")
    check(r.returncode == 1 and "budget of 4 statements" in r.stderr, "copy.tile ran under --max-steps 4", text(r))
    r, _ = dtsim("run", os.path.join(os.path.dirname(RUNAWAY), "runaway_while.tile"), "--max-steps", "500")
    check(r.returncode == 1 and re.search(r"runaway_while\.tile:5:3: error: program instance exceeded its budget of 500 "
                                          r"statements \(--max-steps\) in this while loop", r.stderr) is not None,
          "an endless while loop is not stopped at its line by --max-steps", text(r))
    spin = os.path.join(os.path.dirname(RUNAWAY), "spin_empty.tile")
    r, _ = dtsim("run", spin, "--max-steps", "1000")
    check(r.returncode == 1 and re.search(r"spin_empty\.tile:5:3: error: program instance exceeded its budget of 1000 "
                                          r"statements \(--max-steps\) in this while loop", r.stderr) is not None,
          "a while loop with an empty body is not stopped by --max-steps", text(r))
    # (with instances in parallel: on one thread the loop is found unable to end first, below)
    r, _ = dtsim("run", spin, "--timeout", "0.5", "--threads", "2")
    check(r.returncode == 1 and re.search(r"spin_empty\.tile:5:3: error: run stopped after 0\.5 s \(--timeout\)", r.stderr) is not None,
          "a while loop with an empty body is not stopped by --timeout", text(r))
    r, _ = dtsim("run", spin)
    check(r.returncode == 1 and re.search(r"spin_empty\.tile:5:3: error: this while loop cannot end: a trip changed neither", r.stderr)
          is not None, "a while loop whose trips change nothing is not reported on one thread", text(r))
    r, _ = dtsim("run", RUNAWAY, "--max-steps", "0")
    check(r.returncode == 2 and "'--max-steps' expects an integer" in r.stderr, "--max-steps 0 accepted", text(r))


def case_timeout():
    r, secs = dtsim("run", RUNAWAY, "--timeout", "0.5", "--threads", "2")
    check(r.returncode == 1, "--timeout did not fail the run with exit 1", text(r))
    check(re.search(r"runaway\.tile:8:3: error: run stopped after 0\.5 s \(--timeout\) in the loop over 'i' "
                    r"\(i = \d+\)", r.stderr) is not None, "unexpected message", text(r))
    check("pid [" in r.stderr, "the message does not name the instance", text(r))
    check(secs < 30, f"--timeout 0.5 took {secs:.1f} s")
    r, _ = dtsim("run", RUNAWAY, "--timeout", "-1")
    check(r.returncode == 2 and "'--timeout' expects a number of seconds" in r.stderr, "--timeout -1 accepted", text(r))


def case_out_checked_first():
    # Without the check, this run would never end (runaway loop): the error must come first.
    missing = os.path.join(TMP, "no_such_dir", "z.npy")
    r, secs = dtsim("run", RUNAWAY, "--out", "z=" + missing, timeout=30)
    check(r.returncode == 2, "an --out into a missing directory did not fail with exit 2", text(r))
    check(r.stderr == f"{missing}: error: cannot write --out z: directory '{os.path.dirname(missing)}' does not exist\n",
          "unexpected message", text(r))
    check(len(r.stderr.splitlines()) == 1, "more than one line", text(r))
    check(secs < 10, f"the check took {secs:.1f} s: it did not come before the run")
    r, _ = dtsim("run", RUNAWAY, "--out", "z=" + TMP, timeout=30)
    check(r.returncode == 2 and "is a directory" in r.stderr, "--out naming a directory accepted", text(r))
    r, _ = dtsim("run", "examples/copy.tile", "--out", "z=" + os.path.join(TMP, "z.npy"))
    check(r.returncode == 0 and os.path.exists(os.path.join(TMP, "z.npy")), "a good --out path failed", text(r))


def finish(s, timeout=150):
    """Waits for the process to end, then reads what it wrote that is still in the terminal. The
    wait is generous: under the sanitizer build on a loaded 2-core machine an instance boundary can
    be seconds away."""
    rc = s.wait(timeout=timeout)
    import select
    while True:
        r, _, _ = select.select([s.fd], [], [], 0.5)
        if not r:
            break
        try:
            data = os.read(s.fd, 4096)
        except OSError:
            break
        if not data:
            break
        s.buf += data
    return rc


def pty_env():
    return dict(os.environ, HOME=TMP, INPUTRC=os.devnull, TERM="xterm", DTSIM_HISTORY=os.path.join(TMP, "hist"))


def case_ctrl_c_run():
    out = os.path.join(TMP, "interrupted_z.npy")
    s = Session([DTSIM, "run", SLOW, "--arg", SLOW_TRIPS, "--out", "z=" + out], SRC, pty_env())
    s.read_until(b"instances/s", timeout=60)  # the progress line (stderr is the terminal)
    s.send("\x03")
    rc = finish(s)
    transcript = s.buf.decode("utf-8", "replace")
    check(rc == 130, f"exit {rc} after Ctrl-C, expected 130", transcript)
    check(re.search(r"interrupted: kernel 'slow' (before pid \[\d+\]|in pid \[\d+\], in the loop over '\w+' \(\w+ = \d+\) at \S+slow\.tile:\d+:\d+): \d+ of 4096 instances done; "
                    r"no output file written", transcript) is not None, "no 'interrupted' line", transcript)
    check(re.search(r"slow: \d+/4096 instances \(\d+%\), \d+\.\d s, [\d.]+ instances/s", transcript) is not None,
          "no progress line", transcript)
    check(not os.path.exists(out), "an output file was written after Ctrl-C", transcript)
    check("z: f32" not in transcript, "a summary was printed after Ctrl-C", transcript)


def case_ctrl_c_debugger():
    s = Session([DTSIM, "debug", SLOW, "--arg", SLOW_TRIPS], SRC, pty_env())
    try:
        debugger_session(s)
    except (TimeoutError, EOFError) as e:
        raise Fail(str(e), s.buf.decode("utf-8", "replace"))


def debugger_session(s):
    s.read_until(b"(dtsim) ")
    s.send("continue\r")
    time.sleep(1.0)
    s.send("\x03")
    got = s.read_until(b"(dtsim) ", timeout=60)
    check(b"Interrupted (Ctrl-C)" in got, "Ctrl-C did not return to the prompt", s.buf.decode("utf-8", "replace"))
    s.send("abc")  # Ctrl-C at the prompt drops the line being typed
    time.sleep(0.3)
    s.send("\x03")
    time.sleep(0.3)
    s.send("where\r")
    got = s.read_until(b"for i in range(0, trips) {)", timeout=30)
    check(b"kernel slow (1 of 1)" in got and b"unknown command" not in got, "Ctrl-C at the prompt kept the line",
          s.buf.decode("utf-8", "replace"))
    s.send("print 12345 + 1\r")
    s.read_until(b"12346", timeout=30)
    s.send("quit\r")
    rc = s.wait(timeout=30)
    check(rc == 0, f"quit after Ctrl-C exited {rc}", s.buf.decode("utf-8", "replace"))


def case_ctrl_c_difftest():
    r, _ = dtsim("difftest", "--help")
    # Without the CUDA backend only the Triton oracle is there; its cases run on the interpreter too.
    oracle = ["--oracle=triton"] if "built without the CUDA backend" in r.stdout else []
    s = Session([DTSIM, "difftest", SLOW, "--trials", "50", "--arg", SLOW_TRIPS, *oracle], SRC, pty_env())
    s.read_until(b"cases/s", timeout=60)
    s.send("\x03")
    rc = finish(s)
    transcript = s.buf.decode("utf-8", "replace")
    check(rc == 130, f"exit {rc} after Ctrl-C, expected 130", transcript)
    check(re.search(r"interrupted: difftest \S*slow\.tile at case \d+/50", transcript) is not None,
          "no 'interrupted' line", transcript)


def case_viz_bench_limits():
    """viz and bench --backend=interp take --max-steps and --timeout as run does; neither writes a
    picture or prints timings for a stopped run."""
    pic = os.path.join(TMP, "runaway.svg")
    r, _ = dtsim("viz", RUNAWAY, "--max-steps", "1000", "-o", pic)
    check(r.returncode == 1 and re.search(r"runaway\.tile:8:3: error: program instance exceeded its budget of 1000 "
                                          r"statements \(--max-steps\)", r.stderr) is not None,
          "viz --max-steps did not stop the runaway loop at its line", text(r))
    check(not os.path.exists(pic), "viz wrote a picture of a stopped run", text(r))
    r, _ = dtsim("bench", RUNAWAY, "--backend=interp", "--max-steps", "1000")
    check(r.returncode == 1 and "budget of 1000 statements (--max-steps)" in r.stderr and "median" not in r.stdout,
          "bench --backend=interp --max-steps did not stop the runaway loop", text(r))
    r, _ = dtsim("bench", RUNAWAY, "--backend=interp", "--timeout", "0.5", timeout=60)
    check(r.returncode == 1 and "--timeout" in r.stderr and "median" not in r.stdout,
          "bench --backend=interp --timeout did not stop the runaway loop", text(r))
    r, _ = dtsim("viz", "examples/copy.tile", "--max-steps", "10", "-o", pic)
    check(r.returncode == 0 and os.path.exists(pic), "viz of copy.tile failed under --max-steps 10", text(r))


def case_ctrl_c_viz_bench():
    """Ctrl-C through a terminal stops viz (no picture) and bench --backend=interp (no timings), exit 130."""
    pic = os.path.join(TMP, "slow.svg")
    for args, what in (([DTSIM, "viz", SLOW, "--arg", SLOW_TRIPS, "-o", pic], "viz"),
                       ([DTSIM, "bench", SLOW, "--arg", SLOW_TRIPS, "--backend=interp"], "bench")):
        s = Session(args, SRC, pty_env())
        if what == "viz":
            s.read_until(b"instances/s", timeout=60)  # viz's progress line
        else:
            s.read_until(b"interpreter run", timeout=60)  # bench's own progress line
            time.sleep(0.5)
        s.send("\x03")
        rc = finish(s)
        transcript = s.buf.decode("utf-8", "replace")
        check(rc == 130, f"{what}: exit {rc} after Ctrl-C, expected 130", transcript)
        check(re.search(r"interrupted: kernel 'slow' (before pid \[\d+\]|in pid \[\d+\], in the loop over '\w+' \(\w+ = \d+\) at \S+slow\.tile:\d+:\d+): \d+ of 4096 instances done",
                        transcript) is not None, f"{what}: no 'interrupted' line", transcript)
        check("median" not in transcript, f"{what}: timings printed after Ctrl-C", transcript)
    check(not os.path.exists(pic), "viz wrote a picture after Ctrl-C")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}


def main():
    global DTSIM, SRC, TMP
    DTSIM, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sys.argv[3:] or list(CASES)
    failed = []
    with tempfile.TemporaryDirectory(prefix="dtsim-longrun-") as d:
        TMP = d
        for name in names:
            try:
                CASES[name]()
                print(f"ok   {name}")
            except (Fail, TimeoutError, EOFError) as e:
                failed.append(name)
                print(f"FAIL {name}: {e}")
    print(f"{len(names) - len(failed)}/{len(names)} passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
