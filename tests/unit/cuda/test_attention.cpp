// Attention forward as the TTIR reader lowers tensor-descriptor accesses (tests/gpu/attention_desc.tile):
// what the CUDA backend plans and emits for it, checked on the PTX without a GPU.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "frontend/DT.h"
#include "ir/TileParser.h"
#include "test_helpers.h"

using namespace dtsim;
using test::count;

namespace {

struct Compiled {
  std::string plan, layouts, ptx;
};

Compiled compile(const std::string& arch, const std::string& file = "attention_desc") {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/tests/gpu/" + file + ".tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = arch;
  Compiled c;
  c.plan = emit_plan(m, b, opt);
  c.layouts = emit_layouts(m, b, opt);
  c.ptx = compile_ptx(emit_nvvm(m, b, opt), opt);
  return c;
}

}  // namespace

TEST_CASE("descriptor-shaped attention: 16-byte global loads, no index tiles moved between layouts") {
  for (const char* arch : {"sm_90a", "sm_80"}) {
    CAPTURE(arch);
    Compiled c = compile(arch);
    // The pointers are contiguous along the head dimension (the last stride is 1) and 16-byte aligned.
    CHECK(count(c.plan, "contig 64, div 16") == 4);
    // q (128x64), k and v (64x64) over 128 threads: 8 f16 per 16-byte vector, 8 + 4 + 4 of them
    // (on sm_90a, q, k and v are copied by TMA instead).
    bool rings = std::string(arch) == "sm_90a";
    CHECK(count(c.layouts, "load [128, 64]: 8-element vectors") == (rings ? 0 : 1));
    CHECK(count(c.layouts, "load [64, 64]: 8-element vectors") == (rings ? 0 : 2));
    CHECK(count(c.ptx, "ld.global.v4.b32") + count(c.ptx, "ld.global.v4.u32") == (rings ? 0 : 16));
    CHECK(count(c.ptx, "ld.global.b16") == 0);
    CHECK(count(c.ptx, "ld.global.b32") == 0);
    // The row and column indices are computed in the loads' layouts; wgmma reads trans(kt) K-major
    // from kt as it is held, so on sm_90a nothing in the loop moves through shared memory but the
    // dots' operands (mma.sync on sm_80 converts trans(kt) once).
    size_t loop = c.layouts.find("for n in range");
    REQUIRE(loop != std::string::npos);
    std::string body = c.layouts.substr(loop, c.layouts.find("\n  store(", loop) - loop);
    CHECK(count(body, "through shared memory") == (std::string(arch) == "sm_90a" ? 0 : 1));
  }
}

