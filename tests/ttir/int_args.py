"""Python ints passed for integer parameters annotated with a dtype, as Triton's CUDA launcher passes
them: an unsigned parameter takes its whole range (tl.uint32 3e9, tl.uint8 200) and keeps it
unsigned inside the kernel; a value its type cannot hold (a 64-bit seed for a tl.int32 parameter, as
kakaobrain/trident's dropout passes torch.random.seed()) reaches the kernel as its low bits, with one
located warning per parameter and process; a negative value for an unsigned parameter, or one beyond
64 bits, is an error, as the launcher's C conversion refuses it."""
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def widen(out_ptr, a: tl.int32, b: tl.uint32, c: tl.int16, d: tl.uint8, e: tl.uint16):
    tl.store(out_ptr, a.to(tl.int64))
    tl.store(out_ptr + 1, b.to(tl.int64))
    tl.store(out_ptr + 2, c.to(tl.int64))
    tl.store(out_ptr + 3, d.to(tl.int64))
    tl.store(out_ptr + 4, e.to(tl.int64))
    tl.store(out_ptr + 5, (b >> 31).to(tl.int64))  # a logical shift: b is unsigned


def run(*args):
    out = np.zeros(6, np.int64)
    widen[(1,)](out, *args)
    return out.tolist()


if len(sys.argv) > 1 and sys.argv[1] == "wrap":
    print(run(5_000_000_000, 3, 70_000, 300, 7))
    print(run(5_000_000_001, 3, 7, 2, 7))  # the same parameters again: no second warning
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "negative":
    run(1, -3, 1, 1, 1)
    sys.exit("no error for a negative tl.uint32 argument")



@triton.jit
def one_bit(out, flag: "tl.int1"):
    tl.store(out, flag.to(tl.int32))


flag_out = np.zeros(1, np.int32)
for v, want in ((True, 1), (0, 0), (1, 1)):
    one_bit[(1,)](flag_out, v)
    if flag_out[0] != want:
        sys.exit("one-bit parameter given %r: %d" % (v, flag_out[0]))
try:
    one_bit[(1,)](flag_out, 3)
    sys.exit("no error for 3 given to a one-bit parameter")
except TypeError as e:
    if "int_args.py:" not in str(e) or "argument 'flag' = 3 for a one-bit parameter" not in str(e):
        sys.exit("one-bit parameter given 3: unexpected error: %s" % e)

got = run(-5, 3_000_000_000, -7, 200, 60_000)
if got != [-5, 3_000_000_000, -7, 200, 60_000, 1]:
    sys.exit("unsigned parameters across their range: got %s" % got)

r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, "wrap"], capture_output=True, text=True)
line = next(i for i, t in enumerate(open(__file__), 1) if t.startswith("def widen(")) - 1  # its @triton.jit
want_out = "[705032704, 3, 4464, 44, 7, 0]\n[705032705, 3, 7, 2, 7, 0]\n"
warns = [w for w in r.stderr.splitlines() if "warning:" in w]
if r.returncode != 0 or r.stdout != want_out:
    sys.exit("wrapped arguments: rc %d, stdout %r (want %r), stderr:\n%s" % (r.returncode, r.stdout, want_out, r.stderr[-2000:]))
want = ["int_args.py:%d:1: warning: argument 'a' = 5000000000 does not fit the kernel's i32 parameter: the kernel sees its "
        "low 32 bits, 705032704" % line, "argument 'c' = 70000 does not fit the kernel's i16 parameter", "argument 'd' = 300 "
        "does not fit the kernel's u8 parameter: the kernel sees its low 8 bits, 44"]
if len(warns) != 3 or any(w not in text for w, text in zip(want, warns)):
    sys.exit("want one warning per parameter that wrapped, located at the kernel, got:\n%s" % "\n".join(warns))

r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", __file__, "negative"], capture_output=True, text=True)
if r.returncode == 0 or "argument 'b' = -3: Triton's launcher passes a u32 parameter as a C unsigned long" not in r.stderr:
    sys.exit("negative unsigned argument: rc %d, stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
print("integer arguments: unsigned parameters over their range, wrapped values with one warning each, a negative unsigned "
      "value refused")
