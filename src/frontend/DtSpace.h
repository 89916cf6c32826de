// The schedule space of a `.dt` program, for `dtsim tune`: every combination of fusion choices
// (`fuse_at` levels, or materializing an intermediate), blocking and tile sizes (powers of two within
// limits), `map` orders and splits, `num_warps` and `num_stages`, numbered
// 0..size()-1 so that a search can enumerate it, sample it and step to neighbours. Membership does
// not promise legality: the lowering decides (a fused Func whose dim is not whole at its level is
// illegal), and the caller counts the reasons. docs/tune.md describes the space.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/DT.h"

namespace dtsim {

struct DtSpaceLimits {
  int64_t max_block = 4096;                   // largest block size of one dim
  int64_t max_tile = 1024;                    // largest tile extent of one dim
  int64_t max_row_tile = 16384;               // ... of a dim that a kernel without rdot reduces over:
                                              // the whole row held at once, one pass over memory
  int64_t min_tile = 16;                      // smallest tile extent (smaller blocks and dims: whole)
  std::vector<int> warps = {1, 2, 4, 8, 16, 32};  // num_warps choices
  std::vector<int> stages = {1, 2, 3, 4};     // num_stages choices of kernels with rdot (cp.async depth)
  std::vector<int> loop_stages = {1, 3};      // ... of the others (>= 2 loads a loop's next tile ahead)
  std::vector<int64_t> splits = {4, 8};       // map split factors (of the slowest dim listed)
  bool materialize = true;                    // may an intermediate Func be materialized
};

// One point of the space, as choices: which fusion configuration, and per kernel Func the subset of
// blocked dims and one digit per choice (see DtSpace.cpp for the order).
struct DtSpacePoint {
  size_t config = 0;
  std::vector<uint64_t> subset;                // per kernel: bit i = blockable dim i is blocked
  std::vector<std::vector<uint32_t>> digits;   // per kernel
};

class DtScheduleSpace {
 public:
  // The space of `p` at the sizes bound in p (bind_dt_sizes). UserError (located at the file's first
  // compile()) when the program compiles no Func.
  DtScheduleSpace(const DtProgram& p, const DtSpaceLimits& limits = {});
  ~DtScheduleSpace();
  DtScheduleSpace(const DtScheduleSpace&) = delete;
  DtScheduleSpace& operator=(const DtScheduleSpace&) = delete;

  uint64_t size() const;
  size_t configs() const;
  // "fusion: _sum at _softmax.x | materialized; kernel _softmax: block x (13), tile y (11), ..." in words.
  std::string describe() const;

  DtSpacePoint point(uint64_t index) const;
  uint64_t index(const DtSpacePoint& pt) const;
  // The points that differ from `index` in one choice by one step (a tile or block size doubled or
  // halved, a dim blocked by its tile or unblocked keeping its tile, the next map order, num_warps or
  // num_stages), within the same fusion configuration.
  std::vector<uint64_t> neighbours(uint64_t index) const;
  // The point nearest the program's own schedule (the one the space was built from): its fusions,
  // blocked dims, map order and split, and each size, warp and stage count rounded to the nearest
  // choice of the space. -1 when the space has no such fusion configuration (e.g. the program
  // materializes an intermediate and the space does not).
  int64_t own_schedule() const;
  // Schedules that dtsim's backends are known to run well, as points of the space (each choice
  // rounded to the nearest the space has), in the configuration of the program's own fusions (or the
  // first): for a kernel with rdot, square and wide output tiles (128x128, 128x256, 64x128 ...) with a
  // K tile of 32 or 64, 4 or 8 warps and a cp.async ring of 3 or 4; for a row reduction, one to a few
  // rows per instance, the reduced dim whole (up to max_row_tile: one pass over memory) or in tiles of
  // 512, 4 to 32 warps; for an elementwise kernel, wide blocks of the last dim (1024 to 4096). When
  // the program's own configuration materializes an intermediate or fuses it elsewhere, the row
  // reductions' seeds come first in the configuration that fuses every intermediate into the
  // compiled Func at its outermost dim (a whole row per instance in one kernel, read once). Distinct,
  // in a fixed order.
  std::vector<uint64_t> seeds() const;

  // A copy of the program (sizes as bound in the program given to the constructor) with schedule
  // `index`, its schedule resolved (not lowered: lower_dt decides the rest of its legality); `text`
  // receives the schedule calls as .dt text, one per line. UserError when the calls are illegal.
  std::shared_ptr<DtProgram> apply(uint64_t index, std::string* text) const;
  // The same schedule on a copy of `sized` (the same program with other sizes bound), unlowered:
  // for checking a candidate on small sizes.
  std::shared_ptr<DtProgram> apply_to(const DtProgram& sized, uint64_t index) const;

  // Per dim: the largest extent a schedule's instances and groups cover (block x split factor, or
  // tile), so a check size past it exercises a partial block and a partial group.
  std::map<std::string, int64_t> coverage(uint64_t index) const;

  // The largest tile of a schedule in elements: over every kernel, every access (its dims' tile
  // extents multiplied) and every Func's own tile. Searches prune schedules past a limit, since the
  // backends keep a tile in registers.
  int64_t largest_tile(uint64_t index) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dtsim
