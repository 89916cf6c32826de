// Schedule lowering: a checked DtProgram -> tile IR. One kernel per compiled Func (plus one per
// materialized intermediate), with the structure of the Decoupled-Triton slides: a 1-D grid decoded
// into per-dim program ids (`map`), block starts (`block`), tile loops (`tensorize`), dot-accumulate
// loops for `rdot`, and fused producers computed inside the consumer's loop nest (`fuse_at`).
//
// Model: every value is a tile over the kernel's *tiled* dims (tile extent > 1) it depends on, laid
// out in one canonical dim order per kernel, so broadcasting is expand_dims + numpy rules. Dims of
// extent 1 are scalar indices. Each dim has one *view* at a time (its current index tile and mask):
// whole-tile dims get it at the kernel top, tiled dims inside their loop.
//
// Carried reductions (FlashAttention's online softmax): a Func defined as a reduction over r and
// fused into its consumer at level r, where r is a loop, is computed inside that loop as a running
// value (a running max, a running sum) carried from one tile of r to the next. Inside the loop its
// final value is not known, so every value derived from it carries a *defect* (struct Defect) that
// says how the value computed in the loop relates to the true one; a sum over r can correct a
// defect that is a factor independent of r (exp(c * (M_final - M_run)) for a running max M: the
// rescale of the accumulator by exp(M_old - M_new) each tile; S_final^c for a running sum S: a
// factor applied once after the loop, which moves `rdot(e / S, C, r)` to `rdot(e, C, r) / S`).
// Any other use is an error at the use.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "frontend/DtAst.h"

namespace dtsim {

namespace {

// How a value computed inside a loop over r relates to its true value, where it depends on
// reductions over r carried across that loop (named by their Func). Empty for every other value.
struct Defect {
  std::map<std::string, double> add;    // true = run + sum c * (M_final - M_run), M a running max
  std::map<std::string, double> scale;  // true = run * prod exp(c * (M_final - M_run))
  std::map<std::string, double> post;   // true = run * prod S_final^c, S a running sum
  bool unit = false;                    // run is the constant 1 (a running sum read in its loop)
  bool empty() const { return add.empty() && scale.empty() && post.empty() && !unit; }
};

struct TV {
  TV() = default;
  TV(ExprP e_, std::vector<std::string> dims_, bool direct = false, Defect d_ = {}) : e(std::move(e_)), dims(std::move(dims_)), direct_load(direct), d(std::move(d_)) {}
  ExprP e;
  std::vector<std::string> dims;  // tiled dims, in layout order
  bool direct_load = false;       // a masked load (masked-off lanes are 0)
  Defect d;
  ExprP unscaled, scale;          // when set: e == unscaled * scale, scale a positive scalar (see fold_scale)
};

// A reduction carried across its consumer's loop over `dim`.
struct Carried {
  RedOp op;
  std::string var;              // max: the running maximum times log2(e); sum: the running sum (final after the loop)
  std::string prev, alpha;      // max: the value before this tile's update; exp(prev - var)
  std::vector<std::string> dims;
  std::string dim;              // the loop it is carried across
  Scalar dtype;
  SourceLoc fuse_loc;
};

void add_into(std::map<std::string, double>& to, const std::map<std::string, double>& from, double sign) {
  for (auto& [k, c] : from) {
    to[k] += sign * c;
    if (to[k] == 0) to.erase(k);
  }
}

struct DimPlan {
  int64_t size = 1;
  bool blocked = false;
  int64_t block = 0;
  int64_t tile = 1;
  bool whole = false;   // no loop: one tile covers the block (or the whole dim)
  bool masked = false;  // partial tiles possible: loads/stores need `d_index < d_SIZE`
  SourceLoc sched_loc;  // the block/tensorize call that shaped it
};

struct FusedVal {
  std::string var;
  std::vector<std::string> dims;
  std::map<std::string, int> view_ids;
  Defect d;
  ExprP unscaled, scale;
};

ExprP var(const std::string& n, SourceLoc l = {}) { return make_var(n, l); }
ExprP cint(int64_t v) { return make_const_int(v); }
ExprP bin(BinOp op, ExprP a, ExprP b, SourceLoc l = {}) { return make_binary(op, std::move(a), std::move(b), l); }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// Whether an IR expression (built by the lowering, not yet typed) is a scalar positive for every size:
// literals > 0, dim sizes, and sqrt, rsqrt, exp, products and quotients of such.
bool positive_scalar(const ExprP& e) {
  switch (e->kind) {
    case ExprKind::Const: return e->is_float ? e->fval > 0 : e->ival > 0;
    case ExprKind::Var: return e->name.size() > 5 && e->name.compare(e->name.size() - 5, 5, "_SIZE") == 0;
    case ExprKind::Cast: return positive_scalar(e->args[0]);
    case ExprKind::Unary: return (e->uop == UnOp::Sqrt || e->uop == UnOp::Rsqrt || e->uop == UnOp::Exp) && positive_scalar(e->args[0]);
    case ExprKind::Binary: return (e->bop == BinOp::Mul || e->bop == BinOp::Div) && positive_scalar(e->args[0]) && positive_scalar(e->args[1]);
    default: return false;
  }
}

constexpr double kLog2E = 1.4426950408889634, kLn2 = 0.6931471805599453;

class KernelLowerer {
 public:
  KernelLowerer(const DtProgram& p, const std::string& out) : p_(p), out_(p.sym(out)) {}

  Kernel run() {
    collect_kernel_funcs();
    collect_dims(out_.name);
    plan_dims();
    causal_bounds();
    k_.name = out_.name + "_kernel";
    k_.loc = out_.def_loc;
    k_.num_warps = out_.sched.num_warps;
    k_.num_stages = out_.sched.num_stages;
    k_.warp_specialize = out_.sched.warp_specialize;
    k_.persistent = out_.sched.persistent;
    k_.persistent_ctas = out_.sched.persistent_ctas;
    k_.cluster = out_.sched.cluster;
    for (const DtSymbol& s : p_.syms)
      if (!(s.kind == DtSymKind::Func && in_kernel_.count(s.name) && s.name != out_.name)) names_.insert(s.name);
    for (auto& d : order_) names_.insert(d + "_SIZE");
    for (auto& d : size_only_) names_.insert(d + "_SIZE");
    blocks_.push_back(&k_.body);
    alg_loc_ = out_.def_loc;
    emit_prologue();
    nest(0);
    finish_params();
    return std::move(k_);
  }

 private:
  const DtProgram& p_;
  const DtSymbol& out_;
  Kernel k_;
  std::set<std::string> in_kernel_;  // Funcs computed by this kernel (the output and its fused producers)
  std::vector<std::string> order_;   // canonical dim order
  std::map<std::string, DimPlan> plan_;
  std::set<std::string> names_;
  std::vector<std::vector<StmtP>*> blocks_;
  std::map<std::string, int> view_;
  std::map<std::string, bool> view_in_loop_;
  std::map<std::string, FusedVal> fused_;
  std::map<std::string, size_t> view_block_;  // the block (index into blocks_) where d's view was opened
  std::map<std::string, size_t> loop_block_;  // the body block of d's loop, while it is being built
  std::map<std::string, Carried> carried_;    // reductions carried across a loop, by Func
  std::set<std::string> reduction_loops_;     // dims whose open loop is a reduction's (not an output dim's)
  std::map<std::string, std::string> causal_; // r -> m: loops over r stop at the end of m's tile (see causal_bounds)
  int next_view_ = 1;
  SourceLoc alg_loc_, sched_loc_;
  std::string cur_func_;
  std::vector<Param> ptr_params_, scalar_params_;

  // ---- setup ----
  const DtSymbol& fuse_root(const DtSymbol* s) const {
    while (!s->sched.fuse_into.empty()) s = &p_.sym(s->sched.fuse_into);
    return *s;
  }
  bool fused_here(const std::string& f) const { return in_kernel_.count(f) && f != out_.name; }

  void collect_kernel_funcs() {
    in_kernel_.insert(out_.name);
    for (const DtSymbol& s : p_.syms)
      if (s.kind == DtSymKind::Func && s.defined && !s.sched.fuse_into.empty() && fuse_root(&s).name == out_.name) in_kernel_.insert(s.name);
  }

  void add_dim(const std::string& d) {
    if (std::find(order_.begin(), order_.end(), d) == order_.end()) order_.push_back(d);
  }
  void collect_dims(const std::string& f) {
    for (auto& d : p_.sym(f).dims) add_dim(d);
    collect_dims_expr(p_.sym(f).def);
  }
  void collect_dims_expr(const DtExprP& e) {
    if (e->kind == DtExprKind::Name && e->is_dim) add_dim(e->name);
    if (e->kind == DtExprKind::Access) {
      if (fused_here(e->name) && std::find(visited_.begin(), visited_.end(), e->name) == visited_.end()) {
        visited_.push_back(e->name);
        collect_dims(e->name);
      }
      for (auto& ix : e->args) add_dim(ix->name);
      if (!fused_here(e->name))  // a buffer's shape needs all of its dims' sizes
        for (auto& d : p_.sym(e->name).dims) size_only_.insert(d);
      return;
    }
    if (e->kind == DtExprKind::Call && dt_is_reduction(e->name)) add_dim(e->args.back()->name);
    if (e->kind == DtExprKind::Call && e->name == "len") add_dim(e->args[0]->name);
    if (e->kind == DtExprKind::Call && (e->name == "reshape" || e->name == "len")) {
      if (e->name == "reshape") collect_dims_expr(e->args[0]);
      return;
    }
    for (auto& a : e->args) collect_dims_expr(a);
  }
  std::vector<std::string> visited_;
  std::set<std::string> size_only_;  // dims of buffers read here (their sizes are parameters)

