// Disjoint writes (ir/Footprint.h) against the interpreter's conflict checks: wherever the analysis
// says a buffer's writes are disjoint under the launch's values, the interpreter finds no two
// instances writing one element of it; and the conditions fail where they do.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "interp_test_util.h"
#include "ir/Analysis.h"
#include "ir/Footprint.h"

using namespace dtsim;
using namespace dtsim::test;

namespace {

// Per buffer written: whether the analysis proves it disjoint under b (and whether it is proven at all).
std::map<std::string, bool> holds(const Kernel& k, const Bindings& b, bool fold_constexprs) {
  std::map<std::string, bool> out;
  for (const DisjointWrites& d : disjoint_writes(k, fold_constexprs ? &b : nullptr)) out[k.params[d.param].name] = d.holds(k, b);
  return out;
}

// The buffers two instances stored one element of: write-write findings, and the warnings of
// stores of equal values (two writers all the same).
std::set<std::string> conflicting(const RunReport& rep) {
  std::set<std::string> s;
  for (const Finding& f : rep.findings)
    if (f.kind == Finding::WriteWrite) s.insert(f.buffer);
  for (const Finding& f : rep.warnings)
    if (f.kind == Finding::WriteWrite) s.insert(f.buffer);
  return s;
}

const char* kRows = R"(kernel rows(x: *f32[R, C], out y: *f32[R * S], R: i32 = 6, C: i32 = 40, S: i32 = 40, BLOCK: constexpr = 64)
    grid(R) {
  row = program_id(0)
  cols = arange(0, BLOCK)
  mask = cols < C
  v = load(x + row * C + cols, mask=mask, other=0.0)
  store(y + row * S + cols, v * 2.0, mask=mask)
}
)";

const char* kPersistent = R"(kernel rows(x: *f32[R, C], out y: *f32[R, C], R: i32 = 9, C: i32 = 40, BLOCK: constexpr = 64)
    grid(3) {
  for row in range(program_id(0), R, num_programs(0)) {
    cols = arange(0, BLOCK)
    offs = row * C + cols
    store(y + offs, load(x + offs, mask=cols < C), mask=cols < C)
  }
}
)";


// One BM x BN tile of y per instance of a 2-D grid, rows S apart.
const char* kTiles = R"(kernel tiles(out y: *f32[R * S], R: i32 = 37, C: i32 = 45, S: i32 = 45, BM: constexpr = 16, BN: constexpr = 16)
    grid(cdiv(R, BM), cdiv(C, BN)) {
  rm = program_id(0) * BM + arange(0, BM)
  rn = program_id(1) * BN + arange(0, BN)
  store(y + rm[:, None] * S + rn[None, :], full([BM, BN], 1.0, f32), mask=(rm[:, None] < R) & (rn[None, :] < C))
}
)";

// An embedding's forward: rows gathered by a loaded index, stored in place (the store is affine).
const char* kEmbedding = R"(kernel embedding(idx: *i32[n], w: *f32[V, D], out y: *f32[n, D], n: i32 = 37, V: i32 = 11, D: i32 = 45,
    BM: constexpr = 8, BN: constexpr = 16)
    grid(cdiv(n, BM), cdiv(D, BN)) {
  offsets_m = program_id(0) * BM + arange(0, BM)
  offsets_n = program_id(1) * BN + arange(0, BN)
  mask_m = offsets_m < n
  mask_n = offsets_n < D
  rows = load(idx + offsets_m, mask=mask_m, other=0)
  mask = mask_m[:, None] & mask_n[None, :]
  v = load(w + rows[:, None] * D + offsets_n[None, :], mask=mask, other=0.0)
  store(y + offsets_m[:, None] * D + offsets_n[None, :], v, mask=mask)
}
)";

// A 2-D grid whose second axis the offsets do not read.
const char* kNoPid1 = R"(kernel nopid1(out y: *f32[64], G: i32 = 1) grid(4, G) {
  store(y + program_id(0) * 16 + arange(0, 16), full([16], 1.0, f32))
}
)";

