// Semantic checks of a parsed `.dt` program: names, ranks, reductions, element types, cycles between
// Funcs, and the schedule calls resolved into each Func's DtSchedule (with their legality rules).
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "frontend/DtAst.h"

namespace dtsim {

const char* dt_sym_kind_name(DtSymKind k) {
  switch (k) {
    case DtSymKind::Func: return "Func";
    case DtSymKind::In: return "In";
    case DtSymKind::SIn: return "SIn";
    case DtSymKind::Var: return "Var";
    case DtSymKind::RVar: return "RVar";
  }
  return "?";
}

const DtSymbol& DtProgram::sym(const std::string& n) const {
  const DtSymbol* s = find(n);
  if (!s) internal_error("DtSema", "unknown symbol " + n);
  return *s;
}

namespace {
template <class Op, size_t N> std::optional<Op> dt_op(const Op (&all)[N], const std::string& name, OpForm form) {
  for (Op op : all)
    if (op_info(op).form == form && op_info(op).dt[0] && name == op_info(op).dt) return op;
  return std::nullopt;
}
}  // namespace

std::optional<UnOp> dt_call_unop(const std::string& fn) { return dt_op(kAllUnOps, fn, OpForm::Call); }
std::optional<BinOp> dt_call_binop(const std::string& fn) { return dt_op(kAllBinOps, fn, OpForm::Call); }
std::optional<BinOp> dt_infix_binop(const std::string& op) { return dt_op(kAllBinOps, op, OpForm::Infix); }
std::optional<RedOp> dt_redop(const std::string& fn) { return dt_op(kAllRedOps, fn, OpForm::Call); }

bool dt_is_reduction(const std::string& fn) { return dt_redop(fn) || fn == "rdot"; }

int64_t dt_next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

void dt_collect_reads(const DtExprP& e, std::set<std::string>& out) {
  if (e->kind == DtExprKind::Access) out.insert(e->name);
  if (e->kind == DtExprKind::Access) return;
  for (auto& a : e->args) dt_collect_reads(a, out);
}

std::string dt_expr_str(const DtExprP& e) {
  switch (e->kind) {
    case DtExprKind::Num: {
      if (std::isinf(e->num)) return e->num > 0 ? "inf" : "-inf";
      std::ostringstream os;
      if (e->is_int) os << static_cast<int64_t>(e->num);
      else { os.precision(9); os << e->num; if (os.str().find_first_of(".e") == std::string::npos) os << ".0"; }
      return os.str();
    }
    case DtExprKind::Name: return e->name;
    case DtExprKind::Access:
    case DtExprKind::Call: {
      std::string s = e->name + (e->kind == DtExprKind::Access ? "[" : "(");
      for (size_t i = 0; i < e->args.size(); ++i) s += (i ? ", " : "") + dt_expr_str(e->args[i]);
      return s + (e->kind == DtExprKind::Access ? "]" : ")");
    }
    case DtExprKind::Binary: return "(" + dt_expr_str(e->args[0]) + " " + e->op + " " + dt_expr_str(e->args[1]) + ")";
    case DtExprKind::Neg: return "-" + dt_expr_str(e->args[0]);
  }
  return "";
}

std::string dt_call_str(const DtSchedCall& c) {
  std::string s = c.func + "." + c.prim + "(";
  for (size_t i = 0; i < c.args.size(); ++i) {
    const DtSchedArg& a = c.args[i];
    s += i ? ", " : "";
    if (a.name.empty()) s += std::to_string(a.value);
    else if (a.factor) s += a.name + ":" + a.inner + "/" + std::to_string(a.factor);
    else if (a.has_value) s += a.name + ":" + std::to_string(a.value);
    else s += a.name;
  }
  return s + ");";
}

static int float_rank(Scalar s) { return s == Scalar::F64 ? 3 : s == Scalar::F32 ? 2 : 1; }

Scalar dt_promote(const DtExpr& a, const DtExpr& b) {
  if (a.weak && b.weak) return (is_float(a.type) || is_float(b.type)) ? Scalar::F32 : Scalar::I32;
  if (a.weak || b.weak) {
    const DtExpr& lit = a.weak ? a : b;
    const DtExpr& other = a.weak ? b : a;
    if (is_float(lit.type) && is_int(other.type)) return Scalar::F32;
    return other.type;
  }
  if (is_float(a.type) != is_float(b.type)) return is_float(a.type) ? a.type : b.type;
  if (is_float(a.type)) {
    if (a.type == b.type) return a.type;
    if (float_rank(a.type) == float_rank(b.type)) return Scalar::F32;  // f16 with bf16
    return float_rank(a.type) > float_rank(b.type) ? a.type : b.type;
  }
  return scalar_bytes(a.type) >= scalar_bytes(b.type) && a.type != Scalar::I1 ? a.type : b.type;
}

namespace {

class Checker {
 public:
  explicit Checker(DtProgram& p) : p_(p) {}