  void reduced_in_kernel(const DtExprP& e, std::map<std::string, SourceLoc>& out) {
    if (e->kind == DtExprKind::Call && dt_is_reduction(e->name)) out.emplace(e->args.back()->name, e->loc);
    for (auto& a : e->args) reduced_in_kernel(a, out);
  }

  void plan_dims() {
    const DtSchedule& s = out_.sched;
    std::map<std::string, SourceLoc> reduced;
    for (auto& f : in_kernel_) reduced_in_kernel(p_.sym(f).def, reduced);
    for (auto& [d, t] : s.tensorize)
      if (std::find(order_.begin(), order_.end(), d) == order_.end())
        user_error(t.second, "tensorize(" + d + ":" + std::to_string(t.first) + "): '" + d + "' is not a dim of kernel " + out_.name +
                                 " (its dims: " + join(order_) + ")");
    for (auto& d : order_) {
      DimPlan pl;
      pl.size = p_.sym(d).size;
      for (auto& [bd, bn] : s.block)
        if (bd == d) { pl.blocked = true; pl.block = bn; pl.sched_loc = s.block_loc; }
      int64_t t = 1;
      SourceLoc tloc = s.block_loc;
      auto it = s.tensorize.find(d);
      if (it != s.tensorize.end()) { t = it->second.first; tloc = it->second.second; pl.sched_loc = tloc; }
      if (pl.blocked) {
        if (reduced.count(d))
          user_error(s.block_loc, "block(" + d + ":" + std::to_string(pl.block) + "): '" + d + "' is reduced over in this kernel (at line " +
                                      std::to_string(reduced[d].line) + "), so it cannot be blocked");
        if (t == 0) t = pl.block;
        if (t & (t - 1))
          user_error(tloc, "tensorize(" + d + ":0) makes a tile of the block size " + std::to_string(pl.block) + ", which is not a power of two");
        if (t > pl.block || pl.block % t)
          user_error(tloc, "tile extent " + std::to_string(t) + " of '" + d + "' must divide its block size " + std::to_string(pl.block));
        pl.tile = t;
        pl.whole = t == pl.block;
        pl.masked = pl.block > 1;
      } else {
        if (t == 0 || t >= pl.size) { t = dt_next_pow2(pl.size); pl.whole = true; }
        if (t > kMaxTileElems)
          user_error(tloc, "one tile over all of " + d + " (" + d + "_SIZE = " + std::to_string(pl.size) + ") would have " + std::to_string(t) +
                               " elements, more than a tile's 2^20; tensorize " + d + " with a smaller extent so that it loops");
        pl.tile = t;
        pl.masked = t > 1;
      }
      plan_[d] = pl;
    }
  }

  // ---- emission helpers ----
  std::string fresh(const std::string& base) {
    if (!names_.count(base)) { names_.insert(base); return base; }
    for (int i = 2;; ++i) {
      std::string n = base + "_" + std::to_string(i);
      if (!names_.count(n)) { names_.insert(n); return n; }
    }
  }
  void emit(StmtP s) {
    if (!s->loc.valid()) s->loc = alg_loc_;
    if (!s->loc2.valid()) s->loc2 = sched_loc_;
    blocks_.back()->push_back(std::move(s));
  }
  void assign(const std::string& n, ExprP v, SourceLoc loc = {}) { emit(make_assign(n, std::move(v), loc)); }
  // Emits into an enclosing block (index into blocks_): before the loops still being built there.
  void emit_at(size_t block, StmtP st) {
    std::swap(blocks_[block], blocks_.back());
    emit(std::move(st));
    std::swap(blocks_[block], blocks_.back());
  }
  bool tiled(const std::string& d) const { return plan_.at(d).tile > 1; }

  std::vector<std::string> canonical(std::set<std::string> dims) const {
    std::vector<std::string> out;
    for (auto& d : order_)
      if (dims.count(d) && tiled(d)) out.push_back(d);
    return out;
  }

  // `base` (a 1-D tile over dim d, or a scalar) placed at d's position in `layout`.
  ExprP place(ExprP base, const std::string& d, const std::vector<std::string>& layout) {
    if (!tiled(d)) return base;
    size_t pos = std::find(layout.begin(), layout.end(), d) - layout.begin();
    for (size_t i = 0; i < layout.size(); ++i)
      if (i != pos) base = make_expand_dims(base, static_cast<int>(i));
    return base;
  }
  // Inserts unit axes so that tv (a subsequence of `target`) has target's rank.
  ExprP expand_to(const TV& tv, const std::vector<std::string>& target) {
    ExprP e = tv.e;
    for (size_t i = 0; i < target.size(); ++i)
      if (std::find(tv.dims.begin(), tv.dims.end(), target[i]) == tv.dims.end() && !tv.dims.empty()) e = make_expand_dims(e, static_cast<int>(i));
    return e;
  }
  std::vector<std::string> union_dims(const std::vector<const TV*>& tvs) {
    std::set<std::string> all;
    for (auto* t : tvs) all.insert(t->dims.begin(), t->dims.end());
    return canonical(all);
  }
  ExprP broadcast_full(const TV& tv, const std::vector<std::string>& target) {
    if (tv.dims == target) return tv.e;
    ExprP e = expand_to(tv, target);
    std::vector<ExprP> shape;
    for (auto& d : target) shape.push_back(cint(plan_.at(d).tile));
    return make_broadcast(e, shape);
  }
  ExprP mask_of(const std::vector<std::string>& dims, const std::vector<std::string>& layout) {
    ExprP m;
    for (auto& d : dims) {
      if (!plan_.at(d).masked) continue;
      ExprP md = place(var(d + "_mask"), d, layout);
      m = m ? bin(BinOp::And, m, md) : md;
    }
    return m;
  }

  // ---- program ids, views, loops ----
  void emit_prologue() {
    const DtSchedule& s = out_.sched;
    for (auto& d : order_) {
      const DimPlan& pl = plan_[d];
      if (pl.whole && !pl.blocked && pl.tile > 1) {
        auto a = std::make_shared<Stmt>();
        a->kind = StmtKind::Assert;
        a->args = {bin(BinOp::Le, var(d + "_SIZE"), cint(pl.tile))};
        a->text = d + "_SIZE exceeds the tile of " + std::to_string(pl.tile) + " that covers all of " + d + " (give the size when lowering: --arg " + d + "_SIZE=N)";
        a->loc2 = pl.sched_loc;
        emit(a);
      }
    }
    std::vector<ExprP> counts;
    if (!s.block.empty()) emit_pid_decode(counts);
    else counts.push_back(cint(1));
    ExprP g = counts[0];
    for (size_t i = 1; i < counts.size(); ++i) g = bin(BinOp::Mul, g, counts[i]);
    k_.grid = {g};
    sched_loc_ = {};
    for (auto& d : order_)
      if (tiled(d)) { sched_loc_ = plan_[d].sched_loc; assign(d + "_arange", make_arange(cint(0), cint(plan_[d].tile))); }
    for (auto& d : order_)
      if (plan_[d].whole) open_view(d, false);
  }

  void emit_pid_decode(std::vector<ExprP>& grid_counts) {
    const DtSchedule& s = out_.sched;
    sched_loc_ = s.map.empty() ? s.block_loc : s.map_loc;
    names_.insert("pid");
    for (auto& [d, b] : s.block) {
      names_.insert(d + "_BLOCK_COUNT");
      assign(d + "_BLOCK_COUNT", bin(BinOp::Cdiv, var(d + "_SIZE"), cint(b)), s.block_loc);
    }
    // digits, slowest first
    struct Digit { std::string name; ExprP count; ExprP grid_count; };
    std::vector<Digit> digits;
    std::vector<DtMapItem> items = s.map;
    if (items.empty())
      for (auto it = s.block.rbegin(); it != s.block.rend(); ++it) { DtMapItem m; m.dim = it->first; items.push_back(m); }
    std::map<std::string, DtMapItem> splits;  // inner name -> split
    for (auto& it : items) {
      if (!it.factor && splits.count(it.dim)) {
        DtMapItem in = splits[it.dim];
        digits.push_back({it.dim + "_pid", cint(in.factor), cint(in.factor)});
        continue;
      }
      Digit dg{it.dim + "_pid", nullptr, nullptr};
      int64_t b = 1;
      for (auto& [bd, bn] : s.block)
        if (bd == it.dim) b = bn;
      ExprP grid_count = bin(BinOp::Cdiv, var(it.dim + "_SIZE"), cint(b));
      if (it.factor) {
        dg.count = bin(BinOp::Cdiv, var(it.dim + "_BLOCK_COUNT"), cint(it.factor));
        dg.grid_count = bin(BinOp::Cdiv, grid_count, cint(it.factor));
        splits[it.inner] = it;
      } else {
        dg.count = var(it.dim + "_BLOCK_COUNT");
        dg.grid_count = grid_count;
      }
      digits.push_back(dg);
    }
    assign("pid", make_program_id(0));
    for (size_t i = 0; i < digits.size(); ++i) {
      ExprP stride;
      for (size_t j = i + 1; j < digits.size(); ++j) stride = stride ? bin(BinOp::Mul, stride, clone_expr(digits[j].count)) : clone_expr(digits[j].count);
      ExprP v = var("pid");
      if (stride) v = bin(BinOp::FloorDiv, v, stride);
      names_.insert(digits[i].name);
      assign(digits[i].name, bin(BinOp::Mod, v, clone_expr(digits[i].count)));
      grid_counts.push_back(digits[i].grid_count);
    }
    std::map<std::string, std::string> pid_of;
    for (auto& [d, b] : s.block) pid_of[d] = d + "_pid";
    for (auto& [inner, it] : splits) {
      std::string n = fresh(it.dim + "_pid_");
      assign(n, bin(BinOp::Add, bin(BinOp::Mul, var(it.dim + "_pid"), cint(it.factor)), var(inner + "_pid")));
      pid_of[it.dim] = n;
      auto ret = std::make_shared<Stmt>();
      ret->kind = StmtKind::Return;
      emit(make_if(bin(BinOp::Ge, var(n), var(it.dim + "_BLOCK_COUNT")), {ret}, {}, {}));
    }
    for (auto& [d, b] : s.block) {
      names_.insert(d + "_block_start");
      assign(d + "_block_start", bin(BinOp::Mul, var(pid_of[d]), cint(b)), s.block_loc);
    }
  }

