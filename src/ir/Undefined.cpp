#include "ir/Undefined.h"

#include <map>
#include <set>

#include "ir/Verify.h"
#include "ir/Walk.h"

namespace dtsim {

namespace {

// A value's companion: an i1 expression of the value's shape, true where the lane is defined; null
// where every lane is. `origin`: the load whose masked-off lanes it goes back to (for messages).
struct Def {
  ExprP e;
  SourceLoc origin;
  explicit operator bool() const { return e != nullptr; }
};

std::vector<ExprP> consts(const Shape& s, SourceLoc loc) {
  std::vector<ExprP> out;
  for (int64_t v : s) out.push_back(make_const_int(v, loc));
  return out;
}

// Whether evaluating `e` again costs little and touches no memory (then it is cloned, not bound).
bool cheap(const Expr& e, int& budget) {
  if (--budget < 0) return false;
  switch (e.kind) {
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Histogram:
    case ExprKind::Machine: return false;
    default: break;
  }
  for (const ExprP& a : e.args)
    if (a && !cheap(*a, budget)) return false;
  return true;
}

class Pass {
 public:
  explicit Pass(Kernel& k) : k_(k), undef_(static_cast<size_t>(k.num_slots), false), origin_(static_cast<size_t>(k.num_slots)) {}

  bool run() {
    if (!any_expr(k_.body, [](const Expr& e) { return e.kind == ExprKind::Load && e.undef_masked; })) return false;
    // the variables that may hold undefined lanes: a fixpoint over the kernel's assignments (a loop
    // carries a value from its end to its start)
    bool changed = true;
    while (changed) {
      changed = false;
      for_each_stmt(k_.body, [&](const Stmt& s) {
        if (s.kind != StmtKind::Assign) return;
        SourceLoc o;
        if (!may(*s.args[0], o)) return;
        for (int slot : s.slots)
          if (slot >= 0 && !undef_[static_cast<size_t>(slot)]) {
            undef_[static_cast<size_t>(slot)] = true;
            origin_[static_cast<size_t>(slot)] = o;
            changed = true;
          }
      });
    }
    std::vector<StmtP> body = block(k_.body);
    // parameters reassigned with undefined lanes: their companions start true at the kernel's start
    std::vector<StmtP> head;
    for (const Param& p : k_.params)
      if (p.slot >= 0 && undef_[static_cast<size_t>(p.slot)]) head.push_back(make_assign(comp(p.slot), all_true(k_.slot_types[static_cast<size_t>(p.slot)].shape, p.loc), p.loc));
    head.insert(head.end(), body.begin(), body.end());
    k_.body = std::move(head);
    std::set<std::string> names;
    for_each_expr(k_.body, [&](const Expr& e) {
      if (e.kind == ExprKind::Var) names.insert(e.name);
    });
    drop_unread(k_.body, comps_, names);
    return true;
  }

 private:
  Kernel& k_;
  std::vector<bool> undef_;
  std::vector<SourceLoc> origin_;
  int temps_ = 0;
  // Companions that are load-free mask expressions (`undef7_x = offs < n`, a load's mask), valid in
  // the straight-line run of statements being rewritten until the companion or a variable the
  // expression reads is assigned again: a store under that same mask needs no check.
  // companion name -> (its expression: a mask without loads, the names that expression reads)
  std::map<std::string, std::pair<ExprP, std::set<std::string>>> copies_;

