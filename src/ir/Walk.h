// The shared walkers over the tile IR: a visitor of expressions and statements and an expression
// mutator, so that analyses and rewrites need not recurse over Expr::args / Stmt::body by hand.
//
// What a walk enters below each node is one table per node list (expr_children, stmt_children),
// generated from DT_FOR_EACH_EXPR / DT_FOR_EACH_STMT: every row needs its line in walk_table below,
// so a new node kind does not compile until someone says what a walk enters under it.
//
//   for_each_expr(e | stmts | kernel, f [, WalkFn::Enter])  f(const Expr&) on every expression, pre-order
//   any_expr(e | stmts, pred [, WalkFn::Enter])           whether pred holds for some expression (stops there)
//   for_each_stmt(stmts | kernel, f)                       f(const Stmt&) on every statement, pre-order
//   rewrite_expr(e, f [, WalkFn::Enter])                   a rewritten copy (children first, then f)
//
// Expressions are visited in pre-order: the node, then its args left to right (null "absent"
// operands skipped), then, only with WalkFn::Enter, a Reduce/Scan's combine function Expr::fn (or
// its components Expr::fns).
// Walks over statements take each statement's args, then its body, then its orelse; a kernel's
// walk is its body only (not the parameter shapes, defaults or grid). Shared subtrees are visited
// once per use.
#pragma once

#include <type_traits>
#include <vector>

#include "ir/IR.h"

