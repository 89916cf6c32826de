# expect-error: 13:5: condition field '~1': rules may only use < > >= <= = !=
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


from triton_util import print_if


@triton.jit
def k(x_ptr, z_ptr):
    pid = tl.program_id(0)
    print_if('pid is', '~1', pid_0=pid)
