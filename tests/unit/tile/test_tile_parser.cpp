// Parser unit tests: precedence, literals, subscripts, keywords, statements, locations, messages.
#include <doctest/doctest.h>

#include <cmath>

#include "tile_test_util.h"

using namespace dtsim;
using tiletest::error_of;
using tiletest::parse_text;
using tiletest::reprint_expr;

namespace {
ExprP expr_of(const std::string& s) { return parse_tile_expr(Sources::add("<expr>", s)); }

const char* kHeader = "kernel k(x: *f32[n], out z: *f32[n], n: i32 = 100, B: constexpr = 64) grid(cdiv(n, B)) {\n";
Module body(const std::string& stmts) { return parse_text(std::string(kHeader) + stmts + "}\n"); }
}  // namespace

TEST_CASE("precedence follows Python") {
  CHECK(reprint_expr("a + b * c") == "a + b * c");
  CHECK(reprint_expr("(a + b) * c") == "(a + b) * c");
  CHECK(reprint_expr("a - (b - c)") == "a - (b - c)");
  CHECK(reprint_expr("(a - b) - c") == "a - b - c");
  CHECK(reprint_expr("a & b == c") == "a & b == c");  // & binds tighter than ==
  ExprP e = expr_of("a & b == c");
  CHECK(e->bop == BinOp::Eq);
  CHECK(e->args[0]->bop == BinOp::And);
  CHECK(expr_of("a | b ^ c & d")->bop == BinOp::Or);
  CHECK(expr_of("a << 2 + 1")->bop == BinOp::Shl);
  CHECK(expr_of("-a * b")->bop == BinOp::Mul);
  CHECK(reprint_expr("-(a * b)") == "-(a * b)");
  CHECK(reprint_expr("a // b % c") == "a // b % c");
  CHECK(reprint_expr("a < b || c && d") == "a < b || c && d");
  CHECK(expr_of("a < b or c and d")->bop == BinOp::LOr);
  CHECK(expr_of("a < b or c and d")->args[1]->bop == BinOp::LAnd);
}

TEST_CASE("not, !, ~ are Unary Not; not is looser than comparisons") {
  ExprP e = expr_of("not a < b");
  CHECK(e->kind == ExprKind::Unary);
  CHECK(e->uop == UnOp::Not);
  CHECK(e->args[0]->bop == BinOp::Lt);
  CHECK(reprint_expr("!(a < b)") == "~(a < b)");
  CHECK(reprint_expr("~m & n") == "~m & n");
}

TEST_CASE("literals: negative folding, floats, inf, nan, booleans") {
  ExprP e = expr_of("-3");
  CHECK(e->kind == ExprKind::Const);
  CHECK(e->ival == -3);
  CHECK(e->weak);
  e = expr_of("-1.5");
  CHECK(e->kind == ExprKind::Const);
  CHECK(e->fval == -1.5);
  e = expr_of("-inf");
  CHECK(e->kind == ExprKind::Const);
  CHECK(std::isinf(e->fval));
  CHECK(e->fval < 0);
  CHECK(expr_of("-(3)")->kind == ExprKind::Unary);
  CHECK(expr_of("-9223372036854775808")->ival == INT64_MIN);
  CHECK(expr_of("3000000000")->dtype == Scalar::I64);
  CHECK(expr_of("True")->dtype == Scalar::I1);
  CHECK_FALSE(expr_of("False")->weak);
  CHECK(reprint_expr("1e-5") == "1e-05");
  CHECK(reprint_expr("1.") == "1.0");
  CHECK(reprint_expr(".5") == "0.5");
  CHECK(reprint_expr("0.1 + 2.5e10") == "0.1 + 25000000000.0");
  CHECK(reprint_expr("nan") == "nan");
  CHECK(reprint_expr("x - -3") == "x - -3");
  CHECK(reprint_expr("- -3") == "-(-3)");
  CHECK(reprint_expr("3.to(i64)") == "3.to(i64)");
}

TEST_CASE("subscripts with None are expand_dims") {
  ExprP e = expr_of("x[:, None]");
  CHECK(e->kind == ExprKind::ExpandDims);
  CHECK(e->axis == 1);
  CHECK(expr_of("x[None, :]")->axis == 0);
  CHECK(expr_of("x[None]")->axis == 0);
  CHECK(expr_of("x[:, :, None]")->axis == 2);
  CHECK(reprint_expr("expand_dims(x, 1)") == "x[:, None]");
  CHECK(reprint_expr("expand_dims(x, -1)") == "expand_dims(x, -1)");
  CHECK(reprint_expr("(a + b)[None, :]") == "(a + b)[None, :]");
}

