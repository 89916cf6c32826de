// TTIR ops -> tile IR (Ttir.h). Each SSA value becomes either an expression inlined into its one
// user (a pure op used once in the same block) or a variable named after it (`%offsets_2` ->
// `offsets_2`). scf.for iter_args are variables assigned before the loop and at its yield; scf.if
// results are variables assigned in each branch; scf.while's `before` region is emitted before the
// loop and again at the end of its body; tt.call is inlined. Ops the tile IR cannot express are a
// located error at the op's Python line.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <set>

#include "ir/Printer.h"
#include "ir/Scaled.h"
#include "ir/Unsigned.h"
#include "ir/Verify.h"
#include "ir/Walk.h"
#include "ir/Fma.h"
#include "ir/Hints.h"
#include "ir/InlinePtx.h"
#include "ir/Select.h"
#include "ttir/Ttir.h"
#include "ttir/TtirParse.h"

namespace dtsim {

namespace {

using namespace ttir;

std::string q(const std::string& s) { return "'" + s + "'"; }

// A source file named by a location, registered once per process.
int py_source(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, int> ids;
  std::lock_guard<std::mutex> lock(mu);
  auto it = ids.find(path);
  if (it != ids.end()) return it->second;
  int id;
  try {
    id = Sources::load(path);
  } catch (const UserError&) {
    id = Sources::add(path, "");
  }
  ids[path] = id;
  return id;
}

struct VType {
  Scalar elem = Scalar::I32;
  bool ptr = false;
  Shape shape;
  Type type() const { return Type{elem, ptr, shape}; }
};

struct Value {
  ExprP expr;        // an inlinable expression (used once), or null
  std::string var;   // else the variable holding it
  VType t;
  bool remat = false;  // expr is cheap (a constant, a splat of a variable): copied into every user
};

class Lowerer {
 public:
  Lowerer(const ParsedModule& m, const TtirLaunch& l) : m_(m), launch_(l) {}

  Module run(const std::string& name) {
    const Op* entry = nullptr;
    for (const Op& f : m_.funcs) {
      std::string fname = func_name(f);
      funcs_[fname] = &f;
      bool pub = f.text.rfind("public", 0) == 0;
      if ((!launch_.kernel.empty() && fname == launch_.kernel) || (launch_.kernel.empty() && pub && !entry)) entry = &f;
    }
    if (!entry) user_error(m_.funcs[0].text_loc, "no function " + q(launch_.kernel) + " in this TTIR");
    Module mod;
    Kernel k;
    k.name = func_name(*entry);
    k.loc = loc_of(*entry);
    mod.file = k.loc.valid() ? Sources::name(k.loc.file) : name;
    k.num_warps = launch_.num_warps;
    k.num_stages = launch_.num_stages;
    for (int64_t g : launch_.grid) k.grid.push_back(make_const_int(g));
    std::map<std::string, const TtirBuffer*> bufs;
    for (const TtirBuffer& b : launch_.buffers) bufs[b.name] = &b;
    const Block& body = entry->regions.at(0).blocks.at(0);
    std::vector<std::pair<std::string, std::string>> args = func_args(*entry);
    if (args.size() != launch_.arg_names.size())
      user_error(k.loc, "the kernel has " + std::to_string(args.size()) + " runtime parameters in TTIR, the launch names " +
                            std::to_string(launch_.arg_names.size()));
    scopes_.push_back({});
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& pname = launch_.arg_names[i];
      Param p;
      p.name = pname;
      p.loc = k.loc;
      if (args[i].second.rfind("!tt.tensordesc<", 0) == 0) {  // a host TensorDescriptor: its base tensor
        Desc d = desc_type(args[i].second);
        auto b = bufs.find(pname);
        if (b == bufs.end()) user_error(k.loc, "tensor descriptor " + q(pname) + " has no buffer bound");
        p.kind = ParamKind::Pointer;
        p.dtype = b->second->dtype;
        for (int64_t dd : b->second->shape) p.shape.push_back(make_const_int(dd));
        p.io = BufIO::InOut;
        k.params.push_back(p);
        d.base = pname;
        d.nan_padding = launch_.nan_padded.count(pname) > 0;
        for (size_t a = 0; a < d.block.size(); ++a) {
          d.shape.push_back(pname + ".shape." + std::to_string(a));
          d.strides.push_back(pname + ".stride." + std::to_string(a));
        }
        descs_[args[i].first] = d;
        continue;
      }
      VType t = vtype(args[i].second, entry->text_loc);
      if (t.ptr) {
        auto b = bufs.find(pname);
        if (b == bufs.end()) user_error(k.loc, "pointer parameter " + q(pname) + " has no buffer bound");
        p.kind = ParamKind::Pointer;
        p.dtype = b->second->dtype;
        if (p.dtype != t.elem && !(t.elem == Scalar::I1 && b->second->dtype == Scalar::I1))
          t.elem = p.dtype;  // the buffer's element type rules (Triton types an int8 bool tensor *i1)
        for (int64_t d : b->second->shape) p.shape.push_back(make_const_int(d));
        p.io = BufIO::InOut;
      } else {
        p.kind = ParamKind::Scalar;
        p.dtype = t.elem;
        p.init = typed_const(0, 0, t.elem);  // every launch binds the value; this one only lets the module verify
      }
      k.params.push_back(p);
      auto b = bufs.find(pname);
      if (t.ptr && b != bufs.end() && b->second->start != 0) {  // the pointer addresses an element inside its buffer
        ExprP at = make_binary(BinOp::Add, make_var(pname, k.loc), make_const_int(b->second->start, k.loc), k.loc);
        bind(args[i].first, Value{at, "", t, true});
        continue;
      }
      bind(args[i].first, Value{nullptr, pname, t});
    }
    for (const Block& b : entry->regions.at(0).blocks) count_uses(b);
    out_ = &k.body;
    region_ = &entry->regions.at(0);
    emit_cfg(body, {}, 0);
    scopes_.pop_back();
    k.warp_specialize = warp_specialize_;
    mark_inputs(k);
    mod.kernels.push_back(std::move(k));
    return mod;
  }

 private:
  // The IR's builders at the op being lowered (the composed math functions' arithmetic).
  ExprP bo(BinOp o, ExprP a, ExprP b) const { return make_binary(o, std::move(a), std::move(b), cur_loc_); }
  ExprP un(UnOp o, ExprP a) const { return make_unary(o, std::move(a), cur_loc_); }
  ExprP wh(ExprP k, ExprP a, ExprP b) const { return make_where(std::move(k), std::move(a), std::move(b), cur_loc_); }

  // Pointer parameters no store or atomic reaches are inputs (the rest stay in/out, so a backend that
  // copies buffers brings them back): followed through the variables a stored-to pointer is computed
  // from.
  static void mark_inputs(Kernel& k) {
    std::map<std::string, std::vector<ExprP>> defs;
    std::vector<ExprP> stored;
    std::function<void(const std::vector<StmtP>&)> walk = [&](const std::vector<StmtP>& ss) {
      for (const StmtP& s : ss) {
        if (s->kind == StmtKind::Assign)
          for (const std::string& t : s->targets) defs[t].push_back(s->args.at(0));
        if (s->kind == StmtKind::Store || s->kind == StmtKind::Atomic) stored.push_back(s->args.at(0));
        if (s->kind == StmtKind::Atomic)  // the old value is a variable: not a pointer
          for (const std::string& t : s->targets) defs[t];
        walk(s->body);
        walk(s->orelse);
      }
    };
    walk(k.body);
    std::set<std::string> seen;
    std::function<void(const ExprP&)> reach = [&](const ExprP& e) {
      if (!e) return;
      if (e->kind == ExprKind::Var) {
        if (!seen.insert(e->name).second) return;
        for (const ExprP& d : defs[e->name]) reach(d);
        return;
      }
      if (e->kind == ExprKind::Load) return;  // a loaded value is not a pointer into a parameter's buffer
      for (const ExprP& a : e->args) reach(a);
    };
    for (const ExprP& p : stored) reach(p);
    for (Param& p : k.params)
      if (p.kind == ParamKind::Pointer && !seen.count(p.name)) p.io = BufIO::In;
  }

  // ---- functions ----
  // A tt.func's symbol: @name, or @"name" (MLIR quotes a symbol holding other characters, as Triton
  // 3.6 names specialized helpers: @"mod.f__Pfp32_(5,)c"); `end`: where the header goes on.
  static std::string func_name(const Op& f, size_t* end = nullptr) {
    size_t at = f.text.find('@');
    if (at + 1 < f.text.size() && f.text[at + 1] == '"') {
      size_t q = f.text.find('"', at + 2);
      if (q == std::string::npos) user_error(f.text_loc, "malformed TTIR: unterminated symbol name");
      if (end) *end = q + 1;
      return f.text.substr(at + 2, q - at - 2);
    }
    size_t e = f.text.find('(', at);
    if (end) *end = e;
    return f.text.substr(at + 1, e - at - 1);
  }
  // (name, type) of each argument of a tt.func header.
  std::vector<std::pair<std::string, std::string>> func_args(const Op& f) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t name_end = 0;
    func_name(f, &name_end);
    size_t b = f.text.find('(', name_end);
    std::string sig = f.text.substr(b);
    Cursor cc(sig, f.text_loc);
    cc.expect("(");
    while (!cc.eat(")")) {
      std::string v = cc.value();
      cc.expect(":");
      std::string t = cc.type();
      if (cc.peek("{")) cc.balanced('{', '}');
      if (cc.peek("loc(")) {
        cc.expect("loc");
        cc.balanced('(', ')');
      }
      out.emplace_back(v, t);
      cc.eat(",");
    }
    return out;
  }

  // ---- locations, types ----
  SourceLoc loc_of(const Op& op) {
    PyLoc l = resolve_loc(m_, op.loc);
    if (l.file.empty() || l.line <= 0) return op.text_loc;
    return SourceLoc{py_source(l.file), l.line, std::max(l.col, 1)};
  }
  std::string name_of(const Op& op) { return resolve_loc(m_, op.loc).name; }

  // A list of types, "(T1, T2, ...)" or one "T" (results after an op's "->").
  std::vector<VType> type_list(const std::string& text, SourceLoc where) {
    std::vector<VType> out;
    Cursor rc(text, where);
    if (rc.eat("(")) {
      while (!rc.eat(")")) {
        out.push_back(vtype(rc.type(), where));
        rc.eat(",");
      }
    } else {
      out.push_back(vtype(rc.type(), where));
    }
    return out;
  }
  // The result types of a region op from its trailer ": (ins) -> outs".
  std::vector<VType> trailer_results(const Op& op) {
    size_t arrow = op.trailer.rfind("->");
    if (arrow == std::string::npos) user_error(cur_loc_, "malformed TTIR: " + op.name + " without its result types");
    return type_list(trim_copy(op.trailer.substr(arrow + 2)), op.text_loc);
  }
  VType vtype(const std::string& text, SourceLoc where) {
    TypeText tt = split_type(text);
    if (!tt.ok) user_error(where, "malformed TTIR type " + q(text));
    VType t;
    t.shape = tt.shape;
    std::string e = tt.elem;
    if (e.rfind("!tt.ptr<", 0) == 0) {
      t.ptr = true;
      e = e.substr(8, e.size() - 9);
      size_t comma = e.find(',');  // address space
      if (comma != std::string::npos) e = e.substr(0, comma);
      if (e.rfind("tensor<", 0) == 0) user_error(cur_loc_, "block pointers (tl.make_block_ptr) are not supported yet");
    }
    static const std::map<std::string, Scalar> names = {{"i1", Scalar::I1},   {"i8", Scalar::I8},   {"i16", Scalar::I16},
                                                        {"i32", Scalar::I32}, {"i64", Scalar::I64}, {"f8E4M3FN", Scalar::F8E4M3},
                                                        {"f8E5M2", Scalar::F8E5M2}, {"f16", Scalar::F16}, {"bf16", Scalar::BF16},
                                                        // the fnuz formats (TTIR of an AMD target; a CUDA one refuses them)
                                                        {"f8E4M3FNUZ", Scalar::F8E4B8}, {"f8E5M2FNUZ", Scalar::F8E5B16},
                                                        {"f32", Scalar::F32}, {"f64", Scalar::F64},
                                                        // signed / unsigned spellings (a tensor descriptor's block type)
                                                        {"si8", Scalar::I8}, {"si16", Scalar::I16}, {"si32", Scalar::I32}, {"si64", Scalar::I64},
                                                        {"ui8", Scalar::I8}, {"ui16", Scalar::I16}, {"ui32", Scalar::I32}, {"ui64", Scalar::I64}};
    auto it = names.find(e);
    if (it == names.end()) {
      if (e.rfind("!tt.tensordesc", 0) == 0) user_error(cur_loc_, "tensor descriptors are not supported yet");
      user_error(cur_loc_, "element type " + q(e) + " is not supported yet (i1, i8, i16, i32, i64, f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f16, bf16, f32, f64)");
    }
    t.elem = it->second;
    return t;
  }

  // The integers of attribute `name = array<i32: a, b, ...>` in an op's attribute text (empty where
  // it is absent).
  static std::vector<int64_t> i32_array(const std::string& attrs, const std::string& name) {
    std::vector<int64_t> out;
    size_t at = attrs.find(name + " = array<i32:");
    if (at == std::string::npos) return out;
    size_t b = at + name.size() + 14, end = attrs.find('>', b);
    std::string list = attrs.substr(b, end == std::string::npos ? std::string::npos : end - b);
    for (size_t q = 0; q < list.size();) {
      size_t e = list.find(',', q);
      if (e == std::string::npos) e = list.size();
      out.push_back(std::atoll(list.substr(q, e - q).c_str()));
      q = e + 1;
    }
    return out;
  }

