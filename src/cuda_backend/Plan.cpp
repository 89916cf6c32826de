// The planning stages of the CUDA backend (Plan.h): KernelEmitter::plan() runs them in order and
// fills the KernelPlan that emission reads; KernelPlan::print is `emit --plan`.
#include <algorithm>
#include <functional>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Printer.h"
#include "ir/Walk.h"

namespace dtsim::nvvm {

namespace {

int64_t align1024(int64_t n) { return (n + 1023) / 1024 * 1024; }

// The first line of a statement's .tile text, and where it is.
std::string stmt_line(const Stmt& s) {
  std::string text = print_stmt(s, 0);
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '{') text.pop_back();
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return (s.loc.valid() ? "line " + std::to_string(s.loc.line) + ": " : std::string()) + text;
}

std::string loop_line(const Stmt& s) { return s.loc.valid() ? "line " + std::to_string(s.loc.line) : std::string("an earlier loop"); }

std::string axis_str(const AxisInfo& a) {
  auto v = [](int64_t x) { return x >= AxisInfo::kMax ? std::string("max") : std::to_string(x); };
  return "contig " + v(a.contig) + ", div " + v(a.div) + ", cst " + v(a.cst);
}

// The shared-memory allocation of a loop's resident operand, as emit --plan names it.
std::string resident_alloc(const Kernel& k, const LoopPlan& lp) {
  const std::string& name = k.slot_names[static_cast<size_t>(lp.resident)];
  if (lp.resident_from) return "A operand " + name + " staged for " + stmt_line(*lp.resident_from) + ", kept for " + stmt_line(*lp.loop);
  return "A operand " + name + " staged once for " + stmt_line(*lp.loop);
}

}  // namespace

const LoopPlan& KernelPlan::loop(const Stmt& f, bool unchecked) const {
  auto it = loops.find({&f, unchecked});
  if (it == loops.end()) internal_error("NvvmEmitter", "a for loop was not planned (" + stmt_line(f) + ")");
  return it->second;
}

int KernelPlan::map_for(const Stmt* s, const TmaMap& m) {
  auto it = tma_map_of.find(s);
  if (it == tma_map_of.end()) {
    it = tma_map_of.emplace(s, static_cast<int>(tma_maps.size())).first;
    tma_maps.push_back(m);
  }
  return it->second;
}

const MmaPlan& KernelPlan::dot(const Expr& e) const {
  auto it = dots.find(&e);
  if (it == dots.end()) internal_error("NvvmEmitter", "a dot was not planned");
  return it->second;
}

ScheduleAsks schedule_asks(const Kernel& k, const CudaOptions& opt) {
  auto ask = [](int flag, bool kernel, const std::string& name, const std::string& written) {
    using Who = ScheduleAsk::Who;
    if (flag > 0) return ScheduleAsk{true, "asked for by --" + name, Who::Flag};
    if (flag < 0) return ScheduleAsk{false, "refused by --no-" + name, Who::Flag};
    return kernel ? ScheduleAsk{true, "asked for by the kernel (" + written + ")", Who::Kernel} : ScheduleAsk{};
  };
  ScheduleAsks a;
  a.warp_specialize = ask(opt.warp_specialize, k.warp_specialize, "warp-specialize", "warp_specialize");
  a.cluster = ask(opt.cluster, k.cluster == 2, "cluster", "cluster(2)");
  a.persistent = ask(opt.persistent, k.persistent, "persistent",
                     k.persistent_ctas > 0 ? "persistent(" + std::to_string(k.persistent_ctas) + ")" : std::string("persistent"));
  a.persistent_ctas = opt.persistent_ctas > 0 ? opt.persistent_ctas : k.persistent_ctas;
  return a;
}

void KernelEmitter::plan() {
  plan_ = KernelPlan{};
  plan_.arch = opt_.arch.empty() ? "sm_90" : opt_.arch;
  plan_.asks = schedule_asks(k_, opt_);
  const size_t n = static_cast<size_t>(k_.num_slots);
  plan_.assigns.assign(n, 0);
  plan_.single_def.assign(n, nullptr);
  plan_.defs.assign(n, {});
  plan_slots(k_.body);
  plan_prefix_scalars();
  plan_dots();
  plan_layouts();
  // The parameters count as one assignment each from here on (the layouts above see the body's).
  for (const Param& p : k_.params)
    if (p.slot >= 0) ++plan_.assigns[static_cast<size_t>(p.slot)];
  plan_true_masks();
  plan_true_asserts();
  plan_loop_stages();
  info.threads = threads_;
  for (const auto& [key, lp] : plan_.loops)
    if (lp.pipeline && lp.pipeline->specialized) info.threads = threads_ + 32;  // the producer warp
  for (const auto& [key, lp] : plan_.loops)
    if (lp.pipeline && lp.pipeline->cluster_axis >= 0) info.cluster_axis = lp.pipeline->cluster_axis;
  if (opt_.conflict_checks) plan_conflicts();
  plan_smem();
  planned_ = true;
}

// Stage `slots`: how often each slot is assigned (a `for` assigns its variable), and with what.
void KernelEmitter::plan_slots(const std::vector<StmtP>& body) {
  for_each_stmt(body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Assign) {
      for (int slot : s.slots) ++plan_.assigns[static_cast<size_t>(slot)];
      if (s.targets.size() == 1) {
        plan_.defs[static_cast<size_t>(s.slots[0])].push_back(s.args[0]);
        plan_.single_def[static_cast<size_t>(s.slots[0])] = s.args[0];
      }
    } else if (s.kind == StmtKind::For) {
      ++plan_.assigns[static_cast<size_t>(s.slots[0])];
    }
  });
}

// Stage `slots`, continued: KernelPlan::prefix_scalar.
void KernelEmitter::plan_prefix_scalars() {
  const size_t n = plan_.assigns.size();
  plan_.prefix_scalar.assign(n, 0);
  size_t end = 0;
  while (end < k_.body.size() && k_.body[end]->kind == StmtKind::Assign) ++end;
  std::vector<int> count(n, 0), last(n, -1);
  std::vector<char> scalar(n, 1);
  for (size_t i = 0; i < end; ++i) {
    const Stmt& s = *k_.body[i];
    for (int slot : s.slots) {
      const size_t u = static_cast<size_t>(slot);
      ++count[u];
      last[u] = static_cast<int>(i);
      if (s.targets.size() != 1 || !s.args[0] || !s.args[0]->type.is_scalar()) scalar[u] = 0;
    }
  }
  for (size_t u = 0; u < n; ++u) plan_.prefix_scalar[u] = plan_.assigns[u] > 1 && count[u] == plan_.assigns[u] && scalar[u];
  for (size_t i = 0; i < end; ++i) {
    const Stmt& s = *k_.body[i];
    if (!s.args[0] || s.args[0]->type.is_scalar()) continue;  // scalars are read by value where assigned
    for_each_expr(s.args[0], [&](const Expr& e) {
      if (e.kind == ExprKind::Var && e.slot >= 0 && static_cast<int>(i) < last[static_cast<size_t>(e.slot)])
        plan_.prefix_scalar[static_cast<size_t>(e.slot)] = 0;
    });
  }
}