TEST_CASE("descriptor-shaped attention on sm_90a: both dots on wgmma, k and v in operand rings, p in registers") {
  Compiled c = compile("sm_90a");
  CHECK(count(c.plan, "dot 128x64x64: wgmma m64n64k16") == 2);
  CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 16);
  // s = dot(qt, trans(kt)): A and B from shared memory, B K-major (imm-trans-b 0), for its 8 wgmmas;
  // acc_next = dot(p.to(f16), vt): A from four f16x2 registers (no imm-trans-a), vt N-major (1).
  CHECK(count(c.layouts, "B K-major, trans's operand as held") == 1);
  CHECK(count(c.ptx, ", p, 1, 1, 0, 0;") == 8);
  CHECK(count(c.ptx, ", p, 1, 1, 1;") == 8);
  CHECK(count(c.layouts, "A operand in registers: its accumulator-layout values packed as f16x2 fragments") == 1);
  // qt, the A operand of s, is copied by TMA into shared memory once before the loop (its load
  // statement emits nothing: no register holds it), not per iteration.
  CHECK(c.plan.find("qt: copied by TMA into shared memory once before the loop (its load, line 15, emits nothing), read there by wgmma\n") !=
        std::string::npos);
  CHECK(c.plan.find("TMA A qt: f16 tensor q[rows, cols], rows stride apart, box 128x64 at ((m0.to(i64) + arange(0, 128).to(i64))[:, None], "
                    "(0.to(i64) + arange(0, 64).to(i64))[None, :])") != std::string::npos);
  CHECK(count(c.layouts, "qt: not loaded here; TMA copies it into shared memory before the loop reading it") == 1);
  CHECK(c.plan.find("A operand qt staged once for line 22: for n in range(0, SEQ, 64): offset 0, 16384 bytes") != std::string::npos);
  CHECK(count(c.layouts, "A operand qt read from where it was staged before the loop") == 1);
  // The key loop is pipelined: kt and vt copied by TMA into 3 stages above qt, 2 iterations ahead
  // (kv, advanced by the loop through kv_next, computed from n), one 64x64 box each per stage and
  // one mbarrier per stage above the stages; issued twice before the loop and once in it; qt's box
  // once before them, on its own mbarrier, waited for after them.
  CHECK(c.plan.find("pipelined: operand rings of 3 stages x 16384 bytes, kt (B of s, K-major, TMA), vt (B of acc_next, TMA) copied "
                    "2 iteration(s) ahead, issued while the first dot runs, one mbarrier per stage; kv computed from n") != std::string::npos);
  CHECK(c.plan.find("TMA B kt: f16 tensor k[rows, cols], rows stride apart, box 64x64 at ((kv.to(i64) + arange(0, 64).to(i64))[:, None], "
                    "(0.to(i64) + arange(0, 64).to(i64))[None, :])") != std::string::npos);
  CHECK(c.plan.find("operand rings of line 22: for n in range(0, SEQ, 64): 3 x 16384: offset 16384, 50176 bytes") != std::string::npos);
  CHECK(count(c.layouts, "read from its TMA ring") == 2);
  CHECK(count(c.ptx, "cp.async.cg.shared.global") == 0);
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == 7);
  CHECK(count(c.ptx, "mbarrier.arrive.expect_tx.shared::cta.b64") == 4);
  CHECK(count(c.ptx, "mbarrier.init.shared::cta.b64") == 4);
  CHECK(count(c.ptx, "mbarrier.inval.shared::cta.b64") == 4);
  CHECK(count(c.ptx, ".param .align 64 .b8 attn_desc_param_") == 4);  // the tensor maps of k, v, q and o, by value
  CHECK(count(c.ptx, "ld.global") == 0);
  CHECK(count(c.ptx, "st.shared.v4.u16") == 0);
  // qt's copy is issued before the ring's first, and waited for (parity 0) before the loop's first wait.
  size_t q_copy = c.ptx.find("cp.async.bulk.tensor");
  size_t q_wait = c.ptx.find("mbarrier.try_wait.parity.shared::cta.b64");
  REQUIRE(q_wait != std::string::npos);
  CHECK(count(c.ptx.substr(q_copy, q_wait - q_copy), "cp.async.bulk.tensor") == 1 + 2 * 2);
  // In the loop: every thread waits on the stage's mbarrier, one barrier per iteration, and the next
  // stage's copies between the first dot's commit and its wait.
  size_t wait = c.ptx.find("mbarrier.try_wait.parity.shared::cta.b64", q_wait + 1);
  REQUIRE(wait != std::string::npos);
  size_t commit = c.ptx.find("wgmma.commit_group.sync.aligned;", wait);
  size_t copy = c.ptx.find("cp.async.bulk.tensor", commit);
  size_t wgwait = c.ptx.find("wgmma.wait_group.sync.aligned 0;", commit);
  size_t second = c.ptx.find("wgmma.commit_group.sync.aligned;", commit + 1);
  size_t exit = c.ptx.find("mbarrier.inval", wait);
  REQUIRE(exit != std::string::npos);
  CHECK(commit < copy);
  CHECK(copy < wgwait);
  CHECK(wgwait < second);
  CHECK(count(c.ptx.substr(wait, exit - wait), "st.shared") == 0);
  CHECK(count(c.ptx.substr(wait, exit - wait), "cp.async.wait_group") == 0);
  CHECK(count(c.ptx, "bar.sync") <= 10);
}

