// The Triton frontend's lowering: specializes the launched @triton.jit function by partial
// evaluation (compile-time values folded, helpers inlined) and emits tile IR for what runs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "ir/TileParser.h"
#include "pyfront/Lower.h"
#include "pyfront/PyLexer.h"

namespace dtsim::py {

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

constexpr int kMaxIrHeight = 512;  // height of one IR expression: later passes recurse over it

// Names the IR's text form reserves; an IR variable never takes them.
bool tile_reserved(const std::string& s) {
  return s == "kernel" || s == "inf" || s == "nan" || s == "pid0" || s == "pid1" || s == "pid2";
}

// Names bound (assigned, loop targets) anywhere in a block, nested blocks included.
void assigned_names(const std::vector<NodeP>& body, std::set<std::string>& out) {
  std::function<void(const Node*)> target = [&](const Node* t) {
    if (!t) return;
    if (t->kind == NK::Name) out.insert(t->text);
    if (t->kind == NK::Tuple || t->kind == NK::List)
      for (auto& k : t->kids) target(k.get());
  };
  for (const NodeP& s : body) {
    switch (s->kind) {
      case NK::Assign:
        for (size_t i = 0; i + 1 < s->kids.size(); ++i) target(s->kids[i].get());
        break;
      case NK::AugAssign:
      case NK::AnnAssign:
      case NK::For:
        target(s->kids[0].get());
        break;
      default: break;
    }
    assigned_names(s->body, out);
    assigned_names(s->orelse, out);
  }
}

}  // namespace

bool is_constexpr_annotation(const Node* a) {
  if (!a) return false;
  if (a->kind == NK::Attr && a->text == "constexpr") return true;
  if (a->kind == NK::Name && a->text == "constexpr") return true;
  if (a->kind == NK::Str && (a->text == "tl.constexpr" || a->text == "constexpr")) return true;
  return false;
}

[[noreturn]] void unsupported(SourceLoc loc, const std::string& what) { user_error(loc, what + " is not supported yet"); }

SourceLoc start_loc(const Node& n) {
  if ((n.kind == NK::Attr || n.kind == NK::Call || n.kind == NK::Subscript || n.kind == NK::BinOp || n.kind == NK::Compare ||
       n.kind == NK::BoolOp) && !n.kids.empty() && n.kids[0])
    return start_loc(*n.kids[0]);
  return n.loc;
}

// ---- call arguments ----

const Val* CallArgs::get(size_t i, const std::string& name) {
  pos_used.resize(pos.size());
  kw_used.resize(kw.size());
  if (i < pos.size()) {
    pos_used[i] = true;
    for (size_t k = 0; k < kw.size(); ++k)
      if (kw[k].first == name) user_error(kw_loc[k], fname + "() got multiple values for argument " + q(name));
    return &pos[i];
  }
  for (size_t k = 0; k < kw.size(); ++k)
    if (kw[k].first == name) {
      kw_used[k] = true;
      return &kw[k].second;
    }
  return nullptr;
}

SourceLoc CallArgs::loc_of(size_t i, const std::string& name) const {
  if (i < pos.size()) return pos_loc[i];
  for (size_t k = 0; k < kw.size(); ++k)
    if (kw[k].first == name) return kw_loc[k];
  return loc;
}

void CallArgs::done() {
  pos_used.resize(pos.size());
  kw_used.resize(kw.size());
  for (size_t i = 0; i < pos.size(); ++i)
    if (!pos_used[i]) user_error(pos_loc[i], fname + "() takes fewer positional arguments (" + std::to_string(i) + " used)");
  for (size_t k = 0; k < kw.size(); ++k)
    if (!kw_used[k]) user_error(kw_loc[k], fname + "() got an unexpected keyword argument " + q(kw[k].first));
}

// ---- IR helpers ----

ExprP Lowerer::ir(const Val& v, SourceLoc loc, const char* what) {
  switch (v.k) {
    case VK::Tensor: return clone_expr(v.e);
    case VK::Int: {
      ExprP e = make_const_int(v.i, loc);
      if (v.i < INT32_MIN || v.i > INT32_MAX) {
        e->weak = false;  // a Python int beyond 32 bits is an i64 value (Triton's typing)
        e->dtype = Scalar::I64;
      }
      return typed(e);
    }
    case VK::Float: return typed(make_const_float(v.f, loc));
    case VK::Bool: return typed(make_const_bool(v.i != 0, loc));
    default: user_error(loc, std::string("expected ") + what + ", got " + py_type_name(v));
  }
}

// Whether the tree under `e` is more than `limit` nodes high (the walk stops at the limit).
static bool deeper_than(const Expr* e, int limit) {
  if (!e) return false;
  if (limit <= 0) return true;
  for (const ExprP& a : e->args)
    if (deeper_than(a.get(), limit - 1)) return true;
  return false;
}

Val Lowerer::tensor(ExprP e, std::set<std::string> bufs) {
  if (deeper_than(e.get(), kMaxIrHeight))
    user_error(e->loc, "expression too deeply nested (more than " + std::to_string(kMaxIrHeight) +
                           " levels after inlining); split it with variables");
  Val v;
  v.k = VK::Tensor;
  typed(e);
  v.t = e->type;
  v.uns = e->kind == ExprKind::Var && uns_vars_.count(e->name) > 0;
  v.e = std::move(e);
  v.bufs = std::move(bufs);
  return v;
}

void Lowerer::emit(StmtP s) { blocks_.back().out->push_back(std::move(s)); }

bool Lowerer::visible(const std::string& irname) const { return visible_type(irname) != nullptr; }

const Type* Lowerer::visible_type(const std::string& irname) const {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)
    if (auto d = it->declared.find(irname); d != it->declared.end()) return &d->second;
  return nullptr;
}

std::string Lowerer::fresh(const std::string& base) {
  // a new variable holds signed values until its assignment marks it (a name reused after its
  // scope closed does not keep an earlier variable's unsignedness)
  if (!visible(base) && !tile_reserved(base)) {
    uns_vars_.erase(base);
    return base;
  }
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!visible(n)) {
      uns_vars_.erase(n);
      return n;
    }
  }
}

