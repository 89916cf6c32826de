"""Without Triton (or with DTSIM_STANDIN=1), `import triton` under `python -m dtsim` is dtsim's
stand-in: its version parses as a version and the modules host code imports exist."""
import triton
import triton.language as tl  # noqa: F401
from triton.language.extra import libdevice  # noqa: F401
from triton.language.extra.cuda import libdevice as cuda_libdevice  # noqa: F401
from triton.runtime import driver
import triton.testing

parts = triton.__version__.split("+")[0].split(".")
assert all(p.isdigit() for p in parts) and int(parts[0]) >= 3, triton.__version__
assert driver.active.get_current_target().arch == 90
assert driver.active.utils.get_device_properties(0)["multiprocessor_count"] > 0
assert triton.testing.do_bench(lambda: None) >= 0
try:
    triton.no_such_thing
except AttributeError as e:
    assert "pip install triton" in str(e), e
else:
    raise AssertionError("no AttributeError")


@triton.jit
def needs_sort(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.sort(tl.load(x_ptr + offs, mask=offs < n, other=0))
    tl.store(h_ptr + tl.arange(0, 8), h)


import numpy as np  # noqa: E402
import dtsim  # noqa: E402
try:
    needs_sort[(1,)](np.zeros(8, np.int32), np.zeros(8, np.int32), 8, BLOCK=8)
except dtsim.CompileError as e:
    assert "not supported" in str(e) and "pip install triton" in str(e), e
else:
    raise AssertionError("no CompileError")
print("stand-in layout ok:", triton.__version__)
