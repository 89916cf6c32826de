#!/usr/bin/env python3
"""Runs every command that README.md and docs/*.md show with its output, and compares what the
program prints now with the text, so that the docs cannot go stale.

What counts as a documented command with output:
  * a ```sh block followed directly (only blank lines between) by a plain ``` block: the sh block
    must hold one command (lines ending in '\\' continue it), the plain block is its output;
  * inside a plain ``` block, a line starting with '$ ': the command; the lines after it, up to the
    next '$ ' line or the end of the block, are its output. Lines of the output that start with
    '(dtsim) ' are REPL prompts with the command typed there: they become the command's standard
    input (the REPL echoes commands it reads from a pipe, so the transcript is what it prints).

How a command runs: with bash, in a scratch folder that links examples/, tests/, docs/, bench/ and
python/ of the source tree and holds build/dtsim (the binary under test) and build/python; `dtsim`
at the start of a command is build/dtsim and `python3` the Python running this script; `< commands.txt` (the documented file)
is the transcript's input. Standard output and standard error go to one pipe, as a terminal shows them.

How output compares (the rule; docs/architecture.md, "Documentation tests", says it for readers):
  * line by line, trailing blanks and trailing empty lines ignored; the absolute path of the tree
    (the scratch folder, the source folder) in what a command prints reads '...';
  * a line that is just '...' (indented or not) in the docs stands for any number of lines (zero
    included): the docs' way of leaving lines out;
  * commands listed as `loose` in tests/docs/unchecked.txt (timings) compare with every number
    replaced by a placeholder: the words, units, names and line structure must still match.
Commands listed as `cuda` there are checked only when dtsim has the CUDA backend (--no-cuda otherwise).
Commands listed as `skip` in tests/docs/unchecked.txt (they need a GPU, torch, Triton, a terminal
or files the docs only name) are not run; every entry needs a reason, and an entry that matches no
documented command is an error (so the list cannot rot either).

usage: check_docs.py DTSIM SOURCE_DIR [--list] [--only SUBSTRING] [--update] [--no-python] [--no-cuda]
(--no-python: commands that run python3 are not checked, e.g. in the sanitizer build, whose _dtsim
module cannot be loaded into an uninstrumented Python. --no-cuda: nor those listed as `cuda`, which
need dtsim built with the CUDA backend, a GPU not needed.)
(--update rewrites the shown output of each failing command with what it prints now, except where
the docs leave lines out with '...' or the command is compared loosely: those are for a person.)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def blocks(text):
    """The fenced blocks of a markdown text: (first line number, info string, lines)."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, info, body = i + 1, m.group(1), []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        out.append((start, info, body, i))  # i: the closing fence's index
        i += 1
    return out, lines


def join_continued(lines):
    """Commands of a sh block: lines ending in a backslash continue; comments after '#' kept out."""
    cmds, cur = [], ""
    for l in lines:
        if not l.strip() and not cur:
            continue
        if l.rstrip().endswith("\\"):
            cur += l.rstrip()[:-1] + " "
            continue
        cur += l
        cmds.append(strip_comment(cur).strip())
        cur = ""
    if cur:
        cmds.append(strip_comment(cur).strip())
    return [c for c in cmds if c]


def strip_comment(cmd):
    """The command without a trailing '# comment' (a '#' outside quotes, after a blank)."""
    q = None
    for k, ch in enumerate(cmd):
        if q:
            if ch == q:
                q = None
        elif ch in "'\"":
            q = ch
        elif ch == "#" and k > 0 and cmd[k - 1] in " \t":
            return cmd[:k]
    return cmd


