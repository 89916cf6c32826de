# expect-error: 9:5: tl.atomic_cas() on a pointer to int8: Triton rejects it ("atomic_cas only supports elements with width {16, 32, 64}")
# args: --buf l_ptr=i8[1] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(l_ptr):
    tl.atomic_cas(l_ptr, 0, 1)
