// Disjoint writes (see Footprint.h): each write site's offsets as coef * rho + [lo, hi], symbolic.
#include "ir/Footprint.h"

#include <map>
#include <set>

#include "ir/Analysis.h"
#include "ir/Walk.h"

namespace dtsim {

namespace footprint_impl {

using Op = SymNode::Op;

Sym node(Op op, Sym a = nullptr, Sym b = nullptr) {
  auto n = std::make_shared<SymNode>();
  n->op = op, n->a = std::move(a), n->b = std::move(b);
  return n;
}
Sym cst(int64_t v) {
  auto n = std::make_shared<SymNode>();
  n->c = v;
  return n;
}
Sym param(const std::string& name) {
  auto n = std::make_shared<SymNode>();
  n->op = Op::Param, n->name = name;
  return n;
}
Sym grid(int axis) {
  auto n = std::make_shared<SymNode>();
  n->op = Op::Grid, n->axis = axis;
  return n;
}
bool is_const(const Sym& s, int64_t* v = nullptr) {
  if (s->op != Op::Const) return false;
  if (v) *v = s->c;
  return true;
}
bool same(const Sym& a, const Sym& b) { return a == b || sym_str(a) == sym_str(b); }

// Builders that fold constants (the conditions stay short where the values are known).
Sym add(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y) && x > -(int64_t(1) << 52) && x < (int64_t(1) << 52) && y > -(int64_t(1) << 52) && y < (int64_t(1) << 52))
    return cst(x + y);
  if (is_const(a, &x) && x == 0) return b;
  if (is_const(b, &y) && y == 0) return a;
  return node(Op::Add, a, b);
}
Sym sub(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y) && x > -(int64_t(1) << 52) && x < (int64_t(1) << 52) && y > -(int64_t(1) << 52) && y < (int64_t(1) << 52))
    return cst(x - y);
  if (is_const(b, &y) && y == 0) return a;
  if (same(a, b)) return cst(0);
  return node(Op::Sub, a, b);
}
Sym mul(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y) && x > -(int64_t(1) << 26) && x < (int64_t(1) << 26) && y > -(int64_t(1) << 26) && y < (int64_t(1) << 26))
    return cst(x * y);
  if ((is_const(a, &x) && x == 0) || (is_const(b, &y) && y == 0)) return cst(0);
  if (is_const(a, &x) && x == 1) return b;
  if (is_const(b, &y) && y == 1) return a;
  return node(Op::Mul, a, b);
}
Sym smin(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y)) return cst(std::min(x, y));
  if (same(a, b)) return a;
  return node(Op::Min, a, b);
}
Sym smax(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y)) return cst(std::max(x, y));
  if (same(a, b)) return a;
  return node(Op::Max, a, b);
}
Sym sdiv(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y) && x >= 0 && y > 0) return cst(x / y);
  if (is_const(b, &y) && y == 1) return a;
  return node(Op::Div, a, b);
}

// A write's offsets: coef * rho + r, r in [lo, hi] (coef 0: no rho).
struct Fp {
  Sym coef, lo, hi;
};
bool rho_free(const Fp& f) { return is_const(f.coef) && f.coef->c == 0; }
bool uniform(const Fp& f) { return rho_free(f) && same(f.lo, f.hi); }
Fp point(const Sym& s) { return Fp{cst(0), s, s}; }

// The mask's bound on an expression: its active lanes have e in [lo, hi] (null: no bound).
struct Fact {
  const Expr* e;
  int ctx;
  Sym lo, hi;
};

