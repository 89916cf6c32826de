// The schedule space of `dtsim tune` (DtSpace.h): the number of points of tiny kernels counted by
// hand, numbering that round-trips, every point of a small space applied, lowered and checked against
// the reference, neighbours inside the space.
#include <doctest/doctest.h>

#include <set>

#include "dt_harness.h"
#include "frontend/DtSpace.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {

// The schedule calls of the space's point nearest the file's own schedule (which must exist); `prog`
// (if given) receives the program with that schedule applied.
std::string own_text(const DtScheduleSpace& s, std::shared_ptr<DtProgram>* prog = nullptr) {
  int64_t own = s.own_schedule();
  REQUIRE(own >= 0);
  std::string text;
  auto q = s.apply(static_cast<uint64_t>(own), &text);
  if (prog) *prog = q;
  return text;
}

// Small limits, so that the spaces can be counted by hand (one num_stages).
DtSpaceLimits small_limits() {
  DtSpaceLimits l;
  l.max_block = 4;
  l.max_tile = 4;
  l.min_tile = 2;
  l.max_row_tile = 4;
  l.warps = {4, 8};
  l.stages = {3};
  l.loop_stages = {3};
  l.splits = {2};
  return l;
}

const char* kAdd2d = "Func f; In A; Var x = 8, y = 4;\nf[x, y] = A[x, y] + 1.0;\nf.compile();\n";

const char* kRowNorm =
    "Func s, t; In A; Var x = 4; RVar y = 8;\n"
    "t[x] = rsum(A[x, y], y);\n"
    "s[x, y] = A[x, y] / t[x];\n"
    "t.fuse_at(s, x);\ns.tensorize(y:0);\ns.compile();\n";

}  // namespace

TEST_CASE("the space of a 1-D kernel with the default limits, counted by hand") {
  auto p = parse_text("tiny1d.dt", "Func f; In A; Var x = 4;\nf[x] = A[x] * 2.0;\nf.compile();\n");
  DtScheduleSpace s(*p);
  // x = 4: blocked with a block of 1, 2 or 4 (the tile is the whole block: blocks under min_tile 16),
  // or unblocked with one whole tile: 3 + 1; no map (one dim); 6 num_warps; num_stages 1 or 3 (no rdot).
  CHECK(s.size() == (3 + 1) * 6 * 2);
  CHECK(s.configs() == 1);
  std::set<std::string> texts;
  for (uint64_t i = 0; i < s.size(); ++i) {
    std::string text;
    auto q = s.apply(i, &text);
    (void)lower_dt(*q);
    texts.insert(text);
  }
  CHECK(texts.size() == s.size());  // every point is a different schedule
}

TEST_CASE("a kernel with rdot chooses num_stages among the pipeline depths") {
  auto p = parse_text("tinydot.dt", "Func c; In A, B; Var x = 2, y = 2; RVar k = 2;\nc[x, y] = rdot(A[x, k], B[k, y], k);\nc.compile();\n");
  DtSpaceLimits l = small_limits();
  l.stages = {2, 4};
  DtScheduleSpace s(*p, l);
  // x, y = 2: blocked (1,1) (2,2): 2 each, unblocked whole: 1 each; k = 2: one whole tile (1).
  // {}: 1*1*1*2 warps*2 stages = 4; {x}: 2*1*4 = 8; {y}: 8; {x,y}: 2*2*(2 orders * 2 splits)*4 = 64.
  CHECK(s.size() == 4 + 8 + 8 + 64);
  std::string text;
  (void)s.apply(0, &text);
  CHECK(text.find("c.num_stages(2);") != std::string::npos);
}

