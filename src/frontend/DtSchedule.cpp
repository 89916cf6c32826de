// Random legal schedules (for the property test and the differential tester) and printing a program
// back as `.dt` text (a self-contained reproduction of a schedule).
#include <algorithm>
#include <random>
#include <sstream>

#include "frontend/DtAst.h"

namespace dtsim {

namespace {
// The shortest decimal text that reads back as exactly `v`.
std::string shortest(double v) {
  for (int prec = 6; prec <= 17; ++prec) {
    std::ostringstream os;
    os.precision(prec);
    os << v;
    if (std::stod(os.str()) == v) return os.str();
  }
  return std::to_string(v);
}
}  // namespace

// The whole program as `.dt` text: declarations with sizes, types and defaults, definitions, schedule.
std::string dt_program_text(const DtProgram& p) {
  std::ostringstream os;
  for (const DtSymbol& s : p.syms) {
    os << dt_sym_kind_name(s.kind) << " " << s.name;
    switch (s.kind) {
      case DtSymKind::Func:
      case DtSymKind::In:
        if (s.dtype != Scalar::F32) os << ": " << scalar_name(s.dtype);
        break;
      case DtSymKind::SIn:
        if (s.dtype != Scalar::F32) os << ": " << scalar_name(s.dtype);
        os << " = " << shortest(s.value);
        break;
      case DtSymKind::Var:
      case DtSymKind::RVar: os << " = " << s.size; break;
    }
    os << ";\n";
  }
  for (const std::string& f : p.def_order) {
    const DtSymbol& s = p.sym(f);
    os << f << "[";
    for (size_t i = 0; i < s.dims.size(); ++i) os << (i ? ", " : "") << s.dims[i];
    os << "] = " << dt_expr_str(s.def) << ";\n";
  }
  for (const DtSchedCall& c : p.calls) os << dt_call_str(c) << "\n";
  return os.str();
}

void dt_reduced_dims(const DtExprP& e, std::vector<std::string>& out) {
  if (e->kind == DtExprKind::Call && dt_is_reduction(e->name)) out.push_back(e->args.back()->name);
  for (auto& a : e->args) dt_reduced_dims(a, out);
}

void dt_dims_used(const DtExprP& e, std::set<std::string>& out) {
  if (e->kind == DtExprKind::Name && e->is_dim) out.insert(e->name);
  if (e->kind == DtExprKind::Access) {
    for (auto& ix : e->args) out.insert(ix->name);
    return;
  }
  if (e->kind == DtExprKind::Call && (dt_is_reduction(e->name) || e->name == "len")) out.insert(e->args.back()->name);
  if (e->kind == DtExprKind::Call && (e->name == "len" || e->name == "reshape")) {
    if (e->name == "reshape") dt_dims_used(e->args[0], out);
    return;
  }
  for (auto& a : e->args) dt_dims_used(a, out);
}

namespace {

DtSchedArg arg(const std::string& n, int64_t v, bool has_value = true) {
  DtSchedArg a;
  a.name = n;
  a.value = v;
  a.has_value = has_value;
  return a;
}

DtSchedCall call(const std::string& f, const std::string& prim, std::vector<DtSchedArg> args) {
  DtSchedCall c;
  c.func = f;
  c.prim = prim;
  c.args = std::move(args);
  return c;
}

class Randomizer {
 public:
  Randomizer(const DtProgram& p, uint64_t seed, const std::map<std::string, std::string>& args) : p_(p), rng_(seed), args_(args) {}

  std::shared_ptr<DtProgram> attempt() {
    auto q = std::make_shared<DtProgram>(p_);
    // One random size per class of tied dims, then the sizes the caller fixed.
    std::map<std::string, std::string> root = dt_size_classes(p_);
    std::map<std::string, int64_t> drawn;
    for (DtSymbol& s : q->syms)
      if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) drawn[s.name] = pick_size();
    for (DtSymbol& s : q->syms)
      if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) {
        s.size = drawn.at(root.at(s.name));
        s.has_default = true;
      }
    (void)bind_dt_sizes(*q, args_);
    std::vector<DtSchedCall> calls;
    std::set<std::string> fused;
    for (const std::string& f : p_.def_order) {
      const DtSymbol& s = p_.sym(f);
      if (s.sched.compiled || !coin(0.6)) continue;
      std::vector<std::string> consumers;
      for (const std::string& g : p_.def_order) {
        std::set<std::string> r;
        dt_collect_reads(p_.sym(g).def, r);
        if (r.count(f)) consumers.push_back(g);
      }
      if (consumers.empty()) continue;
      const DtSymbol& c = p_.sym(consumers[pick(consumers.size())]);
      std::vector<std::string> levels = c.dims;
      dt_reduced_dims(c.def, levels);
      calls.push_back(call(f, "fuse_at", {arg(c.name, 0, false), arg(levels[pick(levels.size())], 0, false)}));
      fused.insert(f);
      fuse_into_[f] = c.name;
    }
    for (const std::string& f : p_.def_order)
      if (!fused.count(f)) schedule_kernel(p_.sym(f), kernel_dims(f), calls);
    for (const DtSchedCall& c : p_.calls)
      if (c.prim == "compile" || c.prim == "compile_to_kernel") calls.push_back(c);
    q->calls = calls;
    dt_apply_schedule(*q);
    (void)lower_dt(*q);
    return q;
  }

