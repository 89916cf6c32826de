// Interpreter unit tests: every operation against hand-computed values.
#include <doctest/doctest.h>

#include <array>
#include <cfloat>
#include <cmath>

#include "interp/Exec.h"
#include "interp_test_util.h"

using namespace dtsim;
using namespace dtsim::test;
using V = std::vector<double>;

TEST_CASE("f16 and bf16 conversions round to nearest even") {
  CHECK(f32_to_f16(1.0f) == 0x3c00);
  CHECK(f32_to_f16(65504.0f) == 0x7bff);
  CHECK(f32_to_f16(65520.0f) == 0x7c00);          // rounds up to inf
  CHECK(f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);  // tie -> even (down)
  CHECK(f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02);  // tie -> even (up)
  CHECK(f32_to_f16(0x1p-24f) == 0x0001);          // smallest subnormal
  CHECK(f32_to_f16(0x1p-25f) == 0x0000);          // tie with zero -> even
  CHECK(f32_to_f16(-INFINITY) == 0xfc00);
  CHECK(std::isnan(f16_to_f32(f32_to_f16(NAN))));
  CHECK(f16_to_f32(0x0001) == 0x1p-24f);
  CHECK(f16_to_f32(0xc000) == -2.0f);
  CHECK(f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);  // tie -> even
  CHECK(f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);
  CHECK(bf16_to_f32(0x3f80) == 1.0f);
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  CHECK(round_to(Scalar::F16, 0.1f) == f16_to_f32(0x2e66));
}

TEST_CASE("integer // and % truncate toward zero; division by zero faults") {
  CHECK(eval8("full([8], -7, i32) // 2") == V(8, -3));
  CHECK(eval8("full([8], -7, i32) % 2") == V(8, -1));
  CHECK(eval8("full([8], 7, i32) % -2") == V(8, 1));
  CHECK(eval8("cdiv(full([8], 7, i32), 2)") == V(8, 4));
  auto run = run_tile("<div0>", "kernel t(out z: *i32[8]) grid(1) {\n  r = arange(0, 8)\n  store(z + r, 7 // (r - 3))\n}\n");
  REQUIRE(run->rep.findings_count == 1);
  CHECK(run->rep.findings[0].kind == Finding::Fault);
  INFO(run->messages());
  CHECK(run->messages().find("<div0>:3:18: error: integer division by zero") != std::string::npos);
  CHECK(run->messages().find("pid [0]") != std::string::npos);
}

TEST_CASE("integer arithmetic wraps") {
  CHECK(eval8("full([8], 2147483647, i32) + 1") == V(8, -2147483648.0));
  CHECK(eval8("full([8], -2147483647, i32) - 2") == V(8, 2147483647.0));
  CHECK(eval8("(full([8], 65536, i32) * 65536)") == V(8, 0));
  CHECK(eval8("full([8], -8, i32) >> 1") == V(8, -4)); // arithmetic
}

TEST_CASE("shifts: a count at or past the width gives 0, or the sign for >> (PTX's clamp)") {
  // lane r shifts by r * 8 + 1: 1, 9, 17, 25, 33, 41, 49, 57
  CHECK(eval8("full([8], 1, i32) << (r * 8 + 1)") == V{2, 512, 131072, 33554432, 0, 0, 0, 0});
  CHECK(eval8("full([8], -1024, i32) >> (r * 8 + 1)") == V{-512, -2, -1, -1, -1, -1, -1, -1});
  CHECK(eval8("full([8], 1024, i32) >> (r * 8 + 1)") == V{512, 2, 0, 0, 0, 0, 0, 0});
  CHECK(eval8("full([8], 1, i32) << (0 - r)") == V{1, 0, 0, 0, 0, 0, 0, 0});  // a negative count is a huge unsigned one
  CHECK(eval8("(full([8], 1, i64) << (r * 16 + 31)).to(f64)", "f64") == V{2147483648.0, 140737488355328.0, 9223372036854775808.0 * -1, 0, 0, 0, 0, 0});
  CHECK(eval8("full([8], 3, i8) << (r + 6).to(i8)") == V{-64, -128, 0, 0, 0, 0, 0, 0});  // i8 in i32, wrapped
}