  void open_view(const std::string& d, bool in_loop) {
    const DimPlan& pl = plan_.at(d);
    SourceLoc saved = sched_loc_;
    sched_loc_ = pl.sched_loc;
    ExprP idx;
    auto add = [&](ExprP t) { idx = idx ? bin(BinOp::Add, idx, t) : t; };
    if (pl.blocked) add(var(d + "_block_start"));
    if (in_loop) add(var(d + "_iter"));
    if (pl.tile > 1) add(var(d + "_arange"));
    if (!idx) idx = cint(0);
    names_.insert(d + "_index");
    names_.insert(d + "_mask");
    assign(d + "_index", idx);
    if (pl.masked) assign(d + "_mask", bin(BinOp::Lt, var(d + "_index"), var(d + "_SIZE")));
    view_block_[d] = blocks_.size() - 1;
    view_[d] = next_view_++;
    view_in_loop_[d] = in_loop;
    sched_loc_ = saved;
  }

  // Runs `fn` inside `for d_iter in range(...)` with d's view open; scopes views and fused values.
  void with_loop(const std::string& d, SourceLoc loc, const std::function<void()>& fn) {
    const DimPlan& pl = plan_.at(d);
    // A reduction loop bounded at a causal diagonal (causal_bounds): it stops at the end of m's
    // current tile, and runs as two loops: the tiles wholly below the diagonal (every l < every m,
    // and every l < l_SIZE) without the diagonal's mask nor d's, then the tiles that cross it.
    std::string end_var, split_var;
    auto cb = causal_.find(d);
    if (reduction_loops_.count(d) && !pl.blocked && cb != causal_.end() && view_.count(cb->second)) {
      const std::string& m = cb->second;
      const DimPlan& pm = plan_.at(m);
      auto m_start = [&] {
        ExprP b;
        if (pm.blocked) b = var(m + "_block_start");
        if (view_in_loop_.at(m)) b = b ? bin(BinOp::Add, b, var(m + "_iter")) : var(m + "_iter");
        return b ? b : cint(0);
      };
      SourceLoc saved_sched = sched_loc_;
      sched_loc_ = pl.sched_loc;
      end_var = fresh(d + "_end");
      split_var = fresh(d + "_split");
      assign(end_var, bin(BinOp::Min, var(d + "_SIZE"), bin(BinOp::Add, m_start(), cint(pm.tile))), loc);
      ExprP split = bin(BinOp::Min, m_start(), var(d + "_SIZE"));
      if (pl.tile > 1) split = bin(BinOp::Mul, bin(BinOp::FloorDiv, split, cint(pl.tile)), cint(pl.tile));
      assign(split_var, split, loc);
      sched_loc_ = saved_sched;
    }
    auto saved_view = view_;
    auto saved_in_loop = view_in_loop_;
    auto saved_fused = fused_;
    auto saved_view_block = view_block_;
    SourceLoc saved_sched = sched_loc_;
    std::vector<StmtP> body;
    blocks_.push_back(&body);
    loop_block_[d] = blocks_.size() - 1;
    names_.insert(d + "_iter");
    open_view(d, true);
    fn();
    blocks_.pop_back();
    loop_block_.erase(d);
    view_ = saved_view;
    view_in_loop_ = saved_in_loop;
    fused_ = saved_fused;
    view_block_ = saved_view_block;
    sched_loc_ = pl.sched_loc;
    if (!end_var.empty()) {
      std::vector<StmtP> below;
      for (const StmtP& st : body) below.push_back(clone_stmt(st));
      below_diagonal(below, d, cb->second);
      emit(make_for(d + "_iter", cint(0), var(split_var), cint(pl.tile), below, loc));
      emit(make_for(d + "_iter", var(split_var), var(end_var), cint(pl.tile), body, loc));
      sched_loc_ = saved_sched;
      return;
    }
    ExprP hi = pl.blocked ? cint(pl.block) : var(d + "_SIZE");
    emit(make_for(d + "_iter", cint(0), hi, cint(pl.tile), body, loc));
    sched_loc_ = saved_sched;
  }

  // The body of a loop over r's tiles wholly below the diagonal: there every r index is below every
  // m index and below r_SIZE, so where(r_index <= m_index, a, b) (or <, or m_index >= / > r_index)
  // and where(r_mask, a, b) are a.
  static const Expr* peel(const ExprP& e) {
    const Expr* x = e.get();
    while (x->kind == ExprKind::ExpandDims || x->kind == ExprKind::Broadcast) x = x->args[0].get();
    return x;
  }
  static bool is_var(const Expr* x, const std::string& n) { return x->kind == ExprKind::Var && x->name == n; }
  ExprP below_diagonal(ExprP e, const std::string& r, const std::string& m) {
    if (!e) return e;  // an absent mask or accumulator
    for (auto& a : e->args) a = below_diagonal(a, r, m);
    if (e->kind != ExprKind::Where) return e;
    const Expr* c = peel(e->args[0]);
    if (is_var(c, r + "_mask")) return e->args[1];
    if (c->kind == ExprKind::Binary) {
      const Expr *a = peel(c->args[0]), *b = peel(c->args[1]);
      const std::string ri = r + "_index", mi = m + "_index";
      if ((c->bop == BinOp::Le || c->bop == BinOp::Lt) && is_var(a, ri) && is_var(b, mi)) return e->args[1];
      if ((c->bop == BinOp::Ge || c->bop == BinOp::Gt) && is_var(a, mi) && is_var(b, ri)) return e->args[1];
    }
    return e;
  }
  void below_diagonal(std::vector<StmtP>& ss, const std::string& r, const std::string& m) {
    for (StmtP& st : ss) {
      for (auto& a : st->args) a = below_diagonal(a, r, m);
      below_diagonal(st->body, r, m);
      below_diagonal(st->orelse, r, m);
    }
  }

