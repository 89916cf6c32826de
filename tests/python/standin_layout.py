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
    from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
except ModuleNotFoundError as e:  # as a Triton build without the module: optional imports go on
    assert "pip install triton" in str(e) and "tensor descriptors" in str(e), e
else:
    raise AssertionError("no ModuleNotFoundError for TensorDescriptor")
try:
    triton.no_such_thing
except AttributeError as e:
    assert "pip install triton" in str(e), e
else:
    raise AssertionError("no AttributeError")


@triton.jit
def needs_atomic_load(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.atomic_load(x_ptr + offs, mask=offs < n)
    tl.store(h_ptr + tl.arange(0, 8), h)


import numpy as np  # noqa: E402
import dtsim  # noqa: E402
try:
    needs_atomic_load[(1,)](np.zeros(8, np.int32), np.zeros(8, np.int32), 8, BLOCK=8)
except dtsim.CompileError as e:
    assert "not supported" in str(e) and "pip install triton" in str(e), e
else:
    raise AssertionError("no CompileError")


# Host code that sizes a persistent grid from the warmed-up kernel (as tutorial 02 does): warmup()'s
# result has _init_handles(), n_regs, metadata.shared and launches with kernel[grid](...); the
# kernel's tl.debug_barrier() is a no-op and tl.assume() is checked.
@triton.jit
def row_scale(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    tl.assume(n_cols > 0)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
        tl.debug_barrier()
        tl.store(y_ptr + row * n_cols + offs, x * 2.0, mask=offs < n_cols)


x = np.arange(7 * 5, dtype=np.float32).reshape(7, 5)
y = np.zeros_like(x)
k = row_scale.warmup(x, y, 7, 5, BLOCK=8, grid=(1,))
k._init_handles()
assert k.n_regs > 0 and k.metadata.shared >= 32 and k.metadata.num_warps == 4, (k.n_regs, k.metadata.shared)
programs = min(7, 65536 // (k.n_regs * 32 * k.metadata.num_warps))
k[(programs, 1, 1)](x, y, 7, 5, 8)
assert np.array_equal(y, 2 * x), y
try:
    row_scale[(2,)](x, y, 7, 0, BLOCK=8)
except dtsim.KernelError as e:
    assert "tl.assume" in str(e), e
else:
    raise AssertionError("a false tl.assume was not reported")
print("stand-in layout ok:", triton.__version__)