TEST_CASE("float ops, math functions and f16 rounding after every op") {
  CHECK(eval8("r.to(f32) / 2", "f32") == V{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5});
  CHECK(eval8("r / 4", "f32") == V{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75});
  V m = eval8("(r - 4).to(f32) % 3.0", "f32");
  CHECK(m == V{-1, -0.0, -2, -1, 0, 1, 2, 0});
  V e = eval8("exp(r.to(f32))", "f32");
  CHECK(e[1] == doctest::Approx(std::exp(1.0)).epsilon(1e-6));
  CHECK(eval8("sqrt(full([8], 16.0, f32))", "f32") == V(8, 4));
  CHECK(eval8("abs(r - 4)") == V{4, 3, 2, 1, 0, 1, 2, 3});
  CHECK(eval8("sigmoid(full([8], 0.0, f32))", "f32") == V(8, 0.5));
  // 2049 is not representable in f16: 2048 + 1 rounds to 2048 (ties to even).
  CHECK(eval8("full([8], 2048.0, f16) + 1.0", "f32") == V(8, 2048));
  CHECK(eval8("full([8], 2048.0, f16) + 3.0", "f32") == V(8, 2052));
  CHECK(eval8("(full([8], 1.0, f16) / 3.0).to(f32)", "f32")[0] == double(f16_to_f32(0x3555)));
  CHECK(eval8("(full([8], 1.0, bf16) / 3.0).to(f32)", "f32")[0] == double(bf16_to_f32(0x3eab)));
}

TEST_CASE("minimum / maximum propagate NaN") {
  V v = eval8("minimum(where(r == 2, nan, r.to(f32)), full([8], 3.0, f32))", "f32");
  CHECK(v[0] == 0);
  CHECK(std::isnan(v[2]));
  CHECK(v[5] == 3);
  V w = eval8("maximum(full([8], 3.0, f32), where(r == 1, nan, r.to(f32)))", "f32");
  CHECK(std::isnan(w[1]));
  CHECK(w[7] == 7);
}

TEST_CASE("casts saturate, truncate and map NaN to 0") {
  V v = eval8("where(r == 0, 3e10, where(r == 1, -3e10, where(r == 2, nan, where(r == 3, -2.7, 2.7)))).to(i32)");
  CHECK(v == V{2147483647.0, -2147483648.0, 0, -2, 2, 2, 2, 2});
  CHECK(eval8("(r - 1).to(i1).to(i32)") == V{1, 0, 1, 1, 1, 1, 1, 1});
  CHECK(eval8("(r < 3).to(f32) * 2.0", "f32") == V{2, 2, 2, 0, 0, 0, 0, 0});
}

TEST_CASE("broadcasting, expand_dims, reshape, trans, broadcast_to") {
  const char* src = R"(kernel t(out z: *i32[4, 8], out w: *i32[8, 4], out u: *i32[32]) grid(1) {
  a = arange(0, 4)
  b = arange(0, 8)
  m = a[:, None] * 10 + b[None, :]
  store(z + a[:, None] * 8 + b[None, :], m)
  t = trans(m)
  store(w + b[:, None] * 4 + a[None, :], t)
  f = reshape(broadcast_to(a[:, None], [4, 8]), [32])
  store(u + arange(0, 32), f)
}
)";
  auto run = run_tile("<shape>", src);
  CHECK(run->rep.ok());
  CHECK(run->at("z", 8 + 3) == 13);
  CHECK(run->at("w", 3 * 4 + 2) == 23);
  CHECK(run->at("u", 9) == 1);
  CHECK(run->at("u", 31) == 3);
}

TEST_CASE("reductions: sum, max, min, argmax/argmin ties and NaN") {
  const char* src = R"(kernel t(out z: *f32[8], out i: *i32[8]) grid(1) {
  a = arange(0, 4)
  m = (a[:, None] * 2 + arange(0, 2)[None, :]).to(f32)
  s = sum(m, axis=0)
  store(z + arange(0, 2), s)
  store(z + 2 + arange(0, 4), max(m, 1))
  store(z + 6, min(min(m, 1), 0))
  store(z + 7, sum(arange(0, 4) < 2, 0).to(f32))
  ties = where(arange(0, 8) % 3 == 1, 5, 1)
  store(i, argmax(ties, 0))
  store(i + 1, argmin(ties, 0))
  store(i + 2, argmax(where(arange(0, 8) == 5, nan, 1.0), 0))
  store(i + 3 + arange(0, 4), argmax(m, 1))
  store(i + 7, sum(full([4], 2147483647, i32), 0))
}
)";
  auto run = run_tile("<reduce>", src);
  REQUIRE(run->rep.ok());
  CHECK(run->at("z", 0) == 12);  // 0+2+4+6
  CHECK(run->at("z", 1) == 16);
  CHECK(run->at("z", 2) == 1);
  CHECK(run->at("z", 5) == 7);
  CHECK(run->at("z", 6) == 0);
  CHECK(run->at("z", 7) == 2);
  CHECK(run->at("i", 0) == 1);  // first of the tied maxima (1, 4, 7)
  CHECK(run->at("i", 1) == 0);
  CHECK(run->at("i", 2) == 5);  // NaN is extremal
  CHECK(run->at("i", 3) == 1);
  CHECK(run->at("i", 7) == -4);  // wraps
}