// Two sites with the same digits, one masked to C lanes a row and one writing all 64.
const char* kTwoSites = R"(kernel two(out y: *f32[R * S + 64], R: i32 = 6, C: i32 = 40, S: i32 = 40, BLOCK: constexpr = 64) grid(R) {
  row = program_id(0)
  cols = arange(0, BLOCK)
  store(y + row * S + arange(0, BLOCK), full([BLOCK], 1.0, f32), mask=cols < C)
  store(y + row * S + arange(0, BLOCK), full([BLOCK], 2.0, f32))
}
)";
}  // namespace

TEST_CASE("disjoint writes: a row kernel is disjoint exactly when its stride covers its row") {
  for (int S : {40, 41, 64, 39, 20, 1}) {
    CAPTURE(S);
    auto run = run_tile("rows.tile", kRows, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true}, {{"S", std::to_string(S)}});
    const Kernel& k = run->m.kernels[0];
    bool proven = holds(k, run->b, false).at("y");
    CHECK(proven == (S >= 40));
    CHECK(conflicting(run->rep).count("y") == (S < 40 ? 1u : 0u));
    CHECK(holds(k, run->b, true).at("y") == proven);  // the same with constexprs folded
  }
}

TEST_CASE("disjoint writes: rows walked by range(program_id(0), R, num_programs(0))") {
  auto run = run_tile("persistent.tile", kPersistent, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true});
  const Kernel& k = run->m.kernels[0];
  auto dw = disjoint_writes(k);
  REQUIRE(dw.size() == 1);
  CHECK(dw[0].why == "");
  CHECK(holds(k, run->b, false).at("y"));
  CHECK(conflicting(run->rep).empty());
}

TEST_CASE("disjoint writes: 2-D tiles are disjoint exactly when the column range fits the row stride") {
  for (int S : {45, 50, 64, 44, 30, 16, 1}) {
    CAPTURE(S);
    auto run = run_tile("tiles.tile", kTiles, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true}, {{"S", std::to_string(S)}});
    const Kernel& k = run->m.kernels[0];
    bool proven = holds(k, run->b, true).at("y");
    CHECK(proven == (S >= 45));
    CHECK(conflicting(run->rep).count("y") == (S < 45 ? 1u : 0u));
    CHECK(holds(k, run->b, false).at("y") == proven);  // the same with constexprs symbolic
  }
  // Columns not a multiple of the tile: the mask bounds the column index, not the lanes alone.
  for (int C : {45, 33, 17, 64}) {
    CAPTURE(C);
    auto run = run_tile("tiles.tile", kTiles, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true},
                        {{"C", std::to_string(C)}, {"S", std::to_string(C)}});
    CHECK(holds(run->m.kernels[0], run->b, true).at("y"));
    CHECK(conflicting(run->rep).empty());
  }
}

TEST_CASE("disjoint writes: an embedding's forward (2-D grid, gathered rows, affine store)") {
  for (int D : {45, 48, 16, 7}) {
    CAPTURE(D);
    auto run = run_tile("emb.tile", kEmbedding, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true}, {{"D", std::to_string(D)}});
    const Kernel& k = run->m.kernels[0];
    auto dw = disjoint_writes(k, &run->b);
    REQUIRE(dw.size() == 1);
    CHECK(dw[0].why == "");
    CHECK(holds(k, run->b, true).at("y"));
    CHECK(conflicting(run->rep).empty());
  }
}

TEST_CASE("disjoint writes: a grid axis the offsets do not read must be 1") {
  for (int G : {1, 2, 3}) {
    CAPTURE(G);
    auto run = run_tile("nopid1.tile", kNoPid1, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true}, {{"G", std::to_string(G)}});
    const Kernel& k = run->m.kernels[0];
    CHECK(holds(k, run->b, true).at("y") == (G == 1));
    CHECK(conflicting(run->rep).count("y") == (G > 1 ? 1u : 0u));
  }
}

TEST_CASE("disjoint writes: sites of one buffer, each as wide as its own mask lets it be") {
  for (int S : {40, 63, 64, 80}) {
    CAPTURE(S);
    auto run = run_tile("two.tile", kTwoSites, InterpOptions{.sanitize = Sanitize::Conflicts, .keep_going = true}, {{"S", std::to_string(S)}});
    CHECK(holds(run->m.kernels[0], run->b, true).at("y") == (S >= 64));
    CHECK(conflicting(run->rep).count("y") == (S < 64 ? 1u : 0u));
  }
}

