"""Ops on backend='cuda', read through the installed Triton's frontend and checked against numpy:
pointers made from integers (tutorial 08's address tables: GPU memory allocated through the CUDA
driver (ctypes), a host table of its device addresses, an address passed as an int64 scalar, turned
into pointers by tt.int_to_ptr), the int8 tl.dot, uint64 division and remainder and conversions,
tl.reduce / tl.associative_scan of three operands. Exits 77 (skip)
without a usable GPU. Run with `python -m dtsim --backend=cuda cuda_ops.py` where Triton is installed."""
import ctypes
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
from dtsim import _dtsim
from dtsim.triton_launch import HostArray
from ttir_check import finish, report

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
    """Device memory holding a copy of a host array, described by __cuda_array_interface__ (and, for
    Triton's argument binder, a tensor's data_ptr() and dtype)."""

    def __init__(self, host):
        ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        self.host = np.ascontiguousarray(host)
        p = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(self.host.nbytes, 1))), "cuMemAlloc")
        self.ptr = p.value
        ck(cu.cuMemcpyHtoD_v2(ctypes.c_uint64(self.ptr), self.host.ctypes.data_as(ctypes.c_void_p),
                              ctypes.c_size_t(self.host.nbytes)), "cuMemcpyHtoD")
        self.__cuda_array_interface__ = {"shape": self.host.shape, "typestr": self.host.dtype.str,
                                         "data": (self.ptr, False), "strides": None, "version": 3}
        self.dtype = HostArray(self.host).dtype

    def data_ptr(self):
        return self.ptr

    def get(self):
        ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        out = np.empty_like(self.host)
        ck(cu.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(self.ptr),
                              ctypes.c_size_t(self.host.nbytes)), "cuMemcpyDtoH")
        return out


@triton.jit
def scaled_copies(src_addrs, dst_addrs, sizes, scale, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    src = tl.load(src_addrs + g).to(tl.pointer_type(tl.float32))
    dst = tl.load(dst_addrs + g).to(tl.pointer_type(tl.float32))
    n = tl.load(sizes + g)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(dst + offs, tl.load(src + offs, mask=m) * scale, mask=m)


@triton.jit
def from_scalar(addr, out_ptr, BLOCK: tl.constexpr):
    p = addr.to(tl.pointer_type(tl.float16))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(p + offs).to(tl.float32) + 1.0)


@triton.jit
def offsets_of(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (x_ptr + offs).to(tl.int64) - x_ptr.to(tl.int64))