class Analyzer {
 public:
  Analyzer(const Kernel& k, const Bindings* constexprs) : k_(k), cx_(constexprs) {
    const size_t n = static_cast<size_t>(k.num_slots);
    assigns_.assign(n, 0);
    def_.assign(n, nullptr);
    for (const Param& p : k.params)
      if (p.slot >= 0) ++assigns_[static_cast<size_t>(p.slot)];
    for_each_stmt(k, [&](const Stmt& s) {
      if (s.kind != StmtKind::Assign && s.kind != StmtKind::For && !(s.kind == StmtKind::Atomic && !s.slots.empty())) return;
      for (int slot : s.slots) {
        if (slot < 0) continue;
        ++assigns_[static_cast<size_t>(slot)];
        def_[static_cast<size_t>(slot)] = (s.slots.size() == 1 && s.kind != StmtKind::Atomic) ? &s : nullptr;
      }
    });
    // Loops whose variable is an instance index: range(program_id(0), stop, num_programs(0)).
    rho_max_ = sub(grid(0), cst(1));
    for_each_stmt(k, [&](const Stmt& s) {
      if (s.kind != StmtKind::For || s.slots.size() != 1 || s.slots[0] < 0) return;
      auto lo = value(s.args[0], s.id, false), hi = value(s.args[1], s.id, false), st = value(s.args[2], s.id, false);
      why_.clear();
      if (!lo || !hi || !st) return;
      if (!is_const(lo->coef) || lo->coef->c != 1 || !is_const(lo->lo) || lo->lo->c != 0 || !is_const(lo->hi) || lo->hi->c != 0) return;
      if (!uniform(*st) || st->lo->op != Op::Grid || st->lo->axis != 0 || !uniform(*hi)) return;
      rho_loops_.insert(s.slots[0]);
      rho_max_ = smax(rho_max_, sub(hi->lo, cst(1)));
    });
    rho_conds_.swap(conds_);  // what the loops' bounds need holds for every buffer
    rho_narrow_.swap(narrow_);
    conds_.clear(), narrow_.clear();
  }

  DisjointWrites buffer(size_t pi, const std::vector<const Stmt*>& sites) {
    DisjointWrites d;
    d.param = pi;
    buf_ = &k_.params[pi];
    conds_ = rho_conds_, narrow_ = rho_narrow_;
    std::optional<Sym> coef, lo, hi;
    for (const Stmt* s : sites) {
      d.sites.push_back(s->id);
      if (!d.why.empty()) continue;
      facts_.clear();
      why_.clear();
      const ExprP* mask = nullptr;
      if (s->kind == StmtKind::Store && s->args.size() > 2 && s->args[2]) mask = &s->args[2];
      if (s->kind == StmtKind::Atomic && s->aop != AtomicOp::Cas && s->args.size() > 2 && s->args[2]) mask = &s->args[2];
      if (mask) facts(*mask, s->id, true);
      auto f = pointer(s->args[0], s->id, true);
      if (!f) {
        d.why = at(*s) + (why_.empty() ? "its offsets are not read" : why_);
        continue;
      }
      if (coef && !same(*coef, f->coef)) {
        d.why = at(*s) + "its instance stride " + sym_str(f->coef) + " differs from another site's " + sym_str(*coef);
        continue;
      }
      coef = f->coef;
      lo = lo ? smin(*lo, f->lo) : f->lo;
      hi = hi ? smax(*hi, f->hi) : f->hi;
    }
    if (!d.why.empty() || !coef) return d;
    // |coef| > hi - lo, and one instance index only.
    d.conds.push_back({add(sub(*hi, *lo), cst(1)), smax(*coef, sub(cst(0), *coef))});
    d.conds.push_back({grid(1), cst(1)});
    d.conds.push_back({grid(2), cst(1)});
    for (auto& c : conds_) d.conds.push_back(c);
    const Sym lim = cst((int64_t(1) << 31) - 1), nlim = cst(-(int64_t(1) << 31));
    for (const Fp& g : narrow_) {
      Sym span = mul(g.coef, rho_max_);
      d.conds.push_back({nlim, add(g.lo, smin(cst(0), span))});
      d.conds.push_back({add(g.hi, smax(cst(0), span)), lim});
    }
    // Short and without repeats.
    std::vector<SymLe> uniq;
    std::set<std::string> seen;
    for (auto& c : d.conds) {
      int64_t x, y;
      if (is_const(c.lhs, &x) && is_const(c.rhs, &y) && x <= y) continue;
      if (seen.insert(sym_str(c.lhs) + "<=" + sym_str(c.rhs)).second) uniq.push_back(c);
    }
    d.conds = std::move(uniq);
    return d;
  }

 private:
  const Kernel& k_;
  const Bindings* cx_;
  const Param* buf_ = nullptr;
  std::vector<int> assigns_;
  std::vector<const Stmt*> def_;
  std::set<int> rho_loops_;
  bool rho_loops_used_ = false;  // rho may exceed the pid (then rho itself is guarded)
  Sym rho_max_;
  std::vector<Fact> facts_;
  std::vector<SymLe> conds_;
  std::vector<Fp> narrow_;  // 32-bit values on the way: each must fit
  std::vector<SymLe> rho_conds_;
  std::vector<Fp> rho_narrow_;
  std::string why_;

