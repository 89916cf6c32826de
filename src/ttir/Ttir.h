// The TTIR frontend: a kernel as Triton's own frontend defines it -> tile IR (docs/triton.md).
//
// Triton's Python frontend (the installed `triton` package) turns a launched @triton.jit function,
// specialized for its arguments, into TTIR: MLIR text of the `tt`, `arith`, `math` and `scf` dialects
// in which constexprs are folded, helpers inlined and Python constructs (min/max, and/or, dtype
// introspection, helpers from any module) already resolved. This reader parses that text and lowers
// each op to the tile IR; every IR node keeps the `.py` location Triton recorded (`loc(...)`), and
// variables are named after the Python variables (`%offsets` -> `offsets`), so findings, breakpoints
// and the debugger speak of the user's source.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace dtsim {

// One pointer argument of the launch: the buffer it addresses (element type and shape), and the
// element of the buffer the pointer addresses: 0, or for a view with negative strides (bound as the
// span from its lowest to its highest element) the position of the view's first element.
struct TtirBuffer {
  std::string name;
  Scalar dtype = Scalar::F32;
  Shape shape;
  int64_t start = 0;
};

struct TtirLaunch {
  std::string kernel;                    // the tt.func to launch ("" = the public one)
  std::vector<std::string> arg_names;    // the kernel's runtime parameters in order (tt.func's arguments)
  std::vector<TtirBuffer> buffers;       // by name: every pointer parameter
  std::vector<int64_t> grid;             // 1-3 extents
  int num_warps = 4;
  int num_stages = 3;
  bool debug = false;                    // device asserts are compiled (debug=True / TRITON_DEBUG=1)
  // host TensorDescriptor parameters made with padding="nan" (a runtime property in Triton, absent
  // from TTIR): their loads' lanes outside the tensor read NaN, not 0
  std::set<std::string> nan_padded;
  bool hint_checks = false;              // tt.divisibility / contiguity / constancy checked (ir/Hints.h; the driver sets it from LaunchSpec::hint_checks)
};

// Parses TTIR `text` (registered under `name` for messages about the text itself) and lowers the
// launched function. UserError at the op's Python location for ops the tile IR cannot express yet
// ("'tt.atomic_rmw' is not supported yet"), at the text's own line for malformed text.
Module lower_ttir(const std::string& text, const std::string& name, const TtirLaunch& launch);

}  // namespace dtsim
