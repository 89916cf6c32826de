"""view_bounds: a kernel that fills a padded storage through a slice of it (`buf[:, :n]`, the padding
reached by unmasked stores from the view's first element). By default the view's buffer is its
elements' span, so the stores past the last row's n-th element are out of bounds, and the finding
notes that the storage goes on and names the option; with view_bounds='storage' (--view-bounds,
DTSIM_VIEW_BOUNDS) the buffer runs on to the storage's end: the kernel runs and fills every element,
and a store past the storage's end is still out of bounds."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim


@triton.jit
def fill(p, value, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(p + pid * BLOCK + tl.arange(0, BLOCK), value)


R, N, PAD, BLOCK = 3, 300, 512, 512
storage = np.zeros((R, PAD), np.int32)
view = storage[:, :N]
try:
    fill[(R,)](view, -1, BLOCK=BLOCK)
    sys.exit("span: no finding for stores past the view's span")
except dtsim.KernelError as e:
    text = str(e)
    want = "note: 'p' is a view whose storage goes on for %d elements past its last one; --view-bounds=storage" % (PAD - N)
    if "out-of-bounds store to 'p'" not in text or want not in text:
        sys.exit("span: unexpected finding:\n" + text)

dtsim.config(view_bounds="storage")
storage[...] = 0
fill[(R,)](view, -1, BLOCK=BLOCK)
if not (storage == -1).all():
    sys.exit("storage: %d elements not filled" % int((storage != -1).sum()))
try:
    fill[(R + 1,)](view, 7, BLOCK=BLOCK)  # one block past the storage
    sys.exit("storage: no finding for a store past the storage's end")
except dtsim.KernelError as e:
    if "out-of-bounds store to 'p'" not in str(e) or "note:" in str(e):
        sys.exit("storage: unexpected finding:\n" + str(e))
try:
    dtsim.config(view_bounds="all")
    sys.exit("view_bounds='all' accepted")
except ValueError as e:
    assert "view_bounds expects 'span' or 'storage'" in str(e), e
print("view_bounds: span reports stores into the padding with a note, storage runs them; past the storage is out of bounds")
