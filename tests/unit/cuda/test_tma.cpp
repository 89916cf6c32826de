// TMA rings (PipelinePlan::Kind::TmaRing, NvvmTma.cpp): what the plan decides for the K loops of
// tests/gpu/tma_matmul.tile and variants of it, the tensor-map parameters the launcher encodes, and
// the PTX (bulk tensor copies, mbarriers, __grid_constant__ parameters), checked without a GPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "ir/Diag.h"
#include "ir/TileParser.h"
#include "test_helpers.h"

using namespace dtsim;
using test::Compiled;
using test::count;
using test::replaced;
using test::source_file;

namespace {

Compiled compile(const std::string& src, const std::string& arch, bool bounds = false, bool specialize = true) {  // specialize: --warp-specialize
  CudaOptions opt;
  opt.arch = arch;
  opt.bounds_checks = bounds;
  opt.warp_specialize = specialize;
  opt.cluster = -1;  // the rings alone (test_cluster.cpp has them in clusters)
  return test::compile_tile("<tma>", src, opt);
}

}  // namespace

TEST_CASE("TMA ring: boxes of the operands' tensors, copied by one thread, one mbarrier per stage") {
  Compiled c = compile(source_file("tests/gpu/tma_matmul.tile"), "sm_90a", false, false);
  CHECK(count(c.plan, "pipelined: TMA ring of 3 stages x 32768 bytes") == 1);
  CHECK(count(c.plan, "pipelined: TMA ring of 4 stages x 16384 bytes") == 1);
  CHECK(count(c.plan, "TMA A ta: f16 tensor a[M, K], rows K apart, box 128x64 at (rm[:, None], rk[None, :] + k)") == 1);
  CHECK(count(c.plan, "TMA B tb: f16 tensor b[K, N], rows N apart, box 64x64 at (rk[:, None] + k, rn[None, :])") == 1);
  // The mbarriers take 1 KiB above the ring.
  CHECK(count(c.plan, "ring of line 14: for k in range(0, K, BK): 3 x 32768: offset 0, 99328 bytes") == 1);
  REQUIRE(c.nm.kernels.size() == 2);
  // Two tensor maps per kernel after the buffers and scalars: the extents and strides are the runtime
  // parameters the masks and pointers name; boxes are 64 elements (128 bytes) wide.
  const NvvmKernelInfo& k0 = c.nm.kernels[0];
  REQUIRE(k0.args.size() == 8);
  const NvvmKernelInfo::Arg& a = k0.args[6];
  const NvvmKernelInfo::Arg& b = k0.args[7];
  CHECK(a.tensor_map);
  CHECK(a.name == "a");
  CHECK((a.rows == "M" && a.cols == "K" && a.stride == "K"));
  CHECK((a.box_rows == 128 && a.box_cols == 64));
  CHECK(b.tensor_map);
  CHECK((b.name == "b" && b.rows == "K" && b.cols == "N" && b.stride == "N"));
  CHECK((b.box_rows == 64 && b.box_cols == 64));
  CHECK(k0.tma_loops == 1);
  CHECK(c.nm.kernels[1].tma_loops == 1);
  // NVVM: by-value parameters marked __grid_constant__ (1-based indices 7 and 8).
  CHECK(count(c.nm.ir, "%dtsim.tmap* byval align 64 %tm.0") == 2);
  CHECK(count(c.nm.ir, "!\"grid_constant\"") == 2);
  CHECK(count(c.nm.ir, "= !{i32 7, i32 8}") == 2);
  // PTX: the maps are 128-byte parameters whose generic address the copies read.
  CHECK(count(c.ptx, ".param .align 64 .b8 mm_f16_param_6[128]") == 1);
  CHECK(count(c.ptx, "cvta.param.u64") >= 2);
  // A: one box; B (128 columns): two 64-column boxes; the prologue issues stages 0..S-2 (2 for the f16
  // kernel, 3 for bf16), the loop one more.
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == (2 + 1) * 3 + (3 + 1) * 2);
  CHECK(count(c.ptx, "mbarrier.init.shared::cta.b64") == 3 + 4);
  CHECK(count(c.ptx, "mbarrier.inval.shared::cta.b64") == 3 + 4);
  CHECK(count(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 2);
  // 128x64 + 64x128 f16 per stage of the first kernel, 64x64 + 64x64 bf16 for the second.
  CHECK(count(c.ptx, "mbarrier.arrive.expect_tx.shared::cta.b64") == 3 + 4);
  CHECK(count(c.ptx, "fence.mbarrier_init.release.cluster") == 2);
  // No cp.async copies remain; wgmma reads the 128-byte swizzled boxes.
  CHECK(count(c.ptx, "cp.async.cg.shared.global") == 0);
  CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4);  // 4 k16 steps
  CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") == 4);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
}