// Stage `masks` (KernelPlan::true_masks): an i1 tile variable assigned once as `x < n`, n a literal or
// constexpr, x at most n - 1 wherever it is read: x's upper bound from its terms (literals,
// constexprs, aranges, and loop variables of `for` loops whose bounds and step are literals or
// constexprs: the last value they take; or whose start is a multiple of the step and whose end is
// at most a constant, `minimum(n, ...)`: the last multiple of the step below it), through variables
// assigned once, sums and broadcasts; and conjunctions of such.
void KernelEmitter::plan_true_masks() {
  plan_.true_masks.clear();
  std::map<int, int64_t> last;  // loop variable slot -> the last value its loop gives it
  auto constant = [&](const ExprP& e) -> std::optional<int64_t> {
    auto h = host_int(e);
    if (!h || !h->param.empty()) return std::nullopt;
    return h->value;
  };
  // The defining expression of a variable assigned once (itself otherwise).
  auto def_of = [&](const ExprP& e) -> ExprP {
    if (e->kind != ExprKind::Var || e->slot < 0) return e;
    const size_t s = static_cast<size_t>(e->slot);
    return plan_.assigns[s] == 1 && plan_.single_def[s] && !k_.find_param(e->name) ? plan_.single_def[s] : e;
  };
  // A bound of a loop's end: a constant, or minimum(a, b) with a or b constant (a causal key loop's
  // `l_end = minimum(l_SIZE, m_block_start + 128)`).
  auto end_bound = [&](const ExprP& e) -> std::optional<int64_t> {
    if (auto c = constant(e)) return c;
    ExprP d = def_of(e);
    if (d->kind != ExprKind::Binary || d->bop != BinOp::Min) return std::nullopt;
    auto a = constant(d->args[0]), b = constant(d->args[1]);
    if (a && b) return std::min(*a, *b);
    return a ? a : b;
  };
  // Whether integer e is a multiple of m: a constant multiple, or a product with such a factor.
  std::function<bool(const ExprP&, int64_t, int)> multiple = [&](const ExprP& e, int64_t m, int depth) -> bool {
    if (auto c = constant(e)) return *c % m == 0;
    ExprP d = def_of(e);
    if (depth > 16 || d->kind != ExprKind::Binary || d->bop != BinOp::Mul) return false;
    return multiple(d->args[0], m, depth + 1) || multiple(d->args[1], m, depth + 1);
  };
  for_each_stmt(k_.body, [&](const Stmt& s) {
    if (s.kind != StmtKind::For || plan_.assigns[static_cast<size_t>(s.slots[0])] != 1) return;
    auto lo = constant(s.args[0]), hi = constant(s.args[1]), step = constant(s.args[2]);
    if (lo && hi && step && *step > 0 && *hi > *lo) {
      last[s.slots[0]] = *lo + (*hi - *lo - 1) / *step * *step;
    } else if (step && *step > 0 && multiple(s.args[0], *step, 0)) {
      // a start that is a multiple of the step: every value is one, below the end's bound
      if (auto hb = end_bound(s.args[1]); hb && *hb >= 1) last[s.slots[0]] = (*hb - 1) / *step * *step;
    }
  });
  std::function<std::optional<int64_t>(const ExprP&, int)> most = [&](const ExprP& e, int depth) -> std::optional<int64_t> {
    if (depth > 16 || e->type.ptr || is_float(e->type.elem) || e->type.elem == Scalar::I1) return std::nullopt;
    switch (e->kind) {
      case ExprKind::Const: return e->ival;
      case ExprKind::Arange: return e->ints[1] - 1;
      case ExprKind::Broadcast:
      case ExprKind::ExpandDims: return most(e->args[0], depth + 1);
      case ExprKind::Binary: {
        if (e->bop != BinOp::Add) return std::nullopt;
        auto a = most(e->args[0], depth + 1), b = most(e->args[1], depth + 1);
        if (!a || !b) return std::nullopt;
        return *a + *b;
      }
      case ExprKind::Var: {
        if (e->slot < 0) return std::nullopt;
        if (auto it = last.find(e->slot); it != last.end()) return it->second;
        if (auto c = constant(e)) return c;
        ExprP d = def_of(e);
        return d != e ? most(d, depth + 1) : std::nullopt;
      }
      default: return std::nullopt;
    }
  };
  // Why every element of i1 value e is true ("" where that is not shown).
  std::function<std::string(const ExprP&, int)> why = [&](const ExprP& e, int depth) -> std::string {
    if (depth > 16) return "";
    switch (e->kind) {
      case ExprKind::Broadcast:
      case ExprKind::ExpandDims: return why(e->args[0], depth + 1);
      case ExprKind::Var: {
        if (e->slot < 0) return "";
        if (auto it = plan_.true_masks.find(e->slot); it != plan_.true_masks.end()) return it->second;
        ExprP d = def_of(e);
        return d != e ? why(d, depth + 1) : "";
      }
      case ExprKind::Binary: {
        if (e->bop == BinOp::And) {
          std::string a = why(e->args[0], depth + 1), b = a.empty() ? "" : why(e->args[1], depth + 1);
          return b.empty() ? "" : a + "; " + b;
        }
        if (e->bop != BinOp::Lt) return "";
        auto n = constant(e->args[1]);
        auto x = most(e->args[0], 0);
        if (!n || !x || *x >= *n) return "";
        return print_expr(e->args[0]) + " <= " + std::to_string(*x) + " < " + print_expr(e->args[1]) +
               (e->args[1]->kind == ExprKind::Const ? "" : " = " + std::to_string(*n));
      }
      default: return "";
    }
  };
  for_each_stmt(k_.body, [&](const Stmt& s) {
    if (s.kind != StmtKind::Assign || s.targets.size() != 1) return;
    const size_t slot = static_cast<size_t>(s.slots[0]);
    if (plan_.assigns[slot] != 1 || !s.args[0]->type.is_tile() || s.args[0]->type.elem != Scalar::I1) return;
    std::string w = why(s.args[0], 0);
    if (!w.empty()) plan_.true_masks[s.slots[0]] = w;
  });
}

// Stage `asserts` (KernelPlan::true_asserts): a scalar assert whose condition reads only literals and
// constexpr parameters, and holds for their values.
void KernelEmitter::plan_true_asserts() {
  plan_.true_asserts.clear();
  for_each_stmt(k_.body, [&](const Stmt& s) {
    if (s.kind != StmtKind::Assert || !s.args[0]->type.is_scalar()) return;
    try {
      if (eval_param_expr(s.args[0], b_, &k_).as_int() != 0) plan_.true_asserts.insert(&s);
    } catch (const UserError&) {  // reads a runtime value: checked when the kernel runs
    }
  });
}

