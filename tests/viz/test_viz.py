#!/usr/bin/env python3
"""Tests of `dtsim viz`: well-formed SVG/HTML (parsed with xml.etree), golden pictures, one picture
per planted bug in examples/bugs/, instance footprints, size bounds and usage errors.
usage: test_viz.py DTSIM SOURCE_DIR CASE   (DTSIM_UPDATE_GOLDEN=1 rewrites the golden files)"""
import glob
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DTSIM = SRC = TMP = ""
NS = "{http://www.w3.org/2000/svg}"


class Fail(Exception):
    pass


def check(cond, msg, r=None):
    if not cond:
        if r is not None:
            msg += f"\n  exit {r.returncode}\n  stdout: {r.stdout[-1500:]}\n  stderr: {r.stderr[-1500:]}"
        raise Fail(msg)


def dtsim(*args):
    r = subprocess.run([DTSIM, *args], capture_output=True, text=True, timeout=300, cwd=SRC)
    check(r.returncode in (0, 1, 2), f"dtsim {' '.join(args)} crashed or hit an internal error", r)
    return r


def viz(*args, name="out.svg"):
    out = os.path.join(TMP, name)
    if os.path.exists(out):
        os.remove(out)
    r = dtsim("viz", *args, "-o", out)
    check(r.returncode == 0 and os.path.exists(out), f"dtsim viz {' '.join(args)} wrote no picture", r)
    with open(out) as f:
        text = f.read()
    root = parse(text, out)
    return text, root


def parse(text, what):
    try:
        if text.startswith("<!DOCTYPE html>"):
            return ET.fromstring(text[len("<!DOCTYPE html>"):])
        return ET.fromstring(text)
    except ET.ParseError as e:
        raise Fail(f"{what}: not well-formed XML: {e}")


def rects(root):
    return [e for e in root.iter() if e.tag in (NS + "rect", "rect")]


def texts(root):
    return ["".join(e.itertext()) for e in root.iter() if e.tag in (NS + "text", "text")]


