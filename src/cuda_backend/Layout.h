// Backend stage 1: distributed layouts. A layout says which thread of a CTA holds which element of a
// tile in which register, as a linear map over bits (as in Triton's linear layouts):
//
//   coords(reg r, lane l, warp w) = OR of reg[i] for the set bits i of r
//                                 | OR of lane[i] for the set bits of l | OR of warp[i] for those of w
//
// Each basis vector is a coordinate vector of the tile's shape with at most one bit set in total
// (extents are powers of two); a zero vector means the bit does not move the coordinate: a zero lane
// or warp basis replicates the element over those threads, a zero register basis repeats a value in
// two registers. Because no two non-zero bases share a bit, OR is also the sum.
//
// Kinds in use:
//   blocked(shape): the default layout of a tile: `vec` contiguous elements per thread along the last
//     dimension (16-byte vectors for f32), the 32 lanes of a warp next along the last dimension, then
//     the earlier ones, the warps likewise, then repetitions in registers (Triton's BlockedEncoding
//     with order = [rank-1, ..., 0]).
//   slice(parent, axis): the result of reducing `parent` over `axis`: the parent's bases with that
//     component removed; registers that only moved along the axis are gone, lanes and warps that did
//     become replicated. Broadcasting a slice back over the axis (`v[:, None]`) moves no data.
//   need maps: the coordinates in an operand that a consumer laid out as L reads, as a layout of the
//     operand's shape: broadcast (zeroes the broadcast dims), expand_dims (drops the unit dim),
//     reshape (re-splits the row-major flat index), trans (swaps). A value already held in layout V
//     can be read in layout N without moving data when N's lane and warp bases equal V's and each of
//     N's register bases is one of V's or zero (`rename`); otherwise it goes through shared memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace dtsim::nvvm {

using Coord = std::vector<int64_t>;

struct Dist {
  Shape shape;               // the tile's shape (empty: a scalar, held by every thread)
  std::vector<Coord> reg;    // one basis per register-index bit
  std::vector<Coord> lane;   // 5 bases (32 lanes)
  std::vector<Coord> warp;   // log2(num_warps) bases

  int nregs() const { return 1 << reg.size(); }
  int rank() const { return static_cast<int>(shape.size()); }
  Coord reg_coord(int r) const;  // OR of the register bases of r's set bits
  bool operator==(const Dist&) const = default;
  // Threads that only repeat what another thread holds: lane/warp bits whose basis is zero.
  uint32_t replicated_lane_mask() const;
  uint32_t replicated_warp_mask() const;
  // "blocked{vec=[1, 4], lanes=[1, 32], warps=[4, 1], regs=8}" or "slice/linear{...}" for others.
  std::string str() const;
};

// The default layout of a tile of `shape` on `num_warps` warps (vec = 0: the default vector width,
// min(4, elements per thread); otherwise `vec` contiguous elements per thread, as far as they fit).
Dist blocked(const Shape& shape, int num_warps, int vec = 0);
bool is_blocked(const Dist& d, int num_warps);
// The accumulator of mma.sync.m16n8k16 (f32) on a [M, N] tile: `wm` x `wn` warps each own a block
// of M/wm rows and N/wn columns, tiled by 16x8 instruction tiles; lane l holds rows l/4 and l/4+8,
// columns 2(l%4) and 2(l%4)+1 of each (registers c0..c3 in the instruction's order).
Dist mma_accumulator(int64_t M, int64_t N, int wm, int wn);
// The accumulator of wgmma m64nNk16 (f32) on a [M, N] tile, M = 64 * R * num_warps / 4: warpgroup g
// owns rows 64Rg .. 64R(g+1) - 1 as R tiles of 64 rows; in each, warp w of the group holds rows
// 16w .. 16w + 15 as mma.sync's 16x8 tiles side by side (registers of tile r: r * N/2 ...).
Dist wgmma_accumulator(int64_t M, int64_t N, int num_warps);
// The accumulator of the FMA dot on a [M, N] tile: each thread holds a block of up to 8 x 8
// elements (as square as the tile allows, in runs of up to 4 consecutive columns and rows), lanes
// spread over columns (bit 1 over rows), warps over rows then columns, so a thread reads a few
// 16-byte vectors of A^T and B per k step for many multiply-adds, and a warp's reads are
// consecutive and shared by lane pairs.
Dist fma_accumulator(int64_t M, int64_t N, int num_warps);
// `parent` reduced over `axis`.
Dist slice(const Dist& parent, int axis);
// Need maps: the layout, in the operand's coordinates, of what a consumer laid out as `d` reads.
Dist need_broadcast(const Dist& d, const Shape& operand);  // numpy broadcasting, aligned right
Dist need_expand_dims(const Dist& d, int axis);            // d is the expanded shape
Dist need_reshape(const Dist& d, const Shape& operand);
Dist need_trans(const Dist& d, const std::vector<int64_t>& order);  // out dim i = operand dim order[i]
// Register r with the bits of zero register bases cleared: the first register holding r's element.
int first_copy(const Dist& d, int r);
// How many consecutive registers (from register 0) hold consecutive elements of the last dimension.
int vector_run(const Dist& d);
// When `need` can be read from registers held in `have` without moving data: for each register of
// `need`, the register of `have` that holds the same element.
std::optional<std::vector<int>> rename(const Dist& have, const Dist& need);


