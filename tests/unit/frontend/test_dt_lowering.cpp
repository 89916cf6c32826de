// Targeted checks of the DT lowering: the slides' program-id decoding, default schedule,
// tensorize(v:0), locations (loc = algorithm line, loc2 = schedule line), parameters and dtypes.
#include <doctest/doctest.h>

#include <cmath>

#include "dt_harness.h"
#include "ir/Printer.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {
const Stmt* find_stmt(const std::vector<StmtP>& body, StmtKind k) {
  for (auto& s : body) {
    if (s->kind == k) return s.get();
    if (const Stmt* r = find_stmt(s->body, k)) return r;
  }
  return nullptr;
}
}  // namespace

TEST_CASE("default pid order: the first output dim varies fastest (slides' add_out)") {
  auto p = parse_text("add.dt", "Func o; In A, B; SIn alpha = 2; Var x = 5, y = 300;\n"
                                "o[x, y] = alpha * (A[x, y] + B[x, y]);\n"
                                "o.block(x:1, y:256);\no.tensorize(y:64);\no.compile();\n");
  std::string t = print_module(lower_dt(*p));
  CHECK(t.find("y_pid = pid // x_BLOCK_COUNT % y_BLOCK_COUNT") != std::string::npos);
  CHECK(t.find("x_pid = pid % x_BLOCK_COUNT") != std::string::npos);
  CHECK(t.find("for y_iter in range(0, 256, 64)") != std::string::npos);
  CHECK(t.find("alpha: f32 = 2.0") != std::string::npos);
  CHECK(t.find("grid(cdiv(y_SIZE, 256) * cdiv(x_SIZE, 1))") != std::string::npos);
  CHECK(run_and_compare(*p, 3, 1e-5).empty());
}

TEST_CASE("map(y, x) makes x fastest; map with a split gives grouped ordering") {
  auto p = parse_text("map.dt", "Func o; In A; Var x = 20, y = 30;\no[x, y] = A[x, y] * 2;\n"
                                "o.block(x:4, y:8);\no.map(y:yi/2, x, yi);\no.compile();\n");
  std::string t = print_module(lower_dt(*p));
  CHECK(t.find("y_pid = pid // (x_BLOCK_COUNT * 2) % cdiv(y_BLOCK_COUNT, 2)") != std::string::npos);
  CHECK(t.find("x_pid = pid // 2 % x_BLOCK_COUNT") != std::string::npos);
  CHECK(t.find("yi_pid = pid % 2") != std::string::npos);
  CHECK(t.find("y_pid_ = y_pid * 2 + yi_pid") != std::string::npos);
  CHECK(run_and_compare(*p, 3, 1e-6).empty());
}

TEST_CASE("default schedule: one instance, scalar loops x outer, y inner, no masks") {
  auto p = parse_text("def.dt", "Func o; In A; Var x = 3, y = 5;\no[x, y] = exp(A[x, y]);\no.compile();\n");
  Module m = lower_dt(*p);
  std::string t = print_module(m);
  CHECK(t.find("grid(1)") != std::string::npos);
  CHECK(t.find("mask") == std::string::npos);
  size_t fx = t.find("for x_iter in range(0, x_SIZE)"), fy = t.find("for y_iter in range(0, y_SIZE)");
  CHECK(fx != std::string::npos);
  CHECK(fy > fx);
  CHECK(run_and_compare(*p, 3, 1e-6).empty());
}