  // ---- values ----
  void bind(const std::string& ssa, Value v) { scopes_.back()[ssa] = std::move(v); }
  Value& lookup(const std::string& ssa) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(ssa);
      if (f != it->end()) return f->second;
    }
    if (descs_.count(ssa))  // a descriptor is no value of the IR: only made, passed to calls and accessed
      user_error(cur_loc_, "a tensor descriptor carried by a loop, yielded by an if or stored as a value is not supported yet "
                           "(make it where it is used, or pass it to the functions that use it)");
    user_error(cur_loc_, "malformed TTIR: %" + ssa + " is not defined");
  }
  // One use of `ssa` emitted: counted once per op however often the op's lowering reads the value
  // (tt.gather's index feeds its range assert and the gather), so that consumed_ never runs ahead of
  // the operand occurrences uses_ counts; a Python variable's name is given to a new value only once
  // every use of the old one is emitted (python_name), and an op reading the same value twice counts
  // one, which at worst keeps the name from being reused.
  void consume(const std::string& ssa) {
    if (op_consumed_.insert(ssa).second) ++consumed_[ssa];
  }
  // The values consumed by the op being emitted (saved and restored around the ops of its regions).
  struct OpUses {
    Lowerer& l;
    std::set<std::string> saved;
    explicit OpUses(Lowerer& lw) : l(lw) { saved.swap(l.op_consumed_); }
    ~OpUses() { saved.swap(l.op_consumed_); }
  };

  ExprP use(const std::string& ssa) {
    Value& v = lookup(ssa);
    if (v.expr && v.remat) {  // a copy for each user; a splat stays recognizable as one
      consume(ssa);
      ExprP e = clone_expr(v.expr);
      if (splats_.count(v.expr)) {
        splats_.insert(e);
        bcast_src_[e.get()] = bcast_src_[v.expr.get()];
      }
      return e;
    }
    if (v.expr) {
      ExprP e = v.expr;
      v.expr = nullptr;  // used once: moved into its user
      v.var = "<used>";
      return e;
    }
    if (v.var == "<used>") internal_error("ttir", "value %" + ssa + " used twice after inlining");
    if (v.var == "<permute>") {  // a permutation that tl.split does not take apart: the IR's permute
      const LazyPerm& lp = lazy_perm_.at(ssa);
      std::vector<ExprP> order;
      for (int a : lp.order) order.push_back(make_const_int(a, cur_loc_));
      return make_permute(make_var(lp.src, cur_loc_), order, cur_loc_);
    }
    if (v.var.rfind("<ptrview>", 0) == 0)
      user_error(cur_loc_, "a bitcast pointer is supported only as the pointer of tl.load, tl.store, or tl.atomic_max / tl.atomic_min on floats");
    consume(ssa);
    ExprP e = make_var(v.var, cur_loc_);
    return e;
  }
  const VType& type_of(const std::string& ssa) { return lookup(ssa).t; }

  // Uses of every value: in total, and by ops directly in each block (nested regions excluded).
  void count_text(const std::string& s, std::map<std::string, int>& into) {
    for (size_t p = s.find('%'); p != std::string::npos; p = s.find('%', p + 1)) {
      size_t e = p + 1;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_' || s[e] == '.' || s[e] == '$' || s[e] == '#' || s[e] == '-')) ++e;
      into[s.substr(p + 1, e - p - 1)]++;
    }
  }
  void count_uses(const Block& b) {
    for (const Op& op : b.ops) {
      count_text(op.text, uses_);
      count_text(op.trailer, uses_);
      for (const Region& r : op.regions)
        for (const Block& bb : r.blocks) count_uses(bb);
    }
  }
  std::map<std::string, int> local_uses(const Block& b) {
    std::map<std::string, int> m;
    for (const Op& op : b.ops) {
      count_text(op.text, m);
      count_text(op.trailer, m);
    }
    return m;
  }

  std::string var_name(const std::string& ssa) {
    std::string base = ssa;
    for (char& c : base)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
    base += suffix_;
    std::string n = base;
    for (int k = 1; used_names_.count(n) || is_param(n); ++k) n = base + "_" + std::to_string(k);
    used_names_.insert(n);
    return n;
  }
  bool is_param(const std::string& n) {
    for (const std::string& a : launch_.arg_names)
      if (a == n) return true;
    return false;
  }

  // Defines `ssa` as `e`: inlined into its one user in this block when pure, else a variable.
  void define(const std::string& ssa, ExprP e, VType t, bool pure, SourceLoc loc) {
    e->loc = e->loc.valid() ? e->loc : loc;
    auto total = uses_.find(ssa);
    int n = total == uses_.end() ? 0 : total->second;
    auto local = local_.back().find(ssa);
    int nl = local == local_.back().end() ? 0 : local->second;
    if (pure && n == 1 && nl == 1) {
      bind(ssa, Value{e, "", t});
      return;
    }
    if (n == 0 && pure) return;  // dead
    std::string v = python_name(ssa, t);
    out_->push_back(make_assign(v, e, loc));
    bind(ssa, Value{nullptr, v, t});
    holder_[v] = Holder{ssa, t, scopes_.size()};
  }

  // Whether an inlined expression not yet emitted reads variable `var` (it must not change before).
  bool pending_reads(const std::string& var) {
    auto reads = [&](const Expr& e) { return e.kind == ExprKind::Var && e.name == var; };
    for (const auto& scope : scopes_)
      for (const auto& [ssa, v] : scope)
        if (any_expr(v.expr, reads)) return true;
    return false;
  }

  // The variable for a value: the Python variable's own name (the op's name location) when that
  // name is free, or holds an earlier value of the same type, declared in this block, whose every
  // use has been emitted (the Python variable was reassigned); else a unique name.
  std::string python_name(const std::string& ssa, const VType& t) {
    std::string p = cur_name_;
    bool ok = !p.empty() && suffix_.empty() && !is_param(p);
    for (char ch : p) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (ok && !std::isdigit(static_cast<unsigned char>(p[0]))) {
      auto h = holder_.find(p);
      if (h == holder_.end() && !used_names_.count(p)) {
        used_names_.insert(p);
        return p;
      }
      if (h != holder_.end()) {
        const Holder& old = h->second;
        auto total = uses_.find(old.ssa);
        int n = total == uses_.end() ? 0 : total->second;
        if (old.depth == scopes_.size() && old.t.elem == t.elem && old.t.ptr == t.ptr && old.t.shape == t.shape &&
            consumed_[old.ssa] >= n && !pending_reads(p))
          return p;
      }
    }
    return var_name(ssa);
  }

  // The operands of an elementwise op of result shape `shape`: a tt.splat or tt.broadcast used only
  // here is read as its unbroadcast operand (the IR broadcasts as numpy does) when the operands'
  // shapes still broadcast to the whole shape. `keep_first`: the first operand keeps its shape (a
  // load's or store's pointers).
  std::vector<ExprP> elementwise(const std::vector<std::string>& ssas, const Shape& shape, bool keep_first = false) {
    std::vector<ExprP> out;
    std::vector<Shape> shapes;
    for (const std::string& s : ssas) {
      out.push_back(use(s));
      shapes.push_back(type_of(s).shape);
    }
    std::vector<Shape> inner = shapes;
    bool any = false;
    for (size_t i = keep_first ? 1 : 0; i < out.size(); ++i)
      if (splats_.count(out[i])) {
        auto it = bcast_src_.find(out[i].get());
        inner[i] = it == bcast_src_.end() ? Shape{} : it->second;
        any = true;
      }
    if (!any) return out;
    // numpy broadcasting of the inner shapes must give `shape` exactly
    Shape r;
    for (const Shape& sh : inner) {
      if (sh.size() > r.size()) r.insert(r.begin(), sh.size() - r.size(), 1);
      for (size_t d = 0; d < sh.size(); ++d) {
        int64_t& x = r[r.size() - sh.size() + d];
        int64_t y = sh[d];
        if (x == 1) x = y;
        else if (y != 1 && y != x) return out;
      }
    }
    if (r != shape) return out;
    for (size_t i = keep_first ? 1 : 0; i < out.size(); ++i)
      if (splats_.count(out[i])) out[i] = out[i]->args.at(0);
    return out;
  }

  // Makes value `ssa` cheap to copy: an inlined (single-use) expression is assigned to a variable.
  void hold(const std::string& ssa) {
    Value& v = lookup(ssa);
    if (!v.expr || v.remat) return;
    if (splats_.count(v.expr) && bcast_src_[v.expr.get()].empty()) {  // a splat: its scalar in a variable
      ExprP bc = v.expr;
      ExprP src = bc->args.at(0);
      if (src->kind != ExprKind::Var && src->kind != ExprKind::Const) {
        std::string sv = var_name(ssa + "_s");
        out_->push_back(make_assign(sv, src, cur_loc_));
        bc->args[0] = make_var(sv, cur_loc_);
      }
      v.remat = true;
      return;
    }
    std::string var = var_name(ssa);
    VType t = v.t;
    out_->push_back(make_assign(var, use(ssa), cur_loc_));
    // `use` consumed the expression; the value now lives in the variable
    Value& w = lookup(ssa);
    w = Value{nullptr, var, t};
    holder_[var] = Holder{ssa, t, scopes_.size()};
  }

  // ---- blocks ----
  // A function body of several blocks (an early `return` makes Triton emit cf.cond_br/cf.br): each
  // block is emitted with its successors nested under the branch that reaches them (a block reached
  // from two places is emitted in both), so the values a block defines stay visible to the blocks
  // it dominates.
  void emit_cfg(const Block& b, const std::vector<Value>& args, int depth) {
    if (depth > 64) user_error(cur_loc_, "control flow too deep to lower (more than 64 nested branches)");
    scopes_.push_back({});
    local_.push_back(local_uses(b));
    for (size_t i = 0; i < b.args.size() && i < args.size(); ++i) bind(b.args[i], args[i]);
    for (const Op& op : b.ops) {
      if (op.name != "cf.cond_br" && op.name != "cf.br") {
        emit(op);
        continue;
      }
      cur_loc_ = loc_of(op);
      Cursor c(op.text, op.text_loc);
      // a successor: ^bbN or ^bbN(%v, ... : types); its arguments' values
      auto target = [&](std::vector<Value>& vals) -> const Block& {
        c.expect("^");
        std::string label = c.ident();
        if (c.eat("(")) {
          while (c.peek_value()) {
            std::string v = c.value();
            Value& src = lookup(v);
            if (src.expr) {  // a successor may use it more than once
              std::string var = var_name(v);
              VType t = src.t;
              out_->push_back(make_assign(var, use(v), cur_loc_));
              vals.push_back(Value{nullptr, var, t});
            } else {
              consume(v);
              vals.push_back(src);
            }
            if (!c.eat(",")) break;
          }
          c.skip_to(')');
          c.expect(")");
        }
        for (const Block& bb : region_->blocks)
          if (bb.label == label) return bb;
        user_error(cur_loc_, "malformed TTIR: no block ^" + label);
      };
      if (op.name == "cf.br") {
        std::vector<Value> vals;
        const Block& t = target(vals);
        emit_cfg(t, vals, depth + 1);
      } else {
        std::string cv = c.value();
        ExprP cond = use(cv);
        c.expect(",");
        std::vector<Value> tv, fv;
        const Block& tb = target(tv);
        c.expect(",");
        const Block& fb = target(fv);
        SourceLoc loc = cur_loc_;
        std::vector<StmtP> then_s, else_s;
        std::vector<StmtP>* saved = out_;
        out_ = &then_s;
        emit_cfg(tb, tv, depth + 1);
        out_ = &else_s;
        emit_cfg(fb, fv, depth + 1);
        out_ = saved;
        out_->push_back(make_if(cond, std::move(then_s), std::move(else_s), loc));
      }
      break;  // a branch ends its block
    }
    local_.pop_back();
    scopes_.pop_back();
  }

  // Emits a block's ops into *out_; the block's arguments are bound to `args` (expressions).
  void emit_block(const Block& b, const std::vector<Value>& args) {
    scopes_.push_back({});
    local_.push_back(local_uses(b));
    for (size_t i = 0; i < b.args.size() && i < args.size(); ++i) bind(b.args[i], args[i]);
    for (const Op& op : b.ops) emit(op);
    local_.pop_back();
    scopes_.pop_back();
  }

  // The values a terminator (scf.yield, scf.condition's rest, tt.return) passes on.
  std::vector<std::string> operands(const std::string& text) {
    std::vector<std::string> out;
    Cursor c(text, cur_loc_);
    while (c.peek_value()) {
      out.push_back(c.value());
      if (!c.eat(",")) break;
    }
    return out;
  }

  // Assigns `vars` = the values `ssas` (all read before any is written).
  void assign_all(const std::vector<std::string>& vars, const std::vector<std::string>& ssas) {
    if (vars.size() != ssas.size()) user_error(cur_loc_, "malformed TTIR: yield arity differs from the op's results");
    std::vector<ExprP> vals;
    for (const std::string& s : ssas) vals.push_back(use(s));
    bool plain = vars.size() == 1;
    if (plain) {
      out_->push_back(make_assign(vars[0], vals[0], cur_loc_));
      return;
    }
    std::vector<std::string> tmps;
    for (size_t i = 0; i < vars.size(); ++i) {
      std::string t = var_name("yield" + std::to_string(i));
      out_->push_back(make_assign(t, vals[i], cur_loc_));
      tmps.push_back(t);
    }
    for (size_t i = 0; i < vars.size(); ++i) out_->push_back(make_assign(vars[i], make_var(tmps[i], cur_loc_), cur_loc_));
  }

  // An integer divisor that is (through casts) the result of a masked tt.load without
  // `other`: its masked-off lanes are undefined in Triton, and kernels divide by them (FlagGems'
  // pointwise floor_divide and remainder load both operands with the store's mask and compute every
  // lane). Those lanes divide by 1 instead of by the IR load's 0, so only a zero in a lane the load
  // read is the IR's division-by-zero fault. The mask must still be held by its variable here (or be
  // a rematerializable value); otherwise the divisor is left as it is.
  ExprP guard_divisor(const std::string& ssa, ExprP b, const VType& t) {
    std::string s = ssa;
    const Op* d = nullptr;
    for (int hop = 0; hop < 8; ++hop) {
      auto it = def_op_.find(s);
      if (it == def_op_.end()) return b;
      d = it->second;
      static const std::set<std::string> casts = {"arith.extsi",  "arith.extui",  "arith.trunci", "arith.fptosi", "arith.fptoui",
                                                  "arith.sitofp", "arith.uitofp", "arith.extf",   "arith.truncf"};
      if (!casts.count(d->name)) break;
      Cursor cc(d->text, d->text_loc);
      s = cc.value();
    }
    if (!d || d->name != "tt.load") return b;
    Cursor cc(d->text, d->text_loc);
    std::vector<std::string> ops;
    while (cc.peek_value()) {
      ops.push_back(cc.value());
      if (!cc.eat(",")) break;
    }
    if (ops.size() != 2) return b;  // no mask, or an `other`
    const Value* mv = nullptr;
    for (auto it = scopes_.rbegin(); it != scopes_.rend() && !mv; ++it)
      if (auto f = it->find(ops[1]); f != it->end()) mv = &f->second;
    if (!mv || mv->t.shape != t.shape) return b;
    const Value& m = *mv;
    ExprP mask;
    if (m.expr && m.remat) {
      mask = clone_expr(m.expr);
    } else if (!m.expr && !m.var.empty() && m.var[0] != '<') {
      auto h = holder_.find(m.var);
      if (h == holder_.end() || h->second.ssa != ops[1]) return b;
      mask = make_var(m.var, cur_loc_);
    } else {
      return b;
    }
    return make_where(mask, b, make_const_int(1, cur_loc_), cur_loc_);
  }

  // The value a variable of type t starts with before a runtime if/while assigns it: zeros; for
  // pointers (an if that chooses one of several pointer arguments) the null pointer of t's element
  // type, int_to_ptr(0), which is valid until an access through it.
  ExprP zero_of(const VType& t) {
    Scalar et = t.ptr ? Scalar::I64 : t.elem;
    ExprP z = is_float(et) ? make_const_float(0.0, cur_loc_) : make_const_int(0, cur_loc_);
    z->weak = false;
    z->dtype = et;
    if (!t.shape.empty()) {
      std::vector<ExprP> dims;
      for (int64_t d : t.shape) dims.push_back(make_const_int(d, cur_loc_));
      z = make_full(dims, z, et, cur_loc_);
    }
    return t.ptr ? make_int_to_ptr(z, t.elem, cur_loc_) : z;
  }

  std::vector<ExprP> dims(const Shape& s) {
    std::vector<ExprP> d;
    for (int64_t x : s) d.push_back(make_const_int(x, cur_loc_));
    return d;
  }

  // A constant of type t. TTIR gives both operands of an op one type, so an i32 or f32 constant is
  // written as a plain literal (it takes the other operand's type, which is the same).
  ExprP typed_const(double f, int64_t i, Scalar t) {
    ExprP c = is_float(t) ? make_const_float(f, cur_loc_) : (t == Scalar::I1 ? make_const_bool(i != 0, cur_loc_) : make_const_int(i, cur_loc_));
    bool plain = (t == Scalar::F32) || (t == Scalar::I32 && i == static_cast<int32_t>(i));
    c->weak = plain;
    c->dtype = t;
    return c;
  }
  ExprP splat(ExprP scalar, const VType& t) {
    if (t.shape.empty()) return scalar;
    return make_broadcast(scalar, dims(t.shape), cur_loc_);
  }

  // A literal of type t: "5", "-1", "true", "1.000000e+00", "0xFF800000" (bits).
  ExprP literal(const std::string& lit, const VType& t) {
    Scalar s = t.elem;
    if (lit == "true" || lit == "false") return typed_const(0, lit == "true", s);
    if (lit.rfind("0x", 0) == 0 && is_fp8(s)) {  // the bit pattern, reinterpreted
      int64_t bits = static_cast<int8_t>(static_cast<uint8_t>(std::stoull(lit.substr(2), nullptr, 16)));
      return make_bitcast(typed_const(0, bits, Scalar::I8), s, cur_loc_);
    }
    if (lit.rfind("0x", 0) == 0 && is_float(s)) {
      uint64_t bits = std::stoull(lit.substr(2), nullptr, 16);
      double v = 0;
      if (s == Scalar::F32) v = std::bit_cast<float>(static_cast<uint32_t>(bits));
      else if (s == Scalar::F64) v = std::bit_cast<double>(bits);
      else if (s == Scalar::BF16) v = std::bit_cast<float>(static_cast<uint32_t>(bits << 16));
      else v = half_to_double(static_cast<uint16_t>(bits));
      return typed_const(v, 0, s);
    }
    if (is_float(s)) return typed_const(std::stod(lit), 0, s);
    int64_t i = lit.rfind("0x", 0) == 0 ? static_cast<int64_t>(std::stoull(lit.substr(2), nullptr, 16)) : std::stoll(lit);
    if (s == Scalar::I32) i = static_cast<int32_t>(i);
    if (s == Scalar::I16) i = static_cast<int16_t>(i);
    if (s == Scalar::I8) i = static_cast<int8_t>(i);
    return typed_const(0, i, s);
  }
  static double half_to_double(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    double v;
    if (exp == 0) v = std::ldexp(man, -24);
    else if (exp == 31) v = man ? NAN : INFINITY;
    else v = std::ldexp(man + 1024, exp - 25);
    return sign ? -v : v;
  }

  // ---- ops ----
  // One op; where the launch asks for hint checks, the hints on its result (Op::hints) become asserts
  // that they hold (ir/Hints.h), read off the result right after it is defined.
  void emit(const Op& op) {
    bool hinted = launch_.hint_checks && !op.hints.empty() && op.results.size() == 1;
    if (hinted) {  // one more use: the checks read the value too
      uses_[op.results[0]]++;
      local_.back()[op.results[0]]++;
    }
    emit_op(op);
    if (!hinted) return;
    cur_loc_ = loc_of(op);
    cur_name_ = name_of(op);
    const std::string& r = op.results[0];
    Value& v = lookup(r);
    Type t = v.t.type();
    if (t.ptr || v.var.rfind("<", 0) == 0) return;
    ExprP x = use(r);
    for (const auto& [attr, values] : op.hints) {
      HintKind k = attr == "tt.divisibility" ? HintKind::Divisibility : attr == "tt.contiguity" ? HintKind::Contiguity : HintKind::Constancy;
      for (StmtP s : hint_checks(k, values, x, t, cur_name_, cur_loc_, binder())) out_->push_back(s);
    }
  }

  void emit_op(const Op& op) {
    OpUses op_uses(*this);
    cur_loc_ = loc_of(op);
    cur_name_ = name_of(op);
    for (const std::string& r : op.results) def_op_[r] = &op;
    const std::string& n = op.name;
    if ((n == "tt.splat" || n == "tt.addptr" || n == "tt.broadcast" || n == "tt.expand_dims" || n == "tt.reshape") &&
        op.results.size() == 1) {
      Cursor c0(op.text, op.text_loc);
      std::string first = c0.value();
      std::string src = view_of(first);
      if (!src.empty()) return emit_on_view(op, first, src);
    }
    Cursor c(op.text, op.text_loc);
    auto res = [&]() -> const std::string& {
      if (op.results.size() != 1) user_error(op.text_loc, "malformed TTIR: " + q(n) + " needs one result");
      return op.results[0];
    };
    // `%a, %b : T` (arith binaries, math unaries): the operands and the last type
    auto simple = [&](std::vector<std::string>& vals) -> VType {
      while (c.peek_value()) {
        vals.push_back(c.value());
        if (!c.eat(",")) break;
      }
      c.skip_to(':');  // attributes such as overflow<nsw>, fastmath<...>
      VType t;
      if (c.eat(":")) {
        std::string tx = c.type();
        while (c.eat(",")) tx = c.type();  // select: cond type, value type
        t = vtype(tx, op.text_loc);
      } else if (!vals.empty()) {
        t = type_of(vals.back());
      }
      return t;
    };

    static const std::map<std::string, BinOp> binops = {
        {"arith.addi", BinOp::Add},     {"arith.addf", BinOp::Add},      {"arith.subi", BinOp::Sub},     {"arith.subf", BinOp::Sub},
        {"arith.muli", BinOp::Mul},     {"arith.mulf", BinOp::Mul},      {"arith.divf", BinOp::Div},     {"arith.divsi", BinOp::FloorDiv},
        {"arith.remsi", BinOp::Mod},    {"arith.remf", BinOp::Mod},      {"arith.andi", BinOp::And},     {"arith.ori", BinOp::Or},
        {"arith.xori", BinOp::Xor},     {"arith.shli", BinOp::Shl},      {"arith.shrsi", BinOp::Shr},    {"arith.maxsi", BinOp::Max},
        {"arith.minsi", BinOp::Min},    {"arith.maxnumf", BinOp::MaxNum}, {"arith.minnumf", BinOp::MinNum},  {"arith.maximumf", BinOp::Max},
        {"arith.minimumf", BinOp::Min}, {"tt.precise_divf", BinOp::Div}, {"arith.ceildivsi", BinOp::Cdiv}};
    static const std::map<std::string, UnOp> unops = {
        {"math.exp", UnOp::Exp},     {"math.exp2", UnOp::Exp2}, {"math.log", UnOp::Log},   {"math.log2", UnOp::Log2},
        {"math.sqrt", UnOp::Sqrt},   {"tt.precise_sqrt", UnOp::Sqrt}, {"math.rsqrt", UnOp::Rsqrt}, {"math.tanh", UnOp::Tanh},
        {"math.absf", UnOp::Abs},    {"math.absi", UnOp::Abs},  {"arith.negf", UnOp::Neg}};

    if (auto b = binops.find(n); b != binops.end()) {
      std::vector<std::string> v;
      VType t = simple(v);
      if (v.size() != 2) c.fail("two operands");
      std::vector<ExprP> xy = elementwise(v, t.shape);
      if (n == "arith.divsi" || n == "arith.remsi") xy[1] = guard_divisor(v[1], xy[1], t);
      BinOp bop = t.elem == Scalar::I1 ? i1_binop(n) : b->second;
      if (n == "tt.precise_divf") return define(res(), ieee_div(xy[0], xy[1], t.elem), t, true, cur_loc_);
      define(res(), make_binary(bop, xy[0], xy[1], cur_loc_), t, true, cur_loc_);
      return;
    }
    if (auto u = unops.find(n); u != unops.end()) {
      std::vector<std::string> v;
      VType t = simple(v);
      define(res(), make_unary(u->second, use(v.at(0)), cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n.rfind("math.", 0) == 0) {  // math.erf, math.floor, math.sin ...: the Math rows by name
      std::string base = n.substr(5);
      if (base == "roundeven") base = "rint";
      if (base == "powf") base = "pow";
      if (std::optional<UnOp> u = math_unop(base)) {
        std::vector<std::string> v;
        VType t = simple(v);
        define(res(), make_unary(*u, use(v.at(0)), cur_loc_), t, true, cur_loc_);
        return;
      }
      if (std::optional<BinOp> b = math_binop(base)) {
        std::vector<std::string> v;
        VType t = simple(v);
        if (v.size() != 2) c.fail("two operands");
        std::vector<ExprP> xy = elementwise(v, t.shape);
        define(res(), make_binary(*b, xy[0], xy[1], cur_loc_), t, true, cur_loc_);
        return;
      }
    }
    if (n == "arith.shrui" || n == "arith.divui" || n == "arith.remui" || n == "arith.maxui" || n == "arith.minui" || n == "tt.mulhiui")
      return emit_unsigned(op, n, c);
    if (n == "math.fma") {
      std::vector<std::string> v;
      VType t = simple(v);
      if (v.size() != 3) c.fail("three operands");
      define(res(), fused_multiply_add(elementwise(v, t.shape), t.elem), t, true, cur_loc_);
      return;
    }
    if (n == "arith.constant") {
      VType t;
      std::string lit;
      if (c.eat("dense<")) {
        std::string inner;
        if (c.peek("[")) user_error(cur_loc_, "a non-uniform tensor constant is not supported yet");
        lit = c.number();
        c.expect(">");
        c.expect(":");
        t = vtype(c.type(), op.text_loc);
        ExprP e = splat(literal(lit, VType{t.elem, false, {}}), t);
        if (!t.shape.empty()) {
          splats_.insert(e);
          bcast_src_[e.get()] = Shape{};
        }
        bind(res(), Value{e, "", t, true});
        return;
      }
      lit = c.number();
      if (c.eat(":")) t = vtype(c.type(), op.text_loc);
      else t = VType{Scalar::I1, false, {}};  // `true` / `false`
      bind(res(), Value{literal(lit, t), "", t, true});
      return;
    }
    if (n == "arith.cmpi" || n == "arith.cmpf") {
      std::string pred = c.ident();
      c.expect(",");
      std::vector<std::string> v;
      VType t = simple(v);
      if (v.size() != 2) c.fail("two operands");
      std::vector<ExprP> ab = elementwise(v, t.shape);
      ExprP a = ab[0], b = ab[1];
      VType rt{Scalar::I1, false, t.shape};
      define(res(), compare(pred, a, b, type_of_expr(v, t)), rt, true, cur_loc_);
      return;
    }
    if (n == "arith.select") {
      std::vector<std::string> v;
      VType t = simple(v);
      if (v.size() != 3) c.fail("three operands");
      std::vector<ExprP> cab = elementwise(v, t.shape);
      define(res(), make_where(cab[0], cab[1], cab[2], cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "arith.sitofp" || n == "arith.extf" || n == "arith.truncf" || n == "arith.extsi" || n == "arith.trunci" ||
        n == "arith.fptosi" || n == "arith.extui" || n == "arith.uitofp" || n == "arith.fptoui" || n == "tt.fp_to_fp") {
      std::string v = c.value(), rounding = "rtne";
      while (c.eat(",")) {  // rounding = rtne | rtz
        std::string key = c.ident();
        c.eat("=");
        std::string val = c.ident();
        if (key == "rounding") rounding = val;
      }
      c.expect(":");
      VType from = vtype(c.type(), op.text_loc);
      if (!c.eat("to")) c.expect("->");
      VType to = vtype(c.type(), op.text_loc);
      ExprP x = use(v);
      if (n == "tt.fp_to_fp" && rounding == "rtz" && from.elem == Scalar::F32 && (to.elem == Scalar::F16 || to.elem == Scalar::BF16 || is_fp8(to.elem))) {
        define(res(), cast_toward_zero(x, to.elem), to, true, cur_loc_);
        return;
      }
      if ((n == "arith.extui" || n == "arith.uitofp") && from.elem != Scalar::I1) {
        define(res(), unsigned_convert(x, from.elem, to.elem, cur_loc_, binder()), to, true, cur_loc_);
        return;
      }
      if (n == "arith.fptoui") {
        define(res(), float_to_unsigned(x, to.elem, cur_loc_, binder()), to, true, cur_loc_);
        return;
      }
      define(res(), make_cast(x, to.elem, cur_loc_), to, true, cur_loc_);
      return;
    }
    if (n == "tt.get_program_id" || n == "tt.get_num_programs") {
      std::string ax = c.ident();
      int a = ax == "x" ? 0 : ax == "y" ? 1 : ax == "z" ? 2 : -1;
      if (a < 0) c.fail("x, y or z");
      ExprP e = n == "tt.get_program_id" ? make_program_id(a, cur_loc_) : make_num_programs(a, cur_loc_);
      define(res(), e, VType{Scalar::I32, false, {}}, true, cur_loc_);
      return;
    }
    if (n == "tt.make_range") {
      std::string attrs = c.balanced('{', '}');
      int64_t lo = attr_int(attrs, "start"), hi = attr_int(attrs, "end");
      c.expect(":");
      VType t = vtype(c.type(), op.text_loc);
      define(res(), make_arange(make_const_int(lo, cur_loc_), make_const_int(hi, cur_loc_), cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "tt.splat" || n == "tt.broadcast") {
      std::string v = c.value();
      c.expect(":");
      c.type();
      c.expect("->");
      VType t = vtype(c.type(), op.text_loc);
      Shape src_shape = type_of(v).shape;
      ExprP src = use(v);
      auto total = uses_.find(res());
      if (n == "tt.splat" && total != uses_.end() && total->second > 1) {
        // used several times: the scalar is held in a variable and each user broadcasts it
        std::string sv;
        if (src->kind == ExprKind::Var || src->kind == ExprKind::Const) {
          sv = src->kind == ExprKind::Var ? src->name : "";
        }
        if (src->kind != ExprKind::Const && sv.empty()) {
          sv = var_name(res() + "_s");
          out_->push_back(make_assign(sv, src, cur_loc_));
        }
        ExprP bc = make_broadcast(src->kind == ExprKind::Const ? src : make_var(sv, cur_loc_), dims(t.shape), cur_loc_);
        splats_.insert(bc);
        bcast_src_[bc.get()] = src_shape;
        bind(res(), Value{bc, "", t, true});
        return;
      }
      ExprP bc = make_broadcast(src, dims(t.shape), cur_loc_);
      splats_.insert(bc);
      bcast_src_[bc.get()] = src_shape;
      define(res(), bc, t, true, cur_loc_);
      return;
    }
    if (n == "tt.expand_dims") {
      std::string v = c.value();
      std::string attrs = c.balanced('{', '}');
      c.expect(":");
      c.type();
      c.expect("->");
      VType t = vtype(c.type(), op.text_loc);
      define(res(), make_expand_dims(use(v), static_cast<int>(attr_int(attrs, "axis")), cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "tt.unsplat") {  // %s = tt.unsplat %v : tensor<1x..xT>: the one element, as a scalar (its bits)
      std::string v = c.value();
      c.expect(":");
      VType from = vtype(c.type(), op.text_loc);
      if (shape_numel(from.shape) != 1) user_error(cur_loc_, "malformed TTIR: tt.unsplat of a tensor of more than one element");
      if (from.ptr) user_error(cur_loc_, "a one-element tensor of pointers made a scalar (tt.unsplat) is not supported yet");
      ExprP one = make_reshape(use(v), dims(Shape{1}), cur_loc_);
      ExprP first = make_binary(BinOp::Eq, make_arange(make_const_int(0, cur_loc_), make_const_int(1, cur_loc_), cur_loc_), make_const_int(0, cur_loc_), cur_loc_);
      define(res(), select_lane(first, one, 0, from.elem, cur_loc_), VType{from.elem, from.ptr, {}}, true, cur_loc_);
      return;
    }
    if (n == "tt.reshape") {
      std::string v = c.value();
      while (!c.peek(":")) c.ident();  // allow_reorder, efficient_layout
      c.expect(":");
      c.type();
      c.expect("->");
      VType t = vtype(c.type(), op.text_loc);
      define(res(), make_reshape(use(v), dims(t.shape), cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "tt.trans") {
      std::string v = c.value();
      std::string attrs = c.balanced('{', '}');
      c.expect(":");
      VType from = vtype(c.type(), op.text_loc);
      c.expect("->");
      VType t = vtype(c.type(), op.text_loc);
      if (from.shape.size() != 2) {
        // kept unevaluated: tl.split can read it (the only consumer of a rank-3 permute supported)
        hold(v);
        LazyPerm lp;
        lp.src = lookup(v).var.empty() ? std::string() : lookup(v).var;
        if (lp.src.empty()) {  // a rematerialized value: held in a variable of its own
          lp.src = var_name(v + "_perm");
          out_->push_back(make_assign(lp.src, use(v), cur_loc_));
        } else {
          consume(v);
        }
        lp.src_shape = from.shape;
        for (int64_t x : i32_array(attrs, "order")) lp.order.push_back(static_cast<int>(x));
        lazy_perm_[res()] = lp;
        bind(res(), Value{nullptr, "<permute>", t});
        return;
      }
      define(res(), make_trans(use(v), cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "tt.addptr") {
      std::vector<std::string> v;
      while (c.peek_value()) {
        v.push_back(c.value());
        if (!c.eat(",")) break;
      }
      c.expect(":");
      VType t = vtype(c.type(), op.text_loc);
      auto total = uses_.find(res());
      if (!t.shape.empty() && total != uses_.end() && total->second > 1) {
        // pointers used by several loads and stores: recomputed in each (the interpreter reads
        // `p + offsets` in a load as a run of addresses; a pointer tile in a variable it cannot)
        for (const std::string& o : v) hold(o);
        std::vector<ExprP> po = elementwise({v.at(0), v.at(1)}, t.shape);
        bind(res(), Value{make_binary(BinOp::Add, po[0], po[1], cur_loc_), "", t, true});
        return;
      }
      std::vector<ExprP> po = elementwise({v.at(0), v.at(1)}, t.shape);
      define(res(), make_binary(BinOp::Add, po[0], po[1], cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "tt.load") {
      std::vector<std::string> v;
      while (c.peek_value()) {
        v.push_back(c.value());
        if (!c.eat(",")) break;
      }
      std::string ptr_type;
      std::string r = c.rest();
      size_t colon = r.rfind(':');
      ptr_type = r.substr(colon + 1);
      while (!ptr_type.empty() && ptr_type[0] == ' ') ptr_type.erase(0, 1);
      VType pt = vtype(ptr_type, op.text_loc);
      std::string view = view_of(v.at(0));
      if (!view.empty()) {  // through a bitcast pointer: the buffer's values, converted
        Scalar be = type_of(view).elem, ve = type_of(v[0]).elem;
        const int64_t ratio = view_ratio(v[0]);
        std::vector<std::string> w = v;
        w[0] = view;
        std::vector<ExprP> pmo = elementwise(w, pt.shape, true);
        ExprP m = v.size() > 1 ? pmo[1] : nullptr;
        if (ratio > 1) {
          VType t{ve, false, pt.shape};
          ExprP got = view_load(pmo[0], m, be, ve, ratio, v.size() <= 2);
          if (v.size() > 2) got = make_where(clone_expr(m), got, pmo[2], cur_loc_);
          define(res(), got, t, false, cur_loc_);
          return;
        }
        ExprP o = v.size() > 2 ? view_value(pmo[2], ve, be) : nullptr;
        VType t{ve, false, pt.shape};
        ExprP ld = make_load(pmo[0], m, o, cur_loc_);
        ld->undef_masked = m && !o;  // masked-off lanes without `other` are undefined (ir/Undefined.h)
        define(res(), view_value(ld, be, ve), t, false, cur_loc_);
        return;
      }
      std::vector<ExprP> pmo = elementwise(v, pt.shape, true);
      ExprP p = pmo.at(0);
      ExprP m = v.size() > 1 ? pmo[1] : nullptr;
      ExprP o = v.size() > 2 ? pmo[2] : nullptr;
      VType t{pt.elem, false, pt.shape};
      ExprP ld = make_load(p, m, o, cur_loc_);
      ld->undef_masked = m && !o;  // masked-off lanes without `other` are undefined (ir/Undefined.h)
      define(res(), ld, t, false, cur_loc_);
      return;
    }
    if (n == "tt.store") {
      std::vector<std::string> v;
      while (c.peek_value()) {
        v.push_back(c.value());
        if (!c.eat(",")) break;
      }
      std::string view = view_of(v.at(0));
      Scalar be = Scalar::I32, ve = Scalar::I32;
      std::vector<std::string> w = v;
      if (!view.empty()) {  // through a bitcast pointer: the value converted to the buffer's type
        be = type_of(view).elem;
        ve = type_of(v[0]).elem;
        w[0] = view;
      }
      std::vector<ExprP> pvm = elementwise(w, type_of(v.at(0)).shape, true);
      ExprP m = v.size() > 2 ? pvm[2] : nullptr;
      if (!view.empty() && view_ratio(v[0]) > 1) {
        view_store(pvm.at(0), pvm.at(1), m, be, ve, view_ratio(v[0]));
        return;
      }
      ExprP p = pvm.at(0), val = view_value(pvm.at(1), ve, be);
      out_->push_back(make_store(p, val, m, cur_loc_));
      return;
    }
    if (n == "tt.split") return emit_split(op);
    if (n == "tt.join") return emit_join(op);
    if (n == "tt.gather") return emit_gather(op);
    if (n == "tt.histogram") return emit_histogram(op);
    if (n == "tt.cat") return emit_cat(op);
    if (n == "tt.dot_scaled") return emit_dot_scaled(op);
    if (n == "tt.make_tensor_descriptor") return emit_make_desc(op);
    if (n == "tt.descriptor_load" || n == "tt.descriptor_store") return emit_desc_access(op);
    if (n == "tt.descriptor_gather" || n == "tt.descriptor_scatter") return emit_desc_rows(op);
    if (n == "tt.map_elementwise") return emit_map_elementwise(op);
    if (n == "tt.dot") {
      std::vector<std::string> v;
      while (c.peek_value()) {
        v.push_back(c.value());
        if (!c.eat(",")) break;
      }
      std::string r = c.rest();
      bool tf32 = r.find("inputPrecision = tf32") != std::string::npos || r.find("inputPrecision = tf32x3") != std::string::npos;
      size_t arrow = r.rfind("->");
      VType t = vtype(trim_copy(r.substr(arrow + 2)), op.text_loc);
      ExprP a = use(v.at(0)), b = use(v.at(1)), acc = use(v.at(2));
      VType at = type_of_arg(v[0]);
      if (at.shape.size() == 3) {  // a batched dot ([B, M, K] @ [B, K, N]): one 2-D dot per batch (ir/Scaled.h)
        VType bt = type_of_arg(v[1]);
        if (bt.shape.size() != 3 || bt.shape[0] != at.shape[0] || t.shape.size() != 3)
          user_error(cur_loc_, "tl.dot of " + shape_str(at.shape) + " and " + shape_str(bt.shape) + " operands is not supported");
        bool ints = at.elem == Scalar::I8 && t.elem == Scalar::I32;
        if (!ints && !is_float(at.elem)) user_error(cur_loc_, std::string("tl.dot of ") + scalar_name(at.elem) + " operands is not supported yet (i8 and floats are)");
        Scalar acc_t = ints ? Scalar::I32 : at.elem == Scalar::F64 ? Scalar::F64 : Scalar::F32;
        BindFn bind = binder();
        ExprP av = bind("dot_a", a), bv = bind("dot_b", b);
        ExprP cv = bind("dot_acc", t.elem == acc_t ? acc : make_cast(acc, acc_t, cur_loc_));
        ExprP d = from_batches(at.shape[0], t.shape[1], t.shape[2], cur_loc_, [&](int64_t bi) {
          ExprP one = make_dot(batch_of(clone_expr(av), at.shape, at.elem, bi, cur_loc_), batch_of(clone_expr(bv), bt.shape, bt.elem, bi, cur_loc_),
                               batch_of(clone_expr(cv), t.shape, acc_t, bi, cur_loc_), cur_loc_);
          one->tf32 = tf32 && at.elem == Scalar::F32;
          return one;
        });
        if (t.elem != acc_t) d = make_cast(d, t.elem, cur_loc_);
        define(res(), d, t, true, cur_loc_);
        return;
      }
      if (at.elem == Scalar::I8 && t.elem == Scalar::I32) {  // i8 x i8 -> i32 (the IR's integer dot)
        define(res(), make_dot(a, b, acc, cur_loc_), t, true, cur_loc_);
        return;
      }
      if (!is_float(at.elem)) user_error(cur_loc_, std::string("tl.dot of ") + scalar_name(at.elem) + " operands is not supported yet (i8 and floats are)");
      // the IR's dot accumulates f64 operands in f64 and the others in f32; the TTIR result type
      // (out_dtype, an f32 accumulator of f64 operands) is one conversion of that
      const Scalar acc_t = at.elem == Scalar::F64 ? Scalar::F64 : Scalar::F32;
      ExprP accf = t.elem == acc_t ? acc : make_cast(acc, acc_t, cur_loc_);
      ExprP d = make_dot(a, b, accf, cur_loc_);
      d->tf32 = tf32 && at.elem == Scalar::F32;
      if (t.elem != acc_t) d = make_cast(d, t.elem, cur_loc_);
      define(res(), d, t, true, cur_loc_);
      return;
    }
    if (n == "tt.reduce") return emit_reduce(op);
    if (n == "tt.scan") return emit_scan(op);
    if (n == "tt.atomic_rmw" || n == "tt.atomic_cas") return emit_atomic(op, n, c);
    if (n == "tt.bitcast") {
      std::string v = c.value();
      c.expect(":");
      VType from = vtype(c.type(), op.text_loc);
      c.expect("->");
      VType to = vtype(c.type(), op.text_loc);
      if (from.ptr || to.ptr) {
        // A pointer seen as another element type (a view of the same buffer): read by tt.load and
        // tt.store, which convert the values (view_value), and by Triton's float atomic_max/atomic_min,
        // which updates a float buffer through an integer view (emit_atomic). Triton's loads and
        // stores of bool data (*i1) go through an *i8 view of the same bytes.
        if (!(from.ptr && to.ptr)) user_error(cur_loc_, "a bitcast between a pointer and a non-pointer is not supported");
        Scalar src = type_of(v).elem;
        bool bytes = (src == Scalar::I1 && to.elem == Scalar::I8) || (src == Scalar::I8 && to.elem == Scalar::I1);
        bool same = src != Scalar::I1 && to.elem != Scalar::I1 && scalar_bytes(src) == scalar_bytes(to.elem);
        // a wider view of narrower data (f32 scales in a uint8 KV cache): each element is `ratio`
        // consecutive elements of the buffer (view_load / view_store)
        bool wider = src != Scalar::I1 && to.elem != Scalar::I1 && scalar_bytes(to.elem) > scalar_bytes(src) &&
                     scalar_bytes(to.elem) % scalar_bytes(src) == 0;
        if (!bytes && !same && !wider && src != to.elem)
          user_error(cur_loc_, std::string("a pointer bitcast to a narrower element type (") + scalar_name(src) + " -> " +
                                   scalar_name(to.elem) + ") is not supported yet (a wider one, such as *u8 -> *f32, is)");
        if (view_ratio(v) > 1) user_error(cur_loc_, "a bitcast of a pointer that is already a wider view of its buffer is not supported yet");
        hold(v);
        bind(res(), Value{nullptr, "<ptrview>" + v, to, false});  // a view of %v
        if (wider) view_ratio_[res()] = scalar_bytes(to.elem) / scalar_bytes(src);
        return;
      }
      define(res(), make_bitcast(use(v), to.elem, cur_loc_), to, true, cur_loc_);
      return;
    }
    if (n == "tt.int_to_ptr" || n == "tt.ptr_to_int") {  // %p = tt.int_to_ptr %a : i64 -> !tt.ptr<f16>
      std::string v = c.value();
      c.expect(":");
      c.type();
      c.expect("->");
      VType to = vtype(c.type(), op.text_loc);
      define(res(), n == "tt.int_to_ptr" ? make_int_to_ptr(use(v), to.elem, cur_loc_) : make_ptr_to_int(use(v), cur_loc_), to, true, cur_loc_);
      return;
    }
    if (n == "scf.for") return emit_for(op);
    if (n == "scf.if") return emit_if(op);
    if (n == "scf.while") return emit_while(op);
    if (n == "scf.yield" || n == "tt.reduce.return" || n == "scf.condition") {
      yielded_ = operands(n == "scf.condition" ? after_paren(op.text) : op.text);
      if (n == "scf.condition") cond_ = operands(op.text.substr(op.text.find('(') + 1)).at(0);
      return;
    }
    if (n == "tt.return") {
      returned_ = operands(op.text);
      if (call_depth_ == 0 && region_ && region_->blocks.size() > 1) out_->push_back(ret_stmt());
      if (call_depth_ > 0 && !ret_frames_.empty() && ret_frames_.back().depth == call_depth_) {
        // a return of a helper of several blocks: its values into the call's result variables
        RetFrame& fr = ret_frames_.back();
        if (returned_.size() != fr.vars.size()) user_error(cur_loc_, "malformed TTIR: tt.return operands do not match the call's results");
        for (size_t i = 0; i < returned_.size(); ++i) out_->push_back(make_assign(fr.vars[i], use(returned_[i]), cur_loc_));
      }
      return;
    }
    if (n == "tt.call") return emit_call(op);
    if (n == "tt.assert") {
      std::string v = c.value();
      c.expect(",");
      std::string msg = c.string_lit();
      ExprP cond = use(v);
      if (!launch_.debug) return;
      auto s = std::make_shared<Stmt>();
      s->kind = StmtKind::Assert;
      s->loc = cur_loc_;
      s->text = msg;
      s->args = {cond};
      out_->push_back(s);
      return;
    }
    if (n == "tt.print") {
      std::string prefix = c.string_lit();
      // isSigned = array<i32: 0, 1, ...>: per value, whether its integers are signed; unsigned ones
      // narrower than 64 bits are printed zero-extended (an i64 of the same value)
      std::vector<int64_t> is_signed;
      if (c.peek("{")) is_signed = i32_array(c.balanced('{', '}'), "isSigned");
      std::vector<ExprP> vals;
      if (c.eat(":")) {
        while (c.peek_value()) {
          std::string v = c.value();
          Scalar e = type_of(v).elem;
          size_t k = vals.size();
          bool uns = k < is_signed.size() && !is_signed[k] && is_int(e) && e != Scalar::I1 && e != Scalar::I64;
          vals.push_back(uns ? zero_extend_i64(use(v), e, cur_loc_) : use(v));
          if (!c.eat(",")) break;
        }
      }
      auto s = std::make_shared<Stmt>();
      s->kind = StmtKind::Print;
      s->loc = cur_loc_;
      s->text = prefix;
      s->args = vals;
      out_->push_back(s);
      return;
    }
    if (n == "tt.extern_elementwise") {
      std::vector<std::string> v;
      while (c.peek_value()) {
        v.push_back(c.value());
        if (!c.eat(",")) break;
      }
      std::string attrs = c.balanced('{', '}');
      std::string sym = attr_str(attrs, "symbol");
      std::string r = c.rest();
      VType t = vtype(trim_copy(r.substr(r.rfind("->") + 2)), op.text_loc);
      std::string base = sym;
      if (base.rfind("__nv_", 0) == 0) base = base.substr(5);
      if (extern_rounding_forms(res(), base, v, t)) return;
      if (!base.empty() && base.back() == 'f' && base != "erf" && base != "erfc" && base != "fabs" && base != "fmaf" && base != "fmodf" && base != "normcdf")
        base.pop_back();
      if (base == "fmodf") base = "fmod";
      if (base == "isnand" || base == "isinfd" || base == "isfinited") base.pop_back();  // f64 forms
      static const std::map<std::string, UnOp> lib1 = {{"exp", UnOp::Exp},  {"exp2", UnOp::Exp2}, {"log", UnOp::Log},   {"log2", UnOp::Log2},
                                                       {"sqrt", UnOp::Sqrt}, {"rsqrt", UnOp::Rsqrt}, {"tanh", UnOp::Tanh}, {"fabs", UnOp::Abs}};
      if (auto u = lib1.find(base); u != lib1.end() && v.size() == 1) {
        define(res(), make_unary(u->second, use(v[0]), cur_loc_), t, true, cur_loc_);
        return;
      }
      if (std::optional<UnOp> u = math_unop(base); u && v.size() == 1) {
        define(res(), make_unary(*u, use(v[0]), cur_loc_), t, true, cur_loc_);
        return;
      }
      if (std::optional<BinOp> b = math_binop(base); b && v.size() == 2) {
        std::vector<ExprP> xy = elementwise(v, t.shape);
        define(res(), make_binary(*b, xy[0], xy[1], cur_loc_), t, true, cur_loc_);
        return;
      }
      if ((base == "fmax" || base == "fmin") && v.size() == 2) {
        ExprP a = use(v[0]), b = use(v[1]);
        define(res(), make_binary(base == "fmax" ? BinOp::MaxNum : BinOp::MinNum, a, b, cur_loc_), t, true, cur_loc_);  // as C fmax: maxNum
        return;
      }
      if (base == "fmod" && v.size() == 2) {
        ExprP a = use(v[0]), b = use(v[1]);
        define(res(), make_binary(BinOp::Mod, a, b, cur_loc_), t, true, cur_loc_);
        return;
      }
      if (base == "powi" && v.size() == 2) {  // x ** n for an i32 n: the float power of n converted
        std::vector<ExprP> xn = elementwise(v, t.shape);
        define(res(), make_binary(*math_binop("pow"), xn[0], make_cast(xn[1], t.elem, cur_loc_), cur_loc_), t, true, cur_loc_);
        return;
      }
      if ((base == "isnan" || base == "isinf" || base == "finite" || base == "isfinite") && v.size() == 1) {
        // libdevice's classifications of f32/f64 values (tl.math.isnan ...): 1 or 0 of the result's
        // integer type; NaN is the one value unequal to itself, and neither finite nor infinite
        ExprP x = use(v[0]);
        ExprP inf = make_const_float(std::numeric_limits<double>::infinity(), cur_loc_);
        ExprP r = base == "isnan"   ? make_binary(BinOp::Ne, x, clone_expr(x), cur_loc_)
                  : base == "isinf" ? make_binary(BinOp::Eq, make_unary(UnOp::Abs, x, cur_loc_), inf, cur_loc_)
                                    : make_binary(BinOp::Lt, make_unary(UnOp::Abs, x, cur_loc_), inf, cur_loc_);
        define(res(), t.elem == Scalar::I1 ? r : make_cast(r, t.elem, cur_loc_), t, true, cur_loc_);
        return;
      }
      if (extern_bit_forms(res(), base, v, t)) return;
      if (extern_more_forms(res(), base, v, t)) return;
      if (extern_bessel_forms(res(), base, v, t)) return;
      user_error(cur_loc_, "libdevice function " + q(sym) + " is not supported yet");
    }
    if (n == "tt.clampf") {
      std::vector<std::string> v;
      while (c.peek_value()) {
        v.push_back(c.value());
        if (!c.eat(",")) break;
      }
      std::string r = c.rest();
      VType t = vtype(trim_copy(r.substr(r.rfind(':') + 1)), op.text_loc);
      ExprP x = use(v.at(0)), lo = use(v.at(1)), hi = use(v.at(2));
      // propagateNan = none (tl.clamp's default): IEEE maxNum / minNum, a NaN x gives a bound, as the
      // GPU lowers it; = all: NaN in, NaN out
      const bool all = r.find("propagateNan = all") != std::string::npos;
      const BinOp mx = all ? BinOp::Max : BinOp::MaxNum, mn = all ? BinOp::Min : BinOp::MinNum;
      define(res(), make_binary(mn, make_binary(mx, x, lo, cur_loc_), hi, cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "llvm.intr.assume") {  // tl.assume: what the compiler may take as true is checked
      std::string v = c.value();
      auto s = std::make_shared<Stmt>();
      s->kind = StmtKind::Assert;
      s->loc = cur_loc_;
      s->text = "tl.assume: the assumed condition does not hold (Triton's compiler may miscompile this kernel)";
      s->args = {use(v)};
      out_->push_back(s);
      return;
    }
    if (n == "gpu.barrier" || n == "ttg.barrier") return;  // tl.debug_barrier: an instance runs its statements in order
    if (n == "tt.elementwise_inline_asm") return emit_inline_asm(op, c);
    static const std::map<std::string, std::string> named = {
        {"arith.bitcast", "bitcasts"},
        {"tt.make_tensor_descriptor", "tensor descriptors"}, {"tt.descriptor_load", "tensor descriptors"},
        {"tt.descriptor_store", "tensor descriptors"}, {"tt.make_tensor_ptr", "block pointers (tl.make_block_ptr)"},
        {"tt.advance", "block pointers (tl.advance)"}};
    if (auto it = named.find(n); it != named.end()) user_error(cur_loc_, it->second + " (" + n + ") is not supported yet");
    user_error(cur_loc_, "TTIR op " + q(n) + " is not supported yet");
  }

  // libdevice's bit, reinterpretation and integer conversion functions (`base` without `__nv_` and
  // without the f suffix's removal undone: float2int_rn ...), spelled as the PTX instructions that
  // libdevice itself uses (ir/InlinePtx.h), or as a bitcast; normcdf, sinpi and cospi from the op
  // table's functions. False where `base` is none of these.
  bool extern_bit_forms(const std::string& result, const std::string& base, const std::vector<std::string>& v, const VType& t) {
    auto elem = [&](size_t i) { return type_of_arg(v[i]).elem; };
    if (v.size() == 1 && (base == "float_as_int" || base == "int_as_float" || base == "float_as_uint" || base == "uint_as_float" ||
                          base == "double_as_longlong" || base == "longlong_as_double")) {
      define(result, make_bitcast(use(v[0]), t.elem, cur_loc_), t, true, cur_loc_);
      return true;
    }
    static const std::map<std::string, std::string> forms = {
        {"popc", "popc.b32 $0, $1;"}, {"clz", "clz.b32 $0, $1;"}, {"brev", "brev.b32 $0, $1;"},
        {"mulhi", "mul.hi.s32 $0, $1, $2;"}, {"umulhi", "mul.hi.u32 $0, $1, $2;"}, {"byte_perm", "prmt.b32 $0, $1, $2, $3;"},
        {"float2int_rn", "cvt.rni.s32.f32 $0, $1;"}, {"float2int_rz", "cvt.rzi.s32.f32 $0, $1;"},
        {"float2int_rd", "cvt.rmi.s32.f32 $0, $1;"}, {"float2int_ru", "cvt.rpi.s32.f32 $0, $1;"},
        {"float2uint_rn", "cvt.rni.u32.f32 $0, $1;"}, {"float2uint_rz", "cvt.rzi.u32.f32 $0, $1;"},
        {"float2uint_rd", "cvt.rmi.u32.f32 $0, $1;"}, {"float2uint_ru", "cvt.rpi.u32.f32 $0, $1;"},
        {"int2float_rn", "cvt.rn.f32.s32 $0, $1;"}, {"uint2float_rn", "cvt.rn.f32.u32 $0, $1;"},
        {"copysign", "copysign.f32 $0, $2, $1;"},
        // ffs: the 1-based position of the lowest set bit (0 for 0)
        {"ffs", "{ .reg .b32 t, u; .reg .pred z; sub.s32 t, 0, $1; and.b32 t, t, $1; sub.s32 t, t, 1; popc.b32 u, t; add.s32 u, u, 1; "
                "setp.eq.s32 z, $1, 0; selp.b32 $0, 0, u, z; }"}};
    auto f = forms.find(base);
    if (f != forms.end()) {
      bool ok = t.elem == Scalar::I32 || t.elem == Scalar::F32;
      std::string cons = t.elem == Scalar::F32 ? "=f" : "=r";
      for (size_t i = 0; i < v.size(); ++i) {
        ok = ok && (elem(i) == Scalar::I32 || elem(i) == Scalar::F32);
        cons += elem(i) == Scalar::F32 ? ",f" : ",r";
      }
      if (!ok) return false;
      std::vector<ExprP> vals = elementwise(v, t.shape);
      std::vector<PtxOperand> args;
      for (size_t i = 0; i < v.size(); ++i) args.push_back(PtxOperand{vals[i], elem(i)});
      define(result, lower_inline_ptx(f->second, cons, 1, args, {t.elem}, t.shape, cur_loc_, binder()).at(0), t, true, cur_loc_);
      return true;
    }
    if ((base == "erfinv" || base == "lgamma" || base == "erfcinv" || base == "erfcx" || base == "normcdfinv") && v.size() == 1 &&
        (t.elem == Scalar::F32 || t.elem == Scalar::F64)) {
      define(result, make_cast(special_f64(base, use(v[0])), t.elem, cur_loc_), t, true, cur_loc_);
      return true;
    }
    if ((base == "normcdf" || base == "sinpi" || base == "cospi") && v.size() == 1 && is_float(t.elem)) {
      auto c = [&](double x) { return typed_const(x, 0, t.elem); };
      ExprP x = binder()("x", use(v[0]));
      ExprP r;
      if (base == "normcdf") {  // (1/2) erfc(-x / sqrt(2))
        r = make_binary(BinOp::Mul, c(0.5), make_unary(UnOp::Erfc, make_binary(BinOp::Mul, make_unary(UnOp::Neg, x, cur_loc_), c(M_SQRT1_2), cur_loc_), cur_loc_), cur_loc_);
      } else {  // the argument reduced exactly to [-1, 1] first (x - 2 rint(x / 2)), then sin / cos of pi times it
        ExprP red = make_binary(BinOp::Sub, clone_expr(x), make_binary(BinOp::Mul, c(2.0), make_unary(UnOp::Rint, make_binary(BinOp::Mul, x, c(0.5), cur_loc_), cur_loc_), cur_loc_), cur_loc_);
        r = make_unary(base == "sinpi" ? UnOp::Sin : UnOp::Cos, make_binary(BinOp::Mul, c(M_PI), red, cur_loc_), cur_loc_);
      }
      define(result, r, t, true, cur_loc_);
      return true;
    }
    return false;
  }

  // More of libdevice (`base` as extern_bit_forms takes it), each exact unless said: the halves of
  // an f64 (double2hiint, double2loint, hiloint2double), conversions between integers and floats
  // with the rounding in their names where it is exact to apply (rn everywhere; rd / ru / rz from
  // values exact in f64), ldexp / scalbn, ilogb, logb, fdim, remainder, nextafter, integer halving
  // adds, mul24, sad, llround; rcbrt, rhypot, norm3d, rnorm3d and frsqrt_rn (rsqrt_rn) computed in
  // f64 for f32 (rounded once or twice); tgamma from lgamma (special_f64's accuracy). False where
  // `base` is none of these.
  bool extern_more_forms(const std::string& result, const std::string& base, const std::vector<std::string>& v, const VType& t) {
    if (extern_wide_forms(result, base, v, t)) return true;
    BindFn bind = binder();
    auto elem = [&](size_t i) { return type_of_arg(v[i]).elem; };
    auto c = [&](double x, Scalar s) { return typed_const(x, static_cast<int64_t>(x), s); };
    auto ci = [&](int64_t x, Scalar s) { return typed_const(static_cast<double>(x), x, s); };
    auto cast = [&](ExprP a, Scalar s) { return make_cast(std::move(a), s, cur_loc_); };
    auto done = [&](ExprP e) {
      define(result, std::move(e), t, true, cur_loc_);
      return true;
    };
    const Scalar rt = t.elem;
    const bool rf = is_float(rt);
    if (v.size() == 1) {
      const Scalar at = elem(0);
      if ((base == "double2hiint" || base == "double2loint") && at == Scalar::F64) {
        ExprP bits = make_bitcast(use(v[0]), Scalar::I64, cur_loc_);
        return done(cast(base == "double2hiint" ? bo(BinOp::Shr, std::move(bits), ci(32, Scalar::I64)) : std::move(bits), Scalar::I32));
      }
      // an integer to a float: rn (also f64 from 32-bit integers, exact); rd / ru / rz of a 32-bit
      // integer to f32 through its exact f64 value
      static const std::set<std::string> to_float = {"int2double_rn", "uint2double_rn", "ll2double_rn", "ull2double_rn", "ll2float_rn", "ull2float_rn",
                                                     "int2float_rd", "int2float_ru", "int2float_rz", "uint2float_rd", "uint2float_ru", "uint2float_rz"};
      if (to_float.count(base) && !is_float(at) && rf) {
        const bool uns = base[0] == 'u';
        const char mode = base.back();
        if (mode == 'n') return done(uns ? unsigned_convert(use(v[0]), at, rt, cur_loc_, bind) : cast(use(v[0]), rt));
        ExprP exact = uns ? unsigned_convert(use(v[0]), at, Scalar::F64, cur_loc_, bind) : cast(use(v[0]), Scalar::F64);
        return done(round_directed(std::move(exact), mode == 'd' ? 'd' : mode == 'u' ? 'u' : 'z'));
      }
      if ((base == "double2float_rn" || base == "double2float_rd" || base == "double2float_ru" || base == "double2float_rz") && at == Scalar::F64) {
        const char mode = base.back();
        return done(mode == 'n' ? cast(use(v[0]), Scalar::F32) : round_directed(use(v[0]), mode == 'd' ? 'd' : mode == 'u' ? 'u' : 'z'));
      }
      // a float to an integer: rounded as named (rn to nearest even), then converted (saturating;
      // NaN gives 0), to unsigned types through fptoui
      const size_t us = base.find('2');
      if (us != std::string::npos && base.size() > us + 3 && base[base.size() - 3] == '_' && is_float(at) && !rf &&
          (base.rfind("float2", 0) == 0 || base.rfind("double2", 0) == 0)) {
        std::string to = base.substr(us + 1, base.size() - us - 4);
        const char mode = base.back();
        if (to == "ll" || to == "ull" || to == "int" || to == "uint") {
          UnOp r = mode == 'n' ? UnOp::Rint : mode == 'z' ? UnOp::Trunc : mode == 'd' ? UnOp::Floor : UnOp::Ceil;
          ExprP x = un(r, use(v[0]));
          if (to[0] != 'u') return done(cast(std::move(x), rt));
          ExprP y = bind("f2u", std::move(x));  // (PTX's cvt saturates: negative values give 0, large ones the maximum)
          y = wh(bo(BinOp::Lt, clone_expr(y), c(0, at)), c(0, at), clone_expr(y));
          if (rt == Scalar::I32) {
            ExprP big = bo(BinOp::Gt, clone_expr(y), c(4294967295.0, at));
            y = wh(std::move(big), c(4294967295.0, at), clone_expr(y));
          }
          return done(float_to_unsigned(std::move(y), rt, cur_loc_, bind));
        }
      }
      if (base == "llround" && is_float(at)) return done(cast(un(UnOp::Round, use(v[0])), rt));
      if ((base == "ilogb" || base == "logb") && is_float(at)) {
        // the unbiased exponent; a subnormal scaled into the normal range first
        const bool d = at == Scalar::F64;
        const Scalar it = d ? Scalar::I64 : Scalar::I32;
        const int mant = d ? 52 : 23, bias = d ? 1023 : 127, scale = d ? 64 : 32;
        ExprP x = bind("logb_x", use(v[0]));
        ExprP a = bind("logb_a", un(UnOp::Abs, clone_expr(x)));
        ExprP sub = bind("logb_sub", bo(BinOp::Lt, clone_expr(a), c(d ? 0x1p-1022 : 0x1p-126, at)));
        ExprP y = wh(clone_expr(sub), bo(BinOp::Mul, clone_expr(a), c(d ? 0x1p64 : 0x1p32, at)), clone_expr(a));
        ExprP e = bo(BinOp::Sub, bo(BinOp::Shr, make_bitcast(std::move(y), it, cur_loc_), ci(mant, it)), ci(bias, it));
        e = bind("logb_e", cast(bo(BinOp::Sub, std::move(e), wh(clone_expr(sub), ci(scale, it), ci(0, it))), Scalar::I32));
        ExprP zero = bo(BinOp::Eq, clone_expr(a), c(0, at)), nan = bo(BinOp::Ne, clone_expr(x), clone_expr(x));
        ExprP inf = bo(BinOp::Eq, clone_expr(a), c(std::numeric_limits<double>::infinity(), at));
        if (base == "ilogb")  // INT_MIN for 0 and NaN, INT_MAX for infinities (CUDA's ilogb)
          return done(wh(bo(BinOp::Or, std::move(zero), std::move(nan)), ci(INT32_MIN, Scalar::I32), wh(std::move(inf), ci(INT32_MAX, Scalar::I32), clone_expr(e))));
        return done(wh(std::move(zero), c(-std::numeric_limits<double>::infinity(), rt),
                       wh(bo(BinOp::Or, std::move(nan), std::move(inf)), clone_expr(a), cast(clone_expr(e), rt))));
      }
      if ((base == "rcbrt" || base == "frsqrt_rn") && rf) {
        ExprP x = cast(use(v[0]), Scalar::F64);
        ExprP r = base == "rcbrt" ? un(UnOp::Cbrt, std::move(x)) : un(UnOp::Sqrt, std::move(x));
        return done(cast(bo(BinOp::Div, c(1.0, Scalar::F64), std::move(r)), rt));
      }
      if (base == "tgamma" && rf) {
        // |gamma(x)| = exp(lgamma(x)), its sign that of sin(pi x) below 0; 0 gives inf of its sign, a
        // negative integer NaN
        ExprP x = bind("tgamma_x", cast(use(v[0]), Scalar::F64));
        ExprP mag = un(UnOp::Exp, special_f64("lgamma", clone_expr(x)));
        ExprP red = bo(BinOp::Sub, clone_expr(x), bo(BinOp::Mul, c(2, Scalar::F64), un(UnOp::Rint, bo(BinOp::Mul, clone_expr(x), c(0.5, Scalar::F64)))));
        ExprP neg = bo(BinOp::And, bo(BinOp::Lt, clone_expr(x), c(0, Scalar::F64)),
                       bo(BinOp::Lt, un(UnOp::Sin, bo(BinOp::Mul, c(M_PI, Scalar::F64), std::move(red))), c(0, Scalar::F64)));
        ExprP g = wh(std::move(neg), un(UnOp::Neg, clone_expr(mag)), clone_expr(mag));
        ExprP pole = bo(BinOp::And, bo(BinOp::Lt, clone_expr(x), c(0, Scalar::F64)), bo(BinOp::Eq, un(UnOp::Floor, clone_expr(x)), clone_expr(x)));
        ExprP zero = bo(BinOp::Eq, clone_expr(x), c(0, Scalar::F64));
        ExprP pinf = bo(BinOp::Eq, clone_expr(x), c(std::numeric_limits<double>::infinity(), Scalar::F64));
        g = wh(std::move(pinf), clone_expr(x), g);
        ExprP inf0 = wh(bo(BinOp::Lt, make_bitcast(clone_expr(x), Scalar::I64, cur_loc_), ci(0, Scalar::I64)),
                        c(-std::numeric_limits<double>::infinity(), Scalar::F64), c(std::numeric_limits<double>::infinity(), Scalar::F64));
        return done(cast(wh(std::move(zero), std::move(inf0), wh(std::move(pole), c(std::numeric_limits<double>::quiet_NaN(), Scalar::F64), std::move(g))), rt));
      }
      return false;
    }
    if (v.size() == 2) {
      std::vector<ExprP> xy = elementwise(v, t.shape);
      const Scalar at = elem(0);
      if (base == "hiloint2double") {
        ExprP hi = bo(BinOp::Shl, cast(xy[0], Scalar::I64), ci(32, Scalar::I64));
        ExprP lo = bo(BinOp::And, cast(xy[1], Scalar::I64), ci(0xFFFFFFFFll, Scalar::I64));
        return done(make_bitcast(bo(BinOp::Or, std::move(hi), std::move(lo)), Scalar::F64, cur_loc_));
      }
      if ((base == "ldexp" || base == "scalbn") && rf) {
        // x * 2^n, the power split in three factors that are exact in f64 (n clamped: past the
        // clamp every result is 0 or infinite already); exact but for f64 results below 2^-1022
        const bool d = rt == Scalar::F64;
        const int64_t lim = d ? 2200 : 400;
        ExprP n = bind("ldexp_n", cast(wh(bo(BinOp::Lt, xy[1], ci(-lim, elem(1))), ci(-lim, elem(1)), wh(bo(BinOp::Gt, clone_expr(xy[1]), ci(lim, elem(1))), ci(lim, elem(1)), clone_expr(xy[1]))), Scalar::I32));
        ExprP n1 = bind("ldexp_n1", bo(BinOp::FloorDiv, clone_expr(n), ci(3, Scalar::I32)));
        ExprP n3 = bo(BinOp::Sub, bo(BinOp::Sub, clone_expr(n), clone_expr(n1)), clone_expr(n1));
        auto pow2 = [&](ExprP k) { return un(UnOp::Exp2, cast(std::move(k), Scalar::F64)); };
        ExprP r = bo(BinOp::Mul, bo(BinOp::Mul, bo(BinOp::Mul, cast(xy[0], Scalar::F64), pow2(clone_expr(n1))), pow2(clone_expr(n1))), pow2(std::move(n3)));
        return done(cast(std::move(r), rt));
      }
      if (base == "fdim" && rf) {  // a - b where a > b, else +0; NaN stays
        ExprP a = bind("fdim_a", xy[0]), b = bind("fdim_b", xy[1]);
        ExprP nan = bo(BinOp::Or, bo(BinOp::Ne, clone_expr(a), clone_expr(a)), bo(BinOp::Ne, clone_expr(b), clone_expr(b)));
        return done(wh(std::move(nan), bo(BinOp::Add, clone_expr(a), clone_expr(b)),
                       wh(bo(BinOp::Gt, clone_expr(a), clone_expr(b)), bo(BinOp::Sub, clone_expr(a), clone_expr(b)), c(0, rt))));
      }
      if (base == "remainder" && rf) {
        // IEEE remainder: r2 = fmod(|a|, 2|b|) (exact) holds the quotient's parity; the magnitude is
        // r = r2 mod |b|, less |b| where r > |b|/2 or r == |b|/2 with an odd quotient; a's sign
        ExprP a = bind("rem_a", xy[0]);
        ExprP bb = bind("rem_b", un(UnOp::Abs, xy[1]));
        ExprP r2 = bind("rem_r2", bo(BinOp::Mod, un(UnOp::Abs, clone_expr(a)), bo(BinOp::Mul, clone_expr(bb), c(2, rt))));
        ExprP odd = bind("rem_odd", bo(BinOp::Ge, clone_expr(r2), clone_expr(bb)));
        ExprP r = bind("rem_r", wh(clone_expr(odd), bo(BinOp::Sub, clone_expr(r2), clone_expr(bb)), clone_expr(r2)));
        ExprP half = bo(BinOp::Mul, clone_expr(bb), c(0.5, rt));
        ExprP up = bo(BinOp::Or, bo(BinOp::Gt, clone_expr(r), clone_expr(half)), bo(BinOp::And, bo(BinOp::Eq, clone_expr(r), clone_expr(half)), clone_expr(odd)));
        ExprP m = bind("rem_m", wh(std::move(up), bo(BinOp::Sub, clone_expr(r), clone_expr(bb)), clone_expr(r)));
        ExprP neg = bo(BinOp::Lt, make_bitcast(clone_expr(a), rt == Scalar::F64 ? Scalar::I64 : Scalar::I32, cur_loc_), ci(0, rt == Scalar::F64 ? Scalar::I64 : Scalar::I32));
        ExprP inf_b = bo(BinOp::Eq, clone_expr(bb), c(std::numeric_limits<double>::infinity(), rt));
        ExprP res = wh(std::move(neg), un(UnOp::Neg, clone_expr(m)), clone_expr(m));
        // a finite a and an infinite b: a itself (fmod by 2 * inf is NaN-free, but keep it exact)
        return done(wh(bo(BinOp::And, std::move(inf_b), bo(BinOp::Lt, un(UnOp::Abs, clone_expr(a)), c(std::numeric_limits<double>::infinity(), rt))), clone_expr(a), std::move(res)));
      }
      if (base == "nextafter" && rf) {
        // the next value after a toward b: a's bits plus or minus one (from 0: the smallest
        // subnormal of b's sign); b where a == b; NaN where either is
        const Scalar it = rt == Scalar::F64 ? Scalar::I64 : Scalar::I32;
        ExprP a = bind("next_a", xy[0]), b = bind("next_b", xy[1]);
        ExprP ab = bind("next_bits", make_bitcast(clone_expr(a), it, cur_loc_));
        ExprP away = bo(BinOp::Eq, bo(BinOp::Gt, clone_expr(b), clone_expr(a)), bo(BinOp::Gt, clone_expr(a), c(0, rt)));  // |a| grows
        ExprP step = make_bitcast(bo(BinOp::Add, clone_expr(ab), wh(std::move(away), ci(1, it), ci(-1, it))), rt, cur_loc_);
        ExprP tiny = wh(bo(BinOp::Gt, clone_expr(b), c(0, rt)), c(rt == Scalar::F64 ? 0x1p-1074 : 0x1p-149, rt), c(rt == Scalar::F64 ? -0x1p-1074 : -0x1p-149, rt));
        ExprP nan = bo(BinOp::Or, bo(BinOp::Ne, clone_expr(a), clone_expr(a)), bo(BinOp::Ne, clone_expr(b), clone_expr(b)));
        return done(wh(std::move(nan), bo(BinOp::Add, clone_expr(a), clone_expr(b)),
                       wh(bo(BinOp::Eq, clone_expr(a), clone_expr(b)), clone_expr(b), wh(bo(BinOp::Eq, clone_expr(a), c(0, rt)), std::move(tiny), std::move(step)))));
      }
      if (base == "rhypot" && rf) {
        ExprP h = make_binary(*math_binop("hypot"), cast(xy[0], Scalar::F64), cast(xy[1], Scalar::F64), cur_loc_);
        return done(cast(bo(BinOp::Div, c(1.0, Scalar::F64), std::move(h)), rt));
      }
      if ((base == "hadd" || base == "rhadd" || base == "uhadd" || base == "urhadd") && at == Scalar::I32) {  // (a + b [+ 1]) >> 1 without overflow
        const bool uns = base[0] == 'u';
        auto wide = [&](ExprP x) { return uns ? zero_extend_i64(std::move(x), Scalar::I32, cur_loc_) : cast(std::move(x), Scalar::I64); };
        ExprP s = bo(BinOp::Add, wide(xy[0]), wide(xy[1]));
        if (base.find("rhadd") != std::string::npos) s = bo(BinOp::Add, std::move(s), ci(1, Scalar::I64));
        return done(cast(bo(BinOp::Shr, std::move(s), ci(1, Scalar::I64)), Scalar::I32));
      }
      if ((base == "mul24" || base == "umul24") && at == Scalar::I32) {  // the low 32 bits of the product of the low 24 bits
        auto low24 = [&](ExprP x) {
          return base == "umul24" ? bo(BinOp::And, std::move(x), ci(0xFFFFFF, Scalar::I32))
                                  : bo(BinOp::Shr, bo(BinOp::Shl, std::move(x), ci(8, Scalar::I32)), ci(8, Scalar::I32));
        };
        return done(bo(BinOp::Mul, low24(xy[0]), low24(xy[1])));
      }
      return false;
    }
    if (v.size() == 3) {
      std::vector<ExprP> xs = elementwise(v, t.shape);
      if ((base == "norm3d" || base == "rnorm3d") && rf) {
        auto sq = [&](ExprP x) {
          ExprP y = bind("n3", cast(std::move(x), Scalar::F64));
          return bo(BinOp::Mul, clone_expr(y), clone_expr(y));
        };
        ExprP n = rt == Scalar::F64 ? make_binary(*math_binop("hypot"), make_binary(*math_binop("hypot"), xs[0], xs[1], cur_loc_), xs[2], cur_loc_)
                                    : un(UnOp::Sqrt, bo(BinOp::Add, bo(BinOp::Add, sq(xs[0]), sq(xs[1])), sq(xs[2])));
        if (base == "rnorm3d") n = bo(BinOp::Div, c(1.0, Scalar::F64), std::move(n));
        return done(cast(std::move(n), rt));
      }
      if ((base == "sad" || base == "usad") && elem(0) == Scalar::I32) {  // |a - b| + c, a and b compared as their sign says
        const bool uns = base == "usad";
        auto wide = [&](ExprP x) { return uns ? zero_extend_i64(std::move(x), Scalar::I32, cur_loc_) : cast(std::move(x), Scalar::I64); };
        ExprP d = un(UnOp::Abs, bo(BinOp::Sub, wide(xs[0]), wide(xs[1])));
        return done(cast(bo(BinOp::Add, std::move(d), zero_extend_i64(xs[2], Scalar::I32, cur_loc_)), Scalar::I32));
      }
    }
    return false;
  }

  // abs and llabs of integers (wrapping: the most negative value stays), mul64hi / umul64hi, the 64-bit bit functions
  // popcll, clzll, brevll, ffsll from their two 32-bit halves (the halves' own forms: extern_bit_forms'
  // PTX, as the IR's integer ops), norm4d and rnorm4d (as norm3d: f64 for f32), and the 64-bit integer
  // conversions to floats with a directed rounding (ll2float_rd ..., ull2double_rz ...): the integer
  // is hi 2^32 + lo, both parts exact in f64, so their two-sum holds it exactly as s + e, rounded as
  // round_pair_f32 / round_pair_f64 say (exact). False where `base` is none of these.
  bool extern_wide_forms(const std::string& result, const std::string& base, const std::vector<std::string>& v, const VType& t) {
    BindFn bind = binder();
    auto ci = [&](int64_t x, Scalar s) { return typed_const(static_cast<double>(x), x, s); };
    auto cast = [&](ExprP a, Scalar s) { return make_cast(std::move(a), s, cur_loc_); };
    auto done = [&](ExprP e) {
      define(result, std::move(e), t, true, cur_loc_);
      return true;
    };
    auto elem = [&](size_t i) { return type_of_arg(v[i]).elem; };
    if ((base == "abs" || base == "llabs") && v.size() == 1 && !is_float(elem(0))) return done(make_unary(UnOp::Abs, use(v[0]), cur_loc_));
    auto ptx32 = [&](const std::string& ins, ExprP x) {  // one 32-bit PTX form of extern_bit_forms on an i32 value
      return lower_inline_ptx(ins, "=r,r", 1, {PtxOperand{std::move(x), Scalar::I32}}, {Scalar::I32}, t.shape, cur_loc_, binder()).at(0);
    };
    if ((base == "popcll" || base == "clzll" || base == "brevll" || base == "ffsll") && v.size() == 1 && elem(0) == Scalar::I64) {
      ExprP x = bind("wide_x", use(v[0]));
      ExprP hi = bind("wide_hi", cast(bo(BinOp::Shr, clone_expr(x), ci(32, Scalar::I64)), Scalar::I32));
      ExprP lo = bind("wide_lo", cast(clone_expr(x), Scalar::I32));
      auto wide = [&](ExprP a) { return zero_extend_i64(std::move(a), Scalar::I32, cur_loc_); };
      ExprP r;
      if (base == "popcll") r = bo(BinOp::Add, ptx32("popc.b32 $0, $1;", clone_expr(hi)), ptx32("popc.b32 $0, $1;", clone_expr(lo)));
      else if (base == "clzll")
        r = wh(bo(BinOp::Ne, clone_expr(hi), ci(0, Scalar::I32)), ptx32("clz.b32 $0, $1;", clone_expr(hi)), bo(BinOp::Add, ci(32, Scalar::I32), ptx32("clz.b32 $0, $1;", clone_expr(lo))));
      else if (base == "brevll")
        r = bo(BinOp::Or, bo(BinOp::Shl, wide(ptx32("brev.b32 $0, $1;", clone_expr(lo))), ci(32, Scalar::I64)), wide(ptx32("brev.b32 $0, $1;", clone_expr(hi))));
      else {  // ffs: the 1-based position of the lowest set bit, 0 for 0
        auto ffs = [&](ExprP a) {
          ExprP y = bind("wide_f", std::move(a));
          ExprP low = bo(BinOp::Sub, bo(BinOp::And, bo(BinOp::Sub, ci(0, Scalar::I32), clone_expr(y)), clone_expr(y)), ci(1, Scalar::I32));
          return bo(BinOp::Add, ptx32("popc.b32 $0, $1;", std::move(low)), ci(1, Scalar::I32));
        };
        r = wh(bo(BinOp::Ne, clone_expr(lo), ci(0, Scalar::I32)), ffs(clone_expr(lo)),
               wh(bo(BinOp::Ne, clone_expr(hi), ci(0, Scalar::I32)), bo(BinOp::Add, ci(32, Scalar::I32), ffs(clone_expr(hi))), ci(0, Scalar::I32)));
      }
      return done(cast(std::move(r), t.elem));
    }
    if ((base == "mul64hi" || base == "umul64hi") && v.size() == 2 && elem(0) == Scalar::I64 && elem(1) == Scalar::I64) {
      // the high 64 bits of the 128-bit product, from 32-bit halves (each partial sum below 2^64, so
      // wrapping i64 arithmetic holds its bits); signed: the unsigned result less b where a < 0 and a
      // where b < 0
      std::vector<ExprP> xy = elementwise(v, t.shape);
      ExprP a = bind("mh_a", xy[0]), b = bind("mh_b", xy[1]);
      auto low = [&](const ExprP& x) { return bo(BinOp::And, clone_expr(x), ci(0xFFFFFFFFll, Scalar::I64)); };
      auto high = [&](const ExprP& x) { return bo(BinOp::And, bo(BinOp::Shr, clone_expr(x), ci(32, Scalar::I64)), ci(0xFFFFFFFFll, Scalar::I64)); };
      ExprP al = bind("mh_al", low(a)), ah = bind("mh_ah", high(a)), bl = bind("mh_bl", low(b)), bh = bind("mh_bh", high(b));
      ExprP t0 = bind("mh_t", bo(BinOp::Mul, clone_expr(al), clone_expr(bl)));
      ExprP t1 = bind("mh_t", bo(BinOp::Add, bo(BinOp::Mul, clone_expr(ah), clone_expr(bl)), high(t0)));
      ExprP t2 = bind("mh_t", bo(BinOp::Add, bo(BinOp::Mul, clone_expr(al), clone_expr(bh)), low(t1)));
      ExprP hi = bo(BinOp::Add, bo(BinOp::Add, bo(BinOp::Mul, clone_expr(ah), clone_expr(bh)), high(t1)), high(t2));
      if (base == "mul64hi") {
        ExprP zero = ci(0, Scalar::I64);
        hi = bo(BinOp::Sub, std::move(hi), wh(bo(BinOp::Lt, clone_expr(a), clone_expr(zero)), clone_expr(b), clone_expr(zero)));
        hi = bo(BinOp::Sub, std::move(hi), wh(bo(BinOp::Lt, clone_expr(b), clone_expr(zero)), clone_expr(a), clone_expr(zero)));
      }
      return done(std::move(hi));
    }
    if ((base == "norm4d" || base == "rnorm4d") && v.size() == 4 && is_float(t.elem)) {
      std::vector<ExprP> xs = elementwise(v, t.shape);
      ExprP n;
      if (t.elem == Scalar::F64) {
        auto hyp = [&](ExprP a, ExprP b) { return make_binary(*math_binop("hypot"), std::move(a), std::move(b), cur_loc_); };
        n = hyp(hyp(xs[0], xs[1]), hyp(xs[2], xs[3]));
      } else {
        ExprP sum = typed_const(0, 0, Scalar::F64);
        for (ExprP& x : xs) {
          ExprP y = bind("n4", cast(x, Scalar::F64));
          sum = bo(BinOp::Add, std::move(sum), bo(BinOp::Mul, clone_expr(y), clone_expr(y)));
        }
        n = make_unary(UnOp::Sqrt, std::move(sum), cur_loc_);
      }
      if (base == "rnorm4d") n = bo(BinOp::Div, typed_const(1.0, 0, Scalar::F64), cast(std::move(n), Scalar::F64));
      return done(cast(std::move(n), t.elem));
    }
    static const std::set<std::string> wide_to_float = {"ll2float_rd", "ll2float_ru", "ll2float_rz", "ull2float_rd", "ull2float_ru", "ull2float_rz",
                                                        "ll2double_rd", "ll2double_ru", "ll2double_rz", "ull2double_rd", "ull2double_ru", "ull2double_rz"};
    if (wide_to_float.count(base) && v.size() == 1 && elem(0) == Scalar::I64 && is_float(t.elem)) {
      const bool uns = base[0] == 'u';
      const char mode = base.back();
      ExprP x = bind("wide_x", use(v[0]));
      ExprP hi = bo(BinOp::Shr, clone_expr(x), ci(32, Scalar::I64));  // arithmetic: the signed high half
      if (uns) hi = bo(BinOp::And, std::move(hi), ci(0xFFFFFFFFll, Scalar::I64));
      ExprP a = bind("wide_a", bo(BinOp::Mul, cast(std::move(hi), Scalar::F64), typed_const(4294967296.0, 0, Scalar::F64)));  // exact
      ExprP b = bind("wide_b", cast(bo(BinOp::And, clone_expr(x), ci(0xFFFFFFFFll, Scalar::I64)), Scalar::F64));  // exact
      auto [sum, e] = two_sum(a, b, "wide", cur_loc_, bind);
      if (t.elem == Scalar::F32) return done(round_pair_f32(std::move(sum), std::move(e), mode));
      if (t.elem == Scalar::F64) return done(round_pair_f64(std::move(sum), std::move(e), mode, nullptr));
    }
    return false;
  }

  // The exact value s + e (s its f64 rounding to nearest, e the rest, exact) rounded to f64 down,
  // up or toward zero: s, or one step from it (its bits - 1: the magnitude down; + 1: up) where e
  // says the exact value lies past s on the other side. `over` (or null): where s overflowed from
  // finite operands; there the largest finite value where the direction does not lead to the infinity.
  ExprP round_pair_f64(ExprP s0, ExprP e0, char mode, ExprP over) {
    BindFn bind = binder();
    auto c = [&](double x) { return typed_const(x, 0, Scalar::F64); };
    auto ci = [&](int64_t x) { return typed_const(static_cast<double>(x), x, Scalar::I64); };
    ExprP s = bind("pair_s", std::move(s0)), e = bind("pair_e", std::move(e0));
    if (!over) over = bo(BinOp::Ne, clone_expr(s), clone_expr(s));  // never (NaN stays NaN either way)
    ExprP bits = bind("pair_bits", make_bitcast(clone_expr(s), Scalar::I64, cur_loc_));
    ExprP pos = bo(BinOp::Gt, clone_expr(s), c(0)), neg = bo(BinOp::Lt, clone_expr(s), c(0));
    ExprP down, up;
    if (mode == 'd') {
      down = bo(BinOp::Or, bo(BinOp::And, clone_expr(pos), bo(BinOp::Lt, clone_expr(e), c(0))), bo(BinOp::And, clone_expr(over), clone_expr(pos)));
      up = bo(BinOp::And, clone_expr(neg), bo(BinOp::Lt, clone_expr(e), c(0)));
    } else if (mode == 'u') {
      down = bo(BinOp::Or, bo(BinOp::And, clone_expr(neg), bo(BinOp::Gt, clone_expr(e), c(0))), bo(BinOp::And, clone_expr(over), clone_expr(neg)));
      up = bo(BinOp::And, clone_expr(pos), bo(BinOp::Gt, clone_expr(e), c(0)));
    } else {
      down = bo(BinOp::Or, bo(BinOp::Or, bo(BinOp::And, clone_expr(pos), bo(BinOp::Lt, clone_expr(e), c(0))), bo(BinOp::And, clone_expr(neg), bo(BinOp::Gt, clone_expr(e), c(0)))),
                clone_expr(over));
      up = bo(BinOp::Ne, clone_expr(s), clone_expr(s));  // never
    }
    ExprP stepped = make_where(std::move(down), bo(BinOp::Sub, clone_expr(bits), ci(1)),
                               make_where(std::move(up), bo(BinOp::Add, clone_expr(bits), ci(1)), clone_expr(bits), cur_loc_), cur_loc_);
    return make_bitcast(std::move(stepped), Scalar::F64, cur_loc_);
  }

  // erfinv and lgamma of x in f64.
  // erfinv: Winitzki's closed-form estimate (relative error about 2e-3), then three Newton steps on
  // erf (each squares the error); -1 and 1 give -inf and inf, |x| > 1 and NaN give NaN.
  // lgamma, log|gamma(x)|: Lanczos' approximation (g = 7, nine terms) for x >= 1/2, the reflection
  // log(pi / |sin(pi x)|) - lgamma(1 - x) below (sin(pi x) of x reduced exactly to [-1, 1]); the poles
  // (0, -1, -2, ...) give +inf.
  ExprP special_f64(const std::string& fn, ExprP x32) {
    BindFn bind = binder();
    auto c = [&](double v) { return typed_const(v, 0, Scalar::F64); };
    ExprP x = bind(fn + "_x", make_cast(std::move(x32), Scalar::F64, cur_loc_));
    if (fn == "erfcx") return erfcx_f64(std::move(x));
    if (fn == "erfcinv") return erfcinv_f64(std::move(x));
    if (fn == "normcdfinv") return bo(BinOp::Mul, c(-M_SQRT2), erfcinv_f64(bo(BinOp::Mul, c(2), std::move(x))));
    if (fn == "lgamma") {
      ExprP low = bind("lgamma_low", bo(BinOp::Lt, clone_expr(x), c(0.5)));
      ExprP z = bind("lgamma_z", bo(BinOp::Sub, make_where(clone_expr(low), bo(BinOp::Sub, c(1), clone_expr(x)), clone_expr(x), cur_loc_), c(1)));
      static const double k[9] = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
                                  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
      ExprP sum = c(k[0]);
      for (int i = 1; i < 9; ++i) sum = bo(BinOp::Add, std::move(sum), bo(BinOp::Div, c(k[i]), bo(BinOp::Add, clone_expr(z), c(i))));
      ExprP tt = bind("lgamma_t", bo(BinOp::Add, clone_expr(z), c(7.5)));
      ExprP l = bind("lgamma_l", bo(BinOp::Add, bo(BinOp::Sub, bo(BinOp::Add, c(0.5 * std::log(2 * M_PI)), bo(BinOp::Mul, bo(BinOp::Add, clone_expr(z), c(0.5)), un(UnOp::Log, clone_expr(tt)))), clone_expr(tt)),
                                             un(UnOp::Log, std::move(sum))));
      ExprP red = bo(BinOp::Sub, clone_expr(x), bo(BinOp::Mul, c(2), un(UnOp::Rint, bo(BinOp::Mul, clone_expr(x), c(0.5)))));
      ExprP refl = bo(BinOp::Sub, un(UnOp::Log, bo(BinOp::Div, c(M_PI), un(UnOp::Abs, un(UnOp::Sin, bo(BinOp::Mul, c(M_PI), std::move(red)))))), clone_expr(l));
      return make_where(std::move(low), std::move(refl), std::move(l), cur_loc_);
    }
    ExprP w = bind("erfinv_w", un(UnOp::Neg, un(UnOp::Log, bo(BinOp::Mul, bo(BinOp::Sub, c(1), clone_expr(x)), bo(BinOp::Add, c(1), clone_expr(x))))));
    const double a = 0.147;
    ExprP tt = bind("erfinv_t", bo(BinOp::Sub, c(2 / (M_PI * a)), bo(BinOp::Mul, c(0.5), clone_expr(w))));
    ExprP mag = un(UnOp::Sqrt, bo(BinOp::Sub, un(UnOp::Sqrt, bo(BinOp::Add, bo(BinOp::Mul, clone_expr(tt), clone_expr(tt)), bo(BinOp::Div, clone_expr(w), c(a)))), clone_expr(tt)));
    ExprP sign = make_where(bo(BinOp::Lt, clone_expr(x), c(0)), c(-1), c(1), cur_loc_);
    ExprP y = bind("erfinv_y", bo(BinOp::Mul, clone_expr(sign), std::move(mag)));
    for (int i = 0; i < 3; ++i) {
      ExprP f = bo(BinOp::Sub, un(UnOp::Erf, clone_expr(y)), clone_expr(x));
      ExprP d = bo(BinOp::Mul, c(2 / std::sqrt(M_PI)), un(UnOp::Exp, un(UnOp::Neg, bo(BinOp::Mul, clone_expr(y), clone_expr(y)))));
      y = bind("erfinv_y", bo(BinOp::Sub, clone_expr(y), bo(BinOp::Div, std::move(f), std::move(d))));
    }
    ExprP ax = un(UnOp::Abs, clone_expr(x));
    ExprP edge = make_where(bo(BinOp::Gt, clone_expr(ax), c(1)), c(std::numeric_limits<double>::quiet_NaN()),
                            bo(BinOp::Mul, std::move(sign), c(std::numeric_limits<double>::infinity())), cur_loc_);
    return make_where(bo(BinOp::Ge, std::move(ax), c(1)), std::move(edge), std::move(y), cur_loc_);
  }

  // x's square as hi^2 + (2 hi lo + lo^2) with x = hi + lo, hi x rounded to 26 significant bits (by
  // its bits, no multiply: every product below is then exact in f64, so a fused multiply-add that
  // the CUDA backend may form (fp fusion) gives the same values). For finite |x| < 2^500.
  std::pair<ExprP, ExprP> square_parts_f64(const ExprP& x) {
    BindFn bind = binder();
    auto ci = [&](int64_t v) { return typed_const(static_cast<double>(v), v, Scalar::I64); };
    ExprP bits = bo(BinOp::Add, make_bitcast(clone_expr(x), Scalar::I64, cur_loc_), ci(int64_t{1} << 26));
    ExprP hi = bind("sq_hi", make_bitcast(bo(BinOp::And, std::move(bits), ci(~((int64_t{1} << 27) - 1))), Scalar::F64, cur_loc_));
    ExprP lo = bind("sq_lo", bo(BinOp::Sub, clone_expr(x), clone_expr(hi)));
    ExprP head = bo(BinOp::Mul, clone_expr(hi), clone_expr(hi));
    ExprP tail = bo(BinOp::Add, bo(BinOp::Mul, bo(BinOp::Mul, typed_const(2.0, 0, Scalar::F64), clone_expr(hi)), clone_expr(lo)),
                    bo(BinOp::Mul, clone_expr(lo), clone_expr(lo)));
    return {std::move(head), std::move(tail)};
  }

  // erfcx(x) = exp(x^2) erfc(x) of an f64 x. Below 12: exp(hi^2) exp(2 hi lo + lo^2) erfc(x) with x^2
  // split exactly (square_parts_f64: no rounding of x^2 enters the exponent), so the error is erfc's
  // and exp's own plus three roundings; from 12 up: Laplace's continued fraction
  // erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), 40 terms from the
  // bottom (converged to below 2^-53 there). -inf and x < -26.7 (where it exceeds the f64 range) give inf.
  ExprP erfcx_f64(ExprP x0) {
    BindFn bind = binder();
    auto c = [&](double v) { return typed_const(v, 0, Scalar::F64); };
    ExprP x = bind("erfcx_x", std::move(x0));
    auto [h, l] = square_parts_f64(x);
    ExprP near = bo(BinOp::Mul, bo(BinOp::Mul, un(UnOp::Exp, std::move(h)), un(UnOp::Exp, std::move(l))), un(UnOp::Erfc, clone_expr(x)));
    ExprP big = bind("erfcx_big", bo(BinOp::Ge, clone_expr(x), c(12)));
    ExprP xc = bind("erfcx_xc", make_where(clone_expr(big), clone_expr(x), c(12), cur_loc_));  // the fraction off its range: of 12
    ExprP d = clone_expr(xc);
    for (int k = 40; k >= 1; --k) d = bind("erfcx_d", bo(BinOp::Add, clone_expr(xc), bo(BinOp::Div, c(k / 2.0), std::move(d))));
    ExprP frac = bo(BinOp::Div, c(1 / std::sqrt(M_PI)), std::move(d));
    ExprP low = bo(BinOp::Lt, clone_expr(x), c(-26.7));
    return make_where(std::move(big), std::move(frac), make_where(std::move(low), c(std::numeric_limits<double>::infinity()), std::move(near), cur_loc_), cur_loc_);
  }

  // erfcinv(y) of an f64 y, the x with erfc(x) = y: erfinv(1 - y) for y in [0.5, 1.5] (1 - y exact
  // there); outside, s = min(y, 2 - y) (exact) and x > 0.47 with erfc(x) = s, the sign of 1 - y:
  // Winitzki's estimate of erfinv with log((1 - u)(1 + u)) = log(s (2 - s)) (relative error about
  // 2e-3), then three Newton steps on log(erfc(x)) - log(s) (each squares the error; the logarithm
  // keeps the steps right where erfc(x) is near the f64 underflow: log(erfc(x)) = log(erfcx(x)) - x^2
  // from x = 26). 0 gives inf, 2 -inf, y outside [0, 2] and NaN give NaN.
  ExprP erfcinv_f64(ExprP y0) {
    BindFn bind = binder();
    auto c = [&](double v) { return typed_const(v, 0, Scalar::F64); };
    const double inf = std::numeric_limits<double>::infinity();
    ExprP y = bind("erfcinv_y", std::move(y0));
    ExprP mid = special_f64("erfinv", bo(BinOp::Sub, c(1), clone_expr(y)));
    ExprP s = bind("erfcinv_s", wh(bo(BinOp::Lt, clone_expr(y), c(1)), clone_expr(y), bo(BinOp::Sub, c(2), clone_expr(y))));
    ExprP w = bind("erfcinv_w", un(UnOp::Neg, un(UnOp::Log, bo(BinOp::Mul, clone_expr(s), bo(BinOp::Sub, c(2), clone_expr(s))))));
    const double a = 0.147;
    ExprP tt = bind("erfcinv_t", bo(BinOp::Sub, c(2 / (M_PI * a)), bo(BinOp::Mul, c(0.5), clone_expr(w))));
    ExprP x = bind("erfcinv_x", un(UnOp::Sqrt, bo(BinOp::Sub, un(UnOp::Sqrt, bo(BinOp::Add, bo(BinOp::Mul, clone_expr(tt), clone_expr(tt)), bo(BinOp::Div, clone_expr(w), c(a)))), clone_expr(tt))));
    ExprP ls = bind("erfcinv_ls", un(UnOp::Log, clone_expr(s)));
    for (int i = 0; i < 3; ++i) {
      ExprP cx = bind("erfcinv_cx", erfcx_f64(clone_expr(x)));
      ExprP lg = wh(bo(BinOp::Lt, clone_expr(x), c(26)), un(UnOp::Log, un(UnOp::Erfc, clone_expr(x))),
                    bo(BinOp::Sub, un(UnOp::Log, clone_expr(cx)), bo(BinOp::Mul, clone_expr(x), clone_expr(x))));
      ExprP g = bo(BinOp::Sub, std::move(lg), clone_expr(ls));
      x = bind("erfcinv_x", bo(BinOp::Add, clone_expr(x), bo(BinOp::Mul, bo(BinOp::Mul, std::move(g), c(std::sqrt(M_PI) / 2)), std::move(cx))));
    }
    ExprP tail = wh(bo(BinOp::Lt, clone_expr(y), c(1)), clone_expr(x), un(UnOp::Neg, clone_expr(x)));
    ExprP inmid = bo(BinOp::And, bo(BinOp::Ge, clone_expr(y), c(0.5)), bo(BinOp::Le, clone_expr(y), c(1.5)));
    ExprP r = wh(std::move(inmid), std::move(mid), std::move(tail));
    ExprP bad = bo(BinOp::Or, bo(BinOp::Or, bo(BinOp::Lt, clone_expr(y), c(0)), bo(BinOp::Gt, clone_expr(y), c(2))), bo(BinOp::Ne, clone_expr(y), clone_expr(y)));
    r = wh(bo(BinOp::Eq, clone_expr(y), c(0)), c(inf), wh(bo(BinOp::Eq, clone_expr(y), c(2)), c(-inf), std::move(r)));
    return wh(std::move(bad), c(std::numeric_limits<double>::quiet_NaN()), std::move(r));
  }

  // J0, J1, Y0, Y1 of an f64 a >= 0 (Bessel functions of the first and second kind, orders 0 and 1),
  // in f64. Three ranges, each exact to about 2.5e-15 times max(|f(a)|, min(1, sqrt(2 / (pi a)))):
  //  * a < 1: the power series in q = a^2 / 4 (12 terms; Y0 and Y1 with their log(a/2) terms and the
  //    harmonic numbers, DLMF 10.8.2);
  //  * 1 <= a < 25: Miller's backward recurrence b(k-1) = (2k/a) b(k) - b(k+1) from b(61) = 0, b(60) = 1
  //    (below the f64 range limit for these a), normalized by J0 + 2 (J2 + J4 + ...) = 1; Y0 and Y1
  //    from the same values by Neumann's series Y0 = (2/pi)(log(a/2) + gamma) J0 - (4/pi) sum (-1)^k
  //    J2k / k and its derivative (Y1 = -Y0');
  //  * a >= 25: Hankel's expansion sqrt(2 / (pi a)) (P cos w -+ Q sin w), w = a - nu pi / 2 - pi / 4,
  //    P and Q to 14 terms each in 1 / a^2 (their terms fall below 1e-18 there), cos w and sin w from
  //    sin a and cos a (no rounding of a - pi/4 for large a).
  std::array<ExprP, 4> bessel01_f64(ExprP a0) {
    BindFn bind = binder();
    auto c = [&](double v) { return typed_const(v, 0, Scalar::F64); };
    const double G = 0.57721566490153286061;
    ExprP a = bind("bes_a", std::move(a0));
    // the power series (a clamped into (0, 1]: each range computes on values of its own)
    ExprP xs = bind("bes_xs", wh(bo(BinOp::Lt, clone_expr(a), c(1)), clone_expr(a), c(1)));
    ExprP q = bind("bes_q", bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(xs), clone_expr(xs)), c(0.25)));
    ExprP t0 = c(1), t1 = c(1), j0 = c(1), j1s = c(1), y0s = c(0);
    double H = 0;
    ExprP y1s = c(-2 * G + 1);
    for (int k = 1; k < 12; ++k) {
      H += 1.0 / k;
      t0 = bind("bes_t0", bo(BinOp::Mul, std::move(t0), bo(BinOp::Mul, clone_expr(q), c(-1.0 / (k * k)))));
      t1 = bind("bes_t1", bo(BinOp::Mul, std::move(t1), bo(BinOp::Mul, clone_expr(q), c(-1.0 / (k * (k + 1.0))))));
      j0 = bo(BinOp::Add, std::move(j0), clone_expr(t0));
      j1s = bo(BinOp::Add, std::move(j1s), clone_expr(t1));
      y0s = bo(BinOp::Sub, std::move(y0s), bo(BinOp::Mul, c(H), clone_expr(t0)));
      y1s = bo(BinOp::Add, std::move(y1s), bo(BinOp::Mul, c(-2 * G + 2 * H + 1.0 / (k + 1)), clone_expr(t1)));
    }
    ExprP sj0 = bind("bes_sj0", std::move(j0));
    ExprP sj1 = bind("bes_sj1", bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(xs), c(0.5)), std::move(j1s)));
    ExprP sl = bind("bes_sl", bo(BinOp::Sub, un(UnOp::Log, clone_expr(xs)), c(M_LN2)));  // log(a/2) (a/2 would round for the least subnormal)
    ExprP sy0 = bo(BinOp::Mul, c(2 / M_PI), bo(BinOp::Add, bo(BinOp::Mul, bo(BinOp::Add, clone_expr(sl), c(G)), clone_expr(sj0)), std::move(y0s)));
    ExprP sy1 = bo(BinOp::Sub, bo(BinOp::Add, bo(BinOp::Div, c(-2 / M_PI), clone_expr(xs)), bo(BinOp::Mul, bo(BinOp::Mul, c(2 / M_PI), clone_expr(sl)), clone_expr(sj1))),
                   bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(xs), c(0.5 / M_PI)), std::move(y1s)));
    // Miller's recurrence (a clamped into [1, 25])
    ExprP xm = bind("bes_xm", wh(bo(BinOp::Lt, clone_expr(a), c(1)), c(1), wh(bo(BinOp::Gt, clone_expr(a), c(25)), c(25), clone_expr(a))));
    ExprP rx = bind("bes_rx", bo(BinOp::Div, c(1), clone_expr(xm)));
    const int N = 60;
    ExprP bp = c(0), b = c(1);
    ExprP S = c(2), T0 = c((N / 2) % 2 ? -1.0 / (N / 2) : 1.0 / (N / 2)), T1 = c(0);
    ExprP v0, v1;
    for (int k = N; k >= 1; --k) {
      ExprP bm = bind("bes_b", bo(BinOp::Sub, bo(BinOp::Mul, bo(BinOp::Mul, c(2.0 * k), clone_expr(rx)), clone_expr(b)), clone_expr(bp)));
      const int i = k - 1;
      if (i % 2 == 0 && i >= 2) {
        S = bind("bes_s", bo(BinOp::Add, std::move(S), bo(BinOp::Mul, c(2), clone_expr(bm))));
        const int m = i / 2;
        T0 = bind("bes_t", bo(BinOp::Add, std::move(T0), bo(BinOp::Mul, c((m % 2 ? -1.0 : 1.0) / m), clone_expr(bm))));
      }
      if (i % 2 == 1) {
        const int m = (i + 1) / 2;
        T1 = bind("bes_u", bo(BinOp::Add, std::move(T1), bo(BinOp::Mul, c((m % 2 ? -1.0 : 1.0) / m), bo(BinOp::Sub, clone_expr(bm), clone_expr(bp)))));
      }
      if (i == 1) v1 = clone_expr(bm);
      if (i == 0) v0 = clone_expr(bm);
      bp = std::move(b);
      b = std::move(bm);
    }
    ExprP rs = bind("bes_rs", bo(BinOp::Div, c(1), bo(BinOp::Add, std::move(S), clone_expr(v0))));
    ExprP mj0 = bind("bes_mj0", bo(BinOp::Mul, std::move(v0), clone_expr(rs)));
    ExprP mj1 = bind("bes_mj1", bo(BinOp::Mul, std::move(v1), clone_expr(rs)));
    ExprP ml = bind("bes_ml", bo(BinOp::Mul, c(2 / M_PI), bo(BinOp::Add, un(UnOp::Log, bo(BinOp::Mul, clone_expr(xm), c(0.5))), c(G))));
    ExprP my0 = bo(BinOp::Sub, bo(BinOp::Mul, clone_expr(ml), clone_expr(mj0)), bo(BinOp::Mul, c(4 / M_PI), bo(BinOp::Mul, std::move(T0), clone_expr(rs))));
    ExprP my1 = bo(BinOp::Add, bo(BinOp::Add, bo(BinOp::Mul, bo(BinOp::Mul, c(-2 / M_PI), clone_expr(mj0)), clone_expr(rx)), bo(BinOp::Mul, clone_expr(ml), clone_expr(mj1))),
                   bo(BinOp::Mul, c(2 / M_PI), bo(BinOp::Mul, std::move(T1), clone_expr(rs))));
    // Hankel's expansion (a clamped to >= 25; an infinite a gives 0 below)
    ExprP xh = bind("bes_xh", wh(bo(BinOp::Lt, clone_expr(a), c(25)), c(25), clone_expr(a)));
    ExprP rh = bind("bes_rh", bo(BinOp::Div, c(1), clone_expr(xh)));
    ExprP z = bind("bes_z", bo(BinOp::Mul, clone_expr(rh), clone_expr(rh)));
    ExprP sn = bind("bes_sin", un(UnOp::Sin, clone_expr(xh))), cs = bind("bes_cos", un(UnOp::Cos, clone_expr(xh)));
    ExprP f = bind("bes_f", un(UnOp::Sqrt, bo(BinOp::Mul, c(2 / M_PI), clone_expr(rh))));
    std::array<ExprP, 4> hk;
    for (int nu = 0; nu < 2; ++nu) {
      double ak[29];  // a_k(nu) = (4nu^2 - 1)(4nu^2 - 9)...(4nu^2 - (2k-1)^2) / (k! 8^k)
      ak[0] = 1;
      for (int k = 1; k < 29; ++k) ak[k] = ak[k - 1] * (4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
      ExprP P = c(-ak[26]), Q = c(-ak[27]);
      for (int k = 12; k >= 0; --k) {
        P = bo(BinOp::Add, bo(BinOp::Mul, std::move(P), clone_expr(z)), c(k % 2 ? -ak[2 * k] : ak[2 * k]));
        Q = bo(BinOp::Add, bo(BinOp::Mul, std::move(Q), clone_expr(z)), c(k % 2 ? -ak[2 * k + 1] : ak[2 * k + 1]));
      }
      ExprP Pv = bind("bes_p", std::move(P)), Qv = bind("bes_q", bo(BinOp::Mul, std::move(Q), clone_expr(rh)));
      // nu = 0: cos w = (cos a + sin a) / sqrt 2, sin w = (sin a - cos a) / sqrt 2; nu = 1: cos w = (sin a - cos a) / sqrt 2,
      // sin w = -(sin a + cos a) / sqrt 2
      ExprP plus = bo(BinOp::Mul, bo(BinOp::Add, clone_expr(cs), clone_expr(sn)), c(M_SQRT1_2));
      ExprP minus = bo(BinOp::Mul, bo(BinOp::Sub, clone_expr(sn), clone_expr(cs)), c(M_SQRT1_2));
      ExprP cw = bind("bes_cw", nu == 0 ? std::move(plus) : clone_expr(minus));
      ExprP sw = bind("bes_sw", nu == 0 ? std::move(minus) : un(UnOp::Neg, std::move(plus)));
      hk[nu] = bo(BinOp::Mul, clone_expr(f), bo(BinOp::Sub, bo(BinOp::Mul, clone_expr(Pv), clone_expr(cw)), bo(BinOp::Mul, clone_expr(Qv), clone_expr(sw))));
      hk[2 + nu] = bo(BinOp::Mul, clone_expr(f), bo(BinOp::Add, bo(BinOp::Mul, clone_expr(Pv), clone_expr(sw)), bo(BinOp::Mul, clone_expr(Qv), clone_expr(cw))));
    }
    ExprP small = bind("bes_small", bo(BinOp::Lt, clone_expr(a), c(1)));
    ExprP large = bind("bes_large", bo(BinOp::Ge, clone_expr(a), c(25)));
    ExprP inf = bind("bes_inf", bo(BinOp::Eq, clone_expr(a), c(std::numeric_limits<double>::infinity())));
    std::array<ExprP, 4> parts = {std::move(sj0), std::move(sj1), std::move(sy0), std::move(sy1)};
    std::array<ExprP, 4> mids = {std::move(mj0), std::move(mj1), std::move(my0), std::move(my1)};
    std::array<ExprP, 4> out;
    for (int i = 0; i < 4; ++i)
      out[i] = wh(clone_expr(inf), c(0), wh(clone_expr(small), std::move(parts[i]), wh(clone_expr(large), std::move(hk[i]), std::move(mids[i]))));
    return out;
  }

  // I0 and I1 (modified Bessel functions of the first kind) of an f64 a >= 0, in f64: below 25 the
  // power series sum q^k / (k! (k + nu)!) (q = a^2 / 4, 45 terms, all positive, the last below
  // 1e-23 of the sum), from 25 up the expansion e^a / sqrt(2 pi a) sum (-1)^k a_k(nu) / a^k (20
  // terms, the next below 1e-18), e^a as (e^(a/2))^2 (finite up to the f64 limit of the result).
  std::array<ExprP, 2> bessel_i01_f64(ExprP a0) {
    BindFn bind = binder();
    auto c = [&](double v) { return typed_const(v, 0, Scalar::F64); };
    ExprP a = bind("besi_a", std::move(a0));
    ExprP xs = bind("besi_xs", wh(bo(BinOp::Lt, clone_expr(a), c(25)), clone_expr(a), c(25)));
    ExprP q = bind("besi_q", bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(xs), clone_expr(xs)), c(0.25)));
    ExprP t0 = c(1), t1 = c(1), s0 = c(1), s1 = c(1);
    for (int k = 1; k < 45; ++k) {
      t0 = bind("besi_t0", bo(BinOp::Mul, std::move(t0), bo(BinOp::Mul, clone_expr(q), c(1.0 / (k * k)))));
      t1 = bind("besi_t1", bo(BinOp::Mul, std::move(t1), bo(BinOp::Mul, clone_expr(q), c(1.0 / (k * (k + 1.0))))));
      s0 = bind("besi_s0", bo(BinOp::Add, std::move(s0), clone_expr(t0)));
      s1 = bind("besi_s1", bo(BinOp::Add, std::move(s1), clone_expr(t1)));
    }
    s1 = bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(xs), c(0.5)), std::move(s1));
    ExprP xh = bind("besi_xh", wh(bo(BinOp::Lt, clone_expr(a), c(25)), c(25), clone_expr(a)));
    ExprP rh = bind("besi_rh", bo(BinOp::Div, c(1), clone_expr(xh)));
    ExprP eh = bind("besi_eh", un(UnOp::Exp, bo(BinOp::Mul, clone_expr(xh), c(0.5))));
    ExprP f = bind("besi_f", bo(BinOp::Mul, clone_expr(eh), un(UnOp::Sqrt, bo(BinOp::Mul, c(0.5 / M_PI), clone_expr(rh)))));
    std::array<ExprP, 2> out;
    std::array<ExprP, 2> ser = {std::move(s0), std::move(s1)};
    for (int nu = 0; nu < 2; ++nu) {
      double ak[21];
      ak[0] = 1;
      for (int k = 1; k < 21; ++k) ak[k] = ak[k - 1] * (4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
      ExprP s = c(ak[20]);
      for (int k = 19; k >= 0; --k) s = bo(BinOp::Add, bo(BinOp::Mul, std::move(s), un(UnOp::Neg, clone_expr(rh))), c(ak[k]));
      ExprP big = bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(f), std::move(s)), clone_expr(eh));
      out[nu] = wh(bo(BinOp::Lt, clone_expr(a), c(25)), std::move(ser[nu]),
                   wh(bo(BinOp::Eq, clone_expr(a), c(std::numeric_limits<double>::infinity())), clone_expr(a), std::move(big)));
    }
    return out;
  }

  // libdevice's Bessel functions (`base` as extern_bit_forms takes it): j0 j1 y0 y1 cyl_bessel_i0
  // cyl_bessel_i1 of f32 or f64 x, jn and yn of an i32 order n and x; computed in f64 (bessel01_f64,
  // bessel_i01_f64) and rounded once to the result type. J1 and I1 are odd, J0 and I0 even; Y of x < 0
  // is NaN, of 0 -inf; an infinite x gives 0 (I: inf). jn and yn of n < 0 are NaN (CUDA's); yn by the
  // forward recurrence Y(k+1) = (2k/x) Y(k) - Y(k-1) from Y0 and Y1 (stable for Y; an infinite value
  // stays), jn by the same forward recurrence from J0 and J1 where n < |x| (stable while k < |x|), by
  // Miller's backward recurrence otherwise (from an even start M >= max n + 30 + sqrt(60 max n), where
  // J(M) / J(n) is below 1e-17; scaled by 2^-830 whenever a value passes 2^830, normalized by
  // J0 + 2 (J2 + J4 + ...) = 1), and as (|x|/2)^n / n! for |x| < 1e-30. The loops run to the largest
  // order of the tile.
  bool extern_bessel_forms(const std::string& result, const std::string& base, const std::vector<std::string>& v, const VType& t) {
    const Scalar rt = t.elem;
    if (rt != Scalar::F32 && rt != Scalar::F64) return false;
    BindFn bind = binder();
    auto c = [&](double x) { return typed_const(x, 0, Scalar::F64); };
    auto ci = [&](int64_t x) { return typed_const(static_cast<double>(x), x, Scalar::I32); };
    auto f64 = [&](ExprP a) { return make_cast(std::move(a), Scalar::F64, cur_loc_); };
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    auto done = [&](ExprP e) {
      define(result, make_cast(std::move(e), rt, cur_loc_), t, true, cur_loc_);
      return true;
    };
    auto negative = [&](const ExprP& x) { return bo(BinOp::Lt, make_bitcast(clone_expr(x), Scalar::I64, cur_loc_), typed_const(0, 0, Scalar::I64)); };
    if (v.size() == 1) {
      static const std::set<std::string> one = {"j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1"};
      if (!one.count(base)) return false;
      ExprP x = bind("bes_x", f64(use(v[0])));
      ExprP a = un(UnOp::Abs, clone_expr(x));
      if (base == "cyl_bessel_i0" || base == "cyl_bessel_i1") {
        std::array<ExprP, 2> r = bessel_i01_f64(std::move(a));
        if (base == "cyl_bessel_i0") return done(std::move(r[0]));
        ExprP i1 = bind("bes_i1", std::move(r[1]));
        return done(wh(negative(x), un(UnOp::Neg, clone_expr(i1)), clone_expr(i1)));
      }
      std::array<ExprP, 4> r = bessel01_f64(std::move(a));
      if (base == "j0") return done(std::move(r[0]));
      if (base == "j1") {
        ExprP j1 = bind("bes_j1", std::move(r[1]));
        return done(wh(negative(x), un(UnOp::Neg, clone_expr(j1)), clone_expr(j1)));
      }
      ExprP y = std::move(r[base == "y0" ? 2 : 3]);
      ExprP bad = bo(BinOp::Or, bo(BinOp::Lt, clone_expr(x), c(0)), bo(BinOp::Ne, clone_expr(x), clone_expr(x)));
      return done(wh(std::move(bad), c(nan), wh(bo(BinOp::Eq, clone_expr(x), c(0)), c(-inf), std::move(y))));
    }
    if (v.size() != 2 || (base != "jn" && base != "yn") || type_of_arg(v[0]).elem != Scalar::I32) return false;
    std::vector<ExprP> nx = elementwise(v, t.shape);
    ExprP n = bind("bes_n", nx[0]);
    ExprP x = bind("bes_x", f64(nx[1]));
    ExprP a = bind("bes_a", un(UnOp::Abs, clone_expr(x)));
    std::array<ExprP, 4> r = bessel01_f64(clone_expr(a));
    const bool jn = base == "jn";
    ExprP f0 = bind("bes_f0", std::move(r[jn ? 0 : 2])), f1 = bind("bes_f1", std::move(r[jn ? 1 : 3]));
    // the largest order of the tile: the loops' bound
    ExprP top = clone_expr(n);
    for (size_t i = 0; i < t.shape.size(); ++i) top = make_reduce(RedOp::Max, std::move(top), 0, cur_loc_);
    ExprP nmax = bind("bes_nmax", std::move(top));
    auto loop = [&](const std::string& base_name, ExprP lo, ExprP hi, const std::function<void(ExprP)>& body) {
      std::string k = var_name(base_name);
      std::vector<StmtP> stmts;
      std::vector<StmtP>* saved = out_;
      out_ = &stmts;
      body(make_var(k, cur_loc_));
      out_ = saved;
      out_->push_back(make_for(k, std::move(lo), std::move(hi), ci(1), std::move(stmts), cur_loc_));
    };
    auto carried = [&](const std::string& name, ExprP init) {
      std::string nm = var_name(name);
      out_->push_back(make_assign(nm, std::move(init), cur_loc_));
      return nm;
    };
    auto var = [&](const std::string& nm) { return make_var(nm, cur_loc_); };
    auto set = [&](const std::string& nm, ExprP e) { out_->push_back(make_assign(nm, std::move(e), cur_loc_)); };
    // the forward recurrence (and, for jn, the product (a/2)^n / n!), k = 1 .. max n - 1
    std::string fm = carried("bes_fm", clone_expr(f0)), fk = carried("bes_fk", clone_expr(f1));
    std::string pr = jn ? carried("bes_pr", bo(BinOp::Mul, clone_expr(a), c(0.5))) : "";
    loop("bes_k", ci(1), clone_expr(nmax), [&](ExprP k) {
      ExprP kd = bind("bes_kd", f64(clone_expr(k)));
      ExprP on = bind("bes_on", bo(BinOp::And, bo(BinOp::Lt, clone_expr(k), clone_expr(n)), bo(BinOp::Lt, un(UnOp::Abs, var(fk)), c(inf))));
      ExprP nxt = bind("bes_next", bo(BinOp::Sub, bo(BinOp::Mul, bo(BinOp::Div, bo(BinOp::Mul, c(2), clone_expr(kd)), clone_expr(a)), var(fk)), var(fm)));
      set(fm, wh(clone_expr(on), var(fk), var(fm)));
      set(fk, wh(clone_expr(on), std::move(nxt), var(fk)));
      if (jn)
        set(pr, wh(bo(BinOp::Lt, clone_expr(k), clone_expr(n)),
                   bo(BinOp::Mul, var(pr), bo(BinOp::Div, bo(BinOp::Mul, clone_expr(a), c(0.5)), bo(BinOp::Add, clone_expr(kd), c(1)))), var(pr)));
    });
    ExprP res;
    if (!jn) {
      res = wh(bo(BinOp::Eq, clone_expr(n), ci(0)), clone_expr(f0), var(fk));
      ExprP bad = bo(BinOp::Or, bo(BinOp::Or, bo(BinOp::Lt, clone_expr(x), c(0)), bo(BinOp::Ne, clone_expr(x), clone_expr(x))), bo(BinOp::Lt, clone_expr(n), ci(0)));
      res = wh(bo(BinOp::Eq, clone_expr(x), c(0)), c(-inf), std::move(res));
      return done(wh(std::move(bad), c(nan), std::move(res)));
    }
    // Miller's backward recurrence from M down: i = 0 .. M - 1 gives b(M - i - 1)
    ExprP m = bo(BinOp::Add, bo(BinOp::Add, clone_expr(nmax), ci(30)), make_cast(un(UnOp::Sqrt, bo(BinOp::Mul, f64(clone_expr(nmax)), c(60))), Scalar::I32, cur_loc_));
    ExprP mm = bind("bes_m", bo(BinOp::Mul, bo(BinOp::FloorDiv, bo(BinOp::Add, std::move(m), ci(1)), ci(2)), ci(2)));
    auto full = [&](double v) { return wh(bo(BinOp::Eq, clone_expr(n), clone_expr(n)), c(v), c(v)); };  // a tile of n's shape
    std::string bp = carried("bes_bp", full(0)), b = carried("bes_b", full(1)), sum = carried("bes_sum", full(2));
    std::string ans = carried("bes_ans", full(0));
    loop("bes_i", ci(0), clone_expr(mm), [&](ExprP i) {
      ExprP k = bind("bes_kk", bo(BinOp::Sub, clone_expr(mm), clone_expr(i)));  // b(k - 1) from b(k), b(k + 1)
      ExprP km = bind("bes_km", bo(BinOp::Sub, clone_expr(k), ci(1)));
      ExprP bm = bind("bes_bm", bo(BinOp::Sub, bo(BinOp::Mul, bo(BinOp::Div, bo(BinOp::Mul, c(2), f64(clone_expr(k))), clone_expr(a)), var(b)), var(bp)));
      ExprP even = bo(BinOp::Eq, bo(BinOp::And, clone_expr(km), ci(1)), ci(0));
      ExprP w = wh(std::move(even), wh(bo(BinOp::Eq, clone_expr(km), ci(0)), c(1), c(2)), c(0));
      ExprP sm = bind("bes_sm", bo(BinOp::Add, var(sum), bo(BinOp::Mul, std::move(w), clone_expr(bm))));
      ExprP an = bind("bes_an", wh(bo(BinOp::Eq, clone_expr(km), clone_expr(n)), clone_expr(bm), var(ans)));
      ExprP sc = bind("bes_sc", wh(bo(BinOp::Gt, un(UnOp::Abs, clone_expr(bm)), c(0x1p830)), c(0x1p-830), c(1)));
      set(bp, bo(BinOp::Mul, var(b), clone_expr(sc)));
      set(b, bo(BinOp::Mul, std::move(bm), clone_expr(sc)));
      set(sum, bo(BinOp::Mul, std::move(sm), clone_expr(sc)));
      set(ans, bo(BinOp::Mul, std::move(an), clone_expr(sc)));
    });
    ExprP back = bo(BinOp::Div, var(ans), var(sum));
    ExprP nd = f64(clone_expr(n));
    res = wh(bo(BinOp::Lt, clone_expr(a), c(1e-30)), var(pr), wh(bo(BinOp::Lt, clone_expr(nd), clone_expr(a)), var(fk), std::move(back)));
    res = wh(bo(BinOp::Eq, clone_expr(n), ci(0)), clone_expr(f0), wh(bo(BinOp::Eq, clone_expr(n), ci(1)), clone_expr(f1), std::move(res)));
    res = bind("bes_res", wh(bo(BinOp::Eq, clone_expr(a), c(inf)), c(0), std::move(res)));
    ExprP odd = bo(BinOp::And, negative(x), bo(BinOp::Eq, bo(BinOp::And, clone_expr(n), ci(1)), ci(1)));
    res = wh(std::move(odd), un(UnOp::Neg, clone_expr(res)), clone_expr(res));
    return done(wh(bo(BinOp::Or, bo(BinOp::Lt, clone_expr(n), ci(0)), bo(BinOp::Ne, clone_expr(x), clone_expr(x))), c(nan), std::move(res)));
  }

  // ---- tt.elementwise_inline_asm: the PTX block as the IR's ops (ir/InlinePtx.h, as dtsim's own
  // .py reader builds tl.inline_asm_elementwise): several results, packed elements ----
  void emit_inline_asm(const Op& op, Cursor& c) {
    std::string raw, lit = c.string_lit();
    for (size_t i = 0; i < lit.size(); ++i) {
      char ch = lit[i];
      if (ch == '\\' && i + 2 < lit.size() && std::isxdigit(static_cast<unsigned char>(lit[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(lit[i + 2]))) {  // MLIR's escapes: \0A is a newline
        ch = static_cast<char>(std::stoi(lit.substr(i + 1, 2), nullptr, 16));
        i += 2;
      }
      raw += ch;
    }
    std::string attrs = c.peek("{") ? c.balanced('{', '}') : "";
    std::vector<std::string> v;
    while (c.peek_value()) {
      v.push_back(c.value());
      if (!c.eat(",")) break;
    }
    if (c.eat(":")) {
      do c.type();
      while (c.eat(","));
    }
    c.expect("->");
    std::vector<VType> ts;
    do ts.push_back(vtype(c.type(), op.text_loc));
    while (c.eat(","));
    if (ts.size() != op.results.size()) user_error(cur_loc_, "malformed TTIR: tt.elementwise_inline_asm has " + std::to_string(op.results.size()) + " results and " + std::to_string(ts.size()) + " types");
    const int64_t pack = attrs.find("packed_element") == std::string::npos ? 1 : attr_int(attrs, "packed_element");
    Shape shape = ts[0].shape;
    for (const VType& t : ts)
      if (t.shape != shape) user_error(cur_loc_, "malformed TTIR: tt.elementwise_inline_asm results of different shapes");
    std::vector<ExprP> vals = elementwise(v, shape);
    std::vector<PtxOperand> args;
    for (size_t i = 0; i < v.size(); ++i) args.push_back(PtxOperand{vals[i], type_of_arg(v[i]).elem});
    std::vector<Scalar> elems;
    for (const VType& t : ts) elems.push_back(t.elem);
    std::vector<StmtP> traps;
    std::vector<ExprP> rs = lower_inline_ptx(raw, attr_str(attrs, "constraints"), static_cast<int>(pack), args, elems, shape, cur_loc_, binder(), &traps);
    for (StmtP& t : traps) out_->push_back(std::move(t));
    for (size_t i = 0; i < rs.size(); ++i) define(op.results[i], rs[i], ts[i], true, cur_loc_);
  }

  // f32 `x` to the narrow float type `to` rounded toward zero (tt.fp_to_fp's rounding = rtz,
  // `x.to(dtype, fp_downcast_rounding="rtz")`): the nearest-even result, moved one step toward zero
  // (its bit pattern less one: the magnitude's next value down) where its magnitude is above x's;
  // an overflow to infinity so becomes the largest finite value, NaN and infinities stay.
  ExprP cast_toward_zero(ExprP x, Scalar to) {
    BindFn bind = binder();
    ExprP xv = bind("rtz_x", x);
    ExprP r = bind("rtz_r", make_cast(clone_expr(xv), to, cur_loc_));
    const Scalar bits = to == Scalar::F16 || to == Scalar::BF16 ? Scalar::I16 : Scalar::I8;
    ExprP over = make_binary(BinOp::Gt, make_unary(UnOp::Abs, make_cast(clone_expr(r), Scalar::F32, cur_loc_), cur_loc_),
                             make_unary(UnOp::Abs, clone_expr(xv), cur_loc_), cur_loc_);
    ExprP down = make_bitcast(make_binary(BinOp::Sub, make_bitcast(clone_expr(r), bits, cur_loc_), make_const_int(1, cur_loc_), cur_loc_),
                              to, cur_loc_);
    return make_where(over, down, r, cur_loc_);
  }

  static std::string trim_copy(std::string s) {
    size_t b = s.find_first_not_of(" \t");
    size_t e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  static std::string after_paren(const std::string& s) {
    size_t p = s.find(')');
    return p == std::string::npos ? "" : s.substr(p + 1);
  }
  int64_t attr_int(const std::string& attrs, const std::string& key) {
    size_t p = attrs.find(key + " = ");
    if (p == std::string::npos) user_error(cur_loc_, "malformed TTIR: attribute " + q(key) + " missing");
    return std::stoll(attrs.substr(p + key.size() + 3));
  }
  std::string attr_str(const std::string& attrs, const std::string& key) {
    size_t p = attrs.find(key + " = \"");
    if (p == std::string::npos) return "";
    size_t b = p + key.size() + 4;
    return attrs.substr(b, attrs.find('"', b) - b);
  }
  VType type_of_arg(const std::string& ssa) { return lookup(ssa).t; }
  VType type_of_expr(const std::vector<std::string>& v, const VType& t) { return v.empty() ? t : lookup(v[0]).t.elem == t.elem ? t : t; }

  ExprP compare(const std::string& pred, ExprP a, ExprP b, const VType& t) {
    static const std::map<std::string, BinOp> ops = {{"eq", BinOp::Eq},   {"ne", BinOp::Ne},   {"slt", BinOp::Lt},  {"sle", BinOp::Le},
                                                     {"sgt", BinOp::Gt},  {"sge", BinOp::Ge},  {"oeq", BinOp::Eq},  {"olt", BinOp::Lt},
                                                     {"ole", BinOp::Le},  {"ogt", BinOp::Gt},  {"oge", BinOp::Ge},  {"une", BinOp::Ne},
                                                     {"ult", BinOp::Lt},  {"ule", BinOp::Le},  {"ugt", BinOp::Gt},  {"uge", BinOp::Ge}};
    bool is_f = is_float(t.elem);
    if (!is_f && (pred == "ult" || pred == "ule" || pred == "ugt" || pred == "uge")) {
      return unsigned_compare(ops.at(pred), a, b, t.elem, cur_loc_);
    }
    if (is_f && (pred == "one" || pred == "ord" || pred == "uno" || pred == "ueq" || pred == "ult" || pred == "ule" || pred == "ugt" ||
                 pred == "uge")) {
      // (un)ordered forms need each operand twice: through variables
      std::string va = var_name("cmp_a"), vb = var_name("cmp_b");
      out_->push_back(make_assign(va, a, cur_loc_));
      out_->push_back(make_assign(vb, b, cur_loc_));
      auto A = [&] { return make_var(va, cur_loc_); };
      auto B = [&] { return make_var(vb, cur_loc_); };
      ExprP unordered = make_binary(BinOp::Or, make_binary(BinOp::Ne, A(), A(), cur_loc_), make_binary(BinOp::Ne, B(), B(), cur_loc_), cur_loc_);
      if (pred == "uno") return unordered;
      ExprP ordered = make_binary(BinOp::And, make_binary(BinOp::Eq, A(), A(), cur_loc_), make_binary(BinOp::Eq, B(), B(), cur_loc_), cur_loc_);
      if (pred == "ord") return ordered;
      if (pred == "one") return make_binary(BinOp::And, make_binary(BinOp::Ne, A(), B(), cur_loc_), ordered, cur_loc_);
      BinOp base = pred == "ueq" ? BinOp::Eq : ops.at(pred);
      return make_binary(BinOp::Or, make_binary(base, A(), B(), cur_loc_), unordered, cur_loc_);
    }
    auto it = ops.find(pred);
    if (it == ops.end()) user_error(cur_loc_, "comparison predicate " + q(pred) + " is not supported");
    return make_binary(it->second, a, b, cur_loc_);
  }

  // scf.for %i = %lb to %ub step %st iter_args(%a = %x, ...) -> (T, ...) : i32 { body }
  void emit_for(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string iv = c.value();
    c.expect("=");
    std::string lb = c.value();
    c.expect("to");
    std::string ub = c.value();
    c.expect("step");
    std::string st = c.value();
    std::vector<std::string> carried, inits;
    if (c.eat("iter_args")) {
      c.expect("(");
      while (!c.eat(")")) {
        carried.push_back(c.value());
        c.expect("=");
        inits.push_back(c.value());
        c.eat(",");
      }
    }
    SourceLoc loc = cur_loc_;
    warp_specialize_ = warp_specialize_ || op.trailer.find("tt.warp_specialize") != std::string::npos;
    ExprP lo = use(lb), hi = use(ub), step = use(st);
    VType ivt = type_of(lb);
    std::vector<std::string> vars;
    std::vector<VType> types;
    for (size_t i = 0; i < inits.size(); ++i) {
      VType t = type_of(inits[i]);
      std::string v = var_name(carried[i]);
      out_->push_back(make_assign(v, use(inits[i]), loc));
      vars.push_back(v);
      types.push_back(t);
    }
    std::string ivar = var_name(iv);
    const Block& body = op.regions.at(0).blocks.at(0);
    std::vector<Value> args;
    args.push_back(Value{nullptr, ivar, ivt});
    for (size_t i = 0; i < vars.size(); ++i) args.push_back(Value{nullptr, vars[i], types[i]});
    std::vector<StmtP> stmts;
    std::vector<StmtP>* saved = out_;
    out_ = &stmts;
    yielded_.clear();
    std::vector<std::string> names = {iv};
    names.insert(names.end(), carried.begin(), carried.end());
    emit_block_with_yield(body, args, vars, names);
    out_ = saved;
    out_->push_back(make_for(ivar, lo, hi, step, std::move(stmts), loc));
    for (size_t i = 0; i < op.results.size() && i < vars.size(); ++i) bind(op.results[i], Value{nullptr, vars[i], types[i]});
  }

  // Emits `b` with its arguments, then assigns its yield's values to `vars`.
  // `names` name the arguments when the block's label does not (scf.for names them in its header).
  void emit_block_with_yield(const Block& b, const std::vector<Value>& args, const std::vector<std::string>& vars,
                             const std::vector<std::string>& names = {}) {
    scopes_.push_back({});
    local_.push_back(local_uses(b));
    const std::vector<std::string>& an = b.args.empty() ? names : b.args;
    for (size_t i = 0; i < an.size() && i < args.size(); ++i) bind(an[i], args[i]);
    yielded_.clear();
    for (const Op& op : b.ops) emit(op);
    if (!vars.empty()) assign_all(vars, yielded_);
    local_.pop_back();
    scopes_.pop_back();
  }

  // %r = scf.if %c -> (T) { ... scf.yield } else { ... scf.yield }
  void emit_if(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string cv = c.value();
    std::vector<VType> types;
    if (c.eat("->")) types = type_list(c.rest(), op.text_loc);
    SourceLoc loc = cur_loc_;
    std::vector<std::string> vars;
    for (size_t i = 0; i < types.size(); ++i) {
      std::string v = var_name(op.results.size() > i ? op.results[i] : "ifres");
      out_->push_back(make_assign(v, zero_of(types[i]), loc));
      vars.push_back(v);
    }
    ExprP cond = use(cv);
    std::vector<StmtP> then_s, else_s;
    std::vector<StmtP>* saved = out_;
    out_ = &then_s;
    emit_block_with_yield(op.regions.at(0).blocks.at(0), {}, vars);
    if (op.regions.size() > 1) {
      out_ = &else_s;
      emit_block_with_yield(op.regions[1].blocks.at(0), {}, vars);
    }
    out_ = saved;
    out_->push_back(make_if(cond, std::move(then_s), std::move(else_s), loc));
    for (size_t i = 0; i < op.results.size() && i < vars.size(); ++i) bind(op.results[i], Value{nullptr, vars[i], types[i]});
  }

  // %r = scf.while (%a = %init) : (T) -> T { before; scf.condition(%c) %vals } do { ^bb0(%x): after; scf.yield }
  void emit_while(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::vector<std::string> bargs, inits;
    if (c.eat("(")) {  // no list when nothing is carried: `scf.while : () -> () {`
      while (!c.eat(")")) {
        bargs.push_back(c.value());
        c.expect("=");
        inits.push_back(c.value());
        c.eat(",");
      }
    }
    SourceLoc loc = cur_loc_;
    std::vector<std::string> vars;
    std::vector<VType> types;
    for (size_t i = 0; i < inits.size(); ++i) {
      VType t = type_of(inits[i]);
      std::string v = var_name(bargs[i]);
      out_->push_back(make_assign(v, use(inits[i]), loc));
      vars.push_back(v);
      types.push_back(t);
    }
    // The condition region's forwarded values go to these variables (the after region's arguments
    // and the op's results).
    const Block& before = op.regions.at(0).blocks.at(0);
    const Block& after = op.regions.at(1).blocks.at(0);
    std::vector<std::string> fwd;
    std::vector<VType> fwd_types;
    for (size_t i = 0; i < after.args.size(); ++i) {
      VType t = vtype(after.arg_types[i], op.text_loc);
      std::string v = var_name(after.args[i]);
      out_->push_back(make_assign(v, zero_of(t), loc));
      fwd.push_back(v);
      fwd_types.push_back(t);
    }
    std::string cvar = var_name("while_cond");
    std::vector<Value> bvals;
    for (size_t i = 0; i < vars.size(); ++i) bvals.push_back(Value{nullptr, vars[i], types[i]});
    auto emit_before = [&](std::vector<StmtP>& into) {
      std::vector<StmtP>* saved = out_;
      out_ = &into;
      scopes_.push_back({});
      local_.push_back(local_uses(before));
      const std::vector<std::string>& an = before.args.empty() ? bargs : before.args;  // named in the header
      for (size_t i = 0; i < an.size() && i < bvals.size(); ++i) bind(an[i], bvals[i]);
      yielded_.clear();
      cond_.clear();
      // each copy of the region needs its own variable names
      suffix_stack_.push_back(suffix_);
      for (const Op& o : before.ops) emit(o);
      into.push_back(make_assign(cvar, use(cond_), loc));
      if (!fwd.empty()) assign_all(fwd, yielded_);
      local_.pop_back();
      scopes_.pop_back();
      suffix_stack_.pop_back();
      out_ = saved;
    };
    std::vector<StmtP> pre;
    emit_before(pre);
    for (auto& s : pre) out_->push_back(s);
    std::vector<StmtP> body;
    {
      std::vector<StmtP>* saved = out_;
      out_ = &body;
      std::vector<Value> avals;
      for (size_t i = 0; i < fwd.size(); ++i) avals.push_back(Value{nullptr, fwd[i], fwd_types[i]});
      emit_block_with_yield(after, avals, vars);
      out_ = saved;
    }
    std::vector<StmtP> again;
    emit_before(again);
    for (auto& s : again) body.push_back(s);
    out_->push_back(make_while(make_var(cvar, loc), std::move(body), loc));
    for (size_t i = 0; i < op.results.size() && i < fwd.size(); ++i) bind(op.results[i], Value{nullptr, fwd[i], fwd_types[i]});
  }

  // libdevice's round-to-nearest arithmetic (`add_rn sub_rn mul_rn div_rn rcp_rn sqrt_rn`, f32 and
  // f64: the IR's IEEE ops), f32 `mul div rcp sqrt` rounded toward zero, down or up (`_rz _rd _ru`),
  // its fast_* approximations (`fast_expf fast_exp10f fast_logf fast_log2f
  // fast_log10f fast_sinf fast_cosf fast_tanf fast_powf fast_dividef`: the accurate function),
  // `fma` (`fmaf`, `_rn`), `exp10`, `nearbyint`, `llrint`, `saturatef`, `signbit` and `copysign`. `base` is the symbol
  // without `__nv_`, `r` the result; false where it is none of these.
  // x / y rounded to nearest whatever division the CUDA backend compiles `/` to (Triton's `/` is
  // div.full.f32 there, `--approx-div`): f32 through f64, whose quotient rounds to the correctly
  // rounded f32 one (53 >= 2 * 24 + 2 bits: the second rounding cannot go wrong), and f64 division is
  // IEEE on every backend. For tt.precise_divf and libdevice's div_rn / rcp_rn.
  ExprP ieee_div(ExprP x, ExprP y, Scalar elem) {
    if (elem != Scalar::F32) return make_binary(BinOp::Div, x, y, cur_loc_);
    auto f64 = [&](ExprP e) { return make_cast(e, Scalar::F64, cur_loc_); };
    return make_cast(make_binary(BinOp::Div, f64(x), f64(y), cur_loc_), Scalar::F32, cur_loc_);
  }

  bool extern_rounding_forms(const std::string& r, const std::string& base, const std::vector<std::string>& v, const VType& t) {
    auto arith = [&](BinOp b) {
      std::vector<ExprP> xy = elementwise(v, t.shape);
      define(r, make_binary(b, xy[0], xy[1], cur_loc_), t, true, cur_loc_);
      return true;
    };
    auto unary = [&](ExprP e) {
      define(r, e, t, true, cur_loc_);
      return true;
    };
    auto ten_to = [&](ExprP x) { return make_binary(BinOp::Pow, typed_const(10.0, 0, t.elem), x, cur_loc_); };
    // a float's sign bit as an i1 tile (set for -0.0 and for NaNs with it set)
    auto sign_bit = [&](ExprP x, Scalar ft) {
      Scalar it = ft == Scalar::F64 ? Scalar::I64 : Scalar::I32;
      return make_binary(BinOp::Lt, make_bitcast(x, it, cur_loc_), typed_const(0, 0, it), cur_loc_);
    };
    static const std::map<std::string, BinOp> rn = {
        {"fadd_rn", BinOp::Add}, {"dadd_rn", BinOp::Add}, {"fsub_rn", BinOp::Sub}, {"dsub_rn", BinOp::Sub},
        {"fmul_rn", BinOp::Mul}, {"dmul_rn", BinOp::Mul}, {"ddiv_rn", BinOp::Div}, {"fast_fdividef", BinOp::Div}};
    if (auto b = rn.find(base); b != rn.end() && v.size() == 2) return arith(b->second);
    if (base == "fdiv_rn" && v.size() == 2) {
      std::vector<ExprP> xy = elementwise(v, t.shape);
      return unary(ieee_div(xy[0], xy[1], t.elem));
    }
    // add and sub rounded down ('d'), up ('u') or toward zero ('z'), f32 (fadd_rd ...) and f64 (dadd_rd
    // ...), and the f32 fma (fmaf_rd ...): exact. The operation's value v is held exactly as s + e: s
    // the f64 sum rounded to nearest, e = v - s from Knuth's two-sum (s - a, and the rest, each exact:
    // no multiply, so the CUDA backend's fp fusion cannot change it; for fmaf the f32 product is exact
    // in f64 first). e's sign says on which side of s the exact value lies, so s steps one ulp where
    // rounding to nearest went the wrong way (f64), or the f32 rounding of s does (round_pair_f32).
    // An exact zero sum is -0 rounded down unless both addends are +0 (IEEE 754); an f64 sum past the
    // largest finite value is that value where the direction does not lead to the infinity.
    if (v.size() >= 2 && base.size() == 7 && (base.rfind("fadd_r", 0) == 0 || base.rfind("fsub_r", 0) == 0 || base.rfind("dadd_r", 0) == 0 ||
                                               base.rfind("dsub_r", 0) == 0 || base.rfind("fmaf_r", 0) == 0) &&
        (base.back() == 'd' || base.back() == 'u' || base.back() == 'z') && (v.size() == 3) == (base[1] == 'm')) {
      const char mode = base.back();
      const bool f32 = base[0] == 'f';
      if (t.elem != (f32 ? Scalar::F32 : Scalar::F64)) return false;
      BindFn bind = binder();
      auto c = [&](double x) { return typed_const(x, 0, Scalar::F64); };
      auto ci = [&](int64_t x) { return typed_const(static_cast<double>(x), x, Scalar::I64); };
      std::vector<ExprP> xs = elementwise(v, t.shape);
      ExprP a = bind("dir_a", make_cast(xs[0], Scalar::F64, cur_loc_));
      if (v.size() == 3) a = bind("dir_p", bo(BinOp::Mul, std::move(a), make_cast(xs[1], Scalar::F64, cur_loc_)));  // exact
      ExprP b = make_cast(xs[v.size() - 1], Scalar::F64, cur_loc_);
      if (base[1] == 's') b = make_unary(UnOp::Neg, std::move(b), cur_loc_);
      b = bind("dir_b", std::move(b));
      auto [sum, e] = two_sum(a, b, "dir", cur_loc_, bind);
      ExprP out;
      if (f32) {
        out = bind("dir_r", round_pair_f32(clone_expr(sum), clone_expr(e), mode));
      } else {
        const double inf = std::numeric_limits<double>::infinity();
        auto finite = [&](const ExprP& x) { return bo(BinOp::Lt, make_unary(UnOp::Abs, clone_expr(x), cur_loc_), c(inf)); };
        ExprP over = bo(BinOp::And, bo(BinOp::And, finite(a), finite(b)), bo(BinOp::Eq, make_unary(UnOp::Abs, clone_expr(sum), cur_loc_), c(inf)));
        out = bind("dir_r", round_pair_f64(clone_expr(sum), clone_expr(e), mode, std::move(over)));
      }
      if (mode == 'd') {  // an exact zero: -0 unless both addends are +0
        const Scalar it = f32 ? Scalar::I32 : Scalar::I64;
        ExprP zero_t = typed_const(0, 0, it);
        auto plus_zero = [&](const ExprP& x) { return bo(BinOp::Eq, make_bitcast(clone_expr(x), Scalar::I64, cur_loc_), ci(0)); };
        ExprP both = bo(BinOp::And, plus_zero(a), plus_zero(b));
        ExprP nz = make_bitcast(typed_const(0, INT64_MIN >> (f32 ? 32 : 0), it), t.elem, cur_loc_);
        ExprP pz = make_bitcast(std::move(zero_t), t.elem, cur_loc_);
        out = make_where(bo(BinOp::Eq, clone_expr(sum), c(0)), make_where(std::move(both), std::move(pz), std::move(nz), cur_loc_), clone_expr(out), cur_loc_);
      }
      define(r, std::move(out), t, true, cur_loc_);
      return true;
    }
    if (base.size() >= 7 && base[0] == 'd' && t.elem == Scalar::F64 && (base.back() == 'd' || base.back() == 'u' || base.back() == 'z') &&
        base[base.size() - 3] == '_') {
      const std::string fn = base.substr(1, base.size() - 4);
      const char mode = base.back();
      if ((fn == "mul" || fn == "div") && v.size() == 2) {
        std::vector<ExprP> xy = elementwise(v, t.shape);
        define(r, directed_f64(fn == "mul" ? 'm' : '/', xy[0], xy[1], mode), t, true, cur_loc_);
        return true;
      }
      if ((fn == "rcp" || fn == "sqrt") && v.size() == 1) {
        define(r, directed_f64(fn == "rcp" ? '/' : 's', fn == "rcp" ? typed_const(1.0, 0, Scalar::F64) : use(v[0]), use(v[0]), mode), t, true, cur_loc_);
        return true;
      }
    }
    // f32 mul, div, rcp and sqrt rounded toward zero, down or up: computed in f64, whose result
    // (exact for mul; for div, rcp and sqrt within 2^-53 of the exact one, which is never that close
    // to an f32 value it is not) rounds to nearest f32, stepped by one ulp where that went the wrong way
    if (base.size() > 3 && base[0] == 'f' && (base.ends_with("_rz") || base.ends_with("_rd") || base.ends_with("_ru"))) {
      std::string fn = base.substr(1, base.size() - 4);
      char mode = base.back();
      auto f64 = [&](ExprP e) { return make_cast(e, Scalar::F64, cur_loc_); };
      ExprP q;
      if ((fn == "mul" || fn == "div") && v.size() == 2) {
        std::vector<ExprP> xy = elementwise(v, t.shape);
        q = make_binary(fn == "mul" ? BinOp::Mul : BinOp::Div, f64(xy[0]), f64(xy[1]), cur_loc_);
      } else if (fn == "rcp" && v.size() == 1) {
        q = make_binary(BinOp::Div, typed_const(1.0, 0, Scalar::F64), f64(use(v[0])), cur_loc_);
      } else if (fn == "sqrt" && v.size() == 1) {
        q = make_unary(UnOp::Sqrt, f64(use(v[0])), cur_loc_);
      }
      if (q && t.elem == Scalar::F32) return unary(round_directed(q, mode));
    }
    if (base == "fast_powf" && v.size() == 2) return arith(BinOp::Pow);
    if ((base == "fmaf" || base == "fma" || base == "fmaf_rn" || base == "fma_rn") && v.size() == 3)
      return unary(fused_multiply_add(elementwise(v, t.shape), t.elem));
    if ((base == "fma_rd" || base == "fma_ru" || base == "fma_rz") && v.size() == 3 && t.elem == Scalar::F64) {  // ir/Fma.h
      std::vector<ExprP> xyz = elementwise(v, t.shape);
      return unary(dtsim::fused_multiply_add_directed(xyz[0], xyz[1], xyz[2], base.back(), cur_loc_, binder()));
    }
    if ((base == "copysignf" || base == "copysign") && v.size() == 2) {  // |x| with y's sign bit
      std::vector<ExprP> xy = elementwise(v, t.shape);
      ExprP mag = binder()("mag", make_unary(UnOp::Abs, xy[0], cur_loc_));
      return unary(make_where(sign_bit(xy[1], t.elem), make_unary(UnOp::Neg, mag, cur_loc_), clone_expr(mag), cur_loc_));
    }
    if (v.size() != 1) return false;
    static const std::map<std::string, UnOp> fast = {
        {"fast_expf", UnOp::Exp},     {"fast_logf", UnOp::Log}, {"fast_log2f", UnOp::Log2}, {"fast_log10f", UnOp::Log10},
        {"fast_sinf", UnOp::Sin},     {"fast_cosf", UnOp::Cos}, {"fast_tanf", UnOp::Tan},   {"fsqrt_rn", UnOp::Sqrt},
        {"dsqrt_rn", UnOp::Sqrt},     {"nearbyintf", UnOp::Rint}, {"nearbyint", UnOp::Rint}};
    if (auto u = fast.find(base); u != fast.end()) return unary(make_unary(u->second, use(v[0]), cur_loc_));
    if (base == "frcp_rn" || base == "drcp_rn") return unary(ieee_div(typed_const(1.0, 0, t.elem), use(v[0]), t.elem));
    if (base == "rcp64h" && t.elem == Scalar::F64) {
      // the high word of 1/x (rounded to nearest), its low word 0, as the GPU's rcp.approx.ftz.f64 which
      // it names: subnormal operands and results are zeros of their sign; NaN stays NaN
      BindFn bind = binder();
      auto c = [&](double x) { return typed_const(x, 0, Scalar::F64); };
      auto flush = [&](ExprP x) {
        ExprP h = bind("rcph", std::move(x));
        return make_where(bo(BinOp::Lt, make_unary(UnOp::Abs, clone_expr(h), cur_loc_), c(0x1p-1022)), bo(BinOp::Mul, clone_expr(h), c(0)),
                          clone_expr(h), cur_loc_);
      };
      ExprP r = bind("rcph_r", ieee_div(c(1.0), flush(use(v[0])), Scalar::F64));
      ExprP hi = make_bitcast(bo(BinOp::And, make_bitcast(clone_expr(r), Scalar::I64, cur_loc_), typed_const(0, INT64_C(-4294967296), Scalar::I64)),
                              Scalar::F64, cur_loc_);
      return unary(make_where(bo(BinOp::Ne, clone_expr(r), clone_expr(r)), clone_expr(r), flush(std::move(hi)), cur_loc_));
    }
    if (base == "fast_exp10f" || base == "exp10f" || base == "exp10") return unary(ten_to(use(v[0])));
    if (base == "llrintf" || base == "llrint") return unary(make_cast(make_unary(UnOp::Rint, use(v[0]), cur_loc_), t.elem, cur_loc_));
    if (base == "saturatef") {  // clamped to [0, 1]; NaN gives 0
      ExprP x = binder()("sat", use(v[0]));
      ExprP one = typed_const(1.0, 0, t.elem), zero = typed_const(0.0, 0, t.elem);
      return unary(make_where(make_binary(BinOp::Gt, x, zero, cur_loc_), make_binary(BinOp::Min, clone_expr(x), one, cur_loc_),
                              typed_const(0.0, 0, t.elem), cur_loc_));
    }
    if (base == "signbitf" || base == "signbitd") {
      ExprP sb = sign_bit(use(v[0]), base == "signbitd" ? Scalar::F64 : Scalar::F32);
      return unary(t.elem == Scalar::I1 ? sb : make_cast(sb, t.elem, cur_loc_));
    }
    return false;
  }

  // x*y+z with one rounding, as dtsim's .py reader computes tl.fma: for f32/f16/bf16 the product is
  // exact in f64, the sum rounded to f64 and then to t (equal to a fused multiply-add but where that
  // double rounding meets a tie); f64 operands multiply and add in f64.
  ExprP fused_multiply_add(std::vector<ExprP> xyz, Scalar t) {  // ir/Fma.h
    return dtsim::fused_multiply_add(xyz[0], xyz[1], xyz[2], t, cur_loc_, binder());
  }

  // f64 a * b ('m'), a / b ('/') or sqrt(a) ('s', b unused) rounded down ('d'), up ('u') or toward
  // zero ('z'), exact. Zeros, infinities and NaN operands give the IEEE result (exact already).
  // Otherwise on the magnitudes, a = ma 2^ka with ma in [1, 2) (subnormals scaled by 2^64 first):
  //  * q = ma * mb, ma / mb or sqrt(ma) (ka made even) rounded to nearest, and an exact term whose
  //    sign is that of the exact value - q: Dekker's product error (operands split into 26-bit
  //    halves by their bits, so every partial product is exact), or the remainder ma - q mb /
  //    ma - q^2 (exact for a correctly rounded q: ma - p by Sterbenz, p + e = q mb by Dekker). q
  //    passes through an opaque identity (its bits xor'd with 1 only for a NaN) so that the CUDA
  //    backend's fp fusion cannot fuse the rounded product into the error terms;
  //  * q one step up or down where that term says it lies on the wrong side (the magnitude rounds
  //    away from zero for rd of a negative and ru of a positive result), then scaled by 2^(ka +- kb)
  //    in two exact factors; past the largest finite value, the infinity or that value as the
  //    direction says;
  //  * results below 2^-1022 (mul, div): q 2^(k + 1074) rounded to an integer down or up (its
  //    fraction, or where it is an integer the error term's sign), times 2^-1074: one rounding on
  //    the subnormal grid, not two.
  ExprP directed_f64(char op, ExprP a0, ExprP b0, char mode) {
    BindFn bind = binder();
    auto c = [&](double x) { return typed_const(x, 0, Scalar::F64); };
    auto ci = [&](int64_t x) { return typed_const(static_cast<double>(x), x, Scalar::I64); };
    auto bits = [&](ExprP x) { return make_bitcast(std::move(x), Scalar::I64, cur_loc_); };
    auto fbits = [&](ExprP x) { return make_bitcast(std::move(x), Scalar::F64, cur_loc_); };
    auto pow2 = [&](ExprP k) {  // 2^k for an i64 k, clamped to [-1022, 1023]
      ExprP kc = bind("d_k", wh(bo(BinOp::Lt, clone_expr(k), ci(-1022)), ci(-1022), wh(bo(BinOp::Gt, clone_expr(k), ci(1023)), ci(1023), clone_expr(k))));
      return fbits(bo(BinOp::Shl, bo(BinOp::Add, std::move(kc), ci(1023)), ci(52)));
    };
    auto opaque = [&](ExprP x) {
      ExprP y = bind("d_q", std::move(x));
      return bind("d_o", fbits(bo(BinOp::Xor, bits(clone_expr(y)), wh(bo(BinOp::Ne, clone_expr(y), clone_expr(y)), ci(1), ci(0)))));
    };
    auto decomp = [&](ExprP x, ExprP& m, ExprP& k) {  // |x| = m 2^k, m in [1, 2)
      ExprP ax = bind("d_ax", un(UnOp::Abs, std::move(x)));
      ExprP sub = bind("d_sub", bo(BinOp::Lt, clone_expr(ax), c(0x1p-1022)));
      ExprP xb = bind("d_xb", bits(wh(clone_expr(sub), bo(BinOp::Mul, clone_expr(ax), c(0x1p64)), clone_expr(ax))));
      k = bind("d_ke", bo(BinOp::Sub, bo(BinOp::Sub, bo(BinOp::Shr, clone_expr(xb), ci(52)), ci(1023)), wh(std::move(sub), ci(64), ci(0))));
      m = bind("d_m", fbits(bo(BinOp::Or, bo(BinOp::And, clone_expr(xb), ci((int64_t{1} << 52) - 1)), ci(int64_t{1023} << 52))));
    };
    auto split = [&](const ExprP& x, ExprP& hi, ExprP& lo) {
      hi = bind("d_hi", fbits(bo(BinOp::And, bo(BinOp::Add, bits(clone_expr(x)), ci(int64_t{1} << 26)), ci(~((int64_t{1} << 27) - 1)))));
      lo = bind("d_lo", bo(BinOp::Sub, clone_expr(x), clone_expr(hi)));
    };
    auto two_prod_err = [&](const ExprP& x, const ExprP& y, const ExprP& p) {  // x * y - p, exact
      ExprP xh, xl, yh, yl;
      split(x, xh, xl);
      split(y, yh, yl);
      ExprP t = bo(BinOp::Sub, clone_expr(p), bo(BinOp::Mul, clone_expr(xh), clone_expr(yh)));
      t = bo(BinOp::Sub, std::move(t), bo(BinOp::Mul, clone_expr(xl), clone_expr(yh)));
      t = bind("d_t", bo(BinOp::Sub, std::move(t), bo(BinOp::Mul, clone_expr(xh), clone_expr(yl))));
      return bind("d_e", bo(BinOp::Sub, bo(BinOp::Mul, clone_expr(xl), clone_expr(yl)), std::move(t)));
    };
    const double inf = std::numeric_limits<double>::infinity();
    ExprP a = bind("d_a", std::move(a0)), b = bind("d_b", std::move(b0));
    ExprP ieee = op == 'm' ? bo(BinOp::Mul, clone_expr(a), clone_expr(b)) : op == '/' ? bo(BinOp::Div, clone_expr(a), clone_expr(b)) : un(UnOp::Sqrt, clone_expr(a));
    auto regular = [&](const ExprP& x) {  // finite and not 0
      ExprP ax = un(UnOp::Abs, clone_expr(x));
      return bo(BinOp::And, bo(BinOp::Lt, clone_expr(ax), c(inf)), bo(BinOp::Gt, clone_expr(ax), c(0)));
    };
    ExprP plain = op == 's' ? bo(BinOp::Or, un(UnOp::Not, regular(a)), bo(BinOp::Lt, clone_expr(a), c(0)))
                            : un(UnOp::Not, bo(BinOp::And, regular(a), regular(b)));
    plain = bind("d_plain", std::move(plain));
    ExprP neg = op == 's' ? bo(BinOp::Ne, clone_expr(a), clone_expr(a))  // never (a > 0 here)
                          : bo(BinOp::Ne, bo(BinOp::Lt, bits(clone_expr(a)), ci(0)), bo(BinOp::Lt, bits(clone_expr(b)), ci(0)));
    neg = bind("d_neg", std::move(neg));
    ExprP away;  // the magnitude rounds away from zero
    if (mode == 'z') away = bo(BinOp::And, clone_expr(neg), un(UnOp::Not, clone_expr(neg)));  // never
    else if (mode == 'u') away = un(UnOp::Not, clone_expr(neg));
    else away = clone_expr(neg);
    away = bind("d_away", std::move(away));
    ExprP ma, ka, q, err, k;
    decomp(clone_expr(a), ma, ka);
    if (op == 's') {
      ExprP odd = bind("d_odd", bo(BinOp::Ne, bo(BinOp::And, clone_expr(ka), ci(1)), ci(0)));
      ma = bind("d_ms", wh(clone_expr(odd), bo(BinOp::Mul, clone_expr(ma), c(2)), clone_expr(ma)));
      k = bind("d_k2", bo(BinOp::Shr, bo(BinOp::Sub, clone_expr(ka), wh(std::move(odd), ci(1), ci(0))), ci(1)));  // an even exponent halved
      q = opaque(un(UnOp::Sqrt, clone_expr(ma)));
      ExprP p = opaque(bo(BinOp::Mul, clone_expr(q), clone_expr(q)));
      ExprP e = two_prod_err(q, q, p);
      err = bind("d_r", bo(BinOp::Sub, bo(BinOp::Sub, clone_expr(ma), clone_expr(p)), std::move(e)));  // ma - q^2
    } else {
      ExprP mb, kb;
      decomp(clone_expr(b), mb, kb);
      if (op == 'm') {
        q = opaque(bo(BinOp::Mul, clone_expr(ma), clone_expr(mb)));
        err = two_prod_err(ma, mb, q);  // ma mb - q
        k = bind("d_k2", bo(BinOp::Add, clone_expr(ka), clone_expr(kb)));
      } else {
        q = opaque(bo(BinOp::Div, clone_expr(ma), clone_expr(mb)));
        ExprP p = opaque(bo(BinOp::Mul, clone_expr(q), clone_expr(mb)));
        ExprP e = two_prod_err(q, mb, p);
        err = bind("d_r", bo(BinOp::Sub, bo(BinOp::Sub, clone_expr(ma), clone_expr(p)), std::move(e)));  // ma - q mb
        k = bind("d_k2", bo(BinOp::Sub, clone_expr(ka), clone_expr(kb)));
      }
    }
    ExprP qb = bind("d_qb", bits(clone_expr(q)));
    ExprP up = bo(BinOp::And, clone_expr(away), bo(BinOp::Gt, clone_expr(err), c(0)));
    ExprP down = bo(BinOp::And, un(UnOp::Not, clone_expr(away)), bo(BinOp::Lt, clone_expr(err), c(0)));
    ExprP r1 = bind("d_r1", fbits(wh(std::move(up), bo(BinOp::Add, clone_expr(qb), ci(1)), wh(std::move(down), bo(BinOp::Sub, clone_expr(qb), ci(1)), clone_expr(qb)))));
    ExprP k1 = bind("d_k1", bo(BinOp::Shr, clone_expr(k), ci(1)));
    ExprP rn = bind("d_rn", bo(BinOp::Mul, bo(BinOp::Mul, clone_expr(r1), pow2(clone_expr(k1))), pow2(bo(BinOp::Sub, clone_expr(k), clone_expr(k1)))));
    ExprP res = wh(bo(BinOp::And, bo(BinOp::Eq, clone_expr(rn), c(inf)), un(UnOp::Not, clone_expr(away))), c(std::numeric_limits<double>::max()), clone_expr(rn));
    if (op != 's') {
      ExprP er1 = bo(BinOp::Sub, bo(BinOp::Shr, bits(clone_expr(r1)), ci(52)), ci(1023));
      ExprP sub = bind("d_subn", bo(BinOp::Lt, bo(BinOp::Add, clone_expr(k), std::move(er1)), ci(-1022)));
      ExprP j0 = bo(BinOp::Add, clone_expr(k), ci(1074));
      ExprP jj = bind("d_j", wh(bo(BinOp::Lt, clone_expr(j0), ci(-60)), ci(-60), clone_expr(j0)));
      ExprP P = bind("d_P", bo(BinOp::Mul, clone_expr(q), pow2(std::move(jj))));  // exact
      ExprP fl = bind("d_fl", un(UnOp::Floor, clone_expr(P)));
      ExprP isint = bind("d_int", bo(BinOp::Eq, clone_expr(fl), clone_expr(P)));
      ExprP vd = wh(clone_expr(isint), wh(bo(BinOp::Lt, clone_expr(err), c(0)), bo(BinOp::Sub, clone_expr(P), c(1)), clone_expr(P)), clone_expr(fl));
      ExprP vu = wh(clone_expr(isint), wh(bo(BinOp::Gt, clone_expr(err), c(0)), bo(BinOp::Add, clone_expr(P), c(1)), clone_expr(P)), bo(BinOp::Add, clone_expr(fl), c(1)));
      ExprP vs = bo(BinOp::Mul, wh(clone_expr(away), std::move(vu), std::move(vd)), c(0x1p-1074));
      res = wh(std::move(sub), std::move(vs), std::move(res));
    }
    ExprP mag = bind("d_mag", std::move(res));
    ExprP signed_mag = wh(clone_expr(neg), un(UnOp::Neg, clone_expr(mag)), clone_expr(mag));
    return wh(std::move(plain), std::move(ieee), std::move(signed_mag));
  }

  // The exact value s + e (s an f64 value, e = the exact value - s, |e| at most half an ulp of s)
  // rounded to f32 down ('d'), up ('u') or toward zero ('z'): r = s rounded to the nearest f32, then
  // one step where r lies past the exact value on the wrong side. r - s is exact in f64 (r and s are
  // within a factor 2), so r > s + e is r - s > e without rounding; one step suffices as r is within
  // half an f32 ulp of s. Infinities from rounding step back to the largest finite value where the
  // direction asks; NaN stays.
  ExprP round_pair_f32(ExprP s, ExprP e, char mode) {
    BindFn bind = binder();
    ExprP r = bind("pair_r", make_cast(clone_expr(s), Scalar::F32, cur_loc_));
    ExprP d = bind("pair_d", bo(BinOp::Sub, make_cast(clone_expr(r), Scalar::F64, cur_loc_), clone_expr(s)));
    ExprP bits = bind("pair_bits", make_bitcast(clone_expr(r), Scalar::I32, cur_loc_));
    auto step = [&](int64_t k) { return bo(BinOp::Add, clone_expr(bits), typed_const(0, k, Scalar::I32)); };
    ExprP positive = bo(BinOp::Ge, clone_expr(bits), typed_const(0, 0, Scalar::I32));
    ExprP above = bo(BinOp::Gt, clone_expr(d), clone_expr(e)), below = bo(BinOp::Lt, clone_expr(d), clone_expr(e));
    ExprP moved;
    if (mode == 'd') moved = make_where(std::move(above), make_where(std::move(positive), step(-1), step(1), cur_loc_), clone_expr(bits), cur_loc_);
    else if (mode == 'u') moved = make_where(std::move(below), make_where(std::move(positive), step(1), step(-1), cur_loc_), clone_expr(bits), cur_loc_);
    else {
      ExprP zero = typed_const(0, 0, Scalar::F64);
      ExprP past = bo(BinOp::Or, bo(BinOp::And, bo(BinOp::Gt, clone_expr(s), clone_expr(zero)), std::move(above)), bo(BinOp::And, bo(BinOp::Lt, clone_expr(s), clone_expr(zero)), std::move(below)));
      moved = make_where(std::move(past), step(-1), clone_expr(bits), cur_loc_);
    }
    return make_bitcast(std::move(moved), Scalar::F32, cur_loc_);
  }

  // The f64 value q rounded to f32 toward zero ('z'), down ('d') or up ('u'): to nearest, then one ulp
  // back where that went past q (infinities step to the largest finite value; NaN stays).
  ExprP round_directed(ExprP q64, char mode) {
    BindFn hold_as = binder();
    ExprP q = hold_as("exact", q64);
    ExprP r = hold_as("near", make_cast(q, Scalar::F32, cur_loc_));
    ExprP r64 = make_cast(clone_expr(r), Scalar::F64, cur_loc_);
    ExprP bits = hold_as("near_bits", make_bitcast(clone_expr(r), Scalar::I32, cur_loc_));
    auto step = [&](int64_t d) { return make_binary(BinOp::Add, clone_expr(bits), typed_const(0, d, Scalar::I32), cur_loc_); };
    ExprP positive = make_binary(BinOp::Ge, clone_expr(bits), typed_const(0, 0, Scalar::I32), cur_loc_);
    ExprP past, moved;
    if (mode == 'z') {  // |r| > |q|: the magnitude down
      past = make_binary(BinOp::Gt, make_unary(UnOp::Abs, r64, cur_loc_), make_unary(UnOp::Abs, clone_expr(q), cur_loc_), cur_loc_);
      moved = step(-1);
    } else if (mode == 'd') {  // r > q: toward -inf
      past = make_binary(BinOp::Gt, r64, clone_expr(q), cur_loc_);
      moved = make_where(positive, step(-1), step(1), cur_loc_);
    } else {  // r < q: toward +inf
      past = make_binary(BinOp::Lt, r64, clone_expr(q), cur_loc_);
      moved = make_where(positive, step(1), step(-1), cur_loc_);
    }
    return make_bitcast(make_where(past, moved, clone_expr(bits), cur_loc_), Scalar::F32, cur_loc_);
  }

  // "tt.reduce"(%x, ...) <{axis = k : i32}> ({ ^bb0(...): combine; tt.reduce.return }) : (...) -> ...
  // The Math row (IR.h) whose Triton spelling is `name` (libdevice and math dialect names).
  static std::optional<UnOp> math_unop(const std::string& name) {
    for (UnOp u : kAllUnOps)
      if (op_info(u).cat == OpCat::Math && name == op_info(u).py) return u;
    return std::nullopt;
  }
  static std::optional<BinOp> math_binop(const std::string& name) {
    for (BinOp b : kAllBinOps)
      if (op_info(b).cat == OpCat::Math && name == op_info(b).py) return b;
    return std::nullopt;
  }

  // A combine region (block arguments a0..ak-1, b0..bk-1; straight-line ops; a *.return of k values)
  // as expressions of `args` (bound to the block arguments in order): for one operand, the IR's
  // combine function of CombineArg 0 and 1. Values the region keeps in variables are substituted
  // back (each result is one pure expression).
  std::vector<ExprP> combine_region(const Block& b, const std::string& ret_name, const std::vector<ExprP>& args) {
    if (b.args.size() != args.size()) user_error(cur_loc_, "malformed TTIR: a combine region's arguments");
    std::vector<StmtP> stmts;
    std::vector<StmtP>* saved = out_;
    out_ = &stmts;
    scopes_.push_back({});
    local_.push_back(local_uses(b));
    for (size_t i = 0; i < args.size(); ++i) {
      VType t = vtype(b.arg_types.at(i), cur_loc_);
      bind(b.args[i], Value{args[i], "", t, true});
    }
    std::vector<std::string> rets;
    for (const Op& o : b.ops) {
      if (o.name == ret_name) {
        Cursor rc(o.text, o.text_loc);
        while (rc.peek_value()) {
          rets.push_back(rc.value());
          if (!rc.eat(",")) break;
        }
        continue;
      }
      emit(o);
    }
    std::vector<ExprP> bodies;
    for (size_t i = 0; i < rets.size(); ++i) {
      if (std::count(rets.begin(), rets.end(), rets[i]) > 1) hold(rets[i]);
      bodies.push_back(use(rets[i]));
    }
    local_.pop_back();
    scopes_.pop_back();
    out_ = saved;
    if (bodies.size() * 2 != args.size()) user_error(cur_loc_, "malformed TTIR: a combine region without " + ret_name + " of its operands");
    // The statements in order, each inlined with the definitions before it (a Python variable's name
    // may be reused for a later value: the combine function is one expression, not a sequence).
    std::map<std::string, ExprP> defs;
    std::function<ExprP(const ExprP&)> inline_vars = [&](const ExprP& e) -> ExprP {
      if (!e) return e;
      if (e->kind == ExprKind::Var) {
        auto it = defs.find(e->name);
        if (it == defs.end()) user_error(e->loc, "a combine function may use only its arguments and constants");
        return clone_expr(it->second);
      }
      ExprP c = std::make_shared<Expr>(*e);
      for (auto& a : c->args) a = inline_vars(a);
      return c;
    };
    // An scf.if (pure: both branches only compute) is a select per value it assigns: the branch's
    // value where the condition holds, the other's (or the value before) elsewhere.
    std::function<void(const std::vector<StmtP>&)> run = [&](const std::vector<StmtP>& ss) {
      for (const StmtP& s : ss) {
        if (s->kind == StmtKind::Assign && s->targets.size() == 1) {
          defs[s->targets[0]] = inline_vars(s->args[0]);
          continue;
        }
        if (s->kind != StmtKind::If) {
          const char* what = s->kind == StmtKind::For || s->kind == StmtKind::While ? "a loop" : s->kind == StmtKind::Store ? "a store"
                           : s->kind == StmtKind::Atomic ? "an atomic" : s->kind == StmtKind::Print ? "a print" : s->kind == StmtKind::Assert ? "an assert"
                           : s->kind == StmtKind::Return ? "a return" : "a statement";
          user_error(s->loc.valid() ? s->loc : cur_loc_, std::string("a combine function with ") + what + " is not supported yet (it must compute its results from its arguments)");
        }
        ExprP cond = inline_vars(s->args[0]);
        const std::map<std::string, ExprP> before = defs;
        run(s->body);
        std::map<std::string, ExprP> then_defs = std::move(defs);
        defs = before;
        run(s->orelse);
        std::map<std::string, ExprP> else_defs = std::move(defs);
        defs = before;
        for (auto& [name, v] : defs) {  // (values first defined inside a branch stay there)
          const ExprP& t = then_defs.at(name);
          const ExprP& e = else_defs.at(name);
          if (t != v || e != v) v = make_where(clone_expr(cond), clone_expr(t), clone_expr(e), s->loc.valid() ? s->loc : cur_loc_);
        }
      }
    };
    run(stmts);
    for (ExprP& e : bodies) e = inline_vars(e);
    return bodies;
  }
  ExprP combine_region(const Block& b, const std::string& ret_name) {
    if (b.args.size() != 2) user_error(cur_loc_, "malformed TTIR: a combine region of one operand has two arguments");
    return combine_region(b, ret_name, {make_combine_arg(0, cur_loc_), make_combine_arg(1, cur_loc_)}).at(0);
  }

  // Two operands of at most 32 bits (i1, i32, f16, bf16, f32) combined as one i64: the first in the
  // high word, the second in the low word, each as the bits of an i32 (f16 and bf16 widened to f32,
  // exactly). A reduction or scan of the pair is one of the packed values, whose combine function
  // unpacks its arguments, applies the region and packs its results.
  static bool packable(Scalar t) {
    return t == Scalar::I1 || t == Scalar::I32 || t == Scalar::F16 || t == Scalar::BF16 || t == Scalar::F32;
  }
  ExprP word_of(ExprP x, Scalar t) {  // i32 bits
    if (t == Scalar::I1) return make_cast(x, Scalar::I32, cur_loc_);
    if (t == Scalar::F16 || t == Scalar::BF16) x = make_cast(x, Scalar::F32, cur_loc_);
    if (is_float(t)) return make_bitcast(x, Scalar::I32, cur_loc_);
    return x;
  }
  ExprP from_word(ExprP w, Scalar t) {
    if (t == Scalar::I1) return make_binary(BinOp::Ne, w, make_const_int(0, cur_loc_), cur_loc_);
    if (!is_float(t)) return w;
    ExprP f = make_bitcast(w, Scalar::F32, cur_loc_);
    return t == Scalar::F32 ? f : make_cast(f, t, cur_loc_);
  }
  ExprP pack_pair(ExprP hi, Scalar th, ExprP lo, Scalar tl) {
    ExprP h = make_binary(BinOp::Shl, make_cast(word_of(hi, th), Scalar::I64, cur_loc_), typed_const(0, 32, Scalar::I64), cur_loc_);
    ExprP l = make_binary(BinOp::And, make_cast(word_of(lo, tl), Scalar::I64, cur_loc_), typed_const(0, 0xffffffffll, Scalar::I64), cur_loc_);
    return make_binary(BinOp::Or, h, l, cur_loc_);
  }
  ExprP unpack_pair(ExprP p, int which, Scalar t) {
    ExprP w = which == 0 ? make_binary(BinOp::Shr, p, typed_const(0, 32, Scalar::I64), cur_loc_)
                         : make_binary(BinOp::Shr, make_binary(BinOp::Shl, p, typed_const(0, 32, Scalar::I64), cur_loc_), typed_const(0, 32, Scalar::I64), cur_loc_);
    return from_word(make_cast(w, Scalar::I32, cur_loc_), t);
  }
  // The reduction or scan (`make`) of two operands with the region's combine function, packed.
  void emit_pair_combine(const Op& op, const std::vector<std::string>& ins, const Block& b, const std::string& ret_name,
                         const std::vector<VType>& rtypes, const std::function<ExprP(ExprP)>& make) {
    Scalar t0 = type_of(ins[0]).elem, t1 = type_of(ins[1]).elem;
    if (!packable(t0) || !packable(t1)) return emit_n_combine(op, ins, b, ret_name, rtypes);
    ExprP a = make_combine_arg(0, cur_loc_), bb = make_combine_arg(1, cur_loc_);
    std::vector<ExprP> fns = combine_region(b, ret_name, {unpack_pair(a, 0, t0), unpack_pair(a, 1, t1), unpack_pair(bb, 0, t0), unpack_pair(bb, 1, t1)});
    ExprP packed_fn = pack_pair(fns.at(0), t0, fns.at(1), t1);
    if (ins[0] == ins[1]) hold(ins[0]);
    ExprP r = make(pack_pair(use(ins[0]), t0, use(ins[1]), t1));
    r->fn = packed_fn;
    std::string pv = var_name(op.results.at(0) + "_pair");
    out_->push_back(make_assign(pv, r, cur_loc_));
    define(op.results.at(0), unpack_pair(make_var(pv, cur_loc_), 0, t0), rtypes.at(0), true, cur_loc_);
    define(op.results.at(1), unpack_pair(make_var(pv, cur_loc_), 1, t1), rtypes.at(1), true, cur_loc_);
  }

  // The reduction or scan of N operands (tuples; pairs that do not pack) with the region's combine
  // function: the IR's reduce / associative_scan of several operands, one expression per result
  // (Expr::fns, Expr::part), each held in a variable. The operands are held in variables first.
  void emit_n_combine(const Op& op, const std::vector<std::string>& ins, const Block& b, const std::string& ret_name,
                      const std::vector<VType>& rtypes) {
    const size_t n = ins.size();
    if (op.results.size() != n || rtypes.size() != n) user_error(cur_loc_, "malformed TTIR: a combine of " + std::to_string(n) + " operands");
    std::vector<ExprP> cargs;
    for (size_t i = 0; i < 2 * n; ++i) cargs.push_back(make_combine_arg(static_cast<int>(i), cur_loc_));
    std::vector<ExprP> fns = combine_region(b, ret_name, cargs);
    std::vector<std::string> xv;
    for (size_t i = 0; i < n; ++i) {
      bool again = false;
      for (size_t j = 0; j < i; ++j) again = again || ins[j] == ins[i];
      if (again) {
        xv.push_back(xv[static_cast<size_t>(std::find(ins.begin(), ins.end(), ins[i]) - ins.begin())]);
        continue;
      }
      xv.push_back(var_name(ins[i] + "_op"));
      out_->push_back(make_assign(xv.back(), use(ins[i]), cur_loc_));
    }
    const bool scan = ret_name == "tt.scan.return";
    int axis = 0;
    bool reverse = false;
    {
      std::string props;
      region_op_head(op, props);
      axis = static_cast<int>(attr_int(props, "axis"));
      reverse = props.find("reverse = true") != std::string::npos;
    }
    for (size_t k = 0; k < n; ++k) {
      std::vector<ExprP> xs, fk;
      for (size_t i = 0; i < n; ++i) xs.push_back(make_var(xv[i], cur_loc_));
      for (const ExprP& f : fns) fk.push_back(clone_expr(f));
      ExprP e = scan ? make_scan_n(xs, axis, reverse, fk, static_cast<int>(k), cur_loc_) : make_reduce_n(xs, axis, fk, static_cast<int>(k), cur_loc_);
      std::string rv = var_name(op.results.at(k) + "_part");
      out_->push_back(make_assign(rv, e, cur_loc_));
      define(op.results.at(k), make_var(rv, cur_loc_), rtypes.at(k), true, cur_loc_);
    }
  }

  // The head of `"tt.reduce"(%a, ...) <{props}> ({ region })` (and tt.scan): the operands; `props`
  // gets the properties' text.
  std::vector<std::string> region_op_head(const Op& op, std::string& props) {
    Cursor c(op.text, op.text_loc);
    c.expect("(");
    std::vector<std::string> ins;
    while (!c.eat(")")) {
      ins.push_back(c.value());
      c.eat(",");
    }
    props = c.balanced('<', '>');
    return ins;
  }

  // "tt.scan"(%x) <{axis = k : i32, reverse = r}> ({ ^bb0(%a, %b): combine; tt.scan.return }) : ...
  // A combine of one add, mul, max or min of the two block arguments is cumsum, cumprod, cummax or
  // cummin.
  void emit_scan(const Op& op) {
    std::string props;
    std::vector<std::string> ins = region_op_head(op, props);
    int axis = static_cast<int>(attr_int(props, "axis"));
    bool reverse = props.find("reverse = true") != std::string::npos;
    const Block& b = op.regions.at(0).blocks.at(0);
    std::vector<const Op*> body;
    for (const Op& o : b.ops)
      if (o.name != "tt.scan.return") body.push_back(&o);
    std::optional<ScanOp> k;
    if (ins.size() == 1 && body.size() == 1 && b.args.size() == 2 && body[0]->text.find("%" + b.args[0]) != std::string::npos &&
        body[0]->text.find("%" + b.args[1]) != std::string::npos) {
      const std::string& bn = body[0]->name;
      if (bn == "arith.addf" || bn == "arith.addi") k = ScanOp::Sum;
      else if (bn == "arith.mulf" || bn == "arith.muli") k = ScanOp::Prod;
      else if (bn == "arith.maxnumf" || bn == "arith.maximumf" || bn == "arith.maxsi") k = ScanOp::Max;
      else if (bn == "arith.minnumf" || bn == "arith.minimumf" || bn == "arith.minsi") k = ScanOp::Min;
    }
    VType t = type_of(ins[0]);
    if (ins.size() == 2 && op.results.size() == 2) {
      std::vector<VType> rtypes = {type_of(ins[0]), type_of(ins[1])};
      emit_pair_combine(op, ins, b, "tt.scan.return", rtypes, [&](ExprP x) { return make_scan(ScanOp::Fn, x, axis, reverse, cur_loc_); });
      return;
    }
    if (ins.size() != 1) {
      std::vector<VType> rtypes;
      for (const std::string& x : ins) rtypes.push_back(type_of(x));
      return emit_n_combine(op, ins, b, "tt.scan.return", rtypes);
    }
    ExprP fn;
    if (!k) {
      fn = combine_region(b, "tt.scan.return");
      k = ScanOp::Fn;
    } else if (t.elem == Scalar::I1) {
      user_error(cur_loc_, "a scan of i1 values is not supported yet");
    }
    const std::string bn = body.size() == 1 ? body[0]->name : "";
    if ((bn == "arith.maxnumf" || bn == "arith.minnumf") && is_float(t.elem) && (*k == ScanOp::Max || *k == ScanOp::Min)) {
      // NaN lanes left out; NaN while every lane so far is NaN
      ExprP x = binder()("num_x", use(ins[0]));
      ExprP sc = make_scan(*k, nan_as_inf(x, t.elem, *k == ScanOp::Max), axis, reverse, cur_loc_);
      sc = nan_where_none(sc, x, t.elem, [&](ExprP v) { return make_scan(ScanOp::Sum, std::move(v), axis, reverse, cur_loc_); });
      return define(op.results.at(0), sc, t, true, cur_loc_);
    }
    ExprP sc = make_scan(*k, use(ins[0]), axis, reverse, cur_loc_);
    sc->fn = fn;
    define(op.results.at(0), sc, t, true, cur_loc_);
  }

  // %r = tt.atomic_rmw fadd, acq_rel, gpu, %ptr, %val, %mask : (...) -> T
  // %r = tt.atomic_cas acq_rel, gpu, %ptr, %cmp, %val : (...) -> T
  void emit_atomic(const Op& op, const std::string& n, Cursor& c) {
    bool cas = n == "tt.atomic_cas";
    std::string kind = cas ? "cas" : c.ident();
    if (!cas) c.expect(",");
    std::string sem = c.ident();
    c.expect(",");
    std::string scope = c.ident();
    c.expect(",");
    std::vector<std::string> v;
    while (c.peek_value()) {
      v.push_back(c.value());
      if (!c.eat(",")) break;
    }
    static const std::map<std::string, AtomicOp> kinds = {
        {"add", AtomicOp::Add}, {"fadd", AtomicOp::Add},   {"max", AtomicOp::Max}, {"min", AtomicOp::Min},   {"umax", AtomicOp::UMax},
        {"umin", AtomicOp::UMin}, {"and", AtomicOp::And}, {"or", AtomicOp::Or},   {"xor", AtomicOp::Xor},   {"exch", AtomicOp::Xchg},
        {"cas", AtomicOp::Cas}};
    auto it = kinds.find(kind);
    if (it == kinds.end()) user_error(cur_loc_, "atomic " + q(kind) + " is not supported yet");
    AtomicOp aop = it->second;
    if (v.size() < 2 || (cas && v.size() != 3)) user_error(op.text_loc, "malformed TTIR: " + n + " operands");
    std::string rt = c.rest();
    VType t = vtype(trim_copy(rt.substr(rt.rfind("->") + 2)), op.text_loc);
    std::vector<ExprP> args;
    bool view = !cas && !view_of(v[0]).empty();
    if (view) {
      // Triton's float max/min: max (min) on the integer view where the value's sign bit is clear,
      // umin (umax) where it is set; each is the float max (min) on the float buffer.
      const std::string fp = view_of(v[0]);
      if (view_ratio(v[0]) > 1) user_error(cur_loc_, "an atomic through a pointer bitcast to a wider element type is not supported");
      VType ft = type_of(fp);
      bool fmax = aop == AtomicOp::Max || aop == AtomicOp::UMin, fmin = aop == AtomicOp::Min || aop == AtomicOp::UMax;
      if ((!fmax && !fmin) || !is_float(ft.elem) || !is_int(type_of(v[0]).elem))
        user_error(cur_loc_, "an atomic through a bitcast pointer is supported only as tl.atomic_max / tl.atomic_min on floats");
      aop = fmax ? AtomicOp::Max : AtomicOp::Min;
      std::vector<ExprP> pvm = elementwise({fp, v[1]}, ft.shape, true);
      ExprP val = make_bitcast(pvm[1], ft.elem, cur_loc_);
      ExprP m = v.size() > 2 ? elementwise({v[2]}, ft.shape, true).at(0) : nullptr;
      args = {pvm[0], val, m};
    } else {
      args = elementwise(v, type_of(v[0]).shape, true);
      if (!cas && v.size() == 2) args.push_back(nullptr);
    }
    auto total = uses_.find(op.results.at(0));
    bool used = total != uses_.end() && total->second > 0;
    std::string var = used ? python_name(op.results[0], t) : "";
    std::string target = var;
    if (used && view) target = var_name(op.results[0] + "_f");
    StmtP s = make_atomic(aop, target, args, cur_loc_);
    if (auto m = parse_memsem(sem)) s->sem = *m;
    if (auto m = parse_memscope(scope)) s->scope = *m;
    out_->push_back(s);
    if (!used) return;
    if (view) {  // the old value as the integer bits the rest of the TTIR reads
      out_->push_back(make_assign(var, make_bitcast(make_var(target, cur_loc_), t.elem, cur_loc_), cur_loc_));
    }
    bind(op.results[0], Value{nullptr, var, t});
    holder_[var] = Holder{op.results[0], t, scopes_.size()};
  }

  // "tt.map_elementwise"(%x, %y) <{pack = 1 : i32}> ({ ^bb0(%a: f32, %b: f32): ... cf.cond_br / cf.br ...
  // tt.map_elementwise.return %r, ... }) : (tensor<..>, tensor<..>) -> (tensor<..>, ...)
  // (tl.map_elementwise: a scalar @jit function applied lane by lane). Its ops are pure and elementwise,
  // so they run on the whole tiles, the block arguments bound to the operands; the control flow, blocks
  // whose branches only go forward, becomes selects: each block is reached where the conditions of the
  // edges into it hold, each of its arguments is the value of the edge that reached it, and each result
  // is the value of the return that the lane reached.
  void emit_map_elementwise(const Op& op) {
    std::string props;
    std::vector<std::string> ins = region_op_head(op, props);
    if (props.find("pack") != std::string::npos && attr_int(props, "pack") != 1)
      user_error(cur_loc_, "tl.map_elementwise with pack > 1 is not supported yet");
    std::vector<VType> rtypes = trailer_results(op);
    if (op.regions.size() != 1 || op.regions[0].blocks.empty() || rtypes.size() != op.results.size())
      user_error(cur_loc_, "malformed TTIR: tt.map_elementwise's region or results");
    const std::vector<Block>& blocks = op.regions[0].blocks;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < blocks.size(); ++i) index[blocks[i].label.empty() ? "bb0" : blocks[i].label] = i;
    const SourceLoc at = cur_loc_;
    scopes_.push_back({});
    std::map<std::string, int> uses;
    for (const Block& b : blocks)
      for (const auto& [k, v] : local_uses(b)) uses[k] += v;
    local_.push_back(uses);
    if (blocks[0].args.size() != ins.size()) user_error(at, "malformed TTIR: tt.map_elementwise's arguments");
    for (size_t i = 0; i < ins.size(); ++i) bind(blocks[0].args[i], Value{use(ins[i]), "", vtype(blocks[0].arg_types.at(i), at), true});
    // per block: where it is reached (null: every lane), and the edges into it (condition, values)
    struct Edge {
      ExprP cond;
      std::vector<ExprP> vals;
    };
    std::vector<std::vector<Edge>> into(blocks.size());
    std::vector<ExprP> reached(blocks.size());
    std::vector<std::pair<ExprP, std::vector<ExprP>>> returns;  // (where, values)
    auto held = [&](const std::string& base, ExprP e) {  // a tile kept in a variable (used several times)
      std::string v = var_name(base);
      out_->push_back(make_assign(v, e, at));
      return make_var(v, at);
    };
    auto both = [&](const ExprP& a, ExprP c) { return a ? make_binary(BinOp::And, clone_expr(a), c, at) : c; };
    for (size_t bi = 0; bi < blocks.size(); ++bi) {
      const Block& b = blocks[bi];
      if (bi > 0) {
        if (into[bi].empty()) continue;  // unreachable
        if (b.args.size() != into[bi][0].vals.size()) user_error(at, "malformed TTIR: a block's arguments in tt.map_elementwise");
        ExprP where = into[bi][0].cond;
        for (size_t k = 1; k < into[bi].size(); ++k)
          where = where && into[bi][k].cond ? make_binary(BinOp::Or, clone_expr(where), clone_expr(into[bi][k].cond), at) : nullptr;
        reached[bi] = where ? held("reached", where) : nullptr;
        for (size_t a = 0; a < b.args.size(); ++a) {
          ExprP v = clone_expr(into[bi][0].vals[a]);
          for (size_t k = 1; k < into[bi].size(); ++k)
            v = make_where(clone_expr(into[bi][k].cond), clone_expr(into[bi][k].vals[a]), v, at);
          VType t = vtype(b.arg_types.at(a), at);
          std::string name = var_name(b.args[a]);
          out_->push_back(make_assign(name, v, at));
          bind(b.args[a], Value{nullptr, name, t});
        }
      }
      // a successor: ^label or ^label(%v, ... : types)
      auto successor = [&](Cursor& c, ExprP cond) {
        c.expect("^");
        std::string label = c.ident();
        auto it = index.find(label);
        if (it == index.end()) user_error(at, "malformed TTIR: a branch to ^" + label);
        if (it->second <= bi) user_error(at, "tl.map_elementwise: a loop in the mapped function is not supported yet");
        Edge e{cond, {}};
        if (c.eat("(")) {
          while (c.peek_value()) {
            e.vals.push_back(held("edge", use(c.value())));
            if (!c.eat(",")) break;
          }
          if (c.eat(":"))
            while (!c.eat(")")) {
              c.type();
              c.eat(",");
            }
          else
            c.expect(")");
        }
        into[it->second].push_back(std::move(e));
      };
      for (const Op& o : b.ops) {
        cur_loc_ = loc_of(o);
        if (o.name == "cf.br") {
          Cursor c(o.text, o.text_loc);
          successor(c, reached[bi] ? clone_expr(reached[bi]) : nullptr);
        } else if (o.name == "cf.cond_br") {
          Cursor c(o.text, o.text_loc);
          ExprP cond = held("taken", use(c.value()));
          c.expect(",");
          successor(c, both(reached[bi], clone_expr(cond)));
          c.expect(",");
          successor(c, both(reached[bi], make_unary(UnOp::Not, clone_expr(cond), at)));
        } else if (o.name == "tt.map_elementwise.return") {
          Cursor c(o.text, o.text_loc);
          std::vector<ExprP> vals;
          while (c.peek_value()) {
            vals.push_back(held("result", use(c.value())));
            if (!c.eat(",")) break;
          }
          if (vals.size() != op.results.size()) user_error(at, "malformed TTIR: tt.map_elementwise.return of another number of values");
          returns.push_back({reached[bi] ? clone_expr(reached[bi]) : nullptr, std::move(vals)});
        } else {
          const std::string& n = o.name;
          static const std::set<std::string> pure_tt = {"tt.bitcast", "tt.fp_to_fp", "tt.precise_sqrt", "tt.precise_divf", "tt.mulhiui",
                                                        "tt.clampf", "tt.extern_elementwise", "tt.elementwise_inline_asm"};
          if (n == "scf.for" || n == "scf.while") user_error(cur_loc_, "tl.map_elementwise: a loop in the mapped function is not supported yet");
          if (!(n.rfind("arith.", 0) == 0 || n.rfind("math.", 0) == 0 || pure_tt.count(n)))
            user_error(cur_loc_, "tl.map_elementwise: '" + n + "' in the mapped function is not supported yet (its ops must compute from its arguments)");
          static const std::set<std::string> divisions = {"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi", "arith.ceildivsi"};
          if (reached[bi] && divisions.count(n)) {
            // an integer division runs where its block is reached: elsewhere it divides by 1, so that a
            // branch guarding against 0 (`if b != 0: return a // b`) is no division by zero
            Cursor dc(o.text, o.text_loc);
            dc.value();
            dc.expect(",");
            const std::string d = dc.value();
            Value before = lookup(d);
            const VType t = before.t;
            bind(d, Value{held("divisor", make_where(clone_expr(reached[bi]), use(d), typed_const(1, 1, t.elem), cur_loc_)), "", t, true});
            emit(o);
            bind(d, before);
            continue;
          }
          emit(o);
        }
      }
      cur_loc_ = at;
    }
    if (returns.empty()) user_error(at, "malformed TTIR: tt.map_elementwise without a return");
    std::vector<ExprP> results;
    for (size_t r = 0; r < op.results.size(); ++r) {
      ExprP v = clone_expr(returns.back().second[r]);
      for (size_t k = returns.size() - 1; k-- > 0;)
        v = returns[k].first ? make_where(clone_expr(returns[k].first), clone_expr(returns[k].second[r]), v, at) : clone_expr(returns[k].second[r]);
      results.push_back(splat(v, rtypes[r]));  // the operands' shape (a result that is a constant on every path)
    }
    local_.pop_back();
    scopes_.pop_back();
    for (size_t r = 0; r < op.results.size(); ++r) define(op.results[r], results[r], rtypes[r], false, at);
  }

  void emit_reduce(const Op& op) {
    std::string props;
    std::vector<std::string> ins = region_op_head(op, props);
    int axis = static_cast<int>(attr_int(props, "axis"));
    const Block& b = op.regions.at(0).blocks.at(0);
    std::vector<VType> rtypes = trailer_results(op);  // ": (ins) -> outs"
    auto region_ops = [&]() {
      std::vector<const Op*> v;
      for (const Op& o : b.ops)
        if (o.name != "tt.reduce.return") v.push_back(&o);
      return v;
    };
    std::vector<const Op*> body = region_ops();
    if (ins.size() == 1 && body.size() == 1 && body[0]->text.find("%" + b.args.at(0)) != std::string::npos &&
        body[0]->text.find("%" + b.args.at(1)) != std::string::npos) {
      const std::string& bn = body[0]->name;
      std::optional<RedOp> r;
      if (bn == "arith.addf" || bn == "arith.addi") r = RedOp::Sum;
      else if (bn == "arith.xori") r = RedOp::Xor;
      else if (bn == "arith.ori") r = RedOp::Or;
      else if (bn == "arith.maxnumf" || bn == "arith.maximumf" || bn == "arith.maxsi") r = RedOp::Max;
      else if (bn == "arith.minnumf" || bn == "arith.minimumf" || bn == "arith.minsi") r = RedOp::Min;
      const bool uns = bn == "arith.maxui" || bn == "arith.minui";  // unsigned order: the signed one, sign bits flipped
      if (uns) r = bn == "arith.maxui" ? RedOp::Max : RedOp::Min;
      if (r) {
        VType it = type_of(ins[0]);
        if (*r == RedOp::Sum && it.elem == Scalar::I1) r = RedOp::Xor;  // i1 arithmetic is modulo 2
        if (uns && it.elem == Scalar::I1) user_error(cur_loc_, "an unsigned max/min of i1 values is not supported yet");
        ExprP e;
        if ((bn == "arith.maxnumf" || bn == "arith.minnumf") && is_float(it.elem)) {  // NaN lanes left out
          ExprP x = binder()("num_x", use(ins[0]));
          e = make_reduce(*r, nan_as_inf(x, it.elem, *r == RedOp::Max), axis, cur_loc_);
          e = nan_where_none(e, x, it.elem, [&](ExprP v) { return make_reduce(RedOp::Sum, std::move(v), axis, cur_loc_); });
        } else {
          e = uns ? flip_sign(make_reduce(*r, flip_sign(use(ins[0]), it.elem, cur_loc_), axis, cur_loc_), it.elem, cur_loc_)
                  : make_reduce(*r, use(ins[0]), axis, cur_loc_);
        }
        if (*r == RedOp::Xor && it.elem == Scalar::I1) e = make_cast(e, Scalar::I1, cur_loc_);
        // the tile IR sums floats in f32 and i1/i32 in i32: convert back to the TTIR type
        if (*r == RedOp::Sum && it.elem != Scalar::F32 && it.elem != Scalar::F64 && it.elem != Scalar::I32 && it.elem != Scalar::I64)
          e = make_cast(e, rtypes.at(0).elem, cur_loc_);
        define(op.results.at(0), e, rtypes.at(0), true, cur_loc_);
        return;
      }
    }
    // argmax / argmin: (values, indices) with a combine comparing the values and keeping the index
    if (ins.size() == 2 && op.results.size() == 2) {
      std::string kind;
      bool uns = false;  // values compared as unsigned integers (cmpi ugt ...)
      argminmax_combine(body, b, kind, uns);
      if (!kind.empty() && !is_axis_range(ins[1], axis)) kind.clear();  // the general pair combine below
      if (!kind.empty()) {
        std::string xv = var_name(ins[0] + "_red");
        Scalar et = type_of(ins[0]).elem;
        // (i1 values compared as unsigned: true above false, as 0/1 in i32)
        const bool b1 = uns && et == Scalar::I1;
        if (b1) uns = false;
        // (float values: NaN lanes are left out, as the GPU's ordered compares leave them)
        ExprP xin = b1 ? make_cast(use(ins[0]), Scalar::I32, cur_loc_) : uns ? flip_sign(use(ins[0]), et, cur_loc_) : use(ins[0]);
        if (is_float(et)) xin = nan_as_inf(binder()("num_x", xin), et, kind == "max");
        out_->push_back(make_assign(xv, xin, cur_loc_));
        use(ins[1]);  // the indices: the axis positions (tl.argmax builds them with arange)
        ExprP val = make_reduce(kind == "max" ? RedOp::Max : RedOp::Min, make_var(xv, cur_loc_), axis, cur_loc_);
        if (uns) val = flip_sign(val, et, cur_loc_);
        if (b1) val = make_cast(val, Scalar::I1, cur_loc_);
        ExprP idx = make_reduce(kind == "max" ? RedOp::Argmax : RedOp::Argmin, make_var(xv, cur_loc_), axis, cur_loc_);
        if (rtypes.at(1).elem != Scalar::I32) idx = make_cast(idx, rtypes[1].elem, cur_loc_);
        define(op.results[0], val, rtypes[0], true, cur_loc_);
        define(op.results[1], idx, rtypes[1], true, cur_loc_);
        return;
      }
    }
    if (ins.size() == 1 && op.results.size() == 1) {  // any other combine function of one operand
      ExprP fn = combine_region(b, "tt.reduce.return");
      ExprP r = make_reduce(RedOp::Fn, use(ins[0]), axis, cur_loc_);
      r->fn = fn;
      define(op.results.at(0), r, rtypes.at(0), true, cur_loc_);
      return;
    }
    if (ins.size() == 2 && op.results.size() == 2) {
      emit_pair_combine(op, ins, b, "tt.reduce.return", rtypes, [&](ExprP x) { return make_reduce(RedOp::Fn, x, axis, cur_loc_); });
      return;
    }
    emit_n_combine(op, ins, b, "tt.reduce.return", rtypes);
  }

  // Whether a reduce's pair combine over (a, ai, b, bi) is exactly one of Triton's argmax / argmin
  // combines: `a > b` (or `<`) picking (a, ai) else (b, bi), optionally with ties to the lower index
  // (`a == b and ai < bi` or-ed in). Any other op or operand (NaN tests, ties to the higher index ...)
  // is a general combine, run as written. kind: "max" / "min" (empty: not one); uns: unsigned values.
  void argminmax_combine(const std::vector<const Op*>& body, const Block& b, std::string& kind, bool& uns) {
    kind.clear();
    if (body.size() != 3 && body.size() != 7) return;
    const std::string &a = b.args.at(0), &ai = b.args.at(1), &bv = b.args.at(2), &bi = b.args.at(3);
    auto operands = [](const Op& o, size_t n, std::string* pred) {
      Cursor oc(o.text, o.text_loc);
      if (pred) {
        *pred = oc.ident();
        oc.expect(",");
      }
      std::vector<std::string> v;
      for (size_t k = 0; k < n; ++k) {
        if (k) oc.expect(",");
        v.push_back(oc.value());
      }
      return v;
    };
    std::string gt, eq, tie, both, cond;
    std::string k;
    int selects = 0;
    for (const Op* o : body) {
      const std::string r = o->results.empty() ? "" : o->results[0];
      if (o->name == "arith.cmpf" || o->name == "arith.cmpi") {
        std::string pred;
        std::vector<std::string> v = operands(*o, 2, &pred);
        if (v[0] == a && v[1] == bv) {
          if (pred == "oeq" || pred == "eq") eq = r;
          else if (pred == "ogt" || pred == "sgt" || pred == "ugt") gt = r, k = "max", uns = pred == "ugt";
          else if (pred == "olt" || pred == "slt" || pred == "ult") gt = r, k = "min", uns = pred == "ult";
          else return;
        } else if (v[0] == ai && v[1] == bi && pred == "slt") {
          tie = r;
        } else {
          return;
        }
      } else if (o->name == "arith.andi" || o->name == "arith.ori") {
        std::vector<std::string> v = operands(*o, 2, nullptr);
        std::sort(v.begin(), v.end());
        if (o->name == "arith.andi") {
          std::vector<std::string> want{eq, tie};
          std::sort(want.begin(), want.end());
          if (eq.empty() || tie.empty() || v != want) return;
          both = r;
        } else {
          std::vector<std::string> want{gt, both};
          std::sort(want.begin(), want.end());
          if (gt.empty() || both.empty() || v != want) return;
          cond = r;
        }
      } else if (o->name == "arith.select") {
        std::vector<std::string> v = operands(*o, 3, nullptr);
        const std::string& c = body.size() == 3 ? gt : cond;
        if (c.empty() || v[0] != c || !((v[1] == a && v[2] == bv) || (v[1] == ai && v[2] == bi))) return;
        ++selects;
      } else {
        return;
      }
    }
    if (selects == 2 && !gt.empty() && (body.size() == 3 || !cond.empty())) kind = k;
  }

  // maxNum / minNum over an axis (Triton's tl.max, tl.min, tl.cummax ... with propagate_nan NONE, and
  // its argmax / argmin): NaN lanes are left out, as -inf for a max and +inf for a min; a position
  // whose lanes are all NaN (so far, for a scan) is NaN. `x` is a variable (read twice).
  ExprP nan_as_inf(ExprP x, Scalar et, bool max) {
    ExprP inf = typed_const(max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity(), 0, et);
    return make_where(make_binary(BinOp::Ne, clone_expr(x), clone_expr(x), cur_loc_), inf, clone_expr(x), cur_loc_);
  }
  ExprP nan_where_none(ExprP r, const ExprP& x, Scalar et, const std::function<ExprP(ExprP)>& count) {
    ExprP valid = make_cast(make_binary(BinOp::Eq, clone_expr(x), clone_expr(x), cur_loc_), Scalar::I32, cur_loc_);
    ExprP none = make_binary(BinOp::Eq, count(valid), make_const_int(0, cur_loc_), cur_loc_);
    return make_where(none, typed_const(std::numeric_limits<double>::quiet_NaN(), 0, et), r, cur_loc_);
  }

  // Unsigned integer ops, on the IR's signed types (ir/Unsigned.h).
  BindFn binder() {
    return [this](const std::string& base, ExprP v) {
      std::string n = var_name(base);
      out_->push_back(make_assign(n, std::move(v), cur_loc_));
      return make_var(n, cur_loc_);
    };
  }
  // MLIR's integer arithmetic on i1 is arithmetic modulo 2, and signed i1 `true` is -1: a product is an
  // `and` (Triton's `mask_a[:, None] * mask_b[None, :]`), a sum or a difference an `xor`, the signed max
  // an `and`, the signed min an `or`, the unsigned max an `or`, the unsigned min an `and`. The IR's
  // arithmetic on i1 promotes to i32 as Python's does, so these are spelled as the logical ops.
  BinOp i1_binop(const std::string& n) {
    if (n == "arith.muli" || n == "arith.andi" || n == "arith.maxsi" || n == "arith.minui") return BinOp::And;
    if (n == "arith.addi" || n == "arith.subi" || n == "arith.xori") return BinOp::Xor;
    if (n == "arith.ori" || n == "arith.minsi" || n == "arith.maxui") return BinOp::Or;
    user_error(cur_loc_, "'" + n + "' on i1 values is not supported yet");
  }
  void emit_unsigned(const Op& op, const std::string& n, Cursor& c) {
    std::vector<std::string> v;
    while (c.peek_value()) {
      v.push_back(c.value());
      if (!c.eat(",")) break;
    }
    c.skip_to(':');
    c.expect(":");
    VType t = vtype(c.type(), op.text_loc);
    if (v.size() != 2) c.fail("two operands");
    if (t.elem == Scalar::I1 && n != "arith.maxui" && n != "arith.minui") user_error(cur_loc_, "unsigned ops on i1 are not supported");
    std::vector<ExprP> ab = elementwise(v, t.shape);
    if (t.elem == Scalar::I1) {
      define(op.results.at(0), make_binary(i1_binop(n), ab[0], ab[1], cur_loc_), t, true, cur_loc_);
      return;
    }
    if (n == "arith.divui" || n == "arith.remui") ab[1] = guard_divisor(v[1], ab[1], t);
    UnsignedOp u = n == "arith.shrui" ? UnsignedOp::Shr : n == "arith.divui" ? UnsignedOp::Div : n == "arith.remui" ? UnsignedOp::Rem
                 : n == "arith.maxui" ? UnsignedOp::Max : n == "arith.minui" ? UnsignedOp::Min : UnsignedOp::MulHi;
    define(op.results.at(0), unsigned_binary(u, ab[0], ab[1], t.elem, cur_loc_, binder()), t, true, cur_loc_);
  }

  // ---- split and join, with the IR's elementwise ops and reductions ----
  struct LazyPerm {
    std::string src;       // the variable holding the tile before the permutation
    Shape src_shape;
    std::vector<int> order;
  };
  // arange(0, 2) laid along `axis` of a rank-`rank` tile
  ExprP index_along(int axis, int rank) {
    ExprP idx = make_arange(make_const_int(0, cur_loc_), make_const_int(2, cur_loc_), cur_loc_);
    for (int b = 0; b < rank; ++b)
      if (b != axis) idx = make_expand_dims(idx, b < axis ? 0 : b, cur_loc_);
    return idx;
  }
  // %a, %b = tt.split %x : tensor<..x2xT> -> tensor<..xT>: each half is the lane selected along the
  // last axis (ir/Select.h: bit for bit), of the tile before a pending permutation when there is one
  void emit_split(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string v = c.value();
    c.expect(":");
    VType from = vtype(c.type(), op.text_loc);
    c.expect("->");
    VType to = vtype(c.type(), op.text_loc);
    std::string base;
    std::vector<int> order;
    int rank;
    if (auto lp = lazy_perm_.find(v); lp != lazy_perm_.end()) {
      base = lp->second.src;
      order = lp->second.order;
      rank = static_cast<int>(lp->second.src_shape.size());
    } else {
      hold(v);
      Value& val = lookup(v);
      if (val.expr) {
        base = var_name(v + "_split");
        out_->push_back(make_assign(base, use(v), cur_loc_));
      } else {
        base = val.var;
        consume(v);
      }
      rank = static_cast<int>(from.shape.size());
      for (int i = 0; i < rank; ++i) order.push_back(i);
    }
    int axis = order.back();  // the axis of the source that becomes the last one
    std::vector<int> rest(order.begin(), order.end() - 1);
    std::vector<int> sorted = rest;
    std::sort(sorted.begin(), sorted.end());
    bool transpose = rest != sorted;
    if (transpose && rest.size() != 2) user_error(cur_loc_, "this permutation before tl.split is not supported yet");
    for (size_t h = 0; h < 2 && h < op.results.size(); ++h) {
      ExprP mask = make_binary(BinOp::Eq, index_along(axis, rank), make_const_int(static_cast<int64_t>(h), cur_loc_), cur_loc_);
      ExprP e = select_lane(mask, make_var(base, cur_loc_), axis, to.elem, cur_loc_);
      if (transpose) e = make_trans(e, cur_loc_);
      define(op.results[h], e, to, true, cur_loc_);
    }
  }
  // ---- tl.dot_scaled (ir/Scaled.h) ----
  // %d = tt.dot_scaled %a [scale %sa], %b [scale %sb], %c lhs = F rhs = F {fastMath = .., lhs_k_pack = ..}
  //        : A[, SA] * B[, SB] -> D
  void emit_dot_scaled(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string a = c.value(), sa, b, sb;
    if (c.eat("scale")) sa = c.value();
    c.expect(",");
    b = c.value();
    if (c.eat("scale")) sb = c.value();
    c.expect(",");
    std::string acc = c.value();
    c.expect("lhs");
    c.expect("=");
    std::string lf = c.ident();
    c.expect("rhs");
    c.expect("=");
    std::string rf = c.ident();
    std::string attrs = c.peek("{") ? c.balanced('{', '}') : "";
    std::string r = c.rest();
    VType t = vtype(trim_copy(r.substr(r.rfind("->") + 2)), op.text_loc);
    if (t.elem != Scalar::F32) user_error(cur_loc_, std::string("tl.dot_scaled with a ") + scalar_name(t.elem) + " result is not supported (f32 is)");
    std::vector<std::string> reads = {a, sa, b, sb, acc};
    for (const std::string& s : reads)
      if (!s.empty() && std::count(reads.begin(), reads.end(), s) > 1) hold(s);  // a value this op reads twice
    auto side = [&](const std::string& v, const std::string& sc, const std::string& fmt, bool k_pack) {
      ScaledOperand o;
      o.elem = type_of(v).elem;
      o.shape = type_of(v).shape;
      o.format = fmt;
      o.k_pack = k_pack;
      o.value = use(v);
      if (!sc.empty()) {
        o.scale_elem = type_of(sc).elem;
        o.scale_shape = type_of(sc).shape;
        o.scale = use(sc);
      }
      return o;
    };
    ScaledOperand x = side(a, sa, lf, attrs.find("lhs_k_pack = false") == std::string::npos);
    ScaledOperand y = side(b, sb, rf, attrs.find("rhs_k_pack = false") == std::string::npos);
    define(op.results.at(0), scaled_dot(x, y, use(acc), cur_loc_, binder()), t, true, cur_loc_);
  }

  // %j = tt.join %a, %b : tensor<..xT> -> tensor<..x2xT>
  void emit_join(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string a = c.value();
    c.expect(",");
    std::string b = c.value();
    c.expect(":");
    c.type();
    c.expect("->");
    VType to = vtype(c.type(), op.text_loc);
    int rank = static_cast<int>(to.shape.size());
    if (rank > kMaxRank) user_error(cur_loc_, "tl.join gives a tile of rank " + std::to_string(rank) + " (tiles have at most " + std::to_string(kMaxRank) + " dimensions)");
    if (a == b) hold(a);  // used twice
    ExprP ea = make_expand_dims(use(a), rank - 1, cur_loc_), eb = make_expand_dims(use(b), rank - 1, cur_loc_);
    ExprP first = make_binary(BinOp::Eq, index_along(rank - 1, rank), make_const_int(0, cur_loc_), cur_loc_);
    ExprP e = make_where(first, ea, eb, cur_loc_);
    define(op.results.at(0), make_broadcast(e, dims(to.shape), cur_loc_), to, true, cur_loc_);
  }

  // ---- gather, histogram (the IR's own ops) and cat (the IR's elementwise ops) ----
  // arange(0, n) laid along `axis` of a rank-`rank` tile
  ExprP iota_along(int64_t n, int axis, int rank) {
    ExprP idx = make_arange(make_const_int(0, cur_loc_), make_const_int(n, cur_loc_), cur_loc_);
    for (int b = 0; b < rank; ++b)
      if (b != axis) idx = make_expand_dims(idx, b < axis ? 0 : b, cur_loc_);
    return idx;
  }
  void check_size(const Shape& s, const std::string& what) {
    if (static_cast<int>(s.size()) > kMaxRank || shape_numel(s) > kMaxTileElems)
      user_error(cur_loc_, what + " needs a tile of " + shape_str(s) + " (at most " + std::to_string(kMaxRank) +
                               " dimensions and 2^20 elements): use smaller blocks");
  }
  // %g = tt.gather %src[%idx] {axis = A : i32} : (tensor<S>, tensor<I>) -> tensor<I>: the IR's gather
  // (the source lane the index selects along A); an index outside [0, S[A]) is a located fault (an
  // assert before it), as it would read out of the tile.
  void emit_gather(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string src = c.value();
    c.expect("[");
    std::string idx = c.value();
    c.expect("]");
    int axis = static_cast<int>(attr_int(c.balanced('{', '}'), "axis"));
    c.expect(":");
    std::string types = c.balanced('(', ')');
    std::string inner = types.substr(1, types.size() - 2);
    Cursor tc(inner, op.text_loc);
    VType st = vtype(tc.type(), op.text_loc);
    tc.expect(",");
    VType it = vtype(tc.type(), op.text_loc);
    c.expect("->");
    VType to = vtype(c.type(), op.text_loc);
    int rank = static_cast<int>(st.shape.size());
    if (axis < 0 || axis >= rank || it.shape.size() != st.shape.size()) user_error(cur_loc_, "malformed TTIR: tt.gather's axis or index rank");
    int64_t n = st.shape[static_cast<size_t>(axis)];
    hold(idx);
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assert;
    s->loc = cur_loc_;
    s->text = "tl.gather: an index is outside [0, " + std::to_string(n) + ") of the gathered axis";
    s->args = {make_binary(BinOp::And, make_binary(BinOp::Ge, use(idx), make_const_int(0, cur_loc_), cur_loc_),
                           make_binary(BinOp::Lt, use(idx), make_const_int(n, cur_loc_), cur_loc_), cur_loc_)};
    out_->push_back(s);
    ExprP index = use(idx);
    if (it.elem == Scalar::I1) index = make_cast(index, Scalar::I32, cur_loc_);
    define(op.results.at(0), make_gather(use(src), index, axis, cur_loc_), to, true, cur_loc_);
  }
  // %h = tt.histogram %x[, %mask] : tensor<NxT> -> tensor<Bxi32>: the IR's histogram (bin b counts the
  // unmasked lanes equal to b; values outside [0, B) are dropped, as on the GPU). TTIR's integers are
  // signless: an 8- or 16-bit input is read as signed (Triton 3.9 admits only 32-bit inputs, where a
  // u32 value of 2^31 or more is dropped either way).
  void emit_histogram(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string x = c.value(), mask;
    if (c.eat(",")) mask = c.value();
    c.expect(":");
    VType xt = vtype(c.type(), op.text_loc);
    c.expect("->");
    VType to = vtype(c.type(), op.text_loc);
    if (xt.shape.size() != 1 || to.shape.size() != 1) user_error(cur_loc_, "malformed TTIR: tt.histogram takes and gives 1-D tiles");
    ExprP xv = use(x);
    if (xt.elem == Scalar::I1) xv = make_cast(xv, Scalar::I32, cur_loc_);
    ExprP h = make_histogram(xv, make_const_int(to.shape[0], cur_loc_), mask.empty() ? nullptr : use(mask), cur_loc_);
    define(op.results.at(0), h, to, true, cur_loc_);
  }
  // %c = tt.cat %a, %b : tensor<S> -> tensor<2S0 x ..>: a's lanes, then b's, along the first axis (the
  // order Triton's interpreter gives; can_reorder=True lets the GPU give another).
  void emit_cat(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string a = c.value();
    c.expect(",");
    std::string b = c.value();
    c.expect(":");
    VType from = vtype(c.type(), op.text_loc);
    c.expect("->");
    VType to = vtype(c.type(), op.text_loc);
    int rank = static_cast<int>(from.shape.size());
    Shape two = from.shape;
    two.insert(two.begin(), 2);
    check_size(two, "tl.cat");
    if (a == b) hold(a);  // used twice
    ExprP first = make_binary(BinOp::Eq, iota_along(2, 0, rank + 1), make_const_int(0, cur_loc_), cur_loc_);
    ExprP e = make_where(first, make_expand_dims(use(a), 0, cur_loc_), make_expand_dims(use(b), 0, cur_loc_), cur_loc_);
    define(op.results.at(0), make_reshape(make_broadcast(e, dims(two), cur_loc_), dims(to.shape), cur_loc_), to, true, cur_loc_);
  }

  // ---- tensor descriptors: lowered to pointer arithmetic and masked loads and stores ----
  struct Desc {
    std::string base;                            // the variable holding the base pointer
    std::vector<std::string> shape, strides;     // variables holding the extents and strides
    Shape block;
    Scalar elem = Scalar::F32;
    bool nan_padding = false;  // padding_option="nan" (`{padding = 2 : i32}`): lanes outside read NaN
  };
  // "!tt.tensordesc<16x32xf32>" or "!tt.tensordesc<tensor<16x32xf32>>"
  Desc desc_type(const std::string& t) {
    std::string in = t.substr(15, t.size() - 16);
    if (in.rfind("tensor<", 0) != 0) in = "tensor<" + in + ">";
    VType vt = vtype(in, cur_loc_);
    Desc d;
    d.block = vt.shape;
    d.elem = vt.elem;
    return d;
  }
  // %d = tt.make_tensor_descriptor %base, [%s0, %s1], [%t0, %t1] : <f32>, <16x32xf32>
  void emit_make_desc(const Op& op) {
    Cursor c(op.text, op.text_loc);
    std::string base = c.value();
    std::vector<std::string> shp, str;
    c.expect(",");
    c.expect("[");
    while (!c.eat("]")) {
      shp.push_back(c.value());
      c.eat(",");
    }
    c.expect(",");
    c.expect("[");
    while (!c.eat("]")) {
      str.push_back(c.value());
      c.eat(",");
    }
    bool nan_padding = false;
    if (c.peek("{")) {  // {padding = 2 : i32}: Triton's PADDING_OPTION.PAD_NAN (zero padding prints nothing)
      std::string attrs = c.balanced('{', '}');
      size_t at = attrs.find("padding");
      if (at != std::string::npos) {
        size_t eq = attrs.find('=', at);
        int64_t v = eq == std::string::npos ? -1 : std::atoll(attrs.c_str() + eq + 1);
        if (v != 1 && v != 2) user_error(cur_loc_, "tensor descriptor padding " + attrs + " is not supported yet");
        nan_padding = v == 2;
      }
    }
    c.expect(":");
    std::string r = c.rest();
    size_t comma = r.rfind(", <");
    if (comma == std::string::npos) c.fail("the descriptor's block type");
    Desc d = desc_type("!tt.tensordesc<" + r.substr(comma + 3, r.size() - comma - 4) + ">");
    d.nan_padding = nan_padding;
    auto hold = [&](const std::string& ssa) {
      Value& v = lookup(ssa);
      if (!v.expr) {
        consume(ssa);
        return v.var;
      }
      std::string var = var_name(ssa);
      out_->push_back(make_assign(var, use(ssa), cur_loc_));
      return var;
    };
    d.base = hold(base);
    for (const std::string& x : shp) d.shape.push_back(hold(x));
    for (const std::string& x : str) d.strides.push_back(hold(x));
    if (d.shape.size() != d.block.size() || d.strides.size() != d.block.size())
      user_error(cur_loc_, "malformed TTIR: a tensor descriptor's rank differs from its block's");
    descs_[op.results.at(0)] = d;
  }
  // The descriptor a descriptor op reads (its first operand).
  const Desc& desc_of(Cursor& c) {
    auto it = descs_.find(c.value());
    if (it == descs_.end()) user_error(cur_loc_, "a tensor descriptor that is not made in this kernel or passed to it is not supported yet");
    return it->second;
  }
  // A descriptor access's offset, read by its pointer and its mask: a computed one is held in a variable.
  ExprP desc_offset(const std::string& ssa, const char* name) {
    ExprP e = use(ssa);
    if (e->kind == ExprKind::Var || e->kind == ExprKind::Const) return e;
    std::string v = var_name(name);
    out_->push_back(make_assign(v, e, cur_loc_));
    return make_var(v, cur_loc_);
  }
  // i64 off + arange(0, n): the indices of a block along one axis.
  ExprP desc_range(const ExprP& off, int64_t n) {
    return make_binary(BinOp::Add, make_cast(clone_expr(off), Scalar::I64, cur_loc_),
                       make_cast(make_arange(make_const_int(0, cur_loc_), make_const_int(n, cur_loc_), cur_loc_), Scalar::I64, cur_loc_), cur_loc_);
  }
  // 0 <= i < extent (i64 indices i, i evaluated twice): the lanes a descriptor access reads or writes.
  ExprP desc_within(const ExprP& i, const std::string& extent) {
    return make_binary(BinOp::And, make_binary(BinOp::Ge, i, make_const_int(0, cur_loc_), cur_loc_),
                       make_binary(BinOp::Lt, clone_expr(i), make_cast(make_var(extent, cur_loc_), Scalar::I64, cur_loc_), cur_loc_), cur_loc_);
  }

  // tt.descriptor_load %d[%i, %j] : !tt.tensordesc<..> -> tensor<..>; tt.descriptor_store %d[%i, %j], %v : ...
  // The block at the offsets: lanes outside [0, shape) read 0 and are not written (the descriptor's
  // zero padding, as a TMA copy does).
  void emit_desc_access(const Op& op) {
    Cursor c(op.text, op.text_loc);
    const Desc& d = desc_of(c);
    c.expect("[");
    std::vector<std::string> offs;
    while (!c.eat("]")) {
      offs.push_back(c.value());
      c.eat(",");
    }
    if (offs.size() != d.block.size()) user_error(cur_loc_, "malformed TTIR: descriptor offsets differ from its rank");
    std::string val;
    if (op.name == "tt.descriptor_store") {
      c.expect(",");
      val = c.value();
    }
    int rank = static_cast<int>(d.block.size());
    ExprP ptr, mask;
    for (int a = 0; a < rank; ++a) {
      // offset + arange along axis a, as an i64 column/row of the block's rank: written out where it
      // is used (pointer and mask), not held in a variable, so the backend computes it in the layout
      // of the access itself (a variable reading a loop-carried offset would be moved between layouts).
      ExprP off = desc_offset(offs[a], "desc_off");
      auto idx = [&] {
        ExprP i = desc_range(off, d.block[a]);
        for (int b = 0; b < rank; ++b)
          if (b != a) i = make_expand_dims(i, b < a ? 0 : b, cur_loc_);
        return i;
      };
      // Triton requires a descriptor's last stride to be 1 (the host TensorDescriptor asserts it,
      // tl.make_tensor_descriptor raises otherwise): the last axis is indexed as is, so the pointer is
      // contiguous along it and its loads and stores can be vectors.
      ExprP term = a == rank - 1 ? idx() : make_binary(BinOp::Mul, idx(), make_cast(make_var(d.strides[a], cur_loc_), Scalar::I64, cur_loc_), cur_loc_);
      ptr = ptr ? make_binary(BinOp::Add, ptr, term, cur_loc_) : term;
      ExprP in = desc_within(idx(), d.shape[a]);
      mask = mask ? make_binary(BinOp::And, mask, in, cur_loc_) : in;
    }
    ExprP p = make_binary(BinOp::Add, make_var(d.base, cur_loc_), make_broadcast(ptr, dims(d.block), cur_loc_), cur_loc_);
    ExprP m = make_broadcast(mask, dims(d.block), cur_loc_);
    // The value's shape may drop the block's unit dimensions (Triton folds a tl.reshape into the
    // access: `!tt.tensordesc<1x32x32xf32> -> tensor<32x32xf32>`): reshaped to and from the block.
    if (op.name == "tt.descriptor_store") {
      ExprP v = use(val);
      if (type_of(val).shape != d.block) v = make_reshape(v, dims(d.block), cur_loc_);
      out_->push_back(make_store(p, v, m, cur_loc_));
      return;
    }
    std::string rest = c.rest();
    size_t arrow = rest.rfind("->");
    VType t{d.elem, false, d.block};
    if (arrow != std::string::npos) t.shape = vtype(trim_copy(rest.substr(arrow + 2)), op.text_loc).shape;
    ExprP ld = make_load(p, m, d.nan_padding ? make_const_float(std::nan(""), cur_loc_) : nullptr, cur_loc_);
    if (t.shape != d.block) {
      int64_t nb = 1, nt = 1;
      for (int64_t x : d.block) nb *= x;
      for (int64_t x : t.shape) nt *= x;
      if (nb != nt) user_error(cur_loc_, "malformed TTIR: a descriptor load's result has another number of elements than its block");
      ld = make_reshape(ld, dims(t.shape), cur_loc_);
    }
    define(op.results.at(0), ld, t, false, cur_loc_);
  }

  // tt.descriptor_gather %d[%rows, %y] : (..) -> tensor<NxBKx..>; tt.descriptor_scatter %d[%rows, %y], %v : ..
  // (`desc.gather(rows, y)` / `desc.scatter(v, rows, y)`, a descriptor of block 1xBK): row rows[i],
  // columns y .. y+BK-1 of the 2-D descriptor, lanes outside the descriptor's shape read 0 and are not
  // written, as descriptor_load's.
  void emit_desc_rows(const Op& op) {
    Cursor c(op.text, op.text_loc);
    const Desc& d = desc_of(c);
    bool scatter = op.name == "tt.descriptor_scatter";
    if (d.block.size() != 2 || d.block[0] != 1)
      user_error(cur_loc_, "malformed TTIR: " + op.name + " of a descriptor whose block is not 1xN");
    c.expect("[");
    std::string rows_ssa = c.value();
    c.expect(",");
    std::string y_ssa = c.value();
    c.expect("]");
    std::string val;
    if (scatter) {
      c.expect(",");
      val = c.value();
    }
    const VType& rt = type_of(rows_ssa);
    if (rt.shape.size() != 1) user_error(cur_loc_, "malformed TTIR: " + op.name + "'s row offsets are not a 1-D tensor");
    int64_t nrows = rt.shape[0], bk = d.block[1];
    Shape shape{nrows, bk};
    ExprP rows = desc_offset(rows_ssa, "desc_rows"), y = desc_offset(y_ssa, "desc_off");
    auto row = [&] { return make_expand_dims(make_cast(clone_expr(rows), Scalar::I64, cur_loc_), 1, cur_loc_); };
    auto col = [&] { return make_expand_dims(desc_range(y, bk), 0, cur_loc_); };
    // the last stride is 1 (Triton requires it of a descriptor), as in emit_desc_access
    ExprP off = make_binary(BinOp::Add, make_binary(BinOp::Mul, row(), make_cast(make_var(d.strides[0], cur_loc_), Scalar::I64, cur_loc_), cur_loc_),
                            col(), cur_loc_);
    ExprP p = make_binary(BinOp::Add, make_var(d.base, cur_loc_), make_broadcast(off, dims(shape), cur_loc_), cur_loc_);
    ExprP m = make_broadcast(make_binary(BinOp::And, desc_within(row(), d.shape[0]), desc_within(col(), d.shape[1]), cur_loc_), dims(shape), cur_loc_);
    if (scatter) {
      if (type_of(val).shape != shape) user_error(cur_loc_, "malformed TTIR: tt.descriptor_scatter's value is not rows x block columns");
      out_->push_back(make_store(p, use(val), m, cur_loc_));
      return;
    }
    std::string rest = c.rest();
    size_t arrow = rest.rfind("->");
    VType t{d.elem, false, shape};
    if (arrow != std::string::npos && vtype(trim_copy(rest.substr(arrow + 2)), op.text_loc).shape != shape)
      user_error(cur_loc_, "malformed TTIR: tt.descriptor_gather's result is not rows x block columns");
    define(op.results.at(0), make_load(p, m, nullptr, cur_loc_), t, false, cur_loc_);
  }

  // Whether value `ssa` is arange(0, n) along `axis` (made by tt.make_range, maybe expanded and
  // broadcast), as tl.argmax/argmin build their indices.
  bool is_axis_range(const std::string& ssa, int axis) {
    std::string v = ssa;
    int rank = static_cast<int>(type_of(ssa).shape.size());
    int pos = axis < 0 ? axis + rank : axis;  // the axis the range must lie along
    for (int depth = 0; depth < 8; ++depth) {
      auto it = def_op_.find(v);
      if (it == def_op_.end()) return false;
      const Op& d = *it->second;
      Cursor c(d.text, d.text_loc);
      if (d.name == "tt.make_range") return d.text.find("start = 0 ") != std::string::npos && pos == 0;
      if (d.name == "tt.broadcast") {
        v = c.value();
        continue;
      }
      if (d.name == "tt.expand_dims") {
        v = c.value();
        int ax = static_cast<int>(attr_int(c.balanced('{', '}'), "axis"));
        if (ax == pos) return false;
        if (ax < pos) --pos;
        continue;
      }
      return false;
    }
    return false;
  }

  // tt.call @f(%a, ...) : (T...) -> R: the callee's body inlined
  void emit_call(const Op& op) {
    Cursor c(op.text, op.text_loc);
    c.expect("@");
    std::string callee = c.peek("\"") ? c.string_lit() : c.ident();
    c.expect("(");
    std::vector<std::string> args;
    while (!c.eat(")")) {
      args.push_back(c.value());
      c.eat(",");
    }
    auto it = funcs_.find(callee);
    if (it == funcs_.end()) user_error(cur_loc_, "malformed TTIR: no function @" + callee);
    if (call_depth_ > 64) user_error(cur_loc_, "calls nested too deeply (recursion is not supported)");
    const Op& f = *it->second;
    const Region& fr = f.regions.at(0);
    // A helper of several blocks (an early `return`): its blocks nested under their branches as the
    // kernel's are (emit_cfg), each tt.return assigning the call's result variables.
    bool cfg = fr.blocks.size() > 1;
    const Block& body = fr.blocks.at(0);
    std::vector<std::pair<std::string, std::string>> params = func_args(f);
    std::vector<Value> vals;
    // tensor descriptors passed in: the callee's parameter names the caller's descriptor (the map is
    // restored after the call; a descriptor the callee returns is kept for the call's result)
    const std::map<std::string, Desc> saved_descs = descs_;
    std::vector<std::pair<std::string, Desc>> desc_args;
    for (size_t i = 0; i < args.size() && i < params.size(); ++i)
      if (auto d = saved_descs.find(args[i]); d != saved_descs.end()) desc_args.push_back({params[i].first, d->second});
    for (size_t i = 0; i < args.size(); ++i) {
      if (saved_descs.count(args[i])) {
        vals.push_back(Value{nullptr, "<desc>", VType{}});
        continue;
      }
      Value& v = lookup(args[i]);
      if (v.expr) {  // materialize: the callee may use its argument several times
        std::string var = var_name(args[i]);
        VType t = v.t;
        out_->push_back(make_assign(var, use(args[i]), cur_loc_));
        vals.push_back(Value{nullptr, var, t});
      } else {
        vals.push_back(Value{nullptr, v.var, v.t});
      }
    }
    // the callee's values live in their own name space
    auto saved_uses = uses_;
    std::string saved_suffix = suffix_;
    suffix_ = "_" + callee.substr(0, 24) + std::to_string(++calls_);
    uses_.clear();
    for (const Block& b : fr.blocks) count_uses(b);
    ++call_depth_;
    std::vector<std::map<std::string, Value>> saved_scopes;
    saved_scopes.swap(scopes_);
    scopes_.push_back({});
    for (size_t i = 0; i < params.size() && i < vals.size(); ++i)
      if (vals[i].var != "<desc>") bind(params[i].first, vals[i]);
    for (const auto& [name, d] : desc_args) descs_[name] = d;
    returned_.clear();
    std::vector<Value> rets;
    if (cfg) {
      RetFrame frame;
      frame.depth = call_depth_;
      size_t arrow = op.text.rfind("->");
      if (arrow != std::string::npos) {  // the results: `-> T` or `-> (T, U)`
        std::string rt = op.text.substr(arrow + 2);
        Cursor rc(rt, op.text_loc);
        bool list = rc.eat("(");
        while (!(list ? rc.eat(")") : rc.at_end())) {
          VType t = vtype(rc.type(), op.text_loc);
          std::string v = var_name(op.results.size() > frame.vars.size() ? op.results[frame.vars.size()] : "callres");
          out_->push_back(make_assign(v, zero_of(t), cur_loc_));
          frame.vars.push_back(v);
          frame.types.push_back(t);
          if (!rc.eat(",") && !list) break;
        }
      }
      ret_frames_.push_back(frame);
      const Region* saved_region = region_;
      region_ = &fr;
      emit_cfg(body, {}, 0);
      region_ = saved_region;
      for (size_t i = 0; i < frame.vars.size(); ++i) rets.push_back(Value{nullptr, frame.vars[i], frame.types[i]});
      ret_frames_.pop_back();
      returned_.clear();
    } else {
      local_.push_back(local_uses(body));
      for (const Op& o : body.ops) emit(o);
      local_.pop_back();
    }
    std::vector<std::pair<size_t, Desc>> desc_rets;
    for (const std::string& r : returned_) {
      if (auto d = descs_.find(r); d != descs_.end()) {
        desc_rets.push_back({rets.size(), d->second});
        rets.push_back(Value{nullptr, "<desc>", VType{}});
        continue;
      }
      Value& v = lookup(r);
      if (v.expr) {
        std::string var = var_name(r);
        VType t = v.t;
        out_->push_back(make_assign(var, use(r), cur_loc_));
        rets.push_back(Value{nullptr, var, t});
      } else {
        rets.push_back(v);
      }
    }
    scopes_.swap(saved_scopes);
    --call_depth_;
    uses_ = saved_uses;
    suffix_ = saved_suffix;
    cur_loc_ = loc_of(op);
    descs_ = saved_descs;
    for (const auto& [i, d] : desc_rets)
      if (i < op.results.size()) descs_[op.results[i]] = d;
    for (size_t i = 0; i < op.results.size() && i < rets.size(); ++i)
      if (rets[i].var != "<desc>") bind(op.results[i], rets[i]);
  }

  // The pointer a bitcast pointer views (its SSA name), or "" for any other value.
  std::string view_of(const std::string& ssa) {
    const Value& v = lookup(ssa);
    return v.var.rfind("<ptrview>", 0) == 0 ? v.var.substr(9) : std::string();
  }

  static std::string ttir_elem(Scalar s) {
    switch (s) {
      case Scalar::I1: return "i1";
      case Scalar::I8: return "i8";
      case Scalar::I16: return "i16";
      case Scalar::I32: return "i32";
      case Scalar::I64: return "i64";
      case Scalar::F8E4M3: return "f8E4M3FN";
      case Scalar::F8E5M2: return "f8E5M2";
      case Scalar::F8E4B15: return "i8";  // Triton's TTIR holds float8e4b15 as i8
      case Scalar::F8E4B8: return "f8E4M3FNUZ";
      case Scalar::F8E5B16: return "f8E5M2FNUZ";
      case Scalar::F16: return "f16";
      case Scalar::BF16: return "bf16";
      case Scalar::F32: return "f32";
      case Scalar::F64: return "f64";
    }
    return "?";
  }

  // tt.splat/addptr/broadcast/expand_dims/reshape of a bitcast pointer: the same op on the pointer it
  // views (its element type in the op's types), whose result the op's result views in turn.
  void emit_on_view(const Op& op, const std::string& operand, const std::string& src) {
    std::string ve = "!tt.ptr<" + ttir_elem(type_of(operand).elem) + ">";
    std::string se = "!tt.ptr<" + ttir_elem(type_of(src).elem) + ">";
    Op w = op;
    std::string fresh = op.results.at(0) + ".viewed";
    w.results = {fresh};
    w.text = "%" + src + op.text.substr(op.text.find('%' + operand) + operand.size() + 1);
    const int64_t ratio = view_ratio(operand);
    if (ratio > 1 && op.name == "tt.addptr") {  // a wider view steps `ratio` buffer elements per element
      Cursor c(op.text, op.text_loc);
      c.value();
      c.expect(",");
      std::string off = c.value();
      std::string scaled = op.results[0] + ".scaled";
      VType ot = type_of(off);
      uses_[scaled] = 1;
      local_.back()[scaled] = 1;
      define(scaled, make_binary(BinOp::Mul, use(off), int_of(ratio, ot.elem, cur_loc_), cur_loc_), ot, true, cur_loc_);
      size_t at = w.text.find('%' + off, src.size() + 1);
      w.text.replace(at, off.size() + 1, '%' + scaled);
    }
    if (ratio > 1) view_ratio_[op.results[0]] = ratio;
    for (size_t p = w.text.find(ve); p != std::string::npos; p = w.text.find(ve, p + se.size())) w.text.replace(p, ve.size(), se);
    uses_[fresh] = uses_[op.results[0]];
    local_.back()[fresh] = local_.back()[op.results[0]];
    view_ops_.push_back(std::move(w));
    emit(view_ops_.back());
    VType t = type_of(fresh);
    t.elem = type_of(operand).elem;
    bind(op.results[0], Value{nullptr, "<ptrview>" + fresh, t, false});
  }

  // A value read through a pointer view of element type `from` as type `to`: i1 and i8 (bool data is
  // one byte either way) convert (i8 -> i1 is `!= 0`, as Triton's bool store writes 0 or 1); other
  // views are of one width and keep the bits.
  ExprP view_value(ExprP e, Scalar from, Scalar to) {
    if (from == to) return e;
    if (from == Scalar::I1 || to == Scalar::I1) return make_cast(e, to, cur_loc_);
    return make_bitcast(e, to, cur_loc_);
  }

  // How many buffer elements one element of pointer `ssa` spans: > 1 for a wider view (a bitcast from
  // *u8 to *f32 spans 4), 1 otherwise.
  int64_t view_ratio(const std::string& ssa) const {
    auto it = view_ratio_.find(ssa);
    return it == view_ratio_.end() ? 1 : it->second;
  }

  // A load of `ve` values through a wider view of a `be` buffer: each value is `ratio` consecutive
  // buffer elements (its lowest-addressed first: little-endian, as the GPU reads it), each loaded
  // under the mask, so bounds, uninitialized reads and conflicts are checked per buffer element.
  // `undef`: no `other` follows, so the masked-off lanes are undefined (ir/Undefined.h).
  ExprP view_load(ExprP p, ExprP m, Scalar be, Scalar ve, int64_t ratio, bool undef) {
    BindFn bind = binder();
    const int bits = 8 * scalar_bytes(be);
    const Scalar bi = int_of_bits(8 * scalar_bytes(be));
    ExprP pv = bind("view_p", p);
    ExprP mv = m ? bind("view_m", m) : nullptr;
    ExprP acc;
    for (int64_t k = 0; k < ratio; ++k) {
      ExprP part = make_load(make_binary(BinOp::Add, clone_expr(pv), int_of(k, Scalar::I32, cur_loc_), cur_loc_), mv ? clone_expr(mv) : nullptr, nullptr, cur_loc_);
      part->undef_masked = mv && undef;
      if (be != bi) part = make_bitcast(part, bi, cur_loc_);
      part = make_binary(BinOp::And, make_cast(part, Scalar::I64, cur_loc_), int_of((int64_t{1} << bits) - 1, Scalar::I64, cur_loc_), cur_loc_);
      if (k) part = make_binary(BinOp::Shl, part, int_of(bits * k, Scalar::I64, cur_loc_), cur_loc_);
      acc = acc ? make_binary(BinOp::Or, acc, part, cur_loc_) : part;
    }
    const Scalar wi = int_of_bits(8 * scalar_bytes(ve));
    ExprP r = wi == Scalar::I64 ? acc : make_cast(acc, wi, cur_loc_);
    return ve == wi ? r : make_bitcast(r, ve, cur_loc_);
  }

  // A store of `ve` value `val` through a wider view of a `be` buffer: its bytes as `ratio` buffer
  // elements, each stored under the mask.
  void view_store(ExprP p, ExprP val, ExprP m, Scalar be, Scalar ve, int64_t ratio) {
    BindFn bind = binder();
    const int bits = 8 * scalar_bytes(be);
    const Scalar bi = int_of_bits(8 * scalar_bytes(be)), wi = int_of_bits(8 * scalar_bytes(ve));
    ExprP pv = bind("view_p", p);
    ExprP mv = m ? bind("view_m", m) : nullptr;
    ExprP iv = ve == wi ? val : make_bitcast(val, wi, cur_loc_);
    ExprP v64 = bind("view_v", wi == Scalar::I64 ? iv : make_cast(iv, Scalar::I64, cur_loc_));
    for (int64_t k = 0; k < ratio; ++k) {
      ExprP part = k ? make_binary(BinOp::Shr, clone_expr(v64), int_of(bits * k, Scalar::I64, cur_loc_), cur_loc_) : clone_expr(v64);
      part = make_cast(part, bi, cur_loc_);  // wraps to the element's width
      if (be != bi) part = make_bitcast(part, be, cur_loc_);
      out_->push_back(make_store(make_binary(BinOp::Add, clone_expr(pv), int_of(k, Scalar::I32, cur_loc_), cur_loc_), part,
                                 mv ? clone_expr(mv) : nullptr, cur_loc_));
    }
  }

  StmtP ret_stmt() {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Return;
    s->loc = cur_loc_;
    return s;
  }

  struct RetFrame {  // a call being inlined whose helper has several blocks
    int depth = 0;
    std::vector<std::string> vars;
    std::vector<VType> types;
  };
  std::vector<RetFrame> ret_frames_;

  struct Holder {
    std::string ssa;
    VType t;
    size_t depth = 0;
  };
  std::set<std::string> op_consumed_;          // values consume() counted for the op being emitted
  std::map<std::string, Holder> holder_;     // variable -> the value it holds now
  std::deque<Op> view_ops_;  // ops rewritten to act on the pointer a bitcast pointer views (emit_on_view)
  std::map<std::string, int64_t> view_ratio_;  // wider views: buffer elements per element (view_ratio)
  std::map<std::string, int> consumed_;      // uses emitted so far, per value
  std::string cur_name_;                     // the current op's Python variable name
  std::map<std::string, const Op*> def_op_;  // the op defining each value (by SSA name)
  std::map<std::string, Desc> descs_;        // tensor descriptors by SSA name
  std::map<std::string, LazyPerm> lazy_perm_;  // rank-3 permutations waiting for tl.split
  std::map<const Expr*, Shape> bcast_src_;  // the operand shape of each of those broadcasts
  std::set<ExprP> splats_;                   // broadcasts made by tt.splat/tt.broadcast (held: their addresses stay unique)

  const ParsedModule& m_;
  const TtirLaunch& launch_;
  std::map<std::string, const Op*> funcs_;
  std::vector<std::map<std::string, Value>> scopes_;
  std::vector<std::map<std::string, int>> local_;
  std::map<std::string, int> uses_;
  std::set<std::string> used_names_;
  std::vector<StmtP>* out_ = nullptr;
  // An scf.for of the kernel carries `tt.warp_specialize` (tl.range(..., warp_specialize=True)): the
  // kernel's schedule option warp_specialize (Kernel::warp_specialize).
  bool warp_specialize_ = false;
  SourceLoc cur_loc_;
  std::vector<std::string> yielded_, returned_;
  std::string cond_;
  std::string suffix_;
  std::vector<std::string> suffix_stack_;
  int call_depth_ = 0, calls_ = 0;
  const Region* region_ = nullptr;  // the entry function's body (its blocks, for cf branches)
};

}  // namespace

Module lower_ttir(const std::string& text, const std::string& name, const TtirLaunch& launch) {
  int src = Sources::add(name, text);
  ParsedModule m = parse_ttir(src);
  return Lowerer(m, launch).run(name);
}

}  // namespace dtsim