  void forget(const std::string& name) {
    for (auto it = copies_.begin(); it != copies_.end();)
      it = it->first == name || it->second.second.count(name) ? copies_.erase(it) : std::next(it);
  }
  // a and b compute the same value from the same variables
  static bool same(const Expr& a, const Expr& b) {
    if (a.kind != b.kind || a.args.size() != b.args.size() || a.fn || b.fn || !a.fns.empty() || !b.fns.empty()) return false;
    switch (a.kind) {
      case ExprKind::Const:
        if (a.is_float != b.is_float || a.ival != b.ival || a.fval != b.fval || a.weak != b.weak || a.dtype != b.dtype) return false;
        break;
      case ExprKind::Var: if (a.name != b.name) return false; break;
      case ExprKind::Unary: if (a.uop != b.uop) return false; break;
      case ExprKind::Binary: if (a.bop != b.bop) return false; break;
      case ExprKind::Cast:
      case ExprKind::Full: if (a.dtype != b.dtype) return false; break;
      case ExprKind::ExpandDims:
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms: if (a.axis != b.axis) return false; break;
      case ExprKind::Arange:
      case ExprKind::Where:
      case ExprKind::Reshape:
      case ExprKind::Trans:
      case ExprKind::Broadcast: break;
      default: return false;  // loads, reductions, ...: not compared
    }
    for (size_t i = 0; i < a.args.size(); ++i) {
      if (!a.args[i] != !b.args[i]) return false;
      if (a.args[i] && !same(*a.args[i], *b.args[i])) return false;
    }
    return true;
  }
  // Whether `d` (an `&` of companions) is implied by `mask`: every term is the mask itself or a
  // companion whose expression is the mask.
  bool implied(const Expr& d, const Expr& mask) const {
    if (d.kind == ExprKind::Binary && d.bop == BinOp::And) return implied(*d.args[0], mask) && implied(*d.args[1], mask);
    if (same(d, mask)) return true;
    if (d.kind != ExprKind::Var) return false;
    auto it = copies_.find(d.name);
    return it != copies_.end() && same(*it->second.first, mask);
  }

  // Drops the assignments of companions that nothing reads (a store under the load's mask).
  void drop_unread(std::vector<StmtP>& b, const std::set<std::string>& comps, const std::set<std::string>& names) {
    std::vector<StmtP> keep;
    for (StmtP& s : b) {
      if (s->kind == StmtKind::Assign && s->targets.size() == 1 && comps.count(s->targets[0]) && !names.count(s->targets[0])) continue;
      drop_unread(s->body, comps, names);
      drop_unread(s->orelse, comps, names);
      keep.push_back(s);
    }
    b = std::move(keep);
  }
  std::set<std::string> comps_;  // every companion name assigned

  // Where the statements that compute a statement's companions and checks go: `pre` (before the
  // statement); `bind` false where they are evaluated again each time (a while condition), so that
  // values are cloned rather than bound to variables.
  struct Out {
    std::vector<StmtP>* pre;
    bool bind;
    std::vector<StmtP>* post = nullptr;  // set: the checks go after the statement (a store's: its own
                                         // findings, out of bounds first, come before)
  };

  std::string comp(int slot) const { return "undef" + std::to_string(slot) + "_" + k_.slot_names[static_cast<size_t>(slot)]; }

  // Whether `e` may hold undefined lanes (under the variables known so far).
  bool may(const Expr& e, SourceLoc& o) const {
    switch (e.kind) {
      case ExprKind::Var:
        if (e.slot >= 0 && undef_[static_cast<size_t>(e.slot)]) {
          o = origin_[static_cast<size_t>(e.slot)];
          return true;
        }
        return false;
      case ExprKind::Load:
        if (e.undef_masked && e.args.size() > 1 && e.args[1]) {
          o = e.loc;
          return true;
        }
        // the pointer is a sink (checked where the mask is on), not a source of the result
        for (size_t i = 1; i < e.args.size(); ++i)
          if (e.args[i] && may(*e.args[i], o)) return true;
        return false;
      default:
        for (const ExprP& a : e.args)
          if (a && may(*a, o)) return true;
        return false;
    }
  }

  // ---- expression builders ----
  static ExprP all_true(const Shape& s, SourceLoc loc) {
    if (s.empty()) return make_const_bool(true, loc);
    return make_full(consts(s, loc), make_const_bool(true, loc), Scalar::I1, loc);
  }
  // `d` (of shape `from`) broadcast to `to` (numpy rules)
  static ExprP fit(ExprP d, const Shape& from, const Shape& to, SourceLoc loc) {
    if (from == to) return d;
    if (from.empty()) return make_full(consts(to, loc), std::move(d), Scalar::I1, loc);
    return make_broadcast(std::move(d), consts(to, loc), loc);
  }
  static ExprP band(ExprP a, ExprP b, SourceLoc loc) {
    if (!a) return b;
    if (!b) return a;
    return make_binary(BinOp::And, std::move(a), std::move(b), loc);
  }
  static ExprP bor(ExprP a, ExprP b, SourceLoc loc) { return make_binary(BinOp::Or, std::move(a), std::move(b), loc); }
  static ExprP bnot(ExprP a, SourceLoc loc) { return make_unary(UnOp::Not, std::move(a), loc); }
  // every lane of d (i1) along `axis`
  static ExprP all_along(ExprP d, int axis, SourceLoc loc) { return bnot(make_reduce(RedOp::Or, bnot(std::move(d), loc), axis, loc), loc); }
  static ExprP as_i1(ExprP v, const Type& t, SourceLoc loc) {
    if (t.elem == Scalar::I1 && !t.ptr) return v;
    return make_binary(BinOp::Ne, std::move(v), make_const_int(0, loc), loc);
  }

