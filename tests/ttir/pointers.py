"""Pointers made from integers (tt.int_to_ptr, tt.ptr_to_int) and tiles of rank above 4, read through
the installed Triton's frontend (TTIR) and run on dtsim, each checked against numpy: a kernel given
a table of addresses of arrays it is not passed (the package finds their memory), the sanitizer's
findings on addresses, and a sort of 1024 elements (Triton reshapes it to rank 10). Run with
`python -m dtsim pointers.py` where Triton is installed."""
import sys

import numpy as np
import triton
import triton.language as tl

import dtsim

failures = []


def check(name, ok, detail=""):
    print("%-36s %s %s" % (name, "ok" if ok else "FAILED", detail))
    if not ok:
        failures.append(name)


@triton.jit
def scaled_copies(src_addrs, dst_addrs, sizes, scale, BLOCK: tl.constexpr):
    # one program per (array, block): the arrays are reached only through their addresses
    g = tl.program_id(0)
    src = tl.load(src_addrs + g).to(tl.pointer_type(tl.float32))
    dst = tl.load(dst_addrs + g).to(tl.pointer_type(tl.float32))
    n = tl.load(sizes + g)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(dst + offs, tl.load(src + offs, mask=m) * scale, mask=m)


@triton.jit
def addresses_of(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (x_ptr + offs).to(tl.int64))


@triton.jit
def gather_rows(addr_ptr, out_ptr, BLOCK: tl.constexpr):
    # a tile of addresses into one array, masked where the address is null
    offs = tl.arange(0, BLOCK)
    a = tl.load(addr_ptr + offs)
    p = a.to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + offs, tl.load(p, mask=a != 0, other=-1.0))


@triton.jit
def sort_rows(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs)))


def main():
    rng = np.random.default_rng(0)
    srcs = [rng.standard_normal(n).astype(np.float32) for n in (100, 37, 256)]
    dsts = [np.zeros_like(s) for s in srcs]
    src_addrs = np.array([s.ctypes.data for s in srcs], np.int64)
    dst_addrs = np.array([d.ctypes.data for d in dsts], np.int64)
    sizes = np.array([s.size for s in srcs], np.int32)
    scaled_copies[(3,)](src_addrs, dst_addrs, sizes, 2.5, BLOCK=32)
    check("int_to_ptr: arrays by address", all(np.array_equal(d, s * np.float32(2.5)) for s, d in zip(srcs, dsts)))

    x = np.zeros(16, np.float32)
    out = np.zeros(16, np.int64)
    addresses_of[(1,)](x, out, BLOCK=16)
    check("ptr_to_int: the array's addresses", np.array_equal(out, x.ctypes.data + 4 * np.arange(16)))

    table = rng.standard_normal(64).astype(np.float32)
    addrs = table.ctypes.data + 4 * np.arange(0, 64, 4, dtype=np.int64)
    addrs[3] = 0
    got = np.zeros(16, np.float32)
    gather_rows[(1,)](addrs, got, BLOCK=16)
    want = table[::4].copy()
    want[3] = -1.0
    check("int_to_ptr: a tile of addresses", np.array_equal(got, want))

    # an address in no array: a located fault where the kernel converts it
    bad = addrs.copy()
    bad[5] = 8
    try:
        gather_rows[(1,)](bad, got, BLOCK=16)
        check("address in no buffer", False, "(no error)")
    except dtsim.KernelError as e:
        msg = str(e)
        check("address in no buffer", "pointers.py:" in msg and "out-of-bounds" in msg and "through address 0x8, which is in no buffer" in msg,
              msg.splitlines()[0])

    # a null lane that is not masked: out of bounds
    scaled = np.zeros(1, np.float32)
    try:
        scaled_copies[(1,)](np.array([0], np.int64), np.array([scaled.ctypes.data], np.int64), np.array([1], np.int32), 1.0, BLOCK=32)
        check("null address loaded", False, "(no finding)")
    except dtsim.KernelError as e:
        check("null address loaded", "pointers.py:33:" in str(e) and "through a null pointer" in str(e), str(e).splitlines()[0])

    if "dtsim" not in triton.__version__:  # dtsim's own reader has no tl.sort
        xs = rng.standard_normal(1024).astype(np.float32)
        srt = np.zeros_like(xs)
        sort_rows[(1,)](xs, srt, N=1024)
        check("tl.sort of 1024 (rank 10)", np.array_equal(srt, np.sort(xs)))

    if failures:
        print("FAILED:", ", ".join(failures))
        sys.exit(1)
    print("all pointer ops match")


main()
