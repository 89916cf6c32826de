"""A package of @triton.jit helpers for package_helpers.py: helpers defined in the package itself,
brought in from a submodule with `import *`, and a submodule imported relatively."""
import triton
import triton.language as tl

from .scale import *  # noqa: F401,F403 (halve)
from . import scale as scale_mod  # noqa: F401

SHIFT = tl.constexpr(3)


@triton.jit
def twice(x):
    return x * 2
