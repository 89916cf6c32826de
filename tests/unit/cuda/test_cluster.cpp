// TMA rings in clusters of two CTAs (PipelinePlan::cluster_axis, NvvmTma.cpp, `--cluster`): what the
// plan decides for tests/gpu/cluster_matmul.tile and variants of it (the axis, the shared operand,
// why not), the launch information and the PTX (multicast copies, remote arrivals, cluster barriers),
// checked without a GPU.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "ir/Diag.h"
#include "ir/TileParser.h"

using namespace dtsim;

namespace {

std::string cluster_source() {
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/tests/gpu/cluster_matmul.tile");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

struct Compiled {
  std::string plan, ptx;
  NvvmModule nm;
};

Compiled compile(const std::string& src, bool cluster = true, bool specialize = false) {
  Module m = parse_tile(Sources::add("<cluster>", src));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.cluster = cluster;
  opt.warp_specialize = specialize;
  Compiled c;
  c.plan = emit_plan(m, b, opt);
  c.nm = emit_nvvm_module(m, b, opt);
  c.ptx = compile_ptx(c.nm.ir, opt);
  return c;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const char* kMulticast = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster";
const char* kCopy = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [";

}  // namespace

TEST_CASE("clusters: the pair's shared operand is B, along the axis the program-id mapping pairs it on") {
  Compiled c = compile(cluster_source());
  // Grouped order: pid_n is swizzle2d's second result, the same for j = 2c and 2c + 1; row-major
  // order: rn reads program_id(1) only, the same for program_id(0) = 2c and 2c + 1.
  CHECK(count(c.plan, "cluster: 2 CTAs along grid axis 1 (program_id(1) 2c and 2c + 1) share tb") == 1);
  CHECK(count(c.plan, "cluster: 2 CTAs along grid axis 0 (program_id(0) 2c and 2c + 1) share ty") == 2);
  // The shared operand's map has half the tile's rows per box; the other operand's is whole.
  CHECK(count(c.plan, "TMA B tb: f16 tensor b[K, N], rows N apart, box 32x64 at (rk[:, None] + k, rn[None, :])") == 1);
  CHECK(count(c.plan, "TMA A ta: f16 tensor a[M, K], rows K apart, box 128x64") == 1);
  CHECK(count(c.plan, "TMA B ty: bf16 tensor y[Q, R], rows R apart, box 32x64") == 2);
  REQUIRE(c.nm.kernels.size() == 3);
  CHECK(c.nm.kernels[0].cluster_axis == 1);
  CHECK(c.nm.kernels[1].cluster_axis == 0);
  CHECK(c.nm.kernels[2].cluster_axis == 0);
  const NvvmKernelInfo::Arg& b = c.nm.kernels[0].args.back();
  CHECK((b.tensor_map && b.name == "b" && b.box_rows == 32 && b.box_cols == 64));
  // Issue sites: S - 1 in the prologue and one in the loop (3, 4, 3). At each, per 64-column box of
  // B, one multicast copy of this CTA's half (clusters whose two CTAs read the same box) or the two
  // halves copied alone; A's box is copied alone.
  CHECK(count(c.ptx, kMulticast) == 3 * 2 + 4 * 4 + 3 * 2);
  CHECK(count(c.ptx, kCopy) == 3 * (1 + 2 * 2) + 4 * (1 + 2 * 4) + 3 * (1 + 2 * 2));
  // Full and empty mbarriers per stage (empty: one arrival per CTA of the cluster, ", 2;").
  CHECK(count(c.ptx, "mbarrier.init.shared::cta.b64") == 2 * (3 + 4 + 3));
  CHECK(count(c.ptx, "mbarrier.inval.shared::cta.b64") == 2 * (3 + 4 + 3));
  // A stage is released in this CTA and the peer's; the refill waits for both at cluster scope.
  CHECK(count(c.ptx, "mbarrier.arrive.release.cluster.shared::cta.b64") == 3);
  CHECK(count(c.ptx, "mbarrier.arrive.release.cluster.shared::cluster.b64") == 3);
  CHECK(count(c.ptx, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64") == 3);
  CHECK(count(c.ptx, "mapa.shared::cluster.u32") == 2 * 3);
  CHECK(count(c.ptx, "ld.shared::cluster.b64") == 4 * 3);
  // The cluster meets before the loop (barriers and exchanged origins ready) and after it.
  CHECK(count(c.ptx, "barrier.cluster.arrive.release") == 2 * 3);
  CHECK(count(c.ptx, "barrier.cluster.wait.acquire") == 2 * 3);
  CHECK(count(c.ptx, "%cluster_nctarank") == 3);
  REQUIRE(run_ptxas(c.ptx, "sm_90a").ok);
}

TEST_CASE("clusters: not without --cluster, and why not where they cannot be") {
  Compiled off = compile(cluster_source(), false);
  CHECK(count(off.plan, "cluster") == 0);
  CHECK(count(off.ptx, kMulticast) == 0);
  CHECK(count(off.ptx, "barrier.cluster") == 0);
  for (const NvvmKernelInfo& k : off.nm.kernels) CHECK(k.cluster_axis == -1);
  // The producer warp's ring is not clustered.
  Compiled ws = compile(cluster_source(), true, true);
  CHECK(count(ws.plan, "no cluster: the loop has a producer warp (--warp-specialize)") == 3);
  // A device assert: a failing CTA leaves early.
  std::string src = cluster_source();
  Compiled as = compile(replaced(src, "  acc = zeros([BM, BN], f32)\n", "  acc = zeros([BM, BN], f32)\n  assert(K > 0, \"K\")\n"));
  CHECK(count(as.plan, "no cluster: the kernel asserts or prints") == 1);
  // The loop inside an `if`.
  std::string nested = replaced(replaced(src, "  for k in range(0, K, BK) {\n", "  if (K > 0) {\n  for k in range(0, K, BK) {\n"),
                                "    acc = dot(ta, tb, acc)\n  }\n", "    acc = dot(ta, tb, acc)\n  }\n  }\n");
  Compiled in = compile(nested);
  CHECK(count(in.plan, "no cluster: the loop is inside another statement") == 1);
  // Both operands depend on both program ids (rows and columns from one pid): no pair shares a box.
  const std::string ids = "  rm = program_id(0) * TM + arange(0, TM)\n  rn = program_id(1) * TN + arange(0, TN)\n";
  Compiled mixed = compile(replaced(src, ids, "  rm = (program_id(0) + program_id(1)) * TM + arange(0, TM)\n  rn = (program_id(1) + program_id(0)) * TN + arange(0, TN)\n"));
  CHECK(count(mixed.plan, "no cluster: no operand's box is the same for program ids 2c and 2c + 1 on a grid axis") == 1);
}
