"""Symbols that MLIR quotes: Triton 3.6 names a specialized helper after its signature, parentheses
and all (`tt.func private @"mod.helper__Pfp32_(2,)c"` and `tt.call @"mod.helper__..."(...)`); the TTIR
reader takes a quoted symbol as a name. The installed Triton may write plain names, so the TTIR it
makes is given its helpers' names in quotes, with characters a plain name cannot hold, before dtsim
reads it (a Triton that quotes them already, as 3.6 does, is read as it writes them)."""
import os
import re
import sys

import numpy as np
import triton
import triton.language as tl

from dtsim import triton_launch


@triton.jit(noinline=True)
def clip_row(x_ptr, row, lim, N: tl.constexpr):
    offs = row * N + tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.minimum(x, lim))
    return tl.sum(x, axis=0)


@triton.jit
def clip_rows(x_ptr, sums_ptr, lim, N: tl.constexpr):
    row = tl.program_id(0)
    tl.store(sums_ptr + row, clip_row(x_ptr, row, lim, N))


plain = triton_launch._Frontend.ttir
quoted = []


def ttir_with_quoted_helpers(self, src, options):
    text = plain(self, src, options)
    quoted.extend(re.findall(r'tt\.func private @"([^"]+)"\(', text))  # a Triton that quotes them itself
    helpers = set(re.findall(r"tt\.func private @([\w.$]+)\(", text))
    for h in helpers:  # a name with '(' and ',' in it, as Triton 3.6 writes specializations
        text = text.replace("@%s(" % h, '@"%s_(2,)c"(' % h)
        quoted.append(h)
    return text


triton_launch._Frontend.ttir = ttir_with_quoted_helpers
# the rewrite above must run: a TTIR kept on disk by an earlier run would skip the frontend
os.environ["DTSIM_TTIR_CACHE"] = "0"
x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
sums = np.zeros(4, np.float32)
expect_sums = x.sum(axis=1)
clip_rows[(4,)](x, sums, 20.0, N=16)
ok = bool(quoted) and np.array_equal(sums, expect_sums) and np.array_equal(x, np.minimum(np.arange(64, dtype=np.float32).reshape(4, 16), 20))
print("quoted helper symbols (%s): %s" % (", ".join(quoted), "ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
