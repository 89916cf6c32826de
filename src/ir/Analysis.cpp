// Pointer provenance and buffer access (see Analysis.h).
#include "ir/Analysis.h"

#include <algorithm>

#include "ir/Walk.h"

namespace dtsim {

bool ParamSet::merge(const ParamSet& o) {
  bool grew = false;
  if (o.bits_.size() > bits_.size()) bits_.resize(o.bits_.size(), false);
  for (size_t i = 0; i < o.bits_.size(); ++i)
    if (o.bits_[i] && !bits_[i]) bits_[i] = grew = true;
  return grew;
}

bool ParamSet::empty() const {
  for (bool b : bits_)
    if (b) return false;
  return true;
}

std::vector<size_t> ParamSet::list() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < bits_.size(); ++i)
    if (bits_[i]) out.push_back(i);
  return out;
}

PointerProvenance::PointerProvenance(const Kernel& k) : k_(k), slots_(static_cast<size_t>(std::max(k.num_slots, 0)), ParamSet(k.params.size())) {
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].kind == ParamKind::Pointer && k.params[i].slot >= 0) slots_.at(static_cast<size_t>(k.params[i].slot)).add(i);
  // Assignments only ever add sources, so this ends (each round adds one at least).
  for (bool changed = true; changed;) {
    changed = false;
    for_each_stmt(k, [&](const Stmt& s) {
      if (s.kind != StmtKind::Assign || s.targets.size() != 1 || s.slots.empty()) return;
      ParamSet m = sources(*s.args[0]);
      if (slots_.at(static_cast<size_t>(s.slots[0])).merge(m)) changed = true;
    });
  }
}

ParamSet PointerProvenance::sources(const Expr& e) const {
  ParamSet out(k_.params.size());
  if (!e.type.ptr) return out;
  switch (e.kind) {
    case ExprKind::Var:
      if (e.slot >= 0) out.merge(slots_.at(static_cast<size_t>(e.slot)));
      return out;
    case ExprKind::Binary:
    case ExprKind::Where:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
      for (const ExprP& a : e.args)
        if (a) out.merge(sources(*a));
      return out;
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::Unary:
    case ExprKind::Cast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:  // never of pointers (verify)
    case ExprKind::Histogram:
      return out;
    case ExprKind::IntToPtr:  // an address may lie in any buffer
      for (size_t i = 0; i < k_.params.size(); ++i)
        if (k_.params[i].kind == ParamKind::Pointer) out.add(i);
      return out;
  }
  return out;
}

ParamSet BufferAccess::reads() const {
  ParamSet s = loaded;
  s.merge(atomic);
  return s;
}

ParamSet BufferAccess::writes() const {
  ParamSet s = stored;
  s.merge(atomic);
  return s;
}

BufferAccess buffer_access(const Kernel& k, const PointerProvenance& prov) {
  BufferAccess a{ParamSet(k.params.size()), ParamSet(k.params.size()), ParamSet(k.params.size())};
  for_each_expr(k, [&](const Expr& e) {
    if (e.kind == ExprKind::Load) a.loaded.merge(prov.sources(*e.args[0]));
  });
  for_each_stmt(k, [&](const Stmt& s) {
    if (s.kind == StmtKind::Store) a.stored.merge(prov.sources(*s.args[0]));
    if (s.kind == StmtKind::Atomic) a.atomic.merge(prov.sources(*s.args[0]));
  });
  return a;
}

BufferAccess buffer_access(const Kernel& k) { return buffer_access(k, PointerProvenance(k)); }

int64_t param_bytes(const Param& p, const Bindings& b) {
  int64_t n = scalar_bytes(p.dtype);
  for (const ExprP& d : p.shape) n *= eval_param_expr(d, b).as_int();
  return n;
}

std::vector<BufferUse> kernel_buffers(const Kernel& k, const Bindings& b) {
  BufferAccess a = buffer_access(k);
  ParamSet r = a.reads(), w = a.writes();
  std::vector<BufferUse> out;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!r.has(i) && !w.has(i)) continue;
    out.push_back(BufferUse{k.params[i].name, i, r.has(i), w.has(i), param_bytes(k.params[i], b)});
  }
  return out;
}

}  // namespace dtsim
