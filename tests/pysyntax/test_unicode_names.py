#!/usr/bin/env python3
"""The \\N{NAME} lookup of the .py reader's syntax check against this Python's parser, name by name:
every character name unicodedata gives (as written, in lower case and in a mixed case), the name
aliases and named sequences (listed as gen_unicode_names.py lists them, where this Python allows),
the computed CJK and Hangul names around their edges, and mutants of names (a character dropped,
added or changed, spaces doubled). The checker (py_syntax_check --unicode-names) must accept exactly
what `'\\N{NAME}'` is accepted for by ast.parse. It runs with the python3 the build generated the
table from, so both have the same Unicode version.
usage: test_unicode_names.py PY_SYNTAX_CHECK SOURCE_DIR"""
import ast
import importlib.util
import os
import random
import subprocess
import sys
import unicodedata
import warnings


def python_accepts(name):
    try:
        ast.parse("'\\N{%s}'" % name)
        return True
    except SyntaxError:
        return False


def listed(src, lo, hi):
    """Names CPython keeps at private-use code points lo..hi (aliases, named sequences), or []."""
    spec = importlib.util.spec_from_file_location("gen", os.path.join(src, "src", "pyfront", "gen_unicode_names.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    if sys.implementation.name != "cpython" or sys.version_info < (3, 10):
        return []
    child = gen.ALIAS_CHILD.replace("0xF0000, 0xF0200", "%d, %d" % (lo, hi))
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    return r.stdout.splitlines() if r.returncode == 0 else []


def main():
    warnings.simplefilter("ignore")
    checker, src = sys.argv[1], sys.argv[2]
    rng = random.Random(20261126)
    names = [unicodedata.name(chr(c), None) for c in range(0x110000)]
    names = [n for n in names if n]
    aliases, sequences = listed(src, 0xF0000, 0xF0200), listed(src, 0xF0200, 0xF0400)
    if sys.implementation.name == "cpython" and sys.version_info >= (3, 10) and (not aliases or not sequences):
        print("FAIL could not list the name aliases and named sequences of this Python")
        return 1
    probes = set()
    for n in names + aliases + sequences:
        probes.update([n, n.lower(), "".join(c.lower() if rng.random() < 0.5 else c for c in n)])
    # The computed names around their edges: hex digits in case and count, range ends, jamo.
    for v in [0x3400, 0x4DBF, 0x4DC0, 0x4E00, 0x9FFF, 0xA000, 0x20000, 0x2A6DF, 0x2A6E0, 0x3134A, 0x3134B, 0xF900, 0x2F800]:
        for form in ["%04X", "%05X", "%04x", "%03X", "%06X", "%X "]:
            for prefix in ["CJK UNIFIED IDEOGRAPH-", "cjk unified ideograph-", "CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH-"]:
                probes.add(prefix + form % v)
    for s in ["", "G", "GA", "GAG", "GAGG", "GGAGG", "A", "AG", "YEO", "YEOL", "WAE", "WAEH", "HIH", "GX", "GAX", "ga", "Ga",
              "GAGGG", "AA", "EU", "EUI", "YI", "YII", "NGA", "ANG", "GA ", " GA"]:
        for prefix in ["HANGUL SYLLABLE ", "hangul syllable ", "Hangul Syllable ", "HANGUL SYLLABLE"]:
            probes.add(prefix + s)
    base = names + aliases + sequences
    for _ in range(20000):
        n = list(rng.choice(base))
        i = rng.randrange(len(n))
        op = rng.randrange(4)
        if op == 0:
            del n[i]
        elif op == 1:
            n.insert(i, rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_"))
        elif op == 2:
            n[i] = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -")
        else:
            n.insert(i, " ") if n[i] == " " else n.insert(i, "-")
        probes.add("".join(n))
    probes = sorted(p for p in probes if p and "}" not in p and "\\" not in p and "'" not in p)
    r = subprocess.run([checker, "--unicode-names"], input="\n".join(probes) + "\n", capture_output=True, text=True, timeout=600)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) != len(probes) + 1:
        print("the checker failed: exit %d, %d lines for %d names\n%s" % (r.returncode, len(lines), len(probes), r.stderr[-2000:]))
        return 1
    source, verdicts = lines[0], lines[1:]
    want = "Python %s, Unicode %s" % (sys.version.split()[0], unicodedata.unidata_version)
    if source != want:
        print("FAIL the checker's table comes from '%s', this is %s" % (source, want))
        return 1
    bad = [(p, v) for p, v in zip(probes, verdicts) if (v == "1") != python_accepts(p)]
    for p, v in bad[:20]:
        print("FAIL %r: the reader %s it, Python %s it" % (p, "accepts" if v == "1" else "rejects",
                                                        "rejects" if v == "1" else "accepts"))
    accepted = sum(v == "1" for v in verdicts)
    print("%d names (%d accepted, %d aliases, %d named sequences listed; %s), %d disagreement(s)"
          % (len(probes), accepted, len(aliases), len(sequences), source, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
