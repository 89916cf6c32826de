// Disjoint writes (see Footprint.h): each write site's offsets as a linear form over digits (pids,
// lanes) plus an interval, symbolic.
#include "ir/Footprint.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
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

// Whether s >= 0 for every value (grid extents are >= 1).
bool nonneg(const Sym& s) {
  int64_t v;
  switch (s->op) {
    case Op::Const: return s->c >= 0;
    case Op::Grid: return true;
    case Op::Param: return false;
    case Op::Sub: return s->a->op == Op::Grid && is_const(s->b, &v) && v == 1;
    case Op::Add:
    case Op::Mul:
    case Op::Div:
    case Op::Min: return nonneg(s->a) && nonneg(s->b);
    case Op::Max: return nonneg(s->a) || nonneg(s->b);
  }
  return false;
}
bool small(int64_t x) { return x > -(int64_t(1) << 52) && x < (int64_t(1) << 52); }

// Builders that fold constants (the conditions stay short where the values are known).
Sym add(const Sym& a, const Sym& b) {
  int64_t x, y, z;
  if (is_const(a, &x) && is_const(b, &y) && small(x) && small(y)) return cst(x + y);
  // (u + c) + d, (u - c) + d
  if (is_const(b, &y) && small(y) && (a->op == Op::Add || a->op == Op::Sub) && is_const(a->b, &z) && small(z)) {
    int64_t w = a->op == Op::Add ? z + y : y - z;
    if (w == 0) return a->a;
    return node(w > 0 ? Op::Add : Op::Sub, a->a, cst(w > 0 ? w : -w));
  }
  if (is_const(a, &x) && x == 0) return b;
  if (is_const(b, &y) && y == 0) return a;
  return node(Op::Add, a, b);
}
Sym sub(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y) && small(x) && small(y)) return cst(x - y);
  if (is_const(b, &y) && small(y) && y != 0 && (a->op == Op::Add || a->op == Op::Sub) && is_const(a->b)) return add(a, cst(-y));
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
// min (op Min) or max (op Max), folded: constants, equal operands, 0 against a value known
// non-negative, an operand already inside a nested min/max of the same kind.
Sym extreme(Op op, const Sym& a, const Sym& b) {
  const bool mx = op == Op::Max;
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y)) return cst(mx ? std::max(x, y) : std::min(x, y));
  if (same(a, b)) return a;
  if (is_const(a, &x) && x == 0 && nonneg(b)) return mx ? b : a;
  if (is_const(b, &y) && y == 0 && nonneg(a)) return mx ? a : b;
  if (a->op == op && (same(a->a, b) || same(a->b, b))) return a;
  if (b->op == op && (same(b->a, a) || same(b->b, a))) return b;
  return node(op, a, b);
}
Sym smin(const Sym& a, const Sym& b) { return extreme(Op::Min, a, b); }
Sym smax(const Sym& a, const Sym& b) { return extreme(Op::Max, a, b); }
Sym sdiv(const Sym& a, const Sym& b) {
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y) && x >= 0 && y > 0) return cst(x / y);
  if (is_const(b, &y) && y == 1) return a;
  return node(Op::Div, a, b);
}

// "the store at line N" / "the atomic at line N".
std::string site_name(const Stmt& s) {
  return (s.kind == StmtKind::Store ? "the store" : "the atomic") + (s.loc.valid() ? " at line " + std::to_string(s.loc.line) : std::string());
}

using I128 = __int128;
// The magnitude every value must stay within (element offsets, and their bytes well inside 64 bits).
constexpr I128 kLimit = I128(1) << 52;

// An integer parameter's value in `b`, if any.
std::optional<int64_t> int_value(const Bindings* b, const std::string& name) {
  if (!b) return std::nullopt;
  auto it = b->find(name);
  if (it == b->end() || it->second.is_float()) return std::nullopt;
  return it->second.as_int();
}

