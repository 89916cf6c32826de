// The Triton emitter: a verified tile-IR module -> a Python module with one @triton.jit function per
// kernel (same names, same schedule), a launch() taking torch tensors, and a __main__ that runs it on
// dtsim's seeded random inputs (or .npy files) and prints the same summary lines as `dtsim run`.
// Sits above the IR only; knows no executor.
#pragma once

#include <string>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct TritonEmitOptions {
  std::string source;        // the file the module came from (for the header comment)
  std::string tool_version;  // "dtsim 0.1.0"
  // The schedule flags of the command (1: --warp-specialize / --persistent, -1: --no-..., 0: as each
  // kernel asks; persistent_ctas: --persistent-ctas N), winning over the kernels' own options as they
  // do in the CUDA plan, so that the module has the schedule dtsim runs.
  int warp_specialize = 0, persistent = 0;
  int64_t persistent_ctas = 0;
};

// Python source for a verified module `m` bound with `b` (the bound values become the defaults of
// launch() and of the module's command line). An IR construct with no Triton form (a dot with a
// dimension below 16, `return` inside a loop) is a UserError at its location naming the op.
std::string emit_triton(const Module& m, const Bindings& b, const TritonEmitOptions& opt = {});

}  // namespace dtsim