// Closes a runtime loop's body (opened with the frame's variables `before`) and emits the loop:
// names first bound inside the body do not outlive it (IR block scoping); the others keep their
// new values.
void Lowerer::end_loop(const std::map<std::string, Val>& before, const StmtP& loop) {
  blocks_.pop_back();
  frames_.back().returned = false;
  auto after = frames_.back().vars;
  frames_.back().vars = before;
  for (auto& [n, v] : after)
    if (before.count(n)) frames_.back().vars[n] = v;
  emit(loop);
}

bool Lowerer::in_runtime_block() const { return blocks_.size() > frames_.back().depth; }

// A tuple whose runtime items are bound to IR variables of their own (held_vars_), nested tuples
// alike: an expression item, and a variable item (a later `a = a * 2` assigns the variable `a` in
// place, which the tuple's item must not see). Items already held keep their variable.
Val Lowerer::hold_items(const Val& v, const std::string& name, SourceLoc loc) {
  Val out = v;
  for (size_t i = 0; i < out.items.size(); ++i) {
    Val& x = out.items[i];
    if (x.k == VK::Tuple) {
      x = hold_items(x, name, loc);
    } else if (x.k == VK::Tensor && x.e && x.e->kind != ExprKind::Const &&
               !(x.e->kind == ExprKind::Var && held_vars_.count(x.e->name))) {
      x = materialize(x, name + "_" + std::to_string(i), loc);
      held_vars_.insert(x.var);
    }
  }
  return out;
}

// Binds `v` to a new IR variable named after `name` and returns the variable as a value.
Val Lowerer::materialize(const Val& v, const std::string& name, SourceLoc loc) {
  ExprP e = ir(v, loc);
  std::string var = fresh(name);
  emit(make_assign(var, e, loc));
  blocks_.back().declared[var] = e->type;
  if (v.uns) uns_vars_.insert(var);
  else uns_vars_.erase(var);
  ExprP ref = make_var(var, loc);
  ref->type = e->type;
  Val out = tensor(ref, v.bufs);
  out.var = var;
  return out;
}

// Whether two compile-time numbers or strings are equal.
static bool fold_equal(const Val& a, const Val& b) {
  if (a.k == VK::Str) return a.text == b.text;
  if (a.k == VK::Float) return a.f == b.f;
  return a.i == b.i;
}

// ---- statements ----

void Lowerer::exec_block(const std::vector<NodeP>& body) {
  for (const NodeP& s : body) {
    if (frames_.back().returned) return;
    exec(*s);
  }
}

void Lowerer::exec(const Node& s) {
  switch (s.kind) {
    case NK::ExprStmt: {
      const Node& e = *s.kids[0];
      if (e.kind == NK::Str || e.kind == NK::Ellipsis) return;  // docstring
      eval(e);
      return;
    }
    case NK::Assign: {
      Val v = eval(*s.kids.back());
      for (size_t i = 0; i + 1 < s.kids.size(); ++i) assign(*s.kids[i], v, s.loc);
      return;
    }
    case NK::AnnAssign: {
      if (!s.kids[2]) return;
      Val v = eval(*s.kids[2]);
      if (is_constexpr_annotation(s.kids[1].get()) && !v.compile_time())
        user_error(s.kids[2]->loc, "a tl.constexpr value must be known at compile time, got " + py_type_name(v));
      assign(*s.kids[0], v, s.loc);
      return;
    }
    case NK::AugAssign: {
      const Node& t = *s.kids[0];
      if (t.kind != NK::Name) user_error(t.loc, "only a name can be the target of " + s.op + "=");
      Val cur = lookup(t.text, t.loc);
      Val rhs = eval(*s.kids[1]);
      Val v = binop(s.op, cur, rhs, s.loc);
      std::optional<BinOp> aug;
      ExprP aug_rhs;
      if (v.k == VK::Tensor && v.e->kind == ExprKind::Binary && !cur.var.empty() && rhs.k != VK::Pair) {
        aug = v.e->bop;
        aug_rhs = v.e->args[1];
      }
      assign_name(t.text, v, s.loc, aug, aug_rhs);
      return;
    }
    case NK::If: {
      if (s.op == "group") {
        exec_block(s.body);
        return;
      }
      Val c = eval(*s.kids[0]);
      if (c.compile_time()) {
        exec_block(truthy(c, s.kids[0]->loc) ? s.body : s.orelse);
        return;
      }
      runtime_if(s, c);
      return;
    }
    case NK::For: lower_for(s); return;
    case NK::While: {
      // Trips whose condition is known at compile time are unrolled; from the first trip whose
      // condition depends on the run, the rest of the loop is a runtime `while`.
      for (int n = 0;; ++n) {
        std::vector<StmtP> pre;
        Val c = eval_captured(*s.kids[0], pre);
        if (!c.compile_time()) {
          runtime_while(s);
          return;
        }
        for (StmtP& p : pre) emit(std::move(p));
        for (auto& [name, t] : captured_declared_) blocks_.back().declared[name] = t;
        if (!truthy(c, s.kids[0]->loc)) return;
        if (n > 100000) user_error(s.loc, "this compile-time while loop runs more than 100000 times");
        exec_block(s.body);
        if (frames_.back().returned) return;
      }
    }
    case NK::Return: {
      Val v = s.kids[0] ? eval(*s.kids[0]) : Val::none();  // may call helpers (frames_ grows)
      Frame& f = frames_.back();
      if (f.combine) {
        std::vector<ExprP> vals = combine_return(v, s.loc, in_runtime_block());
        if (in_runtime_block()) {  // (the statement never reaches the IR: combine_fn_n consumes it)
          auto r = std::make_shared<Stmt>();
          r->kind = StmtKind::Return;
          r->loc = s.loc;
          r->args = std::move(vals);
          emit(r);
          f.returned = true;  // the rest of this branch is not run; runtime_if goes on after the if
          return;
        }
      }
      if (in_runtime_block()) {
        if (!f.kernel) unsupported(s.loc, "return inside a runtime if/for/while of a helper function");
        if (v.k != VK::None) user_error(s.loc, "a kernel cannot return a value");
        auto r = std::make_shared<Stmt>();
        r->kind = StmtKind::Return;
        r->loc = s.loc;
        emit(r);
      } else if (f.kernel && v.k != VK::None) {
        user_error(s.loc, "a kernel cannot return a value");
      }
      f.ret = v;
      f.returned = true;
      return;
    }
    case NK::Pass: return;
    case NK::Break: unsupported(s.loc, "break");
    case NK::Continue: unsupported(s.loc, "continue");
    case NK::Assert: {
      Val c = eval(*s.kids[0]);
      std::string msg = s.kids[1] ? py_repr(eval(*s.kids[1])) : "";
      if (c.compile_time()) {
        if (!truthy(c, s.kids[0]->loc)) user_error(s.kids[0]->loc, "assertion failed" + (msg.empty() ? "" : ": " + msg));
        return;
      }
      auto a = std::make_shared<Stmt>();
      a->kind = StmtKind::Assert;
      a->loc = s.loc;
      a->text = msg;
      ExprP e = ir(c, s.kids[0]->loc);
      if (e->type.elem != Scalar::I1) e = typed(make_binary(BinOp::Ne, e, typed(make_const_int(0, s.loc)), s.loc));
      a->args.push_back(e);
      emit(a);
      return;
    }
    case NK::FunctionDef: user_error(s.loc, "functions cannot be defined inside a Triton kernel");
    case NK::Import:
    case NK::ImportFrom: user_error(s.loc, "imports inside a Triton kernel are not supported");
    default: user_error(s.loc, "this statement is not supported in a Triton kernel");
  }
}