TEST_CASE("descriptor-shaped attention on sm_90a with bounds checks: the operand rings keep cp.async, the plan says why") {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/tests/gpu/attention_desc.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = "sm_90a";
  opt.bounds_checks = true;
  std::string plan = emit_plan(m, b, opt);
  CHECK(plan.find("kt (B of s, K-major, cp.async), vt (B of acc_next, cp.async) copied 2 iteration(s) ahead") != std::string::npos);
  CHECK(count(plan, "bounds checks: the copies are checked lane by lane") == 2);
  std::string ptx = compile_ptx(emit_nvvm(m, b, opt), opt);
  CHECK(count(ptx, "cp.async.bulk.tensor") == 0);
  CHECK(count(ptx, "cp.async.cg.shared.global") == 24);
}

TEST_CASE("descriptor-shaped attention on sm_80: no operand rings, the plan says why") {
  Compiled c = compile("sm_80");
  CHECK(c.plan.find("not pipelined (2 dots in the body, none of the form acc = dot(x, y, acc); the dot of s (line 26) does not "
                    "accumulate into its own target; no operand rings: they need wgmma (sm_90a)), no prefetch") != std::string::npos);
  CHECK(count(c.ptx, "cp.async") == 0);
}

TEST_CASE("attention with k's transpose and the broadcast maximum in variables, two warpgroups: the view reads the ring K-major, "
          "the broadcast is held in the scores' layout") {
  Compiled c = compile("sm_90a", "attention_desc_w8");
  CHECK(c.plan.find("pipelined: operand rings of 4 stages x 16384 bytes, kt (B of s, K-major, TMA), vt (B of acc_next, TMA) copied "
                    "3 iteration(s) ahead") != std::string::npos);
  CHECK(count(c.layouts, "B operand ktt read from its TMA ring") == 1);
  CHECK(count(c.layouts, "A operand in registers") == 1);
  // 2 warpgroups x (4 k16 steps of s, K-major from shared memory; 4 of acc_next, A in registers).
  CHECK(count(c.ptx, ", p, 1, 1, 0, 0;") == 4);
  CHECK(count(c.ptx, ", p, 1, 1, 1;") == 4);
  size_t loop = c.layouts.find("for n in range");
  REQUIRE(loop != std::string::npos);
  std::string body = c.layouts.substr(loop, c.layouts.find("\n  store(", loop) - loop);
  CHECK(count(body, "through shared memory") == 0);
  // mb = broadcast_to(mn[:, None], ...), read once by `s * qs - mb`: in the accumulator layout of s.
  CHECK(body.find("# mb: linear{regs=32, reg=[(0,1) (8,0) (0,8) (0,16) (0,32)], lane=[(0,2) (0,4) (1,0) (2,0) (4,0)]") != std::string::npos);
}

TEST_CASE("attention at head dim 128 with a causal mask: rings of 32 KiB stages") {
  Compiled c = compile("sm_90a", "attention_desc128");
  CHECK(c.plan.find("pipelined: operand rings of 2 stages x 32768 bytes, kt (B of s0, K-major, TMA), vt (B of acc_next, TMA)") != std::string::npos);
  // Head dim 128: each tile is two 64-column boxes, 8 KiB apart (kt K-major as well as vt N-major);
  // q [128, 128] two boxes of 128 rows, 16 KiB apart, read by s0's wgmma box by box.
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d") == 8 + 2 + 2);  // and o's two boxes, stored
  CHECK(count(c.ptx, "mbarrier.arrive.expect_tx") == 2 + 1);
  CHECK(c.plan.find("TMA A qt: f16 tensor q[rows, cols], rows stride apart, box 128x64") != std::string::npos);
  // s0's A descriptors (the address field counts 16 bytes): k16 step 7 of row tile 0 is 3 x 32 bytes
  // into the second box (16 KiB on: +1024 + 6), of row tile 1 another 64 rows (8 KiB: +512) on.
  CHECK(count(c.ptx, ", 1030;") == 1);
  CHECK(count(c.ptx, ", 1542;") == 1);
  CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 8);  // acc_next: 2 tiles x 4 k16 steps
  CHECK(count(c.ptx, ", p, 1, 1, 1;") == 8);
  CHECK(count(c.ptx, ", p, 1, 1, 0, 0;") == 16);  // s0: 2 tiles x 8 k16 steps over head dim 128
}