  std::string at(const Stmt& s) const {
    return (s.kind == StmtKind::Store ? "the store" : "the atomic") + (s.loc.valid() ? " at line " + std::to_string(s.loc.line) : std::string()) + ": ";
  }
  std::nullopt_t no(const std::string& why) {
    if (why_.empty()) why_ = why;
    return std::nullopt;
  }
  const Param* param_of(const Expr& e) const {
    const Param* p = k_.find_param(e.name);
    return p && p->slot == e.slot ? p : nullptr;
  }
  // The variable's one definition, readable at statement `ctx` (written before it), or null.
  const Stmt* def_before(int slot, int ctx) const {
    if (slot < 0 || static_cast<size_t>(slot) >= def_.size() || assigns_[static_cast<size_t>(slot)] != 1) return nullptr;
    const Stmt* d = def_[static_cast<size_t>(slot)];
    return d && d->id < ctx ? d : nullptr;
  }

  // Whether a (read at statement ca) and b (read at cb) are the same value at every lane.
  bool same_expr(const Expr& a, int ca, const Expr& b, int cb) const {
    if (&a == &b && ca == cb) return true;
    if (a.kind != b.kind || !(a.type == b.type) || a.args.size() != b.args.size()) return false;
    switch (a.kind) {
      case ExprKind::Const:
        if (a.ival != b.ival || a.fval != b.fval || a.is_float != b.is_float) return false;
        break;
      case ExprKind::Var: {
        if (a.slot != b.slot) return false;
        if (ca == cb) return true;
        if (const Param* p = param_of(a)) return assigns_[static_cast<size_t>(p->slot)] == 1;
        return def_before(a.slot, std::min(ca, cb)) != nullptr;
      }
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
        if (a.axis != b.axis) return false;
        break;
      case ExprKind::Arange:
      case ExprKind::Full:
      case ExprKind::Reshape:
      case ExprKind::Broadcast:
      case ExprKind::Trans:
        if (a.ints != b.ints) return false;
        break;
      case ExprKind::Unary:
        if (a.uop != b.uop) return false;
        break;
      case ExprKind::Binary:
        if (a.bop != b.bop) return false;
        break;
      case ExprKind::Cast:
      case ExprKind::Bitcast:
        if (a.dtype != b.dtype) return false;
        break;
      case ExprKind::ExpandDims:
        if (a.axis != b.axis) return false;
        break;
      case ExprKind::Where: break;
      case ExprKind::Load:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Swizzle2d:
      case ExprKind::CombineArg:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt: return false;
    }
    for (size_t i = 0; i < a.args.size(); ++i) {
      if (!a.args[i] || !b.args[i]) {
        if (a.args[i] || b.args[i]) return false;
        continue;
      }
      if (!same_expr(*a.args[i], ca, *b.args[i], cb)) return false;
    }
    return true;
  }

  // What the mask says of the lanes that write: bounds on expressions compared with uniform values.
  void facts(const ExprP& m, int ctx, bool aligned) {
    if (!aligned) return;
    switch (m->kind) {
      case ExprKind::Var: {
        if (const Stmt* d = def_before(m->slot, ctx); d && d->kind == StmtKind::Assign) facts(d->args[0], d->id, aligned);
        return;
      }
      case ExprKind::Broadcast: facts(m->args[0], ctx, aligned); return;
      case ExprKind::Binary: break;
      default: return;
    }
    if (m->bop == BinOp::LAnd || (m->bop == BinOp::And && m->type.elem == Scalar::I1)) {
      facts(m->args[0], ctx, aligned);
      facts(m->args[1], ctx, aligned);
      return;
    }
    const BinOp b = m->bop;
    if (b != BinOp::Lt && b != BinOp::Le && b != BinOp::Gt && b != BinOp::Ge) return;
    if (m->args[0]->type.ptr || m->args[1]->type.ptr || !is_int(m->args[0]->type.elem) || m->args[0]->type.elem == Scalar::I1) return;
    for (int side = 0; side < 2; ++side) {
      const ExprP& e = m->args[static_cast<size_t>(side)];
      const ExprP& n = m->args[static_cast<size_t>(1 - side)];
      std::vector<Fact> keep;
      keep.swap(facts_);  // no fact applies while the bound itself is read
      std::string keep_why = why_;
      auto nb = value(n, ctx, false);
      facts_.swap(keep);
      why_ = keep_why;
      if (!nb || !uniform(*nb)) continue;
      // e OP n with e on the left (side 0), or n OP e (side 1).
      bool upper = side == 0 ? (b == BinOp::Lt || b == BinOp::Le) : (b == BinOp::Gt || b == BinOp::Ge);
      bool strict = b == BinOp::Lt || b == BinOp::Gt;
      Sym v = nb->lo;
      if (upper) facts_.push_back({e.get(), ctx, nullptr, strict ? sub(v, cst(1)) : v});
      else facts_.push_back({e.get(), ctx, strict ? add(v, cst(1)) : v, nullptr});
    }
  }