bool KernelEmitter::reports_at_run_time(const Stmt& s) const {
  return s.kind == StmtKind::Print || (s.kind == StmtKind::Assert && !plan_.true_asserts.count(&s));
}

bool KernelEmitter::reports_at_run_time() const {
  bool reports = false;
  for_each_stmt(k_.body, [&](const Stmt& s) { reports = reports || reports_at_run_time(s); });
  return reports;
}

// Whether every element of i1 value e is true (a true mask, broadcast or not).
bool KernelEmitter::always_true(const ExprP& e) const {
  if (e->kind == ExprKind::Broadcast || e->kind == ExprKind::ExpandDims) return always_true(e->args[0]);
  return e->kind == ExprKind::Var && e->slot >= 0 && plan_.true_masks.count(e->slot);
}

// Stage `dots`: the engine of every dot (tensor cores or FMA units; mma_plan in NvvmDot.cpp).
void KernelEmitter::plan_dots() {
  for_each_stmt(k_.body, [&](const Stmt& s) {
    for (const ExprP& a : s.args) {
      if (!a) continue;
      for_each_expr(a, [&](const Expr& e) {
        if (e.kind != ExprKind::Dot || plan_.dots.count(&e)) return;
        plan_.dots[&e] = mma_plan(e);
        plan_.dot_order.push_back({&s, &e});
      });
    }
  });
}

// Stage `layouts`: each tile variable keeps one layout: the natural layout of its assignments, where
// one of them is not the blocked default (a reduction's slice, say); assignments in other layouts
// are converted.
void KernelEmitter::plan_layouts() {
  std::vector<Dist>& layouts = plan_.layouts;
  layouts.assign(static_cast<size_t>(k_.num_slots), dflt({}));
  for (int s = 0; s < k_.num_slots; ++s) {
    const Type& t = k_.slot_types[static_cast<size_t>(s)];
    if (t.is_tile()) layouts[static_cast<size_t>(s)] = dflt(t.shape);
  }
  for (int pass = 0; pass < 4; ++pass) {
    bool changed = false;
    for_each_stmt(k_.body, [&](const Stmt& st) {
      if (st.kind != StmtKind::Assign || st.targets.size() != 1) return;
      size_t slot = static_cast<size_t>(st.slots[0]);
      const Type& t = k_.slot_types[slot];
      if (t.is_tile() && layouts[slot] == dflt(t.shape) && !recomputable(st.args[0])) {
        Dist n = natural(st.args[0]);
        if (n.shape == t.shape && !(n == layouts[slot])) {
          layouts[slot] = n;
          changed = true;
        }
      }
    });
    if (!changed) break;
  }
  // A broadcast held in a variable read once (the TTIR reader's `x = broadcast_to(m[:, None], shape)`
  // before `qk * scale - x`) takes the layout of the elementwise expression that reads it, where
  // another operand of that expression gives one other than the default: a slice broadcast in its
  // parent's layout moves nothing between threads, where the default layout would be converted
  // into the reader's through shared memory.
  for_each_stmt(k_.body, [&](const Stmt& st) {
    for (const ExprP& a : st.args) {
      if (!a) continue;
      for_each_expr(a, [&](const Expr& e) {
        if (e.kind != ExprKind::Binary && e.kind != ExprKind::Where) return;
        for (const ExprP& x : e.args) {
          if (!x || x->kind != ExprKind::Var || x->slot < 0 || x->type.shape != e.type.shape) continue;
          size_t slot = static_cast<size_t>(x->slot);
          const ExprP& d = plan_.single_def[slot];
          if (plan_.assigns[slot] != 1 || !d || d->kind != ExprKind::Broadcast || !(layouts[slot] == dflt(x->type.shape)) ||
              count_reads(x->slot) != 1)
            continue;
          for (const ExprP& y : e.args) {
            if (!y || y.get() == x.get() || y->type.shape != e.type.shape || recomputable(y)) continue;
            Dist n = natural(y);
            if (!(n == dflt(e.type.shape))) {
              layouts[slot] = n;
              break;
            }
          }
        }
      });
    }
  });
}

// Stage `loops` (and `axis`): statements in program order, with the loop variables of the loops
// around each in loop_info_ and, inside the unchecked copy of a hoisted loop, unchecked_ set, as
// emission will have them.
void KernelEmitter::plan_loops(const std::vector<StmtP>& body) {
  for (const StmtP& sp : body) {
    const Stmt& s = *sp;
    if (!unchecked_) plan_accesses(s);
    switch (s.kind) {
      case StmtKind::For: plan_for(s); break;
      case StmtKind::If:
        plan_loops(s.body);
        plan_loops(s.orelse);
        break;
      case StmtKind::While: plan_loops(s.body); break;
      case StmtKind::Assign:
      case StmtKind::Store:
      case StmtKind::Atomic:
      case StmtKind::Print:
      case StmtKind::Assert:
      case StmtKind::Return: break;
    }
  }
}

// A loop with hoisted bounds checks is emitted twice: the unchecked copy first, then the checked one.
void KernelEmitter::plan_for(const Stmt& f) {
  std::optional<HoistPlan> h;
  if (checking()) h = plan_hoist(f);
  if (h) {
    unchecked_ = true;
    plan_loop_copy(f, std::nullopt);
    unchecked_ = false;
  }
  plan_loop_copy(f, std::move(h));
}

void KernelEmitter::plan_loop_copy(const Stmt& f, std::optional<HoistPlan> hoist) {
  const int slot = f.slots[0];
  LoopPlan lp;
  lp.loop = &f;
  lp.unchecked = unchecked_;
  lp.hoist = std::move(hoist);
  lp.k = AxisInfo::scalar(std::min(axis_info(f.args[0]).div, axis_info(f.args[2]).div));
  lp.pipeline = plan_pipeline(f, lp.not_pipelined);
  if (lp.pipeline) plan_tma(f, *lp.pipeline);
  if (!lp.pipeline) lp.pipeline = plan_operand_rings(f, lp.not_pipelined);
  if (lp.pipeline && lp.pipeline->kind == PipelinePlan::Kind::OperandRings) lp.not_pipelined.clear();
  loop_info_[slot] = lp.k;
  if (!lp.pipeline) lp.prefetch = prefetchable_loads(f);
  if (!lp.pipeline || lp.pipeline->kind == PipelinePlan::Kind::OperandRings) plan_resident(f, lp);
  std::pair<const Stmt*, bool> key{&f, unchecked_};
  if (!plan_.loops.count(key)) plan_.loop_order.push_back(key);
  plan_.loops[key] = std::move(lp);
  plan_loops(f.body);
  loop_info_.erase(slot);
}

