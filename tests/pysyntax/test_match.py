#!/usr/bin/env python3
"""The .py reader's syntax check on match statements (soft keywords `match`/`case`, every pattern
form), on \\N{...} escapes and on tokenizer corners the syntax fuzz found, snippet by snippet:
each has the verdict Python 3.11's parser gives (written down here, and compared with ast.parse
when the running Python is 3.10 or later), and the
reader must give the same, a rejection located at the right line (test_unicode_names.py compares
the \\N{NAME} lookup with Python's name by name). Then a file whose host code uses match runs its
kernel with `dtsim run`.
usage: test_match.py PY_SYNTAX_CHECK DTSIM"""
import ast
import os
import subprocess
import sys
import tempfile
import warnings

M = "match x:\n    case {}:\n        pass\n"
# (name, source, Python 3.11 accepts it, line of the error when it does not)
CASES = [
    ("literal ints", M.format("1 | 2 | -3"), True, 0),
    ("complex", M.format("-1+2j"), True, 0),
    ("complex minus", M.format("1 - 2j"), True, 0),
    ("imaginary alone", M.format("-1j"), True, 0),
    ("real in imaginary place", M.format("1+2"), False, 2),
    ("imaginary in real place", M.format("1j+2j"), False, 2),
    ("three terms", M.format("1 + 2j + 3j"), False, 2),
    ("double minus", M.format("--1"), False, 2),
    ("unary plus", M.format("+1"), False, 2),
    ("ellipsis", M.format("..."), False, 2),
    ("strings", M.format("'a' \"b\""), True, 0),
    ("bytes", M.format("b'a' b'c'"), True, 0),
    ("bytes and str", M.format("b'a' 'c'"), False, 2),
    ("f-string parses", M.format("f'a{x}'"), True, 0),
    ("f-string bad field", M.format("f'a{'"), False, 2),
    ("string attribute", M.format("'a'.b"), False, 2),
    ("None True False", M.format("None | True | False"), True, 0),
    ("None attribute", M.format("None.a"), False, 2),
    ("capture", M.format("y"), True, 0),
    ("capture then =", M.format("y = 1"), False, 2),
    ("wildcard", M.format("_"), True, 0),
    ("wildcard call", M.format("_()"), False, 2),
    ("wildcard attribute", M.format("_.a"), False, 2),
    ("value", M.format("Color.RED"), True, 0),
    ("dotted value", M.format("a.b.c"), True, 0),
    ("keyword", M.format("if"), False, 2),
    ("as", M.format("1 | 2 as y"), True, 0),
    ("nested as", M.format("(1 as a) as b"), True, 0),
    ("as _", M.format("1 as _"), False, 2),
    ("as attribute", M.format("1 as a.b"), False, 2),
    ("group", M.format("(1)"), True, 0),
    ("empty tuple", M.format("()"), True, 0),
    ("star in group", M.format("(*a)"), False, 2),
    ("tuple", M.format("(1, *rest)"), True, 0),
    ("open sequence", M.format("1, 2"), True, 0),
    ("open sequence star", M.format("*a,"), True, 0),
    ("bare star", M.format("*a"), False, 2),
    ("list", M.format("[1, *_, y]"), True, 0),
    ("list trailing comma", M.format("[1,]"), True, 0),
    ("list empty item", M.format("[1,,]"), False, 2),
    ("two stars parse", M.format("[*a, *b]"), True, 0),
    ("star attribute", M.format("[*a.b]"), False, 2),
    ("or with star", M.format("[*a | b]"), False, 2),
    ("mapping", M.format("{'k': v, 1: [w], a.b: _, **rest}"), True, 0),
    ("empty mapping", M.format("{}"), True, 0),
    ("mapping trailing comma", M.format("{'a': 1, **r,}"), True, 0),
    ("mapping name key", M.format("{a: 1}"), False, 2),
    ("mapping rest first", M.format("{**r, 'a': 1}"), False, 2),
    ("mapping rest _", M.format("{**_}"), False, 2),
    ("class", M.format("Point(0, y=1, z=_)"), True, 0),
    ("dotted class", M.format("mod.Point()"), True, 0),
    ("class trailing comma", M.format("C(1,)"), True, 0),
    ("class empty item", M.format("C(,)"), False, 2),
    ("positional after keyword", M.format("C(a=1, 2)"), False, 2),
    ("dotted keyword", M.format("C(a.b=1)"), False, 2),
    ("repeated keyword parses", M.format("C(a=1, a=2)"), True, 0),
    ("walrus in pattern", M.format("(y := 1)"), False, 2),
    ("guard", "match x:\n    case [a, b] if a > b:\n        pass\n", True, 0),
    ("guard walrus", "match x:\n    case 1 if (y := 2):\n        pass\n", True, 0),
    ("no colon after case", "match x:\n    case 1\n        pass\n", False, 2),
    ("several cases, comments", "match x:\n    # c\n    case 1:\n        pass\n\n    # d\n    case 2: y = 1; z = 2\n", True, 0),
    ("tuple subject", "match x, *y:\n    case 1:\n        pass\n", True, 0),
    ("subject trailing comma", "match x,:\n    case 1:\n        pass\n", True, 0),
    ("star subject", "match *x:\n    case 1:\n        pass\n", False, 1),
    ("walrus subject", "match (y := f()):\n    case 1:\n        pass\n", True, 0),
    ("lambda subject", "match lambda: 1:\n    case 1:\n        pass\n", True, 0),
    ("no case", "match x:\n    pass\n", False, 2),
    ("no block", "match x:\npass\n", False, 2),
    ("no colon", "match x\n", False, 1),
    ("on one line", "match x: case 1: pass\n", False, 1),
    ("case outside match", "case 1:\n    pass\n", False, 1),
    ("match inside def", "def f(v):\n    match v:\n        case [x, y]:\n            return x\n        case _:\n            return v\n", True, 0),
    ("nested match", "match a:\n    case 1:\n        match b:\n            case 2:\n                pass\n", True, 0),
    ("names match and case", "match = 1\ncase = 2\nmatch.x\nmatch[1]\nmatch(1)\nmatch -x\nprint(match, case)\nmatch: int = 3\n", True, 0),
    ("match call, no colon", "match (x)\n", True, 0),
    ("match annotated call", "match(x): int = 3\n", False, 1),
    ("bad statement after match", "match x:\n    case 1:\n        pass\nx = = 1\n", False, 4),
    ("\\N name", "s = '\\N{LATIN SMALL LETTER A} \\N{latin small letter a} \\N{CJK UNIFIED IDEOGRAPH-4E00}'\n", True, 0),
    ("\\N bad character", "s = '\\N{LATIN_A}'\n", False, 1),
    ("\\N leading space", "s = '\\N{ LATIN SMALL LETTER A}'\n", False, 1),
    ("\\N double space", "s = '\\N{LATIN  SMALL LETTER A}'\n", False, 1),
    ("\\N empty", "s = '\\N{}'\n", False, 1),
    ("\\N unclosed", "s = '\\N{ABC'\n", False, 1),
    ("\\N in bytes is no escape", "s = b'\\N{A!}'\n", True, 0),
    ("\\N raw", "s = r'\\N{A!}'\n", True, 0),
    ("\\N escaped backslash", "s = '\\\\N{A!}'\n", True, 0),
    ("\\N in f-string", "s = f'{x}\\N{BULLET}'\n", True, 0),
    ("\\N unknown name", "s = '\\N{NOT A NAME}'\n", False, 1),
    ("\\N unknown name, line 4", "x = 1\ny = '''\n'''\ns = 'a' + '\\N{LATIN SMALL LETTER A} \\N{LATIN SMALL LETTER Q2}'\n", False, 4),
    ("\\N unknown name in f-string", "s = f'{x}\\N{BULLETS}'\n", False, 1),
    ("\\N mixed case", "s = '\\N{Latin Capital Letter A With Grave}\\N{greek small letter alpha}'\n", True, 0),
    ("\\N aliases", "s = '\\N{LINE FEED}\\N{lf}\\N{Byte Order Mark}\\N{NBSP}\\N{ZWSP}'\n", True, 0),
    ("\\N named sequence", "s = '\\N{LATIN CAPITAL LETTER A WITH MACRON AND GRAVE}'\n", False, 1),
    ("\\N CJK five digits", "s = '\\N{CJK UNIFIED IDEOGRAPH-04E00}\\N{CJK UNIFIED IDEOGRAPH-20000}'\n", True, 0),
    ("\\N CJK lower-case hex", "s = '\\N{CJK UNIFIED IDEOGRAPH-4e00}'\n", False, 1),
    ("\\N CJK lower-case prefix", "s = '\\N{cjk unified ideograph-4E00}'\n", False, 1),
    ("\\N CJK not unified", "s = '\\N{CJK UNIFIED IDEOGRAPH-4DC0}'\n", False, 1),
    ("\\N CJK compatibility", "s = '\\N{cjk compatibility ideograph-f900}'\n", True, 0),
    ("\\N Hangul", "s = '\\N{HANGUL SYLLABLE GA}\\N{HANGUL SYLLABLE HIH}\\N{HANGUL SYLLABLE A}'\n", True, 0),
    ("\\N Hangul lower case", "s = '\\N{HANGUL SYLLABLE ga}'\n", False, 1),
    ("\\N Hangul no such syllable", "s = '\\N{HANGUL SYLLABLE GX}'\n", False, 1),
    ("\\N unknown in bytes", "s = b'\\N{NOT A NAME}' + B'\\N{}'\n", True, 0),
    ("\\N unknown in raw strings", "s = r'\\N{NOT A NAME}' + Rb'\\N{NOT A NAME}' + rf'\\N{x}'\n", True, 0),
    ("\\N unknown, not a field", "s = f'\\N{x}'\n", False, 1),
    # Tokenizer cases the syntax fuzz found (seeds 2, 7, 12 of fuzz_syntax.py).
    ("backslash line in column 0", "def f():\n\\\n    x = 1\n", True, 0),
    ("backslash line in column 0, no indent", "if 1:\n\\\nx = 1\n", False, 3),
    ("backslash line in column 0, bad dedent", "if 1:\n    y = 2\n\\\n  x = 1\n", False, 4),
    ("indented backslash line counts", "if 1:\n    y = 2\n    \\\nx = 1\n", True, 0),
    ("number before else", "x = 1 if 3else 2\n", True, 0),
    ("number before Else", "x = 1 if 3Else 2\n", False, 1),
    ("exponent without digits", "x = 3e\n", False, 1),
    ("backslash before a field", "s = f'a\\{x}'\n", True, 0),
    ("backslash before a lone brace", "s = f'a\\}'\n", False, 1),
]