  // Values that are 32-bit by what they are: constants, a 32-bit parameter, a grid extent, the pid.
  bool fits32(const Fp& f) const {
    if (rho_free(f) && is_const(f.lo) && is_const(f.hi)) return true;
    if (uniform(f) && f.lo->op == Op::Grid) return true;
    if (uniform(f) && f.lo->op == Op::Param) {
      const Param* p = k_.find_param(f.lo->name);
      return p && p->dtype == Scalar::I32;
    }
    int64_t c;
    return is_const(f.coef, &c) && c == 1 && is_const(f.lo, &c) && c == 0 && is_const(f.hi, &c) && c == 0 && !rho_loops_used_;
  }

  // The range a value takes over every rho (rho in [0, rho_max]).
  Fp range(const Fp& f) const {
    Sym span = mul(f.coef, rho_max_);
    return Fp{cst(0), add(f.lo, smin(cst(0), span)), add(f.hi, smax(cst(0), span))};
  }

  std::optional<Fp> value(const ExprP& e, int ctx, bool aligned) {
    auto f = value_of(e, ctx, aligned);
    if (!f) return f;
    if (aligned && rho_free(*f))
      for (const Fact& fa : facts_)
        if (same_expr(*e, ctx, *fa.e, fa.ctx)) {
          if (fa.lo) f->lo = smax(f->lo, fa.lo);
          if (fa.hi) f->hi = smin(f->hi, fa.hi);
        }
    if (!e->type.ptr && e->type.elem == Scalar::I32 && !fits32(*f)) narrow_.push_back(*f);
    return f;
  }

