// Causal masks (docs/dt-language.md, "Causal masks: the key loop bounded at the diagonal"): dims used
// as values and `-inf` in the algorithm; loops over a reduced dim that stop at the end of the current
// tile of the compared output dim where the points past the diagonal provably contribute nothing,
// split into the tiles wholly below the diagonal (no mask) and those that cross it; forms the proof
// does not cover keep the full loop with the mask. Every case also runs on the interpreter against
// the schedule-free reference.
#include <doctest/doctest.h>

#include "dt_harness.h"
#include "ir/Printer.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {

// Causal attention over one head (examples/attention_flash_causal.dt without the batch dim), the
// scores masked by `mask` with the value `masked`.
std::string causal_attention(const std::string& mask, const std::string& masked, const std::string& l_tile) {
  return "Func o, s, mx, e, den, p: f16; In Q: f16, K: f16, V: f16; Var m = 40, n = 16; RVar k = 16, l = 150;\n"
         "s[m, l] = where(" + mask + ", rdot(Q[m, k], K[l, k], k) * rsqrt(len(k)), " + masked + ");\n"
         "mx[m] = rmax(s[m, l], l);\n"
         "e[m, l] = exp(s[m, l] - mx[m]);\n"
         "den[m] = rsum(e[m, l], l);\n"
         "p[m, l] = e[m, l] / den[m];\n"
         "o[m, n] = rdot(p[m, l], V[l, n], l);\n"
         "s.fuse_at(o, l);\ne.fuse_at(o, l);\np.fuse_at(o, l);\nmx.fuse_at(o, l);\nden.fuse_at(o, l);\n"
         "o.block(m:16);\no.tensorize(m:16, n:0, k:0, l:" + l_tile + ");\no.compile();\n";
}

std::string causal_diff(const DtProgram& p, uint64_t seed, const std::map<std::string, std::string>& ov = {}) {
  return run_and_compare(p, seed, tolerance_for(p), ov);
}