TEST_CASE("builtins and keyword arguments") {
  ExprP e = expr_of("load(p + 1, mask=m, other=0.0)");
  REQUIRE(e->kind == ExprKind::Load);
  CHECK(e->args[1]->name == "m");
  CHECK(e->args[2]->is_float);
  e = expr_of("load(p, other=1.0)");
  CHECK(e->args[1] == nullptr);
  CHECK(reprint_expr("load(p, m, 0.0)") == "load(p, mask=m, other=0.0)");
  e = expr_of("zeros([4, 8], f16)");
  REQUIRE(e->kind == ExprKind::Full);
  CHECK(e->dtype == Scalar::F16);
  CHECK(e->args.size() == 3);
  CHECK_FALSE(e->args[2]->weak);
  CHECK(e->args[2]->dtype == Scalar::F16);
  CHECK(reprint_expr("full([4], 2.5, f32)") == "full([4], 2.5, f32)");
  CHECK(reprint_expr("full([4], 0, i32)") == "zeros([4], i32)");
  CHECK(reprint_expr("zeros([2, 2], dtype=f32)") == "zeros([2, 2], f32)");
  CHECK(expr_of("x.to(f16)")->kind == ExprKind::Cast);
  CHECK(expr_of("sum(x, axis=1)")->axis == 1);
  CHECK(expr_of("max(x, -1)")->axis == -1);
  CHECK(expr_of("minimum(a, b)")->bop == BinOp::Min);
  CHECK(expr_of("cdiv(a, b)")->bop == BinOp::Cdiv);
  CHECK(expr_of("sigmoid(a)")->uop == UnOp::Sigmoid);
  CHECK(reprint_expr("dot(a, b, acc=c)") == "dot(a, b, c)");
  CHECK(reprint_expr("where(c, a, -b)") == "where(c, a, -b)");
  CHECK(reprint_expr("reshape(trans(x), [4, 2])") == "reshape(trans(x), [4, 2])");
  CHECK(reprint_expr("broadcast_to(x, [4, 2])") == "broadcast_to(x, [4, 2])");
  CHECK(reprint_expr("program_id(axis=1) + num_programs(0)") == "program_id(1) + num_programs(0)");
}

TEST_CASE("statements: aug-assign, swizzle2d, else-if, comments, for") {
  Module m = body(
      "  # a comment\n"
      "  acc = zeros([B], f32)   # trailing comment\n"
      "  acc += 1.0\n"
      "  i, j = swizzle2d(program_id(0), 0, 4, 4, 2)\n"
      "  for k in range(4) {\n"
      "    acc *= 2.0\n"
      "  }\n"
      "  if i == 0 {\n"
      "    return\n"
      "  }\n"
      "  else if i == 1 {\n"
      "    print(\"one\", i)\n"
      "  } else {\n"
      "    assert(i > 1, \"big\")\n"
      "  }\n");
  const Kernel& k = m.kernels[0];
  REQUIRE(k.body.size() == 5);
  const Stmt& aug = *k.body[1];
  REQUIRE(aug.aug.has_value());
  CHECK(*aug.aug == BinOp::Add);
  CHECK(aug.args[0]->kind == ExprKind::Binary);
  CHECK(aug.args[0]->args[0]->name == "acc");
  CHECK(k.body[2]->targets == std::vector<std::string>{"i", "j"});
  CHECK(k.body[2]->args[0]->kind == ExprKind::Swizzle2d);
  const Stmt& loop = *k.body[3];
  CHECK(loop.kind == StmtKind::For);
  CHECK(loop.args[0]->ival == 0);
  CHECK(loop.args[2]->ival == 1);
  const Stmt& cond = *k.body[4];
  REQUIRE(cond.orelse.size() == 1);
  CHECK(cond.orelse[0]->kind == StmtKind::If);
  CHECK(cond.orelse[0]->orelse[0]->kind == StmtKind::Assert);
  CHECK(cond.orelse[0]->body[0]->text == "one");
  CHECK_NOTHROW(verify_module(m, bind_params(m, {})));
  std::string printed = print_module(m);
  CHECK(printed.find("  acc += 1.0\n") != std::string::npos);
  CHECK(printed.find("  i, j = swizzle2d(program_id(0), 0, 4, 4, 2)\n") != std::string::npos);
  CHECK(printed.find("  } else if i == 1 {\n") != std::string::npos);
  CHECK(printed.find("  for k in range(0, 4) {\n") != std::string::npos);
  CHECK(printed.find("grid(cdiv(n, B)) num_warps(4) num_stages(3) {") != std::string::npos);
}

