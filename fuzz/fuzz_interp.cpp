// libFuzzer target: the interpreter and its sanitizer on programs that parse and verify, on tiny
// grids with small buffers: at most 64 program instances per kernel, 4096 elements per buffer and
// per tile, 2000 statements per instance (--max-steps). Findings and runtime faults are answers; a crash, a
// sanitizer report from ASan/UBSan or an escaping exception other than UserError is a finding.
#include "fuzz/FuzzUtil.h"
#include "host/Buffers.h"
#include "interp/Interp.h"
#include "interp/RunControl.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"

#include <sstream>

using namespace dtsim;

namespace {

bool small_tiles(const Expr& e) {
  if (e.type.numel() > 4096) return false;
  for (const ExprP& a : e.args)
    if (a && !small_tiles(*a)) return false;
  return true;
}

bool small_enough(const Module& m, const Bindings& b) {
  for (const Kernel& k : m.kernels) {
    for (const Stmt* s : k.stmts)
      for (const ExprP& a : s->args)
        if (a && !small_tiles(*a)) return false;
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzSource src(data, size, "<fuzz>.tile");
  try {
    Module m = parse_tile(src.id);
    Bindings b = bind_params(m, {});
    verify_module(m, b);
    if (!small_enough(m, b)) return 0;
    // Both execution forms: they must agree bit for bit on the buffers and on the findings.
    std::vector<Buffers> results;
    std::vector<int64_t> counts;
    for (int fast = 0; fast < 2; ++fast) {
      Buffers bufs = make_buffers(m, b, 1);
      std::ostringstream prints;
      RunControl ctl;
      ctl.max_steps = 2000;
      InterpOptions opt;
      opt.out = &prints;
      opt.keep_going = true;
      opt.fast = fast == 1;
      opt.control = &ctl;
      int64_t count = -1;
      try {
        count = run_module(m, b, bufs, opt).findings_count;
      } catch (const RuntimeFault&) {
      }
      results.push_back(std::move(bufs));
      counts.push_back(count);
    }
    if (counts[0] != counts[1]) __builtin_trap();
    for (size_t i = 0; i < results[0].list.size(); ++i)
      if (results[0].list[i].bytes != results[1].list[i].bytes) __builtin_trap();
  } catch (const UserError&) {
  }
  return 0;
}
