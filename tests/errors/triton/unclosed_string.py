# expect-error: 9:9: unterminated string literal (detected at line 9)
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    s = 'abc
