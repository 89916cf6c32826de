// Sizes bound before lowering (bind_dt_sizes): --arg <dim>_SIZE and --in shapes override the declared
// defaults, the lowering follows the run's sizes, conflicts are located errors naming both sources;
// permuted and repeated accesses tie dims to one size and match the reference.
#include <doctest/doctest.h>

#include "dt_harness.h"
#include "ir/Printer.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {

int64_t size_of(const DtProgram& p, const std::string& d) { return p.sym(d).size; }

// A matrix product written as on the slides: no declared sizes, a K step of 64.
const char* kMmNoSizes =
    "Func mm; In A, B; Var x, y; RVar k;\n"
    "mm[x, y] = rdot(A[x, k], B[k, y], k);\n"
    "mm.tensorize(x:32, k:64, y:32);\nmm.block(x:32, y:32);\nmm.compile();\n";

}  // namespace

TEST_CASE("a tensorize extent smaller than the run's size loops, whatever the default") {
  auto p = parse_text("mm_nosizes.dt", kMmNoSizes);
  CHECK(size_of(*p, "k") == 64);
  std::string at_default = print_module(lower_dt(*p));
  CHECK(at_default.find("for k_iter") == std::string::npos);  // 64 covers the default k: one tile
  auto used = bind_dt_sizes(*p, {{"k_SIZE", "250"}, {"x_SIZE", "100"}, {"y_SIZE", "77"}, {"alpha", "2"}});
  CHECK(used == std::set<std::string>{"k_SIZE", "x_SIZE", "y_SIZE"});
  CHECK(size_of(*p, "k") == 250);
  std::string t = print_module(lower_dt(*p));
  CHECK(t.find("for k_iter in range(0, k_SIZE, 64)") != std::string::npos);
  CHECK(t.find("k_SIZE: constexpr = 250") != std::string::npos);
  CHECK(t.find("assert") == std::string::npos);
  CHECK(run_and_compare(*p, 1, 1e-4).empty());
}

TEST_CASE("tensorize(v:0) is one tile covering the run's size, rounded up to a power of two") {
  auto p = parse_text("whole.dt", "Func s; In A; Var x = 8; RVar y;\ns[x] = rsum(A[x, y], y);\ns.tensorize(y:0);\ns.compile();\n");
  CHECK(print_module(lower_dt(*p)).find("y_arange = arange(0, 64)") != std::string::npos);
  bind_dt_sizes(*p, {{"y_SIZE", "300"}});
  std::string t = print_module(lower_dt(*p));
  CHECK(t.find("y_arange = arange(0, 512)") != std::string::npos);
  CHECK(t.find("for y_iter") == std::string::npos);
  CHECK(run_and_compare(*p, 2, 1e-4).empty());
}

TEST_CASE("input shapes fix the dims that index them; conflicts name both sources") {
  auto p = parse_text("mm_in.dt", kMmNoSizes);
  bind_dt_sizes(*p, {}, {{"A", "a.npy", {100, 250}}, {"B", "b.npy", {250, 7}}});
  CHECK(size_of(*p, "x") == 100);
  CHECK(size_of(*p, "k") == 250);
  CHECK(size_of(*p, "y") == 7);
  std::string e = error_of([&] { bind_dt_sizes(*p, {}, {{"A", "a.npy", {100, 250}}, {"B", "b.npy", {240, 7}}}); });
  CHECK(e.find("mm_in.dt:2:26: error: conflicting sizes for k: --in B=b.npy (shape (240, 7)) gives k = 240 through B[k, y], but --in A=a.npy "
               "(shape (100, 250)) gives k = 250 through A[x, k]") == 0);
  e = error_of([&] { bind_dt_sizes(*p, {{"k_SIZE", "9"}}, {{"A", "a.npy", {100, 250}}}); });
  CHECK(e.find("mm_in.dt:2:17: error: conflicting sizes for k: --in A=a.npy (shape (100, 250)) gives k = 250 through A[x, k], but --arg k_SIZE=9 gives k = 9") == 0);
  e = error_of([&] { bind_dt_sizes(*p, {}, {{"A", "a.npy", {100}}}); });
  CHECK(e.find("has 1 dim, but A is indexed A[x, k] (2 dims)") != std::string::npos);
  // names that are not inputs are left to the data reader; other --arg names to the parameter binder
  CHECK_NOTHROW(bind_dt_sizes(*p, {{"z_SIZE", "3"}, {"n", "4"}}, {{"mm", "o.npy", {1}}}));
}