  // An expression of `e`'s value to read again: a clone when cheap (or when it must be evaluated in
  // place), else `e` bound to a variable before the statement (e then reads the variable).
  ExprP value(ExprP& e, Out& out) {
    int budget = 24;
    if (!out.bind || cheap(*e, budget)) return clone_expr(e);
    std::string name = "undef_t" + std::to_string(temps_++);
    SourceLoc loc = e->loc;
    Type t = e->type;
    out.pre->push_back(make_assign(name, e, loc));
    e = make_var(name, loc);
    e->type = t;  // read by the caller until the module is verified again
    return make_var(name, loc);
  }

  Def fitd(Def d, const Shape& from, const Shape& to, SourceLoc loc) {
    if (d) d.e = fit(d.e, from, to, loc);
    return d;
  }
  static Def both(Def a, Def b, SourceLoc loc) {
    Def r;
    r.origin = a ? a.origin : b.origin;
    r.e = band(a.e, b.e, loc);
    return r;
  }

  // The sink check: `ok` (i1, true where fine) must hold at every lane.
  void check(Out& out, ExprP ok, const std::string& text, SourceLoc loc) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assert;
    s->loc = loc;
    s->text = text;
    s->undefined_lanes = true;
    s->args = {std::move(ok)};
    (out.post ? out.post : out.pre)->push_back(std::move(s));
  }
  // The load a finding at `at` names: by its line, and by its file too where that is another (a
  // helper function of another module).
  static std::string where(SourceLoc o, SourceLoc at) {
    if (!o.valid()) return "a load";
    if (o.file != at.file) return "the load at " + Sources::name(o.file) + ":" + std::to_string(o.line);
    return "the load at line " + std::to_string(o.line);
  }
  static std::string lanes(const Def& d, SourceLoc at) {
    return "lanes masked off by " + where(d.origin, at) + " (tl.load without `other`) are undefined";
  }