// A tile variable the loop does not assign that is the A operand of wgmma dots at the top level of
// its body (attention's `s = dot(q, trans(k), ...)`): staged into shared memory once before the loop
// instead of once per iteration, so its registers are free while the loop runs.
void KernelEmitter::plan_resident(const Stmt& f, LoopPlan& lp) {
  std::set<int> in_body;
  in_body.insert(f.slots[0]);
  slots_assigned(f.body, in_body);
  for (auto& st : f.body) {
    if (st->kind != StmtKind::Assign || st->targets.size() != 1 || st->args[0]->kind != ExprKind::Dot) continue;
    const ExprP& a = st->args[0]->args[0];
    const MmaPlan& p = plan_.dot(*st->args[0]);
    if (!p.ok || !p.wgmma || a->kind != ExprKind::Var || a->slot < 0 || in_body.count(a->slot) || !a->type.is_tile()) continue;
    if (lp.resident >= 0 && lp.resident != a->slot) continue;  // one operand per loop
    lp.resident = a->slot;
    lp.resident_var = a;
    lp.resident_bytes = align1024(p.M * p.K * 2);
  }
}

// Stage `loops`, continued: an operand resident in two loops of one statement list, staged by the
// first and read by the second where it is (LoopPlan::resident_kept, resident_from). Only loops
// emitted once (no hoisted bounds checks: those emit a checked and an unchecked copy), only
// assignments between them, none of the operand.
void KernelEmitter::plan_kept_residents(const std::vector<StmtP>& body) {
  LoopPlan* open = nullptr;  // the last loop of the list whose staging a later loop may read
  std::vector<StmtP> between;
  for (const StmtP& sp : body) {
    const Stmt& s = *sp;
    if (s.kind == StmtKind::For) {
      auto it = plan_.loops.find({&s, false});
      LoopPlan* lp = it != plan_.loops.end() && !plan_.loops.count({&s, true}) ? &it->second : nullptr;
      // (and the statements between fit above the operand: they would have had all of it)
      const int64_t kb = lp && open ? transient_smem(between, {}) : 0;
      if (lp && lp->resident >= 0 && open && open->resident == lp->resident && open->resident_bytes == lp->resident_bytes &&
          open->resident_bytes + kb <= max_dynamic_smem(plan_.arch) - 1024) {
        open->resident_kept = true;
        lp->resident_from = open->loop;
        lp->kept_between = kb;
      }
      plan_kept_residents(s.body);
      open = lp && lp->resident >= 0 ? lp : nullptr;
      between.clear();
      continue;
    }
    if (s.kind == StmtKind::If) plan_kept_residents(s.body), plan_kept_residents(s.orelse);
    if (s.kind == StmtKind::While) plan_kept_residents(s.body);
    if (!open) continue;
    bool assigns = s.kind != StmtKind::Assign;
    for (int slot : s.slots) assigns = assigns || slot == open->resident;
    if (assigns) open = nullptr;
    else between.push_back(sp);
  }
}

// Stages `loops` (and the axis information of every global access) and `persistent`, as plan() runs
// them and as plan_smem runs them again without FMA rings.
void KernelEmitter::plan_loop_stages() {
  plan_loops(k_.body);
  plan_kept_residents(k_.body);
  plan_resident_tma(k_.body);
  plan_tma_stores();
  plan_persistent();
}

// Stage `loops`, last: a resident operand copied by TMA (LoopPlan::resident_tma), decided once the
// loops keeping it are known (their dots must be its only readers).
void KernelEmitter::plan_resident_tma(const std::vector<StmtP>& body) {
  for (size_t j = 0; j < body.size(); ++j) {
    const Stmt& s = *body[j];
    plan_resident_tma(s.body);
    plan_resident_tma(s.orelse);
    if (s.kind != StmtKind::For) continue;
    auto it = plan_.loops.find({&s, false});
    if (it == plan_.loops.end() || plan_.loops.count({&s, true})) continue;
    LoopPlan& lp = it->second;
    if (lp.resident < 0 || lp.resident_from || !lp.pipeline || lp.pipeline->kind != PipelinePlan::Kind::OperandRings) continue;
    const int slot = lp.resident;
    auto no = [&](const std::string& w) { lp.not_resident_tma = w; };
    if (checking()) {
      no("bounds checks: its load is checked lane by lane");
      continue;
    }
    if (lp.pipeline->tma.empty()) {
      no("its loop's rings are not filled by TMA");
      continue;
    }
    const Stmt* ld = nullptr;
    for (size_t i = 0; i < j; ++i) {
      const Stmt& a = *body[i];
      if (a.kind == StmtKind::Assign && a.slots.size() == 1 && a.slots[0] == slot && a.args[0]->kind == ExprKind::Load) ld = &a;
    }
    if (!ld || plan_.assigns[static_cast<size_t>(slot)] != 1) {
      no("it is not assigned once, by a load earlier in the loop's statement list");
      continue;
    }
    // Its readers: the A operands of the dots of this loop and of the loops keeping it.
    std::set<const Stmt*> chain{&s};
    for (const auto& key : plan_.loop_order) {
      const LoopPlan& o = plan_.loops.at(key);
      if (o.resident == slot && o.resident_from && chain.count(o.resident_from)) chain.insert(o.loop);
    }
    int reads = 0;
    for (const Stmt* l : chain)
      for (const StmtP& st : l->body)
        if (st->kind == StmtKind::Assign && st->targets.size() == 1 && st->args[0]->kind == ExprKind::Dot) {
          const ExprP& a = st->args[0]->args[0];
          reads += a->kind == ExprKind::Var && a->slot == slot;
        }
    if (reads != count_reads(slot)) {
      no("it is read by more than the dots of the loops staging it");
      continue;
    }
    // Its indices read variables assigned once: their values where the loop starts are the load's.
    bool once = true;
    for (const ExprP& a : ld->args)
      if (a) for_each_expr(a, [&](const Expr& e) {
          if (e.kind == ExprKind::Var && e.slot >= 0) once = once && plan_.assigns[static_cast<size_t>(e.slot)] == 1;
        });
    if (!once) {
      no("its load reads a variable assigned more than once");
      continue;
    }
    TmaMap m;
    std::string w;
    auto o = tma_operand(*ld, true, m, w);
    if (!o) {
      no("the load " + w);
      continue;
    }
    o->map = plan_.map_for(ld, m);
    o->b_operand = false;  // an A operand (in 64-column boxes, as a B's: tma_copy copies one per box)
    lp.resident_tma = *o;
    lp.not_resident_tma.clear();
    plan_.tma_resident_loads.insert(ld);
  }
}