  std::optional<Fp> value_of(const ExprP& e, int ctx, bool aligned) {
    const Type& t = e->type;
    if (t.ptr) return no("a pointer where an offset was expected");
    if (t.elem != Scalar::I32 && t.elem != Scalar::I64) return no("a value of type " + std::string(scalar_name(t.elem)) + " in the offsets");
    auto arg = [&](size_t i, bool al) { return value(e->args[i], ctx, al); };
    switch (e->kind) {
      case ExprKind::Const: return point(cst(e->ival));
      case ExprKind::ProgramId:
        if (e->axis == 0) return Fp{cst(1), cst(0), cst(0)};
        return point(cst(0));  // the grid's other axes are 1 (a condition)
      case ExprKind::NumPrograms: return point(grid(e->axis));
      case ExprKind::Arange: return Fp{cst(0), cst(e->ints[0]), cst(e->ints[1] - 1)};
      case ExprKind::Full: return value(e->args.back(), ctx, aligned);
      case ExprKind::Var: {
        if (const Param* p = param_of(*e)) {
          if (assigns_[static_cast<size_t>(p->slot)] != 1) return no("parameter '" + p->name + "' is reassigned");
          if (p->kind == ParamKind::Pointer) return no("pointer '" + p->name + "' in the offsets");
          if (p->kind == ParamKind::Constexpr && cx_) {
            auto it = cx_->find(p->name);
            if (it != cx_->end() && !it->second.is_float()) return point(cst(it->second.as_int()));
          }
          return point(param(p->name));
        }
        const Stmt* d = def_before(e->slot, ctx);
        if (!d) return no("variable '" + e->name + "' is assigned more than once or after its use");
        if (d->kind == StmtKind::Assign) return value(d->args[0], d->id, aligned);
        // A loop variable: an instance index, or its range.
        if (rho_loops_.count(e->slot)) {
          rho_loops_used_ = true;
          return Fp{cst(1), cst(0), cst(0)};
        }
        auto lo = value(d->args[0], d->id, false), hi = value(d->args[1], d->id, false), st = value(d->args[2], d->id, false);
        if (!lo || !hi || !st) return std::nullopt;
        if (!uniform(*st)) return no("loop '" + e->name + "' has a step that varies");
        if (!is_const(st->lo) || st->lo->c < 1) conds_.push_back({cst(1), st->lo});
        if (!same(lo->coef, hi->coef)) return no("loop '" + e->name + "' has bounds of different instance strides");
        return Fp{lo->coef, lo->lo, sub(hi->hi, cst(1))};
      }
      case ExprKind::Unary: {
        if (e->uop != UnOp::Neg) return no("unary " + std::string(unop_name(e->uop)) + " in the offsets");
        auto a = arg(0, false);
        if (!a) return a;
        return Fp{sub(cst(0), a->coef), sub(cst(0), a->hi), sub(cst(0), a->lo)};
      }
      case ExprKind::Binary: {
        const BinOp b = e->bop;
        if (b == BinOp::Add || b == BinOp::Sub) {
          auto a = arg(0, aligned), c = arg(1, aligned);
          if (!a || !c) return std::nullopt;
          if (b == BinOp::Add) return Fp{add(a->coef, c->coef), add(a->lo, c->lo), add(a->hi, c->hi)};
          return Fp{sub(a->coef, c->coef), sub(a->lo, c->hi), sub(a->hi, c->lo)};
        }
        if (b == BinOp::Mul || b == BinOp::Shl) {
          auto a = arg(0, aligned), c = arg(1, aligned);
          if (!a || !c) return std::nullopt;
          if (b == BinOp::Shl) {
            int64_t s;
            if (!uniform(*c) || !is_const(c->lo, &s) || s < 0 || s > 40) return no("a shift by a non-constant amount");
            c = point(cst(int64_t(1) << s));
          }
          if (!rho_free(*a) && !rho_free(*c)) return no("a product of two instance-dependent values");
          if (!rho_free(*c) || (rho_free(*a) && uniform(*a) && !uniform(*c))) std::swap(a, c);
          if (uniform(*c)) {  // (coef * rho + [lo, hi]) * k
            Sym k = c->lo, x = mul(a->lo, k), y = mul(a->hi, k);
            return Fp{mul(a->coef, k), smin(x, y), smax(x, y)};
          }
          if (!rho_free(*a)) return no("an instance-dependent value times a tile");
          Sym p1 = mul(a->lo, c->lo), p2 = mul(a->lo, c->hi), p3 = mul(a->hi, c->lo), p4 = mul(a->hi, c->hi);
          return Fp{cst(0), smin(smin(p1, p2), smin(p3, p4)), smax(smax(p1, p2), smax(p3, p4))};
        }
        if (b == BinOp::FloorDiv || b == BinOp::Mod) {
          auto a = arg(0, false), c = arg(1, false);
          if (!a || !c) return std::nullopt;
          if (!uniform(*c)) return no("a division by a value that varies");
          Sym d = c->lo;
          Fp r = range(*a);
          conds_.push_back({cst(0), r.lo});
          conds_.push_back({cst(1), d});
          if (b == BinOp::Mod) {
            if (!rho_free(*a)) {  // x % d == x where 0 <= x < d
              conds_.push_back({r.hi, sub(d, cst(1))});
              return a;
            }
            return Fp{cst(0), cst(0), smin(a->hi, sub(d, cst(1)))};
          }
          if (!rho_free(*a)) return no("an instance index divided");
          return Fp{cst(0), sdiv(a->lo, d), sdiv(a->hi, d)};
        }
        if (b == BinOp::Cdiv) {  // (a + d - 1) // d of uniform a >= 0, d >= 1
          auto a = arg(0, false), c = arg(1, false);
          if (!a || !c) return std::nullopt;
          if (!uniform(*a) || !uniform(*c)) return no("cdiv() of values that vary");
          conds_.push_back({cst(0), a->lo});
          conds_.push_back({cst(1), c->lo});
          return point(sdiv(sub(add(a->lo, c->lo), cst(1)), c->lo));
        }
        if (b == BinOp::Min || b == BinOp::Max) {
          auto a = arg(0, false), c = arg(1, false);
          if (!a || !c) return std::nullopt;
          if (!rho_free(*a) || !rho_free(*c)) return no("minimum/maximum of instance-dependent values");
          if (b == BinOp::Min) return Fp{cst(0), smin(a->lo, c->lo), smin(a->hi, c->hi)};
          return Fp{cst(0), smax(a->lo, c->lo), smax(a->hi, c->hi)};
        }
        return no("operator '" + std::string(binop_name(b)) + "' in the offsets");
      }
      case ExprKind::Where: {
        auto a = arg(1, aligned), c = arg(2, aligned);
        if (!a || !c) return std::nullopt;
        if (!same(a->coef, c->coef)) return no("where() of offsets with different instance strides");
        return Fp{a->coef, smin(a->lo, c->lo), smax(a->hi, c->hi)};
      }
      case ExprKind::Cast: {
        const Scalar from = e->args[0]->type.elem;
        if (from != Scalar::I32 && from != Scalar::I64) return no("a conversion from " + std::string(scalar_name(from)) + " in the offsets");
        if (scalar_bytes(e->dtype) < scalar_bytes(from)) return no("a narrowing conversion in the offsets");
        return arg(0, aligned);
      }
      case ExprKind::Broadcast: return arg(0, aligned);
      case ExprKind::ExpandDims:
      case ExprKind::Reshape:
      case ExprKind::Trans: return arg(0, false);
      case ExprKind::Bitcast:
      case ExprKind::Load:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Swizzle2d:
      case ExprKind::CombineArg:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt: return no(std::string("a ") + expr_kind_name(e->kind) + " in the offsets");
    }
    return no("an expression in the offsets");
  }