TEST_CASE("disjoint writes: what cannot be read is not proven, with the reason") {
  const char* gathered = R"(kernel g(idx: *i32[4], out y: *f32[64]) grid(4) {
  r = load(idx + program_id(0))
  store(y + r * 16 + arange(0, 16), full([16], 1.0, f32))
}
)";
  auto run = run_tile("g.tile", gathered);
  auto dw = disjoint_writes(run->m.kernels[0]);
  REQUIRE(dw.size() == 1);
  CHECK(dw[0].why == "the store at line 3: a Load in the offsets");
  const char* reassigned = R"(kernel g(out y: *f32[64], n: i32 = 16) grid(4) {
  o = program_id(0) * n
  o = o + 1
  store(y + o + arange(0, 8), full([8], 1.0, f32))
}
)";
  auto run2 = run_tile("g2.tile", reassigned);
  auto dw2 = disjoint_writes(run2->m.kernels[0]);
  REQUIRE(dw2.size() == 1);
  CHECK(dw2[0].why.find("variable 'o' is assigned more than once") != std::string::npos);
}

TEST_CASE("disjoint writes never hold where the interpreter finds two instances writing one element") {
  namespace fs = std::filesystem;
  int runs = 0, proven = 0, found = 0;
  for (const char* sub : {"examples", "examples/bugs", "tests/gpu", "tests/gpu/bugs", "bench/gpu"}) {
    const fs::path dir = fs::path(DTSIM_SOURCE_DIR) / sub;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".tile") continue;
      Module m = parse_tile_file(e.path().string());
      Bindings b0 = bind_params(m, {});
      const Kernel& k0 = m.kernels[0];
      // Each integer runtime parameter at its default, and moved a little (sizes and strides).
      std::vector<std::map<std::string, std::string>> variants = {{}};
      for (const Param& p : k0.params)
        if (p.kind == ParamKind::Scalar && (p.dtype == Scalar::I32 || p.dtype == Scalar::I64)) {
          int64_t v = b0.at(p.name).as_int();
          for (int64_t w : {v - 1, v / 2 + 1, v + 3})
            if (w > 0 && w != v) variants.push_back({{p.name, std::to_string(w)}});
        }
      for (const auto& args : variants) {
        CAPTURE(e.path().string());
        std::string shown;
        for (auto& [n, v] : args) shown += n + "=" + v + " ";
        CAPTURE(shown);
        Module m2 = parse_tile_file(e.path().string());
        Bindings b;
        try {
          b = bind_params(m2, args);
          verify_module(m2, b);
        } catch (const std::exception&) {
          continue;  // a variant the kernel's own checks refuse
        }
        int64_t bytes = 0;
        for (const BufferUse& u : kernel_buffers(m2.kernels[0], b)) bytes += u.bytes;
        std::array<int64_t, 3> g = launch_grid(m2.kernels[0], b);
        if (bytes > (int64_t(8) << 20) || g[0] * g[1] * g[2] > 4096) continue;  // the interpreter's time
        Buffers bufs = make_buffers(m2, b, 1);
        std::ostringstream os;
        InterpOptions opt{.sanitize = Sanitize::Conflicts, .keep_going = true};
        opt.out = &os;
        RunReport rep = run_module(m2, b, bufs, opt);
        ++runs;
        std::set<std::string> bad = conflicting(rep);
        found += bad.empty() ? 0 : 1;
        for (const auto& entry : holds(m2.kernels[0], b, true)) {
          const std::string& buf = entry.first;  // (not a structured binding: clang refuses those in CAPTURE)
          CAPTURE(buf);
          if (entry.second) {
            ++proven;
            CHECK(bad.count(buf) == 0);
          }
        }
      }
    }
  }
  MESSAGE(runs << " runs, " << proven << " buffers proven disjoint, " << found << " runs with a conflict");
  CHECK(runs > 40);
  CHECK(proven > 250);  // the analysis proves the common forms (rows, blocks of a vector, 2-D tiles)
  CHECK(found >= 3);   // the planted bugs (overlap, copy_nopid, ...) run and conflict
}
