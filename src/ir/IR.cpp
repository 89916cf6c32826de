// The tile IR: names, builders and deep copies. Semantics are documented in IR.h.
#include "ir/IR.h"

#include <cstdio>
#include <sstream>

namespace dtsim {

const char* scalar_name(Scalar s) {
  switch (s) {
#define X(e, str, b) \
  case Scalar::e:    \
    return str;
    DT_FOR_EACH_SCALAR(X)
#undef X
  }
  return "?";
}

int scalar_bytes(Scalar s) {
  switch (s) {
#define X(e, str, b) \
  case Scalar::e:    \
    return b;
    DT_FOR_EACH_SCALAR(X)
#undef X
  }
  return 0;
}

std::optional<Scalar> parse_scalar(const std::string& s) {
#define X(e, str, b) \
  if (s == str) return Scalar::e;
  DT_FOR_EACH_SCALAR(X)
#undef X
  if (s == "bool") return Scalar::I1;
  return std::nullopt;
}

int64_t shape_numel(const Shape& s) {
  for (int64_t d : s)
    if (d == 0) return 0;  // before multiplying: the other extents of an empty shape may overflow
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string Type::str() const {
  std::string out = ptr ? "*" : "";
  out += scalar_name(elem);
  if (!shape.empty()) out += shape_str(shape);
  return out;
}

const char* expr_kind_name(ExprKind k) {
  switch (k) {
#define X(e) \
  case ExprKind::e: return #e;
    DT_FOR_EACH_EXPR(X)
#undef X
  }
  return "?";
}

namespace {
#define DT_OP_ROW_(e, name, cat, rule, form, prec, py, dt) \
  OpInfo{name, OpCat::cat, TypeRule::rule, OpForm::form, Prec::prec, py, dt},
constexpr OpInfo kUnOps[] = {DT_FOR_EACH_UNOP(DT_OP_ROW_)};
constexpr OpInfo kBinOps[] = {DT_FOR_EACH_BINOP(DT_OP_ROW_)};
constexpr OpInfo kRedOps[] = {DT_FOR_EACH_REDOP(DT_OP_ROW_)};
#undef DT_OP_ROW_
}  // namespace

const OpInfo& op_info(UnOp op) { return kUnOps[static_cast<size_t>(op)]; }
const OpInfo& op_info(BinOp op) { return kBinOps[static_cast<size_t>(op)]; }
const OpInfo& op_info(RedOp op) { return kRedOps[static_cast<size_t>(op)]; }

std::optional<Scalar> op_result_elem(TypeRule rule, Scalar t) {
  switch (rule) {
    case TypeRule::Numeric: return t == Scalar::I1 ? Scalar::I32 : t;
    case TypeRule::FloatFn: return is_float(t) ? t : Scalar::F32;
    case TypeRule::IntOnly:
      if (is_float(t)) return std::nullopt;
      return t == Scalar::I1 ? Scalar::I32 : t;
    case TypeRule::Bits:
      if (is_float(t)) return std::nullopt;
      return t;
    case TypeRule::ToBool: return Scalar::I1;
    case TypeRule::SumAcc:
      if (t == Scalar::I1 || is_narrow_int(t)) return Scalar::I32;
      return (is_fp8(t) || t == Scalar::F16 || t == Scalar::BF16) ? Scalar::F32 : t;
    case TypeRule::Keep: return t;
    case TypeRule::Index: return Scalar::I32;
  }
  return t;
}

const char* unop_name(UnOp op) { return op_info(op).name; }
bool unop_is_math(UnOp op) { return op_info(op).cat == OpCat::Math; }
const char* binop_name(BinOp op) { return op_info(op).name; }
bool binop_is_compare(BinOp op) { return op_info(op).cat == OpCat::Compare; }
bool binop_is_call(BinOp op) { return op_info(op).form == OpForm::Call; }
const char* redop_name(RedOp op) { return op_info(op).name; }

namespace {
struct NamePy {
  const char* name;
  const char* py;
};
#define DT_NAME_PY_ROW_(e, name, py) NamePy{name, py},
constexpr NamePy kScanOps[] = {DT_FOR_EACH_SCANOP(DT_NAME_PY_ROW_)};
constexpr NamePy kAtomicOps[] = {DT_FOR_EACH_ATOMICOP(DT_NAME_PY_ROW_)};
#undef DT_NAME_PY_ROW_
#define DT_NAME_ROW_(e, s) s,
constexpr const char* kMemSems[] = {DT_FOR_EACH_MEMSEM(DT_NAME_ROW_)};
constexpr const char* kMemScopes[] = {DT_FOR_EACH_MEMSCOPE(DT_NAME_ROW_)};
#undef DT_NAME_ROW_
}  // namespace

const char* scanop_name(ScanOp op) { return kScanOps[static_cast<size_t>(op)].name; }
const char* scanop_py(ScanOp op) { return kScanOps[static_cast<size_t>(op)].py; }
const char* atomicop_name(AtomicOp op) { return kAtomicOps[static_cast<size_t>(op)].name; }
const char* atomicop_py(AtomicOp op) { return kAtomicOps[static_cast<size_t>(op)].py; }
const char* memsem_name(MemSem s) { return kMemSems[static_cast<size_t>(s)]; }
const char* memscope_name(MemScope s) { return kMemScopes[static_cast<size_t>(s)]; }
std::optional<MemSem> parse_memsem(const std::string& s) {
  for (size_t i = 0; i < std::size(kMemSems); ++i)
    if (s == kMemSems[i]) return static_cast<MemSem>(i);
  return std::nullopt;
}
std::optional<MemScope> parse_memscope(const std::string& s) {
  for (size_t i = 0; i < std::size(kMemScopes); ++i)
    if (s == kMemScopes[i]) return static_cast<MemScope>(i);
  return std::nullopt;
}

const char* stmt_kind_name(StmtKind k) {
  switch (k) {
#define X(e) \
  case StmtKind::e: return #e;
    DT_FOR_EACH_STMT(X)
#undef X
  }
  return "?";
}

const char* bufio_name(BufIO io) {
  switch (io) {
    case BufIO::In: return "in";
    case BufIO::Out: return "out";
    case BufIO::InOut: return "inout";
    case BufIO::Scratch: return "scratch";
  }
  return "?";
}

std::string ScalarValue::str() const {
  if (dtype_is_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", f);
    return buf;
  }
  if (type == Scalar::I1) return i ? "True" : "False";
  return std::to_string(i);
}

const Param* Kernel::find_param(const std::string& n) const {
  for (const Param& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

// ---- builders ----
namespace {
ExprP node(ExprKind k, SourceLoc loc, std::vector<ExprP> args = {}) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->loc = loc;
  e->args = std::move(args);
  return e;
}
}  // namespace

ExprP make_const_int(int64_t v, SourceLoc loc) {
  auto e = node(ExprKind::Const, loc);
  e->ival = v;
  e->dtype = (v >= INT32_MIN && v <= INT32_MAX) ? Scalar::I32 : Scalar::I64;
  return e;
}
ExprP make_const_float(double v, SourceLoc loc) {
  auto e = node(ExprKind::Const, loc);
  e->fval = v;
  e->is_float = true;
  e->dtype = Scalar::F32;
  return e;
}
ExprP make_const_bool(bool v, SourceLoc loc) {
  auto e = node(ExprKind::Const, loc);
  e->ival = v ? 1 : 0;
  e->dtype = Scalar::I1;
  e->weak = false;
  return e;
}
ExprP make_var(const std::string& name, SourceLoc loc) {
  auto e = node(ExprKind::Var, loc);
  e->name = name;
  return e;
}
ExprP make_program_id(int axis, SourceLoc loc) {
  auto e = node(ExprKind::ProgramId, loc);
  e->axis = axis;
  return e;
}
ExprP make_num_programs(int axis, SourceLoc loc) {
  auto e = node(ExprKind::NumPrograms, loc);
  e->axis = axis;
  return e;
}
ExprP make_machine(MachineReg r, SourceLoc loc) {
  auto e = node(ExprKind::Machine, loc);
  e->axis = static_cast<int>(r);
  return e;
}
const char* machine_reg_name(MachineReg r) {
  switch (r) {
#define X(e, sp, t) \
  case MachineReg::e: return sp;
    DT_FOR_EACH_MACHINE_REG(X)
#undef X
  }
  return "?";
}
Scalar machine_reg_type(MachineReg r) {
  switch (r) {
#define X(e, sp, t) \
  case MachineReg::e: return t;
    DT_FOR_EACH_MACHINE_REG(X)
#undef X
  }
  return Scalar::I32;
}
std::optional<MachineReg> parse_machine_reg(const std::string& s) {
#define X(e, sp, t) \
  if (s == sp) return MachineReg::e;
  DT_FOR_EACH_MACHINE_REG(X)
#undef X
  return std::nullopt;
}
ExprP make_arange(ExprP lo, ExprP hi, SourceLoc loc) { return node(ExprKind::Arange, loc, {lo, hi}); }
ExprP make_full(std::vector<ExprP> shape, ExprP value, Scalar dtype, SourceLoc loc) {
  shape.push_back(value);
  auto e = node(ExprKind::Full, loc, std::move(shape));
  e->dtype = dtype;
  return e;
}
ExprP make_unary(UnOp op, ExprP x, SourceLoc loc) {
  auto e = node(ExprKind::Unary, loc, {x});
  e->uop = op;
  return e;
}
ExprP make_binary(BinOp op, ExprP a, ExprP b, SourceLoc loc) {
  auto e = node(ExprKind::Binary, loc, {a, b});
  e->bop = op;
  return e;
}
ExprP make_where(ExprP c, ExprP a, ExprP b, SourceLoc loc) { return node(ExprKind::Where, loc, {c, a, b}); }
ExprP make_cast(ExprP x, Scalar dtype, SourceLoc loc) {
  auto e = node(ExprKind::Cast, loc, {x});
  e->dtype = dtype;
  return e;
}
ExprP make_bitcast(ExprP x, Scalar dtype, SourceLoc loc) {
  auto e = node(ExprKind::Bitcast, loc, {x});
  e->dtype = dtype;
  return e;
}
ExprP make_expand_dims(ExprP x, int axis, SourceLoc loc) {
  auto e = node(ExprKind::ExpandDims, loc, {x});
  e->axis = axis;
  return e;
}
ExprP make_reshape(ExprP x, std::vector<ExprP> shape, SourceLoc loc) {
  shape.insert(shape.begin(), x);
  return node(ExprKind::Reshape, loc, std::move(shape));
}
ExprP make_gather(ExprP src, ExprP index, int axis, SourceLoc loc) {
  auto e = node(ExprKind::Gather, loc, {std::move(src), std::move(index)});
  e->axis = axis;
  return e;
}
ExprP make_histogram(ExprP x, ExprP bins, ExprP mask, SourceLoc loc) {
  std::vector<ExprP> args{std::move(x), std::move(bins)};
  if (mask) args.push_back(std::move(mask));
  return node(ExprKind::Histogram, loc, std::move(args));
}
ExprP make_trans(ExprP x, SourceLoc loc) { return node(ExprKind::Trans, loc, {x}); }
ExprP make_permute(ExprP x, std::vector<ExprP> order, SourceLoc loc) {
  order.insert(order.begin(), x);
  return node(ExprKind::Trans, loc, std::move(order));
}
ExprP make_broadcast(ExprP x, std::vector<ExprP> shape, SourceLoc loc) {
  shape.insert(shape.begin(), x);
  return node(ExprKind::Broadcast, loc, std::move(shape));
}
ExprP make_load(ExprP ptr, ExprP mask, ExprP other, SourceLoc loc) {
  return node(ExprKind::Load, loc, {ptr, mask, other});
}
ExprP make_dot(ExprP a, ExprP b, ExprP acc, SourceLoc loc) { return node(ExprKind::Dot, loc, {a, b, acc}); }
ExprP make_reduce(RedOp op, ExprP x, int axis, SourceLoc loc) {
  auto e = node(ExprKind::Reduce, loc, {x});
  e->rop = op;
  e->axis = axis;
  return e;
}
ExprP make_scan(ScanOp op, ExprP x, int axis, bool reverse, SourceLoc loc) {
  auto e = node(ExprKind::Scan, loc, {x});
  e->sop = op;
  e->axis = axis;
  e->reverse = reverse;
  return e;
}
ExprP make_reduce_n(std::vector<ExprP> xs, int axis, std::vector<ExprP> fns, int part, SourceLoc loc) {
  auto e = node(ExprKind::Reduce, loc, std::move(xs));
  e->rop = RedOp::Fn;
  e->axis = axis;
  e->fns = std::move(fns);
  e->part = part;
  return e;
}
ExprP make_scan_n(std::vector<ExprP> xs, int axis, bool reverse, std::vector<ExprP> fns, int part, SourceLoc loc) {
  auto e = node(ExprKind::Scan, loc, std::move(xs));
  e->sop = ScanOp::Fn;
  e->axis = axis;
  e->reverse = reverse;
  e->fns = std::move(fns);
  e->part = part;
  return e;
}
ExprP make_combine_arg(int index, SourceLoc loc) {
  auto e = node(ExprKind::CombineArg, loc);
  e->axis = index;
  return e;
}
ExprP make_swizzle2d(ExprP i, ExprP j, ExprP ni, ExprP nj, ExprP group, SourceLoc loc) {
  return node(ExprKind::Swizzle2d, loc, {i, j, ni, nj, group});
}

ExprP make_int_to_ptr(ExprP x, Scalar elem, SourceLoc loc) {
  auto e = node(ExprKind::IntToPtr, loc, {x});
  e->dtype = elem;
  return e;
}

ExprP make_ptr_to_int(ExprP p, SourceLoc loc) { return node(ExprKind::PtrToInt, loc, {p}); }

namespace {
StmtP snode(StmtKind k, SourceLoc loc) {
  auto s = std::make_shared<Stmt>();
  s->kind = k;
  s->loc = loc;
  return s;
}
}  // namespace

StmtP make_assign(const std::string& target, ExprP value, SourceLoc loc) {
  auto s = snode(StmtKind::Assign, loc);
  s->targets = {target};
  s->args = {value};
  return s;
}
StmtP make_store(ExprP ptr, ExprP value, ExprP mask, SourceLoc loc) {
  auto s = snode(StmtKind::Store, loc);
  s->args = {ptr, value, mask};
  return s;
}
StmtP make_for(const std::string& var, ExprP lo, ExprP hi, ExprP step, std::vector<StmtP> body, SourceLoc loc) {
  auto s = snode(StmtKind::For, loc);
  s->targets = {var};
  s->args = {lo, hi, step ? step : make_const_int(1, loc)};
  s->body = std::move(body);
  return s;
}
StmtP make_if(ExprP cond, std::vector<StmtP> body, std::vector<StmtP> orelse, SourceLoc loc) {
  auto s = snode(StmtKind::If, loc);
  s->args = {cond};
  s->body = std::move(body);
  s->orelse = std::move(orelse);
  return s;
}

StmtP make_while(ExprP cond, std::vector<StmtP> body, SourceLoc loc) {
  auto s = snode(StmtKind::While, loc);
  s->args = {cond};
  s->body = std::move(body);
  return s;
}

StmtP make_atomic(AtomicOp op, const std::string& target, std::vector<ExprP> args, SourceLoc loc) {
  auto s = snode(StmtKind::Atomic, loc);
  s->aop = op;
  if (!target.empty()) s->targets = {target};
  if (op != AtomicOp::Cas) args.resize(3);  // ptr, val, mask (null: none)
  s->args = std::move(args);
  return s;
}

// ---- deep copies ----
ExprP clone_expr(const ExprP& e) {
  if (!e) return nullptr;
  auto c = std::make_shared<Expr>(*e);
  for (auto& a : c->args) a = clone_expr(a);
  c->fn = clone_expr(e->fn);
  for (auto& f : c->fns) f = clone_expr(f);
  return c;
}

StmtP clone_stmt(const StmtP& s) {
  if (!s) return nullptr;
  auto c = std::make_shared<Stmt>(*s);
  for (auto& a : c->args) a = clone_expr(a);
  for (auto& b : c->body) b = clone_stmt(b);
  for (auto& b : c->orelse) b = clone_stmt(b);
  return c;
}

Kernel clone_kernel(const Kernel& k) {
  Kernel c = k;
  for (auto& p : c.params) {
    for (auto& d : p.shape) d = clone_expr(d);
    p.init = clone_expr(p.init);
  }
  for (auto& g : c.grid) g = clone_expr(g);
  for (auto& s : c.body) s = clone_stmt(s);
  c.stmts.clear();  // pointers into the old tree; the verifier rebuilds them
  return c;
}

Module clone_module(const Module& m) {
  Module c;
  c.file = m.file;
  for (const auto& k : m.kernels) c.kernels.push_back(clone_kernel(k));
  return c;
}

}  // namespace dtsim
