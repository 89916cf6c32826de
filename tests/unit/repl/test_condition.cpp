// Unit tests of the debugger's condition parser: positional pid form, expression form, name checks,
// every error with its caret position, expression splitting and FILE:LINE specs.
#include <doctest/doctest.h>

#include "ir/Diag.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"
#include "repl/Condition.h"

using namespace dtsim;

namespace {

const std::vector<std::string> kNames = {"pid0", "pid1", "pid2", "pid", "BLOCK", "mask", "n", "offs", "x"};

// The rendered diagnostic of parsing `text` as a condition ("" when it parses).
std::string cond_error(const std::string& text) {
  try {
    parse_condition(text, "<break-if>", kNames);
  } catch (const UserError& e) {
    return e.render();
  }
  return "";
}

// The 1-based column of the caret in a rendered diagnostic (0 when absent).
int caret_col(const std::string& diag) {
  size_t l2 = diag.find('\n', diag.find('\n') + 1);
  std::string caret_line = diag.substr(l2 + 1);
  size_t pos = caret_line.find('^');
  return pos == std::string::npos ? 0 : static_cast<int>(pos) - 2 + 1;  // lines are indented by 2
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

void check_pid_cmp(const ExprP& e, int axis, BinOp op, int64_t value) {
  REQUIRE(e);
  REQUIRE(e->kind == ExprKind::Binary);
  CHECK(e->bop == op);
  REQUIRE(e->args[0]->kind == ExprKind::ProgramId);
  CHECK(e->args[0]->axis == axis);
  REQUIRE(e->args[1]->kind == ExprKind::Const);
  CHECK(e->args[1]->ival == value);
}

}  // namespace

TEST_CASE("positional form: '=0,>1' is pid0 == 0 && pid1 > 1") {
  ExprP e = parse_condition("=0,>1", "<break-if>", kNames);
  REQUIRE(e->kind == ExprKind::Binary);
  CHECK(e->bop == BinOp::LAnd);
  check_pid_cmp(e->args[0], 0, BinOp::Eq, 0);
  check_pid_cmp(e->args[1], 1, BinOp::Gt, 1);
}

TEST_CASE("positional form: empty fields skip an axis") {
  check_pid_cmp(parse_condition(",>1", "<break-if>", kNames), 1, BinOp::Gt, 1);
  check_pid_cmp(parse_condition(",,<=3", "<break-if>", kNames), 2, BinOp::Le, 3);
  check_pid_cmp(parse_condition(" , != 2 ", "<break-if>", kNames), 1, BinOp::Ne, 2);
}

TEST_CASE("positional form: every operator") {
  check_pid_cmp(parse_condition("=4", "<b>", kNames), 0, BinOp::Eq, 4);
  check_pid_cmp(parse_condition("==4", "<b>", kNames), 0, BinOp::Eq, 4);
  check_pid_cmp(parse_condition("!=4", "<b>", kNames), 0, BinOp::Ne, 4);
  check_pid_cmp(parse_condition("<4", "<b>", kNames), 0, BinOp::Lt, 4);
  check_pid_cmp(parse_condition("<=4", "<b>", kNames), 0, BinOp::Le, 4);
  check_pid_cmp(parse_condition(">4", "<b>", kNames), 0, BinOp::Gt, 4);
  check_pid_cmp(parse_condition(">=4", "<b>", kNames), 0, BinOp::Ge, 4);
  check_pid_cmp(parse_condition(">-1", "<b>", kNames), 0, BinOp::Gt, -1);
}

TEST_CASE("positional form: three fields and the always-true empty condition") {
  ExprP e = parse_condition(">1,=0,<2", "<break-if>", kNames);
  REQUIRE(e->bop == BinOp::LAnd);
  check_pid_cmp(e->args[1], 2, BinOp::Lt, 2);
  REQUIRE(e->args[0]->bop == BinOp::LAnd);
  check_pid_cmp(e->args[0]->args[0], 0, BinOp::Gt, 1);
  check_pid_cmp(e->args[0]->args[1], 1, BinOp::Eq, 0);
  ExprP t = parse_condition("  ", "<break-if>", kNames);
  REQUIRE(t->kind == ExprKind::Const);
  CHECK(t->ival == 1);
}

TEST_CASE("positional form errors point at the offending character") {
  std::string d = cond_error("=x");
  CHECK(first_line(d) == "<break-if>:1:2: error: expected an integer after '='");
  CHECK(caret_col(d) == 2);

  d = cond_error("=0,>");
  CHECK(first_line(d) == "<break-if>:1:5: error: expected an integer after '>'");
  CHECK(caret_col(d) == 5);

  d = cond_error("=0 7");
  CHECK(first_line(d) == "<break-if>:1:4: error: unexpected '7' in pid condition");
  CHECK(caret_col(d) == 4);

  d = cond_error("=0,~1");
  CHECK(first_line(d) == "<break-if>:1:4: error: expected one of = == != < <= > >= in pid condition (e.g. '=0,>1')");
  CHECK(caret_col(d) == 4);

  d = cond_error("=0,=1,=2,=3");
  CHECK(first_line(d) == "<break-if>:1:9: error: a pid condition has at most 3 fields (pid0, pid1, pid2)");
  CHECK(caret_col(d) == 9);
}

TEST_CASE("expression form parses with the pid names") {
  ExprP e = parse_condition("pid0>1", "<break-if>", kNames);
  REQUIRE(e->kind == ExprKind::Binary);
  CHECK(e->bop == BinOp::Gt);
  CHECK(e->args[0]->kind == ExprKind::Var);
  CHECK(e->args[0]->name == "pid0");
  ExprP f = parse_condition("(pid0 == 1 || pid1 != 0) && !(n < 4)", "<break-if>", kNames);
  CHECK(f->bop == BinOp::LAnd);
  CHECK(expr_names(f) == std::set<std::string>{"n", "pid0", "pid1"});
}

TEST_CASE("expression form: unknown name lists the known names, caret under it") {
  std::string d = cond_error("pid0 > 1 && pidd == 2");
  CHECK(first_line(d) ==
        "<break-if>:1:13: error: 'pidd' is not defined (names: pid0, pid1, pid2, pid, BLOCK, mask, n, offs, x)");
  CHECK(caret_col(d) == 13);
  CHECK(d.find("\n  pid0 > 1 && pidd == 2\n") != std::string::npos);
}

TEST_CASE("expression form: syntax errors are located in the condition text") {
  std::string d = cond_error("pid0 > ");
  CHECK(first_line(d).rfind("<break-if>:1:", 0) == 0);
  CHECK(d.find("error:") != std::string::npos);
  CHECK(caret_col(d) >= 6);
  d = cond_error("pid0 >> > 1");
  CHECK(first_line(d).rfind("<break-if>:1:", 0) == 0);
  d = cond_error("(pid0 == 1");
  CHECK(first_line(d).rfind("<break-if>:1:", 0) == 0);
}

TEST_CASE("debug expressions check names too") {
  ExprP e = parse_debug_expr("offs + 1", "<print-if>", kNames);
  CHECK(e->kind == ExprKind::Binary);
  CHECK_THROWS_WITH_AS(parse_debug_expr("ofs", "<print-if>", kNames), doctest::Contains("'ofs' is not defined"), UserError);
}

TEST_CASE("known names: pid names first, then every kernel's variables and params") {
  int f = Sources::add("k.tile",
                       "kernel k(x: *f32[n], out z: *f32[n], n: i32 = 8, BLOCK: constexpr = 4) grid(cdiv(n, BLOCK)) {\n"
                       "  offs = program_id(0) * BLOCK + arange(0, BLOCK)\n"
                       "  mask = offs < n\n"
                       "  store(z + offs, load(x + offs, mask), mask)\n"
                       "}\n");
  Module m = parse_tile(f);
  verify_module(m, bind_params(m, {}));
  std::vector<std::string> names = known_names(m);
  REQUIRE(names.size() >= 4);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 4) == std::vector<std::string>{"pid0", "pid1", "pid2", "pid"});
  for (const char* n : {"BLOCK", "mask", "n", "offs", "x", "z"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());

  SUBCASE("statements at a line, and the next line when none is there") {
    int resolved = 0;
    auto at3 = stmts_at_line(m, "k.tile", 3, &resolved);
    CHECK(resolved == 3);
    REQUIRE(at3.size() == 1);
    CHECK(at3[0]->kind == StmtKind::Assign);
    auto at1 = stmts_at_line(m, "", 1, &resolved);
    CHECK(resolved == 2);
    CHECK_THROWS_WITH_AS(stmts_at_line(m, "k.tile", 9, &resolved), doctest::Contains("no statement on or after line 9"),
                         UserError);
    CHECK_THROWS_WITH_AS(stmts_at_line(m, "other.tile", 2, &resolved), doctest::Contains("other.tile"), UserError);
  }
}

