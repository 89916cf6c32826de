# Unsigned integers in a Triton kernel (tl.uint8, tl.uint32, tl.uint64 data): division, remainder,
# logical shifts, comparisons, maximum/minimum, tl.umulhi and tl.cdiv as unsigned operations;
# conversions that zero-extend (uint8 + 1 stays a uint8, stored into int32 as 0..255) or convert as
# unsigned (uitofp);
# max/min/argmax reductions in unsigned order; an atomic_max on uint32 elements.
#   dtsim run examples/triton/unsigned.py --buf a_ptr=u32[200] --buf b_ptr=u32[200] --buf c_ptr=u8[200] \
#       --buf w_ptr=u64[200] --buf q_ptr=u32[200] --buf r_ptr=u32[200] --buf s_ptr=u64[200] --buf cmp_ptr=i32[200] \
#       --buf mm_ptr=u32[200] --buf f_ptr=f32[200] --buf z_ptr=i32[200] --buf hi_ptr=u32[200] --buf red_ptr=u32[8] \
#       --buf amx_ptr=u32[1] --arg n=200 --grid "cdiv(n, BLOCK)"
import triton
import triton.language as tl


@triton.jit
def unsigned_kernel(a_ptr, b_ptr, c_ptr, w_ptr, q_ptr, r_ptr, s_ptr, cmp_ptr, mm_ptr, f_ptr, z_ptr, hi_ptr, red_ptr, amx_ptr, n,
                    BLOCK: tl.constexpr = 64):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)  # uint32
    b = tl.load(b_ptr + offs, mask=m, other=1) | 1  # uint32, odd (not 0)
    c = tl.load(c_ptr + offs, mask=m, other=0)  # uint8
    w = tl.load(w_ptr + offs, mask=m, other=1)  # uint64
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b + (a >> 28) + tl.cdiv(a >> 4, 16), mask=m)
    tl.store(s_ptr + offs, (w >> 60) + w // (b.to(tl.uint64) + 1) + w % 1000, mask=m)
    tl.store(cmp_ptr + offs, (a < b).to(tl.int32) + 2 * (c > 127).to(tl.int32) + 4 * (w >= a.to(tl.uint64)).to(tl.int32), mask=m)
    tl.store(mm_ptr + offs, tl.maximum(a, b) ^ tl.minimum(a, 2147483653), mask=m)  # 2**31 + 5 is a uint32 literal
    tl.store(f_ptr + offs, a.to(tl.float32) + c.to(tl.float32), mask=m)
    tl.store(z_ptr + offs, c + 1, mask=m)
    tl.store(hi_ptr + offs, tl.umulhi(a, b), mask=m)
    big = tl.where(m, a, 0)
    tl.store(red_ptr + 2 * pid, tl.max(big, axis=0))
    tl.store(red_ptr + 2 * pid + 1, tl.min(tl.where(m, a, 4294967295), axis=0))
    tl.store(cmp_ptr + offs, tl.load(cmp_ptr + offs, mask=m) + 8 * (tl.argmax(big, axis=0) == tl.arange(0, BLOCK)).to(tl.int32), mask=m)
    tl.atomic_max(amx_ptr, tl.max(big, axis=0))