  // The offsets of pointer e from the start of buf_.
  std::optional<Fp> pointer(const ExprP& e, int ctx, bool aligned) {
    switch (e->kind) {
      case ExprKind::Var: {
        if (const Param* p = param_of(*e)) {
          if (p != buf_) return no("a pointer into '" + p->name + "'");
          if (assigns_[static_cast<size_t>(p->slot)] != 1) return no("pointer '" + p->name + "' is reassigned");
          return point(cst(0));
        }
        const Stmt* d = def_before(e->slot, ctx);
        if (!d || d->kind != StmtKind::Assign) return no("pointer '" + e->name + "' is assigned more than once or after its use");
        return pointer(d->args[0], d->id, aligned);
      }
      case ExprKind::Binary: {
        if (e->bop != BinOp::Add && e->bop != BinOp::Sub) break;
        const int side = e->args[0]->type.ptr ? 0 : 1;
        if (e->bop == BinOp::Sub && side == 1) break;
        auto p = pointer(e->args[static_cast<size_t>(side)], ctx, aligned);
        auto o = value(e->args[static_cast<size_t>(1 - side)], ctx, aligned);
        if (!p || !o) return std::nullopt;
        if (e->bop == BinOp::Add) return Fp{add(p->coef, o->coef), add(p->lo, o->lo), add(p->hi, o->hi)};
        return Fp{sub(p->coef, o->coef), sub(p->lo, o->hi), sub(p->hi, o->lo)};
      }
      case ExprKind::Where: {
        auto a = pointer(e->args[1], ctx, aligned), c = pointer(e->args[2], ctx, aligned);
        if (!a || !c) return std::nullopt;
        if (!same(a->coef, c->coef)) return no("where() of pointers with different instance strides");
        return Fp{a->coef, smin(a->lo, c->lo), smax(a->hi, c->hi)};
      }
      case ExprKind::Broadcast: return pointer(e->args[0], ctx, aligned);
      case ExprKind::ExpandDims:
      case ExprKind::Reshape:
      case ExprKind::Trans: return pointer(e->args[0], ctx, false);
      default: break;
    }
    return no(std::string("a pointer made by ") + expr_kind_name(e->kind));
  }
};