// Stage `loops`, last: the stores TMA writes (KernelPlan::tma_stores).
void KernelEmitter::plan_tma_stores() {
  if (plan_.arch != "sm_90a" || opt_.bounds_checks || opt_.conflict_checks) return;
  for (const StmtP& sp : k_.body) {
    const Stmt& s = *sp;
    if (s.kind != StmtKind::Store || !s.args[0]->type.is_tile() || s.args[0]->type.rank() != 2 || s.args[1]->type.shape != s.args[0]->type.shape)
      continue;
    // Only a value that also reads a slice of its own layout (attention's `(acc / l[:, None]).to(f16)`,
    // also through the variables it was computed in, as the DT lowering writes it): emit_store would
    // store it from that layout in element pairs, each with its address and mask, or convert it
    // through shared memory; a matmul's `acc.to(f16)` keeps its exchange through shared memory and
    // 16-byte global stores.
    if (!reads_slice(s.args[1], 2, 4)) continue;
    TmaMap m;
    std::string w;
    auto o = tma_operand(s, true, m, w);
    if (!o) continue;
    o->map = plan_.map_for(&s, m);
    o->b_operand = false;
    plan_.tma_stores[&s] = *o;
  }
}

// Stage `axis`: the axis information of the pointer of every global load and store of statement s
// (not of its nested statements), as the vector widths are chosen from it.
void KernelEmitter::plan_accesses(const Stmt& s) {
  if (s.kind == StmtKind::Store) {
    plan_.accesses.push_back({&s, s.args[0].get(), true, axis_info(s.args[0]), AxisInfo{}});
    if (opt_.conflict_checks) {  // the offsets from the buffer's start, for the conflict checks' granules
      from_base_ = true;
      plan_.accesses.back().from_base = axis_info(s.args[0]);
      from_base_ = false;
    }
  }
  for (const ExprP& a : s.args) {
    if (!a) continue;
    for_each_expr(a, [&](const Expr& e) {
      if (e.kind == ExprKind::Load) plan_.accesses.push_back({&s, e.args[0].get(), false, axis_info(e.args[0]), AxisInfo{}});
    });
  }
}

// Stage `conflicts` (--sanitize=conflicts): per buffer, whether its claims go through granule words
// (kConflictGranule consecutive elements per 128-bit word, sm_90) or element words only. A granule
// pays off only where one instance and site writes all of it: a granule written by two is demoted
// (its claims go to the element words, after a 128-bit swap and the demoter writing up to 64
// element words), and that in every launch. So a buffer gets granule words only when every site
// writing it is a plain store of a tile whose pointer runs along the last dimension in runs of at
// least kConflictGranule consecutive elements (contig; the last dimension a multiple of it), and
// those runs start on a granule (div of the offsets from the buffer's start) or are at least 8 granules long (then at most the two at the
// ends of a run are shared with another instance). Atomics always use element words (several
// instances' atomics on one element are legal, and would demote the granule), and so does every
// other site of their buffer.
void KernelEmitter::plan_conflicts() {
  const bool sm90 = conflict_granules();
  auto line_of = [](const Stmt& s) { return s.loc.valid() ? "line " + std::to_string(s.loc.line) : std::string("a statement"); };
  for_each_stmt(k_.body, [&](const Stmt& s) {
    if (s.kind != StmtKind::Store && s.kind != StmtKind::Atomic) return;
    const ExprP& pe = s.args[0];
    bool address = false;
    std::vector<const Param*> bufs = buffers_of(pe, &address);
    if (address || bufs.empty()) return;  // not checked (or a failure emission reports)
    std::string why;
    const Type& pt = pe->type;
    const int64_t g = kConflictGranule;
    if (!sm90) {
      why = "no 128-bit atom.cas before sm_90";
    } else if (s.kind == StmtKind::Atomic) {
      why = "atomic at " + line_of(s) + " (several instances' atomics on one element would demote its granule)";
    } else if (bufs.size() > 1) {
      why = "the store at " + line_of(s) + " may write several buffers";
    } else if (pt.is_scalar()) {
      why = "scalar store at " + line_of(s);
    } else {
      AxisInfo ai;
      for (const KernelPlan::Access& a : plan_.accesses)
        if (a.stmt == &s && a.store) ai = a.from_base;
      const int64_t last = pt.shape.back();
      const int64_t run = std::min(ai.contig, last);
      const bool aligned = ai.div >= g * scalar_bytes(pt.elem);
      if (last % g != 0 || run < g)
        why = "the store at " + line_of(s) + " writes runs of " + std::to_string(run) + " consecutive elements (fewer than " + std::to_string(g) +
              " or not whole granules)";
      else if (!aligned && run < 8 * g)
        why = "the store at " + line_of(s) + " writes runs of " + std::to_string(run) + " elements not known to start on a granule";
    }
    for (const Param* p : bufs) {
      auto it = plan_.conflict_words.find(p->name);
      if (it == plan_.conflict_words.end())
        plan_.conflict_words[p->name] = {why.empty(), why.empty() ? "every store at " + line_of(s) : why, std::nullopt};
      else if (!why.empty() && it->second.granules)
        it->second = {false, why, std::nullopt};
      else if (why.empty() && it->second.granules)
        it->second.why += ", " + line_of(s);
    }
  });
  for (DisjointWrites& d : disjoint_writes(k_, &b_)) {
    auto it = plan_.conflict_words.find(k_.params[d.param].name);
    if (it == plan_.conflict_words.end()) continue;
    it->second.disjoint_now = opt_.disjoint_writes && d.holds(k_, b_);
    it->second.disjoint = std::move(d);
  }
}

bool KernelEmitter::conflict_granules(const std::string& buf) const {
  auto it = plan_.conflict_words.find(buf);
  return it != plan_.conflict_words.end() && it->second.granules;
}

