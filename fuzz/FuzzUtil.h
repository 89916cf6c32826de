// Shared by the fuzz targets: an input as a registered source that is dropped again afterwards, so
// that millions of iterations do not grow the source registry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "host/Buffers.h"
#include "interp/Interp.h"
#include "interp/RunControl.h"
#include "ir/Diag.h"

namespace dtsim::fuzz {

struct FuzzSource {
  int id;
  FuzzSource(const uint8_t* data, size_t size, const char* name)
      : id(Sources::add(name, std::string(reinterpret_cast<const char*>(data), size))) {}
  ~FuzzSource() { Sources::drop_from(id); }
};

// Whether a verified module is small enough to interpret per input: at most 64 program instances
// per kernel, 4096 elements per buffer and per tile (as the fuzz targets that run it promise).
inline bool small_tile_exprs(const Expr& e) {
  if (e.type.numel() > 4096) return false;
  for (const ExprP& a : e.args)
    if (a && !small_tile_exprs(*a)) return false;
  return true;
}

inline bool small_enough(const Module& m, const Bindings& b) {
  for (const Kernel& k : m.kernels) {
    for (const Stmt* s : k.stmts)
      for (const ExprP& a : s->args)
        if (a && !small_tile_exprs(*a)) return false;
    std::array<int64_t, 3> g = launch_grid(k, b);
    if (g[0] * g[1] * g[2] > 64) return false;
    for (const Param& p : k.params) {
      if (p.kind != ParamKind::Pointer) continue;
      int64_t n = 1;
      for (const ExprP& d : p.shape) {
        ScalarValue v = eval_param_expr(d, b);
        if (v.dtype_is_float() || v.i < 0 || v.i > 4096) return false;
        n *= v.i;
        if (n > 4096) return false;
      }
    }
  }
  return true;
}

// Runs a small module (small_enough) on the interpreter as the fuzz targets do: buffers from seed 1,
// prints captured, every finding kept, at most 2000 statements per instance; `fast` picks the
// execution form. Returns the number of findings (-1: the run ended in a runtime fault) and leaves
// the buffers in `bufs`.
inline int64_t run_small(const Module& m, const Bindings& b, bool fast, Buffers& bufs) {
  bufs = make_buffers(m, b, 1);
  std::ostringstream prints;
  RunControl ctl;
  ctl.max_steps = 2000;
  InterpOptions opt;
  opt.out = &prints;
  opt.keep_going = true;
  opt.fast = fast;
  opt.control = &ctl;
  try {
    return run_module(m, b, bufs, opt).findings_count;
  } catch (const RuntimeFault&) {
    return -1;
  }
}

}  // namespace dtsim::fuzz
