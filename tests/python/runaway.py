# Host code for the Ctrl-C transcripts (tests/python/repl_transcripts.py): one program instance runs
# a loop whose trip count is a runtime value far too large to finish (a runaway loop), after a
# quick first launch.
import numpy as np
import triton
import triton.language as tl


@triton.jit
def spin_k(z_ptr, trips):
    acc = 0.0
    for i in range(0, trips):
        acc = acc + 1.0
    tl.store(z_ptr, acc)


z = np.zeros(1, dtype=np.float32)
spin_k[(1,)](z, 3)
print("first launch ok", flush=True)
spin_k[(1,)](z, 2**40)
print("the runaway launch returned")
