# The copy kernel with the guide's breakpoint_if: the debugger stops on line 16 in the instances
# whose pids satisfy '=1' (pid_0 == 1) and only there; `continue` runs on.
#   dtsim run examples/triton/copy_break.py --buf x_ptr=f32[12] --buf z_ptr=f32[12] --arg n=12 --grid 'cdiv(n, bs)'
import triton
import triton.language as tl
from triton_util import breakpoint_if  # the guide's helper module (not needed by dtsim)


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr = 4):
    pid = tl.program_id(0)
    offs = pid * bs + tl.arange(0, bs)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask)

    breakpoint_if('=1', pid_0=pid)
    tl.store(z_ptr + offs, x, mask)
