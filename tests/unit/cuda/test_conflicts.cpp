// Conflict checks on the CUDA backend (CudaOptions::conflict_checks), without a GPU: what is emitted
// (element words for the buffers written and granule words where the plan gives them, the launch's
// epoch, one granule claim per warp and store instruction on sm_90 and element claims only where a
// granule is shared, element claims alone before sm_90 and in the other buffers; no hoisted bounds
// checks for loops that store), and the finding rendered from
// the status words as the interpreter words it. (tests/gpu runs examples/bugs/overlap.tile,
// copy_nopid.tile, tests/gpu/bugs/*.tile and tests/gpu/granules.tile on the GPU.)
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
// With `disjoint`, buffers whose writes are disjoint for the launch's values are not claimed (the
// default); without, every written buffer is (what these tests of the claims need).
Emitted emit(const std::string& file, bool conflicts, const std::string& arch = "", bool disjoint = false) {
  Emitted e;
  e.m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/" + file);
  e.b = bind_params(e.m, {});
  verify_module(e.m, e.b);
  CudaOptions opt;
  opt.arch = arch;
  opt.bounds_checks = true;
  opt.conflict_checks = conflicts;
  opt.disjoint_writes = disjoint;
  e.nm = emit_nvvm_module(e.m, e.b, opt);
  return e;
}
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
// The PTX of e for arch, checked by ptxas when there is one.
std::string ptx_of(const Emitted& e, const std::string& arch) {
  CudaOptions o;
  o.arch = arch;
  std::string ptx = compile_ptx(e.nm.ir, o);
  PtxasResult r = run_ptxas(ptx, arch);
  INFO(r.log);
  if (r.available) CHECK(r.ok);
  return ptx;
}
}  // namespace

TEST_CASE("conflict checks claim each stored element in the written buffer's shadow words") {
  Emitted on = emit("examples/bugs/overlap.tile", true);
  const NvvmKernelInfo& ki = on.nm.kernels[0];
  int shadows = 0, granules = 0, epochs = 0;
  for (const auto& a : ki.args) {
    if (a.shadow || a.granules) CHECK(a.name == "y");  // x is only read
    shadows += a.shadow;
    granules += a.granules;
    epochs += a.epoch;
  }
  CHECK(shadows == 1);
  CHECK(granules == 0);  // 16-column blocks: no instance owns a granule (plan_conflicts)
  CHECK(epochs == 1);
  int conflict_sites = 0;
  for (const auto& s : ki.sites) conflict_sites += s.kind == NvvmKernelInfo::Site::Conflict;
  CHECK(conflict_sites == 1);
  // Element words only, on sm_90 too: one atom.max per element, no granule traffic.
  std::string ptx = ptx_of(on, "sm_90a");
  CHECK(count(ptx, "atom.global.max.u64") >= 1);
  CHECK(count(ptx, "match.any") == 0);
  CHECK(count(ptx, "cas.b128") == 0);
  CHECK(count(ptx, "cas.b64") == 0);
  // A buffer stored in rows of whole granules: a warp's lanes that store into one granule combine
  // and one of them claims it (128-bit compare-and-swap); elements are claimed one by one (atom.max)
  // only where a granule is shared.
  Emitted add = emit("examples/add.tile", true);
  int add_granules = 0;
  for (const auto& a : add.nm.kernels[0].args) add_granules += a.granules && a.name == "z";
  CHECK(add_granules == 1);
  std::string aptx = ptx_of(add, "sm_90a");
  CHECK(count(aptx, "match.any.sync.b64") >= 1);
  CHECK(count(aptx, "redux.sync.or.b32") >= 2);
  CHECK(count(aptx, "atom.global.cas.b128") >= 1);
  CHECK(count(aptx, "atom.global.max.u64") >= 1);
  // Nothing is reset before a launch: the launch's epoch is a parameter.
  CHECK(on.nm.ir.find("i64 %dtsim_epoch") != std::string::npos);
  Emitted off = emit("examples/bugs/overlap.tile", false);
  CHECK(off.nm.ir.find("%sh.") == std::string::npos);
  CHECK(off.nm.ir.find("%sg.") == std::string::npos);
  CHECK(off.nm.ir.find("dtsim_epoch") == std::string::npos);
  CHECK(off.nm.ir.find("dtsim_cc_") == std::string::npos);
}

TEST_CASE("before sm_90 conflict checks claim element words only") {
  Emitted e = emit("examples/bugs/overlap.tile", true, "sm_80");
  for (const auto& a : e.nm.kernels[0].args) CHECK_FALSE(a.granules);
  std::string ptx = ptx_of(e, "sm_80");
  CHECK(count(ptx, "atom.global.max.u64") >= 1);
  CHECK(count(ptx, "cas.b128") == 0);
  CHECK(count(ptx, "match.any") == 0);
}