TEST_CASE("dot accumulates in f32 and adds acc") {
  const char* src = R"(kernel t(out z: *f32[2, 2]) grid(1) {
  i = arange(0, 2)
  k = arange(0, 4)
  a = (i[:, None] * 4 + k[None, :]).to(f32)
  b = (k[:, None] * 2 + i[None, :]).to(f32)
  c = dot(a, b, full([2, 2], 100.0, f32))
  store(z + i[:, None] * 2 + i[None, :], c)
}
)";
  auto run = run_tile("<dot>", src);
  REQUIRE(run->rep.ok());
  // a = [[0 1 2 3] [4 5 6 7]], b = [[0 1] [2 3] [4 5] [6 7]]
  CHECK(run->at("z", 0) == 100 + 28);
  CHECK(run->at("z", 1) == 100 + 34);
  CHECK(run->at("z", 2) == 100 + 76);
  CHECK(run->at("z", 3) == 100 + 98);
}

TEST_CASE("f32 -> tf32 rounds to nearest with ties away from zero (cvt.rna.tf32.f32)") {
  CHECK(exec::round_tf32(1.0f) == 1.0f);
  CHECK(exec::round_tf32(1.0f + 0x1p-12f) == 1.0f);            // below half of the last tf32 bit: down
  CHECK(exec::round_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);  // a tie: away from zero
  CHECK(exec::round_tf32(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f);
  CHECK(exec::round_tf32(1.0f + 3 * 0x1p-12f) == 1.0f + 0x1p-10f);
  CHECK(exec::round_tf32(0x1p-130f) == 0x1p-130f);        // a subnormal with a tf32 bit: exact
  CHECK(exec::round_tf32(3.0f * 0x1p-140f) == 0.0f);      // only bits below tf32's: gone
  CHECK(exec::round_tf32(FLT_MAX) == INFINITY);                   // the carry leaves the finite range
  CHECK(exec::round_tf32(-INFINITY) == -INFINITY);
  CHECK(std::isnan(exec::round_tf32(NAN)));
}

TEST_CASE("dot(..., precision=tf32) rounds every operand element first") {
  const char* src = R"(kernel t(out z: *f32[16, 16], out w: *f32[16, 16]) grid(1) {
  i = arange(0, 16)
  a = full([16, 16], 1.0, f32) + where(i[None, :] == 0, 0.000244140625, 0.0)
  b = where(i[:, None] == i[None, :], 1.0, 0.0)
  store(z + i[:, None] * 16 + i[None, :], dot(a, b, precision=tf32))
  store(w + i[:, None] * 16 + i[None, :], dot(a, b))
}
)";
  auto run = run_tile("<dot-tf32>", src);
  REQUIRE(run->rep.ok());
  CHECK(run->at("z", 0) == 1.0);                  // 1 + 2^-12 is 1 in tf32
  CHECK(run->at("w", 0) == 1.0 + 0x1p-12);        // exact without it
  CHECK(run->at("z", 1) == 1.0);
}

TEST_CASE("where on pointers, masked loads with other, if/for/return") {
  const char* src = R"(kernel t(x: *f32[4], out z: *f32[8], n: i32 = 4) grid(1) {
  r = arange(0, 8)
  p = where(r < 4, x + r, x + 0)
  v = load(p, r < n, other=-1.0)
  acc = 0
  for k in range(1, 10, 3) {
    acc += k
  }
  if acc == 12 {
    v = v + 0.0
  } else {
    v = v * 0.0
  }
  store(z + r, v)
  return
  store(z + r, v * 0.0)
}
)";
  auto run = run_tile("<ptr>", src);
  REQUIRE(run->rep.ok());
  for (int i = 0; i < 4; ++i) CHECK(run->at("z", i) == run->at("x", i));
  for (int i = 4; i < 8; ++i) CHECK(run->at("z", i) == -1);
}