TEST_CASE("the space of a 2-D kernel, counted by hand") {
  auto p = parse_text("add2d.dt", kAdd2d);
  DtScheduleSpace s(*p, small_limits());
  // x = 8: blocked (block, tile) = (1,1) (2,2) (4,2) (4,4): 4; unblocked tiles 2, 4: 2.
  // y = 4: the same 4 and 2. map: none with fewer than 2 blocked dims; with both, 2 orders x
  // (no split, split by 2) = 4. num_warps 2.
  // {}: 2*2*2 = 8; {x}: 4*2*2 = 16; {y}: 2*4*2 = 16; {x,y}: 4*4*4*2 = 128.
  CHECK(s.size() == 8 + 16 + 16 + 128);
  for (uint64_t i = 0; i < s.size(); ++i) {
    CHECK(s.index(s.point(i)) == i);
    for (uint64_t n : s.neighbours(i)) CHECK(n < s.size());
  }
}

TEST_CASE("a dim reduced without a dot may be one tile up to max_row_tile (a whole row); a dot's K dim may not") {
  DtSpaceLimits l = small_limits();
  l.max_row_tile = 8;
  auto p = parse_text("rownorm_rows.dt", kRowNorm);
  DtScheduleSpace s(*p, l);
  // As below, but y = 8 (reduced in t's kernel) has tiles 2, 4, 8: (2 + 4) * 3 * 2 = 36 per fused
  // configuration and for t's own kernel; s's own kernel (y not reduced there) as before, 168.
  CHECK(s.size() == 36 + 36 + 36 * 168);
  bool whole_row = false;
  for (uint64_t i = 0; i < s.size() && !whole_row; ++i) {
    std::string text;
    (void)s.apply(i, &text);
    whole_row = text.find("t.fuse_at(s, x);") != std::string::npos && text.find("s.tensorize(y:0);") != std::string::npos;
  }
  CHECK(whole_row);
  // k = 8 reduced by rdot: tiles 2 and 4 only (max_tile), as in the pipeline-depth case above.
  auto d = parse_text("dot_k8.dt", "Func c; In A, B; Var x = 2, y = 2; RVar k = 8;\nc[x, y] = rdot(A[x, k], B[k, y], k);\nc.compile();\n");
  l.stages = {2, 4};
  CHECK(DtScheduleSpace(*d, l).size() == 2 * (4 + 8 + 8 + 64));
}

TEST_CASE("fusion choices: each fuse_at level and materializing, counted by hand") {
  auto p = parse_text("rownorm.dt", kRowNorm);
  DtScheduleSpace s(*p, small_limits());
  // t fused at s.x or s.y: one kernel s whose y is reduced (not blockable): x blocked 4 ways or
  // unblocked 2, y tiles 2, 4: 2; num_warps 2: (2 + 4) * 2 * 2 = 24 each.
  // t materialized: kernel t as above (24) times kernel s with x and y blockable: 168 (as add2d,
  // y = 8 giving the same choices as x = 8 under these limits).
  CHECK(s.configs() == 3);
  CHECK(s.size() == 24 + 24 + 24 * 168);
}

TEST_CASE("every schedule of a small space lowers, or is rejected with a located reason, and matches the reference") {
  auto p = parse_text("rownorm2.dt", kRowNorm);
  DtScheduleSpace s(*p, small_limits());
  int legal = 0, illegal = 0;
  for (uint64_t i = 0; i < s.size(); i += 7) {
    std::string text;
    std::shared_ptr<DtProgram> q;
    try {
      q = s.apply(i, &text);
      (void)lower_dt(*q);
    } catch (const UserError& e) {
      ++illegal;
      continue;
    }
    ++legal;
    std::string why = run_and_compare(*q, i, 1e-4);
    INFO(text);
    CHECK(why == "");
  }
  CHECK(legal > 0);
  CHECK(illegal > 0);  // t fused at s.y with y in tiles: the rsum would run inside y's loop
}

TEST_CASE("coverage: a split map covers block x factor") {
  auto p = parse_text("add2d_cov.dt", kAdd2d);
  DtScheduleSpace s(*p, small_limits());
  bool saw_split = false;
  for (uint64_t i = 0; i < s.size(); ++i) {
    std::string text;
    (void)s.apply(i, &text);
    if (text.find("_in/2") == std::string::npos) continue;
    saw_split = true;
    auto cov = s.coverage(i);
    std::string dim = text.substr(text.find("map(") + 4, 1);
    CHECK(cov[dim] >= 2);
  }
  CHECK(saw_split);
}

