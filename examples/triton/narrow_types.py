# int8, int16 and fp8 in a Triton kernel: int8/int16 arithmetic wraps at its width, f32 rounds to
# tl.float8e4nv / tl.float8e5 (nearest even, saturating at 448 / 57344) and widens back exactly, and
# a tl.dot of fp8 tiles accumulates in f32.
#   dtsim run examples/triton/narrow_types.py --buf x_ptr=i8[1024] --buf h_ptr=i16[1024] --buf v_ptr=f32[1024] \
#       --buf y8_ptr=i8[1024] --buf y16_ptr=i16[1024] --buf q_ptr=f32[1024] --buf c_ptr=f32[32,32] --arg n=1024 \
#       --grid "cdiv(n, BLOCK)"
import triton
import triton.language as tl


@triton.jit
def narrow_kernel(x_ptr, h_ptr, v_ptr, y8_ptr, y16_ptr, q_ptr, c_ptr, n, BLOCK: tl.constexpr = 256):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    h = tl.load(h_ptr + offs, mask=m, other=0)
    v = tl.load(v_ptr + offs, mask=m, other=0.0)
    tl.store(y8_ptr + offs, x * x + x, mask=m)
    tl.store(y16_ptr + offs, h * 3 - x.to(tl.int16), mask=m)
    q = v.to(tl.float8e4nv)
    tl.store(q_ptr + offs, q.to(tl.float32) + (v * 100000.0).to(tl.float8e5).to(tl.float32), mask=m)
    if tl.program_id(0) == 0:
        r = tl.arange(0, 32)
        a = tl.load(v_ptr + r[:, None] * 32 + r[None, :]).to(tl.float8e4nv)
        b = tl.load(v_ptr + r[:, None] + r[None, :] * 32).to(tl.float8e5)
        tl.store(c_ptr + r[:, None] * 32 + r[None, :], tl.dot(a, b))