  // The companion of `e`, binding or cloning its subexpressions through `out`; checks of the loads
  // inside `e` go to out.pre.
  Def def(ExprP& e, Out& out) {
    SourceLoc loc = e->loc;
    const Shape& shape = e->type.shape;
    auto sub = [&](size_t i) -> Def { return e->args.size() > i && e->args[i] ? def(e->args[i], out) : Def{}; };
    auto shape_of = [&](size_t i) -> const Shape& { return e->args[i]->type.shape; };
    switch (e->kind) {
      case ExprKind::Const:
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
      case ExprKind::Arange:
      case ExprKind::Machine:
      case ExprKind::CombineArg: return {};
      case ExprKind::Var:
        if (e->slot >= 0 && undef_[static_cast<size_t>(e->slot)]) return {make_var(comp(e->slot), loc), origin_[static_cast<size_t>(e->slot)]};
        return {};
      case ExprKind::Full: {
        Def d = sub(e->args.size() - 1);
        if (d) d.e = fit(d.e, {}, shape, loc);
        return d;
      }
      case ExprKind::Unary:
      case ExprKind::Cast:
      case ExprKind::Bitcast:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt: return sub(0);
      case ExprKind::ExpandDims: {
        Def d = sub(0);
        if (d) d.e = make_expand_dims(d.e, e->axis, loc);
        return d;
      }
      case ExprKind::Reshape:
      case ExprKind::Broadcast: {
        Def d = sub(0);
        if (!d) return d;
        d.e = e->kind == ExprKind::Reshape ? make_reshape(d.e, consts(shape, loc), loc) : make_broadcast(d.e, consts(shape, loc), loc);
        return d;
      }
      case ExprKind::Trans: {
        Def d = sub(0);
        if (!d) return d;
        if (e->args.size() == 1) {
          d.e = make_trans(d.e, loc);
        } else {
          std::vector<ExprP> order;
          for (size_t i = 1; i < e->args.size(); ++i) order.push_back(clone_expr(e->args[i]));
          d.e = make_permute(d.e, std::move(order), loc);
        }
        return d;
      }
      case ExprKind::Binary: {
        Def da = sub(0), db = sub(1);
        if (!da && !db) return {};
        da = fitd(da, shape_of(0), shape, loc);
        db = fitd(db, shape_of(1), shape, loc);
        BinOp op = e->bop;
        bool logic = op == BinOp::LAnd || op == BinOp::LOr ||
                     ((op == BinOp::And || op == BinOp::Or) && e->type.elem == Scalar::I1 && e->args[0]->type.elem == Scalar::I1 && e->args[1]->type.elem == Scalar::I1);
        if (!logic) return both(da, db, loc);
        // a defined false (and) / true (or) operand decides the lane whatever the other holds
        bool is_and = op == BinOp::LAnd || op == BinOp::And;
        auto decides = [&](size_t i) {
          ExprP v = fit(as_i1(value(e->args[i], out), e->args[i]->type, loc), e->args[i]->type.shape, shape, loc);
          return is_and ? bnot(v, loc) : v;
        };
        Def r;
        r.origin = da ? da.origin : db.origin;
        if (da && db)
          r.e = bor(bor(band(da.e, db.e, loc), band(clone_expr(da.e), decides(0), loc), loc), band(clone_expr(db.e), decides(1), loc), loc);
        else if (da)
          r.e = bor(da.e, decides(1), loc);
        else
          r.e = bor(db.e, decides(0), loc);
        return r;
      }
      case ExprKind::Where: {
        Def dc = sub(0), da = sub(1), db = sub(2);
        if (!dc && !da && !db) return {};
        Def r;
        r.origin = dc ? dc.origin : da ? da.origin : db.origin;
        if (da || db) {
          ExprP c = fit(value(e->args[0], out), shape_of(0), shape, loc);
          r.e = make_where(c, da ? fit(da.e, shape_of(1), shape, loc) : all_true(shape, loc), db ? fit(db.e, shape_of(2), shape, loc) : all_true(shape, loc), loc);
        }
        if (dc) r.e = band(fit(dc.e, shape_of(0), shape, loc), r.e, loc);
        return r;
      }
      case ExprKind::Load: {
        Def dp = sub(0), dm = sub(1), dother = sub(2);
        bool masked = e->args.size() > 1 && e->args[1];
        bool dp_implied = masked && dp && implied(*dp.e, *e->args[1]);  // undefined only where the mask is off
        ExprP mv;
        if (masked) mv = fit(value(e->args[1], out), shape_of(1), shape, loc);
        if (dm) check(out, fit(dm.e, shape_of(1), shape, loc), lanes(dm, loc) + " and reach the mask of this load", loc);
        if (dp && !dp_implied) {
          ExprP ok = fit(dp.e, shape_of(0), shape, loc);
          if (mv) ok = bor(bnot(clone_expr(mv), loc), ok, loc);
          check(out, ok, lanes(dp, loc) + " and reach the pointer of this load at lanes it reads", loc);
        }
        if (!masked) return {};
        Def r;
        if (e->undef_masked) {
          r = {mv, loc};
        } else if (dother) {
          r = {make_where(mv, all_true(shape, loc), fit(dother.e, shape_of(2), shape, loc), loc), dother.origin};
        }
        return r;
      }
      case ExprKind::Dot: {
        Def da = sub(0), db = sub(1), dacc = sub(2);
        if (!da && !db && !dacc) return {};
        int r = static_cast<int>(shape.size());
        Def out_d;
        out_d.origin = da ? da.origin : db ? db.origin : dacc.origin;
        // [.., i, j] needs row i of a (its last axis) and column j of b (its axis r-2)
        if (da) out_d.e = fit(make_expand_dims(all_along(da.e, r - 1, loc), r - 1, loc), with_axis(shape_of(0), r - 1), shape, loc);
        if (db) out_d.e = band(out_d.e, fit(make_expand_dims(all_along(db.e, r - 2, loc), r - 2, loc), with_axis(shape_of(1), r - 2), shape, loc), loc);
        if (dacc) out_d.e = band(out_d.e, fit(dacc.e, shape_of(2), shape, loc), loc);
        return out_d;
      }
      case ExprKind::Reduce:
      case ExprKind::Scan: {
        Def d;
        for (size_t i = 0; i < e->args.size(); ++i) d = both(d, fitd(sub(i), shape_of(i), shape_of(0), loc), loc);
        if (!d) return d;
        if (e->kind == ExprKind::Reduce) {
          d.e = all_along(d.e, e->axis, loc);
        } else {  // defined where no lane up to this one (in the scan's direction) is undefined
          ExprP bad = make_cast(bnot(d.e, loc), Scalar::I32, loc);
          d.e = make_binary(BinOp::Eq, make_scan(ScanOp::Max, bad, e->axis, e->reverse, loc), make_const_int(0, loc), loc);
        }
        return d;
      }
      case ExprKind::Swizzle2d: {
        Def d;
        for (size_t i = 0; i < e->args.size(); ++i) d = both(d, sub(i), loc);
        return d;
      }
      case ExprKind::Gather: {  // the selected lane's, and the index's own
        Def ds = sub(0), di = sub(1);
        if (!ds && !di) return {};
        Def r;
        r.origin = ds ? ds.origin : di.origin;
        if (ds) r.e = make_gather(ds.e, value(e->args[1], out), e->axis, loc);
        if (di) r.e = band(r.e, di.e, loc);
        return r;
      }
      case ExprKind::Histogram: {  // a sink: each lane counted (the mask on) must be defined, and the mask
        Def dx = sub(0), dm = sub(2);
        const bool masked = e->args.size() > 2 && e->args[2];
        if (dm) check(out, dm.e, lanes(dm, loc) + " and reach the mask of this histogram", loc);
        if (dx && !(masked && implied(*dx.e, *e->args[2]))) {  // undefined only where the mask is off: fine
          ExprP ok = dx.e;
          if (masked) ok = bor(bnot(value(e->args[2], out), loc), ok, loc);
          check(out, ok, lanes(dx, loc) + " and are counted by this histogram", loc);
        }
        return {};
      }
    }
    return {};
  }

