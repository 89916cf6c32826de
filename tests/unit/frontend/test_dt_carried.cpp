// Reductions carried across their consumer's loop (DtLower.cpp, "Carried reductions"): the
// FlashAttention form derived from the stable-softmax algorithm and a schedule that fuses the row
// statistics at the level of the key loop; the running maximum's rescale, the running sum moved past
// the sum, other rescale exponents, and the uses that are not legal there.
#include <doctest/doctest.h>

#include "dt_harness.h"
#include "ir/Printer.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {

// Stable attention over one head: the algorithm of examples/attention_flash.dt without the batch dim.
std::string attention(const std::string& l_tile, const std::string& fuse_level) {
  return "Func o, s, mx, e, den, p: f16; In Q: f16, K: f16, V: f16; Var m = 40, n = 16; RVar k = 16, l = 150;\n"
         "s[m, l] = rdot(Q[m, k], K[l, k], k) * rsqrt(len(k));\n"
         "mx[m] = rmax(s[m, l], l);\n"
         "e[m, l] = exp(s[m, l] - mx[m]);\n"
         "den[m] = rsum(e[m, l], l);\n"
         "p[m, l] = e[m, l] / den[m];\n"
         "o[m, n] = rdot(p[m, l], V[l, n], l);\n"
         "s.fuse_at(o, l);\ne.fuse_at(o, l);\np.fuse_at(o, l);\n"
         "mx.fuse_at(o, " + fuse_level + ");\nden.fuse_at(o, " + fuse_level + ");\n"
         "o.block(m:16);\no.tensorize(m:16, n:0, k:0, l:" + l_tile + ");\no.compile();\n";
}

}  // namespace

// The interpreter's result equals the reference (run_and_compare's message otherwise).
#define CHECK_SAME(...)                           \
  do {                                            \
    std::string diff_ = run_and_compare(__VA_ARGS__); \
    CHECK_MESSAGE(diff_.empty(), diff_);          \
  } while (0)

TEST_CASE("carried: the key loop of FlashAttention, derived from the algorithm and the schedule") {
  auto p = parse_text("flash.dt", attention("32", "l"));
  std::string t = print_module(lower_dt(*p));
  CAPTURE(t);
  size_t loop = t.find("for l_iter in range(0, l_SIZE, 32)");
  REQUIRE(loop != std::string::npos);
  // q is loaded once, before the key loop; the running statistics start there
  CHECK(t.find("Q_tile = load(") < loop);
  CHECK(t.find("mx = full([16], -inf, f32)") < loop);
  CHECK(t.find("den = zeros([16], f32)") < loop);
  // k is read row-major and transposed for the first dot, whose k is one tile: its accumulator is
  // the zero tile itself
  CHECK(t.find("k_accumulator = dot(Q_tile, trans(K_tile), zeros([16, 32], f32))") > loop);
  CHECK(t.find("k_accumulator = zeros(") == std::string::npos);
  // the running maximum (kept times log2(e), the scale of s folded into that factor after the max),
  // its rescale of the running sum and of the output accumulator
  CHECK(t.find("s = k_accumulator * rsqrt(k_SIZE)") > loop);
  CHECK(t.find("mx = maximum(mx_prev, max(where(l_mask[None, :], k_accumulator, -inf), axis=1) * (rsqrt(k_SIZE) * 1.4426950408889634))") > loop);
  CHECK(t.find("mx_alpha = exp2(mx_prev - mx)") > loop);
  CHECK(t.find("e = exp2(k_accumulator * (rsqrt(k_SIZE) * 1.4426950408889634) - mx[:, None])") > loop);
  CHECK(t.find("den = den * mx_alpha + sum(where(l_mask[None, :], e, 0.0), axis=1)") > loop);
  // p = e / den: the division by the running sum moved past the dot, once after the loop
  CHECK(t.find("p = e.to(f16)") > loop);
  CHECK(t.find("l_accumulator = dot(where(l_mask[None, :], p, 0.0), V_tile, l_accumulator * mx_alpha[:, None])") > loop);
  size_t after = t.find("l_accumulator = l_accumulator / den[:, None]");
  REQUIRE(after != std::string::npos);
  CHECK(t.rfind("}", after) > loop);  // after the loop's closing brace
  CHECK(t.find("/ den") == after + 30);  // the only division by den
  CHECK(t.find("/ den", after + 31) == std::string::npos);
  // the interpreter equals the reference: l a multiple of the tile, not one, shorter than one tile
  CHECK_SAME(*p, 1, tolerance_for(*p));
  for (const char* l : {"128", "150", "7", "1"}) {
    CAPTURE(l);
    CHECK_SAME(*p, 2, tolerance_for(*p), {{"l_SIZE", l}, {"m_SIZE", "37"}});
  }
}

