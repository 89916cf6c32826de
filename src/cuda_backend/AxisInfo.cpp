// Axis analysis of the CUDA backend (see AxisInfo.h): contiguity, divisibility and constancy of
// integer and pointer expressions along their last dimension, from the expression tree, the bound
// parameter values and the loops' bounds.
#include "cuda_backend/KernelEmitter.h"

namespace dtsim::nvvm {

namespace {

int64_t last_extent(const Type& t) { return t.is_scalar() ? 1 : t.shape.back(); }

// An operand that broadcasts along the result's last dimension is constant along it.
AxisInfo broadcast_last(AxisInfo a, const Type& operand, const Type& result) {
  if (result.is_tile() && last_extent(operand) == 1 && last_extent(result) != 1) return AxisInfo{1, a.div, AxisInfo::kMax};
  return a;
}

// a + b (or a - b) along the last dimension; pa/pb: the operand is a pointer (its div is in bytes,
// an integer added to it counts elements of `bytes` bytes).
AxisInfo add_info(AxisInfo a, AxisInfo b, bool pa, bool pb, int64_t bytes, bool sub) {
  int64_t contig = std::min(a.contig, b.cst);
  if (!sub) contig = std::max(contig, std::min(b.contig, a.cst));
  int64_t da = a.div, db = b.div;
  if (pa && !pb) db = std::min(AxisInfo::kMax, db * bytes);  // element offset -> bytes
  if (pb && !pa) da = std::min(AxisInfo::kMax, da * bytes);
  return AxisInfo{contig, std::min(da, db), std::min(a.cst, b.cst)};
}

bool assigns_value(const std::vector<StmtP>& body, const Expr* value) {
  for (auto& s : body) {
    if (s->kind == StmtKind::Assign && !s->args.empty() && s->args[0].get() == value) return true;
    if (assigns_value(s->body, value) || assigns_value(s->orelse, value)) return true;
  }
  return false;
}

bool reads_slot(const ExprP& e, int slot) {
  if (!e) return false;
  if (e->kind == ExprKind::Var && e->slot == slot) return true;
  for (auto& a : e->args)
    if (reads_slot(a, slot)) return true;
  return false;
}

}  // namespace

const ExprP* KernelEmitter::advance_step(const ExprP& v, int slot) {
  if (v->kind != ExprKind::Binary || v->bop != BinOp::Add) return nullptr;
  for (int side = 0; side < 2; ++side) {
    const ExprP& self = v->args[static_cast<size_t>(side)];
    const ExprP& c = v->args[static_cast<size_t>(1 - side)];
    if (self->kind == ExprKind::Var && self->slot == slot && !c->type.ptr) return &c;
  }
  return nullptr;
}

std::optional<KernelEmitter::CarriedForm> KernelEmitter::carried_form(int slot) const {
  const size_t s = static_cast<size_t>(slot);
  if (slot < 0 || s >= plan_.assigns.size() || plan_.assigns[s] != 2 || plan_.defs[s].size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const ExprP& other = plan_.defs[s][static_cast<size_t>(1 - i)];
    const ExprP* c = advance_step(plan_.defs[s][static_cast<size_t>(i)], slot);
    if (c && !reads_slot(*c, slot) && !reads_slot(other, slot) && other->type == plan_.defs[s][static_cast<size_t>(i)]->type)
      return CarriedForm{&other, &plan_.defs[s][static_cast<size_t>(i)]};
  }
  return std::nullopt;
}

std::optional<KernelEmitter::CarriedForm> KernelEmitter::loop_advance(const Stmt& f, const Stmt& st) const {
  if (st.kind != StmtKind::Assign || st.slots.size() != 1) return std::nullopt;
  auto form = carried_form(st.slots[0]);
  if (!form || form->advance->get() != st.args[0].get() || assigns_value(f.body, form->init->get())) return std::nullopt;
  return form;
}

// A variable assigned `v = init` and `v = v + c` (Triton's `a_ptrs += BK` in a loop): every value it
// takes is init + m * c, so what holds for init + c (and for init) holds for all of them. Null when
// the slot is not of that form.
std::optional<AxisInfo> KernelEmitter::carried_axis_info(int slot, const Type& t) {
  auto f = carried_form(slot);
  if (!f || axis_busy_.count(slot) || !((*f->init)->type == t)) return std::nullopt;
  const ExprP& step = *advance_step(*f->advance, slot);
  axis_busy_.insert(slot);
  AxisInfo a = axis_info(*f->init), c = broadcast_last(axis_info(step), step->type, t);
  axis_busy_.erase(slot);
  AxisInfo sum = add_info(a, c, t.ptr, false, scalar_bytes(t.elem), false);
  return AxisInfo{std::min(a.contig, sum.contig), std::min(a.div, sum.div), std::min(a.cst, sum.cst)};
}

AxisInfo KernelEmitter::axis_info(const ExprP& e) {
  const Type& t = e->type;
  AxisInfo unknown = t.is_scalar() ? AxisInfo::scalar(1) : AxisInfo{};
  if (t.is_scalar() && !t.ptr && is_float(t.elem)) return unknown;
  auto arg = [&](size_t i) { return broadcast_last(axis_info(e->args[i]), e->args[i]->type, t); };
  switch (e->kind) {
    case ExprKind::Const: return AxisInfo::scalar(e->is_float ? 1 : pow2_factor(e->ival));
    case ExprKind::Var: {
      const Param* p = k_.find_param(e->name);
      if (p && p->slot == e->slot) {
        if (p->kind == ParamKind::Pointer) return AxisInfo::scalar(from_base_ ? AxisInfo::kMax : 16);
        auto it = b_.find(p->name);
        if (it == b_.end() || it->second.is_float()) return unknown;
        int64_t d = pow2_factor(it->second.as_int());
        return AxisInfo::scalar(p->kind == ParamKind::Constexpr ? d : std::min<int64_t>(d, 16));
      }
      auto li = loop_info_.find(e->slot);
      if (li != loop_info_.end()) return li->second;
      if (stable_scalar(e->slot)) {
        const ExprP& d = plan_.single_def[static_cast<size_t>(e->slot)];
        if (d) return axis_info(d);
      }
      if (auto c = carried_axis_info(e->slot, t)) return *c;
      return unknown;
    }
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms: return AxisInfo::scalar(1);
    case ExprKind::Arange: return AxisInfo{e->ints[1] - e->ints[0], pow2_factor(e->ints[0]), 1};
    case ExprKind::Full: {
      AxisInfo v = axis_info(e->args.back());
      return AxisInfo{1, v.div, AxisInfo::kMax};
    }
    case ExprKind::Cast: {
      AxisInfo a = axis_info(e->args[0]);
      if (is_float(e->dtype) || is_float(e->args[0]->type.elem)) return AxisInfo{1, 1, a.cst};
      if (e->dtype == Scalar::I1) return AxisInfo{1, 1, a.cst};
      return a;
    }
    case ExprKind::Binary: {
      AxisInfo a = arg(0), b = arg(1);
      int64_t cst = std::min(a.cst, b.cst);
      bool pa = e->args[0]->type.ptr, pb = e->args[1]->type.ptr;
      int64_t bytes = scalar_bytes(t.elem);
      switch (e->bop) {
        case BinOp::Add:
        case BinOp::Sub: return add_info(a, b, pa, pb, bytes, e->bop == BinOp::Sub);
        case BinOp::Mul: return AxisInfo{1, std::min(AxisInfo::kMax, a.div * b.div), cst};
        case BinOp::Shl:
          if (e->args[1]->kind == ExprKind::Const && e->args[1]->ival >= 0 && e->args[1]->ival < 30)
            return AxisInfo{1, std::min(AxisInfo::kMax, a.div << e->args[1]->ival), cst};
          return AxisInfo{1, 1, cst};
        case BinOp::Lt:
        case BinOp::Le:
        case BinOp::Gt:
        case BinOp::Ge:
        case BinOp::Eq:
        case BinOp::Ne: {
          // x < n and x >= n over a run of consecutive x starting at a multiple of g, with n a multiple
          // of g constant over the run, give one answer over the run (x <= n and x == n do not).
          int64_t g = 1;
          bool left = e->bop == BinOp::Lt || e->bop == BinOp::Ge;   // the run is on the left
          bool right = e->bop == BinOp::Gt || e->bop == BinOp::Le;  // n < x, n >= x
          if (left) g = std::min({a.contig, a.div, b.div, b.cst});
          if (right) g = std::min({b.contig, b.div, a.div, a.cst});
          return AxisInfo{1, 1, std::max(cst, g)};
        }
        case BinOp::Div:
        case BinOp::FloorDiv:
        case BinOp::Mod:
        case BinOp::And:
        case BinOp::Or:
        case BinOp::Xor:
        case BinOp::Shr:
        case BinOp::LAnd:
        case BinOp::LOr:
        case BinOp::Min:
        case BinOp::Max:
        case BinOp::MinNum:
        case BinOp::MaxNum:
        case BinOp::Cdiv:
        DT_MATH_BINOP_CASES return AxisInfo{1, 1, cst};
      }
      return unknown;
    }
    case ExprKind::Where: {
      AxisInfo c = arg(0), a = arg(1), b = arg(2);
      return AxisInfo{1, 1, std::min({c.cst, a.cst, b.cst})};
    }
    case ExprKind::Unary: return AxisInfo{1, 1, axis_info(e->args[0]).cst};
    case ExprKind::ExpandDims: {
      AxisInfo a = axis_info(e->args[0]);
      // x[:, None]: each element becomes a run of its own, so only what divides every element
      // holds (consecutive values share no factor: 1 when x had runs longer than one).
      if (static_cast<size_t>(e->ints[0]) == t.shape.size() - 1) return AxisInfo{1, a.contig > 1 ? 1 : a.div, AxisInfo::kMax};
      return a;
    }
    case ExprKind::Broadcast: return arg(0);
    case ExprKind::Reshape: {
      AxisInfo a = axis_info(e->args[0]);
      int64_t nl = last_extent(t), ol = last_extent(e->args[0]->type);
      if (nl > ol) return AxisInfo{1, 1, 1};
      // Rows of a longer run start nl apart: only a divisor of nl holds at every row start.
      return AxisInfo{std::min(a.contig, nl), a.contig > nl ? std::min(a.div, nl) : a.div, std::min(a.cst, nl)};
    }
    case ExprKind::Trans:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: return unknown;
    case ExprKind::Bitcast: return AxisInfo{1, 1, axis_info(e->args[0]).cst};
  }
  return unknown;
}

}  // namespace dtsim::nvvm
