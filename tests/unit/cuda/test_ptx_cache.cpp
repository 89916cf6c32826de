// The PTX cache of compile_ptx (CudaOptions::ptx_cache_dir, used by `dtsim tune`): a second
// compilation of the same IR for the same target is read back, the same text; another target, other
// math flags or other IR (another constexpr baked in) compile anew; an unusable cache file is compiled over.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cuda_backend/Cuda.h"
#include "ir/TileParser.h"

using namespace dtsim;

namespace {
std::string add_ir(const char* block) {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/examples/add.tile");
  Bindings b = bind_params(m, {{"BLOCK", block}});
  verify_module(m, b);
  return emit_nvvm(m, b);
}
}  // namespace

TEST_CASE("compiled PTX is cached by IR, target and math flags") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtsim-ptx-cache-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  CudaOptions opt;
  opt.arch = "sm_80";
  opt.ptx_cache_dir = dir.string();
  std::string ir = add_ir("1024");
  PtxCacheStats s0 = ptx_cache_stats();
  std::string first = compile_ptx(ir, opt);
  PtxCacheStats s1 = ptx_cache_stats();
  CHECK(s1.misses == s0.misses + 1);
  CHECK(s1.hits == s0.hits);
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  std::string again = compile_ptx(ir, opt);
  PtxCacheStats s2 = ptx_cache_stats();
  CHECK(again == first);
  CHECK(s2.hits == s1.hits + 1);
  CHECK(again == compile_ptx(ir, CudaOptions{"sm_80"}));  // the same as without the cache

  CudaOptions other = opt;
  other.arch = "sm_90";
  (void)compile_ptx(ir, other);
  other = opt;
  other.fast_math = true;
  (void)compile_ptx(ir, other);
  (void)compile_ptx(add_ir("512"), opt);  // another constexpr baked in
  PtxCacheStats s3 = ptx_cache_stats();
  CHECK(s3.misses == s2.misses + 3);
  CHECK(s3.hits == s2.hits);

  // A truncated file (no entry point) is not used: compiled again and replaced.
  for (auto& e : std::filesystem::directory_iterator(dir)) std::ofstream(e.path(), std::ios::trunc) << "garbage";
  CHECK(compile_ptx(ir, opt) == first);
  CHECK(ptx_cache_stats().misses == s3.misses + 1);
  CHECK(compile_ptx(ir, opt) == first);
  CHECK(ptx_cache_stats().hits == s3.hits + 1);
  std::filesystem::remove_all(dir);
}