  // ---- causal bounds ----
  // A mask where(r <= m, x, y) (or r < m, m >= r, m > r: dims used as values) with r a dim this kernel
  // reduces over and m one of its output dims is false at every point past the diagonal (r > m). The
  // algorithm is evaluated there (Past: what a value is at such points, for finite inputs); when every
  // reduction over r in the kernel takes a term that is its identity there (0 in a sum, an operand 0
  // in a dot, -inf in a max, inf in a min), those points contribute exactly nothing, and every loop
  // over r may stop at the end of m's tile. Otherwise the loops run over all of r with the mask.
  enum class Past { Zero, NegInf, PosInf, Fin, Any };
  static bool diag_cond(const DtExprP& c, std::string& r, std::string& m) {
    if (c->kind != DtExprKind::Binary || c->args.size() != 2) return false;
    const DtExprP &a = c->args[0], &b = c->args[1];
    if (a->kind != DtExprKind::Name || b->kind != DtExprKind::Name || !a->is_dim || !b->is_dim || a->name == b->name) return false;
    if (c->op == "<=" || c->op == "<") { r = a->name; m = b->name; return true; }
    if (c->op == ">=" || c->op == ">") { r = b->name; m = a->name; return true; }
    return false;
  }
  void diag_conds(const DtExprP& e, std::vector<std::pair<std::string, std::string>>& out) {
    std::string r, m;
    if (e->kind == DtExprKind::Call && e->name == "where" && diag_cond(e->args[0], r, m)) out.push_back({r, m});
    for (auto& a : e->args) diag_conds(a, out);
  }
  // Positive for every size: positive literals, len(), sqrt/rsqrt/exp of such, products and quotients.
  static bool positive_dt(const DtExprP& e) {
    switch (e->kind) {
      case DtExprKind::Num: return std::isfinite(e->num) && e->num > 0;
      case DtExprKind::Call:
        if (e->name == "len") return true;
        if (e->name == "sqrt" || e->name == "rsqrt" || e->name == "exp" || e->name == "reshape") return positive_dt(e->args[0]);
        return false;
      case DtExprKind::Binary: return (e->op == "*" || e->op == "/") && positive_dt(e->args[0]) && positive_dt(e->args[1]);
      default: return false;
    }
  }
  // A Func defined as rsum(exp(...), r) (the term possibly a Func defined as exp(...)): a softmax's
  // denominator, taken as nonzero.
  bool sum_of_exp(const DtExprP& e) const {
    const DtExpr* x = e.get();
    while (x->kind == DtExprKind::Call && x->name == "reshape") x = x->args[0].get();
    if (x->kind != DtExprKind::Access || p_.sym(x->name).kind != DtSymKind::Func) return false;
    const DtExprP& d = p_.sym(x->name).def;
    if (d->kind != DtExprKind::Call || d->name != "rsum") return false;
    const DtExpr* t = d->args[0].get();  // exp(...), or a Func defined as exp(...)
    if (t->kind == DtExprKind::Access && p_.sym(t->name).kind == DtSymKind::Func) t = p_.sym(t->name).def.get();
    return t->kind == DtExprKind::Call && t->name == "exp";
  }
  static bool finite(Past p) { return p == Past::Zero || p == Past::Fin; }
  static Past past_join(Past a, Past b) {
    if (a == b) return a;
    return finite(a) && finite(b) ? Past::Fin : Past::Any;
  }
  static Past past_neg(Past a) { return a == Past::NegInf ? Past::PosInf : a == Past::PosInf ? Past::NegInf : a; }
  static Past past_add(Past a, Past b) {
    if (a == Past::Any || b == Past::Any) return Past::Any;
    bool ai = a == Past::NegInf || a == Past::PosInf, bi = b == Past::NegInf || b == Past::PosInf;
    if (ai && bi) return a == b ? a : Past::Any;
    if (ai) return a;
    if (bi) return b;
    return a == Past::Zero && b == Past::Zero ? Past::Zero : Past::Fin;
  }
  Past past(const DtExprP& e, const std::string& r, const std::string& m, std::map<std::string, Past>& memo) {
    switch (e->kind) {
      case DtExprKind::Num: return std::isinf(e->num) ? (e->num > 0 ? Past::PosInf : Past::NegInf) : e->num == 0 ? Past::Zero : Past::Fin;
      case DtExprKind::Name: return Past::Fin;
      case DtExprKind::Access: {
        const DtSymbol& s = p_.sym(e->name);
        if (!fused_here(s.name)) return Past::Fin;  // a buffer (finite inputs)
        auto it = memo.find(s.name);
        if (it != memo.end()) return it->second;
        return memo[s.name] = past(s.def, r, m, memo);
      }
      case DtExprKind::Neg: return past_neg(past(e->args[0], r, m, memo));
      case DtExprKind::Binary: {
        Past a = past(e->args[0], r, m, memo), b = past(e->args[1], r, m, memo);
        if (e->op == "+") return past_add(a, b);
        if (e->op == "-") return past_add(a, past_neg(b));
        if (e->op == "*" || e->op == "/") {
          if (a == Past::Any || b == Past::Any) return Past::Any;
          bool div = e->op == "/";
          if (a == Past::Zero) {
            if (div) return positive_dt(e->args[1]) || sum_of_exp(e->args[1]) ? Past::Zero : Past::Any;
            return finite(b) ? Past::Zero : Past::Any;
          }
          if (!div && b == Past::Zero) return a == Past::Fin ? Past::Zero : Past::Any;
          if ((a == Past::NegInf || a == Past::PosInf) && positive_dt(e->args[1])) return a;
          if (!div && (b == Past::NegInf || b == Past::PosInf) && positive_dt(e->args[0])) return b;
          return finite(a) && finite(b) ? Past::Fin : Past::Any;
        }
        return Past::Fin;  // comparisons: 0 or 1
      }
      case DtExprKind::Call: {
        const std::string& fn = e->name;
        if (dt_is_reduction(fn) || fn == "len") return Past::Fin;  // a reduction's terms are checked by causal_safe
        if (fn == "reshape") return past(e->args[0], r, m, memo);
        if (fn == "where") {
          std::string cr, cm;
          if (diag_cond(e->args[0], cr, cm) && cr == r && cm == m) return past(e->args[2], r, m, memo);
          return past_join(past(e->args[1], r, m, memo), past(e->args[2], r, m, memo));
        }
        if (fn == "maximum" || fn == "minimum") {
          Past a = past(e->args[0], r, m, memo), b = past(e->args[1], r, m, memo);
          Past unit = fn == "maximum" ? Past::NegInf : Past::PosInf;
          if (a == unit) return b;
          if (b == unit) return a;
          return past_join(a, b);
        }
        std::vector<Past> as;
        for (auto& a : e->args) as.push_back(past(a, r, m, memo));
        if (fn == "exp" && as.size() == 1) return as[0] == Past::NegInf ? Past::Zero : finite(as[0]) ? Past::Fin : Past::Any;
        for (Past a : as)
          if (!finite(a)) return Past::Any;
        return Past::Fin;
      }
    }
    return Past::Any;
  }
  // Every reduction over r in e takes its identity past the diagonal.
  bool identity_terms(const DtExprP& e, const std::string& r, const std::string& m, std::map<std::string, Past>& memo) {
    if (e->kind == DtExprKind::Call && dt_is_reduction(e->name) && e->args.back()->name == r) {
      Past a = past(e->args[0], r, m, memo);
      if (e->name == "rdot") {
        Past b = past(e->args[1], r, m, memo);
        if (!((a == Past::Zero && finite(b)) || (b == Past::Zero && finite(a)))) return false;
      } else if (a != (e->name == "rsum" ? Past::Zero : e->name == "rmax" ? Past::NegInf : Past::PosInf)) {
        return false;
      }
    }
    for (auto& x : e->args)
      if (!identity_terms(x, r, m, memo)) return false;
    return true;
  }
  void causal_bounds() {
    std::map<std::string, SourceLoc> reduced;
    for (auto& f : in_kernel_) reduced_in_kernel(p_.sym(f).def, reduced);
    std::vector<std::pair<std::string, std::string>> cands;
    for (auto& f : in_kernel_) diag_conds(p_.sym(f).def, cands);
    for (auto& [r, m] : cands) {
      if (causal_.count(r) || !reduced.count(r) || std::find(out_.dims.begin(), out_.dims.end(), m) == out_.dims.end()) continue;
      std::map<std::string, Past> memo;
      bool ok = true;
      for (auto& f : in_kernel_) ok = ok && identity_terms(p_.sym(f).def, r, m, memo);
      if (ok) causal_[r] = m;
    }
  }

  void reduction_loop(const std::string& r, SourceLoc loc, const std::function<void()>& fn) {
    reduction_loops_.insert(r);
    with_loop(r, loc, fn);
    reduction_loops_.erase(r);
  }

  // ---- the loop nest of the output Func ----
  void nest(size_t i) {
    if (i == out_.dims.size()) {
      store_output();
      return;
    }
    const std::string& d = out_.dims[i];
    if (plan_.at(d).whole) {
      realize_level(out_.name, d);
      nest(i + 1);
    } else {
      with_loop(d, out_.def_loc, [&] {
        realize_level(out_.name, d);
        nest(i + 1);
      });
    }
  }

  void store_output() {
    // shaped by the innermost tensorized output dim, else by block()
    sched_loc_ = out_.sched.block_loc;
    for (auto& d : out_.dims) {
      auto it = out_.sched.tensorize.find(d);
      if (it != out_.sched.tensorize.end()) sched_loc_ = it->second.second;
    }
    TV v = func_value(out_);
    if (!v.d.empty()) internal_error("DtLower", "a carried reduction's running value reached the store of " + out_.name);
    std::string n = fresh(out_.name + "_tile");
    assign(n, v.e, out_.def_loc);
    ExprP ptr = bin(BinOp::Add, var(out_.name), offset(out_.dims, out_.dims, v.dims));
    ensure_pointer(out_);
    emit(make_store(ptr, var(n), mask_of(out_.dims, v.dims), out_.def_loc));
  }

  // Row-major element offset into a buffer over `bdims` (its own dims) read with the index dims
  // `idims` (position by position; the same as bdims unless the access is permuted or repeated), as a
  // tile in `layout`. The strides come from the buffer's dims.
  ExprP offset(const std::vector<std::string>& idims, const std::vector<std::string>& bdims, const std::vector<std::string>& layout) {
    ExprP off;
    for (size_t i = 0; i < idims.size(); ++i) {
      ExprP t = place(var(idims[i] + "_index"), idims[i], layout);
      for (size_t j = i + 1; j < bdims.size(); ++j) t = bin(BinOp::Mul, t, var(bdims[j] + "_SIZE"));
      off = off ? bin(BinOp::Add, off, t) : t;
    }
    return off;
  }

  // Producers fused into `consumer` at `level`, dependencies first.
  void realize_level(const std::string& consumer, const std::string& level) {
    std::vector<std::string> todo;
    for (const DtSymbol& s : p_.syms)
      if (s.kind == DtSymKind::Func && s.sched.fuse_into == consumer && s.sched.fuse_level == level && in_kernel_.count(s.name)) todo.push_back(s.name);
    std::set<std::string> done;
    std::function<void(const std::string&)> visit = [&](const std::string& f) {
      if (done.count(f)) return;
      done.insert(f);
      for (auto& g : todo)
        if (g != f && reads(f, g)) visit(g);
      realize_fused(p_.sym(f));
    };
    for (auto& f : todo) visit(f);
  }
  bool reads(const std::string& f, const std::string& g) const {
    std::set<std::string> r;
    dt_collect_reads(p_.sym(f).def, r);
    for (auto& x : r)
      if (x == g || (p_.sym(x).kind == DtSymKind::Func && reads(x, g))) return true;
    return false;
  }