TEST_CASE("own_schedule: the point nearest the file's schedule, with its fusions, blocks, tiles, map, warps, stages") {
  // Every choice of this schedule is in the space: the point gives back the same calls.
  auto p = parse_text("own.dt",
                      "Func f; In A; Var x = 64, y = 32;\nf[x, y] = A[x, y] + 1.0;\n"
                      "f.block(x:32, y:16);\nf.tensorize(x:16, y:16);\nf.map(x, y);\nf.num_warps(2);\nf.num_stages(1);\nf.compile();\n");
  DtScheduleSpace s(*p);
  std::string text = own_text(s);
  CHECK(text.find("f.block(x:32, y:16);") != std::string::npos);
  CHECK(text.find("f.tensorize(x:16, y:16);") != std::string::npos);
  CHECK(text.find("f.map(x, y);") != std::string::npos);  // not the default order (y, x)
  CHECK(text.find("f.num_warps(2);") != std::string::npos);
  CHECK(text.find("f.num_stages(1);") != std::string::npos);
  // Fusion and a whole dim (tensorize(y:0)), from the row-norm program.
  auto q = parse_text("own_norm.dt", kRowNorm);
  DtScheduleSpace t(*q);
  std::string text2 = own_text(t);
  CHECK(text2.find("t.fuse_at(s, x);") != std::string::npos);
  CHECK(text2.find("y:0") != std::string::npos);
  // Sizes outside the space's choices round to the nearest: a block of 3000 becomes 2048 or 4096.
  auto r = parse_text("own_round.dt", "Func f; In A; Var x = 8192;\nf[x] = A[x] * 2.0;\nf.block(x:3000);\nf.compile();\n");
  DtScheduleSpace u(*r);
  std::string text3 = own_text(u);
  CHECK((text3.find("f.block(x:2048);") != std::string::npos || text3.find("f.block(x:4096);") != std::string::npos));
}

TEST_CASE("fusion into a consumer that reads the Func through others (attention.dt's e into attention)") {
  // g reads f, h reads g: f may be fused into g (2 levels) or into h (2 levels), or materialized.
  auto p = parse_text("chain.dt",
                      "Func f, g, h; In A; Var x = 8, y = 8;\nf[x, y] = A[x, y] * 2.0;\ng[x, y] = f[x, y] + 1.0;\n"
                      "h[x, y] = g[x, y] * 3.0;\nh.tensorize(y:0);\nf.fuse_at(h, x);\ng.fuse_at(h, x);\nh.compile();\n");
  DtSpaceLimits l;
  l.materialize = false;
  DtScheduleSpace s(*p, l);
  CHECK(s.configs() == 4 * 2);  // f: g.x, g.y, h.x, h.y; g: h.x, h.y
  std::shared_ptr<DtProgram> q;
  std::string text = own_text(s, &q);
  CHECK(text.find("f.fuse_at(h, x);") != std::string::npos);
  CHECK(text.find("g.fuse_at(h, x);") != std::string::npos);
  (void)lower_dt(*q);
  // The file's own schedule of attention.dt is a point of its space.
  auto a = parse_dt_file(std::string(DTSIM_SOURCE_DIR) + "/examples/attention.dt");
  DtScheduleSpace as(*a);
  std::string at = own_text(as);
  CHECK(at.find("e.fuse_at(attention, m);") != std::string::npos);
}

