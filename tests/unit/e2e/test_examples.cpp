// End-to-end tests of the example kernels through the interpreter API: each examples/*.tile runs at
// sizes that are not multiples of its block sizes, on seeded random inputs, and is compared with a
// plain C++ loop written here; each examples/bugs/*.tile produces the finding it was planted for.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "interp/Interp.h"
#include "ir/TileParser.h"

using namespace dtsim;

namespace {

struct Ran {
  Module m;
  Bindings b;
  Buffers bufs;
  RunReport report;
  double in(const std::string& name, int64_t i) const { return bufs.find(name)->get(i); }
  double out(const std::string& name, int64_t i) const { return bufs.find(name)->get(i); }
  int64_t arg(const std::string& name) const { return b.at(name).as_int(); }
};

Ran run_example(const std::string& rel, const std::map<std::string, std::string>& args, InterpOptions opt = {},
                uint64_t seed = 7) {
  Ran r;
  r.m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/examples/" + rel);
  r.b = bind_params(r.m, args);
  verify_module(r.m, r.b);
  r.bufs = make_buffers(r.m, r.b, seed);
  r.report = run_module(r.m, r.b, r.bufs, opt);
  return r;
}

// |got - want| <= tol * max(1, |want|) for every element; reports the first mismatch.
template <class Ref>
void expect_close(const Ran& r, const std::string& out, int64_t n, double tol, Ref ref) {
  REQUIRE(r.report.ok());
  REQUIRE(r.bufs.find(out) != nullptr);
  REQUIRE(r.bufs.find(out)->numel() == n);
  for (int64_t i = 0; i < n; ++i) {
    double want = ref(i), got = r.out(out, i);
    if (!(std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want)))) {
      FAIL_CHECK(out << "[" << i << "] = " << got << ", expected " << want);
      return;
    }
  }
}

bool has_finding(const RunReport& rep, Finding::Kind k) {
  for (const Finding& f : rep.findings)
    if (f.kind == k) return true;
  return false;
}

}  // namespace

TEST_CASE("add.tile at n = 1237, BLOCK = 128") {
  Ran r = run_example("add.tile", {{"n", "1237"}, {"BLOCK", "128"}});
  expect_close(r, "z", 1237, 0, [&](int64_t i) { return double(float(r.in("x", i)) + float(r.in("y", i))); });
  CHECK(r.report.instances == 10);
}

TEST_CASE("copy.tile at n = 777") {
  Ran r = run_example("copy.tile", {{"n", "777"}});
  expect_close(r, "z", 777, 0, [&](int64_t i) { return r.in("x", i); });
}

TEST_CASE("rgb2grey.tile at 37 x 53") {
  Ran r = run_example("rgb2grey.tile", {{"h", "37"}, {"w", "53"}});
  int64_t hw = 37 * 53;
  expect_close(r, "y", hw, 1e-5, [&](int64_t i) {
    return 0.2989 * r.in("x", i) + 0.5870 * r.in("x", hw + i) + 0.1140 * r.in("x", 2 * hw + i);
  });
}

// c[m, n] = sum_k a[m, k] * b[k, n], row-major, in double.
double matmul_ref(const Ran& r, int64_t i, int64_t N, int64_t K) {
  int64_t m = i / N, n = i % N;
  double s = 0;
  for (int64_t k = 0; k < K; ++k) s += r.in("a", m * K + k) * r.in("b", k * N + n);
  return s;
}

TEST_CASE("matmul.tile at 45 x 37 x 29") {
  Ran r = run_example("matmul.tile", {{"M", "45"}, {"N", "37"}, {"K", "29"}});
  expect_close(r, "c", 45 * 37, 1e-5, [&](int64_t i) { return matmul_ref(r, i, 37, 29); });
}

TEST_CASE("matmul.tile: threads and instance order do not change a bit") {
  std::map<std::string, std::string> args{{"M", "70"}, {"N", "33"}, {"K", "41"}};
  Ran seq = run_example("matmul.tile", args);
  InterpOptions par;
  par.threads = 2;
  par.order = Order::Shuffle;
  par.shuffle_seed = 3;
  Ran other = run_example("matmul.tile", args, par);
  REQUIRE(other.report.ok());
  CHECK(seq.bufs.find("c")->bytes == other.bufs.find("c")->bytes);
}

TEST_CASE("grouped_matmul.tile at 61 x 45 x 23, GROUP = 2") {
  Ran r = run_example("grouped_matmul.tile", {{"M", "61"}, {"N", "45"}, {"K", "23"}, {"GROUP", "2"}});
  expect_close(r, "c", 61 * 45, 1e-5, [&](int64_t i) { return matmul_ref(r, i, 45, 23); });
}

