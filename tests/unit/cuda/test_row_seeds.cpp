// The row reductions of the slides (softmax, layernorm, rmsnorm at their sizes): the schedule space's
// seeds hold "one instance per row, the whole row as one tile, 4/8/16/32 warps, in one kernel", and
// that schedule's PTX reads every input element once and writes every output element once (16-byte
// accesses: row / (threads * 4) per thread and array), the row in registers (no spilled row).
#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "cuda_backend/Cuda.h"
#include "driver/Driver.h"
#include "frontend/DtAst.h"
#include "frontend/DtSpace.h"

using namespace dtsim;

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

struct RowCase {
  const char* file;
  const char* func;   // the output Func
  int64_t rows, row;  // the slides' sizes
  int row_inputs;     // arrays read along the row (the input, and w, b)
  int row_outputs;    // arrays written along the row
};

}  // namespace

TEST_CASE("row reductions: the seeds hold one instance per whole row in one kernel, and its PTX reads and writes each element once") {
  const RowCase cases[] = {
      {"examples/softmax.dt", "_softmax", 32768, 4096, 1, 1},
      {"examples/layernorm.dt", "ln", 8192, 8192, 3, 1},
      {"examples/rmsnorm_materialized.dt", "rms", 8192, 8192, 2, 1},
  };
  for (const RowCase& c : cases) {
    CAPTURE(c.file);
    LaunchSpec spec;
    spec.args = {{"x_SIZE", std::to_string(c.rows)}, {"y_SIZE", std::to_string(c.row)}};
    Program p = compile(Source{std::string(DTSIM_SOURCE_DIR) + "/" + c.file, {}, {}}, spec);
    DtScheduleSpace space(*p.dt);
    std::string f = c.func;
    std::set<int> warps_seen;
    for (uint64_t seed : space.seeds()) {
      std::string text;
      auto q = space.apply(seed, &text);
      // one instance per row, the row whole, every intermediate fused at x (no other kernel)
      if (text.find(f + ".block(x:1);") == std::string::npos || text.find(f + ".tensorize(y:0);") == std::string::npos) continue;
      bool one_kernel = true;
      for (const DtSymbol& s : p.dt->syms)
        if (s.kind == DtSymKind::Func && s.name != f && text.find(s.name + ".fuse_at(" + f + ", x);") == std::string::npos) one_kernel = false;
      if (!one_kernel) continue;
      Program cand = compile_scheduled(p.path, q, {});
      REQUIRE(cand.module.kernels.size() == 1);
      int warps = cand.module.kernels[0].num_warps;
      CAPTURE(text);
      warps_seen.insert(warps);
      CudaOptions opt;
      opt.arch = "sm_90";
      std::string ptx = compile_ptx(emit_nvvm(cand.module, cand.bindings, opt), opt);
      int per_thread_vectors = static_cast<int>(c.row / (32 * warps * 4));  // float4 accesses of one array
      CHECK(count(ptx, "ld.global") == c.row_inputs * per_thread_vectors);
      CHECK(count(ptx, "ld.global.v4.f32") == c.row_inputs * per_thread_vectors);
      CHECK(count(ptx, "st.global") == c.row_outputs * per_thread_vectors);
      CHECK(count(ptx, "st.global.v4.f32") == c.row_outputs * per_thread_vectors);
      if (warps >= 8) {  // at most 32 values of each array per thread: the row stays in registers
        PtxasResult r = run_ptxas(ptx, "sm_90", true);
        INFO(r.log);
        REQUIRE(r.available);
        CHECK(r.ok);
        std::smatch m;
        REQUIRE(std::regex_search(r.log, m, std::regex("(\\d+) bytes spill stores")));
        CHECK(std::stoi(m[1]) < 16);  // (ptxas spills a word of rmsnorm's at 16 warps; a row would be >= 64 bytes)
      }
    }
    CHECK(warps_seen == std::set<int>{4, 8, 16, 32});
  }
}