TEST_CASE("seeds: a 128x128 output tile with a K tile of 64 and 8 warps for a dot, row blocks for a row reduction, wide blocks elementwise") {
  auto text_of = [](const DtScheduleSpace& s, uint64_t i) {
    std::string t;
    (void)s.apply(i, &t);
    return t;
  };
  // mmsigmoid at the slides' size: the dot is fused into the sigmoid's kernel (the file's own fusion).
  auto p = parse_text("seed_mm.dt",
                      "Func mmsig, mm; In A: f16, B: f16; Var x = 4096, y = 4096; RVar k = 4096;\n"
                      "mm[x, y] = rdot(A[x, k], B[k, y], k);\nmmsig[x, y] = sigmoid(mm[x, y]);\n"
                      "mmsig.block(x:32, y:32);\nmmsig.tensorize(x:32, y:32, k:16);\nmm.fuse_at(mmsig, y);\nmmsig.compile();\n");
  DtScheduleSpace s(*p);
  std::vector<uint64_t> seeds = s.seeds();
  REQUIRE(seeds.size() >= 4);
  std::string first = text_of(s, seeds[0]);
  CHECK(first.find("mm.fuse_at(mmsig, y);") != std::string::npos);
  CHECK(first.find("mmsig.block(x:128, y:128);") != std::string::npos);
  CHECK(first.find("mmsig.tensorize(x:128, y:128, k:64);") != std::string::npos);
  CHECK(first.find("mmsig.num_warps(8);") != std::string::npos);
  CHECK(first.find("mmsig.num_stages(3);") != std::string::npos);
  std::set<uint64_t> distinct(seeds.begin(), seeds.end());
  CHECK(distinct.size() == seeds.size());
  for (uint64_t i : seeds) CHECK(i < s.size());
  // A row reduction (softmax's form): one row per instance, the reduced row whole (one tile), the
  // written row in tiles of 1024.
  auto q = parse_text("seed_rows.dt",
                      "Func s, t; In A; Var x = 8192, y = 8192; RVar r = 8192;\ns[x] = rsum(A[x, r], r);\nt[x, y] = A[x, y] / s[x];\n"
                      "t.tensorize(y:0);\ns.fuse_at(t, x);\nt.compile();\n");
  DtScheduleSpace u(*q);
  std::string rows = text_of(u, u.seeds().at(0));
  CHECK(rows.find("t.block(x:1);") != std::string::npos);
  CHECK(rows.find("t.tensorize(y:1024, r:0);") != std::string::npos);
  CHECK(rows.find("t.num_warps(8);") != std::string::npos);
  // A row statistic the file materializes (rmsnorm.dt's form): first the row seeds with it fused at
  // the output's x (a whole row per instance, one kernel), then the seeds of the file's two kernels.
  auto r = parse_text("seed_rms.dt",
                      "Func rms, ms; In X, w; Var x = 8192; RVar y = 8192;\nms[x] = rsum(X[x, y] * X[x, y], y);\n"
                      "rms[x, y] = X[x, y] * ms[x] * w[y];\nms.block(x:4);\nms.tensorize(x:4, y:64);\nrms.block(x:1, y:64);\n"
                      "rms.tensorize(y:64);\nrms.compile();\n");
  DtScheduleSpace rs(*r);
  std::vector<uint64_t> rseeds = rs.seeds();
  CHECK(text_of(rs, rseeds.at(0)).find("ms.fuse_at(rms, x);") != std::string::npos);
  CHECK(text_of(rs, rseeds.back()).find("ms.fuse_at") == std::string::npos);  // the file's configuration after
  std::set<int> fused_warps;
  for (uint64_t i : rseeds) {
    std::string t = text_of(rs, i);
    if (t.find("ms.fuse_at(rms, x);\nrms.block(x:1);\nrms.tensorize(y:0);\nrms.num_warps(") != std::string::npos)
      fused_warps.insert(std::stoi(t.substr(t.find("rms.num_warps(") + 14)));
  }
  CHECK(fused_warps == std::set<int>{4, 8, 16, 32});
  // Elementwise: a block of 1024 along the last dim.
  auto e = parse_text("seed_ew.dt", "Func f; In A; Var x = 128, y = 65536;\nf[x, y] = A[x, y] * 2.0;\nf.compile();\n");
  DtScheduleSpace v(*e);
  std::string ew = text_of(v, v.seeds().at(0));
  CHECK(ew.find("f.block(x:1, y:1024);") != std::string::npos);
  CHECK(ew.find("f.tensorize(y:1024);") != std::string::npos);
}