@triton.jit
def int8_dot(a_ptr, b_ptr, c_ptr, o_ptr, p_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    out = m[:, None] * N + n[None, :]
    tl.store(o_ptr + out, tl.dot(a, b))
    tl.store(p_ptr + out, tl.dot(a, b, tl.load(c_ptr + out), out_dtype=tl.int32))


@triton.jit
def udiv64(x_ptr, y_ptr, q_ptr, r_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, x // y)
    tl.store(r_ptr + offs, x % y)


@triton.jit
def u64_floats(x_ptr, f_ptr, g_ptr, u_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(f_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))  # uitofp of uint64
    tl.store(u_ptr + offs, tl.load(g_ptr + offs).to(tl.uint64))  # fptoui to uint64


@triton.jit
def max_first_count(v1, i1, c1, v2, i2, c2):  # the maximum, its first index, how often it occurs
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    c = tl.where(v1 == v2, c1 + c2, tl.where(v2 > v1, c2, c1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1), c


@triton.jit
def sum_count_max(s1, n1, m1, s2, n2, m2):
    return s1 + s2, n1 + n2, tl.maximum(m1, m2)


@triton.jit
def triples(k_ptr, mx_ptr, ix_ptr, cnt_ptr, cs_ptr, cm_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    offs = rows[:, None] * C + cols[None, :]
    k = tl.load(k_ptr + offs)
    idx = tl.broadcast_to(cols[None, :], (R, C))
    mx, ix, cnt = tl.reduce((k, idx, tl.full((R, C), 1, tl.int32)), 1, max_first_count)
    tl.store(mx_ptr + rows, mx)
    tl.store(ix_ptr + rows, ix)
    tl.store(cnt_ptr + rows, cnt)
    s, n, m = tl.associative_scan((k, tl.full((R, C), 1, tl.int32), k), 1, sum_count_max)
    tl.store(cs_ptr + offs, s)
    tl.store(cm_ptr + offs, m)


dtsim.config(backend="cuda")
rng = np.random.default_rng(3)
srcs = [GpuArray(rng.standard_normal(n).astype(np.float32)) for n in (100, 37, 1000)]
dsts = [GpuArray(np.zeros(s.host.size, np.float32)) for s in srcs]
src_addrs = np.array([s.ptr for s in srcs], np.int64)  # host tables of device addresses
dst_addrs = np.array([d.ptr for d in dsts], np.int64)
sizes = np.array([s.host.size for s in srcs], np.int32)
scaled_copies[(3,)](src_addrs, dst_addrs, sizes, 2.5, BLOCK=64)
report("int_to_ptr: GPU arrays by address", all(np.array_equal(d.get(), s.host * np.float32(2.5)) for s, d in zip(srcs, dsts)))

h = GpuArray(rng.standard_normal(32).astype(np.float16))
out = GpuArray(np.zeros(32, np.float32))
from_scalar[(1,)](h.ptr, out, BLOCK=32)
report("int_to_ptr: an int64 scalar address", np.array_equal(out.get(), h.host.astype(np.float32) + 1.0))

x = GpuArray(np.zeros(16, np.float32))
offs = GpuArray(np.zeros(16, np.int64))
offsets_of[(1,)](x, offs, BLOCK=16)
report("ptr_to_int: byte offsets", np.array_equal(offs.get(), 4 * np.arange(16)))

M, N, K = 64, 32, 128
a8 = rng.integers(-128, 128, (M, K)).astype(np.int8)
b8 = rng.integers(-128, 128, (K, N)).astype(np.int8)
c32 = rng.integers(2**31 - 2**21, 2**31, (M, N)).astype(np.int32)
o32, p32 = np.zeros((M, N), np.int32), np.zeros((M, N), np.int32)
int8_dot[(1,)](a8, b8, c32, o32, p32, M=M, N=N, K=K)
prod = a8.astype(np.int64) @ b8.astype(np.int64)
report("tl.dot int8 -> int32", np.array_equal(o32, prod))
report("tl.dot int8, int32 acc (wraps)", np.array_equal(p32, (prod + c32 + 2**31) % 2**32 - 2**31))

xu = np.concatenate([rng.integers(0, 2**64, 60, dtype=np.uint64), np.array([2**64 - 1, 2**63, 5, 2**64 - 1], np.uint64)])
yu = np.concatenate([rng.integers(1, 2**64, 30, dtype=np.uint64), rng.integers(1, 2**20, 30, dtype=np.uint64),
                     np.array([2**63 + 1, 2**63, 2**64 - 1, 1], np.uint64)])
qu, ru = np.zeros(64, np.uint64), np.zeros(64, np.uint64)
udiv64[(1,)](xu, yu, qu, ru, BLOCK=64)
report("uint64 // and %", np.array_equal(qu, xu // yu) and np.array_equal(ru, xu % yu))
xc = np.concatenate([xu[:60], np.array([2**63 + 2**39 + 1, 2**63 + 2**40, 2**64 - 1, 2**53 + 1], np.uint64)])
gc = np.concatenate([rng.uniform(0, 2**64, 60), np.array([2.0**63, 2.0**64 - 2**11, 0.0, 2.0**63 - 2**10])])
fc, uc = np.zeros(64, np.float32), np.zeros(64, np.uint64)
u64_floats[(1,)](xc, fc, gc, uc, BLOCK=64)
report("uint64 <-> float (uitofp, fptoui)", np.array_equal(fc, xc.astype(np.float32)) and np.array_equal(uc, gc.astype(np.uint64)))

R, C = 8, 64
kk = rng.integers(-5, 5, (R, C)).astype(np.int32)
mx, ix, cnt = np.zeros(R, np.int32), np.zeros(R, np.int32), np.zeros(R, np.int32)
cs, cm = np.zeros((R, C), np.int32), np.zeros((R, C), np.int32)
triples[(1,)](kk, mx, ix, cnt, cs, cm, R=R, C=C)
report("tl.reduce of three (max, first index, count)", np.array_equal(mx, kk.max(1)) and np.array_equal(ix, kk.argmax(1)) and
       np.array_equal(cnt, (kk == kk.max(1)[:, None]).sum(1)))
report("tl.associative_scan of three (sum, max)", np.array_equal(cs, np.cumsum(kk, 1)) and np.array_equal(cm, np.maximum.accumulate(kk, 1)))

finish("all ops match on the GPU")