TEST_CASE("softmax.tile at 13 x 300") {
  const int64_t R = 13, C = 300;
  Ran r = run_example("softmax.tile", {{"R", "13"}, {"C", "300"}, {"BLOCK", "512"}});
  expect_close(r, "y", R * C, 1e-5, [&](int64_t i) {
    int64_t row = i / C;
    double mx = -INFINITY, den = 0;
    for (int64_t c = 0; c < C; ++c) mx = std::max(mx, r.in("x", row * C + c));
    for (int64_t c = 0; c < C; ++c) den += std::exp(r.in("x", row * C + c) - mx);
    return std::exp(r.in("x", i) - mx) / den;
  });
}

// The loop's trip count differs per row: it stops at the first chunk boundary where the running
// sum of |x| reaches the limit, or at the row end.
// Returns how many elements each row consumed.
std::vector<int64_t> check_threshold_scan(int64_t rows, int64_t n, double limit, int64_t block) {
  Ran r = run_example("threshold_scan.tile", {{"rows", std::to_string(rows)}, {"n", std::to_string(n)},
                                              {"limit", std::to_string(limit)}, {"BLOCK", std::to_string(block)}});
  REQUIRE(r.report.ok());
  std::vector<int64_t> used(static_cast<size_t>(rows));
  std::vector<double> total(static_cast<size_t>(rows));
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = 0;
    double acc = 0;
    while (off < n && acc < limit) {
      for (int64_t c = off; c < std::min(n, off + block); ++c) acc += std::fabs(r.in("x", row * n + c));
      off += block;
    }
    used[static_cast<size_t>(row)] = off;
    total[static_cast<size_t>(row)] = acc;
  }
  expect_close(r, "used", rows, 0, [&](int64_t i) { return double(used[static_cast<size_t>(i)]); });
  expect_close(r, "total", rows, 1e-5, [&](int64_t i) { return total[static_cast<size_t>(i)]; });
  return used;
}

TEST_CASE("threshold_scan.tile: a runtime while loop with a data-dependent trip count") {
  // Stops early, after a different number of chunks in different rows.
  std::vector<int64_t> used = check_threshold_scan(37, 1000, 100.0, 64);
  CHECK(*std::min_element(used.begin(), used.end()) < *std::max_element(used.begin(), used.end()));
  CHECK(*std::max_element(used.begin(), used.end()) < 1000);
  used = check_threshold_scan(5, 300, 1e9, 32);  // never reaches the limit: runs to the row end
  CHECK(used == std::vector<int64_t>(5, 320));
  used = check_threshold_scan(3, 100, 0.0, 64);  // the condition is false at once: zero trips
  CHECK(used == std::vector<int64_t>(3, 0));
}

TEST_CASE("planted bugs produce their findings") {
  InterpOptions keep;
  keep.keep_going = true;
  struct Case {
    const char* file;
    Finding::Kind kind;
  };
  for (Case c : {Case{"bugs/copy_pid_n.tile", Finding::OutOfBounds}, Case{"bugs/matmul_no_kmask.tile", Finding::OutOfBounds}}) {
    CAPTURE(c.file);
    Ran r = run_example(c.file, {}, keep);
    CHECK_FALSE(r.report.ok());
    CHECK(has_finding(r.report, c.kind));
    REQUIRE_FALSE(r.report.findings.empty());
    CHECK(r.report.findings[0].message.find(std::string(c.file).substr(5) + ":") != std::string::npos);
    CHECK(r.report.findings[0].message.find("error:") != std::string::npos);
  }
  // Instances that store equal values to the elements they share: a warning, the run goes on.
  for (const char* file : {"bugs/copy_nopid.tile", "bugs/overlap.tile"}) {
    CAPTURE(file);
    Ran r = run_example(file, {}, keep);
    CHECK(r.report.ok());
    REQUIRE(r.report.warnings.size() == 1);
    CHECK(r.report.warnings[0].kind == Finding::WriteWrite);
    CHECK(r.report.warnings[0].message.find(std::string(file).substr(5) + ":") != std::string::npos);
    CHECK(r.report.warnings[0].message.find("warning: instances ") != std::string::npos);
    CHECK(r.report.warnings[0].message.find("with equal values") != std::string::npos);
  }
}

TEST_CASE("the fixed copy has no finding under every instance order") {
  for (Order o : {Order::Sequential, Order::Reverse, Order::Shuffle}) {
    InterpOptions opt;
    opt.order = o;
    opt.shuffle_seed = 11;
    Ran r = run_example("copy.tile", {{"n", "1000"}}, opt);
    CHECK(r.report.ok());
  }
}
