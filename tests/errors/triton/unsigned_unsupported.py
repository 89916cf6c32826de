# expect-error: 10:25: tl.gather() on unsigned integers (tl.uint8 ... tl.uint64) is not supported by dtsim's .py reader yet
# args: --buf x_ptr=u8[64] --buf z_ptr=i32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    tl.store(z_ptr + o, tl.gather(tl.load(x_ptr + o), 63 - o, 0))