namespace dtsim {

// Whether a walk enters a Reduce/Scan's combine function (Expr::fn: a scalar expression of
// CombineArg 0/1, not a value of the kernel; see IR.h).
enum class WalkFn : bool { Skip, Enter };

// What lies below a node, per kind.
enum class ExprChildren : uint8_t { None, Args, ArgsAndFn };
enum class StmtChildren : uint8_t { Args, ArgsBody, ArgsBodyOrelse, None };

namespace walk_table {
// One line per DT_FOR_EACH_EXPR row (IR.h's operand conventions).
inline constexpr ExprChildren Const = ExprChildren::None;
inline constexpr ExprChildren Var = ExprChildren::None;
inline constexpr ExprChildren ProgramId = ExprChildren::None;
inline constexpr ExprChildren NumPrograms = ExprChildren::None;
inline constexpr ExprChildren Arange = ExprChildren::Args;
inline constexpr ExprChildren Full = ExprChildren::Args;
inline constexpr ExprChildren Unary = ExprChildren::Args;
inline constexpr ExprChildren Binary = ExprChildren::Args;
inline constexpr ExprChildren Where = ExprChildren::Args;
inline constexpr ExprChildren Cast = ExprChildren::Args;
inline constexpr ExprChildren Bitcast = ExprChildren::Args;
inline constexpr ExprChildren ExpandDims = ExprChildren::Args;
inline constexpr ExprChildren Reshape = ExprChildren::Args;
inline constexpr ExprChildren Trans = ExprChildren::Args;
inline constexpr ExprChildren Broadcast = ExprChildren::Args;
inline constexpr ExprChildren Load = ExprChildren::Args;
inline constexpr ExprChildren Dot = ExprChildren::Args;
inline constexpr ExprChildren Reduce = ExprChildren::ArgsAndFn;
inline constexpr ExprChildren Scan = ExprChildren::ArgsAndFn;
inline constexpr ExprChildren Swizzle2d = ExprChildren::Args;
inline constexpr ExprChildren CombineArg = ExprChildren::None;
inline constexpr ExprChildren IntToPtr = ExprChildren::Args;
inline constexpr ExprChildren PtrToInt = ExprChildren::Args;
inline constexpr ExprChildren Machine = ExprChildren::None;
inline constexpr ExprChildren Gather = ExprChildren::Args;
inline constexpr ExprChildren Histogram = ExprChildren::Args;
// One line per DT_FOR_EACH_STMT row.
namespace stmt {
inline constexpr StmtChildren Assign = StmtChildren::Args;
inline constexpr StmtChildren Store = StmtChildren::Args;
inline constexpr StmtChildren For = StmtChildren::ArgsBody;
inline constexpr StmtChildren If = StmtChildren::ArgsBodyOrelse;
inline constexpr StmtChildren While = StmtChildren::ArgsBody;
inline constexpr StmtChildren Print = StmtChildren::Args;
inline constexpr StmtChildren Assert = StmtChildren::Args;
inline constexpr StmtChildren Atomic = StmtChildren::Args;
inline constexpr StmtChildren Return = StmtChildren::None;
}  // namespace stmt
}  // namespace walk_table

constexpr ExprChildren expr_children(ExprKind k) {
  switch (k) {
#define X(kind) \
  case ExprKind::kind: return walk_table::kind;
    DT_FOR_EACH_EXPR(X)
#undef X
  }
  return ExprChildren::Args;
}

constexpr StmtChildren stmt_children(StmtKind k) {
  switch (k) {
#define X(kind) \
  case StmtKind::kind: return walk_table::stmt::kind;
    DT_FOR_EACH_STMT(X)
#undef X
  }
  return StmtChildren::Args;
}

namespace walk_detail {
// The pre-order walk; `f` returns false to stop the whole walk (then this returns false too).
template <class F>
bool walk(const Expr& e, F& f, WalkFn fn) {
  if (!f(e)) return false;
  ExprChildren c = expr_children(e.kind);
  if (c == ExprChildren::None) return true;
  for (const ExprP& a : e.args)
    if (a && !walk(*a, f, fn)) return false;
  if (c == ExprChildren::ArgsAndFn && fn == WalkFn::Enter) {
    if (e.fn && !walk(*e.fn, f, fn)) return false;
    for (const auto& g : e.fns)
      if (!walk(*g, f, fn)) return false;
  }
  return true;
}

template <class F>
bool walk_stmts(const std::vector<StmtP>& body, F& f) {
  for (const StmtP& s : body) {
    if (!f(*s)) return false;
    StmtChildren c = stmt_children(s->kind);
    if ((c == StmtChildren::ArgsBody || c == StmtChildren::ArgsBodyOrelse) && !walk_stmts(s->body, f)) return false;
    if (c == StmtChildren::ArgsBodyOrelse && !walk_stmts(s->orelse, f)) return false;
  }
  return true;
}

// The expressions directly under a statement (its args; none for Return).
template <class F>
bool walk_stmt_exprs(const Stmt& s, F& f, WalkFn fn) {
  if (stmt_children(s.kind) == StmtChildren::None) return true;
  for (const ExprP& a : s.args)
    if (a && !walk(*a, f, fn)) return false;
  return true;
}
}  // namespace walk_detail

// f(const Stmt&) on every statement of `body` and the blocks nested in it, pre-order.
template <class F>
void for_each_stmt(const std::vector<StmtP>& body, F&& f) {
  auto g = [&](const Stmt& s) {
    f(s);
    return true;
  };
  walk_detail::walk_stmts(body, g);
}
template <class F>
void for_each_stmt(const Kernel& k, F&& f) {
  for_each_stmt(k.body, f);
}

// f(const Expr&) on every expression under `e` (e included; a null e visits nothing).
template <class F>
void for_each_expr(const ExprP& e, F&& f, WalkFn fn = WalkFn::Skip) {
  auto g = [&](const Expr& x) {
    f(x);
    return true;
  };
  if (e) walk_detail::walk(*e, g, fn);
}

template <class F>
void for_each_expr(const Expr& e, F&& f, WalkFn fn = WalkFn::Skip) {
  auto g = [&](const Expr& x) {
    f(x);
    return true;
  };
  walk_detail::walk(e, g, fn);
}

// f(const Expr&) on every expression of every statement of `body` (statements in pre-order).
template <class F>
void for_each_expr(const std::vector<StmtP>& body, F&& f, WalkFn fn = WalkFn::Skip) {
  auto g = [&](const Expr& x) {
    f(x);
    return true;
  };
  auto s = [&](const Stmt& st) { return walk_detail::walk_stmt_exprs(st, g, fn); };
  walk_detail::walk_stmts(body, s);
}
template <class F>
void for_each_expr(const Kernel& k, F&& f, WalkFn fn = WalkFn::Skip) {
  for_each_expr(k.body, f, fn);
}

// Whether pred(const Expr&) holds for some expression under `e` / in `body`; the walk stops at the
// first one.
template <class P>
bool any_expr(const ExprP& e, P&& pred, WalkFn fn = WalkFn::Skip) {
  auto g = [&](const Expr& x) { return !pred(x); };
  return e && !walk_detail::walk(*e, g, fn);
}
template <class P>
bool any_expr(const Expr& e, P&& pred, WalkFn fn = WalkFn::Skip) {
  auto g = [&](const Expr& x) { return !pred(x); };
  return !walk_detail::walk(e, g, fn);
}
template <class P>
bool any_expr(const std::vector<StmtP>& body, P&& pred, WalkFn fn = WalkFn::Skip) {
  auto g = [&](const Expr& x) { return !pred(x); };
  auto s = [&](const Stmt& st) { return walk_detail::walk_stmt_exprs(st, g, fn); };
  return !walk_detail::walk_stmts(body, s);
}

// The mutator: returns `e` rewritten bottom-up. Each node's children are rewritten first; a node
// one of whose children changed is copied (the input tree is never modified, and subtrees that do
// not change are shared with it); then f(const ExprP& node) returns its replacement, or null to
// keep it. f sees each node once per use, after its operands.
template <class F>
ExprP rewrite_expr(const ExprP& e, F&& f, WalkFn fn = WalkFn::Skip) {
  if (!e) return e;
  ExprP node = e;
  ExprChildren c = expr_children(e->kind);
  if (c != ExprChildren::None) {
    std::vector<ExprP> args = e->args;
    bool changed = false;
    for (ExprP& a : args) {
      ExprP r = rewrite_expr(a, f, fn);
      changed = changed || r != a;
      a = std::move(r);
    }
    ExprP new_fn = e->fn;
    std::vector<ExprP> new_fns = e->fns;
    if (c == ExprChildren::ArgsAndFn && fn == WalkFn::Enter) {
      if (e->fn) {
        new_fn = rewrite_expr(e->fn, f, fn);
        changed = changed || new_fn != e->fn;
      }
      for (ExprP& g : new_fns) {
        ExprP r = rewrite_expr(g, f, fn);
        changed = changed || r != g;
        g = std::move(r);
      }
    }
    if (changed) {
      node = std::make_shared<Expr>(*e);
      node->args = std::move(args);
      node->fn = std::move(new_fn);
      node->fns = std::move(new_fns);
    }
  }
  ExprP r = f(static_cast<const ExprP&>(node));
  return r ? r : node;
}

}  // namespace dtsim