 private:
  const DtProgram& p_;
  std::mt19937_64 rng_;
  const std::map<std::string, std::string>& args_;  // sizes fixed by the caller

  std::map<std::string, std::string> fuse_into_;  // this draw's fusions

  // Every dim used by the kernel of `f`: its own and those of the Funcs fused into it.
  std::set<std::string> kernel_dims(const std::string& f) {
    std::set<std::string> out;
    for (const std::string& g : p_.def_order) {
      std::string r = g;
      while (fuse_into_.count(r)) r = fuse_into_[r];
      if (r != f) continue;
      const DtSymbol& s = p_.sym(g);
      out.insert(s.dims.begin(), s.dims.end());
      dt_dims_used(s.def, out);
    }
    return out;
  }

  bool coin(double pr) { return std::uniform_real_distribution<double>(0, 1)(rng_) < pr; }
  size_t pick(size_t n) { return static_cast<size_t>(std::uniform_int_distribution<size_t>(0, n - 1)(rng_)); }
  int64_t pick_size() {
    static const int64_t choices[] = {1, 3, 5, 7, 8, 12, 16, 17, 24, 31, 33, 40};
    return choices[pick(sizeof(choices) / sizeof(choices[0]))];
  }

  void schedule_kernel(const DtSymbol& f, const std::set<std::string>& kdims, std::vector<DtSchedCall>& calls) {
    std::vector<std::string> red;
    dt_reduced_dims(f.def, red);
    std::vector<DtSchedArg> blocks;
    std::map<std::string, int64_t> block_of;
    for (const std::string& d : f.dims) {
      if (!coin(0.6) || std::find(red.begin(), red.end(), d) != red.end()) continue;
      static const int64_t bs[] = {1, 2, 4, 8, 16, 32};
      int64_t b = bs[pick(6)];
      blocks.push_back(arg(d, b));
      block_of[d] = b;
    }
    if (!blocks.empty()) calls.push_back(call(f.name, "block", blocks));
    std::vector<DtSchedArg> tiles;
    for (const DtSymbol& s : p_.syms) {
      if ((s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar) || !kdims.count(s.name) || !coin(0.7)) continue;
      int64_t limit = block_of.count(s.name) ? block_of[s.name] : 32;
      if (coin(0.25)) { tiles.push_back(arg(s.name, 0)); continue; }
      std::vector<int64_t> opts;
      for (int64_t t = 1; t <= limit; t *= 2) opts.push_back(t);
      tiles.push_back(arg(s.name, opts[pick(opts.size())]));
    }
    if (!tiles.empty()) calls.push_back(call(f.name, "tensorize", tiles));
    if (blocks.size() >= 1 && coin(0.5)) {
      std::vector<std::string> order;
      for (auto& b : blocks) order.push_back(b.name);
      std::shuffle(order.begin(), order.end(), rng_);
      std::vector<DtSchedArg> items;
      bool split = coin(0.5);
      for (size_t i = 0; i < order.size(); ++i) {
        if (split && i == 0) {
          DtSchedArg a;
          a.name = order[0];
          a.inner = order[0] + "_in";
          a.factor = coin(0.5) ? 2 : 3;
          items.push_back(a);
        } else {
          items.push_back(arg(order[i], 0, false));
        }
      }
      if (split) items.push_back(arg(order[0] + "_in", 0, false));
      calls.push_back(call(f.name, "map", items));
    }
    if (coin(0.3)) calls.push_back(call(f.name, "num_warps", {arg("", int64_t(1) << pick(4))}));
  }
};

}  // namespace

std::shared_ptr<DtProgram> with_random_schedule(const DtProgram& p, uint64_t seed, std::string* description,
                                                std::map<std::string, int64_t>* sizes_out, const std::map<std::string, std::string>& args) {
  {
    DtProgram probe = p;
    (void)bind_dt_sizes(probe, args);  // a bad or conflicting size is the caller's error, not an illegal draw
  }
  std::shared_ptr<DtProgram> q;
  for (uint64_t attempt = 0; attempt < 200 && !q; ++attempt) {
    try {
      q = Randomizer(p, seed * 1000003 + attempt, args).attempt();
    } catch (const UserError&) {
      q = nullptr;  // an illegal combination: draw again
    }
  }
  if (!q) {  // the default schedule is always legal
    q = std::make_shared<DtProgram>(p);
    (void)bind_dt_sizes(*q, args);
    std::vector<DtSchedCall> calls;
    for (const DtSchedCall& c : p.calls)
      if (c.prim == "compile" || c.prim == "compile_to_kernel") calls.push_back(c);
    q->calls = calls;
    dt_apply_schedule(*q);
  }
  if (sizes_out) {
    sizes_out->clear();
    for (const DtSymbol& s : q->syms)
      if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) (*sizes_out)[s.name] = s.size;
  }
  if (description) *description = dt_program_text(*q);
  return q;
}

}  // namespace dtsim