// The shared-memory tile through which a value moves between two layouts (KernelEmitter::convert).
// The tile is viewed as [rows, cols] (cols: its last dimension, rows: the others flattened), `elem`
// bytes an element, element (row, col) at byte
//   swizzled (padded false): row * cols * elem + (chunk ^ phase) * 16 + col * elem % 16, where
//     chunk = col * elem / 16 is the element's 16-byte chunk of its row and
//     phase = (row / per_phase) % max_phase (max_phase 1: plain row-major; chunks XOR-permuted
//     within a row, so a column of 16-byte pieces spreads over the 32 banks);
//   padded: (flat + flat / 32) * elem, one element of padding every 32 (flat = row * cols + col).
// Either way the offset is linear over bits: the offset of an element whose coordinate bits are
// the union of two disjoint sets is the XOR of theirs, so a thread's offsets are one per-thread
// value XOR a constant per register. The holders store `store_vec` consecutive elements of a row at
// once and the readers load `load_vec` (at most 16 bytes; 1 on the padded tile).
struct Exchange {
  Shape shape;
  int64_t rows = 1, cols = 1;
  int elem = 4;
  bool padded = true;
  int per_phase = 1, max_phase = 1;
  int store_vec = 1, load_vec = 1;
  // The holders store with stmatrix.x4 (sm_90, 2-byte elements of an mma/wgmma accumulator): per
  // instruction, four 8x8 blocks whose 16-byte rows lane l addresses (layout stmatrix_rows).
  bool stmatrix = false;
  // Shared-memory wavefronts of one conversion (every warp's accesses, bank_count), and the least
  // the same bytes could take.
  int64_t store_wavefronts = 0, store_ideal = 0, load_wavefronts = 0, load_ideal = 0;
  int64_t offset(const Coord& c) const;  // byte offset of the element at coordinates c
  int64_t bytes() const;                 // the tile's size
  std::string str() const;               // "swizzled 16-byte chunks (per phase 1, 8 phases), ..."
};
// Shared-memory wavefronts of the accesses that the threads of layout `d` make to tile `x`, `vec`
// consecutive elements from each group of `step` registers (default: vec; one instruction per
// group that a thread's first copy holds): per warp and instruction, the most distinct 4-byte words that any one of the 32 banks
// serves (a bank serves one word per wavefront; lanes reading one word share it); `ideal`: the
// distinct bytes / 128, rounded up. Summed over the warps and instructions.
struct BankCount {
  int64_t wavefronts = 0, ideal = 0;
};
BankCount bank_count(const Exchange& x, const Dist& d, int vec, int step = 0);
// The exchange tile for moving a value of `elem`-byte elements from layout `from` to layout `to`:
// elements of 2 or 4 bytes on a swizzle (per_phase, max_phase over powers of two, max_phase at most
// the 16-byte chunks of a row) or unswizzled, whichever takes the fewest wavefronts in all (stores
// plus loads; ties: the unpadded tile, then the fewer phases); other sizes, the padded tile.
Exchange plan_exchange(const Dist& from, const Dist& to, int elem, bool has_stmatrix = false);
// Where `from` holds 2-byte elements as mma.sync's and wgmma's accumulator fragments (registers 0-1
// two columns, lanes 4 rows of 4 column pairs, register bit 1 eight rows down, bit 2 eight columns
// on): the layout of stmatrix.x4's row addresses, one 8-element row a lane and register group (lanes
// 0-7 the rows of the first 8x8 block, lane bits 3 and 4 the next blocks down and across), its
// registers `from`'s registers 8g .. 8g + 7 for group g.
std::optional<Dist> stmatrix_rows(const Dist& from);

}  // namespace dtsim::nvvm
