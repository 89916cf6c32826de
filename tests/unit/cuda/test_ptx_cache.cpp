// The PTX cache of compile_ptx (CudaOptions::ptx_cache_dir, used by `dtsim tune`): a second
// compilation of the same IR for the same target is read back, the same text; another target, other
// math flags (fast math, fp fusion) or other IR (another constexpr baked in) compile anew; an unusable
// cache file is compiled over. CudaOptions::fp_fusion: a multiply feeding an add becomes one fma.rn.f32,
// without it a mul.rn.f32 and an add.rn.f32 (as the interpreter rounds).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cuda_backend/Cuda.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"
#include "test_helpers.h"

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
  other = opt;
  other.fp_fusion = true;
  (void)compile_ptx(ir, other);
  other = opt;
  other.approx_div = true;
  (void)compile_ptx(ir, other);
  (void)compile_ptx(add_ir("512"), opt);  // another constexpr baked in
  PtxCacheStats s3 = ptx_cache_stats();
  CHECK(s3.misses == s2.misses + 5);
  CHECK(s3.hits == s2.hits);

  // A truncated file (no entry point) is not used: compiled again and replaced.
  for (auto& e : std::filesystem::directory_iterator(dir)) std::ofstream(e.path(), std::ios::trunc) << "garbage";
  CHECK(compile_ptx(ir, opt) == first);
  CHECK(ptx_cache_stats().misses == s3.misses + 1);
  CHECK(compile_ptx(ir, opt) == first);
  CHECK(ptx_cache_stats().hits == s3.hits + 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("fp fusion contracts a multiply and an add into fma.rn.f32; without it each rounds on its own") {
  // attention's `qk * scale - m`, and an add of a product
  const char* src = R"(kernel axpy(x: *f32[n], y: *f32[n], out z: *f32[n], out w: *f32[n], a: f32 = 1.5, n: i32 = 4096, BLOCK: constexpr = 1024)
    grid(cdiv(n, BLOCK)) num_warps(4) {
  offs = program_id(0) * BLOCK + arange(0, BLOCK)
  mask = offs < n
  store(z + offs, load(x + offs, mask) * a - load(y + offs, mask), mask)
  store(w + offs, load(y + offs, mask) * a + load(x + offs, mask), mask)
}
)";
  CudaOptions opt;
  opt.arch = "sm_90";
  std::string plain = test::compile_tile("<axpy>", src, opt).ptx;
  CHECK(plain.find("fma.rn.f32") == std::string::npos);
  CHECK(plain.find("mul.rn.f32") != std::string::npos);
  CHECK(plain.find("add.rn.f32") != std::string::npos);
  CHECK(plain.find("sub.rn.f32") != std::string::npos);
  opt.fp_fusion = true;
  test::Compiled c = test::compile_tile("<axpy>", src, opt);
  CHECK(c.nm.ir.find("fmul contract float") != std::string::npos);
  const std::string& fused = c.ptx;
  CHECK(fused.find("fma.rn.f32") != std::string::npos);
  CHECK(fused.find("mul.rn.f32") == std::string::npos);
  CHECK(fused.find("mul.f32") == std::string::npos);
  CHECK(fused.find("add.rn.f32") == std::string::npos);
  CHECK(fused.find("sub.rn.f32") == std::string::npos);
}

TEST_CASE("approx_div compiles f32 division as Triton compiles `/` (div.full.f32); without it IEEE division") {
  const char* src = R"(kernel ratio(x: *f32[n], y: *f32[n], out z: *f32[n], out w: *f64[n], n: i32 = 4096, BLOCK: constexpr = 1024)
    grid(cdiv(n, BLOCK)) num_warps(4) {
  offs = program_id(0) * BLOCK + arange(0, BLOCK)
  mask = offs < n
  store(z + offs, load(x + offs, mask) / load(y + offs, mask), mask)
  store(w + offs, load(x + offs, mask).to(f64) / load(y + offs, mask).to(f64), mask)
}
)";
  CudaOptions opt;
  opt.arch = "sm_90";
  std::string ieee = test::compile_tile("<ratio>", src, opt).ptx;
  CHECK(ieee.find("div.rn.f32") != std::string::npos);
  CHECK(ieee.find("div.full.f32") == std::string::npos);
  opt.approx_div = true;
  std::string approx = test::compile_tile("<ratio>", src, opt).ptx;
  CHECK(approx.find("div.full.f32") != std::string::npos);
  CHECK(approx.find("div.rn.f32") == std::string::npos);
  CHECK(approx.find("div.rn.f64") != std::string::npos);  // f64 division stays IEEE, as in Triton
}
