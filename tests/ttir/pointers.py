"""Pointers made from integers (tt.int_to_ptr, tt.ptr_to_int) and tiles of rank above 4, read through
the installed Triton's frontend (TTIR) and run on dtsim, each checked against numpy: a kernel given
a table of addresses of arrays it is not passed (the package finds their memory), one pointer tile
whose lanes point into several arrays (rows scattered to peer arrays, loads, atomics and a
compare-and-swap lane by lane, a where() between two arrays and the addresses of such a tile), the
sanitizer's findings on addresses, and a sort of 1024 elements (Triton reshapes it to rank 10). Run with
`python -m dtsim pointers.py` where Triton is installed."""

import sys

import numpy as np
import triton
import triton.language as tl

import dtsim
from ttir_check import finish, report

if dtsim.config()["backend"] == "cuda":  # the kernels here read numpy arrays' host addresses
    print("skipped: host addresses loaded from memory are no device addresses (backend='cuda' copies the arrays)")
    sys.exit(77)


def line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


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
def peer_rows(src, table, which, dst_back, N: tl.constexpr, R: tl.constexpr):
    # row r goes to the array whose address is table[which[r]]: one pointer tile, several arrays;
    # a null address (row R-1) is masked off
    rows = tl.arange(0, R)
    cols = tl.arange(0, N)
    a = tl.load(table + tl.load(which + rows))
    dst = a.to(tl.pointer_type(tl.float32))[:, None] + cols[None, :]
    live = (a != 0)[:, None] & (cols[None, :] < N)
    tl.store(dst, tl.load(src + rows[:, None] * N + cols[None, :]) * 2.0, mask=live)
    back = tl.load(dst, mask=live, other=-5.0)  # read back through the same lanes
    tl.store(dst_back + rows[:, None] * N + cols[None, :], back)


@triton.jit
def peer_atomics(table, which, old_out, cas_out, R: tl.constexpr):
    rows = tl.arange(0, R)
    p = tl.load(table + tl.load(which + rows)).to(tl.pointer_type(tl.int32))
    tl.store(old_out + rows, tl.atomic_add(p, rows + 1))
    tl.store(cas_out + rows, tl.atomic_cas(p + 1, tl.zeros([R], tl.int32), rows + 10))


@triton.jit
def interleave_two(a_ptr, b_ptr, out_ptr, addr_out, N: tl.constexpr):
    # lane by lane between two arrays: even lanes read a, odd lanes b
    o = tl.arange(0, N)
    p = tl.where(o % 2 == 0, a_ptr + o, b_ptr + o)
    tl.store(out_ptr + o, tl.load(p))
    tl.store(p, o.to(tl.float32))
    tl.store(addr_out + o, p.to(tl.int64))


