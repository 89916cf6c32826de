# expect-error: 9:10: casting a pointer to another pointer type is not supported yet by dtsim's own reader (where Triton is installed, its frontend's TTIR reader runs it)
# args: --buf b_ptr=u8[64] --buf y_ptr=f32[16] --grid 1 --kernel k
import triton
import triton.language as tl


@triton.jit
def k(b_ptr, y_ptr):
    s = (b_ptr + 4 * tl.arange(0, 16)).to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + tl.arange(0, 16), tl.load(s))
