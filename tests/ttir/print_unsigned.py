"""tl.device_print of unsigned integers prints their unsigned values (Triton's tt.print isSigned;
dtsim's own reader from the values' dtypes): uint32 data of 2^31 and more, uint8 values 250-253. The
script runs its kernel in a child `python -m dtsim` and reads what the child printed."""
import os
import subprocess
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def show(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.device_print("u32", tl.load(X + i))
    tl.device_print("u8", (i + 250).to(tl.uint8))
    tl.device_print("i8", (i + 250).to(tl.int8))


if "--child" in sys.argv:
    x = (np.arange(4, dtype=np.uint64) + 2**31).astype(np.uint32)
    show[(1,)](x, N=4)
    sys.exit(0)

out = subprocess.run([sys.executable, "-W", "ignore", "-m", "dtsim", os.path.abspath(__file__), "--child"],
                     capture_output=True, text=True, timeout=240, env=os.environ)
text = out.stdout + out.stderr
want = ["[2147483648 2147483649 2147483650 2147483651]", "[250 251 252 253]", "[-6 -5 -4 -3]"]
missing = [w for w in want if w not in text]
if out.returncode != 0 or missing:
    sys.exit("print_unsigned: rc %d, missing %s in:\n%s" % (out.returncode, missing, text))
print("print_unsigned: unsigned values print unsigned, signed ones signed")
