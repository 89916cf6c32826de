// Located checks on the CUDA backend (no GPU needed): asserts and --sanitize=bounds compile to
// status-buffer writes instead of traps, and the status buffer renders to the interpreter's text.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "frontend/DT.h"
#include "host/Buffers.h"
#include "interp/Interp.h"
#include "ir/TileParser.h"

using namespace dtsim;

namespace {
struct Built {
  Module m;
  Bindings b;
  NvvmModule nm;
  std::string ptx;
};
Built build(const std::string& file, const std::string& arch, bool bounds, const std::map<std::string, std::string>& args = {}) {
  Built c;
  std::string path = std::string(DTSIM_SOURCE_DIR) + "/" + file;
  c.m = file.size() > 3 && file.substr(file.size() - 3) == ".dt" ? lower_dt(*parse_dt_file(path)) : parse_tile_file(path);
  c.b = bind_params(c.m, args);
  verify_module(c.m, c.b);
  CudaOptions opt;
  opt.arch = arch;
  opt.bounds_checks = bounds;
  c.nm = emit_nvvm_module(c.m, c.b, opt);
  c.ptx = compile_ptx(c.nm.ir, opt);
  PtxasResult r = run_ptxas(c.ptx, arch, false);
  INFO(r.log);
  REQUIRE(r.available);
  REQUIRE(r.ok);
  return c;
}
int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("an assert writes the status buffer and leaves the instance; no trap") {
  Built c = build("tests/unit/cuda/assert_sites.tile", "sm_90", false);
  const NvvmKernelInfo& ki = c.nm.kernels[0];
  CHECK(ki.status);
  REQUIRE(ki.sites.size() == 2);
  CHECK(ki.sites[0].kind == NvvmKernelInfo::Site::Assert);
  CHECK(ki.sites[0].lanes == 64);
  CHECK(ki.sites[1].lanes == 1);
  CHECK(ki.args.back().status);
  CHECK(count(c.ptx, "trap") == 0);
  CHECK(count(c.ptx, "bar.red.or.pred") == 1);     // the CTA agrees whether a tile lane failed (not for a scalar)
  CHECK(count(c.ptx, "atom.global.max.u64") == 12); // 6 words per site: the smallest pid wins each
  CHECK(count(c.ptx, "atom.global.add.u64") == 2);  // failing instances counted
  CHECK(count(c.ptx, "atom.global") == 14);         // bounds unchecked: nothing else
}

TEST_CASE("without asserts or bounds checks the kernel has no status buffer") {
  Built c = build("examples/add.tile", "sm_90", false);
  CHECK(!c.nm.kernels[0].status);
  CHECK(count(c.ptx, "atom.") == 0);
  CHECK(count(c.ptx, "bar.red") == 0);
}

TEST_CASE("--sanitize=bounds: every access compares its elements with the buffer's extent") {
  Built c = build("examples/add.tile", "sm_90", true);
  const NvvmKernelInfo& ki = c.nm.kernels[0];
  REQUIRE(ki.sites.size() == 3);  // two loads, one store
  CHECK(ki.sites[0].kind == NvvmKernelInfo::Site::Load);
  CHECK(ki.sites[2].kind == NvvmKernelInfo::Site::Store);
  CHECK(ki.sites[0].text == "x");
  CHECK(ki.sites[2].text == "z");
  CHECK(count(c.ptx, "setp.lt.u64") + count(c.ptx, "setp.gt.u64") + count(c.ptx, "setp.ge.u64") + count(c.ptx, "setp.le.u64") > 0);
  // x, y, z: f32[98432], accessed as 4-element vectors: the passing path compares each vector's first
  // offset with 98432 - 4 (offset > 98428 fails, unsigned); the failing path each element's offset
  // with 98431 (offset > 98431 fails).
  CHECK(count(c.ptx, "98428") == 3);
  CHECK(count(c.ptx, "98431") > 0);
  CHECK(count(c.ptx, "atom.global.add.u64") == 3);
  CHECK(count(c.ptx, "trap") == 0);
}

TEST_CASE("--sanitize=bounds compiles for every example, and checks cp.async copies") {
  for (auto& e : std::filesystem::directory_iterator(std::string(DTSIM_SOURCE_DIR) + "/examples")) {
    std::string ext = e.path().extension().string();
    if (ext != ".tile" && ext != ".dt") continue;
    std::string rel = "examples/" + e.path().filename().string();
    INFO(rel);
    Built c = build(rel, "sm_90", true);
    for (auto& ki : c.nm.kernels) CHECK(ki.status);
  }
  Built a = build("examples/matmul_f16.tile", "sm_80", true);
  CHECK(a.nm.kernels[0].pipelined_loops == 1);
  CHECK(count(a.ptx, "cp.async.cg.shared.global") > 0);
  int loads = 0;
  for (auto& s : a.nm.kernels[0].sites) loads += s.kind == NvvmKernelInfo::Site::Load;
  CHECK(loads >= 2);
  Built h = build("examples/matmul_f16.tile", "sm_90a", true);
  CHECK(count(h.ptx, "wgmma.mma_async") > 0);
}

TEST_CASE("--sanitize=bounds: a loop whose accesses move by a fixed step per iteration is checked before it starts") {
  auto hoisted = [](const NvvmKernelInfo& ki) {
    for (auto& [id, text] : ki.notes)
      if (text.rfind("bounds checks hoisted", 0) == 0) return true;
    return false;
  };
  Built l = build("tests/unit/cuda/loop_accesses.tile", "sm_90", true);
  REQUIRE(l.nm.kernels.size() == 5);
  CHECK(hoisted(l.nm.kernels[0]));   // strided: offsets computed from k in the body, a k-dependent mask
  // strided's mask `offs < n` is of degree 1 in k: the last iteration is tested where it holds.
  auto ragged = [](const NvvmKernelInfo& ki) {
    for (auto& [id, text] : ki.notes)
      if (text.find("or, at the last, only lanes its k-dependent part leaves active") != std::string::npos) return true;
    return false;
  };
  CHECK(ragged(l.nm.kernels[0]));
  CHECK(!ragged(l.nm.kernels[1]));
  CHECK(hoisted(l.nm.kernels[1]));   // carried: pointers advanced by a fixed step after their use
  CHECK(!hoisted(l.nm.kernels[2]));  // nested: offsets defined under an `if`
  CHECK(hoisted(l.nm.kernels[3]));   // advanced: a pointer advanced before its use
  CHECK(!hoisted(l.nm.kernels[4]));  // stepped: a pointer advanced by k
  // Each access keeps its site (the checked copy of the loop reports as before).
  for (int i = 0; i < 5; ++i) CHECK(l.nm.kernels[static_cast<size_t>(i)].sites.size() == 2);
  // The tensor-core matmul: the checked copy of its K loop with one barrier reduction per iteration,
  // the other copy without; the kernel's counters describe one copy.
  Built u = build("examples/matmul_f16.tile", "sm_90a", false);
  Built c = build("examples/matmul_f16.tile", "sm_90a", true);
  CHECK(hoisted(c.nm.kernels[0]));
  CHECK(c.nm.kernels[0].pipelined_loops == 1);
  CHECK(c.nm.kernels[0].mma_dots == u.nm.kernels[0].mma_dots);
  // Its unchecked copy is a TMA ring (as the kernel without checks has it), the checked copy a cp.async ring.
  CHECK(count(u.ptx, "cp.async.wait_group 1") == 0);
  CHECK(count(c.ptx, "cp.async.wait_group 1") == 1);
  CHECK(count(c.ptx, "mbarrier.try_wait.parity") == count(u.ptx, "mbarrier.try_wait.parity"));
  CHECK(count(u.ptx, "mbarrier.try_wait.parity") == 1);
}

TEST_CASE("--sanitize=bounds: the hoisted test reads one element per run of consecutive pointers") {
  auto runs = [](const NvvmKernelInfo& ki) -> std::string {
    for (auto& [id, text] : ki.notes) {
      size_t at = text.find("in runs of ");
      if (text.rfind("bounds checks hoisted", 0) == 0 && at != std::string::npos) return text.substr(at + 11, text.find('+', at) - at - 11);
    }
    return "";
  };
  // mm.dt at 200 x 256 x 96: A (200 x 96 f32) is read in runs of 32 along k (its tile's k extent),
  // B (96 x 256) in runs of 128 along y; each run passes where its first offset is at most the
  // buffer's extent less the run: 19200 - 32 and 24576 - 128.
  Built m = build("examples/mm.dt", "sm_90", true);
  CHECK(runs(m.nm.kernels[0]) == "32");
  CHECK(count(m.ptx, "19168") > 0);
  CHECK(count(m.ptx, "24448") > 0);
  // loop_accesses.tile: `strided` (its mask `offs < n`, a prefix of each run, of degree 1 in k) and
  // `carried` (pointers advanced after their use, read as init + m * c) in runs of 64; `advanced`
  // (a pointer advanced before its use) is tested element by element.
  Built l = build("tests/unit/cuda/loop_accesses.tile", "sm_90", true);
  REQUIRE(l.nm.kernels.size() == 5);
  CHECK(runs(l.nm.kernels[0]) == "64");
  CHECK(runs(l.nm.kernels[1]) == "64");
  CHECK(runs(l.nm.kernels[3]).empty());
}

TEST_CASE("--sanitize=bounds: the checks of consecutive loads share one barrier, after every load is issued") {
  // rgb2grey: three loads (r, g, b) in assignments, then a store: the loads' checks are reported
  // together before the store, so no load waits behind another's barrier.
  Built c = build("examples/rgb2grey.tile", "sm_90", true);
  size_t last_load = c.ptx.rfind("ld.global"), first_barrier = c.ptx.find("bar.red.or");
  REQUIRE(last_load != std::string::npos);
  REQUIRE(first_barrier != std::string::npos);
  CHECK(last_load < first_barrier);
  // Each access keeps its site: the first failing one in program order reports.
  CHECK(c.nm.kernels[0].sites.size() == 4);
}

TEST_CASE("pointers made from integers: inttoptr/ptrtoint; accesses through them are not checked, others are") {
  Built c = build("tests/gpu/addresses.tile", "sm_90", true);
  REQUIRE(c.nm.kernels.size() == 2);
  CHECK(count(c.nm.ir, " = inttoptr i64 ") >= 3);
  const NvvmKernelInfo& use = c.nm.kernels[1];
  // checked: the table's load and the store of d; not: the load through src, the store through dst,
  // the atomic through its address
  std::vector<std::string> checked;
  for (auto& s : use.sites) checked.push_back(s.text);
  CHECK(checked == std::vector<std::string>{"tab", "d"});
  CudaOptions opt;
  opt.bounds_checks = true;
  std::string note = unchecked_address_note(c.m, opt);
  CHECK(note.find("addresses.tile:12:") != std::string::npos);
  CHECK(note.find(": note: ") != std::string::npos);
  opt.bounds_checks = false;
  CHECK(unchecked_address_note(c.m, opt).empty());
  Built u = build("tests/gpu/addresses.tile", "sm_90", false);
  CHECK(count(u.ptx, "global.add.u32 ") == 1);  // the atomic through its address
}

TEST_CASE("integer dot (i8 x i8 -> i32): mma.sync m16n8k32 s8 on sm_80+, wrapping i32 multiply-adds on the FMA units otherwise") {
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {  // (ptxas-checked by build(); no wgmma for i8)
    INFO(arch);
    Built c = build("tests/gpu/int_dot.tile", arch, false);
    CHECK(c.nm.kernels[0].mma_dots == 3);  // 3 dots of 32x32x32, 4 warps of 16x16
    CHECK(count(c.ptx, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32") > 0);
    CHECK(count(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
    CHECK(count(c.ptx, ".trans") == 0);  // B is staged transposed (k contiguous), read without .trans
    CHECK(count(c.ptx, "wgmma") == 0);
    CHECK(count(c.ptx, "fma.rn.f32") == 0);
  }
  Built t = build("tests/gpu/int_dot_mma.tile", "sm_80", false);  // several mma tiles per warp, two k steps
  CHECK(t.nm.kernels[0].mma_dots == 1);
  CHECK(t.nm.kernels[1].mma_dots == 1);
  CHECK(count(t.ptx, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32") == 2 * (2 * 4) * 2);  // 2 kernels x (2x4 tiles) x 2 k steps
  // a 32x16 tile cannot be split over 4 warps in 16x16 blocks: the FMA units, wrapping i32
  Built f = build("tests/gpu/int_dot_k64.tile", "sm_90", false);
  CHECK(f.nm.kernels[0].mma_dots == 0);
  CHECK(count(f.ptx, "mma.sync") == 0);
  CHECK(count(f.ptx, "fma.rn.f32") == 0);
  CHECK(count(f.ptx, "mad.lo.s32") + count(f.ptx, "mul.lo.s32") >= 32 * 16 * 64 / 128);
  CHECK(count(f.nm.ir, "@llvm.fma") == 0);
}

TEST_CASE("FMA dot: straight-line code up to 2048 multiply-adds per thread, a loop beyond") {
  // matmul_f32.tile: 64 accumulators x K 32 = 2048, unrolled; mm.dt: 128 x 32 = 4096, a loop of 1024.
  Built f = build("bench/gpu/matmul_f32.tile", "sm_90", false);
  CHECK(count(f.ptx, "fma.rn.f32") == 2048);
  Built m = build("examples/mm.dt", "sm_90", false);
  CHECK(count(m.ptx, "fma.rn.f32") == 1024);
}

TEST_CASE("the status buffer renders as the interpreter's out-of-bounds finding") {
  for (const char* bug : {"examples/bugs/copy_pid_n.tile", "examples/bugs/copy_nopid.tile", "examples/bugs/matmul_no_kmask.tile"}) {
    INFO(bug);
    Built c = build(bug, "sm_90", true);
    Buffers bufs = make_buffers(c.m, c.b, 1);
    InterpOptions io;
    io.sanitize = Sanitize::Bounds;
    RunReport rep = run_module(c.m, c.b, bufs, io);
    if (rep.findings.empty()) continue;  // a bug the bounds mode does not see (conflicts)
    const Finding& f = rep.findings[0];
    REQUIRE(f.kind == Finding::OutOfBounds);
    // The status words the failing instance would write for this finding.
    const NvvmKernelInfo& ki = c.nm.kernels[0];
    int site = -1;
    for (size_t i = 0; i < ki.sites.size(); ++i)
      if (ki.sites[i].kind != NvvmKernelInfo::Site::Assert && ki.sites[i].loc == f.loc && ki.sites[i].text == f.buffer &&
          (ki.sites[i].kind == NvvmKernelInfo::Site::Load) == (f.message.find("load") != std::string::npos))
        site = static_cast<int>(i);
    REQUIRE(site >= 0);
    // Lane and active count from the message: "first bad lane L -> ...; B of A active lanes", the
    // lane as coordinates "[r, c]" in a tile of 2 or more dimensions (the site's tile).
    const std::string& msg = f.message;
    std::string at = msg.substr(msg.find("first bad lane ") + 15);
    int64_t lane = 0;
    if (at[0] == '[') {
      const Shape& tile = ki.sites[static_cast<size_t>(site)].tile;
      size_t pos = 1;
      for (size_t d = 0; d < tile.size(); ++d) {
        size_t used = 0;
        lane = lane * tile[d] + std::stoll(at.substr(pos), &used);
        pos += used + 2;
      }
    } else {
      lane = std::stoll(at);
    }
    size_t of = msg.find(" of ", msg.find("); "));
    int64_t active = std::stoll(msg.substr(of + 4));
    int32_t w[kStatusWords] = {};
    w[kStatusClaim] = 1;
    w[kStatusInstances] = 1;
    w[kStatusSite] = site;
    for (int i = 0; i < 3; ++i) w[kStatusPid + i] = static_cast<int32_t>(f.pid[static_cast<size_t>(i)]);
    w[kStatusLane] = static_cast<int32_t>(lane);
    w[kStatusBad] = static_cast<int32_t>(f.lanes);
    w[kStatusActive] = static_cast<int32_t>(active);
    std::memcpy(&w[kStatusFlat], &f.flat_index, 8);
    CudaFinding g = render_status(ki, c.m.kernels[0].name, w, bufs);
    CHECK(g.kind == CudaFinding::OutOfBounds);
    // The interpreter adds the enclosing loops' iterations ("  in loop k = 80"); the status words
    // do not carry them.
    std::string interp = f.message;
    size_t loop = interp.find("  in loop ");
    if (loop != std::string::npos) interp.erase(loop);
    CHECK(g.message == interp);
  }
}

TEST_CASE("the status buffer renders as the interpreter's assert finding") {
  Built c = build("tests/unit/cuda/assert_sites.tile", "sm_90", false, {{"n", "5"}});
  Buffers bufs = make_buffers(c.m, c.b, 1);
  InterpOptions io;
  io.sanitize = Sanitize::None;
  RunReport rep = run_module(c.m, c.b, bufs, io);
  REQUIRE(!rep.findings.empty());
  const Finding& f = rep.findings[0];
  REQUIRE(f.kind == Finding::AssertFailed);
  int32_t w[kStatusWords] = {};
  w[kStatusClaim] = 1;
  w[kStatusInstances] = 1;
  w[kStatusSite] = 0;
  for (int i = 0; i < 3; ++i) w[kStatusPid + i] = static_cast<int32_t>(f.pid[static_cast<size_t>(i)]);
  w[kStatusLane] = static_cast<int32_t>(std::stoll(f.message.substr(f.message.find("(first: lane ") + 13)));
  w[kStatusBad] = static_cast<int32_t>(f.lanes);
  CudaFinding g = render_status(c.nm.kernels[0], "chk", w, bufs);
  CHECK(g.kind == CudaFinding::AssertFailed);
  CHECK(g.message == f.message);
}

TEST_CASE("the status words keep the failing instance with the smallest linear pid") {
  // What record_status does on the device: word = max over instances of (key << 32 | value).
  std::array<int64_t, 3> grid{4, 3, 2};
  uint64_t dev[kDeviceStatusWords] = {};
  auto fail = [&](int64_t x, int64_t y, int64_t z, uint32_t site, uint32_t lane) {
    uint64_t key = (0xFFFFFFFFull - static_cast<uint64_t>(x + grid[0] * (y + grid[1] * z))) << 32;
    dev[kDevInstances] += 1;
    uint32_t vals[] = {site, lane, 3, 7, 0xFFFFFFFBu, 0xFFFFFFFFu};  // flat index -5
    for (int i = 0; i < 6; ++i) dev[kDevSite + i] = std::max(dev[kDevSite + i], key | vals[i]);
  };
  int32_t w[kStatusWords];
  CHECK(!decode_status(dev, grid, w));
  fail(3, 2, 1, 4, 9);
  fail(1, 0, 1, 2, 5);  // linear 13: the smallest
  fail(2, 2, 1, 1, 0);
  REQUIRE(decode_status(dev, grid, w));
  CHECK(w[kStatusInstances] == 3);
  CHECK(w[kStatusSite] == 2);
  CHECK(w[kStatusLane] == 5);
  CHECK(w[kStatusPid] == 1);
  CHECK(w[kStatusPid + 1] == 0);
  CHECK(w[kStatusPid + 2] == 1);
  int64_t flat = 0;
  std::memcpy(&flat, &w[kStatusFlat], 8);
  CHECK(flat == -5);
}