TEST_CASE("condition type check against the module") {
  int f = Sources::add("t.tile",
                       "kernel t(x: *f32[n], n: i32 = 8) grid(2) {\n"
                       "  offs = arange(0, 4)\n"
                       "  v = load(x + offs)\n"
                       "}\n");
  Module m = parse_tile(f);
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  std::vector<std::string> names = known_names(m);
  BoundExpr good(parse_condition("pid0 == 1 && n > 2", "<break-if>", names), "");
  CHECK_NOTHROW(good.check_types(m, b));
  BoundExpr bad(parse_condition("offs + arange(0, 8) > 0", "<break-if>", names), "");
  CHECK_THROWS_AS(bad.check_types(m, b), UserError);
}

TEST_CASE("split_top_level keeps commas inside calls and strings") {
  CHECK(split_top_level("offs, mask, x") == std::vector<std::string>{"offs", "mask", "x"});
  CHECK(split_top_level(" load(x + offs, mask) , where(m, a, b)[:, None] ") ==
        std::vector<std::string>{"load(x + offs, mask)", "where(m, a, b)[:, None]"});
  CHECK(split_top_level("  ,  ").empty());
  CHECK(split_top_level("x, 'a, b', \"c, 'd\"") == std::vector<std::string>{"x", "'a, b'", "\"c, 'd\""});
}

TEST_CASE("FILE:LINE [if COND] specs") {
  LineSpec s = parse_line_spec("examples/add.tile:5 if pid0 == 1", "--break-at");
  CHECK(s.file == "examples/add.tile");
  CHECK(s.line == 5);
  CHECK(s.cond == "pid0 == 1");
  s = parse_line_spec("12", "break");
  CHECK(s.file.empty());
  CHECK(s.line == 12);
  CHECK(s.cond.empty());
  s = parse_line_spec("k.dt:3 if(pid1>0)", "--break-at");
  CHECK(s.cond == "(pid1>0)");
  CHECK_THROWS_WITH_AS(parse_line_spec("add.tile:x", "--break-at"), doctest::Contains("expected FILE:LINE"), UserError);
  CHECK_THROWS_WITH_AS(parse_line_spec("add.tile:0", "--break-at"), doctest::Contains("line number >= 1"), UserError);
  CHECK_THROWS_WITH_AS(parse_line_spec("add.tile:4 iff x", "--break-at"), doctest::Contains("expected FILE:LINE [if COND]"),
                       UserError);
  CHECK_THROWS_WITH_AS(parse_line_spec("add.tile:4 if ", "--break-at"), doctest::Contains("missing condition"), UserError);
}