void Lowerer::assign(const Node& target, const Val& v, SourceLoc loc, std::optional<BinOp> aug, ExprP aug_rhs) {
  if (target.kind == NK::Name) {
    assign_name(target.text, v, loc, aug, aug_rhs);
    return;
  }
  if (target.kind == NK::Tuple || target.kind == NK::List) {
    if (v.k == VK::Pair) {
      if (target.kids.size() != 2 || target.kids[0]->kind != NK::Name || target.kids[1]->kind != NK::Name)
        user_error(target.loc, "tl.swizzle2d() returns two values: write `a, b = tl.swizzle2d(...)`");
      Frame& f = frames_.back();
      std::string names[2];
      for (int i = 0; i < 2; ++i) {
        const std::string& n = target.kids[static_cast<size_t>(i)]->text;
        auto it = f.vars.find(n);
        bool update = it != f.vars.end() && !it->second.var.empty() && visible_type(it->second.var) &&
                      *visible_type(it->second.var) == Type{Scalar::I32, false, {}};
        names[i] = update ? it->second.var : fresh(n);
        if (i == 1 && names[1] == names[0]) names[1] = fresh(n + "_");
      }
      StmtP s = make_assign(names[0], clone_expr(v.e), loc);
      s->targets = {names[0], names[1]};
      uns_vars_.erase(names[0]);
      uns_vars_.erase(names[1]);
      emit(s);
      for (int i = 0; i < 2; ++i) {
        if (!visible(names[i])) blocks_.back().declared[names[i]] = Type{Scalar::I32, false, {}};
        ExprP ref = make_var(names[i], loc);
        ref->type = Type{Scalar::I32, false, {}};
        Val r = tensor(ref);
        r.var = names[i];
        f.vars[target.kids[static_cast<size_t>(i)]->text] = r;
      }
      return;
    }
    if (v.k != VK::Tuple) user_error(loc, "cannot unpack " + py_type_name(v) + " into " + std::to_string(target.kids.size()) + " names");
    if (v.items.size() != target.kids.size())
      user_error(loc, "cannot unpack " + std::to_string(v.items.size()) + " values into " + std::to_string(target.kids.size()) + " names");
    // `a, b = -b, a`: every value is read before any name is assigned. The names' IR variables are
    // assigned in place, so where an item reads one of them the items are first held in variables
    // of their own.
    std::set<std::string> written;
    for (const NodeP& t : target.kids)
      if (t->kind == NK::Name)
        if (auto it = frames_.back().vars.find(t->text); it != frames_.back().vars.end() && !it->second.var.empty())
          written.insert(it->second.var);
    std::function<bool(const Val&)> reads_written = [&](const Val& x) {
      if (x.k == VK::Tuple) return std::any_of(x.items.begin(), x.items.end(), reads_written);
      if (x.k != VK::Tensor || !x.e || written.empty()) return false;
      std::function<bool(const Expr&)> walk = [&](const Expr& e) {
        if (e.kind == ExprKind::Var && written.count(e.name)) return true;
        for (const ExprP& a : e.args)
          if (a && walk(*a)) return true;
        return false;
      };
      return walk(*x.e);
    };
    const Val items = v.items.size() > 1 && reads_written(v) ? hold_items(v, "unpack", loc) : v;
    for (size_t i = 0; i < items.items.size(); ++i) assign(*target.kids[i], items.items[i], loc);
    return;
  }
  if (target.kind == NK::Subscript) user_error(target.loc, "tensors cannot be assigned by index in Triton (use tl.where or tl.store)");
  user_error(target.loc, "cannot assign to this expression");
}

