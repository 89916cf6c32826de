# expect-error: 13:9: (unicode error) unknown Unicode character name 'BULLETT'
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.load(x_ptr + o))


LABEL = '\N{bullet} \N{BULLETT}' + b'\N{BULLETT}'.decode() + r'\N{BULLETT}'