  void run() {
    for (const std::string& f : p_.def_order) {
      DtSymbol& s = *p_.find(f);
      cur_ = &s;
      check(s.def, {});
    }
    check_cycles();
  }

 private:
  DtProgram& p_;
  DtSymbol* cur_ = nullptr;

  const DtSymbol& declared(const DtExprP& e) {
    const DtSymbol* s = p_.find(e->name);
    if (!s) user_error(e->loc, "'" + e->name + "' is not declared");
    return *s;
  }

  const DtSymbol& dim(const DtExprP& e, const std::string& ctx) {
    if (e->kind != DtExprKind::Name) user_error(e->loc, ctx + " needs a dimension name here");
    const DtSymbol& s = declared(e);
    if (s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar)
      user_error(e->loc, "'" + e->name + "' is a " + dt_sym_kind_name(s.kind) + ", not a dimension (Var/RVar)");
    return s;
  }

  std::string dims_str(const std::vector<std::string>& d) {
    std::string s;
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + d[i];
    return s;
  }

  // Checks that index dim `d` is available: an output dim of the Func being defined, or bound by an
  // enclosing reduction.
  void check_bound(const DtExprP& ix, const std::set<std::string>& bound) {
    const DtSymbol& d = dim(ix, "an index");
    bool out = std::find(cur_->dims.begin(), cur_->dims.end(), d.name) != cur_->dims.end();
    if (out || bound.count(d.name)) return;
    if (d.kind == DtSymKind::RVar)
      user_error(ix->loc, "RVar '" + d.name + "' is used outside a reduction over it (reduce it with rsum/rmax/rmin/rdot(..., " + d.name +
                              ") or make it a dim of " + cur_->name + ")");
    user_error(ix->loc, "'" + d.name + "' is not a dimension of " + cur_->name + " (its dims: " + dims_str(cur_->dims) + ")");
  }

  void check_access(const DtExprP& e, const std::set<std::string>& bound) {
    DtSymbol& s = *p_.find(e->name);
    if (s.kind != DtSymKind::In && s.kind != DtSymKind::Func)
      user_error(e->loc, "'" + e->name + "' is " + (s.kind == DtSymKind::SIn ? "an SIn scalar" : std::string("a ") + dt_sym_kind_name(s.kind)) +
                             " and cannot be indexed");
    std::vector<std::string> dims;
    for (auto& ix : e->args) {
      check_bound(ix, bound);
      dims.push_back(ix->name);
    }
    if (s.kind == DtSymKind::Func && !s.defined) user_error(e->loc, "Func '" + s.name + "' is used but never defined");
    if (s.kind == DtSymKind::In && s.dims.empty()) {
      s.dims = dims;
      s.dims_loc = e->loc;
    }
    if (dims.size() != s.dims.size())
      user_error(e->loc, "rank mismatch: '" + s.name + "' has " + std::to_string(s.dims.size()) + " dims (" + s.name + "[" + dims_str(s.dims) +
                             "]) but is accessed with " + std::to_string(dims.size()));
    // Another order or a repeated dim reads the same buffer: each position's dim takes the size of
    // the tensor's own dim there.
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != s.dims[i]) p_.ties.push_back({s.dims[i], dims[i], s.name, i, dt_expr_str(e), e->loc});
    e->type = s.dtype;
  }