TEST_CASE("locations point at the first token; binary ops at the operator") {
  Module m = body("  y = load(x + 1)\n");
  const Stmt& s = *m.kernels[0].body[0];
  CHECK(s.loc.line == 2);
  CHECK(s.loc.col == 3);
  CHECK(s.args[0]->loc.col == 7);
  CHECK(s.args[0]->args[0]->loc.col == 14);
  CHECK(s.args[0]->args[0]->args[0]->loc.col == 12);
  CHECK(m.kernels[0].params[1].loc.col == 26);
  CHECK(m.kernels[0].params[1].io == BufIO::Out);
}

TEST_CASE("parameters: qualifiers, scalars, constexpr, defaults, multiple kernels") {
  Module m = parse_text(
      "kernel a(inout p: *f16[n, 4], scratch s: *i32[n], n: i64 = 8, c: constexpr, f: f32 = 0.5)\n"
      "    grid(1, 2) num_warps(8) num_stages(2) {\n}\n"
      "kernel b(p: *f16[n, 4]) grid(n) {\n  return\n}\n");
  REQUIRE(m.kernels.size() == 2);
  const Kernel& a = m.kernels[0];
  CHECK(a.params[0].io == BufIO::InOut);
  CHECK(a.params[0].shape.size() == 2);
  CHECK(a.params[1].io == BufIO::Scratch);
  CHECK(a.params[2].dtype == Scalar::I64);
  CHECK(a.params[3].kind == ParamKind::Constexpr);
  CHECK(a.params[3].init == nullptr);
  CHECK(a.num_warps == 8);
  CHECK(a.num_stages == 2);
  CHECK(a.grid.size() == 2);
}

TEST_CASE("syntax errors point at the offending token") {
  std::string e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = load(x + 1\n}\n", "t1.tile");
  CHECK(e.find("t1.tile:3:1: error: expected ')' after arguments") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = lod(x)\n}\n", "t2.tile");
  CHECK(e.find("t2.tile:2:7: error: unknown function 'lod' (did you mean 'load'?)") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = where(x, 1)\n}\n", "t3.tile");
  CHECK(e.find("t3.tile:2:7: error: where() is missing argument 'y'") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = exp(x, 1)\n}\n", "t4.tile");
  CHECK(e.find("t4.tile:2:14: error: exp() takes 1 argument, got 2") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n}\nkernel k(x: *f32[4]) grid(1) {\n}\n", "t5.tile");
  CHECK(e.find("t5.tile:3:8: error: kernel 'k' is defined twice") == 0);
  e = error_of("kernel k(x: *f8[4]) grid(1) {\n}\n", "t6.tile");
  CHECK(e.find("t6.tile:1:14: error: unknown type 'f8'") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  print(\"abc)\n}\n", "t7.tile");
  CHECK(e.find("t7.tile:2:9: error: unterminated string") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = 1 $ 2\n}\n", "t8.tile");
  CHECK(e.find("t8.tile:2:9: error: unexpected character '$'") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = a < b < c\n}\n", "t9.tile");
  CHECK(e.find("comparisons cannot be chained") != std::string::npos);
  e = error_of("kernel k(x: *f32[4]) {\n}\n", "t10.tile");
  CHECK(e.find("t10.tile:1:22: error: kernel 'k' needs a grid") == 0);
  e = error_of("kernel k(x: *f32[4]) grid(1) {\n  y = x[1]\n}\n", "t11.tile");
  CHECK(e.find("t11.tile:2:9: error: only x[:, None]-style subscripts") == 0);
}

TEST_CASE("parse_tile_expr reads one expression") {
  ExprP e = expr_of("pid0 > 1 && n != 2\n");
  CHECK(e->bop == BinOp::LAnd);
  CHECK_THROWS_WITH_AS(expr_of("pid0 > 1 )"), doctest::Contains("unexpected ')' after the expression"), UserError);
  CHECK_THROWS_AS(expr_of(""), UserError);
}

TEST_CASE("pathological nesting is an error, not a crash") {
  std::string head = "kernel k(x: *f32[4]) grid(1) {\n  y = ";
  CHECK(error_of(head + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n}\n").find("nested too deeply") != std::string::npos);
  std::string chain = "1";
  for (int n = 0; n < 3000; ++n) chain += " + 1";
  CHECK(error_of(head + chain + "\n}\n").find("too deeply nested") != std::string::npos);
  CHECK(error_of(head + std::string(3000, '-') + "1\n}\n").find("nested too deeply") != std::string::npos);
  std::string blocks = "kernel k(x: *f32[4]) grid(1) {\n";
  for (int n = 0; n < 1000; ++n) blocks += "if 1 {\n";
  CHECK(error_of(blocks).find("nested too deeply") != std::string::npos);
}