TEST_CASE("bad size arguments are errors that say what to write") {
  auto p = parse_text("mm_bad.dt", kMmNoSizes);
  for (const char* v : {"0", "-3", "abc", "", "99999999999"})
    CHECK(error_of([&] { bind_dt_sizes(*p, {{"x_SIZE", v}}); }).find("a size must be an integer in [1, 2147483647]") != std::string::npos);
  CHECK(error_of([&] { bind_dt_sizes(*p, {{"k", "250"}}); }).find("'k' is a dim; give its size as --arg k_SIZE=250") != std::string::npos);
}

TEST_CASE("permuted and repeated accesses read one buffer and tie the dims' sizes") {
  auto p = parse_text("sym.dt",
                      "Func P, G, d; In A; Var x = 20, y, z; RVar k;\n"
                      "P[x, y] = A[x, y] * A[y, x];\n"
                      "G[x, z] = rdot(A[x, k], A[z, k], k);\n"
                      "d[x] = A[x, x] + 1;\n"
                      "P.block(x:8, y:4);\nP.tensorize(x:8, y:4);\nP.compile();\n"
                      "G.block(x:8, z:16);\nG.tensorize(x:8, z:16, k:8);\nG.compile();\n"
                      "d.tensorize(x:4);\nd.compile();\n");
  CHECK(size_of(*p, "y") == 20);  // tied to x, which declares 20
  CHECK(size_of(*p, "k") == 20);
  CHECK(p->ties.size() == 6);
  CHECK(run_and_compare(*p, 3, 1e-4).empty());
  for (const char* n : {"1", "7", "33"}) {
    bind_dt_sizes(*p, {{"z_SIZE", n}});  // one size for the whole class
    for (const char* d : {"x", "y", "z", "k"}) CHECK(size_of(*p, d) == std::stoll(n));
    CHECK(run_and_compare(*p, 4, 1e-4).empty());
  }
  std::string t = print_module(lower_dt(*p, "G"));
  // A[z, k] as dot's [k, z] operand: loaded row-major as [z, k] and transposed
  CHECK(t.find("load(A + (z_index[:, None] * y_SIZE + k_index[None, :])") != std::string::npos);
  CHECK(t.find("dot(A_tile, trans(A_tile_2), k_accumulator)") != std::string::npos);
  std::string e = error_of([&] { bind_dt_sizes(*p, {}, {{"A", "a.npy", {6, 5}}}); });
  CHECK(e.find("sym.dt:2:21: error: conflicting sizes for x and y: --in A=a.npy (shape (6, 5)) gives x = 6 and y = 5 through A[x, y]; they must "
               "be equal because A[y, x] (line 2) reads A's dim 0 (x) with y") == 0);
}

TEST_CASE("a kernel reading a buffer gets the sizes of all of the buffer's dims") {
  auto p = parse_text("extra.dt", "Func P, G; In A; Var x = 6, y = 9, z; RVar k;\nP[x, y] = A[x, y] * 2;\nG[x, z] = rsum(A[x, k] * A[z, k], k);\n"
                                  "G.compile();\nP.compile();\n");
  CHECK(size_of(*p, "k") == 9);
  CHECK(size_of(*p, "z") == 6);
  Module m = lower_dt(*p, "G");
  CHECK(m.kernels.at(0).find_param("y_SIZE") != nullptr);
  CHECK(run_and_compare(*p, 5, 1e-4).empty());
}

TEST_CASE("random schedules take fixed sizes the same way and draw one size per tied class") {
  auto p = parse_dt_file(std::string(DTSIM_SOURCE_DIR) + "/examples/symprod.dt");
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::string text;
    std::map<std::string, int64_t> sizes;
    auto q = with_random_schedule(*p, seed, &text, &sizes);
    CHECK(sizes.at("x") == sizes.at("y"));
    CHECK(sizes.at("x") == sizes.at("k"));
    q = with_random_schedule(*p, seed, &text, &sizes, {{"y_SIZE", "13"}});
    CHECK(sizes.at("x") == 13);
    CHECK(text.find("Var x = 13;") != std::string::npos);
    CHECK(run_and_compare(*q, seed, 1e-4).empty());
  }
  CHECK_THROWS_AS(with_random_schedule(*p, 1, nullptr, nullptr, {{"x_SIZE", "3"}, {"y_SIZE", "4"}}), UserError);
}