  void check_call(const DtExprP& e, const std::set<std::string>& bound) {
    const std::string& fn = e->name;
    auto nargs = [&](size_t n) {
      if (e->args.size() != n) user_error(e->loc, fn + "() takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " + std::to_string(e->args.size()));
    };
    if (std::optional<UnOp> op = dt_call_unop(fn)) {
      nargs(1);
      check(e->args[0], bound);
      Scalar t = e->args[0]->type;
      TypeRule rule = op_info(*op).rule;
      std::optional<Scalar> rt = op_result_elem(rule, t);
      if (!rt) user_error(e->loc, fn + "() needs an integer or boolean operand, got " + scalar_name(t));
      e->type = *rt;
      e->weak = e->args[0]->weak && rule != TypeRule::FloatFn;
    } else if (dt_call_binop(fn)) {
      nargs(2);
      check(e->args[0], bound);
      check(e->args[1], bound);
      e->type = dt_promote(*e->args[0], *e->args[1]);
      e->weak = e->args[0]->weak && e->args[1]->weak;
    } else if (fn == "where") {
      nargs(3);
      for (auto& a : e->args) check(a, bound);
      e->type = dt_promote(*e->args[1], *e->args[2]);
      e->weak = e->args[1]->weak && e->args[2]->weak;
    } else if (dt_is_reduction(fn)) {
      nargs(fn == "rdot" ? 3 : 2);
      const DtSymbol& r = dim(e->args.back(), fn + "()");
      if (r.kind != DtSymKind::RVar)
        user_error(e->args.back()->loc, fn + "() reduces over an RVar, but '" + r.name + "' is a Var (declare it with `RVar " + r.name + ";`)");
      if (bound.count(r.name)) user_error(e->args.back()->loc, "'" + r.name + "' is already being reduced by an enclosing reduction");
      if (std::find(cur_->dims.begin(), cur_->dims.end(), r.name) != cur_->dims.end())
        user_error(e->args.back()->loc, "'" + r.name + "' is a dim of " + cur_->name + " and cannot also be reduced in its definition");
      std::set<std::string> inner = bound;
      inner.insert(r.name);
      for (size_t i = 0; i + 1 < e->args.size(); ++i) check(e->args[i], inner);
      Scalar t = e->args[0]->type;
      if (fn == "rdot") e->type = Scalar::F32;
      else if (fn == "rsum") e->type = is_float(t) ? (t == Scalar::F64 ? Scalar::F64 : Scalar::F32) : Scalar::I32;
      else e->type = t == Scalar::I1 ? Scalar::I32 : t;
    } else if (fn == "reshape") {
      if (e->args.size() < 2) user_error(e->loc, "reshape() takes an expression and the result's dims, e.g. reshape(s[x], x, 1)");
      check(e->args[0], bound);
      for (size_t i = 1; i < e->args.size(); ++i) {
        const DtExprP& a = e->args[i];
        if (a->kind == DtExprKind::Num && a->is_int && a->num == 1) continue;
        dim(a, "reshape()");
      }
      e->type = e->args[0]->type;
      e->weak = e->args[0]->weak;
    } else if (fn == "len") {
      nargs(1);
      dim(e->args[0], "len()");
      e->type = Scalar::I32;
    } else {
      std::string names = "rdot";
      auto add = [&](auto op) {
        if (op_info(op).form == OpForm::Call && op_info(op).dt[0]) names += std::string(" ") + op_info(op).dt;
      };
      for (RedOp op : kAllRedOps) add(op);
      names += " reshape len";
      for (UnOp op : kAllUnOps) add(op);
      for (BinOp op : kAllBinOps) add(op);
      user_error(e->loc, "unknown function '" + fn + "' (built-ins: " + names + " where)");
    }
  }

  void check(const DtExprP& e, const std::set<std::string>& bound) {
    switch (e->kind) {
      case DtExprKind::Num:
        e->type = e->is_int ? Scalar::I32 : Scalar::F32;
        e->weak = true;
        return;
      case DtExprKind::Name: {
        const DtSymbol& s = declared(e);
        if (s.kind == DtSymKind::SIn) { e->type = s.dtype; return; }
        if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) {
          // A dim as a value is the index of the point being computed (i32), e.g. the causal
          // mask where(l <= m, ..., -inf); it must be in scope as an index would be.
          check_bound(e, bound);
          e->is_dim = true;
          e->type = Scalar::I32;
          return;
        }
        user_error(e->loc, "'" + e->name + "' is a tensor; index it, e.g. " + e->name + "[...]");
      }
      case DtExprKind::Access:
        declared(e);
        check_access(e, bound);
        return;
      case DtExprKind::Call: check_call(e, bound); return;
      case DtExprKind::Binary: {
        check(e->args[0], bound);
        check(e->args[1], bound);
        e->weak = e->args[0]->weak && e->args[1]->weak;
        std::optional<BinOp> op = dt_infix_binop(e->op);
        if (!op) internal_error("DtSema", "operator '" + e->op + "' has no IR op");
        std::optional<Scalar> rt = op_result_elem(op_info(*op).rule, dt_promote(*e->args[0], *e->args[1]));
        if (!rt) user_error(e->loc, "'" + e->op + "' needs integer operands");
        e->type = *rt;
        if (op_info(*op).rule == TypeRule::ToBool) e->weak = false;
        return;
      }
      case DtExprKind::Neg:
        check(e->args[0], bound);
        e->type = e->args[0]->type == Scalar::I1 ? Scalar::I32 : e->args[0]->type;
        e->weak = e->args[0]->weak;
        return;
    }
  }

