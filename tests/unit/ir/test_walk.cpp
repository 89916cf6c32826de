// Unit tests of the IR walkers (ir/Walk.h) and the analyses built on them (ir/Analysis.h): pointer
// provenance, the buffers a kernel reads and writes with their bytes, and difftest's store note.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "difftest/Difftest.h"
#include "ir/Analysis.h"
#include "ir/Printer.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"
#include "ir/Walk.h"

using namespace dtsim;

namespace {

// The test's own count of the nodes under e (args only; fn too when asked).
int count_nodes(const ExprP& e, bool fn) {
  if (!e) return 0;
  int n = 1;
  for (const ExprP& a : e->args) n += count_nodes(a, fn);
  if (fn && e->fn) n += count_nodes(e->fn, fn);
  return n;
}

Module verified(const std::string& text) {
  Module m = parse_tile(Sources::add("<walk>", text));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  return m;
}

Module matmul(Bindings& b) {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/examples/matmul.tile");
  b = bind_params(m, {});
  verify_module(m, b);
  return m;
}

}  // namespace

TEST_CASE("for_each_expr visits every node once, in pre-order, and the combine function only when asked") {
  // maximum(x, y + 1) * reduce(x2, combine (a, b) -> a + b): distinct nodes, so visits = nodes.
  ExprP x = make_var("x"), y = make_var("y"), one = make_const_int(1);
  ExprP sum = make_binary(BinOp::Add, y, one);
  ExprP mx = make_binary(BinOp::Max, x, sum);
  ExprP x2 = make_var("x2");
  ExprP red = make_reduce(RedOp::Fn, x2, 0);
  red->fn = make_binary(BinOp::Add, make_combine_arg(0), make_combine_arg(1));
  ExprP root = make_binary(BinOp::Mul, mx, red);

  std::vector<const Expr*> seen;
  for_each_expr(root, [&](const Expr& e) { seen.push_back(&e); });
  CHECK(static_cast<int>(seen.size()) == count_nodes(root, false));
  // pre-order: the node, then its args left to right
  std::vector<const Expr*> want = {root.get(), mx.get(), x.get(), sum.get(), y.get(), one.get(), red.get(), x2.get()};
  CHECK(seen == want);

  int with_fn = 0, combine_args = 0;
  for_each_expr(root, [&](const Expr& e) {
    ++with_fn;
    if (e.kind == ExprKind::CombineArg) ++combine_args;
  }, WalkFn::Enter);
  CHECK(with_fn == count_nodes(root, true));
  CHECK(with_fn == 11);  // + x2, the fn's add and its two CombineArgs
  CHECK(combine_args == 2);

  // any_expr stops at the first hit
  int visited = 0;
  CHECK(any_expr(root, [&](const Expr& e) {
    ++visited;
    return e.kind == ExprKind::Var && e.name == "x";
  }));
  CHECK(visited == 3);
  CHECK_FALSE(any_expr(root, [](const Expr& e) { return e.kind == ExprKind::CombineArg; }));
  CHECK(any_expr(root, [](const Expr& e) { return e.kind == ExprKind::CombineArg; }, WalkFn::Enter));
}

TEST_CASE("for_each_stmt and for_each_expr cover every statement and expression of a kernel") {
  Module m = verified(
      "kernel k(x: *f32[64], out z: *f32[64], n: i32 = 64) grid(1) {\n"
      "  r = arange(0, 64)\n"
      "  p = x + r\n"
      "  for i in range(0, 2) {\n"
      "    if i == 0 {\n"
      "      store(z + r, load(p, mask=r < n))\n"
      "    } else {\n"
      "      store(z + r, load(p) + 1.0)\n"
      "      return\n"
      "    }\n"
      "  }\n"
      "}\n");
  const Kernel& k = m.kernels[0];
  // statements in pre-order: the verifier's numbering (Kernel::stmts) is pre-order too
  std::vector<const Stmt*> stmts;
  for_each_stmt(k, [&](const Stmt& s) { stmts.push_back(&s); });
  REQUIRE(stmts.size() == k.stmts.size());
  for (size_t i = 0; i < stmts.size(); ++i) CHECK(stmts[i] == k.stmts[i]);
  CHECK(stmts.size() == 7u);  // r, p, for, if, store, store, return

  int nodes = 0, want = 0;
  for (const Stmt* s : k.stmts)
    for (const ExprP& a : s->args) want += count_nodes(a, false);
  for_each_expr(k, [&](const Expr&) { ++nodes; });
  CHECK(nodes == want);
  std::set<const Expr*> distinct;
  for_each_expr(k, [&](const Expr& e) { distinct.insert(&e); });
  CHECK(static_cast<int>(distinct.size()) == nodes);  // each node once (this kernel shares none)

  int loads = 0;
  for_each_expr(k.body, [&](const Expr& e) { loads += e.kind == ExprKind::Load; });
  CHECK(loads == 2);
}