TEST_CASE("TMA ring with a producer warp: one more warp issues the copies, consumers release stages on empty mbarriers") {
  Compiled c = compile(source_file("tests/gpu/ws_matmul.tile"), "sm_90a");
  CHECK(count(c.plan, "copied 5 iteration(s) ahead by a producer warp (warp num_warps, one more than the kernel's), full and empty mbarriers per stage") == 1);
  CHECK(count(c.plan, "copied 3 iteration(s) ahead by a producer warp") == 1);
  REQUIRE(c.nm.kernels.size() == 2);
  // 8 + 1 warps launched; the layouts stay those of num_warps.
  for (const NvvmKernelInfo& k : c.nm.kernels) {
    CHECK(k.threads == 9 * 32);
    CHECK(k.specialized_loops == 1);
  }
  CHECK(count(c.ptx, ".maxntid 288, 1, 1") == 2);
  // Full and empty mbarriers per stage (6 + 4 stages); the empty ones count one arrival per consumer warp.
  CHECK(count(c.ptx, "mbarrier.init.shared::cta.b64") == 2 * (6 + 4));
  CHECK(count(c.ptx, "mbarrier.inval.shared::cta.b64") == 2 * (6 + 4));
  CHECK(count(c.ptx, "], 8;") == 6 + 4);
  // One place issues the copies (the producer's loop: A's box, B's 64-column boxes), one arrival
  // releases a stage; the producer waits for empty stages, the consumers for full ones.
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == (1 + 2) + (1 + 4));
  CHECK(count(c.ptx, "mbarrier.arrive.expect_tx.shared::cta.b64") == 2);
  CHECK(count(c.ptx, "mbarrier.arrive.shared::cta.b64") == 2);
  CHECK(count(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 4);
  // After the split the consumers' barriers name their own threads (the bf16 kernel's row maximum too);
  // before it, all 288 threads meet at barrier 0 around the mbarriers' set-up.
  CHECK(count(c.ptx, "bar.sync 1, 256;") >= 4);
  CHECK(count(c.ptx, "bar.sync \t0;") == 4);
  CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4);
  CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") == 4);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
}

TEST_CASE("the producer warp only where the kernel allows one more warp, and the plan says why not") {
  std::string src = source_file("tests/gpu/ws_matmul.tile");
  SUBCASE("not asked for (the default)") {
    Compiled c = compile(src, "sm_90a", false, false);
    CHECK(count(c.plan, "by thread 0, one mbarrier per stage") == 2);
    CHECK(count(c.plan, "warp-specialized") == 0);
    CHECK(c.nm.kernels[0].threads == 256);
  }
  SUBCASE("rings small enough for two CTAs per SM (the extra warp's registers would cost one)") {
    Compiled c = compile(source_file("tests/gpu/tma_matmul.tile"), "sm_90a");
    CHECK(count(c.plan, "not warp-specialized: the ring (99328 bytes) leaves room for two CTAs per SM") == 1);
    CHECK(count(c.plan, "not warp-specialized: the ring (66560 bytes) leaves room for two CTAs per SM") == 1);
    CHECK(c.nm.kernels[0].threads == 256);
    CHECK(c.nm.kernels[1].threads == 128);
  }
  SUBCASE("a load before the loop (the extra warp would read with a layout it has no place in)") {
    Compiled c = compile(replaced(src, "  acc = zeros([BM, BN], f32)\n", "  acc = zeros([BM, BN], f32)\n  t0 = load(a + rm)\n"), "sm_90a");
    CHECK(count(c.plan, "not warp-specialized: a statement before the loop reads memory or moves data between threads (line 14)") == 1);
    CHECK(c.nm.kernels[0].threads == 256);
    CHECK(c.nm.kernels[1].threads == 288);
  }
  SUBCASE("a device assert (its report meets at CTA-wide barriers)") {
    Compiled c = compile(replaced(src, "  store(c + rm[:, None]", "  assert(K > 0, \"k\")\n  store(c + rm[:, None]"), "sm_90a");
    CHECK(count(c.plan, "not warp-specialized: the kernel asserts or prints") == 1);
  }
  SUBCASE("bounds checks") {
    Compiled c = compile(src, "sm_90a", true);
    CHECK(count(c.plan, "by a producer warp") == 0);
  }
}

