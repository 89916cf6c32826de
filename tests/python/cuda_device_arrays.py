# backend='cuda' with GPU memory bound by device address (no copies): memory allocated through the
# CUDA driver (ctypes) and exposed with __cuda_array_interface__, and torch CUDA tensors where torch
# has CUDA. Outputs match the interpreter on host copies; a column view binds its span of storage;
# host and GPU arguments mix. Exits 77 (skip) without a usable GPU.
import ctypes
import sys

import numpy as np
import triton
import triton.language as tl
import dtsim
from dtsim import _dtsim

ok, why = _dtsim.cuda_available()
if not ok:
    print("%s: skipped" % why)
    sys.exit(77)

cu = ctypes.CDLL("libcuda.so.1")


def ck(r, what):
    if r != 0:
        raise RuntimeError("%s failed (CUresult %d)" % (what, r))


ck(cu.cuInit(0), "cuInit")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")  # the context dtsim uses


class GpuArray:
    """Device memory holding a copy of a host array, described by __cuda_array_interface__."""

    def __init__(self, host, shape=None, strides=None):
        ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        self.host = np.ascontiguousarray(host)
        p = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(self.host.nbytes, 1))), "cuMemAlloc")
        self.ptr = p.value
        ck(cu.cuMemcpyHtoD_v2(ctypes.c_uint64(self.ptr), self.host.ctypes.data_as(ctypes.c_void_p),
                              ctypes.c_size_t(self.host.nbytes)), "cuMemcpyHtoD")
        self.__cuda_array_interface__ = {"shape": tuple(shape or self.host.shape), "typestr": self.host.dtype.str,
                                         "data": (self.ptr, False), "strides": strides, "version": 3}

    def get(self):
        ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        out = np.empty_like(self.host)
        ck(cu.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(self.ptr),
                              ctypes.c_size_t(self.host.nbytes)), "cuMemcpyDtoH")
        return out


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, sx, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * sx, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


rng = np.random.default_rng(2)
n = 3000
x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
want = np.full(n, 5.0, np.float32)
add_kernel[(triton.cdiv(n, 512),)](x, y, want, n, 1, BLOCK=512)  # the interpreter on host arrays

gx, gy, gout = GpuArray(x), GpuArray(y), GpuArray(np.full(n, 5.0, np.float32))
dtsim.config(backend="cuda")
add_kernel[(triton.cdiv(n, 512),)](gx, gy, gout, n, 1, BLOCK=512)
assert np.array_equal(gout.get(), want), np.abs(gout.get() - want).max()
print("GPU memory in, GPU memory out: matches the interpreter")

host_out = np.full(n, 5.0, np.float32)
add_kernel[(triton.cdiv(n, 512),)](x, gy, host_out, n, 1, BLOCK=512)  # host and GPU arguments mixed
assert np.array_equal(host_out, want)
print("host and GPU arguments mixed: ok")

mat = rng.standard_normal((n, 4), dtype=np.float32)
gmat = GpuArray(mat, shape=(n,), strides=(16,))  # the column mat[:, 0] as a strided view
gout2 = GpuArray(np.zeros(n, np.float32))
add_kernel[(triton.cdiv(n, 512),)](gmat, gy, gout2, n, 4, BLOCK=512)
assert np.array_equal(gout2.get(), mat[:, 0] + y)
print("a strided GPU view: ok")

try:
    import torch
    have_torch_cuda = torch.cuda.is_available()
except ImportError:
    have_torch_cuda = False
if have_torch_cuda:
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    tout = torch.full((n,), 5.0, device="cuda")
    add_kernel[(triton.cdiv(n, 512),)](tx, ty, tout, n, 1, BLOCK=512)
    assert np.array_equal(tout.cpu().numpy(), want)
    # bfloat16 (torch has no __cuda_array_interface__ for it): bound by data_ptr; torch's own
    # bfloat16 add (in float32, rounded to nearest even) is what the kernel computes
    bx, by = tx.to(torch.bfloat16), ty.to(torch.bfloat16)
    bout = torch.zeros(n, dtype=torch.bfloat16, device="cuda")
    add_kernel[(triton.cdiv(n, 512),)](bx, by, bout, n, 1, BLOCK=512)
    assert torch.equal(bout, bx + by)
    print("torch CUDA tensors: bound by device pointer, ok (float32 and bfloat16)")
else:
    print("torch with CUDA is not installed: its part skipped")
