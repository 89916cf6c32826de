#!/usr/bin/env python3
"""Tests of `dtsim emit --triton` that need no Triton, torch or GPU:
  compile FILE            the emitted module of FILE is valid Python (py_compile)
  golden FILE EXPECTED    the emitted module equals EXPECTED (DTSIM_UPDATE_GOLDEN=1 rewrites it)
  errors                  constructs with no Triton form are located errors and leave no output file
usage: test_triton.py DTSIM SOURCE_DIR MODE [ARGS...]"""
import os
import py_compile
import subprocess
import sys
import tempfile


def fail(msg, r=None):
    if r is not None:
        msg += f"\n  exit {r.returncode}\n  stdout: {r.stdout[-2000:]}\n  stderr: {r.stderr[-2000:]}"
    print("FAIL: " + msg)
    sys.exit(1)


def emit(dtsim, src, path, out):
    r = subprocess.run([dtsim, "emit", "--triton", path, "-o", out], capture_output=True, text=True, cwd=src, timeout=120)
    if r.returncode != 0:
        fail(f"dtsim emit --triton {path} failed", r)
    with open(out, encoding="utf-8") as f:
        return f.read()


def compile_case(dtsim, src, path, tmp):
    out = os.path.join(tmp, "module.py")
    text = emit(dtsim, src, path, out)
    try:
        py_compile.compile(out, doraise=True)
    except py_compile.PyCompileError as e:
        fail(f"the module emitted for {path} is not valid Python:\n{e.msg}")
    for want in ("@triton.jit", "def launch(", "if __name__ == \"__main__\":", "num_warps="):
        if want not in text:
            fail(f"the module emitted for {path} lacks '{want}'")
    print(f"ok: {path} -> valid Python ({len(text.splitlines())} lines)")


def golden_case(dtsim, src, path, expected, tmp):
    text = emit(dtsim, src, path, os.path.join(tmp, "module.py"))
    exp = os.path.join(src, expected)
    if os.environ.get("DTSIM_UPDATE_GOLDEN") == "1":
        os.makedirs(os.path.dirname(exp), exist_ok=True)
        with open(exp, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"updated {expected}")
        return
    if not os.path.exists(exp):
        fail(f"missing {expected} (run with DTSIM_UPDATE_GOLDEN=1)")
    with open(exp, encoding="utf-8") as f:
        want = f.read()
    if want != text:
        a, b = want.splitlines(), text.splitlines()
        for i in range(max(len(a), len(b))):
            la = a[i] if i < len(a) else "<end>"
            lb = b[i] if i < len(b) else "<end>"
            if la != lb:
                fail(f"emit --triton {path} differs from {expected} at line {i + 1}:\n  golden: {la}\n  now:    {lb}\n"
                     "(run with DTSIM_UPDATE_GOLDEN=1 to accept)")
    print(f"ok: {path} matches {expected}")


ERROR_CASES = [
    # (file name, text, line:col of the error, message substring)
    ("small_dot.tile",
     "kernel k(a: *f32[8, 8], out c: *f32[8, 8]) grid(1) {\n"
     "  r = arange(0, 8)\n"
     "  t = load(a + r[:, None] * 8 + r[None, :])\n"
     "  store(c + r[:, None] * 8 + r[None, :], dot(t, t))\n"
     "}\n",
     "4:42", "tl.dot needs every dimension >= 16"),
    ("return_in_loop.tile",
     "kernel k(out c: *f32[4]) grid(1) {\n"
     "  for i in range(0, 4) {\n"
     "    if i == 2 {\n"
     "      return\n"
     "    }\n"
     "    store(c + i, 1.0)\n"
     "  }\n"
     "}\n",
     "4:7", "'return' inside a for loop has no Triton form"),
    ("return_in_while.tile",
     "kernel k(out c: *f32[4], n: i32 = 3) grid(1) {\n"
     "  i = 0\n"
     "  while i < n {\n"
     "    return\n"
     "  }\n"
     "  store(c, 1.0)\n"
     "}\n",
     "4:5", "'return' inside a while loop has no Triton form"),
]


def errors_case(dtsim, src, tmp):
    for name, text, where, want in ERROR_CASES:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = os.path.join(tmp, name + ".py")
        r = subprocess.run([dtsim, "emit", "--triton", path, "-o", out], capture_output=True, text=True, timeout=60)
        if r.returncode != 2:
            fail(f"{name}: expected exit 2", r)
        lines = r.stderr.splitlines()
        prefix = f"{path}:{where}: error:"
        if not lines or not lines[0].startswith(prefix) or want not in lines[0]:
            fail(f"{name}: expected '{prefix} ...{want}...'", r)
        if len(lines) < 3 or lines[2].strip() != "^":
            fail(f"{name}: no source line and caret", r)
        if os.path.exists(out):
            fail(f"{name}: a partial output file was written")
        print(f"ok: {name}: {lines[0]}")


def main():
    dtsim, src, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "compile":
            compile_case(dtsim, src, sys.argv[4], tmp)
        elif mode == "golden":
            golden_case(dtsim, src, sys.argv[4], sys.argv[5], tmp)
        elif mode == "errors":
            errors_case(dtsim, src, tmp)
        else:
            fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