void Lowerer::assign_name(const std::string& name, const Val& v0, SourceLoc loc, std::optional<BinOp> aug, ExprP aug_rhs,
                          const std::string& irbase) {
  Frame& f = frames_.back();
  Val v = v0;
  if (v.k == VK::Block) return assign_block(name, v, loc);
  if (v.k == VK::Pair) user_error(loc, "tl.swizzle2d() returns two values: write `a, b = tl.swizzle2d(...)`");
  auto it = f.vars.find(name);
  if (v.k != VK::Tensor) {
    // A compile-time value. Inside a runtime block, a name that is an IR variable stays one.
    if (it != f.vars.end() && !it->second.var.empty() && in_runtime_block() && v.number()) {
      v = tensor(ir(v, loc));
    } else {
      // A compile-time value bound outside the runtime block cannot change inside it (which value
      // would hold after it depends on the run); one bound inside the block may be rebound.
      auto at = f.bound_at.find(name);
      if (in_runtime_block() && it != f.vars.end() && it->second.compile_time() && at != f.bound_at.end() && at->second < blocks_.size())
        user_error(loc, q(name) + " is a compile-time value and cannot be changed inside a runtime if/for/while");
      v.var.clear();
      // A tuple's runtime items are held in IR variables now: an item that is an expression over a
      // variable (`vv = vv + [vv[r] * w]`) must keep that variable's value of this moment, not read it
      // again after a later assignment to it (an unrolled tl.static_range rebinds `w` every round).
      if (v.k == VK::Tuple) v = hold_items(v, name, loc);
      f.vars[name] = v;
      f.bound_at[name] = blocks_.size();
      return;
    }
  }
  if (it != f.vars.end() && !it->second.var.empty()) {
    const std::string& var = it->second.var;
    const Type* old = visible_type(var);
    if (old && *old == v.t && it->second.uns != v.uns && in_runtime_block())
      user_error(loc, q(name) + " changes type from " + py_type_name(it->second) + " to " + py_type_name(v) +
                          " inside a runtime if/for/while; a loop-carried or branch variable keeps its type (use .to())");
    if (old && *old == v.t && it->second.uns == v.uns) {
      ExprP value = clone_expr(v.e);
      StmtP s = make_assign(var, value, loc);
      if (aug && aug_rhs && !v.uns) {  // (an unsigned update keeps its expansion: // % >> are not the IR's)
        ExprP lhs = make_var(var, loc);
        lhs->type = *old;
        value = make_binary(*aug, lhs, clone_expr(aug_rhs), value->loc);
        value->type = v.t;
        s->args[0] = value;
        s->aug = aug;
      }
      emit(s);
      Val r = it->second;
      r.bufs.insert(v.bufs.begin(), v.bufs.end());
      f.vars[name] = r;
      return;
    }
    if (old && blocks_.back().declared.count(var) == 0 && in_runtime_block())
      user_error(loc, q(name) + " changes type from " + old->str() + " to " + v.t.str() +
                          " inside a runtime if/for/while; a loop-carried or branch variable keeps its type (use .to())");
  }
  ExprP e = clone_expr(v.e);
  std::string var = fresh(irbase.empty() ? name : irbase);
  emit(make_assign(var, e, loc));
  blocks_.back().declared[var] = v.t;
  if (v.uns) uns_vars_.insert(var);
  else uns_vars_.erase(var);
  ExprP ref = make_var(var, loc);
  ref->type = v.t;
  Val r = tensor(ref, v.bufs);
  r.var = var;
  f.vars[name] = r;
}

void Lowerer::materialize_assigned(const std::vector<NodeP>& body, SourceLoc loc) {
  std::set<std::string> names;
  assigned_names(body, names);
  Frame& f = frames_.back();
  for (const std::string& n : names) {
    auto it = f.vars.find(n);
    if (it == f.vars.end()) continue;
    Val& v = it->second;
    if (v.k == VK::Block) {
      materialize_block(n, loc);
      continue;
    }
    if (v.number() || (v.k == VK::Tensor && v.var.empty())) {
      Val m = materialize(v, n, loc);
      f.vars[n] = m;
    }
  }
}

void Lowerer::runtime_if(const Node& s, const Val& cond) {
  SourceLoc cloc = s.kids[0]->loc;
  if (!cond.t.is_scalar()) user_error(cloc, "an if condition must be a scalar, got " + py_type_name(cond) + " (use tl.where for tensors)");
  materialize_assigned(s.body, s.loc);
  materialize_assigned(s.orelse, s.loc);
  auto snapshot = frames_.back().vars;
  StmtP st = make_if(ir(cond, cloc), {}, {}, s.loc);
  std::map<std::string, Val> branch_vars[2];
  std::map<std::string, Type> declared[2];
  for (int b = 0; b < 2; ++b) {
    blocks_.push_back(Block{b == 0 ? &st->body : &st->orelse, {}, true});
    exec_block(b == 0 ? s.body : s.orelse);
    declared[b] = blocks_.back().declared;
    blocks_.pop_back();
    frames_.back().returned = false;
    branch_vars[b] = frames_.back().vars;
    frames_.back().vars = snapshot;
  }
  // A name first bound in both branches lives on after the if when both values have one type: an
  // IR variable is declared before the if (zero of its type) and each branch assigns it.
  auto zero_of = [&](const Type& t) {
    ExprP zero = typed(make_const_int(0, s.loc));
    if (t.is_scalar()) return typed(make_cast(zero, t.elem, s.loc));
    std::vector<ExprP> shape;
    for (int64_t d : t.shape) shape.push_back(typed(make_const_int(d, s.loc)));
    return typed(make_full(shape, zero, t.elem, s.loc));
  };
  for (const auto& [name, v0] : branch_vars[0]) {
    if (snapshot.count(name)) continue;
    auto o = branch_vars[1].find(name);
    if (o == branch_vars[1].end()) continue;
    const Val& v1 = o->second;
    if (v0.compile_time() && v1.compile_time()) {
      if (v0.k == v1.k && (v0.number() || v0.k == VK::Str) && fold_equal(v0, v1)) frames_.back().vars[name] = v0;
      if (!(v0.number() && v1.number())) continue;
    }
    if (v0.k == VK::Pair || v1.k == VK::Pair) continue;
    ExprP e0 = (v0.k == VK::Tensor || v0.number()) ? ir(v0, s.loc) : nullptr;
    ExprP e1 = (v1.k == VK::Tensor || v1.number()) ? ir(v1, s.loc) : nullptr;
    if (!e0 || !e1 || !(e0->type == e1->type) || e0->type.ptr) continue;
    if (v0.k == VK::Tensor && v1.k == VK::Tensor && v0.uns != v1.uns)
      user_error(s.loc, q(name) + " is " + py_type_name(v0) + " in one branch and " + py_type_name(v1) + " in the other (use .to())");
    const Type t = e0->type;
    std::string var = fresh(name);
    if (v0.uns || v1.uns) uns_vars_.insert(var);
    else uns_vars_.erase(var);
    emit(make_assign(var, zero_of(t), s.loc));
    blocks_.back().declared[var] = t;
    // (a branch whose own variable got this name already assigns it: the declaration before the if
    // makes that assignment an update)
    if (!(e0->kind == ExprKind::Var && e0->name == var)) st->body.push_back(make_assign(var, e0, s.loc));
    if (!(e1->kind == ExprKind::Var && e1->name == var)) st->orelse.push_back(make_assign(var, e1, s.loc));
    ExprP ref = make_var(var, s.loc);
    ref->type = t;
    Val r = tensor(ref, v0.bufs);
    r.bufs.insert(v1.bufs.begin(), v1.bufs.end());
    r.var = var;
    frames_.back().vars[name] = r;
  }
  emit(st);
}