  void realize_fused(const DtSymbol& f) {
    const DtSchedule& s = f.sched;
    if (carried_here(f)) {
      realize_carried(f);
      return;
    }
    for (auto& d : f.dims) {
      if (view_.count(d)) continue;
      const DimPlan& pl = plan_.at(d);
      user_error(s.fuse_loc, "fuse_at(" + s.fuse_into + ", " + s.fuse_level + "): " + f.name + " needs all of its dim " + d + " there, but " + d +
                                 " is processed in tiles of " + std::to_string(pl.tile) + " by a loop further in (use tensorize(" + d +
                                 ":0) on the kernel's output, or fuse at a level inside " + d + "'s loop)");
    }
    SourceLoc saved_sched = sched_loc_, saved_alg = alg_loc_;
    sched_loc_ = s.fuse_loc;
    for (auto& d : f.dims) realize_level(f.name, d);
    sched_loc_ = s.fuse_loc;
    TV v = func_value(f);
    std::string n = fresh(f.name);
    assign(n, v.e, f.def_loc);
    fold_scale(v);
    FusedVal fv{n, v.dims, {}, v.d, nullptr, nullptr};
    fv.unscaled = v.unscaled;
    fv.scale = v.scale;
    for (auto& d : f.dims) fv.view_ids[d] = view_.at(d);
    fused_[f.name] = fv;
    sched_loc_ = saved_sched;
    alg_loc_ = saved_alg;
  }

  // A value `x * c` or `x / c` (x a tile variable, c a positive scalar) remembers x and c, so that a
  // running maximum over it and exp() of it minus that maximum can take c with log2(e) as one factor,
  // as Triton's tutorial folds the softmax scale into exp2: max(x * c) = max(x) * c for c > 0.
  void fold_scale(TV& v) const {
    const ExprP& x = v.e;
    if (!v.d.empty() || v.dims.empty()) return;
    // where(c, x * k, -inf) = where(c, x, -inf) * k for k > 0 (a causal mask of scaled scores)
    if (x->kind == ExprKind::Where && neg_inf(x->args[2])) {
      TV in{x->args[1], v.dims};
      fold_scale(in);
      if (!in.unscaled) return;
      v.unscaled = make_where(clone_expr(x->args[0]), in.unscaled, make_const_float(-std::numeric_limits<double>::infinity()), x->loc);
      v.scale = in.scale;
      return;
    }
    if (x->kind != ExprKind::Binary) return;
    auto tile_var = [](const ExprP& a) { return a->kind == ExprKind::Var && !positive_scalar(a); };
    if (x->bop == BinOp::Mul)
      for (int i = 0; i < 2; ++i)
        if (positive_scalar(x->args[i]) && tile_var(x->args[1 - i])) {
          v.unscaled = x->args[1 - i];
          v.scale = x->args[i];
          return;
        }
    if (x->bop == BinOp::Div && positive_scalar(x->args[1]) && tile_var(x->args[0])) {
      v.unscaled = x->args[0];
      v.scale = bin(BinOp::Div, make_const_float(1.0), x->args[1]);
    }
  }
  static bool neg_inf(const ExprP& e) {
    if (e->kind == ExprKind::Const) return e->is_float && std::isinf(e->fval) && e->fval < 0;
    if (e->kind == ExprKind::Unary && e->uop == UnOp::Neg) {
      const ExprP& a = e->args[0];
      return a->kind == ExprKind::Const && a->is_float && std::isinf(a->fval) && a->fval > 0;
    }
    return e->kind == ExprKind::Cast && neg_inf(e->args[0]);
  }
  // v * log2(e), with a remembered positive scale folded into the one factor.
  ExprP times_log2e(const TV& v) {
    if (v.unscaled) return bin(BinOp::Mul, clone_expr(v.unscaled), bin(BinOp::Mul, clone_expr(v.scale), make_const_float(kLog2E)));
    return bin(BinOp::Mul, v.e, make_const_float(kLog2E));
  }

  // ---- reductions carried across the consumer's loop ----
  // f is defined as a reduction over r and fused at level r of a consumer whose loop over r is open.
  bool carried_here(const DtSymbol& f) const {
    const DtExprP& e = f.def;
    if (e->kind != DtExprKind::Call || !dt_is_reduction(e->name)) return false;
    const std::string& r = e->args.back()->name;
    return f.sched.fuse_level == r && view_.count(r) && view_in_loop_.at(r) && reduction_loops_.count(r);
  }

  std::string carried_why(const Defect& d) const {
    std::set<std::string> n;
    for (auto* m : {&d.add, &d.scale, &d.post})
      for (auto& [k, c] : *m) n.insert(k);
    for (auto& f : n) {
      const Carried& c = carried_.at(f);
      return f + " is a reduction over " + c.dim + " carried across the loop over " + c.dim + " (fuse_at at line " + std::to_string(c.fuse_loc.line) +
             "), so inside that loop only its running value exists";
    }
    return "a value is carried across a loop";
  }
  [[noreturn]] void carried_error(const Defect& d, SourceLoc loc, const std::string& what) const {
    user_error(loc, carried_why(d) + ": " + what + "; in that loop a running maximum may appear only as exp(x - max), and a running sum only as a factor or divisor, "
                                                   "in a term of a sum over the loop's dim");
  }
  void require_plain(const TV& t, const DtExprP& e, const std::string& what) const {
    if (!t.d.empty()) carried_error(t.d, e->loc, what + " cannot use it: " + dt_expr_str(e));
  }

  // exp(c * (M - M_prev)) = exp2(c * (var - prev)) for a running max M (kept times log2(e)): the
  // factor that brings a sum kept at M's previous scale to its new one (c = -1: M's alpha). Before M's first finite value the sum holds only zeros, and for
  // c > 0 the factor would be inf (inf * 0 = NaN): it is 0 there.
  TV rescale_factor(const std::string& m, double c) {
    const Carried& cm = carried_.at(m);
    if (c == -1) return {var(cm.alpha), cm.dims};
    ExprP f = make_unary(UnOp::Exp2, bin(BinOp::Mul, make_const_float(c), bin(BinOp::Sub, var(cm.var), var(cm.prev))));
    if (c > 0)
      f = make_where(bin(BinOp::Eq, var(cm.prev), make_const_float(-std::numeric_limits<double>::infinity())), make_const_float(0.0), f);
    return {f, cm.dims};
  }
  // The product of the rescale factors of `scale`, as a tile over `layout`; null when none.
  ExprP rescale(const std::map<std::string, double>& scale, const std::vector<std::string>& layout, const std::string& r, SourceLoc loc) {
    ExprP out;
    for (auto& [m, c] : scale) {
      const Carried& cm = carried_.at(m);
      if (cm.op != RedOp::Max || cm.dim != r) internal_error("DtLower", "rescale by " + m);
      for (auto& d : cm.dims)
        if (std::find(layout.begin(), layout.end(), d) == layout.end())
          user_error(loc, "the running maximum " + m + " varies along " + d + ", which the sum over " + r + " here does not keep");
      ExprP f = expand_to(rescale_factor(m, c), layout);
      out = out ? bin(BinOp::Mul, out, f) : f;
    }
    return out;
  }
  // After the loop over r: acc (a tile over layout) times the final values of the running sums in `post`.
  ExprP apply_post(ExprP acc, const std::map<std::string, double>& post, const std::vector<std::string>& layout, SourceLoc loc) {
    for (auto& [sname, c] : post) {
      const Carried& cs = carried_.at(sname);
      if (c != 1 && c != -1) user_error(loc, "the running sum " + sname + " appears with power " + std::to_string(static_cast<int>(c)) + "; only a factor or a divisor can move past the sum");
      for (auto& d : cs.dims)
        if (std::find(layout.begin(), layout.end(), d) == layout.end())
          user_error(loc, "the running sum " + sname + " varies along " + d + ", which the sum here does not keep");
      ExprP sv = var(cs.var);
      if (cs.dtype != Scalar::F32) sv = make_cast(sv, cs.dtype);
      ExprP f = expand_to(TV{sv, cs.dims}, layout);
      acc = bin(c == 1 ? BinOp::Mul : BinOp::Div, acc, f, loc);
    }
    return acc;
  }
  // A sum over r inside r's loop may take terms with a rescale and post factors; nothing else.
  void check_sum_term(const TV& t, const DtExprP& e, const std::string& r) {
    if (t.d.empty()) return;
    if (t.d.unit || !t.d.add.empty()) carried_error(t.d, e->loc, "the sum " + dt_expr_str(e) + " takes it as a term");
    for (auto* m : {&t.d.scale, &t.d.post})
      for (auto& [k, c] : *m)
        if (carried_.at(k).dim != r)
          carried_error(t.d, e->loc, "the reduction over " + r + " " + dt_expr_str(e) + " is not over " + carried_.at(k).dim);
  }