  void check_cycles() {
    std::map<std::string, int> state;  // 1 = on stack, 2 = done
    std::vector<std::string> stack;
    std::function<void(const std::string&)> visit = [&](const std::string& f) {
      state[f] = 1;
      stack.push_back(f);
      std::set<std::string> reads;
      dt_collect_reads(p_.sym(f).def, reads);
      for (const std::string& r : reads) {
        if (p_.sym(r).kind != DtSymKind::Func) continue;
        if (state[r] == 1) {
          std::string path;
          auto it = std::find(stack.begin(), stack.end(), r);
          for (; it != stack.end(); ++it) path += *it + " -> ";
          user_error(p_.sym(f).def_loc, "cycle between Funcs: " + path + r);
        }
        if (state[r] == 0) visit(r);
      }
      stack.pop_back();
      state[f] = 2;
    };
    for (const std::string& f : p_.def_order)
      if (state[f] == 0) visit(f);
  }
};

// The dims over which `e` reduces (RVars of rsum/rmax/rmin/rdot), in order of appearance.
void reduced_dims(const DtExprP& e, std::vector<std::string>& out) {
  if (e->kind == DtExprKind::Call && dt_is_reduction(e->name))
    if (std::find(out.begin(), out.end(), e->args.back()->name) == out.end()) out.push_back(e->args.back()->name);
  for (auto& a : e->args) reduced_dims(a, out);
}