TEST_CASE("an operand ring whose load is not a box of its tensor masked by the extents keeps cp.async, the plan says why") {
  // kt read 64 elements further on (one row of k): still 16-byte aligned for cp.async, but the
  // column offset is not what the mask bounds, so TMA's zero fill would not be the mask.
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/tests/gpu/attention_desc.tile");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string src = ss.str();
  size_t at = src.find("kt = load(k + ");
  REQUIRE(at != std::string::npos);
  src.replace(at, 14, "kt = load(k + 64 + ");
  Module m = parse_tile(Sources::add("<attention_shifted>", src));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = "sm_90a";
  std::string plan = emit_plan(m, b, opt);
  CHECK(plan.find("kt (B of s, K-major, cp.async), vt (B of acc_next, TMA) copied 2 iteration(s) ahead") != std::string::npos);
  // (a constant offset is no outer coordinate: it has no index)
  CHECK(plan.find("cp.async kt: the load has a scalar term the mask does not bound (64) that is not index * stride") != std::string::npos);
  std::string ptx = compile_ptx(emit_nvvm(m, b, opt), opt);
  CHECK(count(ptx, "cp.async.bulk.tensor.2d") == 3 + 2);   // vt's box, twice before the loop and once in it; qt's; o's
  CHECK(count(ptx, "cp.async.cg.shared.global") == 12);    // kt's 4 vectors per thread, as often
  CHECK(count(ptx, "cp.async.wait_group 1;") == 1);        // both: the group and the mbarrier
  CHECK(count(ptx, "mbarrier.try_wait.parity") >= 1);
}

TEST_CASE("the tutorial's causal form: q staged once for both key loops, kept in shared memory between them") {
  Compiled c = compile("sm_90a", "attention_causal");
  CHECK(count(c.plan, "qt: copied by TMA into shared memory once before the loop (its load, line 20, emits nothing), read there by wgmma; "
                      "kept staged for a later loop") == 1);
  CHECK(count(c.plan, "qt: read by wgmma where the loop of line 27 staged it (kept in shared memory between the loops)") == 1);
  CHECK(count(c.plan, "transient between the loops, at most: offset 32768") == 1);
  CHECK(count(c.layouts, "qt: copied by TMA into shared memory once, read there by wgmma in the loop and a later one") == 1);
  CHECK(count(c.layouts, "qt: read by wgmma in the loop where an earlier loop staged it") == 1);
  // One copy: 128x128 f16 in two 64-column boxes (thread 0), nothing through registers; the loops'
  // k and v: two boxes each per copy, issued twice per loop (once before it, once in it).
  CHECK(count(c.ptx, "st.shared.v4.u16") == 0);
  CHECK(count(c.ptx, "ld.global") == 0);
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global") == 2 + 2 * 2 * 2 * 2);
  // Both loops' QK^T read the staged q: 2 tiles x 8 k16 steps each.
  CHECK(count(c.ptx, ", p, 1, 1, 0, 0;") == 32);
  // Head dim 128: q no longer live in registers across the off-band loop, nothing spilled.
  PtxasResult r = run_ptxas(c.ptx, "sm_90a", true);
  if (r.available) {
    REQUIRE(r.ok);
    CHECK(count(r.log, " 0 bytes spill stores, 0 bytes spill loads") == 1);
  }
  CudaOptions sm90a;
  sm90a.arch = "sm_90a";
  SUBCASE("a statement other than an assignment between the loops: each loop stages q") {
    std::string src = test::replaced(test::source_file("tests/gpu/attention_causal.tile"), "  lo = start_m * 128\n",
                               "  store(lse + first + offs_m, mx, mask=first + offs_m < rows)\n  lo = start_m * 128\n");
    test::Compiled v = test::compile_tile("<causal_store_between>", src, sm90a);
    CHECK(count(v.plan, "kept") == 0);
    CHECK(count(v.plan, "qt: staged into shared memory once before the loop, read there by wgmma; not by TMA: it is read by more than the dots of "
                        "the loops staging it\n") == 2);
    CHECK(count(v.ptx, "st.shared.v4.u16") == 64);
  }
  SUBCASE("q assigned between the loops: the second loop stages the new value") {
    std::string src = test::replaced(test::source_file("tests/gpu/attention_causal.tile"), "  lo = start_m * 128\n",
                               "  qt = (qt * 2.0).to(f16)\n  lo = start_m * 128\n");
    test::Compiled v = test::compile_tile("<causal_q_between>", src, sm90a);
    CHECK(count(v.plan, "kept") == 0);
    CHECK(count(v.ptx, "st.shared.v4.u16") == 64);
  }
}

