// Conflict checks on the CUDA backend (CudaOptions::conflict_checks), without a GPU: what is emitted
// (shadow words for the buffers written, an atom.cas per element stored, no hoisted bounds checks
// for loops that store), and the finding rendered from the status words as the interpreter words
// it. (tests/gpu runs examples/bugs/overlap.tile and copy_nopid.tile on the GPU.)
#include <doctest/doctest.h>

#include <cstring>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "host/Buffers.h"
#include "interp/Interp.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"

using namespace dtsim;

namespace {
struct Emitted {
  Module m;
  Bindings b;
  NvvmModule nm;
};
Emitted emit(const std::string& file, bool conflicts) {
  Emitted e;
  e.m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/" + file);
  e.b = bind_params(e.m, {});
  verify_module(e.m, e.b);
  CudaOptions opt;
  opt.bounds_checks = true;
  opt.conflict_checks = conflicts;
  e.nm = emit_nvvm_module(e.m, e.b, opt);
  return e;
}
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("conflict checks claim each stored element in the written buffer's shadow words") {
  Emitted on = emit("examples/bugs/overlap.tile", true);
  const NvvmKernelInfo& ki = on.nm.kernels[0];
  int shadows = 0;
  for (const auto& a : ki.args)
    if (a.shadow) {
      ++shadows;
      CHECK(a.name == "y");  // x is only read
    }
  CHECK(shadows == 1);
  int conflict_sites = 0;
  for (const auto& s : ki.sites) conflict_sites += s.kind == NvvmKernelInfo::Site::Conflict;
  CHECK(conflict_sites == 1);
  std::string ptx = compile_ptx(on.nm.ir, CudaOptions{});
  CHECK(count(ptx, "atom.global.cas.b64") >= 1);
  Emitted off = emit("examples/bugs/overlap.tile", false);
  CHECK(off.nm.ir.find("%sh.") == std::string::npos);
  CHECK(off.nm.ir.find("cas.b64") == std::string::npos);
}

TEST_CASE("loops that store keep their per-iteration checks under conflict checks") {
  Emitted bounds = emit("tests/unit/cuda/loop_accesses.tile", false);
  Emitted conf = emit("tests/unit/cuda/loop_accesses.tile", true);
  int hoisted_bounds = 0, hoisted_conf = 0;
  for (const auto& k : bounds.nm.kernels) hoisted_bounds += k.hoisted_loops;
  for (const auto& k : conf.nm.kernels) hoisted_conf += k.hoisted_loops;
  CHECK(hoisted_bounds > 0);
  CHECK(hoisted_conf == 0);
  compile_ptx(conf.nm.ir, CudaOptions{});  // valid NVVM IR
}

TEST_CASE("atomics and a spin lock compile with conflict checks") {
  Emitted e = emit("tests/gpu/atomics.tile", true);
  std::string ptx = compile_ptx(e.nm.ir, CudaOptions{});
  CHECK(count(ptx, "atom.global.cas.b64") >= 1);
}

TEST_CASE("the status words of a conflict render as the interpreter's finding") {
  Emitted e = emit("examples/bugs/overlap.tile", true);
  Buffers bufs = make_buffers(e.m, e.b, 1);
  InterpOptions io;
  io.sanitize = Sanitize::Conflicts;
  RunReport rep = run_module(e.m, e.b, bufs, io);
  REQUIRE(rep.findings.size() == 1);
  const Finding& f = rep.findings[0];
  REQUIRE(f.kind == Finding::WriteWrite);
  const NvvmKernelInfo& ki = e.nm.kernels[0];
  int site = -1;
  for (size_t i = 0; i < ki.sites.size(); ++i)
    if (ki.sites[i].kind == NvvmKernelInfo::Site::Conflict) site = static_cast<int>(i);
  REQUIRE(site >= 0);
  // interpreter: "instances [0, 0] and [1, 0] both store y[320] (index [8, 0])", found by [1, 0] at
  // its lane [0, 0]: 128 of its 256 lanes
  int32_t w[kStatusWords] = {};
  w[kStatusClaim] = 1;
  w[kStatusInstances] = 1;
  w[kStatusSite] = site;
  for (int i = 0; i < 3; ++i) w[kStatusPid + i] = static_cast<int32_t>(f.pid[static_cast<size_t>(i)]);
  w[kStatusLane] = 0;
  w[kStatusBad] = static_cast<int32_t>(f.lanes);
  w[kStatusActive] = 256;
  std::memcpy(&w[kStatusFlat], &f.flat_index, 8);
  w[kStatusOther] = 0;  // [0, 0] claimed the element with this same store
  w[kStatusOtherTag] = (site + 1) << 1;
  CudaFinding g = render_status(ki, "overlap", w, bufs);
  CHECK(g.kind == CudaFinding::Conflict);
  CHECK(g.message == f.message);
  // The same pair found the other way round (the GPU ran [1, 0] first) reads the same.
  w[kStatusPid] = 0;
  w[kStatusOther] = 1;
  CHECK(render_status(ki, "overlap", w, bufs).message.find("instances [0, 0] and [1, 0] both store y[320]") != std::string::npos);
  // An atomic found where another instance stores plainly, and the reverse.
  w[kStatusOtherTag] = (site + 1) << 1 | 1;
  CHECK(render_status(ki, "overlap", w, bufs).message.find("instance [0, 0] stores y[320] (index [8, 0]), which instance [1, 0] updates atomically") !=
        std::string::npos);
}

TEST_CASE("decode_status carries the other instance of a conflict") {
  std::array<int64_t, 3> grid{4, 3, 2};
  uint64_t dev[kDeviceStatusWords] = {};
  uint64_t key = (0xFFFFFFFFull - 5) << 32;
  dev[kDevInstances] = 1;
  dev[kDevSite] = key | 0;
  dev[kDevOther] = key | 13;  // linear 13: [1, 0, 1]
  dev[kDevOtherTag] = key | 7;
  int32_t w[kStatusWords];
  REQUIRE(decode_status(dev, grid, w));
  CHECK(w[kStatusOther] == 1);
  CHECK(w[kStatusOther + 1] == 0);
  CHECK(w[kStatusOther + 2] == 1);
  CHECK(w[kStatusOtherTag] == 7);
}
