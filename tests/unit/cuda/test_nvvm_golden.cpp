// Golden NVVM IR of a few small kernels: the emitter's output for them is fixed text, so any change
// to the generated code shows up as a diff to review. DTSIM_UPDATE_GOLDEN=1 rewrites the files.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cuda_backend/Cuda.h"
#include "ir/TileParser.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The 1-based number and text of the first line where `a` and `b` differ.
std::string first_diff(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ga = static_cast<bool>(std::getline(x, la)), gb = static_cast<bool>(std::getline(y, lb));
    if (!ga && !gb) return "no difference";
    if (!ga || !gb || la != lb) return "line " + std::to_string(line) + ":\n  golden: " + (ga ? la : "<end>") + "\n  now:    " + (gb ? lb : "<end>");
  }
}
}  // namespace

TEST_CASE("NVVM IR of small kernels matches the golden files") {
  const bool update = std::getenv("DTSIM_UPDATE_GOLDEN") && std::string(std::getenv("DTSIM_UPDATE_GOLDEN")) == "1";
  // Small sizes keep the files readable: few slots per thread, one block each.
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases = {
      {"add", {{"n", "100"}, {"BLOCK", "128"}}},
      {"copy", {}},
      {"softmax", {{"BLOCK", "128"}, {"C", "100"}}},
  };
  for (const auto& c : cases) {
    const std::string& name = c.first;  // not a structured binding: clang 14 cannot capture those
    const auto& args = c.second;
    CAPTURE(name);
    // Registered under its repository-relative name: the IR names its source file.
    const std::string rel = "examples/" + name + ".tile";
    Module m = parse_tile(Sources::add(rel, slurp(fs::path(DTSIM_SOURCE_DIR) / rel)));
    Bindings b = bind_params(m, args);
    verify_module(m, b);
    const std::string ir = emit_nvvm(m, b);
    CHECK(compile_ptx(ir).find(".entry") != std::string::npos);  // the golden text is valid NVVM
    const fs::path golden = fs::path(DTSIM_SOURCE_DIR) / "tests/golden/nvvm" / (name + ".ll.expected");
    if (update) {
      fs::create_directories(golden.parent_path());
      std::ofstream(golden, std::ios::binary) << ir;
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(golden), "missing " << golden.string() << " (run with DTSIM_UPDATE_GOLDEN=1)");
    const std::string want = slurp(golden);
    CHECK_MESSAGE(want == ir, "NVVM IR differs from " << golden.string() << " at " << first_diff(want, ir)
                                                      << "\n(run with DTSIM_UPDATE_GOLDEN=1 to accept)");
  }
}
