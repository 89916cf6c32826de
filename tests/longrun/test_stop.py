#!/usr/bin/env python3
"""Stopping a run in every phase and memory independent of the grid: a kernel of 4x10^8 instances
starts at once and stops on --timeout with a small peak RSS in every instance order and on the
thread pool; SIGINT and SIGTERM stop a runaway loop of a single instance (inside the loop, naming
the kernel, pid, loop and line), a big input fill, the read of a big --in file and an output
write, each with no output and no temporary file left. Bounds are generous (a loaded 2-core machine, the sanitizer build): the tests
assert behaviour, not speed. usage: test_stop.py DTSIM SOURCE_DIR CASE..."""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

DTSIM = ""
SRC = ""
TMP = ""
HERE = os.path.dirname(os.path.abspath(__file__))


class Fail(Exception):
    pass


def check(cond, msg, out=""):
    if not cond:
        raise Fail(msg + ("\n--- output ---\n" + out if out else ""))


class Result:
    def __init__(self, rc, out, err, secs, maxrss_kb, stop_secs=None):
        self.returncode, self.stdout, self.stderr, self.secs = rc, out, err, secs
        self.maxrss_kb, self.stop_secs = maxrss_kb, stop_secs

    def text(self):
        return f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


def run(args, sig=None, after=1.0, timeout=120):
    """Runs dtsim; with `sig`, sends it `after` seconds after the start. Returns exit status (as the
    shell reports it: 128 + signal for a process a signal ended), output, seconds, the child's own
    peak RSS (os.wait4, so no other process counts) and the seconds from the signal to the end."""
    out_f = tempfile.TemporaryFile(dir=TMP)
    err_f = tempfile.TemporaryFile(dir=TMP)
    start = time.time()
    p = subprocess.Popen([DTSIM, *args], stdout=out_f, stderr=err_f, cwd=SRC)
    sent = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        now = time.time()
        if sig is not None and sent is None and now - start >= after:
            os.kill(p.pid, sig)
            sent = now
        if now - start > timeout:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            raise Fail(f"dtsim {' '.join(args)} did not end within {timeout} s")
        time.sleep(0.01)
    end = time.time()
    p.returncode = 0  # reaped here
    rc = os.waitstatus_to_exitcode(status)
    if rc < 0:
        rc = 128 - rc
    out_f.seek(0)
    err_f.seek(0)
    return Result(rc, out_f.read().decode("utf-8", "replace"), err_f.read().decode("utf-8", "replace"), end - start,
                  ru.ru_maxrss, None if sent is None else end - sent)


def run_signalled(args, sig, after=1.0, **kw):
    """run() with a signal; when the signal came before dtsim installed its handler (a slow start),
    the process died of it: try again later."""
    for extra in (0, 2, 6):
        r = run(args, sig, after + extra, **kw)
        if r.returncode != 128 + sig or r.stderr.strip():
            return r
    return r


def no_temp_files(d, what, r):
    left = glob.glob(os.path.join(d, "*.tmp*")) + glob.glob(os.path.join(d, ".*tmp*"))
    check(not left, f"{what}: temporary files left behind: {left}", r.text())


HUGE = os.path.join(HERE, "huge_grid.tile")


def case_huge_grid_memory():
    # 4x10^8 instances: a list of their ids alone would be 9.6 GB (24 bytes each).
    for extra in ([], ["--order=reverse"], ["--order=shuffle:7"], ["--threads", "2"], ["--threads", "2", "--order=shuffle:3"]):
        r = run(["run", HUGE, "--timeout", "2", *extra])
        what = "huge grid " + " ".join(extra)
        check(r.returncode == 1, f"{what}: expected exit 1 (stopped by --timeout)", r.text())
        check(re.search(r"huge_grid\.tile:\d+:\d+: error: run stopped after 2 s \(--timeout\)", r.stderr) is not None,
              f"{what}: no --timeout message", r.text())
        m = re.search(r"sanitizer: all: 1 finding \((\d+) instances\)", r.stdout)
        check(m is not None and int(m.group(1)) > 0, f"{what}: no instance ran before the timeout", r.text())
        check(r.secs < 60, f"{what}: --timeout 2 took {r.secs:.1f} s", r.text())
        check(r.maxrss_kb < 1024 * 1024, f"{what}: peak RSS {r.maxrss_kb} KB (memory grows with the grid)", r.text())
    # The largest grid allowed (2^31 - 1 instances) runs too, and one more instance is refused.
    r = run(["run", HUGE, "--arg", "n=2147483647", "--timeout", "1", "--order=shuffle:1"])
    check(r.returncode == 1 and "(--timeout)" in r.stderr and r.maxrss_kb < 1024 * 1024,
          f"a grid of 2^31 - 1 instances did not run in little memory (peak RSS {r.maxrss_kb} KB)", r.text())