// A bound on the shared memory the statements use for values moving between threads (conversions,
// reductions, scans, dot operands, atomics' old values), statements in `skip` aside: computed from
// the types, at least what emission takes (which sizes each use as it is made).
int64_t KernelEmitter::transient_smem(const std::vector<StmtP>& body, const std::set<const Stmt*>& skip) {
  int64_t most = 0;
  auto value = [&](const ExprP& e) {
    const Type& t = e->type;
    if (t.is_scalar() && e->kind != ExprKind::Reduce) return;
    if (e->kind == ExprKind::Dot) {
      int64_t M = e->args[0]->type.shape[0], K = e->args[0]->type.shape[1], N = e->args[1]->type.shape[1];
      int64_t eb = std::max<int64_t>(4, scalar_bytes(e->args[0]->type.elem));
      most = std::max(most, align1024(M * std::max(K + 8, fma_lda(K)) * eb) + K * (N + 8) * eb);
      return;
    }
    if (e->kind == ExprKind::Reduce || e->kind == ExprKind::Scan) {  // partials (value and index) or the scanned lines
      const Type& x = e->args[0]->type;
      most = std::max(most, smem_padded(x.is_scalar() ? 1 : x.numel()) * 12 + 16);
      return;
    }
    if (e->kind == ExprKind::Histogram) most = std::max(most, e->ints[0] * 4);  // the counters
    if (e->kind == ExprKind::Gather) {  // the source tile
      const Type& x = e->args[0]->type;
      most = std::max(most, smem_padded(x.numel()) * smem_bytes(x));
    }
    if (e->kind == ExprKind::Load || recomputable(e)) return;
    most = std::max(most, smem_padded(t.numel()) * smem_bytes(t));
  };
  for_each_stmt(body, [&](const Stmt& s) {
    if (skip.count(&s)) return;
    if (plan_.tma_stores.count(&s)) most = std::max(most, align1024(s.args[0]->type.numel() * 2));  // the boxes
    for (const ExprP& a : s.args) {
      if (!a) continue;
      value(a);
      for_each_expr(a, [&](const Expr& x) {
        for (const ExprP& c : x.args)
          if (c) value(c);
      });
    }
    if (s.kind == StmtKind::Atomic && !s.targets.empty()) {
      Shape shape = s.args[0]->type.shape;
      for (size_t i = 1; i < 3; ++i)
        if (s.args[i]) shape = broadcast_shapes(shape, s.args[i]->type.shape).value_or(shape);
      most = std::max(most, smem_padded(shape_numel(shape)) * 8);
    }
  });
  return most;
}

// Stage `smem`: the pipeline rings at the bottom of the shared buffer while their loop runs, every
// other use above them. Where an FMA ring would leave too little room for the rest of its loop
// under the target's limit, the FMA rings are dropped (those loops then load through registers)
// and the loops are planned again.
void KernelEmitter::plan_smem() {
  SmemPlan& sp = plan_.smem;
  bool reports = opt_.bounds_checks || opt_.conflict_checks;
  for_each_stmt(k_.body, [&](const Stmt& s) { reports = reports || (s.kind == StmtKind::Assert && reports_at_run_time(s)); });
  sp.limit = max_dynamic_smem(plan_.arch) - (reports ? 1024 : 0);
  sp.allocs.clear();
  sp.total = transient_smem(k_.body, {});
  sp.allocs.push_back({"transient (conversions, reductions, dot operands), at most", 0, sp.total});
  std::set<const Stmt*> seen;
  std::string overflow;
  for (const auto& key : plan_.loop_order) {
    LoopPlan& lp = plan_.loops.at(key);
    if (lp.pipeline && lp.pipeline->kind == PipelinePlan::Kind::OperandRings) {
      // The resident A operand at the bottom, the rings above it, the body's other uses above them;
      // fewer stages than asked where that would not fit, the plain loop where 2 would not.
      PipelinePlan& pp = *lp.pipeline;
      int64_t base = lp.resident >= 0 ? lp.resident_bytes : 0, inner = ring_transient(*lp.loop, pp);
      while (pp.stages >= 2 && base + pp.ring_bytes() + inner > sp.limit) --pp.stages;
      if (pp.stages < 2) {
        lp.not_pipelined = "operand rings of 2 stages x " + std::to_string(pp.stage_bytes) + " bytes do not fit in shared memory";
        lp.pipeline.reset();
        if (lp.resident_tma) {  // the ring's thread 0 would have copied it: its load is emitted after all
          plan_.tma_resident_loads.erase(lp.resident_tma->load);
          lp.resident_tma.reset();
          lp.not_resident_tma = "its loop is not pipelined";
        }
      } else {
        if (seen.count(lp.loop)) continue;
        seen.insert(lp.loop);
        std::string where = stmt_line(*lp.loop);
        if (lp.resident >= 0) sp.allocs.push_back({resident_alloc(k_, lp), 0, base});
        if (lp.resident_from) {
          sp.allocs.push_back({"transient between the loops, at most", base, lp.kept_between});
          sp.total = std::max(sp.total, base + lp.kept_between);
        }
        sp.allocs.push_back({"operand rings of " + where + ": " + std::to_string(pp.stages) + " x " + std::to_string(pp.stage_bytes), base,
                             pp.ring_bytes()});
        sp.allocs.push_back({"transient inside it, at most", base + pp.ring_bytes(), inner});
        sp.total = std::max(sp.total, base + pp.ring_bytes() + inner);
        continue;
      }
    }
    if (lp.resident >= 0 && !seen.count(lp.loop)) {
      int64_t inner = transient_smem(lp.loop->body, {});
      sp.allocs.push_back({resident_alloc(k_, lp), 0, lp.resident_bytes});
      if (lp.resident_from) {
        sp.allocs.push_back({"transient between the loops, at most", lp.resident_bytes, lp.kept_between});
        sp.total = std::max(sp.total, lp.resident_bytes + lp.kept_between);
      }
      sp.allocs.push_back({"transient inside it, at most", lp.resident_bytes, inner});
      sp.total = std::max(sp.total, lp.resident_bytes + inner);
    }
    if (!lp.pipeline || seen.count(lp.loop)) continue;
    seen.insert(lp.loop);
    const PipelinePlan& pp = *lp.pipeline;
    int64_t ring = pp.ring_bytes();
    int64_t inner = transient_smem(lp.loop->body, {pp.lx, pp.ly, pp.dot});
    std::string where = stmt_line(*lp.loop);
    sp.allocs.push_back({"ring of " + where + ": " + std::to_string(pp.stages) + " x " + std::to_string(pp.stage_bytes), 0, ring});
    sp.allocs.push_back({"transient inside it, at most", ring, inner});
    sp.total = std::max(sp.total, ring + inner);
    if (plan_.persistent.on && plan_.persistent.loop == lp.loop) {
      sp.allocs.push_back({"transient after it (persistent: above the ring, which fills for the next tile), at most", ring,
                           plan_.persistent.epilogue_bytes});
      sp.total = std::max(sp.total, ring + plan_.persistent.epilogue_bytes);
    }
    if (pp.fma && ring + inner > sp.limit && overflow.empty())
      overflow = "the FMA ring of " + where + " needs " + std::to_string(ring) + " + " + std::to_string(inner) + " bytes (more than " +
                 std::to_string(sp.limit) + ")";
  }
  if (overflow.empty() || !sp.fma_rings) return;
  sp.fma_rings = false;
  sp.fallback = overflow + ": no FMA rings, those loops load their operands through registers";
  std::string why = sp.fallback;
  plan_.loops.clear();
  plan_.loop_order.clear();
  plan_.accesses.clear();
  plan_.tma_maps.clear();
  plan_.tma_map_of.clear();
  plan_.tma_resident_loads.clear();
  plan_.tma_stores.clear();
  plan_loop_stages();
  plan_smem();
  sp.fallback = why;
}