  void realize_carried(const DtSymbol& f) {
    const DtExprP& e = f.def;
    const std::string r = e->args.back()->name;
    std::optional<RedOp> op = dt_redop(e->name);
    if (e->name == "rdot" || !op || *op == RedOp::Min)
      user_error(e->loc, f.name + " is fused at the level of the loop over " + r + " that it reduces over, so it is carried across that loop as a running value: "
                         "only rsum and rmax can be carried (use tensorize(" + r + ":0) or fuse it at an outer level)");
    SourceLoc saved_sched = sched_loc_, saved_alg = alg_loc_;
    std::string saved_func = cur_func_;
    sched_loc_ = f.sched.fuse_loc;
    alg_loc_ = f.def_loc;
    cur_func_ = f.name;
    for (auto& d : f.dims) realize_level(f.name, d);
    realize_level(f.name, r);
    Carried c;
    c.op = *op;
    c.dim = r;
    c.dims = dims_of(e);
    c.dtype = f.dtype;
    c.fuse_loc = f.sched.fuse_loc;
    c.var = fresh(f.name);
    Scalar acc_t = e->type;
    std::vector<ExprP> shape;
    for (auto& d : c.dims) shape.push_back(cint(plan_.at(d).tile));
    ExprP init = c.dims.empty() ? make_cast(identity(*op, acc_t), acc_t) : make_full(shape, identity(*op, acc_t), acc_t);
    emit_at(loop_block_.at(r) - 1, make_assign(c.var, init, e->loc));
    TV b = lower(e->args[0]);
    std::vector<std::string> full = canonical([&] { std::set<std::string> s(c.dims.begin(), c.dims.end()); s.insert(r); return s; }());
    // The running maximum is kept times log2(e) (exp(x - M) = exp2(x * log2(e) - var)), a positive
    // scale of its argument folded into that factor after the max.
    bool fold = *op == RedOp::Max && b.unscaled;
    ExprP v = broadcast_full(fold ? TV{clone_expr(b.unscaled), b.dims} : b, full);
    if (plan_.at(r).masked) v = make_where(place(var(r + "_mask"), r, full), v, identity(*op, acc_t), e->loc);
    if (tiled(r)) v = make_reduce(*op, v, static_cast<int>(std::find(full.begin(), full.end(), r) - full.begin()), e->loc);
    FusedVal fv{c.var, c.dims, {}, {}, nullptr, nullptr};
    if (*op == RedOp::Max) {
      if (!b.d.empty()) carried_error(b.d, e->loc, "the running maximum " + f.name + " cannot take a value that depends on it");
      v = bin(BinOp::Mul, v, fold ? bin(BinOp::Mul, clone_expr(b.scale), make_const_float(kLog2E)) : make_const_float(kLog2E), e->loc);
      c.prev = fresh(f.name + "_prev");
      c.alpha = fresh(f.name + "_alpha");
      assign(c.prev, var(c.var), e->loc);
      assign(c.var, bin(BinOp::Max, var(c.prev), v, e->loc), e->loc);
      assign(c.alpha, make_unary(UnOp::Exp2, bin(BinOp::Sub, var(c.prev), var(c.var)), e->loc), e->loc);
      fv.d.add[f.name] = 1;
    } else {
      check_sum_term(b, e->args[0], r);
      if (!b.d.post.empty()) carried_error(b.d, e->loc, "the running sum " + f.name + " cannot take a term with another running sum's factor");
      ExprP acc = var(c.var);
      if (ExprP k = rescale(b.d.scale, c.dims, r, e->loc)) acc = bin(BinOp::Mul, acc, k, e->loc);
      ExprP upd = bin(BinOp::Add, acc, v, e->loc);
      if (is_float(acc_t) && !is_float(e->args[0]->type)) upd = make_cast(upd, acc_t);
      assign(c.var, upd, e->loc);
      fv.d.unit = true;
      fv.d.post[f.name] = 1;
    }
    carried_[f.name] = c;
    for (auto& d : f.dims) fv.view_ids[d] = view_.at(d);
    fused_[f.name] = fv;
    sched_loc_ = saved_sched;
    alg_loc_ = saved_alg;
    cur_func_ = saved_func;
  }

  // The value of Func f over its own dims (broadcast to all of them), in its element type.
  TV func_value(const DtSymbol& f) {
    std::string saved = cur_func_;
    SourceLoc saved_alg = alg_loc_;
    cur_func_ = f.name;
    alg_loc_ = f.def_loc;
    TV v = lower(f.def);
    std::vector<std::string> want = canonical(std::set<std::string>(f.dims.begin(), f.dims.end()));
    v.e = broadcast_full(v, want);
    v.dims = want;
    if (f.def->type != f.dtype || f.def->weak) v.e = make_cast(v.e, f.dtype);
    cur_func_ = saved;
    alg_loc_ = saved_alg;
    return v;
  }

  // ---- parameters ----
  void ensure_pointer(const DtSymbol& s) {
    for (auto& p : ptr_params_)
      if (p.name == s.name) return;
    Param p;
    p.name = s.name;
    p.kind = ParamKind::Pointer;
    p.dtype = s.dtype;
    for (auto& d : s.dims) p.shape.push_back(var(d + "_SIZE"));
    p.io = s.kind == DtSymKind::In ? BufIO::In : s.sched.compiled ? BufIO::Out : BufIO::Scratch;
    p.loc = s.loc;
    ptr_params_.push_back(p);
  }
  void ensure_scalar(const DtSymbol& s) {
    for (auto& p : scalar_params_)
      if (p.name == s.name) return;
    Param p;
    p.name = s.name;
    p.kind = ParamKind::Scalar;
    p.dtype = s.dtype;
    p.init = is_float(s.dtype) ? make_const_float(s.value) : make_const_int(static_cast<int64_t>(s.value));
    p.loc = s.loc;
    scalar_params_.push_back(p);
  }
  void finish_params() {
    // inputs first, then outputs/scratch, then scalars and the dim sizes
    for (auto& p : ptr_params_) if (p.io == BufIO::In) k_.params.push_back(p);
    for (auto& p : ptr_params_) if (p.io != BufIO::In) k_.params.push_back(p);
    for (auto& p : scalar_params_) k_.params.push_back(p);
    std::vector<std::string> sized = order_;
    for (const DtSymbol& s : p_.syms)  // dims that only size a buffer, in declaration order
      if (size_only_.count(s.name) && std::find(sized.begin(), sized.end(), s.name) == sized.end()) sized.push_back(s.name);
    for (auto& d : sized) {
      Param p;
      p.name = d + "_SIZE";
      p.kind = ParamKind::Constexpr;
      p.dtype = Scalar::I32;
      p.init = cint(p_.sym(d).size);
      p.loc = p_.sym(d).loc;
      k_.params.push_back(p);
    }
  }

  // ---- expressions ----
  std::vector<std::string> dims_of(const DtExprP& e) {
    std::set<std::string> s;
    dims_into(e, s);
    return canonical(s);
  }
  void dims_into(const DtExprP& e, std::set<std::string>& s) {
    switch (e->kind) {
      case DtExprKind::Num: return;
      case DtExprKind::Name:
        if (e->is_dim && tiled(e->name)) s.insert(e->name);
        return;
      case DtExprKind::Access:
        for (auto& ix : e->args) if (tiled(ix->name)) s.insert(ix->name);
        return;
      case DtExprKind::Call: {
        if (e->name == "len") return;
        if (e->name == "reshape") { dims_into(e->args[0], s); return; }
        if (dt_is_reduction(e->name)) {
          std::set<std::string> in;
          for (size_t i = 0; i + 1 < e->args.size(); ++i) dims_into(e->args[i], in);
          in.erase(e->args.back()->name);
          s.insert(in.begin(), in.end());
          return;
        }
        for (auto& a : e->args) dims_into(a, s);
        return;
      }
      case DtExprKind::Binary:
      case DtExprKind::Neg:
        for (auto& a : e->args) dims_into(a, s);
        return;
    }
  }

  TV lower(const DtExprP& e) {
    switch (e->kind) {
      case DtExprKind::Num:
        return {e->is_int ? make_const_int(static_cast<int64_t>(e->num), e->loc) : make_const_float(e->num, e->loc), {}};
      case DtExprKind::Name:
        if (e->is_dim) {  // the index of the point: the dim's index tile
          if (!view_.count(e->name)) internal_error("DtLower", "index " + e->name + " used outside its view");
          return {var(e->name + "_index", e->loc), tiled(e->name) ? std::vector<std::string>{e->name} : std::vector<std::string>{}};
        }
        ensure_scalar(p_.sym(e->name));
        return {var(e->name, e->loc), {}};
      case DtExprKind::Access: return lower_access(e, nullptr);
      case DtExprKind::Neg: {
        TV a = lower(e->args[0]);
        if (a.d.unit) require_plain(a, e, "a negation");
        TV r{make_unary(UnOp::Neg, a.e, e->loc), a.dims, false, a.d};
        r.d.add.clear();
        add_into(r.d.add, a.d.add, -1);
        return r;
      }
      case DtExprKind::Binary: {
        // Right operand first, explicitly: lowering registers pointer parameters in the order it
        // meets them, and this is the order the kernels' signatures (and the goldens) have always
        // had with GCC, which evaluated the arguments of combine() right to left; the order of a
        // call's arguments is unspecified, and clang evaluates them left to right.
        TV r = lower(e->args[1]);
        TV l = lower(e->args[0]);
        std::optional<BinOp> op = dt_infix_binop(e->op);
        if (!op) internal_error("DtLower", "operator '" + e->op + "' has no IR op");
        return combine(*op, l, r, e->loc);
      }
      case DtExprKind::Call: return lower_call(e);
    }
    internal_error("DtLower", "bad expression kind");
  }