TEST_CASE("a vector store claims its granule once per warp and store instruction") {
  // examples/add.tile stores 4-element vectors (two per thread): per store step one granule word
  // loaded and one predicated compare-and-swap, all the loads before the first swap (in flight
  // together), and the element claims behind a branch taken only where the granule is shared.
  Emitted e = emit("examples/add.tile", true);
  const std::string& ir = e.nm.ir;
  size_t steps = count(ir, "call i1 @dtsim_cc_fix(");
  CHECK(steps == 2);
  CHECK(count(ir, "load volatile <2 x i64>") == steps);
  CHECK(count(ir, "@p atom.global.cas.b128") == steps);
  CHECK(count(ir, "call i64 @dtsim_cc_elem(") == 4 * steps);
  size_t last_load = ir.rfind("load volatile <2 x i64>"), first_swap = ir.find("@p atom.global.cas.b128");
  CHECK(last_load < first_swap);
  // Every swap of the statement is issued before the first result is read.
  size_t last_swap = ir.rfind("@p atom.global.cas.b128"), first_fix = ir.find("call i1 @dtsim_cc_fix(");
  CHECK(last_swap < first_fix);
  // The slow paths (the fix-ups and their outcome's shuffle) behind one warp-uniform branch per
  // statement, and each step's element claims behind one branch on that outcome.
  CHECK(count(ir, "call i1 @llvm.nvvm.vote.any.sync(") == 1);
  CHECK(ir.find("call i1 @llvm.nvvm.vote.any.sync(") < first_fix);
  CHECK(count(ir, "label %cc.fix.") == 1);
  CHECK(count(ir, "label %cc.el.") == steps);
  CHECK(count(ir, "i64 %dtsim_epoch, i1 true)") == 4 * steps);
  // A warp whose 32 lanes store consecutive vectors from a granule's start forms its groups without
  // match.any/redux (one shfl of lane 0's offset, in two halves, and one vote per step).
  CHECK(count(ir, "call { i32, i64 } @dtsim_cc_group(") == steps);
  std::string ptx = ptx_of(e, "sm_90a");
  CHECK(count(ptx, "atom.global.cas.b128") == steps);  // the fast path's swaps (dtsim_cc_granule is a call)
  CHECK(count(ptx, "vote.sync.all.pred") == steps);
  CHECK(count(ptx, "match.any.sync.b64") == steps);  // where the warp is not regular
  CHECK(count(ptx, "vote.sync.any.pred") == 1);
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

TEST_CASE("atomics, a spin lock and shared granules compile with conflict checks") {
  // Granule words where the plan gives them (tests/gpu/granules.tile's long_rows and two_sites, the
  // granule bugs), element words only elsewhere (atomics, blocks of 32 elements).
  for (const char* f : {"tests/gpu/atomics.tile", "tests/gpu/granules.tile", "tests/gpu/bugs/granule_third.tile", "tests/gpu/bugs/plain_atomic.tile",
                        "tests/gpu/bugs/granule_rows.tile", "tests/gpu/bugs/granule_overlap.tile"}) {
    INFO(f);
    Emitted e = emit(f, true);
    bool granules = false;
    for (const auto& k : e.nm.kernels)
      for (const auto& a : k.args) granules = granules || a.granules;
    std::string ptx = ptx_of(e, "sm_90a");
    CHECK(granules == (std::string(f).find("granules.tile") != std::string::npos || std::string(f).find("granule_rows") != std::string::npos ||
                       std::string(f).find("granule_overlap") != std::string::npos));
    CHECK((count(ptx, "atom.global.cas.b128") >= 1) == granules);
    CHECK(count(ptx, "atom.global.max.u64") >= 1);
    CHECK(count(ptx_of(emit(f, true, "sm_80"), "sm_80"), "atom.global.max.u64") >= 1);
  }
}

TEST_CASE("each written buffer's claims go through granule words or element words only, as planned") {
  auto plan = [](const std::string& file, const std::string& arch = "") {
    Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/" + file);
    Bindings b = bind_params(m, {});
    verify_module(m, b);
    CudaOptions opt;
    opt.arch = arch;
    opt.bounds_checks = true;
    opt.conflict_checks = true;
    return emit_plan(m, b, opt);
  };
  std::string g = plan("tests/gpu/granules.tile");
  INFO(g);
  // Blocks of 24 or 32 elements, an interleave: element words; atomics: element words.
  CHECK(g.find("y: element words only (the store at line 9 writes runs of 32 consecutive elements") != std::string::npos);
  CHECK(g.find("v: element words only (the store at line 13 writes runs of 1 consecutive elements") != std::string::npos);
  CHECK(g.find("z: element words only") != std::string::npos);
  CHECK(g.find("h: element words only (atomic at line 22") != std::string::npos);
  // Runs of 8 granules not known to start on one; two aligned sites of whole granules.
  CHECK(g.find("w: granule words (every store at line 30)") != std::string::npos);
  CHECK(g.find("u: granule words (every store at line 34, line 36)") != std::string::npos);
  // A store and an atomic into one buffer: element words for both sites (the first reason found).
  std::string pa = plan("tests/gpu/bugs/plain_atomic.tile");
  CHECK(pa.find("y: element words only (the store at line 12") != std::string::npos);
  // Whole granules known to start on one (offsets from the buffer's start), and long unaligned rows.
  CHECK(plan("tests/gpu/bugs/granule_overlap.tile").find("y: granule words (every store at line 5)") != std::string::npos);
  CHECK(plan("bench/gpu/softmax.tile").find("y: granule words (every store at line 10)") != std::string::npos);
  CHECK(plan("examples/matmul.tile").find("c: element words only (the store at line 22 writes runs of 1 ") != std::string::npos);
  // Before sm_90 there are no granule words.
  CHECK(plan("tests/gpu/granules.tile", "sm_80").find("w: element words only (no 128-bit atom.cas before sm_90)") != std::string::npos);
  // Without conflict checks the plan has no such section.
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/tests/gpu/granules.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CHECK(emit_plan(m, b, CudaOptions{}).find("conflict checks") == std::string::npos);
}

TEST_CASE("buffers whose writes are disjoint for the launch's values are not claimed") {
  // examples/add.tile (blocks of a vector) and bench/gpu/softmax.tile (rows): disjoint, so the kernel
  // under conflict checks is the bounds-checked one; overlap.tile's 16-row blocks that advance by 8
  // rows and copy_nopid's pid-free offsets are claimed as before; so is grouped_matmul's tile of c
  // (its pids are computed by reassigned variables, which the analysis does not read).
  for (const char* f : {"examples/add.tile", "bench/gpu/softmax.tile", "examples/softmax.tile", "examples/copy.tile", "examples/matmul.tile"}) {
    INFO(f);
    Emitted on = emit(f, true, "sm_90a", true), off = emit(f, false, "sm_90a");
    // The same kernel but for the spin-lock counter that conflict checks keep (unused here, removed by libNVVM).
    std::string ir = on.nm.ir;
    const std::string locks = "  %dtsim_locks = alloca i32\n  store i32 0, i32* %dtsim_locks\n";
    REQUIRE(ir.find(locks) != std::string::npos);
    ir.erase(ir.find(locks), locks.size());
    CHECK(ir == off.nm.ir);
    CHECK(on.nm.ir.find("dtsim_cc_") == std::string::npos);
  }
  for (const char* f : {"examples/bugs/overlap.tile", "examples/bugs/copy_nopid.tile", "examples/grouped_matmul.tile"}) {
    INFO(f);
    Emitted on = emit(f, true, "sm_90a", true);
    CHECK(on.nm.ir.find("call i64 @dtsim_cc_elem(") != std::string::npos);
    int shadows = 0;
    for (const auto& a : on.nm.kernels[0].args) shadows += a.shadow;
    CHECK(shadows == 1);
  }
  // The plan says which, and why.
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/bench/gpu/softmax.tile");
  CudaOptions opt;
  opt.arch = "sm_90a", opt.bounds_checks = opt.conflict_checks = true;
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::string sp = emit_plan(m, b, opt);
  CHECK(sp.find("      no claims: disjoint when ") != std::string::npos);
  CHECK(sp.find(") + 1) * (num_programs(0) - 1) <= max(C, 0 - C) * (num_programs(0) - 1), num_programs(1) <= 1, ") != std::string::npos);
  Module m2 = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/examples/bugs/copy_nopid.tile");
  Bindings b2 = bind_params(m2, {});
  verify_module(m2, b2);
  CHECK(emit_plan(m2, b2, opt).find("      claimed: not for these values: disjoint when num_programs(0) <= 1, ") != std::string::npos);
}

TEST_CASE("the status words of a conflict render as the interpreter's finding") {
  Emitted e = emit("tests/gpu/bugs/overlap_values.tile", true);  // (examples/bugs/overlap.tile's values are equal: a warning)
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
  CudaFinding g = render_status(ki, "overlap_values", w, bufs);
  CHECK(g.kind == CudaFinding::Conflict);
  CHECK(g.message == f.message);
  // The same pair found the other way round (the GPU ran [1, 0] first) reads the same.
  w[kStatusPid] = 0;
  w[kStatusOther] = 1;
  CHECK(render_status(ki, "overlap_values", w, bufs).message.find("instances [0, 0] and [1, 0] both store y[320]") != std::string::npos);
  // An atomic found where another instance stores plainly, and the reverse.
  w[kStatusOtherTag] = (site + 1) << 1 | 1;
  CHECK(render_status(ki, "overlap_values", w, bufs).message.find("instance [0, 0] stores y[320] (index [8, 0]), which instance [1, 0] updates atomically") !=
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
