# expect-error: 13:39: global 'GROUP_M' is a plain Python value: a @triton.jit function can read only module-level values made with tl.constexpr(...)
# args: --buf z_ptr=i32[64] --grid 1
import triton
import triton.language as tl

# Triton rejects this annotation on a global; GROUP_M = tl.constexpr(4) is the form it reads.
GROUP_M: tl.constexpr = 4


@triton.jit
def k(z_ptr, BS: tl.constexpr = 64):
    offs = tl.arange(0, BS)
    tl.store(z_ptr + offs, offs * 2 + GROUP_M)