  TV combine(BinOp op, const TV& a, const TV& b, SourceLoc loc) {
    if (!a.d.empty() || !b.d.empty()) return combine_carried(op, a, b, loc);
    std::vector<std::string> u = union_dims({&a, &b});
    return {bin(op, expand_to(a, u), expand_to(b, u), loc), u};
  }
  // combine() where an operand depends on a carried reduction (see Defect): + and - keep an additive
  // defect or a common factor, * and / multiply factors; a running sum's unit factor is dropped.
  TV combine_carried(BinOp op, const TV& a, const TV& b, SourceLoc loc) {
    Defect d;
    std::string what;
    if (op == BinOp::Add || op == BinOp::Sub) {
      bool factors = !a.d.scale.empty() || !b.d.scale.empty() || !a.d.post.empty() || !b.d.post.empty();
      if (a.d.unit || b.d.unit) what = "a sum or difference cannot use it";
      else if (!factors) {
        d.add = a.d.add;
        add_into(d.add, b.d.add, op == BinOp::Add ? 1 : -1);
      } else if (a.d.scale == b.d.scale && a.d.post == b.d.post && a.d.add.empty() && b.d.add.empty()) {
        d = a.d;
      } else {
        what = "a sum or difference of terms with different factors cannot use it";
      }
    } else if (op == BinOp::Mul || op == BinOp::Div) {
      if (!a.d.add.empty() || !b.d.add.empty()) what = "a product or quotient cannot use it (only exp(x - max) can)";
      else {
        double sg = op == BinOp::Mul ? 1 : -1;
        d.scale = a.d.scale;
        add_into(d.scale, b.d.scale, sg);
        d.post = a.d.post;
        add_into(d.post, b.d.post, sg);
        if (b.d.unit) return TV{a.e, a.dims, a.direct_load, d};
        if (a.d.unit && op == BinOp::Mul) return TV{b.e, b.dims, b.direct_load, d};
      }
    } else {
      what = std::string("the operator '") + binop_name(op) + "' cannot use it";
    }
    if (!what.empty()) carried_error(a.d.empty() ? b.d : a.d, loc, what);
    TV pa = a, pb = b;
    pa.d = pb.d = {};
    TV r = combine(op, pa, pb, loc);
    r.d = d;
    return r;
  }

  TV lower_call(const DtExprP& e) {
    const std::string& fn = e->name;
    if (fn == "exp") {
      if (std::optional<TV> t = exp_minus_running_max(e)) return *t;
    }
    if (std::optional<UnOp> op = dt_call_unop(fn)) {
      TV a = lower(e->args[0]);
      Defect d;
      if (*op == UnOp::Exp && !a.d.empty() && a.d.scale.empty() && a.d.post.empty() && !a.d.unit) d.scale = a.d.add;  // exp(x + c (M_final - M_run))
      else require_plain(a, e, fn + "()");
      return {make_unary(*op, a.e, e->loc), a.dims, false, d};
    }
    if (std::optional<BinOp> op = dt_call_binop(fn)) {
      TV r = lower(e->args[1]);  // right first, as for operators
      TV l = lower(e->args[0]);
      require_plain(l, e, fn + "()");
      require_plain(r, e, fn + "()");
      return combine(*op, l, r, e->loc);
    }
    if (fn == "where") {
      TV c = lower(e->args[0]), a = lower(e->args[1]), b = lower(e->args[2]);
      for (const TV* t : {&c, &a, &b}) require_plain(*t, e, "where()");
      if (e->args[0]->type != Scalar::I1) c.e = bin(BinOp::Ne, c.e, cint(0));
      std::vector<std::string> u = union_dims({&c, &a, &b});
      return {make_where(expand_to(c, u), expand_to(a, u), expand_to(b, u), e->loc), u};
    }
    if (fn == "reshape") return lower(e->args[0]);
    if (fn == "len") return {var(e->args[0]->name + "_SIZE", e->loc), {}};
    if (fn == "rdot") return lower_rdot(e);
    std::optional<RedOp> rop = dt_redop(fn);
    if (!rop) internal_error("DtLower", "unknown call " + fn + "()");
    RedOp op = *rop;
    const DtExprP body = e->args[0];
    std::vector<std::string> acc_dims = dims_of(e);
    return reduce_loop(e, op, e->type, acc_dims, [&] { return lower(body); });
  }

  // exp(a - M), M a running maximum (kept times log2(e)): exp2(a * log2(e) - var), a's positive
  // scale folded into the factor (one multiply-add per element, as Triton's tutorial computes it).
  std::optional<TV> exp_minus_running_max(const DtExprP& e) {
    const DtExprP& x = e->args[0];
    if (x->kind != DtExprKind::Binary || x->op != "-") return std::nullopt;
    DtExprP m = x->args[1];
    while (m->kind == DtExprKind::Call && m->name == "reshape") m = m->args[0];
    auto cm = carried_.find(m->kind == DtExprKind::Access ? m->name : "");
    if (cm == carried_.end() || cm->second.op != RedOp::Max) return std::nullopt;
    TV mv = lower(x->args[1]);  // right first, as for operators; checks that M is in view here
    TV a = lower(x->args[0]);
    if (!a.d.empty() || mv.d.add != std::map<std::string, double>{{m->name, 1.0}}) {
      TV y = combine(BinOp::Sub, a, mv, x->loc);
      if (!y.d.scale.empty() || !y.d.post.empty() || y.d.unit) require_plain(y, e, "exp()");
      Defect d;
      d.scale = y.d.add;
      return TV{make_unary(UnOp::Exp, y.e, e->loc), y.dims, false, d};
    }
    TV y = combine(BinOp::Sub, TV{times_log2e(a), a.dims}, TV{var(cm->second.var), cm->second.dims}, x->loc);
    Defect d;
    d.scale[m->name] = -1;
    return TV{make_unary(UnOp::Exp2, y.e, e->loc), y.dims, false, d};
  }

  ExprP identity(RedOp op, Scalar t) {
    double inf = std::numeric_limits<double>::infinity();
    if (op == RedOp::Sum) return is_float(t) ? make_const_float(0.0) : cint(0);
    bool mx = op == RedOp::Max;
    if (is_float(t)) return make_const_float(mx ? -inf : inf);
    return cint(mx ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max());
  }

  void check_reducible(const DtExprP& e, const std::string& r) {
    if (view_.count(r) && view_in_loop_.at(r))
      user_error(e->loc, e->name + "() over " + r + " runs inside the loop over " + r + " of the consumer; fuse " + cur_func_ +
                             " at a level outside " + r + "'s loop or use tensorize(" + r + ":0)");
  }

  // acc = identity; for r tiles: acc = acc (op) reduce(body, r); returns acc.
  TV reduce_loop(const DtExprP& e, RedOp op, Scalar acc_t, const std::vector<std::string>& acc_dims, const std::function<TV()>& body_fn) {
    const std::string r = e->args.back()->name;
    check_reducible(e, r);
    std::string acc = fresh(r + "_accumulator");
    SourceLoc saved = sched_loc_;
    sched_loc_ = plan_.at(r).sched_loc;
    std::map<std::string, double> post;
    if (acc_dims.empty()) {
      assign(acc, make_cast(identity(op, acc_t), acc_t), e->loc);
    } else {
      std::vector<ExprP> shape;
      for (auto& d : acc_dims) shape.push_back(cint(plan_.at(d).tile));
      assign(acc, make_full(shape, identity(op, acc_t), acc_t), e->loc);
    }
    auto body = [&] {
      realize_level(cur_func_, r);
      TV b = body_fn();
      if (op == RedOp::Sum) check_sum_term(b, e, r);
      else require_plain(b, e, e->name + "()");
      post = b.d.post;
      std::vector<std::string> full = acc_dims;
      if (tiled(r)) full = canonical([&] { std::set<std::string> s(acc_dims.begin(), acc_dims.end()); s.insert(r); return s; }());
      ExprP v = broadcast_full(b, full);
      if (plan_.at(r).masked) v = make_where(place(var(r + "_mask"), r, full), v, identity(op, acc_t), e->loc);
      if (tiled(r)) {
        int axis = static_cast<int>(std::find(full.begin(), full.end(), r) - full.begin());
        v = make_reduce(op, v, axis, e->loc);
      }
      BinOp c = op == RedOp::Sum ? BinOp::Add : op == RedOp::Max ? BinOp::Max : BinOp::Min;
      ExprP prev = var(acc);
      if (ExprP k = rescale(b.d.scale, acc_dims, r, e->loc)) prev = bin(BinOp::Mul, prev, k, e->loc);
      ExprP upd = bin(c, prev, v, e->loc);
      if (op == RedOp::Sum && is_float(acc_t) && !is_float(e->args[0]->type)) upd = make_cast(upd, acc_t);
      assign(acc, upd, e->loc);
    };
    if (plan_.at(r).whole) body();
    else reduction_loop(r, e->loc, body);
    if (!post.empty()) assign(acc, apply_post(var(acc), post, acc_dims, e->loc), e->loc);
    sched_loc_ = saved;
    return {var(acc), acc_dims};
  }