def documented(src):
    """[(doc file, line, command, expected output lines, index of the first output line in the file)]."""
    files = [os.path.join(src, "README.md")] + sorted(
        os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    out = []
    for path in files:
        rel = os.path.relpath(path, src)
        bl, lines = blocks(open(path, encoding="utf-8").read())
        for k, (start, info, body, end) in enumerate(bl):
            if info == "sh" and k + 1 < len(bl):
                nstart, ninfo, nbody, _ = bl[k + 1]
                between = lines[end + 1:nstart - 1]
                if ninfo == "" and not any(l.strip() for l in between) and not any(l.startswith("$ ") for l in nbody):
                    cmds = join_continued(body)
                    if len(cmds) != 1:
                        out.append((rel, start, None, ["a sh block followed by its output must hold one command, has %d" % len(cmds)], 0))
                        continue
                    out.append((rel, start, cmds[0], nbody, nstart))
            elif info == "":
                cur = None
                for j, l in enumerate(body):
                    if l.startswith("$ "):
                        if cur:
                            out.append(cur)
                        cur = (rel, start + 1 + j, strip_comment(l[2:]).strip(), [], start + j + 1)
                    elif cur:
                        cur[3].append(l)
                if cur:
                    out.append(cur)
    return out


def read_list(path):
    """tests/docs/unchecked.txt: 'skip|loose COMMAND-SUBSTRING -- reason' per line."""
    entries = []
    for n, l in enumerate(open(path, encoding="utf-8"), 1):
        l = l.rstrip("\n")
        if not l.strip() or l.startswith("#"):
            continue
        m = re.match(r"^(skip|loose|cuda)\s+(.+?)\s+--\s+(\S.*)$", l)
        if not m:
            raise SystemExit("%s:%d: expected 'skip|loose|cuda DOC: COMMAND -- reason', got %r" % (path, n, l))
        entries.append({"kind": m.group(1), "match": m.group(2), "reason": m.group(3), "line": n, "used": False})
    return entries


def entry_for(entries, doc, cmd):
    for e in entries:
        where, _, what = e["match"].partition(": ")
        if what and where == doc and what in cmd:
            e["used"] = True
            return e
    return None


def normalize(lines, loose):
    out = [l.rstrip() for l in lines]
    while out and not out[-1]:
        out.pop()
    if loose:
        out = [NUMBER.sub("N", l) for l in out]
    return out


def matches(expected, actual):
    """expected may hold '...' lines, each standing for any number of lines."""
    memo = {}

    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            r = j == len(actual)
        elif expected[i].strip() == "...":
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and expected[i] == actual[j] and go(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    sys.setrecursionlimit(100000)
    return go(0, 0)


def scratch(dtsim, src):
    d = tempfile.mkdtemp(prefix="dtsim-docs-")
    for name in ("examples", "tests", "docs", "bench", "python", "scripts"):
        os.symlink(os.path.join(src, name), os.path.join(d, name))
    os.mkdir(os.path.join(d, "build"))
    os.symlink(os.path.abspath(dtsim), os.path.join(d, "build", "dtsim"))
    pydir = os.path.join(os.path.dirname(os.path.abspath(dtsim)), "python")
    if os.path.isdir(pydir):
        os.symlink(pydir, os.path.join(d, "build", "python"))
    # `python3` in a command is the Python running this test (the one the package was built for).
    os.mkdir(os.path.join(d, "bin"))
    os.symlink(sys.executable, os.path.join(d, "bin", "python3"))
    return d


def run(cmd, stdin, cwd):
    cmd = re.sub(r"\s*<\s*commands\.txt\b", "", cmd)
    cmd = re.sub(r"(^|[|;&]\s*)dtsim\b", r"\1./build/dtsim", cmd)
    env = dict(os.environ)
    env.pop("DTSIM_HISTORY", None)
    for k in list(env):
        if k.startswith("DTSIM_") and k not in ("DTSIM_COMPAT_VENV",):
            del env[k]
    env["PATH"] = os.path.join(cwd, "bin") + os.pathsep + os.path.join(cwd, "build") + os.pathsep + env.get("PATH", "")
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, input=stdin.encode(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=300)
    return p.stdout.decode("utf-8", "replace").replace("\r\n", "\n").split("\n")


def main():
    args = sys.argv[1:]
    listing = "--list" in args
    update = "--update" in args
    no_python = "--no-python" in args
    no_cuda = "--no-cuda" in args
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1]
        del args[args.index("--only"):args.index("--only") + 2]
    args = [a for a in args if a not in ("--list", "--update", "--no-python", "--no-cuda")]
    edits = {}  # doc -> [(first line index, count, new lines)]
    dtsim, src = args[0], os.path.abspath(args[1])
    entries = read_list(os.path.join(src, "tests", "docs", "unchecked.txt"))
    docs = documented(src)
    cwd = scratch(dtsim, src)
    failed, checked, skipped = [], 0, 0
    try:
        for doc, line, cmd, expected, at in docs:
            where = "%s:%d" % (doc, line)
            if cmd is None:
                failed.append("%s: %s" % (where, expected[0]))
                continue
            e = entry_for(entries, doc, cmd)
            if only and only not in cmd:
                continue
            if listing:
                print("%s %s: %s" % (e["kind"] if e else "check", where, cmd))
                continue
            if e and e["kind"] == "skip":
                skipped += 1
                continue
            if no_cuda and e and e["kind"] == "cuda":
                print("not checked (--no-cuda): %s: %s" % (where, cmd))
                skipped += 1
                continue
            if no_python and re.search(r"\bpython3\b", cmd):
                print("not checked (--no-python): %s: %s" % (where, cmd))
                skipped += 1
                continue
            # '(dtsim)' alone (trailing blanks are not kept) is an empty line: the REPL repeats the last command.
            stdin = "".join(l.rstrip()[len("(dtsim) "):] + "\n" for l in expected if l.rstrip() == "(dtsim)" or l.startswith("(dtsim) "))
            # Absolute paths of the tree print as '...' (the docs' way of writing "where your checkout is").
            actual = [l.replace(cwd, "...").replace(src, "...") for l in run(cmd, stdin, cwd)]
            loose = bool(e and e["kind"] == "loose")
            want, got = normalize(expected, loose), normalize(actual, loose)
            checked += 1
            if not matches(want, got):
                import difflib
                diff = "\n".join(difflib.unified_diff(want, got, "documented", "printed now", lineterm=""))
                failed.append("%s: `%s` prints something else:\n%s" % (where, cmd, diff))
                if update and not loose and not any(l.strip() == "..." for l in expected):
                    n = len(expected)
                    while n and not expected[n - 1].strip():
                        n -= 1
                    edits.setdefault(doc, []).append((at, n, normalize(actual, False)))
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    if listing:
        return 0
    for doc, es in edits.items():
        path = os.path.join(src, doc)
        lines = open(path, encoding="utf-8").read().split("\n")
        for at, n, new in sorted(es, reverse=True):
            lines[at:at + n] = new
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print("updated %s (%d shown output(s))" % (doc, len(es)))
    if not only:
        for e in entries:
            if not e["used"]:
                failed.append("tests/docs/unchecked.txt:%d: '%s' matches no documented command" % (e["line"], e["match"]))
    for f in failed:
        print("FAIL " + f + "\n")
    print("%d documented command(s) checked, %d not checked (tests/docs/unchecked.txt), %d failure(s)" %
          (checked, skipped, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
