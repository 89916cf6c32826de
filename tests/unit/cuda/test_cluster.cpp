// TMA rings in clusters of two CTAs (PipelinePlan::cluster_axis, NvvmTma.cpp, `--cluster`): what the
// plan decides for tests/gpu/cluster_matmul.tile and variants of it (the axis, the shared operand,
// why not), the launch information and the PTX (multicast copies, remote arrivals, cluster barriers),
// checked without a GPU.
#include <doctest/doctest.h>

#include <string>

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

Compiled compile(const std::string& src, int cluster = 1, bool specialize = false) {  // cluster: CudaOptions::cluster
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.cluster = cluster;
  opt.warp_specialize = specialize;
  return test::compile_tile("<cluster>", src, opt);
}

const char* kMulticast = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster";
const char* kCopy = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [";

}  // namespace

TEST_CASE("clusters: the pair's shared operand is B, along the axis the program-id mapping pairs it on") {
  Compiled c = compile(source_file("tests/gpu/cluster_matmul.tile"));
  // Grouped order: pid_n is swizzle2d's second result, the same for j = 2c and 2c + 1; row-major
  // order: rn reads program_id(1) only, the same for program_id(0) = 2c and 2c + 1.
  CHECK(count(c.plan, "cluster: 2 CTAs along grid axis 1 (program_id(1) 2c and 2c + 1) share tb") == 1);
  CHECK(count(c.plan, "cluster: 2 CTAs along grid axis 0 (program_id(0) 2c and 2c + 1) share ty") == 1);
  CHECK(count(c.plan, "cluster: 2 CTAs along grid axis 0 (program_id(0) 2c and 2c + 1) share tv") == 1);
  // The shared operand's map has half the tile's rows per box; the other operand's is whole.
  CHECK(count(c.plan, "TMA B tb: f16 tensor b[K, N], rows N apart, box 32x64 at (rk[:, None] + k, rn[None, :])") == 1);
  CHECK(count(c.plan, "TMA A ta: f16 tensor a[M, K], rows K apart, box 128x64") == 1);
  CHECK(count(c.plan, "TMA B ty: bf16 tensor y[Q, R], rows R apart, box 32x64") == 1);
  CHECK(count(c.plan, "TMA B tv: bf16 tensor v[W, V], rows V apart, box 32x64") == 1);
  REQUIRE(c.nm.kernels.size() == 3);
  CHECK(c.nm.kernels[0].cluster_axis == 1);
  CHECK(c.nm.kernels[1].cluster_axis == 0);
  CHECK(c.nm.kernels[2].cluster_axis == 0);
  const NvvmKernelInfo::Arg& b = c.nm.kernels[0].args.back();
  CHECK((b.tensor_map && b.name == "b" && b.box_rows == 32 && b.box_cols == 64));
  // Issue sites: S - 1 in the prologue (3 - 1, 4 - 1, 3 - 1), where per 64-column box of B the
  // pair either multicasts this CTA's half or copies both halves alone (as the run-time check says),
  // and two in the loop: the multicast refill and the plain ring's (whole boxes). A's box is copied
  // alone at every site.
  const int boxes[] = {2, 4, 2}, stages[] = {3, 4, 3};
  int multicast = 0, copies = 0;
  for (int k = 0; k < 3; ++k) {
    multicast += (stages[k] - 1 + 1) * boxes[k];
    copies += (stages[k] - 1 + 2) + (stages[k] - 1 + 1) * 2 * boxes[k];
  }
  CHECK(count(c.ptx, kMulticast) == multicast);
  CHECK(count(c.ptx, kCopy) == copies);
  // Full and empty mbarriers per stage (empty: one arrival per CTA of the cluster, ", 2;").
  CHECK(count(c.ptx, "mbarrier.init.shared::cta.b64") == 2 * (3 + 4 + 3));
  CHECK(count(c.ptx, "], 2;") == 3 + 4 + 3);
  CHECK(count(c.ptx, "mbarrier.inval.shared::cta.b64") == 2 * (3 + 4 + 3));
  // A stage is released in this CTA and the peer's; the refill waits for both. Arrivals and waits at
  // CTA scope (the cluster-scope forms cost a fence each).
  CHECK(count(c.ptx, "mbarrier.arrive.shared::cta.b64") == 3);
  CHECK(count(c.ptx, "mbarrier.arrive.shared::cluster.b64") == 3);
  CHECK(count(c.ptx, "mbarrier.arrive.release") == 0);
  CHECK(count(c.ptx, "acquire.cluster.shared") == 0);
  // mapa: the exchanged values and the remote arrival; four values read from the peer.
  CHECK(count(c.ptx, "mapa.shared::cluster.u32") == 2 * 3);
  CHECK(count(c.ptx, "ld.shared::cluster.b64") == 4 * 3);
  // The cluster meets before the loop (barriers and exchanged origins ready) and after it.
  CHECK(count(c.ptx, "barrier.cluster.arrive.release") == 2 * 3);
  CHECK(count(c.ptx, "barrier.cluster.wait.acquire") == 2 * 3);
  CHECK(count(c.ptx, "%cluster_nctarank") == 3);
  for (const NvvmKernelInfo& k : c.nm.kernels) CHECK(k.cluster_loops == 1);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
}

