# expect-error: 10:9: '@!p add.f32 $0, $0, 1.0' reads $0 under @!p, which is written only under @p before it
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    o = tl.arange(0, 64)
    y = tl.inline_asm_elementwise("{ .reg .pred p; setp.lt.f32 p, $1, 1.0; @p mov.f32 $0, $1; @!p add.f32 $0, $0, 1.0; }", "=f,f",
                                  [tl.load(x_ptr + o)], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(z_ptr + o, y)
