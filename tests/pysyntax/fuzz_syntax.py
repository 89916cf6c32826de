#!/usr/bin/env python3
"""Fuzzes the .py reader's syntax check against Python's own parser: mutates every .py file of
examples/triton and tests/ (deleted, inserted, replaced and swapped characters and tokens, duplicated,
deleted, swapped and re-indented lines, tabs for spaces), and checks that the reader rejects exactly
the mutants that ast.parse rejects, each with a located error. Deterministic (a fixed seed per run,
DTSIM_FUZZ_SEED to change it); the number of mutants per file is chosen so that the run stays
within a few seconds. usage: fuzz_syntax.py SYNTAX_CHECK SOURCE_DIR [MUTANTS_PER_FILE]"""
import ast
import glob
import os
import random
import subprocess
import sys
import tempfile
import warnings

POOL = list(" \t\n()[]{}:;,.=+-*/%<>!@#'\"\\_0123456789xeEjJaAbfrRu")
TOKENS = ["if ", " else ", "for ", " in ", "lambda ", "lambda x: ", "yield ", "*", "**", ":=", "not ", "async ", "await ",
          "def ", "return ", "import ", "from ", "as ", "with ", "try:", "except ", "pass", "del ", "global ", "class ",
          "f'{x}'", "f'{", "}'", "'''", '"', "b'", "rb'", "0x", "0o8", "1_", "1e", ".5", "...", "->", "@", "=", "==", ", ",
          "(", ")", "[", "]", "{", "}", "\\\n", "\n    ", "\n\t", "True", "None", "print ", "x[1:2]", "*a, ", "**k",
          "match ", "case ", "match x:\n    case ", " | ", " as ", "_", "**rest", "Point(x=0)", "-1+2j", ".RED", " if ",
          "'\\N{BULLET}'", "'\\N{BULET}'", "b'\\N{BULET}'", "r'\\N{BULET}'", "\\N{", "\\N{LATIN SMALL LETTER A}",
          "\\N{lf}", "\\N{HANGUL SYLLABLE GAG}", "\\N{CJK UNIFIED IDEOGRAPH-4E00}"]


def mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        lines = text.split("\n")
        op = rng.randrange(11)
        if not text:
            text = rng.choice(TOKENS)
            continue
        i = rng.randrange(len(text))
        li = rng.randrange(len(lines))
        if op == 0:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + rng.choice(POOL) + text[i:]
        elif op == 2:
            text = text[:i] + rng.choice(POOL) + text[i + 1:]
        elif op == 3:
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif op == 4 and i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2:]
        elif op == 5:
            lines.insert(li, lines[li])
            text = "\n".join(lines)
        elif op == 6:
            del lines[li]
            text = "\n".join(lines)
        elif op == 7 and li + 1 < len(lines):
            lines[li], lines[li + 1] = lines[li + 1], lines[li]
            text = "\n".join(lines)
        elif op == 8:  # re-indent a line
            body = lines[li].lstrip(" \t")
            lines[li] = " " * rng.choice([0, 1, 2, 4, 6, 8, 12]) + body
            text = "\n".join(lines)
        elif op == 9:  # a tab for leading spaces
            l = lines[li]
            n = len(l) - len(l.lstrip(" "))
            if n:
                k = rng.choice([n, min(n, 4), min(n, 8)])
                lines[li] = "\t" + l[k:]
                text = "\n".join(lines)
        else:  # delete a word
            j = text.find(" ", i)
            if j > i:
                text = text[:i] + text[j:]
    return text


def python_accepts(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
            return True
        except (SyntaxError, ValueError):
            return False
        except (RecursionError, MemoryError):
            return False


def main():
    checker, src = sys.argv[1], sys.argv[2]
    per_file = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    seed = int(os.environ.get("DTSIM_FUZZ_SEED", "20261125"))
    rng = random.Random(seed)
    files = sorted(glob.glob(os.path.join(src, "examples", "triton", "**", "*.py"), recursive=True) +
                   glob.glob(os.path.join(src, "tests", "**", "*.py"), recursive=True))
    cases = []  # (origin, text)
    for f in files:
        try:
            text = open(f, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        if not text.isascii():
            continue
        cases.append((f, text))
        for _ in range(per_file):
            cases.append((f, mutate(text, rng)))
    with tempfile.TemporaryDirectory(prefix="dtsim-pysyntax-") as d:
        paths = []
        for i, (_, text) in enumerate(cases):
            p = os.path.join(d, f"m{i}.py")
            with open(p, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            paths.append(p)
        r = subprocess.run([checker, "-"], input="\n".join(paths) + "\n", capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            print(f"the checker failed (exit {r.returncode}): {r.stderr[-2000:]}")
            sys.exit(1)
        verdicts = r.stdout.splitlines()
        if len(verdicts) != len(cases):
            print(f"the checker answered {len(verdicts)} of {len(cases)} files")
            sys.exit(1)
        bad = []
        rejected = 0
        for (origin, text), v, p in zip(cases, verdicts, paths):
            py = python_accepts(text)
            ours = v == "ok"
            rejected += not py
            if py != ours:
                bad.append((origin, text, v, py))
            elif not ours and not v.startswith("error ") or (not ours and v.split()[1].startswith("0:")):
                bad.append((origin, text, v + " (not located)", py))
        print(f"{len(cases)} files ({len(files)} originals), {rejected} rejected by Python, {len(bad)} disagreements "
              f"(seed {seed})")
        keep = os.environ.get("DTSIM_FUZZ_KEEP")
        for k, (origin, text, v, py) in enumerate(bad[:10]):
            print(f"--- from {origin}: Python {'accepts' if py else 'rejects'}, the reader says: {v}")
            if keep:
                os.makedirs(keep, exist_ok=True)
                with open(os.path.join(keep, f"bad{k}.py"), "w") as fh:
                    fh.write(text)
            if not py:
                try:
                    ast.parse(text)
                except Exception as e:
                    print(f"    Python: {type(e).__name__}: {e}")
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