// What became of a schedule option the kernel or a flag asked for: "yes, ..." or "no, why".
std::string KernelPlan::ask_outcome(const std::string& option) const {
  std::vector<const LoopPlan*> rings;
  const LoopPlan* dot_loop = nullptr;
  for (const auto& key : loop_order) {
    const LoopPlan& lp = loops.at(key);
    if (lp.pipeline && lp.pipeline->kind == PipelinePlan::Kind::TmaRing) rings.push_back(&lp);
    else if (!dot_loop && lp.pipeline) dot_loop = &lp;
  }
  if (option == "persistent") return persistent.on ? "yes, a persistent grid" : "no, " + persistent.why;
  for (const LoopPlan* lp : rings) {
    const PipelinePlan& pp = *lp->pipeline;
    if (option == "warp_specialize" && pp.specialized) return "yes, the TMA ring of " + loop_line(*lp->loop) + " has a producer warp";
    if (option == "cluster" && pp.cluster_axis >= 0)
      return "yes, the TMA ring of " + loop_line(*lp->loop) + " runs in clusters of 2 CTAs along grid axis " + std::to_string(pp.cluster_axis);
  }
  if (arch != "sm_90a") return "no, the target is not sm_90a (no TMA ring)";
  if (rings.empty()) {
    if (dot_loop && !dot_loop->pipeline->not_tma.empty()) return "no, no TMA ring: " + dot_loop->pipeline->not_tma;
    if (dot_loop)
      return "no, no TMA ring: the loop of " + loop_line(*dot_loop->loop) +
             (dot_loop->pipeline->kind == PipelinePlan::Kind::OperandRings ? " has operand rings" : " is a cp.async ring") +
             " (a TMA ring is one wgmma dot's loop whose operands are boxes of 2-D row-major tensors)";
    return "no, no TMA ring (no pipelined dot loop)";
  }
  const PipelinePlan& pp = *rings.front()->pipeline;
  const std::string& why = option == "warp_specialize" ? pp.not_specialized : pp.not_cluster;
  return why.empty() ? std::string("no") : "no, " + why;
}

