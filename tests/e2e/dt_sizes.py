#!/usr/bin/env python3
"""Runs one .dt example at sizes given at run time, each time against the f64 reference (--check):
  * N random size sets (--sets N, default 5) given only through `--arg <dim>_SIZE=N` (tied dims get one size),
  * 1 random size set given only through the shapes of `--in` arrays (written here, no numpy needed),
    checking that every output has the shape those sizes call for.
Sizes are mostly odd, so that no block or tile divides them. The seed is fixed (DTSIM_SIZES_SEED
changes it); a failure prints the command that reproduces it.
usage: dt_sizes.py [--sets N] DTSIM FILE.dt"""
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from npyfile import write_npy  # noqa: E402

MAX_SIZE = 160
LARGE_SIZE = 1400


def describe(dtsim, path):
    """Dims, tied dims, In tensors and Funcs of the program, from `dtsim emit --ast`."""
    r = subprocess.run([dtsim, "emit", "--ast", path], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("FAIL: emit --ast: " + r.stderr)
    dims, ties, tensors = [], [], {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+(Var|RVar) (\w+) = ", line)
        if m:
            dims.append(m.group(2))
        m = re.match(r"\s+Tie (\w+) = (\w+) ", line)
        if m:
            ties.append((m.group(1), m.group(2)))
        m = re.match(r"\s+(In|Func) (\w+): (\w+) \[([\w, ]*)\]", line)
        if m:
            tensors[m.group(2)] = (m.group(1), m.group(3), [d.strip() for d in m.group(4).split(",")])
    root = {d: d for d in dims}

    def find(d):
        while root[d] != d:
            d = root[d]
        return d

    for a, b in ties:
        root[find(a)] = find(b)
    return dims, find, tensors


def random_sizes(rng, dims, find, large):
    """One size per class of tied dims: mostly odd sizes below MAX_SIZE, a few tiny ones, and with
    `large` one untied dim between MAX_SIZE and LARGE_SIZE (past the examples' 512- and 1024-wide tiles)."""
    classes = sorted({find(d) for d in dims})
    per_class = {}
    for c in classes:
        per_class[c] = rng.choice([1, 2, 3]) if rng.random() < 0.15 else rng.randrange(1, MAX_SIZE, 2)
    singles = [c for c in classes if sum(find(d) == c for d in dims) == 1]  # a large tied class would square the work
    if large and singles:
        per_class[rng.choice(singles)] = rng.randrange(MAX_SIZE + 1, LARGE_SIZE, 2)
    return {d: per_class[find(d)] for d in dims}


def run(cmd, problems, sizes, check_shapes=None):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    verdicts = re.findall(r"max rel err = \S+\s+(PASS|FAIL)", r.stdout)
    bad = r.returncode != 0 or not verdicts or "FAIL" in verdicts
    if not bad and check_shapes:
        for name, shape in check_shapes.items():
            want = "%s: %s[%s]" % (name, shape[0], ", ".join(str(n) for n in shape[1]))
            if want not in r.stdout:
                bad = True
                problems.append("expected the summary line '%s'" % want)
    if bad:
        problems.append("sizes %s: exit %d, verdicts %s\n  reproduce: %s\n%s%s" %
                        (sizes, r.returncode, verdicts, " ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))


def main():
    args = sys.argv[1:]
    sets = 5
    if args[:1] == ["--sets"]:
        sets = int(args[1])
        args = args[2:]
    if len(args) != 2 or sets < 1:
        sys.exit("usage: dt_sizes.py [--sets N] DTSIM FILE.dt  (N >= 1)")
    dtsim, path = args
    name = os.path.basename(path)
    seed = int(os.environ.get("DTSIM_SIZES_SEED", "12"))
    rng = random.Random("%s:%d" % (name, seed))
    dims, find, tensors = describe(dtsim, path)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    problems = []
    for i in range(sets):
        sizes = random_sizes(rng, dims, find, large=i % 2 == 0)
        cmd = [dtsim, "run", path, "--check"] + [a for d in dims for a in ("--arg", "%s_SIZE=%d" % (d, sizes[d]))]
        run(cmd, problems, sizes)
    sizes = random_sizes(rng, dims, find, large=True)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [dtsim, "run", path, "--check"]
        fixed = set()
        for t, (kind, dtype, tdims) in tensors.items():
            if kind != "In":
                continue
            f = os.path.join(tmp, t + ".npy")
            write_npy(f, [sizes[d] for d in tdims], dtype, seed=rng.randrange(1 << 30))
            cmd += ["--in", "%s=%s" % (t, f)]
            fixed.update(find(d) for d in tdims)
        cmd += [a for d in dims if find(d) not in fixed for a in ("--arg", "%s_SIZE=%d" % (d, sizes[d]))]
        outputs = {t: (dtype, [sizes[d] for d in tdims]) for t, (kind, dtype, tdims) in tensors.items()
                   if kind == "Func" and re.search(r"(?<!\w)%s\.compile" % re.escape(t), source)}
        run(cmd, problems, sizes, outputs)
    if problems:
        print("FAIL: %s\n" % name + "\n".join(problems))
        sys.exit(1)
    print("ok: %s at %d size%s from --arg and 1 from --in shapes" % (name, sets, "" if sets == 1 else "s"))


if __name__ == "__main__":
    main()