TEST_CASE("carried: the same algorithm with one tile over l, or the statistics fused outside the loop") {
  // l:0: no loop, nothing to carry: the statistics are plain reductions over the whole tile
  auto whole = parse_text("flash_whole.dt", attention("0", "l"));
  std::string t = print_module(lower_dt(*whole));
  CHECK(t.find("for l_iter") == std::string::npos);
  CHECK(t.find("mx_alpha") == std::string::npos);
  CHECK_SAME(*whole, 3, tolerance_for(*whole));
  // at level m with a loop over l, the statistics have loops of their own, where the scores s (fused
  // into o's loop over l) do not exist
  std::string e = error_of([&] { parse_text("flash_outer.dt", attention("32", "m")); });
  CHECK(e.find("flash_outer.dt:3:14: error: s is fused into o at level l (line 8), but mx uses it here outside that loop level") == 0);
}

TEST_CASE("carried: other rescale exponents and a running sum as a factor") {
  // exp(mx - A): the rescale exponent is +1 (exp(var - prev)); den multiplies the term
  auto p = parse_text("carried_factors.dt",
                      "Func o, mx, den; In A, V; Var m = 24, n = 8; RVar l = 100;\n"
                      "mx[m] = rmax(A[m, l], l);\n"
                      "den[m] = rsum(exp(A[m, l] - mx[m]), l);\n"
                      "o[m, n] = rdot(exp(mx[m] - A[m, l]) * den[m], V[l, n], l);\n"
                      "mx.fuse_at(o, l);\nden.fuse_at(o, l);\n"
                      "o.tensorize(m:8, n:8, l:16);\no.compile();\n");
  std::string t = print_module(lower_dt(*p));
  CAPTURE(t);
  CHECK(t.find("where(mx_prev == -inf, 0.0, exp2(1.0 * (mx - mx_prev)))") != std::string::npos);
  CHECK(t.find("exp((mx * 0.6931471805599453)[:, None] - A_tile_3)") != std::string::npos);  // mx read as a value: times ln(2)
  CHECK(t.find("l_accumulator * den[:, None]") != std::string::npos);
  CHECK_SAME(*p, 4, 1e-4);
  CHECK_SAME(*p, 5, 1e-4, {{"l_SIZE", "37"}});
  // a carried sum consumed by rsum (not a dot): rescaled and divided after the loop
  auto q = parse_text("carried_rsum.dt",
                      "Func o, mx, den; In A, B; Var m = 24; RVar l = 100;\n"
                      "mx[m] = rmax(A[m, l], l);\n"
                      "den[m] = rsum(exp(A[m, l] - mx[m]), l);\n"
                      "o[m] = rsum(B[m, l] * exp(A[m, l] - mx[m]) / den[m], l);\n"
                      "mx.fuse_at(o, l);\nden.fuse_at(o, l);\n"
                      "o.tensorize(m:8, l:16);\no.compile();\n");
  CHECK_SAME(*q, 6, 1e-4);
  CHECK_SAME(*q, 7, 1e-4, {{"l_SIZE", "3"}, {"m_SIZE", "5"}});
}

TEST_CASE("carried: a reduction fused at an output dim's loop is not carried") {
  // sm's loop over l is one of its output dims: den reduces over l inside it, which is an error
  std::string e = error_of([&] {
    parse_text("not_carried.dt",
               "Func sm, den; In A; Var m = 8; RVar l = 64;\n"
               "den[m] = rsum(A[m, l], l);\n"
               "sm[m, l] = A[m, l] / den[m];\n"
               "den.fuse_at(sm, l);\nsm.tensorize(m:8, l:16);\nsm.compile();\n");
  });
  CHECK(e.find("not_carried.dt:2:10: error: rsum() over l runs inside the loop over l of the consumer") == 0);
}