ONE = os.path.join(HERE, "runaway_one.tile")
LOOP_AT = r"in pid \[0\], in the loop over 'i' \(i = \d+\) at [^\n]*runaway_one\.tile:5:3: 0 of 1 instances done; no output file written"


def case_signal_inside_loop():
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        out = os.path.join(TMP, f"one_{code}.npy")
        for threads in ("1", "2"):
            r = run_signalled(["run", ONE, "--out", "z=" + out, "--threads", threads], sig)
            what = f"{signal.Signals(sig).name} in a one-instance runaway loop (--threads {threads})"
            check(r.returncode == code, f"{what}: exit {r.returncode}, expected {code}", r.text())
            check(re.search(r"interrupted: kernel 'one' " + LOOP_AT, r.stderr) is not None,
                  f"{what}: the message does not say where the loop was stopped", r.text())
            check(r.stop_secs is not None and r.stop_secs < 10, f"{what}: took {r.stop_secs} s to stop", r.text())
            check(not os.path.exists(out), f"{what}: an output file was written", r.text())
            no_temp_files(TMP, what, r)
    # A runaway loop in every instance of a multi-instance launch, on two threads.
    r = run_signalled(["run", os.path.join(HERE, "runaway.tile"), "--threads", "2"], signal.SIGINT)
    check(r.returncode == 130 and re.search(r"interrupted: kernel 'runaway' in pid \[\d\], in the loop over 'i' "
                                            r"\(i = \d+\) at [^\n]*runaway\.tile:8:3", r.stderr) is not None,
          "SIGINT in runaway.tile on two threads", r.text())


ADD = os.path.join("examples", "add.tile")


def case_stop_while_filling():
    # 4x10^8-element inputs take seconds to fill with random data: SIGINT, SIGTERM and --timeout
    # stop the fill itself, not the run after it.
    big = ["--arg", "n=400000000"]
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        out = os.path.join(TMP, "fill.npy")
        r = run_signalled(["run", ADD, *big, "--out", "z=" + out], sig, after=0.8)
        what = f"{signal.Signals(sig).name} while filling"
        check(r.returncode == code, f"{what}: exit {r.returncode}, expected {code}", r.text())
        check(re.search(r"^interrupted: while filling buffer '[xy]' \(before the run\); no output file written$", r.stderr, re.M)
              is not None, f"{what}: no message naming the fill", r.text())
        check(r.stop_secs is not None and r.stop_secs < 10, f"{what}: took {r.stop_secs} s to stop", r.text())
        check(not os.path.exists(out), f"{what}: an output file was written", r.text())
        no_temp_files(TMP, what, r)
    r = run(["run", ADD, *big, "--timeout", "0.5"])
    check(r.returncode == 1 and re.search(r"^error: run stopped after 0\.5 s \(--timeout\) while filling buffer '[xy]' "
                                          r"\(before the run\); no output file written$", r.stderr, re.M) is not None,
          "--timeout did not stop the fill", r.text())
    check(r.secs < 30, f"--timeout 0.5 during the fill took {r.secs:.1f} s", r.text())