@triton.jit
def peer_past_end(table, N: tl.constexpr, R: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, N)
    p = tl.load(table + rows).to(tl.pointer_type(tl.float32))[:, None] + cols[None, :]
    tl.store(p, 1.0)  # the last array is shorter than N


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
    report("int_to_ptr: arrays by address", all(np.array_equal(d, s * np.float32(2.5)) for s, d in zip(srcs, dsts)))

    x = np.zeros(16, np.float32)
    out = np.zeros(16, np.int64)
    addresses_of[(1,)](x, out, BLOCK=16)
    report("ptr_to_int: the array's addresses", np.array_equal(out, x.ctypes.data + 4 * np.arange(16)))

    table = rng.standard_normal(64).astype(np.float32)
    addrs = table.ctypes.data + 4 * np.arange(0, 64, 4, dtype=np.int64)
    addrs[3] = 0
    got = np.zeros(16, np.float32)
    gather_rows[(1,)](addrs, got, BLOCK=16)
    want = table[::4].copy()
    want[3] = -1.0
    report("int_to_ptr: a tile of addresses", np.array_equal(got, want))

    # an address in no array: a located fault where the kernel converts it
    bad = addrs.copy()
    bad[5] = 8
    try:
        gather_rows[(1,)](bad, got, BLOCK=16)
        report("address in no buffer", False, "(no error)")
    except dtsim.KernelError as e:
        msg = str(e)
        report("address in no buffer", "pointers.py:" in msg and "out-of-bounds" in msg and "through address 0x8, which is in no buffer" in msg,
               msg.splitlines()[0])

    # a null lane that is not masked: out of bounds
    scaled = np.zeros(1, np.float32)
    try:
        scaled_copies[(1,)](np.array([0], np.int64), np.array([scaled.ctypes.data], np.int64), np.array([1], np.int32), 1.0, BLOCK=32)
        report("null address loaded", False, "(no finding)")
    except dtsim.KernelError as e:
        report("null address loaded", "pointers.py:%d:" % line_of("tl.store(dst + offs, tl.load(src + offs") in str(e) and "through a null pointer" in str(e), str(e).splitlines()[0])

    # one pointer tile into several arrays
    N, R = 8, 4
    peers = [np.zeros(N, np.float32) for _ in range(3)]
    ptable = np.array([b.ctypes.data for b in peers] + [0], np.int64)
    which = np.array([2, 0, 1, 3], np.int64)
    rows_src = rng.standard_normal((R, N)).astype(np.float32)
    back = np.zeros((R, N), np.float32)
    peer_rows[(1,)](rows_src, ptable, which, back, N=N, R=R)
    want_back = rows_src * 2
    want_back[R - 1] = -5.0
    report("pointer tile into several arrays", all(np.array_equal(peers[which[r]], rows_src[r] * 2) for r in range(R - 1))
           and np.array_equal(back, want_back))

    counters = [np.array([100 * k, 0], np.int32) for k in range(3)]
    ctable = np.array([c.ctypes.data for c in counters], np.int64)
    cwhich = np.array([1, 2, 1, 0], np.int64)
    old, casd = np.zeros(4, np.int32), np.zeros(4, np.int32)
    peer_atomics[(1,)](ctable, cwhich, old, casd, R=4)
    # lane order: counter 1 gets +1 then +3; counter 2 +2; counter 0 +4; the cas of each counter's
    # second word succeeds once (the first lane to reach it), later lanes see its value
    report("atomics lane by lane into several arrays",
           [int(c[0]) for c in counters] == [4, 104, 202] and list(old) == [100, 200, 101, 0]
           and [int(c[1]) for c in counters] == [13, 10, 11] and list(casd) == [0, 0, 10, 0], "%s %s %s" % (counters, old, casd))

    a = np.arange(8, dtype=np.float32) + 100
    b = np.arange(8, dtype=np.float32) + 200
    a0, b0 = a.copy(), b.copy()
    got = np.zeros(8, np.float32)
    paddr = np.zeros(8, np.int64)
    interleave_two[(1,)](a, b, got, paddr, N=8)
    even = np.arange(8) % 2 == 0
    report("where() between two arrays lane by lane", np.array_equal(got, np.where(even, a0, b0))
           and np.array_equal(a, np.where(even, np.arange(8), a0)) and np.array_equal(b, np.where(even, b0, np.arange(8)))
           and np.array_equal(paddr, np.where(even, a.ctypes.data, b.ctypes.data) + 4 * np.arange(8)), str(got))

    short = [np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(6, np.float32)]
    try:
        peer_past_end[(1,)](np.array([x.ctypes.data for x in short], np.int64), N=8, R=4)
        report("past the end of one array of several", False, "(no finding)")
    except dtsim.KernelError as e:
        msg = str(e)
        report("past the end of one array of several", "pointers.py:%d:" % line_of("tl.store(p, 1.0)") in msg and "out-of-bounds store" in msg
               and "f32[6]; first bad lane [3, 6]" in msg,
               msg.splitlines()[0])

    xs = rng.standard_normal(1024).astype(np.float32)
    srt = np.zeros_like(xs)
    sort_rows[(1,)](xs, srt, N=1024)
    report("tl.sort of 1024 (rank 10)", np.array_equal(srt, np.sort(xs)))

    finish("all pointer ops match")


main()
