"""A package outside the kernel's folder, reached through sys.path only (package_helpers.py)."""
import triton


@triton.jit
def neg(x):
    return -x