TEST_CASE("clusters with a producer warp: it waits for both CTAs' consumer warps, which release stages in both CTAs") {
  // With --warp-specialize mm_rows' ring (one CTA per SM) gets the producer warp; the other two keep thread 0.
  Compiled c = compile(source_file("tests/gpu/cluster_matmul.tile"), 1, true);
  CHECK(count(c.plan, "cluster: 2 CTAs along grid axis") == 3);
  CHECK(count(c.plan, "share ty: each copies half of its box and multicasts it to both; the producer refills a stage once both CTAs' consumer "
                      "warps released it (remote arrive)") == 1);
  REQUIRE(c.nm.kernels.size() == 3);
  CHECK(c.nm.kernels[1].specialized_loops == 1);
  CHECK(c.nm.kernels[1].cluster_loops == 1);
  CHECK(c.nm.kernels[1].threads == 5 * 32);
  // mm_rows' empty mbarriers count both CTAs' 4 consumer warps.
  CHECK(count(c.ptx, "], 8;") == 4);
  // The producer's one issue site: 4 boxes of B, multicast or both halves; A alone. With the other
  // two kernels' sites (as in the test above).
  CHECK(count(c.ptx, kMulticast) == 4 + (3 - 1 + 1) * 2 * 2);
  CHECK(count(c.ptx, kCopy) == (1 + 2 * 4) + 2 * ((3 - 1 + 2) + (3 - 1 + 1) * 2 * 2));
  // Consumers arrive on their own empty mbarrier and on the peer's (or twice on their own without
  // multicast); the producer waits. Its whole warp meets the cluster barrier after its loop: 3 kernels
  // x 2 barriers, one more in the producer's path. (The other two kernels' plain rings: one own and
  // one remote arrival each.)
  CHECK(count(c.ptx, "mbarrier.arrive.shared::cta.b64") == 1 + 2);
  CHECK(count(c.ptx, "mbarrier.arrive.shared::cluster.b64") == 3);
  CHECK(count(c.ptx, "mbarrier.arrive.release") == 0);
  CHECK(count(c.ptx, "acquire.cluster.shared") == 0);
  CHECK(count(c.ptx, "barrier.cluster.arrive.release") == 3 * 2 + 1);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
}

TEST_CASE("clusters only where asked for: none by default, none with --no-cluster or --persistent") {
  const std::string src = source_file("tests/gpu/cluster_matmul.tile");
  Compiled d = compile(src, 0);
  CHECK(count(d.plan, "cluster: 2 CTAs") == 0);
  CHECK(count(d.plan, "no cluster") == 0);
  for (const NvvmKernelInfo& k : d.nm.kernels) CHECK(k.cluster_axis == -1);
  CHECK(count(d.ptx, "barrier.cluster") == 0);
  // Asked for together with a persistent grid: the persistent plan says why not (the ring is clustered).
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.cluster = 1;
  opt.persistent = 1;
  Compiled p = test::compile_tile("<cluster>", src, opt);
  CHECK(count(p.plan, "cluster: 2 CTAs") == 3);
}

TEST_CASE("clusters: none with --no-cluster, and why not where they cannot be") {
  Compiled off = compile(source_file("tests/gpu/cluster_matmul.tile"), -1);
  CHECK(count(off.plan, "cluster: 2 CTAs") == 0);
  CHECK(count(off.plan, "no cluster") == 0);
  CHECK(count(off.ptx, kMulticast) == 0);
  CHECK(count(off.ptx, "barrier.cluster") == 0);
  for (const NvvmKernelInfo& k : off.nm.kernels) CHECK(k.cluster_axis == -1);

  // Two stages: thread 0 refills a stage an iteration late, which two stages do not allow.
  Compiled two = compile(replaced(source_file("tests/gpu/cluster_matmul.tile"), "num_warps(8) num_stages(3)", "num_warps(8) num_stages(2)"));
  CHECK(count(two.plan, "no cluster: the ring has fewer than 3 stages") == 1);
  // A device assert: a failing CTA leaves early.
  std::string src = source_file("tests/gpu/cluster_matmul.tile");
  Compiled as = compile(replaced(src, "  acc = zeros([BM, BN], f32)\n", "  acc = zeros([BM, BN], f32)\n  assert(K > 0, \"K\")\n"));
  CHECK(count(as.plan, "no cluster: the kernel asserts or prints") == 1);
  // The loop inside an `if`.
  std::string nested = replaced(replaced(src, "  for k in range(0, K, BK) {\n", "  if (K > 0) {\n  for k in range(0, K, BK) {\n"),
                                "    acc = dot(ta, tb, acc)\n  }\n", "    acc = dot(ta, tb, acc)\n  }\n  }\n");
  Compiled in = compile(nested);
  CHECK(count(in.plan, "no cluster: the loop is inside another statement (line 19)") == 1);
  // Both operands depend on both program ids (rows and columns from one pid): no pair shares a box.
  const std::string ids = "  rm = program_id(0) * TM + arange(0, TM)\n  rn = program_id(1) * TN + arange(0, TN)\n";
  Compiled mixed = compile(replaced(src, ids, "  rm = (program_id(0) + program_id(1)) * TM + arange(0, TM)\n  rn = (program_id(1) + program_id(0)) * TN + arange(0, TN)\n"));
  CHECK(count(mixed.plan, "no cluster: no operand's box is the same for program ids 2c and 2c + 1 on a grid axis") == 1);
}