size_t count_of(const std::string& t, const std::string& s) {
  size_t n = 0;
  for (size_t at = t.find(s); at != std::string::npos; at = t.find(s, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("causal: the key loop stops at the query block's end, the tiles below the diagonal unmasked") {
  auto p = parse_text("causal.dt", causal_attention("l <= m", "-inf", "8"));
  std::string t = print_module(lower_dt(*p));
  CAPTURE(t);
  CHECK(t.find("l_end = minimum(l_SIZE, m_block_start + 16)") != std::string::npos);
  CHECK(t.find("l_split = minimum(m_block_start, l_SIZE) // 8 * 8") != std::string::npos);
  size_t below = t.find("for l_iter in range(0, l_split, 8)");
  size_t cross = t.find("for l_iter in range(l_split, l_end, 8)");
  REQUIRE(below != std::string::npos);
  REQUIRE(cross != std::string::npos);
  CHECK(below < cross);
  CHECK(t.find("range(0, l_SIZE") == std::string::npos);
  std::string first = t.substr(below, cross - below), second = t.substr(cross);
  // below the diagonal: neither the diagonal's mask nor l's in the values (the loads keep theirs)
  CHECK(first.find("<= m_index") == std::string::npos);
  CHECK(first.find("where(l_mask") == std::string::npos);
  CHECK(first.find("mx = maximum(mx_prev, max(k_accumulator, axis=1) * (rsqrt(k_SIZE) * 1.4426950408889634))") != std::string::npos);
  CHECK(first.find("den = den * mx_alpha + sum(e, axis=1)") != std::string::npos);
  CHECK(first.find("l_accumulator = dot(p, V_tile, l_accumulator * mx_alpha[:, None])") != std::string::npos);
  // across it: both masks; the scale still folded into exp2's factor through the mask
  CHECK(second.find("where(l_index[None, :] <= m_index[:, None], k_accumulator, -inf)") != std::string::npos);
  CHECK(second.find("where(l_mask[None, :], p, 0.0)") != std::string::npos);
  CHECK(count_of(t, "exp2(where(l_index[None, :] <= m_index[:, None], k_accumulator, -inf) * (rsqrt(k_SIZE) * 1.4426950408889634) - mx[:, None])") == 1);
  // the running values pass from the first loop to the second; the division once after both
  CHECK(t.find("l_accumulator = l_accumulator / den[:, None]") > cross);
  CHECK(count_of(t, "mx = full(") == 1);
  // the interpreter equals the reference: square, more keys than queries, fewer, a key count that no
  // tile divides, one key
  CHECK_MESSAGE(causal_diff(*p, 1).empty(), causal_diff(*p, 1));
  for (auto sizes : {std::pair{"40", "40"}, {"37", "150"}, {"150", "37"}, {"33", "7"}, {"5", "1"}, {"64", "64"}}) {
    const char* m = sizes.first;  // (not a structured binding: CAPTURE's lambda takes it)
    const char* l = sizes.second;
    CAPTURE(m);
    CAPTURE(l);
    std::string d = causal_diff(*p, 2, {{"m_SIZE", m}, {"l_SIZE", l}});
    CHECK_MESSAGE(d.empty(), d);
  }
}

TEST_CASE("causal: the mask's other spellings, and a key tile wider than the query block") {
  for (const char* mask : {"m >= l", "l <= m"}) {
    for (const char* tile : {"16", "32", "0"}) {
      CAPTURE(mask);
      CAPTURE(tile);
      auto p = parse_text("causal_forms.dt", causal_attention(mask, "-inf", tile));
      std::string t = print_module(lower_dt(*p));
      CAPTURE(t);
      if (std::string(tile) == "0") {
        CHECK(t.find("for l_iter") == std::string::npos);  // one tile over all keys: no loop to bound
      } else {
        CHECK(t.find("for l_iter in range(l_split, l_end, " + std::string(tile) + ")") != std::string::npos);
      }
      std::string d = causal_diff(*p, 3, {{"m_SIZE", "45"}, {"l_SIZE", "50"}});
      CHECK_MESSAGE(d.empty(), d);
    }
  }
}

TEST_CASE("causal: forms the proof does not cover keep the full loop with the mask") {
  // a masked score 0 is exp(0 - max) != 0 in the row sum; a mask `l <= m + 1` is not a comparison of
  // two dims; a strict `l < m` leaves row 0 without keys (NaN, as in the reference), so only the shape
  // of the loops is checked there
  for (auto form : {std::pair{"l <= m", "0.0"}, {"l <= m + 1", "-inf"}, {"l <= m", "-1e30"}}) {
    const char* mask = form.first;
    const char* masked = form.second;
    CAPTURE(mask);
    CAPTURE(masked);
    auto p = parse_text("causal_full.dt", causal_attention(mask, masked, "8"));
    std::string t = print_module(lower_dt(*p));
    CAPTURE(t);
    CHECK(t.find("for l_iter in range(0, l_SIZE, 8)") != std::string::npos);
    CHECK(t.find("l_split") == std::string::npos);
    std::string d = causal_diff(*p, 4, {{"m_SIZE", "37"}, {"l_SIZE", "41"}});
    CHECK_MESSAGE(d.empty(), d);
  }
  auto strict = parse_text("causal_strict.dt", causal_attention("l < m", "-inf", "8"));
  CHECK(print_module(lower_dt(*strict)).find("for l_iter in range(l_split, l_end, 8)") != std::string::npos);
}

TEST_CASE("causal: a lower-triangular matrix product is bounded; an upper-triangular fill is not") {
  // tril(A) @ B: the masked operand is 0, so a dot's term past the diagonal is 0
  const std::string head = "Func c; In A, B; Var m = 50, n = 24; RVar l = 70;\n";
  const std::string sched = "c.block(m:16);\nc.tensorize(m:16, n:0, l:8);\nc.compile();\n";
  auto tril = parse_text("tril.dt", head + "c[m, n] = rdot(where(l <= m, A[m, l], 0.0), B[l, n], l);\n" + sched);
  std::string t = print_module(lower_dt(*tril));
  CAPTURE(t);
  CHECK(t.find("for l_iter in range(l_split, l_end, 8)") != std::string::npos);
  std::string d = causal_diff(*tril, 5);
  CHECK_MESSAGE(d.empty(), d);
  // the masked value 1 is not a dot's zero: full loop
  auto ones = parse_text("tril_ones.dt", head + "c[m, n] = rdot(where(l <= m, A[m, l], 1.0), B[l, n], l);\n" + sched);
  std::string u = print_module(lower_dt(*ones));
  CHECK(u.find("for l_iter in range(0, l_SIZE, 8)") != std::string::npos);
  d = causal_diff(*ones, 6);
  CHECK_MESSAGE(d.empty(), d);
}

TEST_CASE("dims as values: the index of the point, with no schedule and with tiles") {
  const std::string alg =
      "Func out, att; In A, B, V; Var x = 21, y = 13; RVar l = 17;\n"
      "out[x, y] = where(x >= y, A[x, y], 0.0) + x * 0.5 - y;\n"
      "att[x, y] = rsum(where(l <= x, exp(B[x, l] - 1.0), 0.0) * V[l, y], l);\n";
  auto plain = parse_text("dims_plain.dt", alg + "out.compile();\natt.compile();\n");
  std::string d = causal_diff(*plain, 7);
  CHECK_MESSAGE(d.empty(), d);
  auto tiled = parse_text("dims_tiled.dt", alg +
                                               "out.block(x:8);\nout.tensorize(x:8, y:4);\nout.compile();\n"
                                               "att.block(x:4);\natt.tensorize(x:4, y:0, l:4);\natt.compile();\n");
  std::string t = print_module(lower_dt(*tiled));
  CAPTURE(t);
  CHECK(t.find("x_index[:, None] >= y_index[None, :]") != std::string::npos);
  CHECK(t.find("for l_iter in range(l_split, l_end, 4)") != std::string::npos);
  d = causal_diff(*tiled, 8);
  CHECK_MESSAGE(d.empty(), d);
  d = causal_diff(*tiled, 9, {{"x_SIZE", "30"}, {"l_SIZE", "5"}});
  CHECK_MESSAGE(d.empty(), d);
}

TEST_CASE("dims as values and inf: located errors") {
  CHECK(error_of([] { parse_text("e1.dt", "Func o; In A; Var x = 4; RVar k = 4;\no[x] = where(k <= x, A[x], -inf);\no.compile();\n"); })
            .find("e1.dt:2:14: error: RVar 'k' is used outside a reduction over it") != std::string::npos);
  CHECK(error_of([] { parse_text("e2.dt", "Func o; In A; Var x = 4, y = 4;\no[x] = A[x] * (x < y);\no.compile();\n"); })
            .find("e2.dt:2:20: error: 'y' is not a dimension of o (its dims: x)") != std::string::npos);
  CHECK(error_of([] { parse_text("e3.dt", "SIn inf;\nFunc o; In A; Var x = 4;\no[x] = A[x];\no.compile();\n"); })
            .find("e3.dt:1:5: error: 'inf' is the literal infinity") != std::string::npos);
}