TEST_CASE("tensorize(v:0) is the block when blocked, the whole dim otherwise") {
  auto p = parse_text("whole.dt", "Func o; In A; Var x = 12; RVar y = 50;\n"
                                  "o[x] = rmax(A[x, y], y);\no.block(x:4);\no.tensorize(x:0, y:0);\no.compile();\n");
  std::string t = print_module(lower_dt(*p));
  CHECK(t.find("x_arange = arange(0, 4)") != std::string::npos);
  CHECK(t.find("y_arange = arange(0, 64)") != std::string::npos);
  CHECK(t.find("for ") == std::string::npos);
  CHECK(t.find("assert(y_SIZE <= 64") != std::string::npos);
  CHECK(t.find("where(y_mask[None, :], A_tile, -inf)") != std::string::npos);
  CHECK(run_and_compare(*p, 3, 1e-6).empty());
  // smaller sizes through --arg stay correct; larger ones trip the assert instead of reading garbage
  CHECK(run_and_compare(*p, 3, 1e-6, {{"y_SIZE", "33"}}).empty());
  CHECK(run_and_compare(*p, 3, 1e-6, {{"y_SIZE", "65"}}).find("y_SIZE exceeds") != std::string::npos);
}

TEST_CASE("statements carry the algorithm line (loc) and the schedule line (loc2)") {
  auto p = parse_text("locs.dt", "Func o; In A; Var x = 100;\n"   // line 1
                                 "o[x] = A[x] + 1;\n"             // line 2
                                 "o.block(x:32);\n"               // line 3
                                 "o.tensorize(x:16);\n"           // line 4
                                 "o.compile();\n");
  Module m = lower_dt(*p);
  const Stmt* st = find_stmt(m.kernels[0].body, StmtKind::Store);
  REQUIRE(st);
  CHECK(st->loc.line == 2);
  CHECK(st->loc2.line == 4);
  const Stmt* loop = find_stmt(m.kernels[0].body, StmtKind::For);
  REQUIRE(loop);
  CHECK(loop->loc.line == 2);
  CHECK(loop->loc2.line == 4);
  CHECK(m.kernels[0].body[0]->loc2.line == 3);  // x_BLOCK_COUNT
}

TEST_CASE("element types: f16 inputs and outputs, rdot accumulates in f32, i32 Funcs") {
  auto p = parse_text("types.dt", "Func o: f16, c: i32; In A: f16, B: bf16, I: i32; Var x = 20, y = 24; RVar k = 40;\n"
                                  "o[x, y] = rdot(A[x, k], B[k, y], k);\nc[x] = I[x] * 3 + 1;\n"
                                  "o.block(x:16, y:8);\no.tensorize(x:16, y:8, k:16);\no.compile();\nc.compile();\n");
  Module m = lower_dt(*p);
  std::string t = print_module(m);
  CHECK(t.find("A: *f16[x_SIZE, k_SIZE]") != std::string::npos);
  CHECK(t.find("out o: *f16[x_SIZE, y_SIZE]") != std::string::npos);
  CHECK(t.find("zeros([16, 8], f32)") != std::string::npos);
  CHECK(t.find("out c: *i32[x_SIZE]") != std::string::npos);
  CHECK(m.kernels.size() == 2);
  CHECK(run_and_compare(*p, 9, 2e-2).empty());
}

TEST_CASE("a Func neither fused nor compiled is materialized by its own kernel, launched first") {
  auto p = parse_dt_file(std::string(DTSIM_SOURCE_DIR) + "/examples/rmsnorm_materialized.dt");
  Module m = lower_dt(*p);
  REQUIRE(m.kernels.size() == 2);
  CHECK(m.kernels[0].name == "ms_kernel");
  CHECK(m.kernels[1].name == "rms_kernel");
  CHECK(m.kernels[0].find_param("ms")->io == BufIO::Scratch);
  CHECK(m.kernels[1].find_param("ms")->io == BufIO::Scratch);
  CHECK(lower_dt(*p, "rms_kernel").kernels.size() == 2);
  CHECK_THROWS_AS(lower_dt(*p, "nope"), UserError);
}

