# Sums of the segments of a ragged (jagged) array: segment s is x[offsets[s]:offsets[s + 1]], as in
# a CSR matrix's rows. Each program instance walks its segment in BLOCK-wide chunks with a `while`
# whose condition depends on loaded data, so the trip count differs per instance (zero for an
# empty segment).
#   dtsim run examples/triton/ragged_sum.py --in x_ptr=x.npy --in offsets_ptr=offsets.npy \
#       --buf out_ptr=f32[S] --buf trips_ptr=i32[S] --grid S --out out_ptr=sums.npy
import triton
import triton.language as tl


@triton.jit
def _has_more(off, end):
    """Whether [off, end) still holds elements."""
    n_left = end - off
    return n_left > 0


@triton.jit
def ragged_sum_kernel(x_ptr, offsets_ptr, out_ptr, trips_ptr, BLOCK: tl.constexpr = 16):
    seg = tl.program_id(0)
    start = tl.load(offsets_ptr + seg)
    end = tl.load(offsets_ptr + seg + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    off = start
    trips = 0
    while _has_more(off, end):
        idx = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + idx, mask=idx < end, other=0.0)
        off += BLOCK
        trips += 1
    tl.store(out_ptr + seg, tl.sum(acc, axis=0))
    tl.store(trips_ptr + seg, trips)
