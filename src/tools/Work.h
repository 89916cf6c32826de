// What a kernel must move and compute, for the GB/s and TFLOP/s figures of `dtsim bench`.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct KernelWork {
  std::vector<std::string> reads, writes;  // buffers the kernel loads from / stores to
  int64_t bytes_read = 0;                  // each read buffer counted once, whole
  int64_t bytes_written = 0;               // each written buffer counted once, whole
  int64_t bytes() const { return bytes_read + bytes_written; }
  bool has_dot = false;
  Scalar dot_dtype = Scalar::F32;  // input type of the first dot
  double dot_flops = 0;  // 2*M*N*K per dot executed, summed over every instance and loop trip
  bool flops_known = true;
  std::string flops_note;  // why dot_flops is unknown
};

// Bytes from the buffers' declared shapes. Dot FLOPs by walking every program instance through the
// kernel's scalar control flow (program ids, integer scalars, loop bounds, `if`/`return`), with
// tiles left unevaluated: exact as long as no branch or loop bound depends on loaded data (then
// flops_known is false). Stops with flops_known=false after `max_steps` statement visits.
KernelWork kernel_work(const Kernel& k, const Bindings& b, int64_t max_steps = 50'000'000);

// 2*M*N*K of every dot in the expression tree of `e`.
double dot_flops_in(const Expr& e);

}  // namespace dtsim
