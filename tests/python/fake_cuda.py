# Shared by the launch-path tests that run without a GPU (launcher_keys.py, fp_fusion.py,
# approx_div.py): a stand-in for a torch CUDA tensor (is_cuda, data_ptr, __cuda_array_interface__; its
# memory is never read), the axpy kernel they launch, and a recorder of what compiled kernels and the
# CudaLaunchers made from them carry.
import triton
import triton.language as tl


class DtypeName(str):
    itemsize = 4


class FakeCuda:
    is_cuda = True

    def __init__(self, n, ptr):
        self.n, self.ptr, self.shape, self.dtype = n, ptr, (n,), DtypeName("float32")
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "strides": None, "version": 3}

    def data_ptr(self):
        return self.ptr

    def stride(self):
        return (1,)

    def numpy(self):
        raise RuntimeError("GPU memory")

    def detach(self):
        return self

    def element_size(self):
        return 4


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def record_compiled(attr):
    """Replaces _dtsim's compile, compile_ttir and cuda_launcher by recorders: returns (compiles,
    made), the lists of `attr` of each compiled kernel and of each kernel a launcher was made from
    (the launchers launch nothing)."""
    from dtsim import _dtsim
    compiles, made = [], []

    class FakeLauncher:
        def __init__(self, compiled):
            made.append(getattr(compiled, attr))

        def launch(self, ptrs, stream):
            pass

    _dtsim.cuda_launcher = lambda c, s, d, san: FakeLauncher(c)
    for name in ("compile", "compile_ttir"):
        real = getattr(_dtsim, name)

        def recorded(*args, _real=real, **kwargs):
            c = _real(*args, **kwargs)
            compiles.append(getattr(c, attr))
            return c

        setattr(_dtsim, name, recorded)
    return compiles, made
