# expect-error: 10:5: assertion failed: only one instance
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 2
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    pid = tl.program_id(0)
    tl.device_assert(pid < 1, 'only one instance')
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.load(x_ptr + o))