std::string KernelPlan::print(const Kernel& k) const {
  std::string out = "kernel " + k.name + ": " + std::to_string(k.num_warps) + " warps, num_stages " + std::to_string(k.num_stages) +
                    ", target " + arch + "\n";
  const std::pair<const char*, const ScheduleAsk*> opts[] = {
      {"warp_specialize", &asks.warp_specialize}, {"persistent", &asks.persistent}, {"cluster", &asks.cluster}};
  bool any = false;
  for (const auto& [name, a] : opts) any = any || !a->by.empty();
  if (any) out += "  schedule options:\n";
  for (const auto& [name, a] : opts)
    if (!a->by.empty()) out += std::string("    ") + name + ": " + a->by + (a->on ? ": " + ask_outcome(name) : std::string()) + "\n";
  out += "  layouts (tile variables):\n";
  for (int s = 0; s < k.num_slots; ++s) {
    const Type& t = k.slot_types[static_cast<size_t>(s)];
    if (!t.is_tile()) continue;
    const std::string& name = static_cast<size_t>(s) < k.slot_names.size() ? k.slot_names[static_cast<size_t>(s)] : std::string("?");
    out += "    " + name + " " + std::string(t.ptr ? "*" : "") + scalar_name(t.elem) + shape_str(t.shape) + ": " + layouts[static_cast<size_t>(s)].str() + " (assigned " +
           std::to_string(assigns[static_cast<size_t>(s)]) + "x)\n";
  }
  out += "  dots:" + std::string(dot_order.empty() ? " none\n" : "\n");
  for (auto& [st, e] : dot_order) {
    const MmaPlan& p = dots.at(e);
    std::string shape = std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K);
    out += "    " + stmt_line(*st) + "\n      " + (p.ok ? describe(p) : "dot " + shape + ": FMA units (" + p.why + ")") + "\n";
  }
  for_each_stmt(k.body, [&](const Stmt& s) {  // in the kernel's order
    if (true_asserts.count(&s)) out += "  assert holds for these values (not checked at run time): " + stmt_line(s) + "\n";
  });
  if (!true_masks.empty()) {
    out += "  masks true wherever read (a where on them selects nothing):\n";
    for (const auto& [slot, why] : true_masks) out += "    " + k.slot_names[static_cast<size_t>(slot)] + ": " + why + "\n";
  }
  out += "  loops:" + std::string(loop_order.empty() ? " none\n" : "\n");
  for (const auto& key : loop_order) {
    const LoopPlan& lp = loops.at(key);
    out += "    " + stmt_line(*lp.loop) + (lp.unchecked ? "  [unchecked copy]" : "") + "\n";
    out += "      " + lp.loop->targets[0] + ": " + axis_str(lp.k) + "\n";
    if (lp.hoist) {
      out += "      bounds checks hoisted: " + std::to_string(lp.hoist->accesses.size()) + " access(es) tested before the loop";
      if (!lp.hoist->loop.carried.empty()) {
        std::string names;
        for (auto& [slot, c] : lp.hoist->loop.carried) names += (names.empty() ? "" : ", ") + k.slot_names[static_cast<size_t>(slot)];
        out += "; carried pointers " + names;
      }
      out += std::string(lp.hoist->has_k_mask ? "; k-dependent masks" : "") + "\n";
    }
    if (lp.resident >= 0 && lp.resident_from)
      out += "      " + k.slot_names[static_cast<size_t>(lp.resident)] + ": read by wgmma where the loop of " + loop_line(*lp.resident_from) +
             " staged it (kept in shared memory between the loops)\n";
    else if (lp.resident >= 0 && lp.resident_tma)
      out += "      " + k.slot_names[static_cast<size_t>(lp.resident)] + ": copied by TMA into shared memory once before the loop (its load, " +
             loop_line(*lp.resident_tma->load) + ", emits nothing), read there by wgmma" + (lp.resident_kept ? "; kept staged for a later loop" : "") +
             "\n      TMA " + describe(*lp.resident_tma, tma_maps[static_cast<size_t>(lp.resident_tma->map)]) + "\n";
    else if (lp.resident >= 0)
      out += "      " + k.slot_names[static_cast<size_t>(lp.resident)] + ": staged into shared memory once before the loop, read there by wgmma" +
             (lp.resident_kept ? "; kept staged for a later loop" : "") + (lp.not_resident_tma.empty() ? "" : "; not by TMA: " + lp.not_resident_tma) + "\n";
    if (lp.pipeline && lp.pipeline->kind == PipelinePlan::Kind::OperandRings) {
      const PipelinePlan& pp = *lp.pipeline;
      std::string names;
      for (const RingOperand& r : pp.rings)
        names += (names.empty() ? "" : ", ") + r.load->targets[0] + " (B of " + r.dot->targets[0] + (r.kmajor ? ", K-major" : "") + ", " +
                 (r.tma >= 0 ? "TMA" : "cp.async") + ")";
      out += "      pipelined: operand rings of " + std::to_string(pp.stages) + " stages x " + std::to_string(pp.stage_bytes) + " bytes, " +
             names + " copied " + std::to_string(pp.stages - 1) + " iteration(s) ahead, issued while the first dot runs" +
             (pp.tma.empty() ? "" : ", one mbarrier per stage");
      if (!pp.carried.empty()) {
        std::string cn;
        for (auto& [slot, c] : pp.carried) cn += (cn.empty() ? "" : ", ") + k.slot_names[static_cast<size_t>(slot)];
        out += "; " + cn + " computed from " + lp.loop->targets[0];
      }
      out += "\n";
      for (const RingOperand& r : pp.rings)
        out += r.tma >= 0 ? "      TMA " + describe(pp.tma[static_cast<size_t>(r.tma)], tma_maps[static_cast<size_t>(pp.tma[static_cast<size_t>(r.tma)].map)]) + "\n"
                          : "      cp.async " + r.load->targets[0] + ": " + r.not_tma + "\n";
    } else if (lp.pipeline) {
      const PipelinePlan& pp = *lp.pipeline;
      bool tma = pp.kind == PipelinePlan::Kind::TmaRing;
      out += "      pipelined: " + std::string(tma ? "TMA" : "cp.async") + " ring of " + std::to_string(pp.stages) + " stages x " +
             std::to_string(pp.stage_bytes) + " bytes, " + pp.lx->targets[0] + " and " + pp.ly->targets[0] + " copied " +
             std::to_string(pp.stages - 1) + " iteration(s) ahead" + (!tma ? "" : pp.specialized ? " by a producer warp (warp num_warps, one more than the kernel's), full and empty mbarriers per stage" : pp.cluster_axis >= 0 ? " by thread 0, full and empty mbarriers per stage" : " by thread 0, one mbarrier per stage") + "; dot on " +
             (pp.fma ? std::string("FMA units") : pp.mma.wgmma ? "wgmma" : "mma.sync");
      if (!pp.carried.empty()) {
        std::string names;
        for (auto& [slot, c] : pp.carried) names += (names.empty() ? "" : ", ") + k.slot_names[static_cast<size_t>(slot)];
        out += "; " + names + " computed from " + lp.loop->targets[0];
      }
      out += "\n";
      for (const TmaOperand& o : pp.tma) out += "      TMA " + describe(o, tma_maps[static_cast<size_t>(o.map)]) + "\n";
      if (tma && !pp.not_specialized.empty()) out += "      not warp-specialized: " + pp.not_specialized + "\n";
      if (tma && pp.cluster_axis >= 0) {
        const TmaOperand& o = pp.tma[static_cast<size_t>(pp.cluster_operand)];
        out += "      cluster: 2 CTAs along grid axis " + std::to_string(pp.cluster_axis) + " (program_id(" + std::to_string(pp.cluster_axis) +
               ") 2c and 2c + 1) share " + o.load->targets[0] + ": each copies half of its box and multicasts it to both; " +
               (pp.specialized ? std::string("the producer refills a stage once both CTAs' consumer warps released it (remote arrive)")
                               : "thread 0 refills a stage once both CTAs released it, an iteration later (copies " + std::to_string(pp.stages - 2) +
                                     " iteration(s) ahead)") +
               "; checked at run time, whole boxes where the two differ\n";
      }
      if (tma && !pp.not_cluster.empty()) out += "      no cluster: " + pp.not_cluster + "\n";
      if (!pp.not_tma.empty()) out += "      no TMA: " + pp.not_tma + "\n";
    } else if (!lp.prefetch.empty()) {
      std::string names;
      for (const Stmt* st : lp.prefetch) names += (names.empty() ? "" : ", ") + st->targets[0];
      out += "      not pipelined (" + lp.not_pipelined + ")\n      prefetched into registers one iteration ahead: " + names + "\n";
    } else {
      out += "      not pipelined (" + lp.not_pipelined + "), no prefetch\n";
    }
  }
  if (persistent.on || (!dot_order.empty() && (arch == "sm_90a" || persistent.asked))) {
    out += "  persistent grid: " + std::string(persistent.on ? "yes (" : "no (") + persistent.why + ")\n";
    if (persistent.on) {
      out += "    CTAs: min(" + (persistent.tiles ? std::to_string(persistent.tiles) : std::string("the grid's")) +
             " tiles, SMs x CTAs per SM), each walking program ids t, t + CTAs, ... (axis 0 fastest); the producer warp fills the ring of " +
             stmt_line(*persistent.loop) + " across tiles" +
             (persistent.direct_stores ? std::string()
                                       : ", the epilogue (" + std::to_string(persistent.epilogue_bytes) + " bytes of shared memory) above the ring") +
             "\n";
      if (persistent.direct_stores)
        out += "    epilogue: tile stores from the layout their values are held in (no exchange tile), so the ring keeps its stages\n";
      if (persistent.stages_from)
        out += "    ring stages " + std::to_string(persistent.stages_from) + " -> " +
               std::to_string(loops.at({persistent.loop, false}).pipeline->stages) + ": the ring and the epilogue fit together\n";
    }
  }
  out += "  global accesses (pointer axis info):" + std::string(accesses.empty() ? " none\n" : "\n");
  for (const Access& a : accesses)
  {
    out += "    " + std::string(a.store ? "store" : "load") + " of " + stmt_line(*a.stmt) + "\n      " + axis_str(a.info) + "\n";
    auto ts = a.store ? tma_stores.find(a.stmt) : tma_stores.end();
    if (ts != tma_stores.end())
      out += "      by TMA from shared memory: " + describe(ts->second, tma_maps[static_cast<size_t>(ts->second.map)]) + "\n";
  }
  if (!conflict_words.empty()) {
    out += "  conflict checks (per buffer written):\n";
    for (const auto& [name, cw] : conflict_words)
    {
      out += "    " + name + ": " + (cw.granules ? "granule words (" : "element words only (") + cw.why + ")\n";
      if (cw.disjoint)
        out += std::string("      ") + (cw.disjoint_now ? "no claims: " : cw.disjoint->why.empty() ? "claimed: not for these values: " : "claimed: ") +
               cw.disjoint->summary() + "\n";
    }
  }
  out += "  shared memory (limit " + std::to_string(smem.limit) + " bytes):\n";
  for (const SmemPlan::Alloc& al : smem.allocs)
    out += "    " + al.what + ": offset " + std::to_string(al.offset) + ", " + std::to_string(al.bytes) + " bytes\n";
  out += "    planned total: at most " + std::to_string(smem.total) + " bytes\n";
  if (!smem.fallback.empty()) out += "    fallback: " + smem.fallback + "\n";
  return out;
}

}  // namespace dtsim::nvvm