TEST_CASE("rewrite_expr rewrites bottom-up, copies only the changed spine and leaves the input alone") {
  ExprP x = make_var("x"), y = make_var("y");
  ExprP ym = make_binary(BinOp::Mul, y, make_const_int(2));
  ExprP root = make_binary(BinOp::Add, x, make_binary(BinOp::Sub, ym, x));
  std::string before = print_expr(root);
  std::vector<std::string> order;
  ExprP r = rewrite_expr(root, [&](const ExprP& e) -> ExprP {
    order.push_back(expr_kind_name(e->kind));
    if (e->kind == ExprKind::Var && e->name == "x") return make_const_int(3);
    return nullptr;
  });
  CHECK(print_expr(r) == "3 + (y * 2 - 3)");
  CHECK(print_expr(root) == before);            // the input is unchanged
  CHECK(r != root);                             // a changed node is a copy
  CHECK(r->args[1]->args[0] == ym);             // an unchanged subtree is shared
  // children before their parent
  CHECK(order == std::vector<std::string>{"Var", "Var", "Const", "Binary", "Var", "Binary", "Binary"});
  // nothing to change: the same tree back
  CHECK(rewrite_expr(root, [](const ExprP&) -> ExprP { return nullptr; }) == root);
  // the combine function only when asked
  ExprP red = make_reduce(RedOp::Fn, make_var("v"), 0);
  red->fn = make_binary(BinOp::Add, make_combine_arg(0), make_combine_arg(1));
  auto swap = [](const ExprP& e) -> ExprP { return e->kind == ExprKind::CombineArg ? make_combine_arg(1 - e->axis) : nullptr; };
  CHECK(rewrite_expr(red, swap) == red);
  ExprP sw = rewrite_expr(red, swap, WalkFn::Enter);
  CHECK(sw->fn->args[0]->axis == 1);
  CHECK(red->fn->args[0]->axis == 0);
}

TEST_CASE("pointer provenance and buffer access of examples/matmul.tile: a and b read, c written") {
  Bindings b;
  Module m = matmul(b);
  const Kernel& k = m.kernels[0];
  PointerProvenance prov(k);
  auto sources_of_var = [&](const std::string& name) {
    for (size_t s = 0; s < k.slot_names.size(); ++s)
      if (k.slot_names[s] == name) return prov.slot_sources(static_cast<int>(s)).list();
    FAIL("no slot " << name);
    return std::vector<size_t>{};
  };
  CHECK(sources_of_var("a_ptrs") == std::vector<size_t>{0});  // a, through `a_ptrs += BK * sak` too
  CHECK(sources_of_var("b_ptrs") == std::vector<size_t>{1});
  CHECK(sources_of_var("acc").empty());  // not a pointer

  BufferAccess a = buffer_access(k);
  CHECK(a.loaded.list() == std::vector<size_t>{0, 1});
  CHECK(a.stored.list() == std::vector<size_t>{2});
  CHECK(a.atomic.empty());

  std::vector<BufferUse> uses = kernel_buffers(k, b);
  REQUIRE(uses.size() == 3u);
  CHECK(uses[0].name == "a");
  CHECK((uses[0].read && !uses[0].written));
  CHECK(uses[0].bytes == 4 * 100 * 90);  // f32[M, K] at M=100, K=90
  CHECK(uses[1].name == "b");
  CHECK((uses[1].read && !uses[1].written));
  CHECK(uses[1].bytes == 4 * 90 * 70);   // f32[K, N]
  CHECK(uses[2].name == "c");
  CHECK((!uses[2].read && uses[2].written));
  CHECK(uses[2].bytes == 4 * 100 * 70);  // f32[M, N]
}

TEST_CASE("provenance follows where(), loop-carried updates and atomics; a loaded value points nowhere known") {
  Module m = verified(
      "kernel k(x: *f32[64], y: *f32[64], out h: *f32[8], idx: *i32[64], out z: *f32[64], s: i32 = 1) grid(1) {\n"
      "  r = arange(0, 64)\n"
      "  p = where(s > 0, x + r, y + r)\n"
      "  q = h\n"
      "  for i in range(0, 2) {\n"
      "    v = load(p)\n"
      "    old = atomic_add(q + load(idx + r) % 8, v)\n"
      "    q += 0\n"
      "  }\n"
      "  store(z + r, load(x + r))\n"
      "}\n");
  const Kernel& k = m.kernels[0];
  BufferAccess a = buffer_access(k);
  CHECK(a.loaded.list() == std::vector<size_t>{0, 1, 3});  // x and y via where(), idx, x
  CHECK(a.atomic.list() == std::vector<size_t>{2});        // h via q (loop-carried)
  CHECK(a.stored.list() == std::vector<size_t>{4});
  CHECK(a.reads().list() == std::vector<size_t>{0, 1, 2, 3});
  CHECK(a.writes().list() == std::vector<size_t>{2, 4});
  std::vector<BufferUse> uses = kernel_buffers(k, bind_params(m, {}));
  REQUIRE(uses.size() == 5u);
  CHECK((uses[2].name == "h" && uses[2].read && uses[2].written && uses[2].bytes == 32));
}

TEST_CASE("difftest's store note finds a store through a pointer variable") {
  Module m = verified(
      "kernel k(x: *f32[64], out z: *f32[64], out w: *f32[64]) grid(1) {\n"
      "  r = arange(0, 64)\n"
      "  store(w + r, load(x + r))\n"
      "  z_ptrs = z + r\n"
      "  store(z_ptrs, load(x + r))\n"
      "}\n");
  std::string note = store_site(m, "z");
  CHECK(note.find("<walk>:5:") == 0);
  CHECK(note.find("note: 'z' is stored here") != std::string::npos);
  CHECK(store_site(m, "w").find("<walk>:3:") == 0);
  CHECK(store_site(m, "x").empty());
}