TEST_CASE("attention's output `(acc / l[:, None]).to(f16)` is stored by TMA from the accumulator layout (checked: in pairs); a matmul's "
          "`acc.to(f16)` is converted") {
  Compiled c = compile("sm_90a", "attention_causal");
  size_t at = c.layouts.find("\n  store(o + ");
  REQUIRE(at != std::string::npos);
  std::string tail = c.layouts.substr(at);
  CHECK(count(tail, "through shared memory") == 0);
  CHECK(count(tail, "store [128, 128] by TMA: written from linear{regs=128, reg=[(0,1) (8,0) (0,8) (0,16) (0,32) (0,64) (64,0)]") == 1);
  CHECK(count(c.plan, "by TMA from shared memory: f16 tensor o[rows, cols], rows stride apart, box 128x64") == 1);
  // 64 pairs a thread into the swizzled boxes, one proxy fence, thread 0 stores the two boxes and
  // waits until they were read; no global store but lse's.
  CHECK(count(c.ptx, "st.shared.u32") + count(c.ptx, "st.shared.b32") + count(c.ptx, "st.shared.v2.u16") == 64);
  CHECK(count(c.ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 2);
  CHECK(count(c.ptx, "cp.async.bulk.commit_group;") == 1);
  CHECK(count(c.ptx, "cp.async.bulk.wait_group.read 0;") == 1);
  CHECK(count(c.ptx, "st.global.u32") == 0);
  CHECK(count(c.ptx, "st.global.f32") == 4);  // lse
  // With bounds checks: from the accumulator layout in checked pairs, as before.
  CudaOptions checked;
  checked.arch = "sm_90a";
  checked.bounds_checks = true;
  test::Compiled cc = test::compile_tile("<attention_causal checked>", test::source_file("tests/gpu/attention_causal.tile"), checked);
  CHECK(count(cc.plan, "by TMA from shared memory") == 0);
  CHECK(count(cc.ptx, "cp.async.bulk.tensor.2d.global.shared::cta") == 0);
  CHECK(count(cc.ptx, "st.global.u32") + count(cc.ptx, "st.global.b32") == 64);
  // The same kernel's earlier forms (attention_desc128: one loop) store the same way.
  Compiled d = compile("sm_90a", "attention_desc128");
  CHECK(count(d.layouts.substr(d.layouts.find("\n  store(o + ")), "through shared memory") == 0);
  CHECK(count(d.layouts.substr(d.layouts.find("\n  store(o + ")), "by TMA") == 1);
  // No slice in the value: the blocked layout's wider vectors after one conversion, as before.
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/tests/gpu/tma_matmul.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = "sm_90a";
  std::string mm = emit_layouts(m, b, opt);
  // (8 elements a thread: the 2-byte value's 16-byte vectors, as the exchange tile gives them; the
  // accumulator layout would store 2-element vectors)
  size_t st = mm.find("# store [128, 128] from ");
  REQUIRE(st != std::string::npos);
  std::string line = mm.substr(st, mm.find('\n', st) - st);
  CHECK(line.find(": 8-element vectors") != std::string::npos);
}

// A DT FlashAttention example lowered at tutorial 06's shape (32 heads, 4096 queries and keys),
// verified, with the options its GPU runs use (sm_90a, fp fusion).
namespace {
struct DtAttention {
  Module m;
  Bindings b;
  CudaOptions opt;
};
DtAttention dt_attention(const char* file) {
  DtAttention a;
  auto p = parse_dt_file(std::string(DTSIM_SOURCE_DIR) + "/examples/" + file + ".dt");
  bind_dt_sizes(*p, {{"z_SIZE", "32"}, {"m_SIZE", "4096"}, {"l_SIZE", "4096"}});
  a.m = lower_dt(*p);
  a.b = bind_params(a.m, {});
  verify_module(a.m, a.b);
  a.opt.arch = "sm_90a";
  a.opt.fp_fusion = true;
  return a;
}
}  // namespace

TEST_CASE("FlashAttention as a DT schedule on sm_90a: k, v and q are 2-D boxes of one head of 3-D tensors, copied by TMA; no spills at head dim 128") {
  for (const char* file : {"attention_flash", "attention_flash128"}) {
    CAPTURE(file);
    auto [m, b, opt] = dt_attention(file);
    const std::string plan = emit_plan(m, b, opt);
    const std::string hd = std::string(file) == "attention_flash" ? "64" : "128";
    // The head z_index is each map's third coordinate, its planes l_SIZE * k_SIZE elements apart.
    const std::string planes = " of plane z_index (planes " + std::to_string(4096 * std::stoll(hd)) + " apart)";
    CHECK(count(plan, "Q_tile: copied by TMA into shared memory once before the loop") == 1);
    CHECK(count(plan, "TMA B K_tile: f16 tensor K[4096, " + hd + "], rows " + hd + " apart, box 64x64 at (l_index[:, None], k_index[None, :])" +
                          planes) == 1);
    CHECK(count(plan, "TMA B V_tile: f16 tensor V[4096, " + hd + "], rows " + hd + " apart, box 64x64 at (l_index[:, None], n_index[None, :])" +
                          planes) == 1);
    CHECK(count(plan, "cp.async") == 0);
    NvvmModule nm = emit_nvvm_module(m, b, opt);
    std::string ptx = compile_ptx(nm.ir, opt);
    CHECK(count(ptx, "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes") > 0);
    CHECK(count(ptx, "cp.async.bulk.tensor.2d") == 0);
    CHECK(count(ptx, "cp.async.cg.shared.global") == 0);
    // The score dot starts from the zero tile (scale-d 0), so ptxas keeps the wgmma pipeline as
    // written (no warpgroup.arrive injected) and the kernel fits its registers.
    PtxasResult r = run_ptxas(ptx, "sm_90a", true);
    if (!r.available) continue;
    CAPTURE(r.log);
    REQUIRE(r.ok);
    CHECK(count(r.log, "0 bytes spill stores") == 1);
    CHECK(count(r.log, "C7519") == 0);
  }
}

TEST_CASE("causal FlashAttention as a DT schedule on sm_90a: two key loops (below the diagonal, across it), each a TMA ring, q staged once for both") {
  for (const char* file : {"attention_flash_causal", "attention_flash128_causal"}) {
    CAPTURE(file);
    auto [m, b, opt] = dt_attention(file);
    const std::string plan = emit_plan(m, b, opt);
    CAPTURE(plan);
    CHECK(count(plan, "for l_iter in range(0, l_split, 64)\n") == 1);
    CHECK(count(plan, "for l_iter in range(l_split, l_end, 64)\n") == 1);
    CHECK(count(plan, "Q_tile: copied by TMA into shared memory once before the loop") == 1);
    CHECK(count(plan, "Q_tile: read by wgmma where the loop of line 20 staged it (kept in shared memory between the loops)") == 1);
    CHECK(count(plan, "pipelined: operand rings of") == 2);
    CHECK(count(plan, "TMA B K_tile: f16 tensor K[4096, ") == 2);
    CHECK(count(plan, "TMA B V_tile: f16 tensor V[4096, ") == 2);
    CHECK(count(plan, "cp.async") == 0);
    // the key mask of the loop across the diagonal (range(l_split, l_end, 64), l_split a multiple of
    // 64, l_end = minimum(l_SIZE, ...)) is proven true at 4096 keys: its selects go (hd 128 spilled
    // without this)
    CHECK(count(plan, "l_mask: l_index <= 4095 < l_SIZE = 4096") == 1);
    NvvmModule nm = emit_nvvm_module(m, b, opt);
    std::string ptx = compile_ptx(nm.ir, opt);
    CHECK(count(ptx, "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes") > 0);
    PtxasResult r = run_ptxas(ptx, "sm_90a", true);
    if (!r.available) continue;
    CAPTURE(r.log);
    REQUIRE(r.ok);
    CHECK(count(r.log, "0 bytes spill stores") == 1);
  }
}