// Exact evaluation with the parameter values in b; g null: the grid's extents are unknown.
std::optional<I128> eval(const Sym& s, const Bindings* b, const std::array<int64_t, 3>* g) {
  std::optional<I128> r;
  switch (s->op) {
    case Op::Const: r = s->c; break;
    case Op::Param: {
      auto v = int_value(b, s->name);
      if (v) r = *v;
      break;
    }
    case Op::Grid:
      if (g) r = (*g)[static_cast<size_t>(s->axis)];
      break;
    default: {
      auto a = eval(s->a, b, g), bv = eval(s->b, b, g);
      if (!a || !bv) return std::nullopt;
      switch (s->op) {
        case Op::Add: r = *a + *bv; break;
        case Op::Sub: r = *a - *bv; break;
        case Op::Mul: r = *a * *bv; break;
        case Op::Div:
          if (*a < 0 || *bv <= 0) return std::nullopt;
          r = *a / *bv;
          break;
        case Op::Min: r = std::min(*a, *bv); break;
        case Op::Max: r = std::max(*a, *bv); break;
        case Op::Const:
        case Op::Param:
        case Op::Grid: break;
      }
    }
  }
  if (!r || *r > kLimit || *r < -kLimit) return std::nullopt;
  return r;
}

// A digit of an offset: the pid of grid axis k (key k < 3; key 0 is also an instance loop's
// variable), a lane coordinate of the tile (key kLane + its position counted from the right), or a
// bounded combination of other digits (key kComp + its index). A digit takes [0, count - 1].
constexpr int kLane = 16, kComp = 1 << 20;
struct Term {
  int key;
  Sym coef, count;  // count null for a pid (the grid's extent, or the instance index's)
};
// A write's offsets: sum of coef * digit + r, r in [lo, hi] (terms sorted by key, no zero coef).
struct Fp {
  std::vector<Term> t;
  Sym lo, hi;
};
bool is_lane(int key) { return key >= kLane && key < kComp; }
bool is_pid(int key) { return key < kLane; }
bool uniform(const Fp& f) { return f.t.empty() && same(f.lo, f.hi); }
Fp point(const Sym& s) { return Fp{{}, s, s}; }
Sym sabs(const Sym& a) { return nonneg(a) ? a : smax(a, sub(cst(0), a)); }