// Evaluates `e` with the statements it emits (an inlined helper's body) collected in `out` instead
// of the current block; the names they declare are visible while it runs and forgotten after.
Val Lowerer::eval_captured(const Node& e, std::vector<StmtP>& out) {
  blocks_.push_back(Block{&out, {}, blocks_.back().runtime});
  Val v = eval(e);
  std::map<std::string, Type> declared = std::move(blocks_.back().declared);
  blocks_.pop_back();
  captured_declared_ = std::move(declared);
  return v;
}

// `while cond:` on a runtime scalar condition. The IR's while evaluates one expression before each
// trip; a condition that needs statements (a helper call with assignments) is kept in a variable
// set before the loop and again at the end of each trip.
void Lowerer::runtime_while(const Node& s) {
  const Node& ce = *s.kids[0];
  SourceLoc cloc = start_loc(ce);
  materialize_assigned(s.body, s.loc);
  std::vector<StmtP> pre;
  Val c = eval_captured(ce, pre);
  auto check = [&](const Val& v) {
    bool ok = v.k == VK::Tensor ? v.t.is_scalar() && !v.t.ptr : v.number();
    if (!ok)
      user_error(cloc, "a while condition must be a scalar, got " + py_type_name(v) +
                           (v.k == VK::Tensor && v.t.is_tile() ? " (reduce it, e.g. with tl.max or tl.sum)" : ""));
  };
  check(c);
  auto snapshot = frames_.back().vars;
  StmtP st;
  std::string cvar;
  Type ctype;
  if (pre.empty()) {
    st = make_while(ir(c, cloc), {}, s.loc);
  } else {
    for (StmtP& p : pre) emit(std::move(p));
    for (auto& [n, t] : captured_declared_) blocks_.back().declared[n] = t;
    Val m = materialize(c, "cond", cloc);
    cvar = m.var;
    ctype = m.t;
    ExprP ref = make_var(cvar, cloc);
    ref->type = ctype;
    st = make_while(ref, {}, s.loc);
  }
  blocks_.push_back(Block{&st->body, {}, true});
  exec_block(s.body);
  if (!cvar.empty() && !frames_.back().returned) {
    Val c2 = eval(ce);  // its statements go to the end of the body
    check(c2);
    ExprP e2 = ir(c2, cloc);
    if (!(e2->type == ctype)) e2 = typed(make_cast(e2, ctype.elem, cloc));
    emit(make_assign(cvar, e2, cloc));
  }
  end_loop(snapshot, st);
}

