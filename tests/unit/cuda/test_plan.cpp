// The CUDA backend's plan (Plan.h, `emit --plan`), checked without a GPU: the shared-memory bound
// the plan decides with covers what emission then uses, and the FMA-ring fallback is the plan's.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "ir/Diag.h"
#include "ir/TileParser.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {

struct Planned {
  std::string plan;
  NvvmModule nm;
};

Planned plan_and_emit(const std::string& file, const CudaOptions& opt) {
  Module m = parse_tile_file(file);
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  return Planned{emit_plan(m, b, opt), emit_nvvm_module(m, b, opt)};
}

// The "planned total: at most N bytes" of each kernel, in order.
std::vector<int64_t> planned_totals(const std::string& plan) {
  std::vector<int64_t> out;
  const std::string key = "planned total: at most ";
  for (size_t at = plan.find(key); at != std::string::npos; at = plan.find(key, at + 1))
    out.push_back(std::stoll(plan.substr(at + key.size())));
  return out;
}

}  // namespace

TEST_CASE("the plan's shared-memory bound covers what emission uses") {
  std::vector<std::string> files;
  for (const char* dir : {"examples", "bench/gpu", "tests/gpu", "tests/unit/cuda"})
    for (const auto& e : fs::directory_iterator(fs::path(DTSIM_SOURCE_DIR) / dir))
      if (e.path().extension() == ".tile") files.push_back(e.path().string());
  REQUIRE(files.size() > 10);
  int kernels = 0;
  for (const std::string& f : files)
    for (const char* arch : {"sm_80", "sm_86", "sm_90", "sm_90a"})
      for (bool checks : {false, true}) {
        CAPTURE(f);
        CAPTURE(arch);
        CAPTURE(checks);
        CudaOptions opt;
        opt.arch = arch;
        opt.bounds_checks = checks;
        Planned p;
        try {
          p = plan_and_emit(f, opt);
        } catch (const UserError&) {
          continue;  // not for this target (fp8 before sm_89)
        }
        std::vector<int64_t> totals = planned_totals(p.plan);
        REQUIRE(totals.size() == p.nm.kernels.size());
        for (size_t i = 0; i < totals.size(); ++i) {
          CHECK(p.nm.kernels[i].smem_bytes <= totals[i]);
          ++kernels;
        }
      }
  CHECK(kernels > 100);
}

TEST_CASE("an FMA ring over the target's shared memory is dropped by the plan") {
  const std::string f = std::string(DTSIM_SOURCE_DIR) + "/bench/gpu/matmul_f32.tile";
  CudaOptions opt;
  opt.arch = "sm_90";
  Planned fits = plan_and_emit(f, opt);
  CHECK(fits.plan.find("fallback:") == std::string::npos);
  CHECK(fits.plan.find("pipelined: cp.async ring of 3 stages x 34816 bytes") != std::string::npos);
  CHECK(fits.nm.kernels[0].fma_rings == 1);
  // sm_86 has 101376 bytes: a ring of 3 x 34816 does not fit; the loop loads through registers.
  opt.arch = "sm_86";
  Planned over = plan_and_emit(f, opt);
  CHECK(over.plan.find("fallback: the FMA ring of") != std::string::npos);
  CHECK(over.plan.find("pipelined:") == std::string::npos);
  CHECK(over.nm.kernels[0].fma_rings == 0);
  CHECK(over.nm.kernels[0].pipelined_loops == 0);
  CHECK(over.nm.kernels[0].smem_bytes <= 101376);
}
