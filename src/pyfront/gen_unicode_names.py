#!/usr/bin/env python3
"""Writes, at build time, the table of the names a `\\N{NAME}` escape in a Python string accepts, as
this interpreter's parser decides (src/pyfront/UnicodeNames.cpp includes it): every character name
that unicodedata.name() gives and every name alias, upper case, sorted and front-coded (each name
keeps the prefix it shares with the one before; every BUCKET-th name is whole, for a binary
search), less the names that CPython computes rather than stores: the CJK unified ideographs
(written here as ranges) and the Hangul syllables (written as their jamo parts). Named sequences,
which unicodedata.lookup() accepts and `\\N{...}` does not, are left out. Needs nothing but the
standard library and no network. usage: gen_unicode_names.py OUT"""
import codecs
import os
import subprocess
import sys
import unicodedata

BUCKET = 16
CJK = "CJK UNIFIED IDEOGRAPH-"
HANGUL = "HANGUL SYLLABLE "
S_BASE, L_COUNT, V_COUNT, T_COUNT = 0xAC00, 19, 21, 28

# Name aliases have no public listing: CPython keeps them in the name database at private-use code
# points U+F0000.. (named sequences from U+F0200), which the C API that `\N{...}` itself uses names.
# That API is internal, so it is read in a child process (a crash there only loses the aliases),
# on CPython 3.10 and later only (where getname has this signature), and every alias it gives is
# checked with unicodedata.lookup() and the unicode_escape codec below.
ALIAS_CHILD = r"""
import ctypes, unicodedata
get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype = ctypes.c_void_p
get.argtypes = [ctypes.py_object, ctypes.c_char_p]
api = ctypes.cast(get(unicodedata._ucnhash_CAPI, b"unicodedata._ucnhash_CAPI"), ctypes.POINTER(ctypes.c_void_p))
getname = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_int, ctypes.c_int)(api[0])
buf = ctypes.create_string_buffer(256)
for c in range(0xF0000, 0xF0200):
    if getname(c, buf, 256, 1):
        print(buf.value.decode("ascii"))
"""


def escape_accepts(name):
    try:
        codecs.decode(b"\\N{" + name.encode("ascii") + b"}", "unicode_escape")
        return True
    except UnicodeDecodeError:
        return False


def aliases():
    if sys.implementation.name != "cpython" or sys.version_info < (3, 10):
        return None
    try:
        r = subprocess.run([sys.executable, "-c", ALIAS_CHILD], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    names = r.stdout.splitlines()
    if r.returncode != 0 or not names:
        return None
    for n in names:
        try:
            unicodedata.lookup(n)
        except KeyError:
            return None
        if not escape_accepts(n):
            return None
    return names


def c_string(data):
    """A C++ string literal (split into lines) holding `data` (bytes) exactly."""
    out, line = [], []
    for b in data:
        ch = chr(b)
        line.append(ch if 0x20 <= b < 0x7F and ch not in "\"\\?" else "\\%03o" % b)
        if len(line) >= 96:
            out.append('"' + "".join(line) + '"')
            line = []
    if line or not out:
        out.append('"' + "".join(line) + '"')
    return "\n    ".join(out)


def main():
    out = sys.argv[1]
    names, cjk = set(), []
    hangul = {}
    for c in range(0x110000):
        n = unicodedata.name(chr(c), None)
        if n is None:
            continue
        if n.startswith(CJK):
            if cjk and cjk[-1][1] == c - 1:
                cjk[-1][1] = c
            else:
                cjk.append([c, c])
        elif n.startswith(HANGUL) and S_BASE <= c < S_BASE + L_COUNT * V_COUNT * T_COUNT:
            hangul[c] = n[len(HANGUL):]
        else:
            names.add(n)
    if len(hangul) != L_COUNT * V_COUNT * T_COUNT:
        sys.exit("gen_unicode_names.py: unexpected Hangul syllable names")
    # The jamo parts: with the silent initial (no letter) and no final, a name is the vowel alone.
    ieung = min(range(L_COUNT), key=lambda l: len(hangul[S_BASE + l * V_COUNT * T_COUNT]))
    jv = [hangul[S_BASE + (ieung * V_COUNT + v) * T_COUNT] for v in range(V_COUNT)]
    jl = [hangul[S_BASE + l * V_COUNT * T_COUNT][:-len(jv[0])] for l in range(L_COUNT)]
    jt = [hangul[S_BASE + ieung * V_COUNT * T_COUNT + t][len(jv[0]):] for t in range(T_COUNT)]
    for (l, v, t) in ((l, v, t) for l in range(L_COUNT) for v in range(V_COUNT) for t in range(T_COUNT)):
        if hangul[S_BASE + (l * V_COUNT + v) * T_COUNT + t] != jl[l] + jv[v] + jt[t]:
            sys.exit("gen_unicode_names.py: Hangul syllable names are not jamo parts")
    al = aliases()
    if al is not None:
        names.update(al)
    for n in names:
        if not n.isascii() or n != n.upper() or "\n" in n or len(n) > 255:
            sys.exit("gen_unicode_names.py: unexpected name %r" % n)
    names = sorted(names)

    data, bucket_at, prev = bytearray(), [], ""
    for i, n in enumerate(names):
        k = 0
        if i % BUCKET == 0:
            bucket_at.append(len(data))
        else:
            while k < min(len(n), len(prev)) and n[k] == prev[k]:
                k += 1
        data += bytes([k, len(n) - k]) + n[k:].encode("ascii")
        prev = n

    def strs(xs):
        return ", ".join('"%s"' % x for x in xs)

    src = "Python %s, Unicode %s" % (sys.version.split()[0], unicodedata.unidata_version)
    text = f"""// Generated by src/pyfront/gen_unicode_names.py from {src}: do not edit.
namespace dtsim::py::uninames {{
constexpr const char* kSource = "{src}";
constexpr bool kAliases = {"true" if al is not None else "false"};  // the name aliases are listed
constexpr unsigned kCount = {len(names)}, kBucket = {BUCKET};
// Sorted upper-case names, each as [shared prefix length][suffix length][suffix].
constexpr char kNames[] =
    {c_string(bytes(data))};
constexpr unsigned kBucketAt[] = {{{", ".join(map(str, bucket_at))}}};
constexpr unsigned kCjk[][2] = {{{", ".join("{0x%X, 0x%X}" % (a, b) for a, b in cjk)}}};
constexpr const char* kJamoL[] = {{{strs(jl)}}};
constexpr const char* kJamoV[] = {{{strs(jv)}}};
constexpr const char* kJamoT[] = {{{strs(jt)}}};
}}  // namespace dtsim::py::uninames
"""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