TEST_CASE("while: the condition is tested before every trip; zero trips; return inside; tile conditions reduced") {
  // Collatz steps of 1..8 (a scalar condition on loop-carried values), a loop that never runs, a
  // return from inside a while nested in a for, and a condition computed from a tile reduction.
  const char* src = R"(kernel t(x: *f32[16], out z: *i32[8], out w: *i32[8], out h: *f32[8]) grid(8) {
  p = program_id(0)
  v = p + 1
  steps = 0
  while v != 1 {
    if v % 2 == 0 {
      v = v // 2
    } else {
      v = 3 * v + 1
    }
    steps += 1
  }
  store(z + p, steps)
  k = 0
  while k > 0 {
    k = k - 1
    store(z + p, -1)
  }
  y = load(x + arange(0, 16))
  s = 0.0
  while max(abs(y), axis=0) < 100.0 {
    y = y * 2.0
    s += 1.0
  }
  store(h + p, s)
  n = 3
  c = 0
  while n {
    n -= 1
    c += 10
  }
  for i in range(0, 10) {
    j = 0
    while j < 10 {
      if i * 10 + j == p + 3 + c {
        store(w + p, i * 10 + j)
        return
      }
      j += 1
    }
  }
  store(w + p, -1)
}
)";
  auto run = run_tile("<while>", src);
  REQUIRE(run->rep.ok());
  const int collatz[8] = {0, 1, 7, 2, 5, 8, 16, 3};
  double m = 0;
  for (int i = 0; i < 16; ++i) m = std::max(m, std::fabs(run->at("x", i)));
  int doublings = 0;
  for (double a = m; a < 100.0; a *= 2.0) ++doublings;
  for (int p = 0; p < 8; ++p) {
    CHECK(run->at("z", p) == collatz[p]);
    CHECK(run->at("h", p) == doublings);
    CHECK(run->at("w", p) == p + 33);  // found in the nested loops; the return skips the last store
  }
}

TEST_CASE("swizzle2d matches tl.swizzle2d on a 5x4 grid with group 3") {
  const char* src = R"(kernel t(out z: *i32[5, 4], out w: *i32[5, 4]) grid(5, 4) {
  i, j = swizzle2d(program_id(0), program_id(1), num_programs(0), num_programs(1), 3)
  store(z + i * 4 + j, program_id(0) * 4 + program_id(1))
}
)";
  auto run = run_tile("<swizzle>", src, InterpOptions{.sanitize = Sanitize::Bounds});
  REQUIRE(run->rep.ok());
  // Grouped ordering of 0..19: columns run down groups of 3 rows, then the last 2 rows.
  std::vector<int> want = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, 12, 14, 16, 18, 13, 15, 17, 19};
  for (int e = 0; e < 20; ++e) CHECK(run->at("z", e) == want[static_cast<size_t>(e)]);
}

TEST_CASE("print and assert") {
  const char* src = R"(kernel t(out z: *i32[8]) grid(2) {
  r = arange(0, 4)
  print("r =", r, program_id(0) == 1, 1.5)
  assert(r < 3, "r small")
  store(z + program_id(0) * 4 + r, r)
}
)";
  auto run = run_tile("<print>", src, InterpOptions{.keep_going = true});
  CHECK(run->out.find("pid [0] r = [0 1 2 3] False 1.5\n") == 0);
  CHECK(run->out.find("pid [1] r = [0 1 2 3] True 1.5\n") != std::string::npos);
  CHECK(run->rep.findings_count == 2);
  REQUIRE(!run->rep.findings.empty());
  CHECK(run->rep.findings[0].kind == Finding::AssertFailed);
  CHECK(run->messages().find("<print>:4:3: error: assertion failed: r small") != std::string::npos);
  CHECK(run->messages().find("1 of 4 lanes false (first: lane 3); pid [0]") != std::string::npos);
}

TEST_CASE("format_value") {
  auto run = run_tile("<fmt>", "kernel t(out z: *f32[4]) grid(1) {\n  store(z + arange(0, 4), arange(0, 4).to(f32) / 2)\n}\n");
  CHECK(run->rep.ok());
  Frame f;
  f.kernel = &run->m.kernels[0];
  f.buffers = &run->bufs;
  f.bindings = &run->b;
  f.slots.resize(static_cast<size_t>(f.kernel->num_slots));
  ExprP e = parse_tile_expr(Sources::add("<e>", "arange(0, 4).to(f32) / 2"));
  verify_expr(e, *f.kernel, run->b, [](const std::string&) { return -1; });
  Value v = f.eval(e);
  CHECK(format_value(v) == "[0.  0.5 1.  1.5]");
  ExprP b = parse_tile_expr(Sources::add("<e>", "arange(0, 2) == 0"));
  verify_expr(b, *f.kernel, run->b, [](const std::string&) { return -1; });
  CHECK(format_value(f.eval(b)) == "[ True False]");
  CHECK(format_value(f.eval(e), &v) == "[ -- 0.5 1.  1.5]");
}

