#!/usr/bin/env python3
"""Drives `dtsim debug` through a pseudo-terminal so that the readline front end is used: tab
completion of a command and of a variable name, and history saved to $DTSIM_HISTORY and recalled
(Ctrl-P) in a second run; on a .py kernel, completion by context: after `tl.` the tl functions,
after `x.` the tensor attributes, after `info ` only info's subcommands, after `break ` FILE:LINE. Exits 0 when every check holds, 1 with the transcript otherwise."""
import argparse
import os
import pty
import select
import sys
import tempfile
import time

PROMPT = b"(dtsim) "


class Session:
    def __init__(self, argv, cwd, env):
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.pid, self.fd, self.buf = pid, fd, b""

    def read_until(self, token, timeout=30.0):
        """Reads until `token` appears after the current position; returns the text read."""
        start = len(self.buf)
        end = time.time() + timeout
        while token not in self.buf[start:]:
            left = end - time.time()
            if left <= 0:
                raise TimeoutError("waiting for %r" % token)
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                data = b""
            if not data:
                raise EOFError("dtsim ended while waiting for %r" % token)
            self.buf += data
        return self.buf[start:]

    def send(self, text):
        os.write(self.fd, text.encode())

    def wait(self, timeout=30.0):
        end = time.time() + timeout
        while time.time() < end:
            try:
                r, _, _ = select.select([self.fd], [], [], 0.1)
                if r:
                    data = os.read(self.fd, 4096)
                    self.buf += data
            except OSError:
                pass
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, 9)
        raise TimeoutError("dtsim did not exit")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtsim", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dtsim_pty_")
    hist = os.path.join(tmp, "history")
    env = dict(os.environ, DTSIM_HISTORY=hist, HOME=tmp, INPUTRC=os.devnull, TERM="xterm")
    argv = [os.path.abspath(a.dtsim), "debug", "examples/copy.tile"]
    failures = []

    def check(cond, what, s):
        if not cond:
            failures.append(what + "\n--- transcript ---\n" + s.buf.decode("utf-8", "replace"))

    # Run 1: complete a command ("wher" -> "where") and a variable ("print mas" -> "print mask").
    s = Session(argv, a.root, env)
    s.read_until(PROMPT)
    s.send("wher\t")
    s.read_until(b"where")
    s.send("\r")
    out = s.read_until(PROMPT)
    check(b"kernel copy" in out, "'wher<TAB>' did not complete to 'where'", s)
    s.send("next 3\r")
    s.read_until(PROMPT)
    s.send("print mas\t")
    s.read_until(b"mask")
    s.send("\r")
    out = s.read_until(PROMPT)
    check(b"mask: i1[" in out, "'print mas<TAB>' did not complete to 'print mask'", s)
    s.send("quit\r")
    s.wait()
    saved = open(hist).read().splitlines() if os.path.exists(hist) else []
    check(saved[-4:] == ["where", "next 3", "print mask", "quit"], "history file holds %r" % saved, s)

    # Run 2: the history of run 1 is there, newest first: quit, print mask, next 3.
    s = Session(argv, a.root, env)
    s.read_until(PROMPT)
    s.send("\x10\x10\x10")
    s.read_until(b"next 3")
    s.send("\r")
    s.read_until(PROMPT)
    s.send("\x10\x10\x10")  # newest first: "next 3" (just run), "quit", then "print mask" from run 1
    s.read_until(b"print mask")
    s.send("\r")
    out = s.read_until(PROMPT)
    check(b"mask: i1[" in out, "Ctrl-P did not recall 'print mask' from the previous run", s)
    s.send("quit\r")
    s.wait()

    # Run 3: a .py kernel (Triton expressions), stopped at line 15 of the softmax (x assigned).
    argv_py = [os.path.abspath(a.dtsim), "debug", "examples/triton/softmax.py", "--buf", "x_ptr=f32[4,16]", "--buf",
               "y_ptr=f32[4,16]", "--arg", "x_row_stride=16", "--arg", "y_row_stride=16", "--arg", "n_cols=12", "--arg",
               "BLOCK=16", "--grid", "4"]
    s = Session(argv_py, a.root, env)
    s.read_until(PROMPT)
    s.send("next 4\r")
    s.read_until(PROMPT)
    s.send("print tl.max\t\t")  # several candidates: listed
    out = s.read_until(b"tl.maximum")
    check(b"tl.max_contiguous" in out and b"tl.where" not in out, "'print tl.max<TAB><TAB>' did not list the tl.max* names", s)
    s.send("i\t")  # tl.maxi -> tl.maximum (readline echoes what it adds)
    s.read_until(b"mum")
    s.send("(x, 0)[:2]\r")
    out = s.read_until(PROMPT)
    check(b"tl.maximum(x, 0)[:2]: f32[2] = " in out, "'print tl.maxi<TAB>' did not complete to tl.maximum", s)
    s.send("print x.sh\t")
    s.read_until(b"ape")
    s.send("\r")
    out = s.read_until(PROMPT)
    check(b"x.shape = (16,)" in out, "'print x.sh<TAB>' did not complete to x.shape", s)
    s.send("info \t\t")
    out = s.read_until(b"pids")
    check(b"locals" in out and b"continue" not in out, "'info <TAB><TAB>' did not list info's subcommands only", s)
    s.send("lo\t")
    s.read_until(b"cals")
    s.send("\r")
    out = s.read_until(PROMPT)
    check(b"row: i32 = 0" in out, "'info lo<TAB>' did not complete to 'info locals'", s)
    s.send("break exa\t")
    s.read_until(b"softmax.py:")  # one file: completed, no space after the colon
    s.send("17\r")
    out = s.read_until(PROMPT)
    check(b"Breakpoint 1 at examples/triton/softmax.py:17" in out, "'break exa<TAB>' did not complete to the file", s)
    s.send("quit\r")
    s.wait()

    if failures:
        print("\n\n".join(failures))
        return 1
    print("ok: completion of a command and a variable, history across runs, completion by context")
    return 0


if __name__ == "__main__":
    sys.exit(main())