// The mask's bound on an expression: its active lanes have e in [lo, hi] (null: no bound). `frame`:
// the expand_dims on the way from the mask to e (axis, rank of its operand), outermost first.
using Frame = std::vector<std::pair<int, int>>;
struct Fact {
  const Expr* e;
  int ctx;
  Sym lo, hi;
  Frame frame;
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
      if (lo->t.size() != 1 || lo->t[0].key != 0 || !is_const(lo->t[0].coef) || lo->t[0].coef->c != 1 || !is_const(lo->lo) || lo->lo->c != 0 ||
          !is_const(lo->hi) || lo->hi->c != 0)
        return;
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
    std::vector<Fp> fps;
    for (const Stmt* s : sites) {
      d.sites.push_back(s->id);
      if (!d.why.empty()) continue;
      facts_.clear(), caps_.clear(), frame_.clear();
      why_.clear();
      const ExprP* mask = nullptr;
      if (s->kind == StmtKind::Store && s->args.size() > 2 && s->args[2]) mask = &s->args[2];
      if (s->kind == StmtKind::Atomic && s->aop != AtomicOp::Cas && s->args.size() > 2 && s->args[2]) mask = &s->args[2];
      Frame fr;
      if (mask) facts(*mask, s->id, fr);
      used_pid0_ = used_loop_ = false;
      auto f = pointer(s->args[0], s->id, true);
      if (f && used_pid0_ && used_loop_) f = no("program_id(0) and an instance loop's variable in one offset");
      if (!f) {
        d.why = site_name(*s) + ": " + (why_.empty() ? "its offsets are not read" : why_);
        continue;
      }
      cap_lanes(*f);
      fps.push_back(*f);
    }
    if (!d.why.empty() || fps.empty()) return d;
    // Several sites: the same digits (then their intervals joined), else their lanes collapsed into
    // their intervals and the same instance digits.
    Fp all = fps[0];
    bool alike = true;
    for (const Fp& f : fps) alike = alike && same_terms(f, all);
    if (!alike) {
      for (Fp& f : fps)
        if (!collapse_lanes(f)) {
          d.why = "several sites, one with a lane and an instance index combined under a mask";
          return d;
        }
      all = fps[0];
      for (const Fp& f : fps)
        if (!same_terms(f, all)) {
          d.why = "its sites have different instance strides";
          return d;
        }
    }
    for (const Fp& f : fps) {
      all.lo = smin(all.lo, f.lo), all.hi = smax(all.hi, f.hi);
      for (size_t i = 0; i < all.t.size(); ++i)  // each site's lanes as its own mask bounds them
        if (all.t[i].count) all.t[i].count = smax(all.t[i].count, f.t[i].count);
    }
    // Mixed radix over every digit, and a grid axis no digit reads must be 1.
    for (auto& c : mixed_radix(all.t, sub(all.hi, all.lo))) d.conds.push_back(c);
    unsigned ax = axes(all);
    for (int a = 0; a < 3; ++a)
      if (!(ax & (1u << a))) d.conds.push_back({grid(a), cst(1)});
    for (auto& c : conds_) d.conds.push_back(c);
    const Sym lim = cst((int64_t(1) << 31) - 1), nlim = cst(-(int64_t(1) << 31));
    for (const Fp& g : narrow_) {
      Fp r = range(g);
      d.conds.push_back({nlim, r.lo});
      d.conds.push_back({r.hi, lim});
    }
    // Short and without repeats.
    std::vector<SymLe> uniq;
    std::set<std::string> seen;
    for (auto& c : d.conds) {
      int64_t x, y;
      if ((is_const(c.lhs, &x) && is_const(c.rhs, &y) && x <= y) || same(c.lhs, c.rhs)) continue;
      if (seen.insert(sym_str(c.lhs) + "<=" + sym_str(c.rhs)).second) uniq.push_back(c);
    }
    d.conds = std::move(uniq);
    return d;
  }

 private:
  struct Comp {
    unsigned axes;  // the grid axes among its digits
    bool lanes;     // whether a lane is among them
  };
  const Kernel& k_;
  const Bindings* cx_;
  const Param* buf_ = nullptr;
  std::vector<int> assigns_;
  std::vector<const Stmt*> def_;
  std::set<int> rho_loops_;
  bool rho_loops_used_ = false;  // rho may exceed the pid (then rho itself is guarded)
  bool used_pid0_ = false, used_loop_ = false;
  Sym rho_max_;
  std::vector<Fact> facts_;
  std::map<int, Sym> caps_;  // lane position -> a bound on its count from the mask
  Frame frame_;              // the expand_dims between the store and the value read now
  std::vector<Comp> comps_;
  std::map<std::string, int> comp_ids_;
  std::vector<SymLe> conds_;
  std::vector<Fp> narrow_;  // 32-bit values on the way: each must fit
  std::vector<SymLe> rho_conds_;
  std::vector<Fp> rho_narrow_;
  std::string why_;

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

  // ---- the linear forms
  Sym count(const Term& t) const {
    if (t.count) return t.count;
    return t.key == 0 ? add(rho_max_, cst(1)) : grid(t.key);
  }
  unsigned axes(const Fp& f) const {
    unsigned m = 0;
    for (const Term& t : f.t) m |= is_pid(t.key) ? 1u << t.key : is_lane(t.key) ? 0u : comps_[static_cast<size_t>(t.key - kComp)].axes;
    return m;
  }
  bool lanes(const Fp& f) const {
    for (const Term& t : f.t)
      if (is_lane(t.key) || (t.key >= kComp && comps_[static_cast<size_t>(t.key - kComp)].lanes)) return true;
    return false;
  }
  static bool same_terms(const Fp& a, const Fp& b) {
    if (a.t.size() != b.t.size()) return false;
    for (size_t i = 0; i < a.t.size(); ++i)
      if (a.t[i].key != b.t[i].key || !same(a.t[i].coef, b.t[i].coef)) return false;
    return true;
  }
  static Fp lin(const Fp& a, const Fp& b, bool minus) {  // a + b, a - b
    Fp r{{}, minus ? sub(a.lo, b.hi) : add(a.lo, b.lo), minus ? sub(a.hi, b.lo) : add(a.hi, b.hi)};
    size_t i = 0, j = 0;
    while (i < a.t.size() || j < b.t.size()) {
      if (j == b.t.size() || (i < a.t.size() && a.t[i].key < b.t[j].key)) {
        r.t.push_back(a.t[i++]);
        continue;
      }
      Term y = b.t[j++];
      if (minus) y.coef = sub(cst(0), y.coef);
      if (i < a.t.size() && a.t[i].key == y.key) {
        const Term& x = a.t[i++];
        y.coef = add(x.coef, y.coef);
        if (x.count) y.count = smin(x.count, y.count);
      }
      int64_t c;
      if (is_const(y.coef, &c) && c == 0) continue;
      r.t.push_back(y);
    }
    return r;
  }
  static Fp scale(const Fp& a, const Sym& k) {
    Fp r{{}, nullptr, nullptr};
    Sym x = mul(a.lo, k), y = mul(a.hi, k);
    r.lo = smin(x, y), r.hi = smax(x, y);
    for (const Term& t : a.t) {
      Sym c = mul(t.coef, k);
      int64_t v;
      if (is_const(c, &v) && v == 0) continue;
      r.t.push_back(Term{t.key, c, t.count});
    }
    return r;
  }
  // The terms that `pick` selects collapsed into the interval.
  template <class Pick>
  Fp collapse(const Fp& f, Pick pick) const {
    Fp r{{}, f.lo, f.hi};
    for (const Term& t : f.t) {
      if (!pick(t)) {
        r.t.push_back(t);
        continue;
      }
      Sym span = mul(t.coef, sub(count(t), cst(1)));
      r.lo = add(r.lo, smin(cst(0), span)), r.hi = add(r.hi, smax(cst(0), span));
    }
    return r;
  }
  // The range a value takes over every instance and lane.
  Fp range(const Fp& f) const {
    return collapse(f, [](const Term&) { return true; });
  }
  // Its lanes into the interval (false where a lane is bound up with an instance index).
  bool collapse_lanes(Fp& f) const {
    for (const Term& t : f.t)
      if (t.key >= kComp && comps_[static_cast<size_t>(t.key - kComp)].lanes && comps_[static_cast<size_t>(t.key - kComp)].axes) return false;
    f = collapse(f, [&](const Term& t) { return is_lane(t.key) || t.key >= kComp; });
    return true;
  }
  // The value of |coef| for the launch's values where known (the digits' order).
  std::optional<I128> estimate(const Sym& s) const {
    auto r = eval(s, cx_, nullptr);
    if (r && *r < 0) r = -*r;
    return r;
  }
  // Distinct digit values give distinct offsets, whatever r in an interval of width `span`: along
  // the digits by |coef|, each |coef| exceeds what the interval and the smaller digits span.
  std::vector<SymLe> mixed_radix(std::vector<Term> ts, Sym span) const {
    std::vector<std::pair<std::optional<I128>, size_t>> order;
    for (size_t i = 0; i < ts.size(); ++i) order.push_back({estimate(ts[i].coef), i});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      if (a.first && b.first) return *a.first < *b.first;
      return a.first.has_value() && !b.first.has_value();
    });
    std::vector<SymLe> out;
    for (auto& [est, i] : order) {
      const Term& t = ts[i];
      Sym n1 = sub(count(t), cst(1)), c = sabs(t.coef);
      int64_t v;
      if (is_const(n1, &v) && v == 0) continue;
      out.push_back({mul(add(span, cst(1)), n1), mul(c, n1)});
      span = add(span, mul(c, n1));
    }
    return out;
  }
  // f bounded by the mask to [lo, hi] (lo may be null): one digit, when its digits are distinct. Two
  // exact forms alike are one value, so one digit (sites of a buffer then compare equal).
  Fp combine(const Fp& f, const Sym& flo, const Sym& fhi) {
    for (auto& c : mixed_radix(f.t, sub(f.hi, f.lo))) conds_.push_back(c);
    Fp r = range(f);
    Sym lo = flo ? smax(r.lo, flo) : r.lo, hi = smin(r.hi, fhi);
    std::string sig = sym_str(f.lo) + "|" + sym_str(f.hi) + "|" + sym_str(lo) + "|" + sym_str(hi);
    for (const Term& t : f.t) sig += "|" + std::to_string(t.key) + ":" + sym_str(t.coef) + ":" + sym_str(count(t));
    if (!same(f.lo, f.hi)) sig += "|#" + std::to_string(comps_.size());  // not one value: a digit of its own
    auto [it, fresh] = comp_ids_.emplace(sig, static_cast<int>(comps_.size()));
    if (fresh) comps_.push_back(Comp{axes(f), lanes(f)});
    return Fp{{Term{kComp + it->second, cst(1), add(sub(hi, lo), cst(1))}}, lo, lo};
  }
  void cap_lanes(Fp& f) const {
    for (Term& t : f.t)
      if (is_lane(t.key))
        if (auto it = caps_.find(t.key - kLane); it != caps_.end()) t.count = smin(t.count, it->second);
  }
  // Through expand_dims(axis) of an operand of rank r: the lanes left of the new axis move one left.
  static Fp expand(Fp f, int axis, int r) {
    for (Term& t : f.t)
      if (is_lane(t.key) && t.key - kLane >= r - axis) ++t.key;
    return f;
  }
  static Fp unframe(Fp f, const Frame& fr) {
    for (size_t i = fr.size(); i-- > 0;) f = expand(std::move(f), fr[i].first, fr[i].second);
    return f;
  }
  static int axis_of(const Expr& e) {
    int r = e.args[0]->type.rank();
    int ax = !e.ints.empty() ? static_cast<int>(e.ints[0]) : e.axis;
    return ax < 0 ? ax + r + 1 : ax;
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
      case ExprKind::Gather:
      case ExprKind::Histogram:
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
      case ExprKind::PtrToInt:
      case ExprKind::Machine: return false;  // two readings of a clock differ
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


  // What the mask says of the lanes that write: bounds on expressions compared with uniform values,
  // and on the count of a lane that such an expression is (plus an instance-uniform value).
  void facts(const ExprP& m, int ctx, Frame& fr) {
    switch (m->kind) {
      case ExprKind::Var: {
        if (const Stmt* d = def_before(m->slot, ctx); d && d->kind == StmtKind::Assign) facts(d->args[0], d->id, fr);
        return;
      }
      case ExprKind::Broadcast: facts(m->args[0], ctx, fr); return;
      case ExprKind::ExpandDims:
        fr.push_back({axis_of(*m), m->args[0]->type.rank()});
        facts(m->args[0], ctx, fr);
        fr.pop_back();
        return;
      case ExprKind::Binary: break;
      default: return;
    }
    if (m->bop == BinOp::LAnd || (m->bop == BinOp::And && m->type.elem == Scalar::I1)) {
      facts(m->args[0], ctx, fr);
      facts(m->args[1], ctx, fr);
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
      Frame keep_frame;
      keep_frame.swap(frame_);
      auto nb = value(n, ctx, false);
      std::optional<Fp> ev;
      if (nb && uniform(*nb)) ev = value(e, ctx, false);
      frame_.swap(keep_frame);
      facts_.swap(keep);
      why_ = keep_why;
      if (!nb || !uniform(*nb)) continue;
      // e OP n with e on the left (side 0), or n OP e (side 1).
      bool upper = side == 0 ? (b == BinOp::Lt || b == BinOp::Le) : (b == BinOp::Gt || b == BinOp::Ge);
      bool strict = b == BinOp::Lt || b == BinOp::Gt;
      Sym v = nb->lo;
      if (upper) facts_.push_back({e.get(), ctx, nullptr, strict ? sub(v, cst(1)) : v, fr});
      else facts_.push_back({e.get(), ctx, strict ? add(v, cst(1)) : v, nullptr, fr});
      // e = lane + u, u uniform in an instance: lane <= hi - min(u).
      if (!upper || !ev) continue;
      Fp f = unframe(*ev, fr);
      int lane = -1, nl = 0;
      for (const Term& t : f.t)
        if (is_lane(t.key)) {
          ++nl;
          if (is_const(t.coef) && t.coef->c == 1) lane = t.key - kLane;
        }
      if (nl != 1 || lane < 0) continue;
      Fp u = collapse(f, [](const Term& t) { return is_pid(t.key); });
      Sym cap = add(sub(facts_.back().hi, u.lo), cst(1));
      auto [it, fresh] = caps_.emplace(lane, cap);
      if (!fresh) it->second = smin(it->second, cap);
    }
  }

  // Values that are 32-bit by what they are: constants, arange, a 32-bit parameter, a grid extent, a pid.
  bool fits32(const Fp& f) const {
    bool consts = is_const(f.lo) && is_const(f.hi);
    for (const Term& t : f.t) consts = consts && is_lane(t.key) && is_const(t.coef) && is_const(t.count);
    if (consts) return true;
    if (uniform(f) && f.lo->op == Op::Grid) return true;
    if (uniform(f) && f.lo->op == Op::Param) {
      const Param* p = k_.find_param(f.lo->name);
      return p && p->dtype == Scalar::I32;
    }
    int64_t c;
    return f.t.size() == 1 && is_pid(f.t[0].key) && is_const(f.t[0].coef, &c) && c == 1 && is_const(f.lo, &c) && c == 0 && is_const(f.hi, &c) &&
           c == 0 && (f.t[0].key != 0 || !rho_loops_used_);
  }

  std::optional<Fp> value(const ExprP& e, int ctx, bool aligned) {
    auto f = value_of(e, ctx, aligned);
    if (!f) return f;
    if (aligned) {
      if (frame_.empty()) cap_lanes(*f);
      Sym lo, hi;
      for (const Fact& fa : facts_)
        if (fa.frame == frame_ && same_expr(*e, ctx, *fa.e, fa.ctx)) {
          if (fa.lo) lo = lo ? smax(lo, fa.lo) : fa.lo;
          if (fa.hi) hi = hi ? smin(hi, fa.hi) : fa.hi;
        }
      if (f->t.empty()) {
        if (lo) f->lo = smax(f->lo, lo);
        if (hi) f->hi = smin(f->hi, hi);
      } else if (hi) {
        f = combine(*f, lo, hi);
      }
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
        if (e->axis == 0) used_pid0_ = true;
        return Fp{{Term{e->axis, cst(1), nullptr}}, cst(0), cst(0)};
      case ExprKind::NumPrograms: return point(grid(e->axis));
      case ExprKind::Arange:
        if (e->ints[1] - e->ints[0] == 1) return point(cst(e->ints[0]));
        return Fp{{Term{kLane, cst(1), cst(e->ints[1] - e->ints[0])}}, cst(e->ints[0]), cst(e->ints[0])};
      case ExprKind::Full: return value(e->args.back(), ctx, aligned);
      case ExprKind::Var: {
        if (const Param* p = param_of(*e)) {
          if (assigns_[static_cast<size_t>(p->slot)] != 1) return no("parameter '" + p->name + "' is reassigned");
          if (p->kind == ParamKind::Pointer) return no("pointer '" + p->name + "' in the offsets");
          if (p->kind == ParamKind::Constexpr)
            if (auto v = int_value(cx_, p->name)) return point(cst(*v));
          return point(param(p->name));
        }
        const Stmt* d = def_before(e->slot, ctx);
        if (!d) return no("variable '" + e->name + "' is assigned more than once or after its use");
        if (d->kind == StmtKind::Assign) return value(d->args[0], d->id, aligned);
        // A loop variable: an instance index, or its range.
        if (rho_loops_.count(e->slot)) {
          rho_loops_used_ = true, used_loop_ = true;
          return Fp{{Term{0, cst(1), nullptr}}, cst(0), cst(0)};
        }
        auto lo = value(d->args[0], d->id, false), hi = value(d->args[1], d->id, false), st = value(d->args[2], d->id, false);
        if (!lo || !hi || !st) return std::nullopt;
        if (!uniform(*st)) return no("loop '" + e->name + "' has a step that varies");
        if (!is_const(st->lo) || st->lo->c < 1) conds_.push_back({cst(1), st->lo});
        if (lanes(*lo) || lanes(*hi) || !same_terms(*lo, *hi)) return no("loop '" + e->name + "' has bounds of different instance strides");
        return Fp{lo->t, lo->lo, sub(hi->hi, cst(1))};
      }
      case ExprKind::Unary: {
        if (e->uop != UnOp::Neg) return no("unary " + std::string(unop_name(e->uop)) + " in the offsets");
        auto a = arg(0, false);
        if (!a) return a;
        return lin(point(cst(0)), *a, true);
      }
      case ExprKind::Binary: {
        const BinOp b = e->bop;
        if (b == BinOp::Add || b == BinOp::Sub) {
          auto a = arg(0, aligned), c = arg(1, aligned);
          if (!a || !c) return std::nullopt;
          return lin(*a, *c, b == BinOp::Sub);
        }
        if (b == BinOp::Mul || b == BinOp::Shl) {
          auto a = arg(0, aligned), c = arg(1, aligned);
          if (!a || !c) return std::nullopt;
          if (b == BinOp::Shl) {
            int64_t s;
            if (!uniform(*c) || !is_const(c->lo, &s) || s < 0 || s > 40) return no("a shift by a non-constant amount");
            c = point(cst(int64_t(1) << s));
          }
          if (uniform(*a) && !uniform(*c)) std::swap(a, c);
          if (uniform(*c)) return scale(*a, c->lo);  // (sum coef * digit + [lo, hi]) * k
          if (axes(*a) || axes(*c)) return no("a product of two instance-dependent values");
          Fp x = range(*a), y = range(*c);
          Sym p1 = mul(x.lo, y.lo), p2 = mul(x.lo, y.hi), p3 = mul(x.hi, y.lo), p4 = mul(x.hi, y.hi);
          return Fp{{}, smin(smin(p1, p2), smin(p3, p4)), smax(smax(p1, p2), smax(p3, p4))};
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
            if (axes(*a)) {  // x % d == x where 0 <= x < d
              conds_.push_back({r.hi, sub(d, cst(1))});
              return a;
            }
            return Fp{{}, cst(0), smin(r.hi, sub(d, cst(1)))};
          }
          if (axes(*a)) return no("an instance index divided");
          return Fp{{}, sdiv(r.lo, d), sdiv(r.hi, d)};
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
          if (axes(*a) || axes(*c)) return no("minimum/maximum of instance-dependent values");
          Fp x = range(*a), y = range(*c);
          if (b == BinOp::Min) return Fp{{}, smin(x.lo, y.lo), smin(x.hi, y.hi)};
          return Fp{{}, smax(x.lo, y.lo), smax(x.hi, y.hi)};
        }
        return no("operator '" + std::string(binop_name(b)) + "' in the offsets");
      }
      case ExprKind::Where: {
        auto a = arg(1, aligned), c = arg(2, aligned);
        if (!a || !c) return std::nullopt;
        return join(*a, *c, "where() of offsets with different instance strides");
      }
      case ExprKind::Cast: {
        const Scalar from = e->args[0]->type.elem;
        if (from != Scalar::I32 && from != Scalar::I64) return no("a conversion from " + std::string(scalar_name(from)) + " in the offsets");
        if (scalar_bytes(e->dtype) < scalar_bytes(from)) return no("a narrowing conversion in the offsets");
        return arg(0, aligned);
      }
      case ExprKind::Broadcast: return arg(0, aligned);
      case ExprKind::ExpandDims: return expand_dims(*e, ctx, aligned, false);
      case ExprKind::Reshape:
      case ExprKind::Trans: {
        auto a = arg(0, false);
        if (a && !collapse_lanes(*a)) return no("a reshape of a lane and an instance index combined under a mask");
        return a;
      }
      case ExprKind::Bitcast:
      case ExprKind::Load:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Swizzle2d:
      case ExprKind::CombineArg:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt:
      case ExprKind::Gather:
      case ExprKind::Histogram: return no(std::string("a ") + expr_kind_name(e->kind) + " in the offsets");
      case ExprKind::Machine: return no(std::string("a reading of ") + machine_reg_name(static_cast<MachineReg>(e->axis)) + " in the offsets");
    }
    return no("an expression in the offsets");
  }

  // expand_dims: its operand read in the frame one expand_dims further (the mask's facts there).
  std::optional<Fp> expand_dims(const Expr& e, int ctx, bool aligned, bool ptr) {
    const int ax = axis_of(e), r = e.args[0]->type.rank();
    frame_.push_back({ax, r});
    auto a = ptr ? pointer(e.args[0], ctx, aligned) : value(e.args[0], ctx, aligned);
    frame_.pop_back();
    if (!a) return a;
    return expand(*a, ax, r);
  }

  // Either of two offsets: the same digits (their intervals joined), else lanes into the intervals.
  std::optional<Fp> join(Fp a, Fp c, const std::string& why) {
    if (!same_terms(a, c) && (!collapse_lanes(a) || !collapse_lanes(c) || !same_terms(a, c))) return no(why);
    for (size_t i = 0; i < a.t.size(); ++i)
      if (a.t[i].count) a.t[i].count = smax(a.t[i].count, c.t[i].count);
    a.lo = smin(a.lo, c.lo), a.hi = smax(a.hi, c.hi);
    return a;
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
        return lin(*p, *o, e->bop == BinOp::Sub);
      }
      case ExprKind::Where: {
        auto a = pointer(e->args[1], ctx, aligned), c = pointer(e->args[2], ctx, aligned);
        if (!a || !c) return std::nullopt;
        return join(*a, *c, "where() of pointers with different instance strides");
      }
      case ExprKind::Broadcast: return pointer(e->args[0], ctx, aligned);
      case ExprKind::ExpandDims: return expand_dims(*e, ctx, aligned, true);
      case ExprKind::Reshape:
      case ExprKind::Trans: {
        auto a = pointer(e->args[0], ctx, false);
        if (a && !collapse_lanes(*a)) return no("a reshape of a lane and an instance index combined under a mask");
        return a;
      }
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
      else if (bufs.size() > 1) why.emplace(b, footprint_impl::site_name(s) + " may write several buffers");
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

bool DisjointWrites::holds(const Kernel& k, const Bindings& b) const {
  if (!why.empty()) return false;
  std::array<int64_t, 3> grid = grid_extents(k, b);
  for (const SymLe& c : conds) {
    auto x = footprint_impl::eval(c.lhs, &b, &grid), y = footprint_impl::eval(c.rhs, &b, &grid);
    if (!x || !y || *x > *y) return false;
  }
  return true;
}

}  // namespace dtsim
