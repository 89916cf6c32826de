# expect-error: 12:2: inconsistent use of tabs and spaces in indentation
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
        o = tl.arange(0, 64)
        if o.shape[0] == 64:
            o = o + 0
	tl.store(z_ptr + o, 1.0)