def main():
    warnings.simplefilter("ignore")  # ast.parse warns of `3else` and invalid escapes
    checker, dtsim = sys.argv[1], sys.argv[2]
    failed = []
    with tempfile.TemporaryDirectory(prefix="dtsim-match-") as d:
        paths = []
        for k, (_, text, _, _) in enumerate(CASES):
            p = os.path.join(d, "c%d.py" % k)
            with open(p, "w") as f:
                f.write(text)
            paths.append(p)
        r = subprocess.run([checker, "-"], input="\n".join(paths) + "\n", capture_output=True, text=True, timeout=120)
        verdicts = r.stdout.splitlines()
        if r.returncode != 0 or len(verdicts) != len(paths):
            print("the checker failed: exit %d\n%s" % (r.returncode, r.stderr[-2000:]))
            return 1
        for (name, text, ok, line), v in zip(CASES, verdicts):
            if sys.version_info >= (3, 10):
                try:
                    ast.parse(text)
                    py = True
                except SyntaxError:
                    py = False
                if py != ok:
                    failed.append("%s: this Python (%s) %s it; the table says %s" % (name, sys.version.split()[0],
                                  "accepts" if py else "rejects", "accept" if ok else "reject"))
            if ok and v != "ok":
                failed.append("%s: rejected (%s) but Python accepts:\n%s" % (name, v, text))
            elif not ok and not v.startswith("error %d:" % line):
                failed.append("%s: expected an error on line %d, got '%s' for:\n%s" % (name, line, v, text))
        # A kernel file whose host code uses match runs (only the kernel must be in the subset).
        src = ('import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, z_ptr):\n'
               '    o = tl.arange(0, 64)\n    tl.store(z_ptr + o, tl.load(x_ptr + o) * 2.0)\n\n\n'
               'def grid_for(shape):\n    match shape:\n        case (n,) if n > 0:\n            return (1,)\n'
               '        case {"n": n, **rest} | [n, *_]:\n            return (n,)\n        case _:\n            raise ValueError(shape)\n')
        p = os.path.join(d, "host_match.py")
        with open(p, "w") as f:
            f.write(src)
        r = subprocess.run([dtsim, "run", p, "--buf", "x_ptr=f32[64]", "--buf", "z_ptr=f32[64]", "--grid", "1"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or "z_ptr: f32[64]" not in r.stdout:
            failed.append("a kernel beside host code with match did not run: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
        with open(p, "a") as f:
            f.write("\nmatch x:\n    case 1 as _:\n        pass\n")
        r = subprocess.run([dtsim, "run", p, "--buf", "x_ptr=f32[64]", "--buf", "z_ptr=f32[64]", "--grid", "1"],
                           capture_output=True, text=True, timeout=120)
        want = "%s:21:15: error: cannot use '_' as a target" % p
        if r.returncode != 2 or not r.stderr.startswith(want):
            failed.append("a bad pattern: expected '%s' (exit 2), got exit %d: %s" % (want, r.returncode, r.stderr))
    for f in failed:
        print("FAIL " + f)
    print("%d snippets, %d failure(s)" % (len(CASES), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
