#include "ir/Hints.h"

namespace dtsim {

const char* hint_py_name(HintKind k) {
  switch (k) {
    case HintKind::Divisibility: return "tl.multiple_of";
    case HintKind::Contiguity: return "tl.max_contiguous";
    case HintKind::Constancy: return "tl.max_constancy";
  }
  return "?";
}

// The element before each lane along `axis` (the lane itself at index 0): component 1 of a scan of
// (seen, before, last) whose combine of a prefix A and the next part B is (1, B.seen ? B.before :
// A.last, B.last), an associative function.
static ExprP previous_along(const ExprP& x, const Type& t, int axis, SourceLoc loc) {
  std::vector<ExprP> shape;
  for (int64_t s : t.shape) shape.push_back(make_const_int(s, loc));
  ExprP seen = make_full(shape, make_const_int(0, loc), Scalar::I32, loc);
  auto arg = [&](int i) { return make_combine_arg(i, loc); };
  std::vector<ExprP> fns = {make_const_int(1, loc),
                            make_where(make_binary(BinOp::Ne, arg(3), make_const_int(0, loc), loc), arg(4), arg(2), loc), arg(5)};
  return make_scan_n({seen, clone_expr(x), clone_expr(x)}, axis, false, fns, 1, loc);
}

std::vector<StmtP> hint_checks(HintKind k, const std::vector<int64_t>& values, const ExprP& x, const Type& t,
                               const std::string& what, SourceLoc loc, const BindFn& bind) {
  std::vector<StmtP> out;
  bool fl = is_float(t.elem);
  if (t.ptr || ((fl || t.elem == Scalar::I1) && k != HintKind::Constancy)) return out;
  auto bo = [&](BinOp o, ExprP a, ExprP b) { return make_binary(o, std::move(a), std::move(b), loc); };
  auto lit = [&](int64_t v) { return make_const_int(v, loc); };
  ExprP xv;  // x, bound to a variable at its first read unless it is one (the checks read it often)
  auto X = [&] {
    if (!xv) xv = x->kind == ExprKind::Var || x->kind == ExprKind::Const ? x : bind("hint_x", clone_expr(x));
    return clone_expr(xv);
  };
  std::string vals;
  for (size_t i = 0; i < values.size(); ++i) vals += (i ? ", " : "") + std::to_string(values[i]);
  if (values.size() != 1) vals = "[" + vals + "]";
  std::string head = std::string(hint_py_name(k)) + "(" + (what.empty() ? std::string("...") : what) + ", " + vals + ") does not hold";
  const char* why = " (Triton's compiler takes a hint as true to vectorize and align memory accesses)";
  // the assert; `shown`: the values its finding gives at the first lane that breaks the hint
  auto check = [&](ExprP cond, const std::string& text, std::vector<ExprP> shown) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assert;
    s->loc = loc;
    s->text = text + why + (shown.size() == 1 ? "; shown at the lane: its value" : "; shown at the lane: its value, the value before it");
    s->args = {std::move(cond)};
    for (ExprP& e : shown) s->args.push_back(std::move(e));
    out.push_back(std::move(s));
  };
  int rank = t.rank();
  if (rank == 0) {
    if (k == HintKind::Divisibility && !values.empty() && values[0] > 1)
      check(bo(BinOp::Eq, bo(BinOp::Mod, X(), lit(values[0])), lit(0)), head + ": the value is not a multiple of " + std::to_string(values[0]), {X()});
    return out;
  }
  // the index along dimension d, with unit dimensions elsewhere, and the element before each lane along d
  std::vector<ExprP> idx(static_cast<size_t>(rank)), prev(static_cast<size_t>(rank));
  auto index = [&](int d) -> ExprP {
    if (!idx[static_cast<size_t>(d)]) {
      ExprP e = make_arange(lit(0), lit(t.shape[static_cast<size_t>(d)]), loc);
      for (int a = 0; a < rank; ++a)
        if (a != d) e = make_expand_dims(e, a, loc);
      idx[static_cast<size_t>(d)] = bind("hint_i", e);
    }
    return clone_expr(idx[static_cast<size_t>(d)]);
  };
  auto before = [&](int d) -> ExprP {
    if (!prev[static_cast<size_t>(d)]) prev[static_cast<size_t>(d)] = bind("hint_prev", previous_along(X(), t, d, loc));
    return clone_expr(prev[static_cast<size_t>(d)]);
  };
  auto follows = [&](int d) { return bo(BinOp::Eq, X(), bo(BinOp::Add, before(d), lit(1))); };
  auto group_start = [&](int d, int64_t v) { return bo(BinOp::Eq, bo(BinOp::Mod, index(d), lit(v)), lit(0)); };
  ExprP leader;  // Divisibility: a lane that starts a run of consecutive values along every dimension
  for (int d = 0; d < rank && d < static_cast<int>(values.size()); ++d) {
    int64_t v = values[static_cast<size_t>(d)];
    if (v <= 1) continue;
    std::string along = rank > 1 ? " along dimension " + std::to_string(d) : "";
    std::string n = std::to_string(v);
    switch (k) {
      case HintKind::Divisibility: {
        if (!leader) {
          ExprP all;
          for (int e = 0; e < rank; ++e) {
            if (t.shape[static_cast<size_t>(e)] <= 1) continue;
            ExprP starts = bo(BinOp::LOr, bo(BinOp::Eq, index(e), lit(0)), make_unary(UnOp::Not, follows(e), loc));
            all = all ? bo(BinOp::LAnd, all, starts) : starts;
          }
          leader = bind("hint_lead", all ? all : make_const_bool(true, loc));
        }
        check(bo(BinOp::LOr, make_unary(UnOp::Not, clone_expr(leader), loc), bo(BinOp::Eq, bo(BinOp::Mod, X(), lit(v)), lit(0))),
              head + ": a run of consecutive values" + along + " starts at a value that is not a multiple of " + n, {X()});
        break;
      }
      case HintKind::Contiguity:
        check(bo(BinOp::LOr, bo(BinOp::LOr, group_start(d, v), follows(d)), bo(BinOp::Eq, X(), lit(0))),
              head + ": an aligned group of " + n + " lanes" + along + " does not hold consecutive values",
              {X(), before(d)});
        break;
      case HintKind::Constancy: {
        ExprP same = bo(BinOp::Eq, X(), before(d));
        if (fl) same = bo(BinOp::LOr, same, bo(BinOp::LAnd, bo(BinOp::Ne, X(), X()), bo(BinOp::Ne, before(d), before(d))));
        check(bo(BinOp::LOr, group_start(d, v), same),
              head + ": an aligned group of " + n + " lanes" + along + " does not hold one value", {X(), before(d)});
        break;
      }
    }
  }
  return out;
}

}  // namespace dtsim