  // shape `s` with a unit extent at `axis` (what a reduction along `axis`, expanded back, has)
  static Shape with_axis(Shape s, int axis) {
    s[static_cast<size_t>(axis)] = 1;
    return s;
  }

  // The sinks of a store or atomic: value operands and the pointer where the mask is on; the mask.
  void access_checks(Stmt& s, Out& out, const char* what) {
    bool cas = s.kind == StmtKind::Atomic && s.aop == AtomicOp::Cas;
    size_t nval = cas ? 3 : 2;  // args before the mask
    ExprP* mask = !cas && s.args.size() > 2 && s.args[2] ? &s.args[2] : nullptr;
    Shape shape = s.args[0]->type.shape;
    for (size_t i = 0; i < s.args.size(); ++i)
      if (s.args[i]) shape = broadcast_shapes(shape, s.args[i]->type.shape).value_or(shape);
    SourceLoc loc = s.loc;
    std::vector<Def> ds;
    for (size_t i = 0; i < nval; ++i) ds.push_back(def(s.args[i], out));
    Def dm = mask ? def(*mask, out) : Def{};
    std::vector<bool> skip(nval, false);
    for (size_t i = 0; i < nval; ++i) skip[i] = mask && ds[i] && implied(*ds[i].e, **mask);
    ExprP mv;
    bool any = false;
    for (size_t i = 0; i < nval; ++i) any = any || (ds[i] && !skip[i]);
    if (mask && any) mv = fit(value(*mask, out), (*mask)->type.shape, shape, loc);
    if (dm) check(out, fit(dm.e, (*mask)->type.shape, shape, loc), lanes(dm, loc) + " and reach the mask of this " + what, loc);
    for (size_t i = 0; i < nval; ++i) {
      if (!ds[i]) continue;
      if (skip[i]) continue;  // undefined only where the mask is off
      ExprP ok = fit(ds[i].e, s.args[i]->type.shape, shape, loc);
      if (mv) ok = bor(bnot(clone_expr(mv), loc), ok, loc);
      std::string role = i == 0 ? std::string("the pointer of this ") + what : std::string("this ") + what;
      check(out, ok, lanes(ds[i], loc) + " and reach " + role, loc);
    }
  }