bool reads_transitively(const DtProgram& p, const std::string& c, const std::string& target) {
  std::set<std::string> reads;
  dt_collect_reads(p.sym(c).def, reads);
  for (const std::string& r : reads) {
    if (r == target) return true;
    if (p.sym(r).kind == DtSymKind::Func && reads_transitively(p, r, target)) return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

void apply_call(DtProgram& p, const DtSchedCall& c) {
  DtSymbol* f = p.find(c.func);
  if (!f) user_error(c.loc, "'" + c.func + "' is not declared");
  if (f->kind != DtSymKind::Func) user_error(c.loc, "'" + c.func + "' is a " + dt_sym_kind_name(f->kind) + "; only a Func has a schedule");
  if (!f->defined) user_error(c.loc, "Func '" + c.func + "' is scheduled but never defined");
  DtSchedule& s = f->sched;
  auto want_args = [&](size_t n) {
    if (c.args.size() != n) user_error(c.loc, c.prim + "() takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " + std::to_string(c.args.size()));
  };
  auto dim_arg = [&](const DtSchedArg& a) {
    if (a.name.empty()) user_error(a.loc, c.prim + "() needs `dim:extent` arguments");
    const DtSymbol* d = p.find(a.name);
    if (!d) user_error(a.loc, "'" + a.name + "' is not declared");
    if (d->kind != DtSymKind::Var && d->kind != DtSymKind::RVar) user_error(a.loc, "'" + a.name + "' is not a dimension (Var/RVar)");
    if (!a.has_value || a.factor) user_error(a.loc, c.prim + "() needs an extent: write " + a.name + ":N");
  };
  if (c.prim == "block") {
    if (c.args.empty()) user_error(c.loc, "block() needs at least one `dim:size`");
    for (const DtSchedArg& a : c.args) {
      dim_arg(a);
      if (std::find(f->dims.begin(), f->dims.end(), a.name) == f->dims.end())
        user_error(a.loc, "block(" + a.name + ":" + std::to_string(a.value) + "): '" + a.name + "' is not an output dim of " + f->name + " (its dims: " + join(f->dims) + ")");
      if (a.value < 1) user_error(a.loc, "block size must be at least 1, got " + std::to_string(a.value));
      for (auto& [d, n] : s.block)
        if (d == a.name) user_error(a.loc, "'" + a.name + "' is already blocked");
      s.block.push_back({a.name, a.value});
    }
    s.block_loc = c.loc;
  } else if (c.prim == "tensorize") {
    if (c.args.empty()) user_error(c.loc, "tensorize() needs at least one `dim:extent`");
    for (const DtSchedArg& a : c.args) {
      dim_arg(a);
      if (a.value < 0 || (a.value != 0 && !is_pow2(a.value)))
        user_error(a.loc, "tile extent " + std::to_string(a.value) + " is not a power of two (use a power of two, or " + a.name + ":0 for the whole extent)");
      s.tensorize[a.name] = {a.value, c.loc};
    }
  } else if (c.prim == "map") {
    if (c.args.empty()) user_error(c.loc, "map() needs the block dims, slowest first");
    s.map.clear();
    for (const DtSchedArg& a : c.args) {
      if (a.name.empty() || (a.has_value && !a.factor)) user_error(a.loc, "map() takes dims and splits `v:inner/factor`");
      DtMapItem it;
      it.dim = a.name;
      it.inner = a.inner;
      it.factor = a.factor;
      it.loc = a.loc;
      if (a.factor < 0 || (a.inner.size() && a.factor < 1)) user_error(a.loc, "a split factor must be at least 1");
      if (a.factor && p.find(a.inner)) user_error(a.loc, "map(): the split's inner name '" + a.inner + "' is already declared; pick a new name");
      s.map.push_back(it);
    }
    s.map_loc = c.loc;
  } else if (c.prim == "fuse_at") {
    want_args(2);
    s.fuse_into = c.args[0].name;
    s.fuse_level = c.args[1].name;
    if (s.fuse_into.empty() || s.fuse_level.empty() || c.args[0].has_value || c.args[1].has_value)
      user_error(c.loc, "fuse_at() takes a consumer Func and a dim: fuse_at(consumer, v)");
    s.fuse_loc = c.loc;
  } else if (c.prim == "num_warps" || c.prim == "num_stages") {
    want_args(1);
    int64_t v = c.args[0].value;
    if (!c.args[0].name.empty()) user_error(c.args[0].loc, c.prim + "() takes a number");
    if (c.prim == "num_warps" && (v < 1 || v > 32 || !is_pow2(v))) user_error(c.args[0].loc, "num_warps must be a power of two in 1..32, got " + std::to_string(v));
    if (c.prim == "num_stages" && (v < 1 || v > 16)) user_error(c.args[0].loc, "num_stages must be in 1..16, got " + std::to_string(v));
    (c.prim == "num_warps" ? s.num_warps : s.num_stages) = static_cast<int>(c.args[0].value);
  } else if (c.prim == "warp_specialize") {
    want_args(0);
    s.warp_specialize = true;
  } else if (c.prim == "persistent") {
    if (c.args.size() > 1) want_args(1);
    if (c.args.size() == 1) {
      const int64_t v = c.args[0].value;
      if (!c.args[0].name.empty()) user_error(c.args[0].loc, "persistent() takes a number of CTAs");
      if (v < 1 || v > INT32_MAX) user_error(c.args[0].loc, "persistent(n) takes 1 to 2147483647 CTAs, got " + std::to_string(v));
      s.persistent_ctas = v;
    }
    s.persistent = true;
  } else if (c.prim == "cluster") {
    want_args(1);
    const int64_t v = c.args[0].value;
    if (!c.args[0].name.empty()) user_error(c.args[0].loc, "cluster() takes a number of CTAs");
    if (v != 1 && v != 2) user_error(c.args[0].loc, "cluster(n) takes clusters of 1 or 2 CTAs, got " + std::to_string(v));
    s.cluster = v;
  } else if (c.prim == "compile" || c.prim == "compile_to_kernel") {
    want_args(0);
    if (s.compiled) user_error(c.loc, f->name + " is already compiled at line " + std::to_string(s.compile_loc.line));
    s.compiled = true;
    s.to_kernel = c.prim == "compile_to_kernel";
    s.compile_loc = c.loc;
    s.compile_order = static_cast<int>(p.kernels.size());
    p.kernels.push_back(f->name);
  } else {
    user_error(c.loc, "unknown schedule primitive '" + c.prim + "' (block, tensorize, map, fuse_at, num_warps, num_stages, warp_specialize, persistent, cluster, compile, compile_to_kernel)");
  }
}

void check_map(const DtSymbol& f) {
  const DtSchedule& s = f.sched;
  if (s.map.empty()) return;
  if (s.block.empty()) user_error(s.map_loc, "map() on " + f.name + " requires block(): map orders the blocks of the launch grid");
  std::set<std::string> seen, inners_open, inners_done;
  for (const DtMapItem& it : s.map) {
    if (inners_open.count(it.dim) && it.inner.empty()) {
      inners_open.erase(it.dim);
      inners_done.insert(it.dim);
      continue;
    }
    bool blocked = false;
    for (auto& [d, n] : s.block) blocked |= d == it.dim;
    if (!blocked) user_error(it.loc, "map(): '" + it.dim + "' is not a blocked dim of " + f.name);
    if (seen.count(it.dim)) user_error(it.loc, "map(): '" + it.dim + "' appears twice");
    seen.insert(it.dim);
    if (it.factor) inners_open.insert(it.inner);
  }
  for (auto& [d, n] : s.block)
    if (!seen.count(d)) user_error(s.map_loc, "map(): blocked dim '" + d + "' is missing (list every blocked dim once)");
  if (!inners_open.empty()) user_error(s.map_loc, "map(): the inner part '" + *inners_open.begin() + "' of a split is never placed");
}

void check_fuse(const DtProgram& p, const DtSymbol& f) {
  const DtSchedule& s = f.sched;
  if (s.fuse_into.empty()) return;
  const DtSymbol* c = p.find(s.fuse_into);
  if (!c) user_error(s.fuse_loc, "'" + s.fuse_into + "' is not declared");
  if (c->kind != DtSymKind::Func || !c->defined) user_error(s.fuse_loc, "fuse_at(" + s.fuse_into + ", ...): '" + s.fuse_into + "' is not a defined Func");
  if (c->name == f.name) user_error(s.fuse_loc, "a Func cannot be fused into itself");
  if (s.compiled) user_error(s.fuse_loc, f.name + " is compiled as a kernel output and cannot also be fused into " + c->name);
  std::vector<std::string> levels = c->dims;
  reduced_dims(c->def, levels);
  if (std::find(levels.begin(), levels.end(), s.fuse_level) == levels.end())
    user_error(s.fuse_loc, "fuse_at(" + c->name + ", " + s.fuse_level + "): " + s.fuse_level + " is not a loop of " + c->name + "; legal levels: " + join(levels));
  if (!reads_transitively(p, c->name, f.name))
    user_error(s.fuse_loc, "fuse_at(" + c->name + ", " + s.fuse_level + "): " + c->name + " does not use " + f.name);
  if (!s.block.empty() || !s.map.empty() || !s.tensorize.empty())
    user_error(s.fuse_loc, f.name + " is fused into " + c->name + ": put its block/tensorize/map on the kernel's output Func instead");
}

}  // namespace

void dt_apply_schedule(DtProgram& p) {
  p.kernels.clear();
  for (DtSymbol& s : p.syms) s.sched = DtSchedule{};
  for (const DtSchedCall& c : p.calls) apply_call(p, c);
  for (const DtSymbol& s : p.syms) {
    if (s.kind != DtSymKind::Func) continue;
    check_map(s);
    check_fuse(p, s);
  }
  if (p.kernels.empty()) {
    SourceLoc end{p.file_id, 1, 1};
    if (!p.def_order.empty()) end = p.sym(p.def_order.back()).def_loc;
    user_error(end, "no kernel: end the file with `<output>.compile();`");
  }
}

void dt_check_semantics(DtProgram& p) {
  p.ties.clear();
  Checker(p).run();
  (void)bind_dt_sizes(p, {});  // tied dims get one default size (declared sizes must agree)
}

void dt_check(DtProgram& p) {
  dt_check_semantics(p);
  dt_apply_schedule(p);
  (void)lower_dt(p);  // schedule legality that needs the loop nest (fusion levels, tile views)
}

}  // namespace dtsim
