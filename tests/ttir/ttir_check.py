"""Result checks shared by tests/ttir's scripts (`from ttir_check import check, report, finish`: the
scripts run with tests/ttir as their working folder, as combine_fns.py is imported). Each check
prints its name and "ok" or "FAILED" with what differs, and records a failure; finish(summary) ends
the script: exit status 1 naming the failures, or the summary printed. A recorded failure is never
lost: a script that ends without finish() (or with status 0) after one exits with status 1."""
import atexit
import contextlib
import io
import os
import sys

import numpy as np

failures = []
_finished = []


def line_of(script, text):
    """The number of the first line of file `script` (a test's __file__) that holds `text`."""
    with open(script) as f:
        return next(i + 1 for i, line in enumerate(f) if text in line)


def at(script, text):
    """'NAME.py:LINE:', where a finding locates the first line of `script` holding `text`."""
    return "%s:%d:" % (os.path.basename(script), line_of(script, text))


def outcome(launch, error):
    """(what launch() printed to stderr, the text of the `error` it raised or None)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            launch()
        except error as e:
            return err.getvalue(), str(e)
    return err.getvalue(), None


def report(name, ok, detail=""):
    """A check whose outcome the caller computed (`ok`), printed with `detail`; returns ok."""
    ok = bool(ok)
    print(("%-40s %s %s" % (name, "ok" if ok else "FAILED", detail)).rstrip())
    if not ok:
        failures.append(name)
    return ok


def check(name, got, want, tol=None, rtol=None, bits=False):
    """`got` against `want` (arrays, lists or scalars; the same shape). By default every element is
    equal (NaN matches NaN). bits=True: floats also with the same sign (-0.0 is not 0.0; a NaN matches
    any NaN), so equal floats are equal bit patterns up to NaN payloads. tol: where not equal,
    |got - want| <= tol * max(1, the largest finite |want|); rtol: where not equal,
    |got - want| <= rtol * |want| element by element. Returns whether it held."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return report(name, False, "shape %s, want %s" % (got.shape, want.shape))
    floats = got.dtype.kind == "f" or want.dtype.kind == "f"
    same = got == want
    if floats:
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(g) & np.isnan(w)
        same = same | nan
        if bits:
            same &= (np.signbit(g) == np.signbit(w)) | nan
    detail = ""
    if tol is not None or rtol is not None:
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(g - w))
        diff = np.where(np.isnan(diff), np.inf, diff)  # a NaN or an infinity on one side only
        if tol is not None:
            finite = np.abs(w[np.isfinite(w)])
            same = same | (diff <= tol * max(1.0, float(finite.max()) if finite.size else 1.0))
        else:
            same = same | (diff <= rtol * np.abs(w))
        detail = "(max abs err %.3g)" % (float(diff.max()) if diff.size else 0.0)
    ok = bool(np.all(same))
    if not ok:
        bad = np.flatnonzero(~np.asarray(same).reshape(-1))[:4]
        detail = (detail + " at %s: got %s, want %s" % (bad.tolist(), got.reshape(-1)[bad], want.reshape(-1)[bad])).lstrip()
    return report(name, ok, detail)


def finish(summary):
    """Ends the checks: exit status 1 naming the failures, else `summary` printed."""
    _finished.append(True)
    if failures:
        sys.stdout.flush()
        sys.exit("FAILED: " + ", ".join(failures))
    print(summary)


@atexit.register
def _failed_without_finish():
    if failures and not _finished:
        sys.stdout.flush()
        sys.stderr.write("FAILED (the script ended without finish()): %s\n" % ", ".join(failures))
        sys.stderr.flush()
        os._exit(1)
