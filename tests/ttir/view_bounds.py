"""view_bounds: kernels that reach past the view they were given, into memory its storage still
holds: one fills a padded storage through a slice of it (`buf[:, :n]`, the padding reached by
unmasked stores from the view's first element), one reads one element past a slice of row
pointers (CSR style: row r ends where row r + 1 starts), one updates past a slice atomically.

- 'warn' (the default): the accesses run, and each statement prints one warning per process to
  stderr (file:line:col: warning: ... past the end of the view it was given), the exit status
  untouched;
- 'span': out of bounds, and the finding notes that the storage goes on and names the option;
- 'storage': the buffer runs on to the storage's end, silently.
An access past the storage's end is out of bounds in every mode, and a view bound as a copy (a
non-native byte order) has no storage past it to reach."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
import ttir_check

if dtsim.config()["backend"] == "cuda":
    print("skipped: --view-bounds is the interpreter's (backend='cuda' copies each view, so an access past it is out of bounds)")
    sys.exit(77)


@triton.jit
def fill(p, value, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(p + pid * BLOCK + tl.arange(0, BLOCK), value)


@triton.jit
def row_lengths(crow, out):
    r = tl.program_id(0)
    tl.store(out + r, tl.load(crow + r + 1) - tl.load(crow + r))


@triton.jit
def bump(p, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.atomic_add(p + i, 1, mask=i < n)


def run(launch):
    """(stderr text, KernelError text or None) of one launch."""
    return ttir_check.outcome(launch, dtsim.KernelError)


R, N, PAD, BLOCK = 3, 300, 512, 512
storage = np.zeros((R, PAD), np.int32)
view = storage[:, :N]

# warn (the default)
assert dtsim.config()["view_bounds"] == "warn", dtsim.config()["view_bounds"]
err, found = run(lambda: fill[(R,)](view, -1, BLOCK=BLOCK))
if found is not None:
    sys.exit("warn: the stores past the view stopped the run:\n" + found)
if not (storage == -1).all():
    sys.exit("warn: %d elements not filled" % int((storage != -1).sum()))
if ttir_check.at(__file__, "tl.store(p + pid * BLOCK + tl.arange(0, BLOCK), value)") not in err or "warning: store to 'p' past the end of the view it was given (inside its storage)" not in err \
        or "--view-bounds=span makes it an error" not in err or err.count("warning:") != 1:
    sys.exit("warn: unexpected warning text:\n" + err)
err, found = run(lambda: fill[(R,)](view, -2, BLOCK=BLOCK))
if found is not None or err or not (storage == -2).all():
    sys.exit("warn: a second launch warned again or failed:\n" + err + (found or ""))

crow_all = np.array([0, 2, 2, 5, 9, 10], np.int64)
lengths = np.zeros(2, np.int64)
err, found = run(lambda: row_lengths[(2,)](crow_all[1:3], lengths))  # rows 1, 2: reads crow_all[3]
if found is not None or list(lengths) != [0, 3] or "warning: load from 'crow' past the end" not in err:
    sys.exit("warn: CSR read past the slice: lengths %s\n%s%s" % (list(lengths), err, found or ""))

counts = np.zeros(16, np.int32)
err, found = run(lambda: bump[(1,)](counts[:4], 6, BLOCK=8))
if found is not None or list(counts[:7]) != [1] * 6 + [0] or "warning: atomic_add on 'p' past the end" not in err:
    sys.exit("warn: atomic past the slice: %s\n%s%s" % (list(counts), err, found or ""))

err, found = run(lambda: fill[(R + 1,)](view, 7, BLOCK=BLOCK))  # one block past the storage
if found is None or "out-of-bounds store to 'p'" not in found:
    sys.exit("warn: no finding for a store past the storage's end:\n" + err)

swapped = np.zeros(8, np.dtype(">i4"))  # bound as a native copy of the view: nothing past it to reach
err, found = run(lambda: fill[(1,)](swapped[:4], 3, BLOCK=8))
if found is None or "out-of-bounds store to 'p'" not in found or (swapped[4:] != 0).any():
    sys.exit("warn: a copied view reached past its end:\n%s%s" % (err, found or ""))

# span
dtsim.config(view_bounds="span")
storage[...] = 0
err, found = run(lambda: fill[(R,)](view, -1, BLOCK=BLOCK))
want = "note: 'p' is a view whose storage goes on for %d elements past its last one; --view-bounds=storage" % (PAD - N)
if found is None or "out-of-bounds store to 'p'" not in found or want not in found:
    sys.exit("span: unexpected finding:\n%s%s" % (err, found))
err, found = run(lambda: row_lengths[(2,)](crow_all[1:3], lengths))
if found is None or "out-of-bounds load from 'crow'" not in found:
    sys.exit("span: no finding for the CSR read past the slice")

# storage
dtsim.config(view_bounds="storage")
storage[...] = 0
err, found = run(lambda: fill[(R,)](view, -1, BLOCK=BLOCK))
if found is not None or err or not (storage == -1).all():
    sys.exit("storage: %d elements not filled\n%s%s" % (int((storage != -1).sum()), err, found or ""))
err, found = run(lambda: fill[(R + 1,)](view, 7, BLOCK=BLOCK))
if found is None or "out-of-bounds store to 'p'" not in found or "note:" in found:
    sys.exit("storage: unexpected finding:\n%s%s" % (err, found))
try:
    dtsim.config(view_bounds="all")
    sys.exit("view_bounds='all' accepted")
except ValueError as e:
    assert "view_bounds expects 'warn', 'span' or 'storage'" in str(e), e
print("view_bounds: warn runs accesses past a view inside its storage with one warning a statement; span reports them "
      "with a note; storage runs them silently; past the storage is out of bounds")