def sparse_npy(path, n):
    """A .npy file of n f32 zeros whose data is a hole (no disk space, read at memory speed)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.truncate(10 + len(header) + 4 * n)


def case_stop_while_reading():
    # A 2 GB --in file is read 8 MiB at a time: SIGINT and SIGTERM sent while it is being read, and
    # --timeout expiring during the read, stop it within 0.5 s (not after the whole file), with
    # exit 130/143 (1 for --timeout), a message naming the file, and no output or temporary file.
    # 2 GB (less on a machine with under 10 GB of memory: dtsim refuses buffers over half of it).
    with open("/proc/meminfo") as f:
        mem = int(next(l for l in f if l.startswith("MemTotal:")).split()[1]) * 1024
    n = min(500_000_000, int(mem * 0.4) // 8)
    big = os.path.join(TMP, "big_in.npy")
    sparse_npy(big, n)
    copy = os.path.join("examples", "copy.tile")
    out = os.path.join(TMP, "read_out.npy")
    args = ["run", copy, "--arg", "n=%d" % n, "--in", "x=" + big, "--out", "z=" + out]
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        what = f"{signal.Signals(sig).name} while reading a 2 GB --in file"
        r = run_reading(args, big, sig)
        check(r.returncode == code, f"{what}: exit {r.returncode}, expected {code}", r.text())
        check(re.search(r"^interrupted: while reading [^\n]*big_in\.npy; no output file written$", r.stderr, re.M) is not None,
              f"{what}: no message naming the file being read", r.text())
        check(r.stop_secs is not None and r.stop_secs < 0.5, f"{what}: took {r.stop_secs:.2f} s to stop (at most 0.5 s)", r.text())
        check(not os.path.exists(out), f"{what}: an output file was written", r.text())
        no_temp_files(TMP, what, r)
    r = run(args + ["--timeout", "0.3"])
    check(r.returncode == 1 and re.search(r"^error: run stopped after 0\.3 s \(--timeout\) while reading [^\n]*big_in\.npy; "
                                          r"no output file written$", r.stderr, re.M) is not None,
          "--timeout 0.3 did not stop the read of the --in file", r.text())
    check(r.secs < 0.3 + 0.5, f"--timeout 0.3 during the read: dtsim took {r.secs:.2f} s in all", r.text())
    check(not os.path.exists(out), "--timeout during the read: an output file was written", r.text())
    no_temp_files(TMP, "--timeout while reading", r)
    os.unlink(big)


def run_reading(args, path, sig):
    """Runs dtsim and sends `sig` once it has read 64 MiB of `path` (from /proc: the file is open and
    the process has read that much); returns as run() does."""
    out_f = tempfile.TemporaryFile(dir=TMP)
    err_f = tempfile.TemporaryFile(dir=TMP)
    start = time.time()
    p = subprocess.Popen([DTSIM, *args], stdout=out_f, stderr=err_f, cwd=SRC)
    sent = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if sent is None:
            try:
                fds = os.listdir(f"/proc/{p.pid}/fd")
                reading = any(os.readlink(f"/proc/{p.pid}/fd/{fd}") == path for fd in fds)
                with open(f"/proc/{p.pid}/io") as f:
                    rchar = int(next(l for l in f if l.startswith("rchar:")).split()[1])
            except (OSError, StopIteration):
                reading, rchar = False, 0
            if reading and rchar > 64 << 20:
                os.kill(p.pid, sig)
                sent = time.time()
        if time.time() - start > 120:
            p.kill()
            os.wait4(p.pid, 0)
            raise Fail(f"dtsim {' '.join(args)} did not end within 120 s")
        time.sleep(0.002)
    end = time.time()
    p.returncode = 0
    rc = os.waitstatus_to_exitcode(status)
    if rc < 0:
        rc = 128 - rc
    out_f.seek(0)
    err_f.seek(0)
    r = Result(rc, out_f.read().decode("utf-8", "replace"), err_f.read().decode("utf-8", "replace"), end - start,
               ru.ru_maxrss, None if sent is None else end - sent)
    check(sent is not None, "the read of the --in file ended before the signal could be sent", r.text())
    return r


def stalled_reader(fifo):
    """A process that opens `fifo` for reading and never reads: a writer fills the pipe and waits."""
    return subprocess.Popen([sys.executable, "-c", "import sys,time; f=open(sys.argv[1],'rb'); time.sleep(600)", fifo])


def wait_for_reader(fifo, reader):
    # The writer's check opens the FIFO non-blocking: it needs the reader to have opened it.
    for _ in range(500):
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            return
        except OSError:
            time.sleep(0.02)
    reader.kill()
    raise Fail("the FIFO reader did not start")


def case_stop_while_writing():
    # Two outputs: a regular file (written to its temporary file first) and a FIFO whose reader
    # never reads (the write waits on it). A signal or --timeout while waiting leaves neither the
    # file nor its temporary file: outputs are written all or none.
    two = os.path.join(HERE, "two_outputs.tile")
    for how in ("SIGINT", "SIGTERM", "timeout"):
        fifo = os.path.join(TMP, f"pipe_{how}")
        os.mkfifo(fifo)
        reader = stalled_reader(fifo)
        try:
            wait_for_reader(fifo, reader)
            used = os.path.join(TMP, "used.npy")
            args = ["run", two, "--out", "a=" + used, "--out", "b=" + fifo]
            if how == "timeout":
                r = run(args + ["--timeout", "2"])
                check(r.returncode == 1 and re.search(r"^error: run stopped after 2 s \(--timeout\) while writing [^\n]*used\.npy, "
                                                      r"[^\n]*pipe_timeout; no output file written$", r.stderr, re.M) is not None,
                      "--timeout did not stop a write that waits on a FIFO", r.text())
            else:
                sig = getattr(signal, how)
                r = run_signalled(args, sig, after=1.5)
                check(r.returncode == 128 + sig and re.search(r"^interrupted: while writing [^\n]*; no output file written$",
                                                             r.stderr, re.M) is not None,
                      f"{how} did not stop a write that waits on a FIFO", r.text())
                check(r.stop_secs is not None and r.stop_secs < 10, f"{how} while writing: took {r.stop_secs} s", r.text())
            check(not os.path.exists(used), f"{how} while writing: the other output was written (not all or none)", r.text())
            no_temp_files(TMP, how + " while writing", r)
        finally:
            reader.kill()
            reader.wait()
            os.unlink(fifo)


def case_outputs_never_replace():
    d = os.path.join(TMP, "outs")
    os.makedirs(d)
    z = lambda p: ["run", ADD, "--out", "z=" + p]
    # Character devices are written through, never replaced.
    r = run(z("/dev/null"))
    check(r.returncode == 0 and os.path.exists("/dev/null") and not os.path.isfile("/dev/null"), "--out /dev/null", r.text())
    r = run(z("/dev/full"))
    check(r.returncode == 2 and r.stderr.strip().endswith("/dev/full: error: cannot write file: No space left on device"),
          "--out /dev/full: expected 'No space left on device', exit 2", r.text())
    check(not glob.glob("/dev/full.tmp*"), "a temporary file beside /dev/full", r.text())
    # A symlink is followed: its target is replaced, the link stays a link; a dangling one is refused.
    target = os.path.join(d, "target.npy")
    open(target, "wb").close()
    link = os.path.join(d, "link.npy")
    os.symlink("target.npy", link)
    r = run(z(link))
    check(r.returncode == 0 and os.path.islink(link) and os.path.getsize(target) > 1000, "--out through a symlink", r.text())
    nul = os.path.join(d, "nul")
    os.symlink("/dev/null", nul)
    r = run(z(nul))
    check(r.returncode == 0 and os.path.islink(nul) and os.readlink(nul) == "/dev/null", "--out a symlink to /dev/null", r.text())
    dang = os.path.join(d, "dangling")
    os.symlink("nowhere.npy", dang)
    r = run(z(dang))
    check(r.returncode == 2 and f"{dang}: error: cannot write --out z: it is a symbolic link to 'nowhere.npy', which does not exist"
          in r.stderr and os.path.islink(dang) and not os.path.exists(os.path.join(d, "nowhere.npy")), "a dangling symlink", r.text())
    # A FIFO nobody reads is refused before the run (writing would wait forever).
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    r = run(z(fifo))
    check(r.returncode == 2 and "it is a FIFO that no process reads" in r.stderr, "a FIFO without a reader", r.text())
    check(os.path.exists(fifo) and not os.path.isfile(fifo), "the FIFO was replaced", r.text())
    # The same file twice (the same path, another spelling of it, a symlink to it) is refused before the run.
    scan = os.path.join("examples", "threshold_scan.tile")
    f = os.path.join(d, "F.npy")
    for other in (f, os.path.join(d, ".", "F.npy")):
        r = run(["run", scan, "--out", "used=" + f, "--out", "total=" + other])
        check(r.returncode == 2 and "cannot write --out total:" in r.stderr and "--out used" in r.stderr and not os.path.exists(f),
              f"--out used={f} --out total={other} accepted", r.text())
    r = run(["run", scan, "--out", "used=" + target, "--out", "total=" + link])
    check(r.returncode == 2 and "it is the same file as" in r.stderr, "an output and a symlink to it accepted", r.text())
    # Outputs are a set: when one cannot be written, no other is.
    used = os.path.join(d, "used.npy")
    r = run(["run", scan, "--out", "used=" + used, "--out", "total=/dev/full"])
    check(r.returncode == 2 and "No space left on device" in r.stderr and not os.path.exists(used),
          "a failed second output left the first written", r.text())
    no_temp_files(d, "failed output set", r)
    # emit -o follows the same rules.
    r = run(["emit", "--tile", ADD, "-o", "/dev/full"])
    check(r.returncode == 2 and "No space left on device" in r.stderr, "emit -o /dev/full", r.text())
    r = run(["emit", "--tile", ADD, "-o", nul])
    check(r.returncode == 0 and os.path.islink(nul), "emit -o through a symlink to /dev/null", r.text())
    r = run(["emit", "--tile", ADD, "-o", dang])
    check(r.returncode == 2 and "which does not exist" in r.stderr, "emit -o onto a dangling symlink", r.text())


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}


def main():
    global DTSIM, SRC, TMP
    DTSIM, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sys.argv[3:] or list(CASES)
    failed = []
    with tempfile.TemporaryDirectory(prefix="dtsim-stop-") as d:
        TMP = d
        for name in names:
            try:
                CASES[name]()
                print(f"ok   {name}")
            except Fail as e:
                failed.append(name)
                print(f"FAIL {name}: {e}")
    print(f"{len(names) - len(failed)}/{len(names)} passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