TEST_CASE("the reference evaluator is schedule-free and exact on a small case") {
  auto p = parse_text("ref.dt", "Func o; In A, B; Var x = 2, y = 2; RVar k = 3;\no[x, y] = rdot(A[x, k], B[k, y], k) + len(k);\no.compile();\n");
  Bindings b;
  std::map<std::string, std::vector<double>> in = {{"A", {1, 2, 3, 4, 5, 6}}, {"B", {1, 0, 0, 1, 1, 1}}};
  auto out = eval_dt_reference(*p, b, in);
  REQUIRE(out.count("o"));
  CHECK(out["o"] == std::vector<double>{1 + 3 + 3, 2 + 3 + 3, 4 + 6 + 3, 5 + 6 + 3});
  b["k_SIZE"] = ScalarValue::of_int(2);
  CHECK(eval_dt_reference(*p, b, in)["o"][0] == 1 + 2);
  // An input too short for the reads of a reduction is an error, not a read past its end.
  b.clear();
  in["B"].pop_back();
  CHECK_THROWS_AS(eval_dt_reference(*p, b, in), UserError);
}

TEST_CASE("the reference's reductions of plain reads: transposed and Func operands, extrema, NaN") {
  auto p = parse_text("red.dt",
                      "Func o, t, mx, mn, sm; In A, B; Var x = 2, y = 3; RVar k = 4;\n"
                      "t[x, k] = A[x, k] * 2;\n"
                      "o[x, y] = rdot(t[x, k], B[y, k], k);\n"
                      "mx[x] = rmax(A[x, k], k);\nmn[x] = rmin(A[x, k], k);\nsm[x] = rsum(A[x, k], k);\n"
                      "o.compile(); mx.compile(); mn.compile(); sm.compile();\n");
  Bindings b;
  std::vector<double> a = {1, -2, 3, 0.5, 4, NAN, -1, 2};
  std::vector<double> bb = {1, 2, 3, 4, 0, 1, 0, 1, -1, 0, 2, 0};
  auto out = eval_dt_reference(*p, b, {{"A", a}, {"B", bb}});
  // Row 0 of t is 2, -4, 6, 1; row 1 holds NaN.
  CHECK(out["o"][0] == 2 - 8 + 18 + 4);
  CHECK(out["o"][1] == -4 + 1);
  CHECK(out["o"][2] == -2 + 12);
  CHECK(std::isnan(out["o"][3]));
  CHECK(out["mx"][0] == 3);
  CHECK(out["mn"][0] == -2);
  CHECK(out["sm"][0] == 2.5);
  CHECK(std::isnan(out["mx"][1]));
  CHECK(std::isnan(out["mn"][1]));
  CHECK(std::isnan(out["sm"][1]));
}

TEST_CASE("print_dt_ast shows every declaration, definition and schedule call with locations") {
  auto p = parse_text("ast.dt", "Func o; In A; SIn s = 3; Var x = 8;\no[x] = s * A[x];\no.block(x:4);\no.compile();\n");
  std::string a = print_dt_ast(*p);
  CHECK(a.find("Func o: f32 [x]  @1:6") != std::string::npos);
  CHECK(a.find("SIn s: f32 = 3") != std::string::npos);
  CHECK(a.find("Binary *") != std::string::npos);
  CHECK(a.find("Access A : f32  @2:12") != std::string::npos);
  CHECK(a.find("Schedule o.block(x:4);  @3:1") != std::string::npos);
}

TEST_CASE("several kernels per file: a compiled Func read by a later-compiled one is lowered first") {
  auto p = parse_text("multi.dt", "Func g, f, c; In A; Var x = 37; RVar y = 9;\n"
                                  "f[x, y] = A[x, y] * 2.0 + 1;\n"
                                  "g[x] = rsum(f[x, y], y);\n"
                                  "c[x] = 3;\n"
                                  "g.compile();\nf.block(x:8);\nf.compile();\nc.block(x:16);\nc.compile();\n");
  Module m = lower_dt(*p);
  REQUIRE(m.kernels.size() == 3);
  CHECK(m.kernels[0].name == "f_kernel");
  CHECK(m.kernels[1].name == "g_kernel");
  CHECK(m.kernels[1].find_param("f")->io == BufIO::Out);
  CHECK(run_and_compare(*p, 4, 1e-5).empty());
}