TEST_CASE("TMA ring: B's 64-column boxes lie K * 128 bytes apart, as its wgmma descriptors say") {
  Compiled c = compile(source_file("tests/gpu/tma_matmul.tile"), "sm_90a");
  // B descriptor fields of the f16 kernel: LBO 64 * 128 = 8192 bytes (between the boxes) in the low
  // word, SBO 1024 (8-row groups) and the 128-byte swizzle in the constant high word.
  const std::string lo = ", " + std::to_string((8192 >> 4) << 16) + "\n";
  const std::string hi = std::to_string((int64_t(1024 >> 4) | (int64_t(1) << 30)) << 32);
  CHECK(count(c.nm.ir, lo) >= 1);
  CHECK(count(c.nm.ir, hi) >= 1);
  // The cp.async kernel's interleaved B (LBO 1024, SBO 2048 for 128 columns) is gone from it.
  const std::string old_hi = std::to_string((int64_t(2048 >> 4) | (int64_t(1) << 30)) << 32);
  CHECK(count(c.nm.ir, old_hi) == 0);
}

TEST_CASE("TMA rings only on sm_90a; other targets keep their code") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    CAPTURE(arch);
    Compiled c = compile(source_file("tests/gpu/tma_matmul.tile"), arch);
    // The only TMA the plan names: why --warp-specialize was not taken.
    CHECK(count(c.plan, "    warp_specialize: asked for by --warp-specialize: no, the target is not sm_90a (no TMA ring)\n") == 2);
    CHECK(count(c.plan, "TMA") == 2);
    CHECK(count(c.ptx, "cp.async.bulk") == 0);
    CHECK(count(c.ptx, "mbarrier") == 0);
    CHECK(count(c.nm.ir, "grid_constant") == 0);
    for (const NvvmKernelInfo& k : c.nm.kernels) CHECK(k.args.size() == 6);
  }
}

TEST_CASE("with bounds checks the checked copy of the loop keeps cp.async, the unchecked copy takes TMA") {
  Compiled c = compile(source_file("tests/gpu/tma_matmul.tile"), "sm_90a", true);
  CHECK(count(c.plan, "no TMA: bounds checks: the copies are checked lane by lane") == 2);
  CHECK(count(c.plan, "pipelined: TMA ring") == 2);
  CHECK(count(c.ptx, "cp.async.cg.shared.global") > 0);
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d") > 0);
}

TEST_CASE("TMA rings over tensors of rank 3 and 4: scalar index * stride terms the masks do not bound are the maps' outer coordinates") {
  Compiled c = compile(source_file("tests/gpu/tma_planes.tile"), "sm_90a", false, false);
  CHECK(count(c.plan, "pipelined: TMA ring of 3 stages x 32768 bytes") == 1);
  CHECK(count(c.plan, "pipelined: TMA ring of 4 stages x 16384 bytes") == 1);
  CHECK(count(c.plan, "TMA A ta: f16 tensor a[M, K], rows K apart, box 128x64 at (rm[:, None], rk[None, :] + k) of plane z (planes M * K apart)") == 1);
  CHECK(count(c.plan, "TMA B tb: f16 tensor b[K, N], rows N apart, box 64x64 at (rk[:, None] + k, rn[None, :]) of plane z (planes K * N apart)") == 1);
  // Two outer coordinates, the inner one first (fewer parameters in its stride).
  CHECK(count(c.plan, "TMA A tx: bf16 tensor x[P, Q], rows Q apart, box 64x64 at (rm[:, None], rk[None, :] + k) of plane h (planes P * Q apart), "
                      "z (planes H * P * Q apart)") == 1);
  CHECK(count(c.plan, "no TMA") == 0);
  REQUIRE(c.nm.kernels.size() == 2);
  // The maps after the buffers and scalars: the planes' strides as products of runtime parameters.
  const NvvmKernelInfo& k0 = c.nm.kernels[0];
  REQUIRE(k0.args.size() == 9);
  const NvvmKernelInfo::Arg& a = k0.args[7];
  CHECK((a.tensor_map && a.name == "a" && a.rows == "M" && a.cols == "K" && a.stride == "K"));
  REQUIRE(a.plane_strides.size() == 1);
  CHECK(a.plane_strides[0] == std::vector<std::string>{"M", "K"});
  CHECK(a.plane_strides_v[0] == 1);
  const NvvmKernelInfo& k1 = c.nm.kernels[1];
  const NvvmKernelInfo::Arg& x = k1.args[k1.args.size() - 2];
  CHECK((x.tensor_map && x.name == "x"));
  REQUIRE(x.plane_strides.size() == 2);
  CHECK(x.plane_strides[0] == std::vector<std::string>{"P", "Q"});
  CHECK(x.plane_strides[1] == std::vector<std::string>{"H", "P", "Q"});
  // 3-D copies (A one box, B two 64-column boxes; 2 prologue stages + 1 a loop iteration) and 4-D
  // ones (A and B one box each; 3 + 1); no cp.async copies.
  CHECK(count(c.ptx, "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes") == (2 + 1) * 3);
  CHECK(count(c.ptx, "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes") == (1 + 1) * 4);
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d") == 0);
  CHECK(count(c.ptx, "cp.async.cg.shared.global") == 0);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
}