void Lowerer::lower_for(const Node& s) {
  const Node& target = *s.kids[0];
  const Node& iter = *s.kids[1];
  // Compile-time iteration: tl.static_range and tuples are unrolled.
  auto unroll = [&](const std::vector<Val>& items) {
    for (const Val& it : items) {
      assign(target, it, s.loc);
      exec_block(s.body);
      if (frames_.back().returned) return;
    }
  };
  std::string fname;
  if (iter.kind == NK::Call) {
    Val callee = eval(*iter.kids[0]);
    if (callee.k == VK::Builtin) fname = callee.text;
  }
  if (fname != "range" && fname != "tl.range" && fname != "tl.static_range") {
    Val seq = eval(iter);
    if (seq.k == VK::Tuple) {
      unroll(seq.items);
      return;
    }
    user_error(start_loc(iter), "a for loop must iterate over range(), tl.range(), tl.static_range() or a tuple, got " + py_type_name(seq));
  }
  // range arguments
  CallArgs a;
  a.fname = fname;
  a.loc = start_loc(iter);
  size_t npos = iter.kids.size() - 1 - iter.kw.size();
  for (size_t i = 1; i <= npos; ++i) {
    a.pos.push_back(eval(*iter.kids[i]));
    a.pos_loc.push_back(start_loc(*iter.kids[i]));
  }
  for (size_t k = 0; k < iter.kw.size(); ++k) {
    a.kw.push_back({iter.kw[k], eval(*iter.kids[1 + npos + k])});
    a.kw_loc.push_back(start_loc(*iter.kids[1 + npos + k]));
  }
  if (a.pos.empty() || a.pos.size() > 3) user_error(a.loc, fname + "() takes 1 to 3 positional arguments");
  Val lo = a.pos.size() == 1 ? Val::of_int(0) : a.pos[0];
  Val hi = a.pos.size() == 1 ? a.pos[0] : a.pos[1];
  Val step = a.pos.size() == 3 ? a.pos[2] : Val::of_int(1);
  for (size_t i = 0; i < a.pos.size(); ++i) a.get(i, "");
  if (fname == "tl.range") {
    if (const Val* st = a.get(99, "num_stages"); st && st->k == VK::Int) range_stages_ = std::max<int64_t>(range_stages_, st->i);
    if (const Val* ws = a.get(99, "warp_specialize"); ws && (ws->k == VK::Bool || ws->k == VK::Int) && ws->i) range_warp_specialize_ = true;
    for (const char* hint : {"loop_unroll_factor", "flatten", "disallow_acc_multi_buffer", "disable_licm"})
      a.get(99, hint);
  }
  a.done();
  if (fname == "tl.static_range" || (fname == "range" && false)) {
    for (const Val* v : {&lo, &hi, &step})
      if (v->k != VK::Int) user_error(a.loc, "tl.static_range() needs compile-time integers, got " + py_type_name(*v));
    if (step.i == 0) user_error(a.loc, "range() step must not be zero");
    std::vector<Val> items;
    for (int64_t v = lo.i; step.i > 0 ? v < hi.i : v > hi.i; v += step.i) {
      items.push_back(Val::of_int(v));
      if (items.size() > 4096) user_error(a.loc, "tl.static_range() unrolls more than 4096 iterations");
    }
    unroll(items);
    return;
  }
  if (target.kind != NK::Name) user_error(target.loc, "the loop variable of a runtime loop must be a name");
  for (const Val* v : {&lo, &hi, &step})
    if (!(v->k == VK::Int || v->k == VK::Bool || (v->k == VK::Tensor && v->t.is_scalar() && is_int(v->t.elem) && !v->t.ptr)))
      user_error(a.loc, fname + "() bounds must be integer scalars, got " + py_type_name(*v));
  if (step.k == VK::Int && step.i == 0) user_error(a.loc, fname + "() step must not be zero");
  // A compile-time negative step (range(T - 1, -1, -1)): the loop counts k = 0, 1, ... up to the trip
  // count cdiv(lo - hi, -step) (none when that is <= 0) and the target is lo + k * step.
  const bool down = step.k == VK::Int && step.i < 0;
  Val down_start;
  if (down) {
    down_start = lo.k == VK::Tensor && lo.var.empty() ? materialize(lo, "range_start", a.loc) : lo;
    Val span = binop("-", down_start, hi, a.loc);
    hi = binop("//", binop("+", span, Val::of_int(-step.i - 1), a.loc), Val::of_int(-step.i), a.loc);
    lo = Val::of_int(0);
  }
  materialize_assigned(s.body, s.loc);
  ExprP elo = ir(lo, a.loc), ehi = ir(hi, a.loc), estep = ir(down ? Val::of_int(1) : step, a.loc);
  Scalar it = (elo->type.elem == Scalar::I64 || ehi->type.elem == Scalar::I64 || estep->type.elem == Scalar::I64) ? Scalar::I64 : Scalar::I32;
  auto snapshot = frames_.back().vars;
  std::string var = fresh(target.text);
  StmtP st = make_for(var, elo, ehi, estep, {}, s.loc);
  blocks_.push_back(Block{&st->body, {}, true});
  blocks_.back().declared[var] = Type{it, false, {}};
  ExprP ref = make_var(var, target.loc);
  ref->type = Type{it, false, {}};
  Val lv = tensor(ref);
  lv.var = var;
  if (down) lv = binop("+", down_start, binop("*", lv, Val::of_int(step.i), a.loc), a.loc);
  frames_.back().vars[target.text] = lv;
  exec_block(s.body);
  end_loop(snapshot, st);
}

// ---- truthiness ----

bool Lowerer::truthy(const Val& v, SourceLoc loc) {
  switch (v.k) {
    case VK::None: return false;
    case VK::Int:
    case VK::Bool: return v.i != 0;
    case VK::Float: return v.f != 0;
    case VK::Str: return !v.text.empty();
    case VK::Tuple: return !v.items.empty();
    case VK::Tensor:
    case VK::Pair: user_error(loc, "a runtime value has no compile-time truth value");
    default: return true;
  }
}

// ---- functions ----

ExprP Lowerer::combine_fn(const Val& fn, Scalar elem, SourceLoc loc, std::optional<ScanOp>* simple) {
  ExprP body = combine_fn_n(fn, {elem}, loc).at(0);
  if (simple) {
    const Expr* e = body.get();
    if (e->kind == ExprKind::Cast && e->args[0]->type.elem == elem) e = e->args[0].get();
    bool pair = e->kind == ExprKind::Binary && e->args[0]->kind == ExprKind::CombineArg && e->args[1]->kind == ExprKind::CombineArg &&
                e->args[0]->axis != e->args[1]->axis;
    if (pair && e->bop == BinOp::Add) *simple = ScanOp::Sum;
    if (pair && e->bop == BinOp::Mul) *simple = ScanOp::Prod;
    if (pair && e->bop == BinOp::Max) *simple = ScanOp::Max;
    if (pair && e->bop == BinOp::Min) *simple = ScanOp::Min;
  }
  return body;
}

// A condition as i1 (x != 0 for a number).
static ExprP as_i1_expr(ExprP e, SourceLoc loc) {
  if (e->type.elem == Scalar::I1 && !e->type.ptr) return e;
  return typed(make_binary(BinOp::Ne, e, typed(make_const_int(0, loc)), loc));
}

// The values a combine function's `return` gives (one per operand), its types checked against the
// function's first return: Triton gives a function one return type and refuses returns that differ.
// At the top level (`strict` false) a value that is no tensor is left to combine_fn_n's checks.
std::vector<ExprP> Lowerer::combine_return(const Val& v, SourceLoc loc, bool strict) {
  std::vector<ExprP> out;
  for (const Val& x : v.k == VK::Tuple ? v.items : std::vector<Val>{v}) {
    if (x.k != VK::Tensor && !x.number()) {
      if (strict) user_error(loc, "a combine_fn returns tensors, got " + py_type_name(v));
      return {};
    }
    out.push_back(ir(x, loc));
  }
  std::vector<Type> types;
  for (const ExprP& e : out) types.push_back(e->type);
  Frame& f = frames_.back();
  if (!f.ret_types) {
    f.ret_types = types;
  } else if (!(*f.ret_types == types)) {
    auto list = [](const std::vector<Type>& ts) {
      std::string t;
      for (const Type& x : ts) t += (t.empty() ? "" : ", ") + x.str();
      return ts.size() == 1 ? t : "(" + t + ")";
    };
    user_error(loc, "this return gives " + list(types) + " and an earlier return of the combine_fn " + list(*f.ret_types) +
                        ": every return of a function gives one type (Triton refuses the mismatch)");
  }
  return out;
}