std::string str(const Sym& s, int prec) {
  auto paren = [&](int p, const std::string& x) { return p < prec ? "(" + x + ")" : x; };
  switch (s->op) {
    case Op::Const: return s->c < 0 && prec > 1 ? "(" + std::to_string(s->c) + ")" : std::to_string(s->c);
    case Op::Param: return s->name;
    case Op::Grid: return "num_programs(" + std::to_string(s->axis) + ")";
    case Op::Add: return paren(1, str(s->a, 1) + " + " + str(s->b, 1));
    case Op::Sub: return paren(1, str(s->a, 1) + " - " + str(s->b, 2));
    case Op::Mul: return paren(2, str(s->a, 2) + " * " + str(s->b, 3));
    case Op::Div: return paren(2, str(s->a, 2) + " // " + str(s->b, 3));
    case Op::Min: return "min(" + str(s->a, 0) + ", " + str(s->b, 0) + ")";
    case Op::Max: return "max(" + str(s->a, 0) + ", " + str(s->b, 0) + ")";
  }
  return "?";
}

using I128 = __int128;
constexpr I128 kLimit = I128(1) << 52;  // the magnitude every value must stay within (as the CUDA emitter's f64)

std::optional<I128> eval(const Sym& s, const std::function<std::optional<int64_t>(const std::string&)>& value, const std::array<int64_t, 3>& g) {
  std::optional<I128> r;
  switch (s->op) {
    case Op::Const: r = s->c; break;
    case Op::Param: {
      auto v = value(s->name);
      if (v) r = *v;
      break;
    }
    case Op::Grid: r = g[static_cast<size_t>(s->axis)]; break;
    default: {
      auto a = eval(s->a, value, g), b = eval(s->b, value, g);
      if (!a || !b) return std::nullopt;
      switch (s->op) {
        case Op::Add: r = *a + *b; break;
        case Op::Sub: r = *a - *b; break;
        case Op::Mul: r = *a * *b; break;
        case Op::Div:
          if (*a < 0 || *b <= 0) return std::nullopt;
          r = *a / *b;
          break;
        case Op::Min: r = std::min(*a, *b); break;
        case Op::Max: r = std::max(*a, *b); break;
        case Op::Const:
        case Op::Param:
        case Op::Grid: break;
      }
    }
  }
  if (!r || *r > kLimit || *r < -kLimit) return std::nullopt;
  return r;
}

}  // namespace footprint_impl

std::string sym_str(const Sym& s) { return footprint_impl::str(s, 0); }

std::string DisjointWrites::summary() const {
  if (!why.empty()) return "not proven: " + why;
  std::string out = "disjoint when ";
  for (size_t i = 0; i < conds.size(); ++i) out += (i ? ", " : "") + sym_str(conds[i].lhs) + " <= " + sym_str(conds[i].rhs);
  if (conds.empty()) out = "disjoint";
  return out;
}

std::vector<DisjointWrites> disjoint_writes(const Kernel& k, const Bindings* constexprs) {
  PointerProvenance prov(k);
  std::map<size_t, std::vector<const Stmt*>> sites;
  std::map<size_t, std::string> why;
  for_each_stmt(k, [&](const Stmt& s) {
    if (s.kind != StmtKind::Store && s.kind != StmtKind::Atomic) return;
    const ExprP& p = s.args[0];
    bool address = any_expr(p, [](const Expr& e) { return e.kind == ExprKind::IntToPtr; });
    std::vector<size_t> bufs = prov.sources(*p).list();
    for (size_t b : bufs) {
      sites[b].push_back(&s);
      if (address) why.emplace(b, "a pointer made from an address may point into it");
      else if (bufs.size() > 1) why.emplace(b, std::string(s.kind == StmtKind::Store ? "the store" : "the atomic") +
                                                   (s.loc.valid() ? " at line " + std::to_string(s.loc.line) : std::string()) +
                                                   " may write several buffers");
    }
  });
  std::vector<DisjointWrites> out;
  footprint_impl::Analyzer an(k, constexprs);
  for (auto& [b, ss] : sites) {
    if (auto it = why.find(b); it != why.end()) {
      DisjointWrites d;
      d.param = b, d.why = it->second;
      for (const Stmt* s : ss) d.sites.push_back(s->id);
      out.push_back(std::move(d));
      continue;
    }
    out.push_back(an.buffer(b, ss));
  }
  return out;
}

bool disjoint_holds(const std::vector<SymLe>& conds, const std::function<std::optional<int64_t>(const std::string&)>& value,
                    const std::array<int64_t, 3>& grid) {
  for (const SymLe& c : conds) {
    auto a = footprint_impl::eval(c.lhs, value, grid), b = footprint_impl::eval(c.rhs, value, grid);
    if (!a || !b || *a > *b) return false;
  }
  return true;
}

}  // namespace dtsim
