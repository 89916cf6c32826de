// Printer unit tests over builder-made trees: every expression kind, statement kind, operator and
// parameter form prints canonically and reads back to the same text.
#include <doctest/doctest.h>

#include <cmath>

#include "tile_test_util.h"

using namespace dtsim;

namespace {
ExprP v(const char* n) { return make_var(n); }
ExprP i(int64_t x) { return make_const_int(x); }
ExprP f(double x) { return make_const_float(x); }

// print(e) == expected, and parsing that text prints it again.
void check_expr(const ExprP& e, const std::string& expected) {
  std::string s = print_expr(e);
  CHECK(s == expected);
  CHECK(tiletest::reprint_expr(s) == s);
}
}  // namespace

TEST_CASE("every expression kind prints and reads back") {
  check_expr(i(7), "7");
  check_expr(i(-7), "-7");
  check_expr(f(0.5), "0.5");
  check_expr(f(1.0), "1.0");
  check_expr(f(1e-5), "1e-05");
  check_expr(f(-INFINITY), "-inf");
  check_expr(f(NAN), "nan");
  check_expr(f(0.1), "0.1");
  check_expr(f(1.0 / 3.0), "0.3333333333333333");
  check_expr(f(1e300), "1e+300");
  check_expr(make_const_bool(true), "True");
  ExprP typed = make_const_int(3);
  typed->weak = false;
  typed->dtype = Scalar::I64;
  check_expr(typed, "3.to(i64)");
  check_expr(v("x"), "x");
  check_expr(make_program_id(1), "program_id(1)");
  check_expr(make_num_programs(2), "num_programs(2)");
  check_expr(make_arange(i(0), v("B")), "arange(0, B)");
  check_expr(make_full({v("B"), i(4)}, f(0.0), Scalar::F32), "zeros([B, 4], f32)");
  check_expr(make_full({i(8)}, f(-1.5), Scalar::F16), "full([8], -1.5, f16)");
  check_expr(make_where(v("c"), v("a"), f(0.0)), "where(c, a, 0.0)");
  check_expr(make_cast(make_binary(BinOp::Add, v("a"), i(1)), Scalar::BF16), "(a + 1).to(bf16)");
  check_expr(make_cast(i(-2), Scalar::F32), "(-2).to(f32)");
  check_expr(make_expand_dims(v("x"), 0), "x[None, :]");
  check_expr(make_expand_dims(v("x"), 1), "x[:, None]");
  check_expr(make_expand_dims(v("x"), 2), "x[:, :, None]");
  check_expr(make_expand_dims(v("x"), -1), "expand_dims(x, -1)");
  check_expr(make_reshape(v("x"), {i(2), i(8)}), "reshape(x, [2, 8])");
  check_expr(make_trans(v("x")), "trans(x)");
  check_expr(make_broadcast(v("x"), {i(4), i(8)}), "broadcast_to(x, [4, 8])");
  check_expr(make_load(v("p")), "load(p)");
  check_expr(make_load(v("p"), v("m")), "load(p, mask=m)");
  check_expr(make_load(v("p"), nullptr, f(1.0)), "load(p, other=1.0)");
  check_expr(make_load(v("p"), v("m"), f(-INFINITY)), "load(p, mask=m, other=-inf)");
  check_expr(make_dot(v("a"), v("b")), "dot(a, b)");
  check_expr(make_dot(v("a"), v("b"), v("c")), "dot(a, b, c)");
  check_expr(make_reduce(RedOp::Argmin, v("x"), 1), "argmin(x, axis=1)");
  check_expr(make_reduce(RedOp::Sum, v("x"), -1), "sum(x, axis=-1)");
  check_expr(make_swizzle2d(v("i"), v("j"), v("ni"), v("nj"), i(4)), "swizzle2d(i, j, ni, nj, 4)");
  check_expr(make_histogram(v("x"), i(512)), "histogram(x, 512)");
  check_expr(make_histogram(v("x"), v("B"), make_binary(BinOp::Lt, v("r"), v("n"))), "histogram(x, B, mask=r < n)");
}

TEST_CASE("every unary and binary operator prints and reads back") {
#define X(e, s, ...) check_expr(make_unary(UnOp::e, v("x")), UnOp::e == UnOp::Neg ? "-x" : UnOp::e == UnOp::Not ? "~x" : std::string(s) + "(x)");
  DT_FOR_EACH_UNOP(X)
#undef X
#define X(e, s, ...) \
  check_expr(make_binary(BinOp::e, v("a"), v("b")),                                              \
             binop_is_call(BinOp::e) ? std::string(s) + "(a, b)" : std::string("a ") + s + " b");
  DT_FOR_EACH_BINOP(X)
#undef X
}