TEST_CASE("blocked dot is bit-identical to the plain k-ordered loop (tails included)") {
  // Full register blocks and row/column tails of the blocked kernel, f32 and f64.
  for (const char* ty : {"f32", "f64"})
    for (auto [M, K, N] : {std::array<int, 3>{16, 8, 32}, {4, 16, 8}, {2, 4, 64}, {32, 32, 16}}) {
      std::string t = ty, m = std::to_string(M), k = std::to_string(K), n = std::to_string(N);
      std::string src = "kernel t(a: *" + t + "[" + m + ", " + k + "], b: *" + t + "[" + k + ", " + n + "], c0: *" + t + "[" + m + ", " + n +
                        "], out z: *" + t + "[" + m + ", " + n + "]) grid(1) {\n  i = arange(0, " + m + ")\n  k = arange(0, " + k +
                        ")\n  j = arange(0, " + n + ")\n  ta = load(a + i[:, None] * " + k + " + k[None, :])\n  tb = load(b + k[:, None] * " + n +
                        " + j[None, :])\n  tc = load(c0 + i[:, None] * " + n + " + j[None, :])\n  store(z + i[:, None] * " + n +
                        " + j[None, :], dot(ta, tb, tc))\n}\n";
      auto run = run_tile("<dot-blocked>", src);
      REQUIRE(run->rep.ok());
      int bad = 0;
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          if (t == "f32") {
            volatile float acc = static_cast<float>(run->at("c0", i * N + j));
            for (int q = 0; q < K; ++q) {
              volatile float p = static_cast<float>(run->at("a", i * K + q)) * static_cast<float>(run->at("b", q * N + j));
              acc = acc + p;
            }
            bad += static_cast<float>(run->at("z", i * N + j)) != acc;
          } else {
            volatile double acc = run->at("c0", i * N + j);
            for (int q = 0; q < K; ++q) {
              volatile double p = run->at("a", i * K + q) * run->at("b", q * N + j);
              acc = acc + p;
            }
            bad += run->at("z", i * N + j) != acc;
          }
        }
      CHECK(bad == 0);
    }
}

TEST_CASE("broadcast binary ops: row-by-row loops match per-element indexing (2-4 dims, ints, floats, compares)") {
  using namespace dtsim::exec;
  struct Case {
    Shape a, b, out;
  };
  std::vector<Case> cases = {{{4, 1}, {1, 7}, {4, 7}}, {{4, 7}, {1, 7}, {4, 7}}, {{4, 1}, {4, 7}, {4, 7}}, {{3, 1, 5}, {1, 4, 5}, {3, 4, 5}},
                             {{2, 1, 3, 1}, {1, 4, 1, 6}, {2, 4, 3, 6}}, {{5, 1}, {1, 1}, {5, 9}}, {{9}, {3, 9}, {3, 9}}, {{3, 1}, {3, 1}, {3, 1}}};
  // Flat index of `in` (right-aligned, broadcast axes of extent 1) for the output index `ix`.
  auto flat = [](const Shape& in, const Shape& out, const std::vector<int64_t>& ix) {
    int64_t f = 0;
    size_t off = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) f = f * in[d] + (in[d] == 1 ? 0 : ix[d + off]);
    return f;
  };
  uint32_t seed = 12345;
  auto rnd = [&seed]() { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  for (const Case& k : cases) {
    Value fa = alloc(Type{Scalar::F32, false, k.a}), fb = alloc(Type{Scalar::F32, false, k.b});
    Value ia = alloc(Type{Scalar::I32, false, k.a}), ib = alloc(Type{Scalar::I32, false, k.b});
    for (int64_t i = 0; i < numel(fa); ++i) data<float>(fa)[i] = static_cast<float>(rnd() % 1000) / 37.0f - 13.0f, data<int32_t>(ia)[i] = static_cast<int32_t>(rnd() % 17) - 8;
    for (int64_t i = 0; i < numel(fb); ++i) data<float>(fb)[i] = static_cast<float>(rnd() % 1000) / 29.0f - 17.0f, data<int32_t>(ib)[i] = static_cast<int32_t>(rnd() % 17) - 8;
    Value fs = binary_op(BinOp::Sub, fa, fb, Type{Scalar::F32, false, k.out}, SourceLoc{});
    Value fr = binary_op(BinOp::Sub, fb, fa, Type{Scalar::F32, false, k.out}, SourceLoc{});
    Value im = binary_op(BinOp::Mul, ia, ib, Type{Scalar::I32, false, k.out}, SourceLoc{});
    Value lt = binary_op(BinOp::Lt, ia, ib, Type{Scalar::I1, false, k.out}, SourceLoc{});
    std::vector<int64_t> ix(k.out.size(), 0);
    int64_t n = shape_numel(k.out);
    for (int64_t o = 0; o < n; ++o) {
      int64_t pa = flat(k.a, k.out, ix), pb = flat(k.b, k.out, ix);
      INFO("case " << &k - cases.data() << " element " << o);
      CHECK(data<float>(fs)[o] == data<float>(fa)[pa] - data<float>(fb)[pb]);
      CHECK(data<float>(fr)[o] == data<float>(fb)[pb] - data<float>(fa)[pa]);
      CHECK(data<int32_t>(im)[o] == data<int32_t>(ia)[pa] * data<int32_t>(ib)[pb]);
      CHECK(data<uint8_t>(lt)[o] == (data<int32_t>(ia)[pa] < data<int32_t>(ib)[pb] ? 1 : 0));
      for (size_t d = ix.size(); d-- > 0;) {
        if (++ix[d] < k.out[d]) break;
        ix[d] = 0;
      }
    }
    // Integer division by zero in a broadcast operand faults, as element by element.
    data<int32_t>(ib)[numel(ib) - 1] = 0;
    CHECK_THROWS_AS(binary_op(BinOp::FloorDiv, ia, ib, Type{Scalar::I32, false, k.out}, SourceLoc{}), RuntimeFault);
  }
}

