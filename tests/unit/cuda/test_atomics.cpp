// Atomics and scans on the CUDA backend, without a GPU: the PTX of tests/gpu/atomics.tile has one
// `atom` per atomic statement, with its sem, scope and type (tests/gpu/atomics_half.tile: f16 and bf16;
// tests/gpu/atomics_narrow.tile: i8 and i16);
// tests/gpu/scans.tile (scans and
// reductions with a combine function) compiles; what the backend cannot lower yet is a located error
// before emission. (tests/gpu runs both files on the
// GPU against the interpreter.)
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
  // float max/min on the bits: max.s32 + min.u32 for max (2 statements), min.s32 + max.u32 for min
  CHECK(count(ptx, "atom.acq_rel.gpu.global.max.s32") == 2);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.min.u32") == 2);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.max.u32") == 1);
  CHECK(count(ptx, "bar.sync") >= 2);                             // scalar old values broadcast
}

TEST_CASE("f16 and bf16 atomics: a native add, the others a compare-and-swap loop on the 32-bit word") {
  Module m = parse_tile_file(DTSIM_SOURCE_DIR "/tests/gpu/atomics_half.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::string ptx = compile_ptx(emit_nvvm(m, b));
  CHECK(count(ptx, "atom.acq_rel.gpu.global.add.noftz.f16") == 1);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.add.noftz.bf16") == 1);
  CHECK(count(ptx, "atom.relaxed.gpu.global.cas.b32") == 1);  // max
  CHECK(count(ptx, "atom.acq_rel.cta.global.cas.b32") == 1);  // min
  CHECK(count(ptx, "atom.acq_rel.gpu.global.cas.b32") == 2);  // xchg, cas
}

TEST_CASE("what the CUDA backend cannot lower yet is a located error") {
  CHECK_THROWS_WITH_AS(ptx_of("bool_atomic.tile", "kernel k(inout f: *i1[4]) grid(1) {\n  atomic_or(f + arange(0, 4), arange(0, 4) > 1)\n}\n"),
                       doctest::Contains("atomic_or on i1 elements is not supported on the CUDA backend yet"), UserError);
}

TEST_CASE("i8 and i16 atomics: a compare-and-swap loop on the 32-bit word, for every op") {
  Module m = parse_tile_file(DTSIM_SOURCE_DIR "/tests/gpu/atomics_narrow.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::string ptx = compile_ptx(emit_nvvm(m, b));
  CHECK(count(ptx, "atom.acq_rel.gpu.global.cas.b32") == 10);  // 12 narrow atomics: one loop each
  CHECK(count(ptx, "atom.relaxed.gpu.global.cas.b32") == 1);
  CHECK(count(ptx, "atom.acq_rel.cta.global.cas.b32") == 1);
  CHECK(count(ptx, "atom.acq_rel.gpu.global.add.u32") == 2);
  CHECK(count(ptx, "atom.global.add.s8") + count(ptx, "atom.global.add.u16") == 0);
}

TEST_CASE("reductions and scans of several operands: every operand in shared memory, one loop per line") {
  Module m = parse_tile_file(DTSIM_SOURCE_DIR "/tests/gpu/combine_n.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::string ir = emit_nvvm(m, b);
  CHECK(count(ir, "%scan.acc") >= 3 * 7);  // 8 expressions of 2 or 3 operands, one accumulator each
  std::string ptx = compile_ptx(ir);
  CHECK(ptx.find(".entry k") != std::string::npos);
}

TEST_CASE("scans lower to a loop over each line in shared memory") {
  Module m = parse_tile_file(DTSIM_SOURCE_DIR "/tests/gpu/scans.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::string ptx = compile_ptx(emit_nvvm(m, b));
  CHECK(ptx.find(".entry k") != std::string::npos);
  CHECK(ptx.find(".entry rows") != std::string::npos);
  CHECK(count(ptx, "bar.sync") >= 14);  // before and after each of the 7 scans' shared-memory rounds
}