TEST_CASE("parentheses are minimal but sufficient") {
  auto add = [](ExprP a, ExprP b) { return make_binary(BinOp::Add, a, b); };
  auto sub = [](ExprP a, ExprP b) { return make_binary(BinOp::Sub, a, b); };
  auto mul = [](ExprP a, ExprP b) { return make_binary(BinOp::Mul, a, b); };
  check_expr(mul(add(v("a"), v("b")), v("c")), "(a + b) * c");
  check_expr(add(v("a"), mul(v("b"), v("c"))), "a + b * c");
  check_expr(sub(v("a"), sub(v("b"), v("c"))), "a - (b - c)");
  check_expr(sub(sub(v("a"), v("b")), v("c")), "a - b - c");
  check_expr(make_binary(BinOp::Lt, make_binary(BinOp::Lt, v("a"), v("b")), v("c")), "(a < b) < c");
  check_expr(make_binary(BinOp::And, make_binary(BinOp::Lt, v("a"), v("b")), v("c")), "(a < b) & c");
  check_expr(make_binary(BinOp::Lt, make_binary(BinOp::And, v("a"), v("b")), v("c")), "a & b < c");
  check_expr(make_binary(BinOp::LAnd, make_binary(BinOp::LOr, v("a"), v("b")), v("c")), "(a || b) && c");
  check_expr(make_unary(UnOp::Neg, make_unary(UnOp::Neg, v("x"))), "-(-x)");
  check_expr(make_unary(UnOp::Neg, i(-3)), "-(-3)");
  check_expr(make_unary(UnOp::Neg, i(3)), "-3");
  check_expr(make_unary(UnOp::Not, make_binary(BinOp::Lt, v("a"), v("b"))), "~(a < b)");
  check_expr(make_expand_dims(make_unary(UnOp::Neg, v("x")), 1), "(-x)[:, None]");
  check_expr(mul(i(-2), v("x")), "-2 * x");
  check_expr(sub(v("x"), f(-0.5)), "x - -0.5");
  check_expr(make_binary(BinOp::Shl, v("a"), add(v("b"), i(1))), "a << b + 1");
  check_expr(make_binary(BinOp::Add, make_binary(BinOp::Shl, v("a"), v("b")), i(1)), "(a << b) + 1");
}

TEST_CASE("statements and kernels print canonically and read back") {
  Kernel k;
  k.name = "all";
  k.params.push_back(Param{"x", ParamKind::Pointer, Scalar::F32, {v("n")}, BufIO::In, nullptr, {}, -1});
  k.params.push_back(Param{"z", ParamKind::Pointer, Scalar::F32, {v("n"), i(2)}, BufIO::Out, nullptr, {}, -1});
  k.params.push_back(Param{"n", ParamKind::Scalar, Scalar::I32, {}, BufIO::In, i(64), {}, -1});
  k.params.push_back(Param{"B", ParamKind::Constexpr, Scalar::I32, {}, BufIO::In, i(16), {}, -1});
  k.grid = {make_binary(BinOp::Cdiv, v("n"), v("B")), i(2)};
  k.num_warps = 2;
  k.body.push_back(make_assign("o", make_arange(i(0), v("B"))));
  StmtP aug = make_assign("o", make_binary(BinOp::FloorDiv, v("o"), i(2)));
  aug->aug = BinOp::FloorDiv;
  k.body.push_back(aug);
  StmtP sw = make_assign("a", make_swizzle2d(make_program_id(0), make_program_id(1), i(4), i(2), i(2)));
  sw->targets.push_back("b");
  k.body.push_back(sw);
  k.body.push_back(make_store(make_binary(BinOp::Add, v("z"), v("o")), make_load(make_binary(BinOp::Add, v("x"), v("o"))), nullptr));
  k.body.push_back(make_store(make_binary(BinOp::Add, v("z"), v("o")), f(1.0), make_binary(BinOp::Lt, v("o"), v("n"))));
  std::vector<StmtP> loop_body{make_assign("o", make_binary(BinOp::Add, v("o"), v("t")))};
  k.body.push_back(make_for("t", i(0), v("n"), v("B"), loop_body));
  k.body.push_back(make_for("t", i(1), i(3), nullptr, {}));
  auto pr = std::make_shared<Stmt>();
  pr->kind = StmtKind::Print;
  pr->text = "say \"hi\"\n";
  pr->args = {v("a"), v("o")};
  auto as = std::make_shared<Stmt>();
  as->kind = StmtKind::Assert;
  as->args = {make_binary(BinOp::Ge, v("a"), i(0))};
  as->text = "a >= 0";
  auto ret = std::make_shared<Stmt>();
  ret->kind = StmtKind::Return;
  StmtP inner = make_if(make_binary(BinOp::Eq, v("b"), i(1)), {as}, {ret});
  k.body.push_back(make_if(make_binary(BinOp::Eq, v("a"), i(0)), {pr}, {inner}));
  k.body.push_back(make_if(v("a"), {}, {}));
  Module m;
  m.kernels.push_back(k);
  const std::string want =
      "kernel all(x: *f32[n], out z: *f32[n, 2], n: i32 = 64, B: constexpr = 16)\n"
      "    grid(cdiv(n, B), 2) num_warps(2) num_stages(3) {\n"
      "  o = arange(0, B)\n"
      "  o //= 2\n"
      "  a, b = swizzle2d(program_id(0), program_id(1), 4, 2, 2)\n"
      "  store(z + o, load(x + o))\n"
      "  store(z + o, 1.0, mask=o < n)\n"
      "  for t in range(0, n, B) {\n"
      "    o = o + t\n"
      "  }\n"
      "  for t in range(1, 3) {\n"
      "  }\n"
      "  if a == 0 {\n"
      "    print(\"say \\\"hi\\\"\\n\", a, o)\n"
      "  } else if b == 1 {\n"
      "    assert(a >= 0, \"a >= 0\")\n"
      "  } else {\n"
      "    return\n"
      "  }\n"
      "  if a {\n"
      "  }\n"
      "}\n";
  std::string got = print_module(m);
  CHECK(got == want);
  Module again = tiletest::parse_text(got);
  CHECK(print_module(again) == got);
  CHECK(again.kernels[0].body[7]->body[0]->text == "say \"hi\"\n");
}

