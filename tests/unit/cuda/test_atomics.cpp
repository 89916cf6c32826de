// Atomics on the CUDA backend, without a GPU: the PTX of tests/gpu/atomics.tile has one `atom` per
// atomic statement, with its sem, scope and type; what the backend cannot lower yet is a located
// error before emission. (tests/gpu runs the file on the GPU against the interpreter.)
#include <doctest/doctest.h>

#include "cuda_backend/Cuda.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"

using namespace dtsim;

namespace {
std::string ptx_of(const std::string& name, const std::string& src) {
  Module m = parse_tile(Sources::add(name, src));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  return compile_ptx(emit_nvvm(m, b));
}
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("atomics lower to PTX atom with their sem, scope and type") {
  Module m = parse_tile_file(DTSIM_SOURCE_DIR "/tests/gpu/atomics.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::string ptx = compile_ptx(emit_nvvm(m, b));
  CHECK(count(ptx, "atom.acq_rel.gpu.global.add.f32") == 1);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.add.u32") == 3);
  CHECK(count(ptx, "atom.relaxed.gpu.global.max.s32") == 1);
  CHECK(count(ptx, "atom.acq_rel.cta.global.min.s32") == 1);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.or.b32") == 1);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.xor.b32") == 1);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.exch.b32") == 2);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.cas.b32") == 2);  // before the loop and in it
  CHECK(count(ptx, "bar.sync") >= 2);                             // scalar old values broadcast
}

TEST_CASE("what the CUDA backend cannot lower yet is a located error") {
  CHECK_THROWS_WITH_AS(ptx_of("fmax.tile", "kernel k(inout x: *f32[4]) grid(1) {\n  atomic_max(x + arange(0, 4), 1.0)\n}\n"),
                       doctest::Contains("atomic_max on f32 elements is not supported on the CUDA backend yet"), UserError);
  CHECK_THROWS_WITH_AS(ptx_of("scan.tile", "kernel k(x: *f32[4], out z: *f32[4]) grid(1) {\n  r = arange(0, 4)\n  store(z + r, cumsum(load(x + r), axis=0))\n}\n"),
                       doctest::Contains("cumsum is not supported on the CUDA backend yet"), UserError);
}
