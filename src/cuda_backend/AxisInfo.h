// Backend stage 2: what is known about an integer or pointer tile along its last (contiguous)
// dimension, as Triton's axis analysis: used to turn per-element global accesses into 16-byte vectors.
//   contig: the values come in runs of `contig` consecutive elements that increase by one (runs start
//           at multiples of `contig` along the dimension);
//   div:    every run starts at a value divisible by `div` (in bytes for pointers), in every row of
//           the tile (a value that varies along an earlier dimension must be divisible everywhere);
//   cst:    the values come in runs of `cst` equal elements (runs start at multiples of `cst`).
// All three are powers of two. Scalars are constant along any dimension. Runtime integer parameters
// are specialized on their value's divisibility (up to 16) when the kernel is compiled for a launch,
// and buffers are at least 16-byte aligned (the driver's allocations are 256-byte aligned).
#pragma once

#include <algorithm>
#include <cstdint>

namespace dtsim::nvvm {

struct AxisInfo {
  static constexpr int64_t kMax = int64_t(1) << 30;
  int64_t contig = 1;
  int64_t div = 1;
  int64_t cst = 1;
  static AxisInfo scalar(int64_t div) { return AxisInfo{1, div, kMax}; }
};

// The largest power of two dividing v (kMax for 0), capped at kMax.
inline int64_t pow2_factor(int64_t v) {
  if (v == 0) return AxisInfo::kMax;
  int64_t p = 1;
  while (p < AxisInfo::kMax && v % (p * 2) == 0) p *= 2;
  return p;
}

}  // namespace dtsim::nvvm
