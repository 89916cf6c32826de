"""A kernel's compiler hints are checked by the sanitizer setting of each launch, not by the one of
its first compilation: the same specialization launched with the sanitizer off and then on (and the
reverse) reports a false tl.multiple_of only with it on; so does a launch after kernel.warmup(...)
under the other setting, a launch of what warmup returned (`compiled[grid](...)`), and a script
started with `python -m dtsim --sanitize=none` (or DTSIM_SANITIZE=none) that turns the sanitizer on
with dtsim.config. Run by Triton's frontend (TTIR) and, with DTSIM_STANDIN=1, by dtsim's own .py
reader."""
import os
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim

if dtsim.config()["backend"] == "cuda":
    print("skipped: hints are checked on the interpreter only")
    sys.exit(77)


@triton.jit
def aligned_copy(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    base = tl.program_id(0) * BLOCK + shift
    offs = tl.multiple_of(base + tl.arange(0, BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


x = np.arange(256, dtype=np.float32)
y = np.zeros_like(x)
source = open(__file__).read().splitlines()


def hint_at(kernel):
    """'hint_settings.py:LINE:' of the tl.multiple_of line of `kernel`."""
    start = source.index(next(l for l in source if l.startswith("def %s(" % kernel)))
    line = next(i + 1 for i in range(start, len(source)) if "offs = tl.multiple_of(" in source[i])
    return "%s:%d:" % (os.path.basename(__file__), line)


def launch(sanitize, launcher=None, kernel="aligned_copy"):
    """'finding' or 'clean' for the false hint (shift 3) launched with this sanitizer setting (None:
    the current one) through `launcher` (default aligned_copy[(4,)])."""
    if sanitize is not None:
        dtsim.config(sanitize=sanitize)
    y[:] = 0
    try:
        (launcher or aligned_copy[(4,)])(x, y, 60, 3, BLOCK=16)
    except dtsim.KernelError as e:
        text = str(e)
        if hint_at(kernel) not in text or "not a multiple of 16" not in text:
            sys.exit("a finding that is not the hint's:\n%s" % text)
        return "finding"
    if not np.array_equal(y[3:60], x[3:60]):
        sys.exit("the unchecked run copied the wrong values")
    return "clean"


failures = []


def expect(name, got, want):
    print("%-40s %s" % (name, "ok" if got == want else "FAILED: %s, want %s" % (got, want)))
    if got != want:
        failures.append(name)


if len(sys.argv) > 1 and sys.argv[1] == "child":  # started with --sanitize=none or DTSIM_SANITIZE=none
    expect("started with the sanitizer off", launch(None), "clean")
    expect("then dtsim.config(sanitize='all')", launch("all"), "finding")
    expect("then sanitize='none' again", launch("none"), "clean")
    sys.exit(1 if failures else 0)

# One kernel, one specialization (the same arguments' types, grid and constexprs) throughout: each
# case changes only the sanitizer setting between launches.
expect("off, then on: off", launch("none"), "clean")
expect("off, then on: on", launch("all"), "finding")
expect("on, then off: off", launch("none"), "clean")
expect("bounds only: hints checked", launch("bounds"), "finding")
expect("back to off", launch("none"), "clean")
expect("and on again", launch("all"), "finding")


@triton.jit
def aligned_copy2(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):  # a second kernel, never launched before its warmup
    base = tl.program_id(0) * BLOCK + shift
    offs = tl.multiple_of(base + tl.arange(0, BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def aligned_copy3(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    base = tl.program_id(0) * BLOCK + shift
    offs = tl.multiple_of(base + tl.arange(0, BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


# warmup under one setting, the first launch under the other
dtsim.config(sanitize="none")
warm = aligned_copy2.warmup(x, y, 60, 3, BLOCK=16, grid=(4,))
expect("warmup off, launch on", launch("all", aligned_copy2[(4,)], "aligned_copy2"), "finding")
expect("warmup off, its kernel[grid] on", launch("all", warm[(4,)], "aligned_copy2"), "finding")
expect("warmup off, its kernel[grid] off", launch("none", warm[(4,)], "aligned_copy2"), "clean")
dtsim.config(sanitize="all")
warm = aligned_copy3.warmup(x, y, 60, 3, BLOCK=16, grid=(4,))
expect("warmup on, launch off", launch("none", aligned_copy3[(4,)], "aligned_copy3"), "clean")
expect("warmup on, its kernel[grid] off", launch("none", warm[(4,)], "aligned_copy3"), "clean")
expect("warmup on, its kernel[grid] on", launch("all", warm[(4,)], "aligned_copy3"), "finding")

# the setting from the command line or the environment, then changed through the API
env = dict(os.environ)
env.pop("DTSIM_SANITIZE", None)
for how, flags, extra in (("--sanitize=none", ["--sanitize=none"], {}), ("DTSIM_SANITIZE=none", [], {"DTSIM_SANITIZE": "none"})):
    r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim"] + flags + [__file__, "child"], env=dict(env, **extra),
                       capture_output=True, text=True, timeout=240)
    print(r.stdout, end="")
    if r.returncode != 0 or r.stdout.count(" ok") != 3:
        print("%s FAILED (exit %d):\n%s" % (how, r.returncode, r.stderr))
        failures.append(how)

if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("hints follow the sanitizer setting of each launch")