TEST_CASE("i8 and i16 wrap at their width after every op, in tiles, fused trees and scalars") {
  CHECK(eval8("(full([8], 100, i8) + 100).to(i32)") == V(8, -56));
  CHECK(eval8("((full([8], 100, i8) + 100) // 2).to(i32)") == V(8, -28));  // wrapped before the //
  CHECK(eval8("(full([8], 100, i8) + r.to(i8) * 10).to(i32)") == V{100, 110, 120, -126, -116, -106, -96, -86});
  CHECK(eval8("(full([8], -128, i8) // -1).to(i32)") == V(8, -128));
  CHECK(eval8("abs(full([8], -128, i8)).to(i32)") == V(8, -128));
  CHECK(eval8("(-full([8], -128, i8)).to(i32)") == V(8, -128));
  CHECK(eval8("(full([8], 1, i8) << 7).to(i32)") == V(8, -128));
  CHECK(eval8("(full([8], 1, i8) << 9).to(i32)") == V(8, 0));  // computed in 32 bits, then wrapped
  CHECK(eval8("(full([8], -128, i8) >> 9).to(i32)") == V(8, -1));
  CHECK(eval8("(full([8], 300, i16) * 300).to(i32)") == V(8, 24464));
  CHECK(eval8("(r * 100).to(i8).to(i32)") == V{0, 100, -56, 44, -112, -12, 88, -68});               // int -> i8 wraps
  CHECK(eval8("(r.to(f32) * 100.0 - 300.0).to(i8).to(i32)") == V{-128, -128, -100, 0, 100, 127, 127, 127});  // float -> i8 saturates
  CHECK(eval8("(r.to(f32) * 20000.0 - 60000.0).to(i16).to(i32)") == V{-32768, -32768, -20000, 0, 20000, 32767, 32767, 32767});
  CHECK(eval8("sum(full([8, 8], 100, i8), 1)") == V(8, 800));  // sums in i32
  CHECK(eval8("cumsum(full([8], 100, i8), 0).to(i32)") == V{100, -56, 44, -112, -12, 88, -68, 32});
  CHECK(eval8("max(r.to(i8) * 40, 0).to(i32)") == V(8, 120));  // 0 40 80 120 -96 -56 -16 24
  CHECK(eval8("(r.to(i8) * 40 < 0).to(i32)") == V{0, 0, 0, 0, 1, 1, 1, 0});
  // Scalars (the unboxed form): program_id(0) is 0.
  auto run = run_tile("<i8s>", "kernel t(out z: *i32[2]) grid(1) {\n  a = program_id(0).to(i8) + 127\n  b = a + 1\n  c = b * b\n"
                               "  store(z, b.to(i32))\n  store(z + 1, c.to(i32))\n}\n");
  CHECK(run->at("z", 0) == -128);
  CHECK(run->at("z", 1) == 0);
}