TEST_CASE("long parameter lists wrap one parameter per line") {
  Kernel k;
  k.name = "wide";
  for (const char* n : {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"})
    k.params.push_back(Param{n, ParamKind::Pointer, Scalar::F32, {v("n")}, BufIO::InOut, nullptr, {}, -1});
  k.params.push_back(Param{"n", ParamKind::Scalar, Scalar::I32, {}, BufIO::In, i(4), {}, -1});
  k.grid = {i(1)};
  std::string s = print_kernel(k);
  CHECK(s.rfind("kernel wide(inout alpha: *f32[n],\n            inout beta: *f32[n],\n", 0) == 0);
  Module m;
  m.kernels.push_back(k);
  CHECK(print_module(tiletest::parse_text(s)) == s);
}

TEST_CASE("print_stmt indents by nesting level") {
  StmtP s = make_for("i", i(0), i(4), nullptr, {make_assign("x", i(1))});
  CHECK(print_stmt(*s, 1) == "  for i in range(0, 4) {\n    x = 1\n  }\n");
}

TEST_CASE("schedule options print after num_stages and read back") {
  const std::string body = "  store(x + arange(0, 16), zeros([16], f32))\n}\n";
  const std::string head = "kernel k(out x: *f32[16])\n    grid(1) num_warps(4) num_stages(3)";
  for (const char* opts : {"", " warp_specialize", " persistent", " persistent(132)", " cluster(2)", " warp_specialize persistent(8) cluster(2)"}) {
    CAPTURE(opts);
    const std::string text = head + opts + " {\n" + body;
    Module m = tiletest::parse_text(text);
    CHECK(print_module(m) == text);
    CHECK(tiletest::error_of(text).empty());
  }
  // Any order in, canonical order out; cluster(1) is no cluster.
  Module m = tiletest::parse_text("kernel k(out x: *f32[16]) cluster(1) persistent warp_specialize grid(1) {\n" + body);
  CHECK(print_module(m) == head + " warp_specialize persistent {\n" + body);
  const Kernel& k = m.kernels[0];
  CHECK(k.warp_specialize);
  CHECK(k.persistent);
  CHECK(k.persistent_ctas == 0);
  CHECK(k.cluster == 1);
  // The verifier checks kernels built without the parser.
  Module bad = tiletest::parse_text(head + " {\n" + body);
  bad.kernels[0].cluster = 4;
  CHECK_THROWS_WITH_AS(verify_module(bad, bind_params(bad, {})), doctest::Contains("cluster(N) takes clusters of 1 or 2 CTAs, got 4"), UserError);
  bad.kernels[0].cluster = 1;
  bad.kernels[0].persistent_ctas = 5;  // an N without persistent
  CHECK_THROWS_WITH_AS(verify_module(bad, bind_params(bad, {})), doctest::Contains("persistent(N) takes 1 to 2147483647 CTAs, got 5"), UserError);
}
