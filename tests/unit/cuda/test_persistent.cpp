// Persistent grids (PersistentPlan, NvvmPersistent.cpp): what the plan decides for the 128x256 dot
// kernels and variants of them (the epilogue stored from the accumulator layout or through the
// exchange tile above the ring, off unless asked for, why not), the launch information (the
// original grid as arguments) and the PTX (one producer issue site, stages released after the last
// wait, registers under the one-CTA-per-SM budget), checked without a GPU.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "cuda_backend/Plan.h"
#include "test_helpers.h"

using namespace dtsim;
using test::Compiled;
using test::count;
using test::replaced;
using test::source_file;

namespace {

Compiled compile(const std::string& src, int persistent = 0, bool bounds = false) {
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.persistent = persistent;
  opt.bounds_checks = bounds;
  return test::compile_tile("<persistent>", src, opt);
}

const char* kCopy = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [";

// Registers ptxas gives the kernel (the first "Used N registers" of its report).
int registers(const std::string& ptx) {
  PtxasResult r = run_ptxas(ptx, "sm_90a", true);
  REQUIRE(r.ok);
  std::smatch m;
  REQUIRE(std::regex_search(r.log, m, std::regex("Used ([0-9]+) registers")));
  CHECK(r.log.find(" 0 bytes spill stores") != std::string::npos);
  return std::stoi(m[1]);
}

}  // namespace

TEST_CASE("persistent: the 128x256 ring keeps its 4 stages, the epilogue stored from the accumulator layout") {
  Compiled c = compile(source_file("bench/gpu/matmul_f16_wide.tile"), 1);
  CHECK(count(c.plan, "persistent grid: yes (asked for by --persistent)") == 1);
  CHECK(count(c.plan, "CTAs: min(512 tiles, SMs x CTAs per SM)") == 1);
  CHECK(count(c.plan, "epilogue: tile stores from the layout their values are held in (no exchange tile), so the ring keeps its stages") == 1);
  CHECK(count(c.plan, "TMA ring of 4 stages x 49152 bytes, ta and tb copied 3 iteration(s) ahead by a producer warp") == 1);
  REQUIRE(c.nm.kernels.size() == 1);
  const NvvmKernelInfo& k = c.nm.kernels[0];
  CHECK(k.persistent);
  CHECK(k.threads == 9 * 32);
  CHECK(k.specialized_loops == 1);
  CHECK(k.smem_bytes == 197632);  // the ring alone
  // The original grid's two axes, after the tensor maps.
  REQUIRE(k.args.size() >= 3);
  CHECK((k.args[k.args.size() - 2].grid_axis == 0 && k.args.back().grid_axis == 1));
  CHECK(k.args[k.args.size() - 3].tensor_map);
  // One issue site (the producer's): A's box and B's four 64-column boxes; the stage a tile ends on
  // is released after the final wait, the others in the loop; the tiles advance by nctaid.x.
  CHECK(count(c.ptx, kCopy) == 1 + 4);
  CHECK(count(c.ptx, "mbarrier.arrive.shared::cta.b64") == 2);
  CHECK(count(c.ptx, "mbarrier.init.shared::cta.b64") == 2 * 4);
  CHECK(count(c.ptx, "%nctaid.x") >= 2);
  // f16 pairs from the accumulator layout: 64 4-byte stores a thread, nothing through shared memory.
  CHECK(count(c.ptx, "st.global.u32") + count(c.ptx, "st.global.b32") == 64);
  CHECK(count(c.ptx, "stmatrix") == 0);
  // 8 warps x 1 CTA per SM: at most 168 registers a thread, no spills.
  CHECK(registers(c.ptx) <= 168);
}

TEST_CASE("persistent: a 3-stage 128x256 ring has room for the exchange tile above it") {
  const std::string src = replaced(source_file("bench/gpu/matmul_f16_wide.tile"), "num_stages(4)", "num_stages(3)");
  Compiled c = compile(src, 1);
  CHECK(count(c.plan, "persistent grid: yes (asked for by --persistent)") == 1);
  CHECK(count(c.plan, "epilogue: tile stores") == 0);
  CHECK(count(c.plan, "transient after it (persistent: above the ring, which fills for the next tile), at most: offset 148480, 65536 bytes") == 1);
  const NvvmKernelInfo& k = c.nm.kernels[0];
  CHECK(k.persistent);
  CHECK(k.smem_bytes == 148480 + 65536);
  CHECK(count(c.ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") == 16);
  CHECK(count(c.ptx, "bar.sync 1, 256") >= 2);  // the exchange's barriers name the consumers
  CHECK(registers(c.ptx) <= 168);
}

TEST_CASE("persistent: off unless asked for, and forced on a grid of few tiles") {
  const std::string src = source_file("bench/gpu/matmul_f16_wide.tile");
  for (int p : {0, -1}) {
    CAPTURE(p);
    Compiled off = compile(src, p);
    CHECK(count(off.plan, p ? "persistent grid: no (refused by --no-persistent)" : "persistent grid: no (not asked for (--persistent, the kernel's persistent)") == 1);
    CHECK(count(off.plan, "TMA ring of 4 stages x 49152 bytes, ta and tb copied 3 iteration(s) ahead by thread 0") == 1);
    CHECK(!off.nm.kernels[0].persistent);
    CHECK(off.nm.kernels[0].threads == 8 * 32);
    for (const NvvmKernelInfo::Arg& a : off.nm.kernels[0].args) CHECK(a.grid_axis == -1);
  }
  // 8 x 4 = 32 tiles.
  const std::string small = replaced(replaced(src, "M: i32 = 4096", "M: i32 = 1024"), "N: i32 = 4096", "N: i32 = 1024");
  Compiled forced = compile(small, 1);
  CHECK(count(forced.plan, "persistent grid: yes (asked for by --persistent)") == 1);
  CHECK(count(forced.plan, "CTAs: min(32 tiles, SMs x CTAs per SM)") == 1);
  CHECK(forced.nm.kernels[0].persistent);
  REQUIRE(run_ptxas(forced.ptx, "sm_90a").ok);
}

TEST_CASE("persistent: why not") {
  // 128x128 tiles: two CTAs per SM, whose registers leave no room for a producer warp each.
  Compiled sq = compile(source_file("bench/gpu/matmul_f16.tile"), 1);
  CHECK(count(sq.plan, "persistent grid: no (no producer warp: the ring (99328 bytes) leaves room for two CTAs per SM") == 1);
  CHECK(!sq.nm.kernels[0].persistent);
  const std::string src = source_file("bench/gpu/matmul_f16_wide.tile");
  // Bounds checks: the loop is emitted twice.
  Compiled bounds = compile(src, 1, true);
  CHECK(count(bounds.plan, "persistent grid: no (bounds checks") == 1);
  // A statement after the loop with control flow of its own would leave the tile loop.
  const std::string store = "  store(c + rm[:, None] * N + rn[None, :], acc.to(f16), mask=(rm[:, None] < M) & (rn[None, :] < N))\n";
  Compiled iff = compile(replaced(src, store, "  if (M > 0) {\n  " + store + "  }\n"), 1);
  CHECK(count(iff.plan, "persistent grid: no (a statement after the loop is not an assignment, store or atomic (line 18))") == 1);
  // A device assert: its reports meet at CTA-wide barriers (no producer warp).
  Compiled as = compile(replaced(src, "  acc = zeros([BM, BN], f32)\n", "  acc = zeros([BM, BN], f32)\n  assert(K > 0, \"K\")\n"), 1);
  CHECK(count(as.plan, "persistent grid: no (no producer warp: the kernel asserts or prints") == 1);
  // Clusters of two CTAs.
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.cluster = 1;
  opt.persistent = 1;
  Compiled cl = test::compile_tile("<persistent>", src, opt);
  CHECK(count(cl.plan, "persistent grid: no (the ring runs in clusters of two CTAs (--cluster))") == 1);
  // Not sm_90a: no TMA ring.
  opt = CudaOptions{};
  opt.arch = "sm_90";
  opt.persistent = 1;
  Compiled s90 = test::compile_tile("<persistent>", src, opt);
  CHECK(count(s90.plan, "persistent grid: no (the target is not sm_90a (no TMA ring))") == 1);
}

TEST_CASE("persistent: asked for by the kernel (persistent(N)), refused by --no-persistent, capped by --persistent-ctas") {
  // 8 x 4 = 32 tiles; the kernel's own option instead of the flag.
  const std::string src = replaced(replaced(source_file("bench/gpu/matmul_f16_wide.tile"), "M: i32 = 4096", "M: i32 = 1024"), "N: i32 = 4096", "N: i32 = 1024");
  const std::string header = "num_stages(4) {";
  REQUIRE(count(src, header) == 1);
  const std::string asked = replaced(src, header, "num_stages(4) persistent(16) {");
  Compiled k = compile(asked, 0);
  CHECK(count(k.plan, "persistent grid: yes (asked for by the kernel (persistent(16)))") == 1);
  CHECK(count(k.plan, "    persistent: asked for by the kernel (persistent(16)): yes, a persistent grid\n") == 1);
  CHECK(k.nm.kernels[0].persistent);
  Compiled refused = compile(asked, -1);
  CHECK(count(refused.plan, "persistent grid: no (refused by --no-persistent)") == 1);
  CHECK(count(refused.plan, "    persistent: refused by --no-persistent\n") == 1);
  CHECK(!refused.nm.kernels[0].persistent);
  // The flag and the kernel's option: the flag is named, --persistent-ctas replaces the kernel's N.
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.persistent = 1;
  opt.persistent_ctas = 3;
  Compiled both = test::compile_tile("<persistent>", asked, opt);
  CHECK(count(both.plan, "persistent grid: yes (asked for by --persistent)") == 1);
  CHECK(both.nm.kernels[0].persistent);
  const Module m = parse_tile(Sources::add("<persistent>", asked));
  const Kernel& kk = m.kernels.at(0);
  CHECK(kk.persistent_ctas == 16);
  CHECK(nvvm::schedule_asks(kk, opt).persistent_ctas == 3);
  opt.persistent_ctas = 0;
  CHECK(nvvm::schedule_asks(kk, opt).persistent_ctas == 16);
}