TEST_CASE("fp8 values round to nearest even after every op and saturate") {
  CHECK(eval8("(r.to(f32) * 0.3).to(f8e4m3).to(f32)", "f32") == V{0, 0.3125, 0.625, 0.875, 1.25, 1.5, 1.75, 2.0});
  CHECK(eval8("(full([8], 300.0, f8e4m3) + 300.0).to(f32)", "f32") == V(8, 448));  // 288 + 288 saturates
  CHECK(eval8("(full([8], 1.0, f8e5m2) + 0.125).to(f32)", "f32") == V(8, 1.0));      // a tie: to even
  CHECK(eval8("(full([8], 1.0, f8e5m2) + 0.375).to(f32)", "f32") == V(8, 1.5));      // 1.375: a tie, to even
  CHECK(eval8("(full([8], 40000.0, f8e5m2) * 2.0).to(f32)", "f32") == V(8, 57344));  // saturates
  CHECK(eval8("sum(full([8, 8], 448.0, f8e4m3), 1)", "f32") == V(8, 3584));          // sums in f32
  CHECK(eval8("(full([8], 0.5, f8e4m3).to(i8, bitcast=True)).to(i32)") == V(8, 0x30));
  CHECK(eval8("(full([8], 56, i8).to(f8e4m3, bitcast=True)).to(f32)", "f32") == V(8, 1.0));
  CHECK(eval8("(full([8], 60, i8).to(f8e5m2, bitcast=True)).to(f32)", "f32") == V(8, 1.0));
  CHECK(eval8("(full([8], 1.5, f8e4m3) + full([8], 1.5, f8e5m2)).to(f32)", "f32") == V(8, 3.0));  // e4m3 + e5m2 is f16
}

TEST_CASE("the other fp8 formats: e4b15 as Triton's NVIDIA conversion, e4b8 / e5b16 (fnuz) as its AMD one") {
  CHECK(eval8("(full([8], 1.0625, f32).to(f8e4b15)).to(f32)", "f32") == V(8, 1.125));  // a tie: away from zero
  CHECK(eval8("(full([8], 1.0625, f32).to(f8e4b8)).to(f32)", "f32") == V(8, 1.0));     // a tie: to even
  CHECK(eval8("(full([8], 1.0, f8e4b15) + 5.0).to(f32)", "f32") == V(8, 1.75));         // saturates at 1.75
  CHECK(eval8("(full([8], 127, i8).to(f8e4b15, bitcast=True)).to(f32)", "f32") == V(8, 1.875));  // 0x7f: 1.875
  CHECK(eval8("(full([8], 127, i8).to(f8e4b15, bitcast=True)).to(i8, bitcast=True).to(i32)") == V(8, 127));
  CHECK(eval8("(full([8], 200.0, f8e4b8) * 2.0).to(f32)", "f32") == V(8, 240));        // saturates at 240
  CHECK(eval8("(full([8], 40000.0, f8e5b16) * 2.0).to(f32)", "f32") == V(8, 57344));
  CHECK(eval8("(full([8], -0.0001, f32).to(f8e4b8)).to(i8, bitcast=True).to(i32)") == V(8, 0));  // +0 only
  CHECK(eval8("(full([8], -0.0, f32).to(f8e4b15)).to(i8, bitcast=True).to(i32)") == V(8, -128));  // -0 kept
  CHECK(eval8("(full([8], 1.0, f8e4b8) / 0.0).to(i8, bitcast=True).to(i32)") == V(8, -128));  // inf: the NaN 0x80
  CHECK(eval8("(full([8], 1.5, f8e4b15) + full([8], 1.5, f8e4b8)).to(f32)", "f32") == V(8, 3.0));  // two fp8 types: f16
}