TEST_CASE("an outer coordinate TMA cannot take keeps the cp.async ring, and the plan says why") {
  std::string src = source_file("tests/gpu/tma_planes.tile");
  SUBCASE("a term that is not index * stride") {
    Compiled c = compile(replaced(src, "load(a + z * M * K +", "load(a + z * z * K +"), "sm_90a", false, false);
    CHECK(count(c.plan, "no TMA: the load of ta (line 17) has a scalar term the mask does not bound (z * z * K) that is not index * stride") == 1);
  }
}

TEST_CASE("loads TMA cannot prove to be boxes keep the cp.async ring, and the plan says why") {
  std::string src = source_file("tests/gpu/tma_matmul.tile");
  SUBCASE("a mask bound the host cannot compute") {
    Compiled c = compile(replaced(src, "mask=(rm[:, None] < M) & (rk[None, :] + k < K)", "mask=(rm[:, None] < M - 1) & (rk[None, :] + k < K)"),
                         "sm_90a");
    CHECK(count(c.plan, "no TMA: the load of ta (line 15) has a mask conjunct that is not row < extent or column < extent (rm[:, None] < M - 1)") == 1);
    CHECK(count(c.plan, "pipelined: TMA ring") == 1);  // the bf16 kernel's loop
  }
  SUBCASE("a mask that bounds only the columns") {
    Compiled c = compile(replaced(src, "mask=(rm[:, None] < M) & (rk[None, :] + k < K)", "mask=rk[None, :] + k < K"), "sm_90a");
    CHECK(count(c.plan, "no TMA: the load of ta (line 15) has a mask that does not bound both the rows and the columns") == 1);
  }
  SUBCASE("a mask that is not the bounds the pointer's indices name") {
    Compiled c = compile(replaced(src, "mask=(rm[:, None] < M) & (rk[None, :] + k < K)", "mask=(rm[:, None] < M) & (rk[None, :] < K)"), "sm_90a");
    // the loop's k is outside the mask: an outer coordinate of stride 1, which TMA cannot take
    CHECK(count(c.plan, "no TMA: the load of ta (line 15) has a scalar term the mask does not bound (k): an outer coordinate whose stride (1 elements) "
                        "is not known to be a multiple of 16 bytes") == 1);
  }
  SUBCASE("row indices that are not consecutive") {
    Compiled c = compile(replaced(src, "rm = program_id(0) * BM + arange(0, BM)", "rm = program_id(0) * BM + arange(0, BM) * 2"), "sm_90a");
    CHECK(count(c.plan, "no TMA: the load of ta (line 15) has row or column indices that are not consecutive values") == 1);
  }
}

TEST_CASE("TMA ring for the form Triton's TTIR gives a matmul: a scalar rebound before the loop, index terms in variables") {
  const std::string src = source_file("tests/gpu/rebound_matmul.tile");
  Compiled c = compile(src, "sm_90a", false, false);
  CHECK(count(c.plan, "pipelined: TMA ring of 3 stages") == 1);
  CHECK(count(c.plan, "TMA B y: f16 tensor b[K, N], rows N apart, box 64x64 at (tb, tn)") == 1);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
  // A tile read of `ij` before its last assignment: recomputing rm later would see the rebound value,
  // so ij is no longer fixed and the loads are not pipelined.
  Compiled bad = compile(replaced(src, "  rm = (off_i", "  r0 = ij * 0 + arange(0, 128)\n  ij = ij + 0\n  rm = (off_i"), "sm_90a", false, false);
  CHECK(count(bad.plan, "not pipelined (the load of x (line 21) has a pointer or mask that is not index arithmetic") == 1);
}
