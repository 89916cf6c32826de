# dtsim.config(viz=...): every launch of a script writes `dtsim viz`'s picture of it, with nothing
# retyped. Run under `python -m dtsim` on the stand-in package (python/viz_launch) and under the
# installed Triton (ttir/viz_launch, when .cache/triton-venv exists): the same checks either way.
# A 2-D tiled copy with partial edge tiles: every element of z must be drawn as stored by the
# instance whose tile holds it (masked-off lanes, whose addresses wrap into the next rows, draw
# nothing); a planted out-of-bounds bug still raises KernelError after its picture is written;
# placeholders name one file per launch; bad names and incompatible options are refused.
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import triton
import triton.language as tl
import dtsim


@triton.jit
def tile_copy(x_ptr, z_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, v, mask=mask)


@triton.jit
def copy_pid_n(x_ptr, z_ptr, n, bs: tl.constexpr):
    pid = tl.program_id(0)
    mask = pid * bs + tl.arange(0, bs) < n
    offs = pid * n + tl.arange(0, bs)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask), mask)


failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def cells(path):
    """(buffer, row, col, p0, p1) of every stored cell's tooltip in an HTML picture."""
    text = open(path).read()
    check(text.startswith("<!DOCTYPE html>"), f"{path}: not an HTML page")
    root = ET.fromstring(text[len("<!DOCTYPE html>"):])
    out = []
    for e in root.iter():
        if e.tag.endswith("title") and e.text:
            m = re.match(r"(\w+)\[(\d+), (\d+)\] \(flat \d+\) = [^;]*; pid \((\d+),(\d+)\)", e.text)
            if m:
                out.append((m.group(1), *(int(g) for g in m.groups()[1:])))
    return out


M, N, BM, BN = 20, 10, 8, 8
grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
x = np.arange(M * N, dtype=np.float32).reshape(M, N)

with tempfile.TemporaryDirectory(prefix="dtsim-vizpy-") as d:
    # One file per launch with {launch} and {kernel}.
    pattern = os.path.join(d, "pic_{launch}_{kernel}.html")
    dtsim.config(viz=pattern)
    z = np.zeros_like(x)
    tile_copy[grid](x, z, M, N, BM=BM, BN=BN)
    check(np.array_equal(z, x), "tile_copy did not copy")
    files = sorted(f for f in os.listdir(d) if f.startswith("pic_"))
    check(len(files) == 1 and files[0].endswith("_tile_copy.html"), f"expected one picture named by kernel, got {files}")
    if files:
        got = cells(os.path.join(d, files[0]))
        stored = {(r, c): (p0, p1) for b, r, c, p0, p1 in got if b == "z_ptr"}
        check(len(stored) == M * N, f"{len(stored)} stored cells of z drawn, expected {M * N}")
        wrong = [(rc, p) for rc, p in stored.items() if p != (rc[0] // BM, rc[1] // BN)]
        check(not wrong, f"cells drawn as stored by another instance than the one whose tile holds them: {wrong[:5]}")
    tile_copy[grid](x, z, M, N, BM=BM, BN=BN)
    files = sorted(f for f in os.listdir(d) if f.startswith("pic_"))
    check(len(files) == 2, f"a second launch with {{launch}} in the name did not get its own file: {files}")

    # A planted bug: the picture is written, then KernelError is raised as without viz.
    bug = os.path.join(d, "bug.svg")
    dtsim.config(viz=bug, keep_going=True)
    n, bs = 200, 64
    xs = np.ones(n, dtype=np.float32)
    zs = np.zeros(n, dtype=np.float32)
    try:
        copy_pid_n[(triton.cdiv(n, bs),)](xs, zs, n, bs=bs)
        check(False, "the planted bug raised no KernelError with viz on")
    except dtsim.KernelError as e:
        check(e.kind == "out-of-bounds", f"KernelError kind {e.kind}")
    check(os.path.exists(bug), "no picture of the launch with findings")
    if os.path.exists(bug):
        svg = open(bug).read()
        ET.fromstring(svg)
        check("out-of-bounds" in svg and "stroke-dasharray" in svg, "the picture does not show the out-of-bounds lanes")
    dtsim.config(keep_going=False)

    # Bad names and combinations are refused; None turns it off.
    for bad in ("out.png", "out", 3, os.path.join(d, "{nope}.svg")):
        try:
            dtsim.config(viz=bad)
            check(False, f"viz={bad!r} accepted")
        except (ValueError, TypeError):
            pass
    dtsim.config(viz=os.path.join(d, "dbg.svg"), print_if=("pid0==0", "pm"))
    try:
        tile_copy[grid](x, z, M, N, BM=BM, BN=BN)
        check(False, "viz with print_if accepted")
    except Exception as e:
        check("viz cannot be combined" in str(e), f"viz with print_if: {e}")
    dtsim.config(viz=os.path.join(d, "nodir", "x.svg"), print_if=[])
    try:
        tile_copy[grid](x, z, M, N, BM=BM, BN=BN)
        check(False, "viz into a missing folder accepted")
    except Exception as e:
        check("x.svg" in str(e), f"viz into a missing folder: {e}")
    dtsim.config(viz=None)
    before = set(os.listdir(d))
    tile_copy[grid](x, z, M, N, BM=BM, BN=BN)
    check(set(os.listdir(d)) == before, "viz=None still wrote a picture")

    # DTSIM_VIZ sets the default (a child script, as python -m dtsim runs it).
    if os.environ.get("DTSIM_VIZ_CHILD") != "1":
        env = dict(os.environ, DTSIM_VIZ=os.path.join(d, "env.svg"), DTSIM_VIZ_CHILD="1")
        r = subprocess.run([sys.executable, "-c", "import dtsim, sys; print(dtsim.config()['viz'])"], env=env,
                           capture_output=True, text=True)
        check(r.returncode == 0 and r.stdout.strip() == env["DTSIM_VIZ"], f"DTSIM_VIZ not read: {r.stdout}{r.stderr}")
        env["DTSIM_VIZ"] = "bad.png"
        r = subprocess.run([sys.executable, "-c", "import dtsim; dtsim.config()"], env=env, capture_output=True, text=True)
        check(r.returncode != 0 and "DTSIM_VIZ=bad.png" in r.stderr, f"a bad DTSIM_VIZ accepted: {r.stderr[-500:]}")

for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(1)
print("viz_launch: ok")
