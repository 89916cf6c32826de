# Shared by the launch-path tests that run without a GPU (launcher_keys.py, fp_fusion.py): a stand-in
# for a torch CUDA tensor (is_cuda, data_ptr, __cuda_array_interface__; its memory is never read) and
# the axpy kernel they launch.
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
