"""Relative imports one and two levels up (`from .. import`, `from ..scale import`)."""
import triton

from .. import twice
from ..scale import halve


@triton.jit
def twice_halve_plus(x, c):
    return halve(twice(x)) + c
