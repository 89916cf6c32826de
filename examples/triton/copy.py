# Copy x into z, bs elements per program instance, as in the practitioner's guide's first example;
# print_if shows one instance's offsets and values. Planted bugs: bugs/copy_nopid.py, bugs/copy_pid_n.py.
#   dtsim run examples/triton/copy.py --in x_ptr=x.npy --buf z_ptr=f32[1000] --arg n=1000 --grid 'cdiv(n, bs)'
import triton
import triton.language as tl
from triton_util import print_if  # the guide's helper module (not needed by dtsim)


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr = 64):
    pid = tl.program_id(0)
    offs = pid * bs + tl.arange(0, bs)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)
    print_if(f'pid = {pid} | offs = {offs}, mask = {mask}, x = {x}', '=1', pid_0=pid)