TEST_CASE("float sums run as a tree (the GPU's order), fused or not; integer sums exactly") {
  // 1.0 then 255 lanes of 1e-8: a left-to-right f32 chain stays at 1.0 (each 1e-8 is under half an
  // ulp of 1); the tree adds the small lanes to each other first
  auto run = run_tile("<tree>",
                      "kernel t(out z: *f32[8]) grid(1) {\n"
                      "  r = arange(0, 256)\n"
                      "  x = where(r == 0, 1.0, 0.00000001)\n"
                      "  store(z, sum(x, axis=0))\n"
                      "  store(z + 1, sum(x * 1.0, axis=0))\n"
                      "  m = reshape(x, [16, 16])\n"
                      "  store(z + 2, sum(sum(trans(m), axis=1), axis=0))\n"
                      "  store(z + 3, sum(x, axis=0) - 1.0)\n"
                      "}\n");
  INFO(run->messages());
  REQUIRE(run->rep.findings_count == 0);
  std::vector<float> v(256, 1e-8f);
  v[0] = 1.0f;
  exec::tree_fold(v.data(), 256, 1);
  CHECK(run->at("z", 0) == static_cast<double>(v[0]));
  CHECK(run->at("z", 1) == static_cast<double>(v[0]));
  CHECK(run->at("z", 0) > 1.000002);  // a chain would give exactly 1.0
  CHECK(std::abs(run->at("z", 2) - 1.00000255) < 2e-7);
  // the folding order itself: lane k plus lane k + n/2
  std::vector<double> w{1, 2, 3, 4, 5, 6, 7, 8};
  exec::tree_fold(w.data(), 4, 2);  // 4 rows of 2: row sums (1+5)+(3+7), (2+6)+(4+8)
  CHECK(w[0] == 16);
  CHECK(w[1] == 20);
}

TEST_CASE("gather(): the lane each index selects along the axis, clamped to it, bit for bit") {
  // a [2, 4] source (row-major 0..7 plus 10 for row 1) gathered along each axis
  CHECK(eval8("reshape(gather(reshape(r + (r // 4) * 6, [2, 4]), reshape(3 - r % 4, [2, 4]), axis=1), [8])") ==
        V{3, 2, 1, 0, 13, 12, 11, 10});
  CHECK(eval8("reshape(gather(reshape(r, [2, 4]), reshape(1 - r // 4, [2, 4]), axis=0), [8])") == V{4, 5, 6, 7, 0, 1, 2, 3});
  // an index narrower than the source along the axis: [4, 2] from [4, 4]
  CHECK(eval8("reshape(gather(reshape(arange(0, 16), [4, 4]), reshape(r % 2 * 3, [4, 2]), axis=1), [8])") == V{0, 3, 4, 7, 8, 11, 12, 15});
  // indices outside the axis select its first or last lane; an i64 index
  CHECK(eval8("gather(r * 10, (r - 3) * 5, axis=0)") == V{0, 0, 0, 0, 50, 70, 70, 70});
  CHECK(eval8("gather(r * 10, (7 - r).to(i64), axis=0)") == V{70, 60, 50, 40, 30, 20, 10, 0});
  // floats copied as they are: -0.0 stays -0.0
  V z = eval8("gather(where(r % 2 == 0, -0.0, 1.5), r // 2 * 2, axis=0)", "f32");
  for (double d : z) CHECK((d == 0.0 && std::signbit(d)));
}

TEST_CASE("histogram(): per bin the lanes equal to it, values outside the bins dropped, lanes masked off left out") {
  CHECK(eval8("histogram(r - 2, 8)") == V{1, 1, 1, 1, 1, 1, 0, 0});                  // -2 and -1 dropped
  CHECK(eval8("histogram(r // 2 * 3 - 1, 8)") == V{0, 0, 2, 0, 0, 2, 0, 0});         // -1 and 8 dropped
  CHECK(eval8("histogram(r % 4, 8, mask=r < 6)") == V{2, 2, 1, 1, 0, 0, 0, 0});
  CHECK(eval8("histogram(arange(0, 4) * 2, 8)") == V{1, 0, 1, 0, 1, 0, 1, 0});       // fewer lanes than bins
  CHECK(eval8("histogram(arange(0, 64) % 8, 8)") == V(8, 8));
  // i8 lanes that wrapped to -6 .. 1; i64 lanes past 2^32 (not their low word)
  CHECK(eval8("histogram((r + 250).to(i8), 8)") == V{1, 1, 0, 0, 0, 0, 0, 0});
  CHECK(eval8("histogram(r.to(i64) + 4294967294, 8)") == V(8, 0));
  CHECK(eval8("histogram(r.to(i64) - 2, 8)") == V{1, 1, 1, 1, 1, 1, 0, 0});
  // 4096 lanes into 512 bins (each value of -256 .. 767 four times): every bin 4, a column of 64 bins 256
  CHECK(eval8("sum(reshape(histogram(arange(0, 4096) % 1024 - 256, 512), [64, 8]), axis=0)") == V(8, 256));
}