std::vector<ExprP> Lowerer::combine_fn_n(const Val& fn, const std::vector<Scalar>& elems, SourceLoc loc) {
  if (fn.k != VK::Func || !fn.fn || !fn.mod) user_error(loc, "combine_fn must be a @triton.jit function");
  const size_t n = elems.size();
  std::vector<bool> uns = std::move(combine_unsigned_);
  combine_unsigned_.clear();
  std::vector<std::string> names;
  CallArgs args;
  args.loc = loc;
  args.fname = fn.fn->text;
  for (size_t i = 0; i < 2 * n; ++i) {
    names.push_back(fresh("__combine_" + std::to_string(i)));
    ExprP ref = make_var(names.back(), loc);
    ref->type = Type{elems[i % n], false, {}};
    args.pos.push_back(tensor(ref));
    args.pos.back().uns = uns.size() == n && uns[i % n] && is_int(elems[i % n]) && elems[i % n] != Scalar::I1;
    args.pos_loc.push_back(loc);
  }
  std::vector<StmtP>& out = *blocks_.back().out;
  size_t before = out.size();
  next_call_combines_ = true;
  Val r = call_function(*fn.fn, *fn.mod, args);
  std::vector<StmtP> stmts(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  out.resize(before);
  // The function's statements, run symbolically in order: each variable's value as an expression of
  // the CombineArgs. An if on a runtime value runs both branches; a variable either assigns is after it
  // where(cond, its value in the if branch, in the else branch), as each lane takes the branch its
  // condition picks (the function is applied lane by lane). A return inside such an if (the lowering's
  // Return statement holding the values) ends the lanes that take that branch: Flow keeps which lanes
  // have returned and what, and each lane's result is the value of the first return on its path, as
  // Triton's frontend branches to the function's end (cf.cond_br in the combine region).
  using Env = std::map<std::string, ExprP>;
  std::function<ExprP(const ExprP&, const Env&)> sub = [&](const ExprP& e, const Env& env) -> ExprP {
    if (!e) return e;
    if (e->kind == ExprKind::Var) {
      for (size_t i = 0; i < names.size(); ++i)
        if (e->name == names[i]) {
          ExprP c = make_combine_arg(static_cast<int>(i), e->loc);
          c->type = Type{elems[i % n], false, {}};
          return c;
        }
      auto d = env.find(e->name);
      if (d != env.end()) return clone_expr(d->second);
      unsupported(e->loc, "a combine_fn that reads a variable of the kernel");
    }
    ExprP c = std::make_shared<Expr>(*e);
    for (auto& a : c->args) a = sub(a, env);
    return c;
  };
  struct Flow {
    ExprP done;               // i1: whether the lane has returned (nullptr: no lane has)
    bool all = false;         // every lane has returned
    std::vector<ExprP> vals;  // what the lanes that returned gave, one per operand
  };
  auto select = [&](const ExprP& c, ExprP a, ExprP b, SourceLoc at) {
    ExprP w = make_where(clone_expr(c), std::move(a), std::move(b), at);
    w->type = w->args[1]->type;
    return w;
  };
  auto bool_const = [&](bool v, SourceLoc at) { return typed(make_const_bool(v, at)); };
  std::function<void(const std::vector<StmtP>&, Env&, Flow&)> run = [&](const std::vector<StmtP>& body, Env& env, Flow& flow) {
    for (const StmtP& st : body) {
      if (flow.all) return;  // (the lowering runs no statement after a return)
      if (st->kind == StmtKind::Assign && st->targets.size() == 1) {
        env[st->targets[0]] = sub(st->args[0], env);
        continue;
      }
      if (st->kind == StmtKind::Return) {
        if (st->args.size() != n)
          user_error(st->loc, "a combine_fn of " + std::to_string(n) + " operands must return " + std::to_string(n) + " values, got " +
                                  std::to_string(st->args.size()));
        for (size_t k = 0; k < n; ++k) {
          ExprP v = sub(st->args[k], env);
          flow.vals.resize(n);
          flow.vals[k] = flow.done ? select(flow.done, flow.vals[k], v, st->loc) : v;
        }
        flow.done = bool_const(true, st->loc);
        flow.all = true;
        return;
      }
      if (st->kind == StmtKind::If) {
        ExprP cond = as_i1_expr(sub(st->args[0], env), st->loc);
        Env then_env = env, else_env = env;
        Flow then_flow, else_flow;
        run(st->body, then_env, then_flow);
        run(st->orelse, else_env, else_flow);
        std::set<std::string> assigned;
        for (const auto& [name, e] : then_env) assigned.insert(name);
        for (const auto& [name, e] : else_env) assigned.insert(name);
        for (const std::string& name : assigned) {
          auto a = then_env.find(name), b = else_env.find(name);
          if (a == then_env.end() || b == else_env.end()) continue;  // bound in one branch only: not readable after
          if (a->second == b->second) {
            env[name] = a->second;
            continue;
          }
          env[name] = select(cond, a->second, b->second, st->loc);
        }
        if (!then_flow.done && !else_flow.done) continue;
        // The lanes this if returns and their values; lanes that returned before keep theirs. (A
        // variable both branches assign is selected by cond as before: the lanes that go on after
        // the if took a branch that did not return.)
        auto done_in = [&](const Flow& f) { return f.done ? clone_expr(f.done) : bool_const(false, st->loc); };
        ExprP done = then_flow.all && else_flow.all ? bool_const(true, st->loc) : select(cond, done_in(then_flow), done_in(else_flow), st->loc);
        std::vector<ExprP> vals(n);
        for (size_t k = 0; k < n; ++k) {
          vals[k] = !then_flow.done ? else_flow.vals[k]
                  : !else_flow.done ? then_flow.vals[k]
                                    : select(cond, then_flow.vals[k], else_flow.vals[k], st->loc);
          if (flow.done) vals[k] = select(flow.done, flow.vals[k], vals[k], st->loc);
        }
        if (flow.done) done = typed(make_binary(BinOp::Or, clone_expr(flow.done), done, st->loc));
        flow.done = done;
        flow.vals = std::move(vals);
        flow.all = then_flow.all && else_flow.all;
        continue;
      }
      const StmtKind k = st->kind;
      const char* what = k == StmtKind::For || k == StmtKind::While ? "a loop" : k == StmtKind::Store ? "a store"
                       : k == StmtKind::Atomic ? "an atomic" : k == StmtKind::Print ? "a print" : k == StmtKind::Assert ? "an assert" : "a statement other than an assignment";
      unsupported(st->loc, std::string("a combine_fn with ") + what);
    }
  };
  Env env;
  Flow flow;
  run(stmts, env, flow);
  if (flow.all) return flow.vals;  // every path returned inside an if
  if (flow.done && r.k == VK::None)
    user_error(fn.fn->loc, "combine_fn " + q(fn.fn->text) + " returns a value on some paths and nothing where it ends (Python's None)");
  // One operand: the function returns one tensor; several: a tuple of as many.
  if (n == 1 && r.k != VK::Tensor) unsupported(loc, "a combine_fn that does not return one tensor (a tuple)");
  if (n > 1 && (r.k != VK::Tuple || r.items.size() != n))
    user_error(loc, "a combine_fn of " + std::to_string(n) + " operands must return " + std::to_string(n) + " values, got " + py_type_name(r));
  std::vector<ExprP> bodies;
  for (const Val& v : n == 1 ? std::vector<Val>{r} : r.items) {
    if (v.k != VK::Tensor && !v.number()) user_error(loc, "a combine_fn returns tensors, got " + py_type_name(v));
    ExprP body = sub(ir(v, loc), env);
    if (flow.done) body = select(flow.done, flow.vals[bodies.size()], body, loc);
    bodies.push_back(body);
  }
  return bodies;
}

Val Lowerer::combine_tuple(const Val& xs, int axis, bool scan, bool reverse, const Val& fn, SourceLoc xloc, SourceLoc fnloc, SourceLoc loc) {
  const size_t n = xs.items.size();
  if (n < 2) user_error(xloc, "a tuple of at least two tensors is expected");
  std::vector<std::string> vars;
  std::vector<Type> types;
  std::vector<Scalar> elems;
  for (size_t i = 0; i < n; ++i) {  // each operand in a variable (every result reads all of them)
    ExprP e = ir(xs.items[i], xloc);
    if (e->type.ptr || e->type.is_scalar()) user_error(xloc, "the operands must be tensors, got " + e->type.str());
    if (i && e->type.shape != types[0].shape)
      user_error(xloc, "the operands must have one shape, got " + types[0].str() + " and " + e->type.str());
    std::string v = fresh("__operand_" + std::to_string(i));
    emit(make_assign(v, e, loc));
    blocks_.back().declared[v] = e->type;
    vars.push_back(v);
    types.push_back(e->type);
    elems.push_back(e->type.elem);
  }
  std::vector<ExprP> fns = combine_fn_n(fn, elems, fnloc);
  std::vector<Val> out;
  for (size_t k = 0; k < n; ++k) {
    std::vector<ExprP> ops, fk;
    for (size_t i = 0; i < n; ++i) {
      ExprP r = make_var(vars[i], loc);
      r->type = types[i];
      ops.push_back(r);
    }
    for (const ExprP& f : fns) fk.push_back(clone_expr(f));
    ExprP e = scan ? make_scan_n(ops, axis, reverse, fk, static_cast<int>(k), loc) : make_reduce_n(ops, axis, fk, static_cast<int>(k), loc);
    std::string v = fresh(scan ? "__scan" : "__reduce");
    ExprP te = typed(e);
    emit(make_assign(v, te, loc));
    blocks_.back().declared[v] = te->type;
    ExprP r = make_var(v, loc);
    r->type = te->type;
    Val t = tensor(r);
    t.var = v;
    out.push_back(t);
  }
  return Val::tuple(out);
}

Val Lowerer::call_function(const Node& fn, const ModuleInfo& mod, CallArgs& a) {
  const bool combine = next_call_combines_;  // (only this call's frame: not the helpers it calls)
  next_call_combines_ = false;
  if (call_depth_ > 64) user_error(a.loc, "calls nested more than 64 deep (recursion is not supported)");
  if (++calls_ > 100000) user_error(a.loc, "the kernel inlines more than 100000 calls of @triton.jit functions");
  Frame f;
  f.mod = &mod;
  f.depth = blocks_.size();
  f.name = fn.text;
  f.combine = combine;
  std::vector<std::pair<std::string, Val>> bound;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Param& p = fn.params[i];
    if (p.star) user_error(p.loc, "*args and **kwargs parameters are not supported in a @triton.jit function");
    const Val* v = a.get(i, p.name);
    Val val;
    if (v) {
      val = *v;
    } else if (p.def) {
      frames_.push_back(Frame{&mod, {}, {}, false, {}, false, blocks_.size(), "<defaults>", false, {}});
      val = eval(*p.def);
      frames_.pop_back();
    } else {
      user_error(a.loc, fn.text + "() missing argument " + q(p.name));
    }
    if (is_constexpr_annotation(p.annotation.get()) && !val.compile_time())
      user_error(a.loc_of(i, p.name), "parameter " + q(p.name) + " of " + fn.text + "() is tl.constexpr but gets a runtime value");
    bound.push_back({p.name, val});
  }
  a.done();
  // Tensor arguments that are not plain variables or literals get a variable named after the
  // parameter (evaluated once, visible in the debugger).
  for (auto& [name, val] : bound) {
    if (val.k == VK::Tensor) {
      val.var.clear();
      if (val.e->kind != ExprKind::Var && val.e->kind != ExprKind::Const) {
        val = materialize(val, name, a.loc);
        val.var.clear();
      }
    }
    f.vars[name] = val;
  }
  frames_.push_back(std::move(f));
  ++call_depth_;
  try {
    exec_block(fn.body);
  } catch (...) {
    --call_depth_;
    frames_.pop_back();
    throw;
  }
  --call_depth_;
  Val r = frames_.back().ret;
  frames_.pop_back();
  std::function<void(Val&)> strip = [&](Val& v) {
    v.var.clear();
    for (Val& x : v.items) strip(x);
  };
  strip(r);
  return r;
}

}  // namespace dtsim::py