  // A scalar that steers execution: defined.
  void steer_check(ExprP& e, Out& out, const std::string& role, SourceLoc loc) {
    Def d = def(e, out);
    if (d) check(out, d.e, lanes(d, loc) + " and reach " + role, loc);
  }

  std::vector<StmtP> block(std::vector<StmtP>& in) {
    auto outer = std::move(copies_);
    copies_.clear();
    std::vector<StmtP> res = block_(in);
    copies_ = std::move(outer);
    return res;
  }
  std::vector<StmtP> block_(std::vector<StmtP>& in) {
    std::vector<StmtP> res;
    for (StmtP& sp : in) {
      Stmt& s = *sp;
      std::vector<StmtP> pre, post;
      Out out{&pre, true};
      switch (s.kind) {
        case StmtKind::Assign: {
          Def d = def(s.args[0], out);
          for (int slot : s.slots) {
            if (slot < 0 || !undef_[static_cast<size_t>(slot)]) continue;
            const Shape& vs = k_.slot_types[static_cast<size_t>(slot)].shape;
            // Swizzle2d's two scalar targets share its companion
            ExprP c = d ? (s.slots.size() > 1 ? clone_expr(d.e) : fit(d.e, s.args[0]->type.shape, vs, s.loc)) : all_true(vs, s.loc);
            forget(comp(slot));
            if (!any_expr(c, [](const Expr& x) { return x.kind == ExprKind::Load; })) {
              std::set<std::string> names;
              for_each_expr(c, [&](const Expr& x) {
                if (x.kind == ExprKind::Var) names.insert(x.name);
              });
              copies_[comp(slot)] = {clone_expr(c), std::move(names)};
            }
            comps_.insert(comp(slot));
            pre.push_back(make_assign(comp(slot), c, s.loc));
          }
          for (const std::string& t : s.targets) forget(t);
          break;
        }
        case StmtKind::Store:
          out.post = &post;
          access_checks(s, out, "store");
          break;
        case StmtKind::Atomic:
          access_checks(s, out, "atomic");
          for (int slot : s.slots)
            if (slot >= 0 && undef_[static_cast<size_t>(slot)])
              pre.push_back(make_assign(comp(slot), all_true(k_.slot_types[static_cast<size_t>(slot)].shape, s.loc), s.loc));
          break;
        case StmtKind::For: {
          static const char* names[] = {"the start of this loop", "the end of this loop", "the step of this loop"};
          for (size_t i = 0; i < 3 && i < s.args.size(); ++i) steer_check(s.args[i], out, names[i], s.loc);
          s.body = block(s.body);
          if (!s.slots.empty() && s.slots[0] >= 0 && undef_[static_cast<size_t>(s.slots[0])]) {
            int slot = s.slots[0];
            s.body.insert(s.body.begin(), make_assign(comp(slot), all_true(k_.slot_types[static_cast<size_t>(slot)].shape, s.loc), s.loc));
          }
          break;
        }
        case StmtKind::If:
          steer_check(s.args[0], out, "the condition of this if", s.loc);
          s.body = block(s.body);
          s.orelse = block(s.orelse);
          break;
        case StmtKind::While: {
          // the condition is evaluated before every trip: its checks run before the loop and again
          // at the end of each trip
          Out w{&pre, false};
          steer_check(s.args[0], w, "the condition of this while", s.loc);
          s.body = block(s.body);
          for (const StmtP& c : pre) s.body.push_back(clone_stmt(c));
          break;
        }
        case StmtKind::Assert:  // whether it fails must not depend on undefined lanes (the pass's own are added later)
          if (!s.undefined_lanes) steer_check(s.args[0], out, "the condition of this assert", s.loc);
          break;
        case StmtKind::Print:
        case StmtKind::Return: break;
      }
      if (s.kind == StmtKind::For || s.kind == StmtKind::If || s.kind == StmtKind::While) copies_.clear();
      if (s.kind == StmtKind::Atomic)
        for (const std::string& t : s.targets) forget(t);
      for (StmtP& p : pre) res.push_back(std::move(p));
      res.push_back(sp);
      for (StmtP& p : post) res.push_back(std::move(p));
    }
    return res;
  }
};

}  // namespace

bool track_undefined_lanes(Module& m) {
  bool changed = false;
  for (Kernel& k : m.kernels) changed = Pass(k).run() || changed;
  return changed;
}

}  // namespace dtsim