def golden(name, text):
    path = os.path.join(SRC, "tests", "viz", "golden", name)
    if os.environ.get("DTSIM_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        want = f.read()
    if text != want:
        got = os.path.join(TMP, name)
        with open(got, "w") as f:
            f.write(text)
        raise Fail(f"{name}: differs from the golden file (got {got}; DTSIM_UPDATE_GOLDEN=1 to accept)")


# ---- cases ----
def case_well_formed():
    files = sorted(glob.glob(os.path.join(SRC, "examples", "*.tile")) + glob.glob(os.path.join(SRC, "examples", "bugs", "*.tile")))
    check(len(files) >= 8, "examples not found")
    for f in files:
        rel = os.path.relpath(f, SRC)
        text, root = viz(rel)
        check(root.tag == NS + "svg", f"{rel}: root is {root.tag}, not svg")
        check(len(rects(root)) > 3 and any(t.startswith("kernel ") for t in texts(root)), f"{rel}: no cells or no caption")
    text, root = viz("tests/viz/grid3.tile")
    labels = texts(root)
    check("buffer y f32[8, 8]: stored by, pid2 = 0" in labels and "buffer y f32[8, 8]: stored by, pid2 = 1" in labels,
          "3-D grid: not one panel per pid2")
    check("(1,1,1)" in labels and "8" in labels, "3-D grid: labels")
    for f in sorted(glob.glob(os.path.join(SRC, "examples", "*.dt"))):
        viz(os.path.relpath(f, SRC))
    text, root = viz("examples/relu_out.dt", "--arg", "x_SIZE=100")
    check(any(".block(" in t or ".map(" in t or ".tensorize(" in t for t in texts(root)), "relu_out.dt: no schedule text in the caption")


def case_golden_add():
    text, root = viz("examples/add.tile", "--arg", "n=40", "--arg", "BLOCK=8")
    labels = texts(root)
    for k in range(1, 6):
        check(str(k) in labels and f"({k - 1})" in labels, f"add: no label for instance {k - 1}")
    golden("add.svg", text)


def case_golden_grouped_matmul():
    text, root = viz("examples/grouped_matmul.tile")
    labels = texts(root)
    check("grid (7, 5) = 35 instances; run order: sequential (pid0 fastest); examples/grouped_matmul.tile" in labels,
          "grouped_matmul: caption")
    # swizzle2d(GROUP=3): instance (1,0), run second, stores block row 2, column 1.
    check("(1,0)" in labels and "35" in labels, "grouped_matmul: labels")
    golden("grouped_matmul.svg", text)
    # The slides' map(x:xi/2, y, xi): 2 x-blocks per group, y in between.
    text, root = viz("docs/viz/map_xi.dt")
    check(any(t == "c.map(x:xi/2, y, xi);" for t in texts(root)), "map_xi: schedule text missing")
    golden("map_xi.svg", text)


def case_bugs():
    # overlap: rows stored twice (equal values: warnings) hatched; the bottom rows never written.
    text, root = viz("examples/bugs/overlap.tile")
    check(sum(1 for r in rects(root) if r.get("fill") == "url(#conflict)") >= 6, "overlap: conflicts not hatched")
    check(any("stores of equal values by two instances (warnings)" in t for t in texts(root)), "overlap: no warning caption")
    check(any(r.get("fill") == "#eeeeee" and int(r.get("width")) > 100 for r in rects(root)), "overlap: unwritten rows not drawn")
    golden("bug_overlap.svg", text)
    # copy_nopid: every instance stores the same block (equal values: warnings, hatched).
    text, root = viz("examples/bugs/copy_nopid.tile")
    check(any(r.get("fill") == "url(#conflict)" for r in rects(root)), "copy_nopid: no conflict drawn")
    golden("bug_copy_nopid.svg", text)
    # copy_pid_n: lanes far past the end of z, one cell per instance beyond the edge.
    text, root = viz("examples/bugs/copy_pid_n.tile")
    past = [r for r in rects(root) if r.get("stroke-dasharray")]
    check(len(past) >= 15, f"copy_pid_n: {len(past)} cells past the edge, expected one per faulty instance")
    golden("bug_copy_pid_n.svg", text)
    # matmul_no_kmask: a and b read past their ends (drawn with --loads).
    text, root = viz("examples/bugs/matmul_no_kmask.tile", "--loads")
    check(any("buffer b f32[90, 70]: loaded" in t for t in texts(root)), "matmul_no_kmask: no panel for b")
    check(len([r for r in rects(root) if r.get("stroke-dasharray")]) > 10, "matmul_no_kmask: no cells past the edge")
    golden("bug_matmul_no_kmask.svg", text)
    # uninitialized reads outlined.
    text, root = viz("tests/viz/uninit.tile", "--loads")
    check(sum(1 for r in rects(root) if r.get("stroke") == "#ff7f0e") >= 48, "uninit: uninitialized reads not outlined")


def case_footprint():
    text, root = viz("examples/bugs/overlap.tile", "--pid", "1,1")
    fills = [r.get("fill") for r in rects(root)]
    check("#4c9be8" in fills and "#f28e2b" in fills, "overlap --pid: loaded/stored cells missing")
    check(any("store y, tile [16, 16]: 256 lanes, 0 masked off" in t for t in texts(root)), "overlap --pid: access list")
    # grouped_matmul's last block row is partial: masked-off lanes of the store and of the K loop are
    # counted in the access list and drawn nowhere.
    text, root = viz("examples/grouped_matmul.tile", "--pid", "6,4")
    check(any("masked off" in t and " 0 masked off" not in t for t in texts(root)), "grouped_matmul --pid: masked-off lanes not counted")
    check(not any("url(#masked)" == r.get("fill") for r in rects(root)), "grouped_matmul --pid: masked-off lanes drawn")
    check(any(", 6 times:" in t and "load a" in t for t in texts(root)), "grouped_matmul --pid: loop trips not merged")
    # matmul pid (1, 2): rows 32..63, columns 64..95 of which 70..95 are masked off (N = 70). The
    # masked lanes' addresses wrap into columns 0..25 of the next rows of b and c; nothing of them
    # may be drawn: the touched cells of c (2x2 elements each) are those of rows 32..63, columns
    # 64..69, of b those of columns 64..69, and no cell is drawn in any other way (hatched, past the edge).
    text, root = viz("examples/matmul.tile", "--pid", "1,2", name="fp.html")
    touched = {"b": set(), "c": set()}
    for r in rects(root):
        tip = "".join(t.text or "" for t in r if t.tag.endswith("title"))
        if tip[:2] not in ("b[", "c["):
            continue
        check(r.get("fill") in ("#4c9be8", "#f28e2b", "#8e6bbf", "#eeeeee"), f"matmul --pid 1,2: {tip} drawn as {r.get('fill')}")
        if r.get("fill") != "#eeeeee":
            rows, cols = tip[2:tip.index("]")].split(", ")
            touched[tip[0]].add((int(rows.split(":")[0]), int(cols.split(":")[0])))
    check(touched["c"] == {(i, j) for i in range(32, 64, 2) for j in range(64, 70, 2)},
          f"matmul --pid 1,2: c cells drawn outside rows 32..63 x columns 64..69: {sorted(touched['c'])[:8]}")
    check(touched["b"] == {(i, j) for i in range(0, 90, 2) for j in range(64, 70, 2)},
          f"matmul --pid 1,2: b cells drawn outside columns 64..69: {sorted(touched['b'])[:8]}")
    check(not any(r.get("stroke-dasharray") for r in rects(root)), "matmul --pid 1,2: masked lanes drawn past the edge")
    # copy_pid_n pid 2: every lane out of bounds, drawn past the edge.
    text, root = viz("examples/bugs/copy_pid_n.tile", "--pid", "2")
    check(any("64 out of bounds" in t for t in texts(root)), "copy_pid_n --pid: out-of-bounds lanes not counted")


def case_html():
    text, root = viz("examples/bugs/overlap.tile", name="out.html")
    check(text.startswith("<!DOCTYPE html>"), "html: no doctype")
    tips = ["".join(e.itertext()) for e in root.iter() if e.tag.endswith("title") and e.tag != "title"]
    check(any("y[8, 0] (flat 320) = " in t and "pid (1,0), run #2 of 9" in t for t in tips), "html: no tooltip with element, value and pid")
    for bad in ("<script src", "href=", "@import", "url(http"):
        check(bad not in text, f"html: refers to the network ({bad})")


def case_large():
    text, root = viz("examples/grouped_matmul.tile", "--arg", "M=4096", "--arg", "N=4096", "--arg", "K=16",
                     "--arg", "BM=64", "--arg", "BN=64")
    check(len(text) <= 2 * 1024 * 1024, f"4096x4096: {len(text)} bytes, over 2 MB")
    check(any("one cell = 64x64 elements" in t for t in texts(root)), "4096x4096: not drawn in blocks")


def case_errors():
    out = os.path.join(TMP, "bad.png")
    r = dtsim("viz", "examples/add.tile", "-o", out)
    check(r.returncode == 2 and "'-o' expects a file name ending in .svg or .html" in r.stderr and not os.path.exists(out),
          "viz -o .png not refused", r)
    out = os.path.join(TMP, "bad.svg")
    r = dtsim("viz", "examples/add.tile", "--pid", "500", "-o", out)
    check(r.returncode == 2 and "outside the grid" in r.stderr and not os.path.exists(out), "--pid outside the grid not refused", r)
    r = dtsim("viz", "examples/add.tile", "--pid", "1,2,3,4", "-o", out)
    check(r.returncode == 2 and "--pid" in r.stderr and not os.path.exists(out), "--pid with 4 parts not refused", r)
    bad = os.path.join(TMP, "bad.tile")
    with open(bad, "w") as f:
        f.write("kernel k(out y: *f32[4]) grid(1) {\n  store(y + arange(0, 4), )\n}\n")
    r = dtsim("viz", bad, "-o", out)
    check(r.returncode == 2 and "bad.tile:2:" in r.stderr and not os.path.exists(out), "syntax error not reported", r)
    r = dtsim("viz", "examples/add.tile", "--threads", "2")
    check(r.returncode == 2 and "unknown flag '--threads'" in r.stderr, "viz accepts a flag it ignores", r)


def case_repl():
    out = os.path.join(TMP, "fp.svg")
    script = f"pid 1,1\nnext 6\nviz {out}\nviz {TMP}/fp.png\nquit\n"
    r = subprocess.run([DTSIM, "debug", "examples/grouped_matmul.tile"], input=script, capture_output=True, text=True,
                       timeout=120, cwd=SRC)
    check(r.returncode == 0 and "wrote the footprint of pid [1, 1]" in r.stdout, "REPL viz: no footprint written", r)
    check("viz: the file name must end in .svg or .html" in r.stdout and not os.path.exists(f"{TMP}/fp.png"),
          "REPL viz: bad file name not refused", r)
    with open(out) as f:
        root = parse(f.read(), out)
    lines = texts(root)
    # Stopped before the store: both K-loop loads ran 6 times, the store has not run yet.
    check(any("load a, tile [16, 16], 6 times" in t for t in lines) and not any("store c" in t for t in lines),
          "REPL viz: the footprint is not the instance's accesses so far")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    DTSIM, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        TMP = d
        try:
            for c in sys.argv[3:]:
                CASES[c]()
        except Fail as e:
            print(f"FAIL: {e}")
            sys.exit(1)
    print("ok")