  TV lower_rdot(const DtExprP& e) {
    const DtExprP a = e->args[0], b = e->args[1];
    const std::string k = e->args[2]->name;
    std::vector<std::string> da = dims_of(a), db = dims_of(b);
    auto minus_k = [&](std::vector<std::string> v) { v.erase(std::remove(v.begin(), v.end(), k), v.end()); return v; };
    std::vector<std::string> ia = minus_k(da), jb = minus_k(db);
    bool has_k = std::find(da.begin(), da.end(), k) != da.end() && std::find(db.begin(), db.end(), k) != db.end();
    bool floats = is_float(a->type) && is_float(b->type);
    if (!(tiled(k) && has_k && ia.size() == 1 && jb.size() == 1 && ia[0] != jb[0] && floats)) {
      // Not a matrix product of two tiles: sum over k of the f32 products.
      std::vector<std::string> acc_dims = dims_of(e);
      return reduce_loop(e, RedOp::Sum, Scalar::F32, acc_dims, [&] {
        TV ta = lower(a), tb = lower(b);
        ta.e = make_cast(ta.e, Scalar::F32);
        tb.e = make_cast(tb.e, Scalar::F32);
        return combine(BinOp::Mul, ta, tb, e->loc);
      });
    }
    check_reducible(e, k);
    const std::string i = ia[0], j = jb[0];
    std::string acc = fresh(k + "_accumulator");
    SourceLoc saved = sched_loc_;
    sched_loc_ = plan_.at(k).sched_loc;
    // A k that is one tile: the dot's accumulator is the zero tile itself (on wgmma: D = A*B, no
    // accumulator registers set up before it).
    const bool whole = plan_.at(k).whole;
    auto zero_acc = [&] { return make_full({cint(plan_.at(i).tile), cint(plan_.at(j).tile)}, make_const_float(0.0), Scalar::F32); };
    if (!whole) assign(acc, zero_acc(), e->loc);
    std::map<std::string, double> post;
    auto body = [&] {
      realize_level(cur_func_, k);
      TV oa = operand(a, {i, k}, k), ob = operand(b, {k, j}, k);
      check_sum_term(oa, e, k);
      check_sum_term(ob, e, k);
      TV term = combine(BinOp::Mul, TV{cint(1), {}, false, oa.d}, TV{cint(1), {}, false, ob.d}, e->loc);  // the factors of the product
      check_sum_term(term, e, k);
      post = term.d.post;
      ExprP ta = oa.e, tb = ob.e;
      if (a->type != b->type) { ta = make_cast(ta, Scalar::F32); tb = make_cast(tb, Scalar::F32); }
      ExprP prev = whole ? zero_acc() : var(acc);
      if (ExprP f = rescale(term.d.scale, {i, j}, k, e->loc)) prev = bin(BinOp::Mul, prev, f, e->loc);
      assign(acc, make_dot(ta, tb, prev, e->loc), e->loc);
    };
    if (whole) body();
    else reduction_loop(k, e->loc, body);
    if (!post.empty()) assign(acc, apply_post(var(acc), post, {i, j}, e->loc), e->loc);
    sched_loc_ = saved;
    std::vector<std::string> canon = canonical({i, j});
    if (canon[0] == i) return {var(acc), {i, j}};
    return {make_trans(var(acc)), {j, i}};
  }

  // An rdot operand in the layout `lay` ([i, k] or [k, j]), zero in lanes past the end of k. A
  // buffer read with its dims in the other order is loaded in its own (row-major) order and
  // transposed, as Triton's `dot(q, trans(k))`.
  TV operand(const DtExprP& x, const std::vector<std::string>& lay, const std::string& k) {
    TV t;
    if (x->kind == DtExprKind::Access) {
      const std::vector<std::string> swapped{lay[1], lay[0]};
      std::vector<std::string> tiled_idx;
      for (auto& ix : x->args)
        if (tiled(ix->name)) tiled_idx.push_back(ix->name);
      t = !fused_here(x->name) && tiled_idx == swapped ? lower_access(x, &swapped) : lower_access(x, &lay);
    } else {
      t = lower(x);
    }
    ExprP v = t.e;
    if (t.dims != lay) {
      if (t.dims.size() == 2 && t.dims[0] == lay[1] && t.dims[1] == lay[0]) v = make_trans(v);
      else internal_error("DtLower", "rdot operand is not a 2-D tile over " + join(lay));
    }
    if (plan_.at(k).masked && !t.direct_load) v = make_where(place(var(k + "_mask"), k, lay), v, make_const_float(0.0));
    return {v, lay, t.direct_load, t.d};
  }

  TV lower_access(const DtExprP& e, const std::vector<std::string>* layout) {
    const DtSymbol& s = p_.sym(e->name);
    if (s.kind == DtSymKind::Func && fused_here(s.name)) {
      auto it = fused_.find(s.name);
      bool ok = it != fused_.end();
      if (ok)
        for (auto& [d, id] : it->second.view_ids) ok &= view_.count(d) && view_.at(d) == id;
      std::vector<std::string> idims;
      for (auto& ix : e->args) idims.push_back(ix->name);
      if (idims != s.dims)
        user_error(e->loc, s.name + " is fused into " + s.sched.fuse_into + " (line " + std::to_string(s.sched.fuse_loc.line) +
                               "), so it exists only as a tile over its own dims: read it as " + s.name + "[" + join(s.dims) + "], or drop the fuse_at so that " +
                               s.name + " is materialized in a buffer that " + dt_expr_str(e) + " can read");
      if (!ok)
        user_error(e->loc, s.name + " is fused into " + s.sched.fuse_into + " at level " + s.sched.fuse_level + " (line " +
                               std::to_string(s.sched.fuse_loc.line) + "), but " + cur_func_ +
                               " uses it here outside that loop level; fuse it at an enclosing level or leave it unfused");
      TV t{var(it->second.var, e->loc), it->second.dims};
      t.d = it->second.d;
      if (t.d.unit) t = TV{make_const_float(1.0, e->loc), {}, false, t.d};
      auto cm = carried_.find(s.name);
      if (cm != carried_.end() && cm->second.op == RedOp::Max) t.e = bin(BinOp::Mul, t.e, make_const_float(kLn2), e->loc);  // kept times log2(e)
      if (it->second.unscaled) {
        t.unscaled = clone_expr(it->second.unscaled);
        t.scale = clone_expr(it->second.scale);
      }
      return t;
    }
    if (s.kind == DtSymKind::Func && !s.sched.fuse_into.empty())
      user_error(e->loc, s.name + " is fused into " + s.sched.fuse_into + " (line " + std::to_string(s.sched.fuse_loc.line) + "), but kernel " +
                             out_.name + " also uses it; a fused Func lives only inside its consumer's loop nest");
    ensure_pointer(s);
    std::vector<std::string> idims, distinct;  // the access's dims by position; each once
    for (auto& ix : e->args) {
      idims.push_back(ix->name);
      if (std::find(distinct.begin(), distinct.end(), ix->name) == distinct.end()) distinct.push_back(ix->name);
    }
    std::vector<std::string> lay = layout ? *layout : canonical(std::set<std::string>(distinct.begin(), distinct.end()));
    ExprP ptr = bin(BinOp::Add, var(s.name, e->loc), offset(idims, s.dims, lay), e->loc);
    ExprP m = mask_of(distinct, lay);
    std::string n = fresh(s.name + "_tile");
    // A load is placed in the innermost block where all of its dims are in view: one that does not
    // vary with an enclosing loop is done once before it (no buffer a kernel reads is written by it).
    size_t at = 0;
    for (auto& d : distinct) at = std::max(at, view_block_.at(d));
    emit_at(at, make_assign(n, make_load(ptr, m, nullptr, e->loc), e->loc));
    return {var(n, e->loc), lay, m != nullptr};
  }
};

}  // namespace

std::string dt_kernel_func(const DtProgram& p, const std::string& kernel) {
  for (const std::string& k : p.kernels)
    if (k == kernel || k + "_kernel" == kernel) return k;
  return "";
}

Module lower_dt(const DtProgram& p, const std::string& kernel) {
  Module m;
  m.file = p.file_id >= 0 ? Sources::name(p.file_id) : "<dt>";
  std::vector<std::string> roots;
  if (kernel.empty()) {
    roots = p.kernels;
  } else {
    std::string f = dt_kernel_func(p, kernel);
    if (f.empty()) throw UserError("no kernel '" + kernel + "' in " + m.file + " (kernels: " + join(p.kernels) + ")");
    roots = {f};
  }
  std::set<std::string> emitted;
  std::function<void(const std::string&)> emit = [&](const std::string& f) {
    if (emitted.count(f)) return;
    emitted.insert(f);
    // Funcs read by this kernel that it does not compute: materialized (or other kernels' outputs).
    std::set<std::string> computed{f}, reads;
    for (const DtSymbol& s : p.syms) {
      if (s.kind != DtSymKind::Func || !s.defined || s.sched.fuse_into.empty()) continue;
      const DtSymbol* r = &s;
      while (!r->sched.fuse_into.empty()) r = &p.sym(r->sched.fuse_into);
      if (r->name == f) computed.insert(s.name);
    }
    for (auto& c : computed) dt_collect_reads(p.sym(c).def, reads);
    for (auto& r : reads)
      if (p.sym(r).kind == DtSymKind::Func && !computed.count(r) && p.sym(r).sched.fuse_into.empty()) emit(r);
    m.kernels.push_back(KernelLowerer(p, f).run());
  };
  for (auto& r : roots) emit(r);
  return m;
}

}  // namespace dtsim
