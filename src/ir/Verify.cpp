// The verifier: parameter binding, type inference and checking, annotation of the IR (see Verify.h).
#include "ir/Verify.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace dtsim {

namespace {

int promotion_rank(Scalar s) {
  switch (s) {
    case Scalar::I1: return 0;
    case Scalar::I8: return 1;
    case Scalar::I16: return 2;
    case Scalar::I32: return 3;
    case Scalar::I64: return 4;
    case Scalar::F8E4M3: return 5;
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return 5;
    case Scalar::F16: return 6;
    case Scalar::BF16: return 7;
    case Scalar::F32: return 8;
    case Scalar::F64: return 9;
  }
  return 0;
}

bool is_weak_literal(const Expr& e) { return e.kind == ExprKind::Const && e.weak; }

}  // namespace

Scalar promote_operands(const Expr& a, const Expr& b) {
  Scalar x = a.type.elem, y = b.type.elem;
  bool wa = is_weak_literal(a), wb = is_weak_literal(b);
  if (wa && !wb) {
    if (a.is_float && is_int(y)) return Scalar::F32;
    return y == Scalar::I1 ? (a.is_float ? Scalar::F32 : Scalar::I32) : y;
  }
  if (wb && !wa) return promote_operands(b, a);
  if (x == y) return x;
  if ((x == Scalar::F16 && y == Scalar::BF16) || (x == Scalar::BF16 && y == Scalar::F16)) return Scalar::F32;
  if (is_fp8(x) && is_fp8(y)) return Scalar::F16;  // two different fp8 types (as Triton)
  if ((is_fp8(x) && y == Scalar::BF16) || (x == Scalar::BF16 && is_fp8(y))) return Scalar::F32;
  return promotion_rank(x) >= promotion_rank(y) ? x : y;
}

namespace {

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string q(const std::string& s) { return "'" + s + "'"; }

// ---- parameter expressions ----
ScalarValue eval_impl(const ExprP& e, const Bindings& b, const Kernel* k) {
  if (!e) internal_error("eval_param_expr", "null expression");
  switch (e->kind) {
    case ExprKind::Const:
      if (e->is_float) return ScalarValue::of_float(e->fval, e->weak ? Scalar::F32 : e->dtype);
      return ScalarValue::of_int(e->ival, e->weak ? (e->ival == static_cast<int32_t>(e->ival) ? Scalar::I32 : Scalar::I64) : e->dtype);
    case ExprKind::Var: {
      if (k) {
        const Param* p = k->find_param(e->name);
        if (p && p->kind != ParamKind::Constexpr)
          user_error(e->loc, q(e->name) + " is a runtime scalar; this must be a compile-time constant (declare it constexpr)");
        if (!p) user_error(e->loc, q(e->name) + " is not a constexpr parameter; this must be a compile-time constant");
      }
      auto it = b.find(e->name);
      if (it == b.end()) user_error(e->loc, q(e->name) + " has no value here (only scalar parameters may appear)");
      return it->second;
    }
    case ExprKind::Unary: {
      ScalarValue x = eval_impl(e->args[0], b, k);
      if (e->uop == UnOp::Neg) {
        if (x.dtype_is_float()) x.f = -x.f; else x.i = -x.i;
        return x;
      }
      if (e->uop == UnOp::Abs) {
        if (x.dtype_is_float()) x.f = std::fabs(x.f); else x.i = std::llabs(x.i);
        return x;
      }
      user_error(e->loc, std::string("'") + unop_name(e->uop) + "' is not allowed in a parameter expression");
    }
    case ExprKind::Cast: {
      ScalarValue x = eval_impl(e->args[0], b, k);
      if (is_float(e->dtype)) return ScalarValue::of_float(x.as_double(), e->dtype);
      return ScalarValue::of_int(x.dtype_is_float() ? static_cast<int64_t>(x.f) : x.i, e->dtype);
    }
    case ExprKind::Binary: {
      ScalarValue x = eval_impl(e->args[0], b, k), y = eval_impl(e->args[1], b, k);
      bool fl = x.dtype_is_float() || y.dtype_is_float() || op_info(e->bop).rule == TypeRule::FloatFn;
      Scalar rt = fl ? Scalar::F32 : ((x.type == Scalar::I64 || y.type == Scalar::I64) ? Scalar::I64 : Scalar::I32);
      if (fl && (x.type == Scalar::F64 || y.type == Scalar::F64)) rt = Scalar::F64;
      if (binop_is_compare(e->bop)) {
        double a = x.as_double(), c = y.as_double();
        bool r = false;
        switch (e->bop) {
          case BinOp::Lt: r = a < c; break;
          case BinOp::Le: r = a <= c; break;
          case BinOp::Gt: r = a > c; break;
          case BinOp::Ge: r = a >= c; break;
          case BinOp::Eq: r = a == c; break;
          case BinOp::Ne: r = a != c; break;
          case BinOp::Add: case BinOp::Sub: case BinOp::Mul: case BinOp::Div: case BinOp::FloorDiv: case BinOp::Mod:
          case BinOp::And: case BinOp::Or: case BinOp::Xor: case BinOp::Shl: case BinOp::Shr: case BinOp::LAnd:
          case BinOp::LOr: case BinOp::Min: case BinOp::Max: case BinOp::MinNum: case BinOp::MaxNum: case BinOp::Cdiv: DT_MATH_BINOP_CASES
            internal_error("eval_param_expr", "not a comparison");
        }
        return ScalarValue::of_int(r, Scalar::I1);
      }
      if (fl) {
        double a = x.as_double(), c = y.as_double(), r = 0;
        switch (e->bop) {
          case BinOp::Add: r = a + c; break;
          case BinOp::Sub: r = a - c; break;
          case BinOp::Mul: r = a * c; break;
          case BinOp::Div: r = a / c; break;
          case BinOp::Min: r = std::fmin(a, c); break;
          case BinOp::Max: r = std::fmax(a, c); break;
          case BinOp::MinNum: r = std::fmin(a, c); break;
          case BinOp::MaxNum: r = std::fmax(a, c); break;
          case BinOp::Pow: r = std::pow(a, c); break;
          case BinOp::Atan2: r = std::atan2(a, c); break;
          case BinOp::Hypot: r = std::hypot(a, c); break;
          case BinOp::FloorDiv: case BinOp::Mod: case BinOp::And: case BinOp::Or: case BinOp::Xor: case BinOp::Shl:
          case BinOp::Shr: case BinOp::Lt: case BinOp::Le: case BinOp::Gt: case BinOp::Ge: case BinOp::Eq: case BinOp::Ne:
          case BinOp::LAnd: case BinOp::LOr: case BinOp::Cdiv:
            user_error(e->loc, std::string("'") + binop_name(e->bop) + "' needs integer operands here");
        }
        return ScalarValue::of_float(r, rt);
      }
      int64_t a = x.i, c = y.i, r = 0;
      // Integer arithmetic wraps (two's complement, as in the executors): computed unsigned.
      auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
      auto ua = static_cast<uint64_t>(a), uc = static_cast<uint64_t>(c);
      switch (e->bop) {
        case BinOp::Add: r = wrap(ua + uc); break;
        case BinOp::Sub: r = wrap(ua - uc); break;
        case BinOp::Mul: r = wrap(ua * uc); break;
        case BinOp::FloorDiv:
        case BinOp::Mod:
        case BinOp::Cdiv: {
          if (c == 0) user_error(e->loc, "division by zero in a parameter expression");
          int64_t n = e->bop == BinOp::Cdiv ? wrap(ua + uc - 1) : a;
          if (c == -1) r = e->bop == BinOp::Mod ? 0 : wrap(0 - static_cast<uint64_t>(n));  // INT64_MIN / -1 wraps
          else r = e->bop == BinOp::Mod ? n % c : n / c;
          break;
        }
        case BinOp::Min: r = std::min(a, c); break;
        case BinOp::Max: r = std::max(a, c); break;
        case BinOp::MinNum: r = std::min(a, c); break;
        case BinOp::MaxNum: r = std::max(a, c); break;
        case BinOp::Shl: r = wrap(ua << (c & 63)); break;
        case BinOp::Shr: r = a >> (c & 63); break;
        case BinOp::And: r = a & c; break;
        case BinOp::Or: r = a | c; break;
        case BinOp::Xor: r = a ^ c; break;
        case BinOp::Div: case BinOp::Lt: case BinOp::Le: case BinOp::Gt: case BinOp::Ge: case BinOp::Eq: case BinOp::Ne:
        case BinOp::LAnd: case BinOp::LOr: DT_MATH_BINOP_CASES
          user_error(e->loc, std::string("'") + binop_name(e->bop) + "' is not allowed in a parameter expression");
      }
      return ScalarValue::of_int(r, rt);
    }
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::Where:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::Swizzle2d:
    case ExprKind::CombineArg:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      break;
  }
  user_error(e->loc, k ? "this must be a compile-time constant" : "only scalar parameters, literals and arithmetic may appear here");
}

// ---- type checking ----
class Verifier {
 public:
  Verifier(Kernel& k, const Bindings& b) : k_(k), b_(b) {}
  Verifier(Kernel& k, const Bindings& b, std::function<int(const std::string&)> ext) : k_(k), b_(b), ext_(std::move(ext)) {}

  void expr(const ExprP& e) { infer(e); }

  void run() {
    k_.num_slots = 0;
    k_.slot_names.clear();
    k_.slot_types.clear();
    k_.stmts.clear();
    scopes_.assign(1, {});
    if (k_.grid.empty() || k_.grid.size() > 3) user_error(k_.loc, "a kernel's grid needs 1 to 3 axes, got " + std::to_string(k_.grid.size()));
    if (!is_pow2(k_.num_warps) || k_.num_warps > 32) user_error(k_.loc, "num_warps must be a power of two in 1..32, got " + std::to_string(k_.num_warps));
    if (k_.num_stages < 1 || k_.num_stages > 16) user_error(k_.loc, "num_stages must be in 1..16, got " + std::to_string(k_.num_stages));
    if (k_.cluster != 1 && k_.cluster != 2) user_error(k_.loc, "cluster(N) takes clusters of 1 or 2 CTAs, got " + std::to_string(k_.cluster));
    if (k_.persistent_ctas < 0 || k_.persistent_ctas > INT32_MAX || (k_.persistent_ctas > 0 && !k_.persistent))
      user_error(k_.loc, "persistent(N) takes 1 to 2147483647 CTAs, got " + std::to_string(k_.persistent_ctas));
    for (Param& p : k_.params) {
      for (auto& s : scopes_[0])
        if (s.first == p.name) user_error(p.loc, "parameter " + q(p.name) + " is declared twice");
      Type t{p.dtype, p.kind == ParamKind::Pointer, {}};
      if (p.kind == ParamKind::Constexpr && is_float(p.dtype)) user_error(p.loc, "a constexpr parameter must be an integer");
      if (p.kind == ParamKind::Scalar && is_fp8(p.dtype))
        user_error(p.loc, std::string("a scalar parameter cannot be ") + scalar_name(p.dtype) + " (pass a pointer, or an f32 to convert)");
      p.slot = declare(p.name, t);
    }
    // Shapes, grid and defaults may only use scalar parameters; check them by evaluation.
    for (Param& p : k_.params) {
      if (p.kind != ParamKind::Pointer) continue;
      if (p.shape.empty()) user_error(p.loc, "pointer parameter " + q(p.name) + " needs a buffer shape, e.g. *f32[n]");
      for (auto& d : p.shape) check_param_expr(d, "buffer shape");
    }
    for (auto& g : k_.grid) check_param_expr(g, "grid");
    walk_block(k_.body);
  }

 private:
  Kernel& k_;
  const Bindings& b_;
  std::vector<std::vector<std::pair<std::string, int>>> scopes_;
  std::function<int(const std::string&)> ext_;  // verify_expr: the debugger's view of the scope
  std::optional<Scalar> combine_elem_;          // inside a combine function: its arguments' type
  std::vector<Scalar> combine_elems_;           // inside one of several operands: each argument's type

  void check_param_expr(const ExprP& e, const char* what) {
    ScalarValue v = eval_param_expr(e, b_);
    if (v.dtype_is_float()) user_error(e->loc, std::string(what) + " must be an integer");
    infer(e);  // annotate types too (the CUDA backend evaluates grids itself)
  }

  int declare(const std::string& name, const Type& t) {
    int slot = k_.num_slots++;
    k_.slot_names.push_back(name);
    k_.slot_types.push_back(t);
    scopes_.back().push_back({name, slot});
    return slot;
  }

  int lookup(const std::string& name) const {
    if (ext_) return ext_(name);
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      for (auto it = s->rbegin(); it != s->rend(); ++it)
        if (it->first == name) return it->second;
    return -1;
  }

  int64_t const_int(const ExprP& e, const char* what) {
    ScalarValue v = eval_param_expr(e, b_, &k_);
    if (v.dtype_is_float()) user_error(e->loc, std::string(what) + " must be an integer");
    infer(e);
    return v.i;
  }

  Shape const_shape(const std::vector<ExprP>& dims, size_t from, size_t to, SourceLoc loc) {
    Shape s;
    for (size_t i = from; i < to; ++i) {
      int64_t d = const_int(dims[i], "a shape extent");
      if (!is_pow2(d)) user_error(dims[i]->loc, "tile extent " + std::to_string(d) + " is not a power of two");
      s.push_back(d);
    }
    check_shape(s, loc);
    return s;
  }

  void check_shape(const Shape& s, SourceLoc loc) {
    if (static_cast<int>(s.size()) > kMaxRank) user_error(loc, "tiles have at most " + std::to_string(kMaxRank) + " dimensions, got " + shape_str(s));
    if (shape_numel(s) > kMaxTileElems) user_error(loc, "tile " + shape_str(s) + " has more than 2^20 elements");
  }

  static bool is_weak(const ExprP& e) { return e->kind == ExprKind::Const && e->weak; }

  Scalar promote(const ExprP& a, const ExprP& b) { return promote_operands(*a, *b); }

  Shape bcast(const ExprP& a, const Shape& x, const Shape& y, SourceLoc loc) {
    (void)a;
    auto r = broadcast_shapes(x, y);
    if (!r) user_error(loc, "shapes " + shape_str(x) + " and " + shape_str(y) + " do not broadcast");
    return *r;
  }

  // The combine function of a reduce / associative_scan over elements of type t: a scalar of t (a
  // value of another type is converted to t, as Triton's combine regions return the operand type).
  void combine_fn(const ExprP& e, Scalar t) {
    if (!e->fns.empty()) return combine_fns(e);
    if (!e->fn) user_error(e->loc, "this reduction needs a combine function: (a, b) -> ...");
    if (combine_elem_ || !combine_elems_.empty()) user_error(e->loc, "a combine function cannot itself reduce or scan");
    combine_elem_ = t;
    infer(e->fn);
    combine_elem_.reset();
    if (e->fn->type.ptr || e->fn->type.is_tile()) user_error(e->fn->loc, "a combine function returns one element, got " + e->fn->type.str());
    if (e->fn->type.elem != t) {
      e->fn = make_cast(e->fn, t, e->fn->loc);
      combine_elem_ = t;
      infer(e->fn);
      combine_elem_.reset();
    }
  }

  // N > 1 operands (Expr::fns): the operands are tiles of one shape; CombineArg i has the type of
  // operand i % N; component i returns an element of operand i's type (converted as above).
  void combine_fns(const ExprP& e) {
    const size_t n = e->args.size();
    if (n < 2 || e->fns.size() != n || e->fn) internal_error("Verify", "a combine function of several operands needs one component per operand");
    if (e->part < 0 || static_cast<size_t>(e->part) >= n) internal_error("Verify", "a combine component out of range");
    if (combine_elem_ || !combine_elems_.empty()) user_error(e->loc, "a combine function cannot itself reduce or scan");
    for (size_t i = 1; i < n; ++i)
      if (e->args[i]->type.shape != e->args[0]->type.shape)
        user_error(e->args[i]->loc, "the operands of one reduction or scan must have one shape, got " + e->args[0]->type.str() + " and " +
                                        e->args[i]->type.str());
    std::vector<Scalar> elems;
    for (size_t i = 0; i < 2 * n; ++i) elems.push_back(e->args[i % n]->type.elem);
    for (size_t i = 0; i < n; ++i) {
      Scalar t = e->args[i]->type.elem;
      for (int pass = 0; pass < 2; ++pass) {
        combine_elems_ = elems;
        try {
          infer(e->fns[i]);
        } catch (...) {
          combine_elems_.clear();
          throw;
        }
        combine_elems_.clear();
        if (e->fns[i]->type.ptr || e->fns[i]->type.is_tile())
          user_error(e->fns[i]->loc, "a combine function returns one element per operand, got " + e->fns[i]->type.str());
        if (e->fns[i]->type.elem == t) break;
        e->fns[i] = make_cast(e->fns[i], t, e->fns[i]->loc);
      }
    }
  }

  void no_ptr(const ExprP& e, const char* what) {
    if (e->type.ptr) user_error(e->loc, std::string(what) + " does not take a pointer (" + e->type.str() + ")");
  }

  void infer(const ExprP& e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Const:
        e->type = Type{e->weak ? (e->is_float ? Scalar::F32 : e->dtype) : e->dtype, false, {}};
        return;
      case ExprKind::CombineArg:
        if (!combine_elems_.empty()) {
          if (e->axis < 0 || static_cast<size_t>(e->axis) >= combine_elems_.size()) internal_error("Verify", "a combine argument out of range");
          e->type = Type{combine_elems_[static_cast<size_t>(e->axis)], false, {}};
          return;
        }
        if (!combine_elem_) user_error(e->loc, "a combine function's argument outside a combine function");
        e->type = Type{*combine_elem_, false, {}};
        return;
      case ExprKind::Var: {
        if (combine_elem_ || !combine_elems_.empty()) user_error(e->loc, q(e->name) + ": a combine function may use only its arguments and literals");
        int s = lookup(e->name);
        if (s < 0) user_error(e->loc, q(e->name) + " is not defined");
        e->slot = s;
        e->type = k_.slot_types[static_cast<size_t>(s)];
        return;
      }
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
        if (e->axis < 0 || e->axis > 2) user_error(e->loc, "axis must be 0, 1 or 2, got " + std::to_string(e->axis));
        e->type = Type{Scalar::I32, false, {}};
        return;
      case ExprKind::Arange: {
        int64_t lo = const_int(e->args[0], "arange start"), hi = const_int(e->args[1], "arange end");
        if (!is_pow2(hi - lo)) user_error(e->loc, "arange(" + std::to_string(lo) + ", " + std::to_string(hi) + ") has " + std::to_string(hi - lo) + " elements, not a power of two");
        e->ints = {lo, hi};
        e->type = Type{Scalar::I32, false, {hi - lo}};
        check_shape(e->type.shape, e->loc);
        return;
      }
      case ExprKind::Full: {
        Shape s = const_shape(e->args, 0, e->args.size() - 1, e->loc);
        ExprP v = e->args.back();
        infer(v);
        no_ptr(v, "full");
        if (v->type.is_tile()) user_error(v->loc, "full() takes a scalar value, got " + v->type.str());
        e->ints = s;
        e->type = Type{e->dtype, false, s};
        return;
      }
      case ExprKind::Unary: {
        ExprP x = e->args[0];
        infer(x);
        no_ptr(x, unop_name(e->uop));
        std::optional<Scalar> t = op_result_elem(op_info(e->uop).rule, x->type.elem);
        if (!t) user_error(e->loc, std::string("'") + unop_name(e->uop) + "' needs an integer or boolean operand, got " + x->type.str());
        e->type = Type{*t, false, x->type.shape};
        return;
      }
      case ExprKind::Binary: infer_binary(e); return;
      case ExprKind::Where: {
        ExprP c = e->args[0], a = e->args[1], b = e->args[2];
        infer(c); infer(a); infer(b);
        if (c->type.ptr || c->type.elem != Scalar::I1) user_error(c->loc, "where() needs an i1 condition, got " + c->type.str());
        Shape s = bcast(e, bcast(e, c->type.shape, a->type.shape, e->loc), b->type.shape, e->loc);
        check_shape(s, e->loc);
        if (a->type.ptr || b->type.ptr) {
          if (!(a->type.ptr && b->type.ptr && a->type.elem == b->type.elem))
            user_error(e->loc, "where() on pointers needs two pointers of one element type, got " + a->type.str() + " and " + b->type.str());
          e->type = Type{a->type.elem, true, s};
        } else {
          e->type = Type{promote(a, b), false, s};
        }
        return;
      }
      case ExprKind::Cast: {
        infer(e->args[0]);
        no_ptr(e->args[0], "a cast");
        e->type = Type{e->dtype, false, e->args[0]->type.shape};
        return;
      }
      case ExprKind::Bitcast: {
        infer(e->args[0]);
        no_ptr(e->args[0], "a bitcast");
        Scalar from = e->args[0]->type.elem;
        if (from == Scalar::I1 || e->dtype == Scalar::I1 || scalar_bytes(from) != scalar_bytes(e->dtype) ||
            (from != e->dtype && is_float(from) == is_float(e->dtype) && scalar_bytes(from) > 2))
          user_error(e->loc, std::string("bitcast from ") + scalar_name(from) + " to " + scalar_name(e->dtype) +
                                 " is not supported (same-width pairs: i8 <-> fp8, i16 <-> f16/bf16, i32 <-> f32, "
                                 "i64 <-> f64, f16 <-> bf16, fp8 <-> fp8)");
        e->type = Type{e->dtype, false, e->args[0]->type.shape};
        return;
      }
      case ExprKind::ExpandDims: {
        ExprP x = e->args[0];
        infer(x);
        int r = x->type.rank();
        int ax = e->axis < 0 ? e->axis + r + 1 : e->axis;
        if (ax < 0 || ax > r) user_error(e->loc, "expand_dims axis " + std::to_string(e->axis) + " is out of range for rank " + std::to_string(r));
        Shape s = x->type.shape;
        s.insert(s.begin() + ax, 1);
        check_shape(s, e->loc);
        e->ints = {ax};
        e->type = x->type.with_shape(s);
        return;
      }
      case ExprKind::Reshape: {
        ExprP x = e->args[0];
        infer(x);
        Shape s = const_shape(e->args, 1, e->args.size(), e->loc);
        if (shape_numel(s) != x->type.numel()) user_error(e->loc, "cannot reshape " + x->type.str() + " to " + shape_str(s) + ": element counts differ");
        e->ints = s;
        e->type = x->type.with_shape(s);
        return;
      }
      case ExprKind::Trans: {
        ExprP x = e->args[0];
        infer(x);
        int r = x->type.rank();
        std::vector<int64_t> order;
        if (e->args.size() == 1) {
          if (r != 2) user_error(e->loc, "trans() needs a 2-D tile, got " + x->type.str() + " (permute(x, [...]) takes any rank)");
          order = {1, 0};
        } else {
          for (size_t i = 1; i < e->args.size(); ++i) order.push_back(const_int(e->args[i], "a permutation's axis"));
          std::vector<int64_t> sorted = order;
          std::sort(sorted.begin(), sorted.end());
          for (int i = 0; i < static_cast<int>(sorted.size()); ++i)
            if (static_cast<int>(sorted.size()) != r || sorted[static_cast<size_t>(i)] != i)
              user_error(e->loc, "permute() needs a permutation of the " + std::to_string(r) + " axes of " + x->type.str());
        }
        Shape s;
        for (int64_t a : order) s.push_back(x->type.shape[static_cast<size_t>(a)]);
        e->ints = order;
        e->type = x->type.with_shape(s);
        return;
      }
      case ExprKind::Broadcast: {
        ExprP x = e->args[0];
        infer(x);
        Shape s = const_shape(e->args, 1, e->args.size(), e->loc);
        auto r = broadcast_shapes(x->type.shape, s);
        if (!r || *r != s) user_error(e->loc, "cannot broadcast " + x->type.str() + " to " + shape_str(s));
        e->ints = s;
        e->type = x->type.with_shape(s);
        return;
      }
      case ExprKind::Load: {
        ExprP p = e->args[0], m = e->args[1], o = e->args[2];
        infer(p); infer(m); infer(o);
        if (!p->type.ptr) user_error(p->loc, "load() needs a pointer, got " + p->type.str());
        Shape s = p->type.shape;
        if (m) {
          if (m->type.ptr || m->type.elem != Scalar::I1) user_error(m->loc, "a mask must be i1, got " + m->type.str());
          s = bcast(e, s, m->type.shape, m->loc);
        }
        if (o) {
          no_ptr(o, "other");
          s = bcast(e, s, o->type.shape, o->loc);
        }
        check_shape(s, e->loc);
        e->type = Type{p->type.elem, false, s};
        return;
      }
      case ExprKind::Dot: {
        ExprP a = e->args[0], b = e->args[1], c = e->args[2];
        infer(a); infer(b); infer(c);
        if (a->type.rank() != 2 || b->type.rank() != 2 || a->type.ptr || b->type.ptr)
          user_error(e->loc, "dot() needs two 2-D tiles, got " + a->type.str() + " and " + b->type.str());
        const bool int8 = a->type.elem == Scalar::I8 && b->type.elem == Scalar::I8;  // i8 x i8 -> i32 (exact, wrapping)
        if (!int8 && (!is_float(a->type.elem) || (a->type.elem != b->type.elem && !(is_fp8(a->type.elem) && is_fp8(b->type.elem)))))
          user_error(e->loc, "dot() needs float tiles of one type (or two fp8 types, or two i8 tiles), got " + a->type.str() + " and " + b->type.str());
        if (a->type.shape[1] != b->type.shape[0])
          user_error(e->loc, "dot(): inner extents differ: " + a->type.str() + " @ " + b->type.str());
        if (e->tf32 && a->type.elem != Scalar::F32)
          user_error(e->loc, "dot(): precision=tf32 needs f32 operands, got " + a->type.str() + " and " + b->type.str());
        Scalar rt = int8 ? Scalar::I32 : a->type.elem == Scalar::F64 ? Scalar::F64 : Scalar::F32;
        Shape s{a->type.shape[0], b->type.shape[1]};
        if (c && (c->type.ptr || c->type.shape != s || c->type.elem != rt))
          user_error(c->loc, "dot() accumulator must be " + Type{rt, false, s}.str() + ", got " + c->type.str());
        e->type = Type{rt, false, s};
        return;
      }
      case ExprKind::Gather: {
        ExprP src = e->args[0], idx = e->args[1];
        infer(src);
        infer(idx);
        if (src->type.ptr || src->type.is_scalar() || idx->type.ptr || !is_int(idx->type.elem) || idx->type.elem == Scalar::I1 ||
            idx->type.rank() != src->type.rank())
          user_error(e->loc, "gather() needs a tile and an integer index tile of the same rank, got " + src->type.str() + " and " + idx->type.str());
        int r = src->type.rank();
        int ax = e->axis < 0 ? e->axis + r : e->axis;
        if (ax < 0 || ax >= r) user_error(e->loc, "axis " + std::to_string(e->axis) + " is out of range for " + src->type.str());
        for (int d = 0; d < r; ++d)
          if (d != ax && idx->type.shape[static_cast<size_t>(d)] != src->type.shape[static_cast<size_t>(d)])
            user_error(e->loc, "gather(): the index " + idx->type.str() + " must match the source " + src->type.str() + " outside axis " + std::to_string(ax));
        e->ints = {ax};
        e->type = Type{src->type.elem, false, idx->type.shape};
        return;
      }
      case ExprKind::Histogram: {
        ExprP x = e->args[0], m = e->args.size() > 2 ? e->args[2] : nullptr;
        infer(x);
        if (x->type.ptr || !is_int(x->type.elem) || x->type.elem == Scalar::I1 || x->type.rank() != 1)
          user_error(e->loc, "histogram() needs a 1-D integer tile, got " + x->type.str());
        int64_t bins = const_int(e->args[1], "the number of bins");
        if (bins < 1 || !is_pow2(bins)) user_error(e->args[1]->loc, "histogram(): the number of bins must be a power of two, got " + std::to_string(bins));
        if (m) {
          infer(m);
          if (m->type.ptr || m->type.elem != Scalar::I1 || m->type.shape != x->type.shape)
            user_error(m->loc, "histogram(): the mask must be an i1 tile of the input's shape " + shape_str(x->type.shape) + ", got " + m->type.str());
        }
        e->ints = {bins};
        e->type = Type{Scalar::I32, false, {bins}};
        check_shape(e->type.shape, e->loc);
        return;
      }
      case ExprKind::Scan: {
        ExprP x = e->args[0];
        for (auto& a : e->args) infer(a);
        no_ptr(x, scanop_name(e->sop));
        int r = x->type.rank();
        if (r == 0) user_error(e->loc, std::string(scanop_name(e->sop)) + "() needs a tile, got a scalar");
        int ax = e->axis < 0 ? e->axis + r : e->axis;
        if (ax < 0 || ax >= r) user_error(e->loc, "axis " + std::to_string(e->axis) + " is out of range for " + x->type.str());
        e->ints = {ax};
        e->type = Type{x->type.elem == Scalar::I1 ? Scalar::I32 : x->type.elem, false, x->type.shape};
        if (e->args.size() > 1 && e->sop != ScanOp::Fn) internal_error("Verify", "a scan of several operands needs a combine function");
        if (e->sop == ScanOp::Fn) {
          for (auto& a : e->args) no_ptr(a, scanop_name(e->sop));
          combine_fn(e, x->type.elem);
          e->type.elem = e->args[static_cast<size_t>(e->part)]->type.elem;
        }
        return;
      }
      case ExprKind::Reduce: {
        ExprP x = e->args[0];
        for (auto& a : e->args) infer(a);
        no_ptr(x, redop_name(e->rop));
        int r = x->type.rank();
        if (r == 0) user_error(e->loc, std::string(redop_name(e->rop)) + "() needs a tile, got a scalar");
        int ax = e->axis < 0 ? e->axis + r : e->axis;
        if (ax < 0 || ax >= r) user_error(e->loc, "axis " + std::to_string(e->axis) + " is out of range for " + x->type.str());
        Shape s = x->type.shape;
        s.erase(s.begin() + ax);
        std::optional<Scalar> t = op_result_elem(op_info(e->rop).rule, x->type.elem);
        if (!t) user_error(e->loc, std::string(redop_name(e->rop)) + "() does not take " + x->type.str());
        if (e->args.size() > 1 && e->rop != RedOp::Fn) internal_error("Verify", "a reduction of several operands needs a combine function");
        if (e->rop == RedOp::Fn) {
          for (auto& a : e->args) no_ptr(a, redop_name(e->rop));
          combine_fn(e, x->type.elem);
          t = e->args[static_cast<size_t>(e->part)]->type.elem;
        }
        e->ints = {ax};
        e->type = Type{*t, false, s};
        return;
      }
      case ExprKind::Swizzle2d:
        for (auto& a : e->args) {
          infer(a);
          if (!a->type.is_scalar() || a->type.ptr || !is_int(a->type.elem))
            user_error(a->loc, "swizzle2d() takes integer scalars, got " + a->type.str());
        }
        e->type = Type{Scalar::I32, false, {}};
        return;
      case ExprKind::IntToPtr: {
        infer(e->args[0]);
        const Type& t = e->args[0]->type;
        if (t.ptr || t.elem != Scalar::I64) user_error(e->loc, "int_to_ptr() takes i64 addresses, got " + t.str());
        e->type = Type{e->dtype, true, t.shape};
        return;
      }
      case ExprKind::PtrToInt: {
        infer(e->args[0]);
        const Type& t = e->args[0]->type;
        if (!t.ptr) user_error(e->loc, "ptr_to_int() takes pointers, got " + t.str());
        e->type = Type{Scalar::I64, false, t.shape};
        return;
      }
      case ExprKind::Machine:
        if (e->axis < 0 || e->axis >= kNumMachineRegs) user_error(e->loc, "no machine register " + std::to_string(e->axis));
        e->type = Type{machine_reg_type(static_cast<MachineReg>(e->axis)), false, {}};
        return;
    }
  }

  void infer_binary(const ExprP& e) {
    ExprP a = e->args[0], b = e->args[1];
    infer(a);
    infer(b);
    Shape s = bcast(e, a->type.shape, b->type.shape, e->loc);
    check_shape(s, e->loc);
    const char* op = binop_name(e->bop);
    // Pointer arithmetic.
    if (a->type.ptr || b->type.ptr) {
      if ((e->bop == BinOp::Add || e->bop == BinOp::Sub) && a->type.ptr && !b->type.ptr && is_int(b->type.elem)) {
        e->type = Type{a->type.elem, true, s};
        return;
      }
      if (e->bop == BinOp::Add && b->type.ptr && !a->type.ptr && is_int(a->type.elem)) {
        e->type = Type{b->type.elem, true, s};
        return;
      }
      if ((e->bop == BinOp::Eq || e->bop == BinOp::Ne) && a->type.ptr && b->type.ptr) {
        e->type = Type{Scalar::I1, false, s};
        return;
      }
      user_error(e->loc, std::string("'") + op + "' is not defined for " + a->type.str() + " and " + b->type.str());
    }
    std::optional<Scalar> t = op_result_elem(op_info(e->bop).rule, promote(a, b));
    if (!t) {
      if (op_info(e->bop).rule == TypeRule::IntOnly)
        user_error(e->loc, std::string("'") + op + "' needs integer operands, got " + a->type.str() + " and " + b->type.str() + " (use '/' for floats)");
      user_error(e->loc, std::string("'") + op + "' needs integer or boolean operands, got " + a->type.str() + " and " + b->type.str());
    }
    e->type = Type{*t, false, s};
  }

  void walk_block(std::vector<StmtP>& body) {
    for (auto& s : body) walk(s);
  }

  void assign_target(Stmt& s, size_t i, const Type& t) {
    const std::string& name = s.targets[i];
    int slot = lookup(name);
    if (slot >= 0) {
      const Param* p = k_.find_param(name);
      if (p && slot == p->slot && p->kind == ParamKind::Constexpr) user_error(s.loc, "cannot assign to constexpr parameter " + q(name));
      const Type& old = k_.slot_types[static_cast<size_t>(slot)];
      if (!(old == t))
        user_error(s.loc, q(name) + " changes type from " + old.str() + " to " + t.str() + "; a variable keeps its type (use .to() or a new name)");
      s.slots.push_back(slot);
    } else {
      s.slots.push_back(declare(name, t));
      if (i == 0) s.declares = true;
    }
  }

  void walk(StmtP& sp) {
    Stmt& s = *sp;
    s.id = static_cast<int>(k_.stmts.size());
    k_.stmts.push_back(&s);
    s.slots.clear();
    s.declares = false;
    switch (s.kind) {
      case StmtKind::Assign: {
        ExprP v = s.args[0];
        if (s.targets.size() == 2) {
          if (v->kind != ExprKind::Swizzle2d) user_error(s.loc, "only swizzle2d() can be assigned to two names");
        } else if (s.targets.size() != 1) {
          user_error(s.loc, "an assignment needs one target");
        } else if (v->kind == ExprKind::Swizzle2d) {
          user_error(s.loc, "swizzle2d() returns two values: write `a, b = swizzle2d(...)`");
        }
        infer(v);
        for (size_t i = 0; i < s.targets.size(); ++i) assign_target(s, i, v->type);
        return;
      }
      case StmtKind::Store: {
        ExprP p = s.args[0], v = s.args[1], m = s.args[2];
        infer(p); infer(v); infer(m);
        if (!p->type.ptr) user_error(p->loc, "store() needs a pointer, got " + p->type.str());
        if (v->type.ptr) user_error(v->loc, "store() cannot store a pointer");
        auto r = broadcast_shapes(p->type.shape, v->type.shape);
        if (!r || *r != p->type.shape) user_error(v->loc, "store(): value " + v->type.str() + " does not fit pointer " + p->type.str());
        if (m) {
          if (m->type.ptr || m->type.elem != Scalar::I1) user_error(m->loc, "a mask must be i1, got " + m->type.str());
          auto rm = broadcast_shapes(p->type.shape, m->type.shape);
          if (!rm || *rm != p->type.shape) user_error(m->loc, "store(): mask " + m->type.str() + " does not fit pointer " + p->type.str());
        }
        return;
      }
      case StmtKind::Atomic: {
        const char* fn = atomicop_name(s.aop);
        bool cas = s.aop == AtomicOp::Cas;
        if (s.args.size() != 3) internal_error("Verify", "an atomic needs three operands");
        ExprP p = s.args[0];
        for (auto& a : s.args) infer(a);
        if (!p->type.ptr) user_error(p->loc, std::string(fn) + "() needs a pointer, got " + p->type.str());
        Scalar et = p->type.elem;
        Shape shape = p->type.shape;
        for (size_t i = 1; i < 3; ++i) {
          const ExprP& a = s.args[i];
          if (!a) continue;
          bool mask = !cas && i == 2;
          const char* what = mask ? "mask" : cas && i == 1 ? "cmp" : "value";
          if (a->type.ptr) user_error(a->loc, std::string(fn) + "(): the " + what + " cannot be a pointer");
          if (mask && a->type.elem != Scalar::I1) user_error(a->loc, "a mask must be i1, got " + a->type.str());
          auto r = broadcast_shapes(shape, a->type.shape);
          if (!r) user_error(a->loc, std::string(fn) + "(): " + what + " " + a->type.str() + " does not broadcast with pointer " + p->type.str());
          shape = *r;
        }
        bool bits = s.aop == AtomicOp::And || s.aop == AtomicOp::Or || s.aop == AtomicOp::Xor || s.aop == AtomicOp::UMax || s.aop == AtomicOp::UMin;
        if (bits && is_float(et)) user_error(s.loc, std::string(fn) + "() needs an integer pointer, got " + p->type.str());
        if (s.aop != AtomicOp::Xchg && s.aop != AtomicOp::Cas && et == Scalar::I1 && !bits)
          user_error(s.loc, std::string(fn) + "() does not take " + p->type.str());
        if (!s.targets.empty()) assign_target(s, 0, Type{et, false, shape});
        return;
      }
      case StmtKind::For: {
        Scalar t = Scalar::I32;
        for (auto& a : s.args) {
          infer(a);
          if (a->type.ptr || !a->type.is_scalar() || !is_int(a->type.elem)) user_error(a->loc, "range() bounds must be integer scalars, got " + a->type.str());
          if (a->type.elem == Scalar::I64 && !is_weak(a)) t = Scalar::I64;
        }
        scopes_.emplace_back();
        s.slots.push_back(declare(s.targets[0], Type{t, false, {}}));
        s.declares = true;
        walk_block(s.body);
        scopes_.pop_back();
        return;
      }
      case StmtKind::If: {
        ExprP c = s.args[0];
        infer(c);
        if (c->type.ptr || !c->type.is_scalar()) user_error(c->loc, "if needs a scalar condition, got " + c->type.str() + " (use where() on tiles)");
        scopes_.emplace_back();
        walk_block(s.body);
        scopes_.pop_back();
        scopes_.emplace_back();
        walk_block(s.orelse);
        scopes_.pop_back();
        return;
      }
      case StmtKind::While: {
        ExprP c = s.args[0];
        infer(c);
        if (c->type.ptr || !c->type.is_scalar())
          user_error(c->loc, "while needs a scalar condition, got " + c->type.str() + " (reduce a tile to a scalar first)");
        scopes_.emplace_back();
        walk_block(s.body);
        scopes_.pop_back();
        return;
      }
      case StmtKind::Print:
        for (auto& a : s.args) infer(a);
        return;
      case StmtKind::Assert:
        infer(s.args[0]);
        if (s.args[0]->type.ptr || s.args[0]->type.elem != Scalar::I1) user_error(s.args[0]->loc, "assert() needs an i1 condition, got " + s.args[0]->type.str());
        for (size_t i = 1; i < s.args.size(); ++i) {  // values reported at the first false lane
          infer(s.args[i]);
          if (!s.args[i]->type.is_scalar() && s.args[i]->type.shape != s.args[0]->type.shape)
            user_error(s.args[i]->loc, "an assert's values must be scalars or of its condition's shape " + s.args[0]->type.str() + ", got " + s.args[i]->type.str());
        }
        return;
      case StmtKind::Return:
        return;
    }
  }
};

}  // namespace

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    r[i] = x == 1 ? y : x;
  }
  return r;
}

ScalarValue eval_param_expr(const ExprP& e, const Bindings& b, const Kernel* constexpr_only) {
  return eval_impl(e, b, constexpr_only);
}

std::array<int64_t, 3> grid_extents(const Kernel& k, const Bindings& b) {
  std::array<int64_t, 3> g{1, 1, 1};
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i) {
    ScalarValue v = eval_param_expr(k.grid[i], b);
    if (v.dtype_is_float()) user_error(k.grid[i]->loc, "grid axis " + std::to_string(i) + " must be an integer");
    if (v.i <= 0)
      user_error(k.grid[i]->loc, "grid axis " + std::to_string(i) + " of kernel '" + k.name + "' is " + std::to_string(v.i) +
                                     "; every axis must be >= 1");
    g[i] = v.i;
  }
  return g;
}

namespace {
ScalarValue parse_value(const Param& p, const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  if (is_float(p.dtype)) {
    double v = std::strtod(s, &end);
    if (end == s || *end) throw UserError("bad value '" + text + "' for " + scalar_name(p.dtype) + " parameter '" + p.name + "'");
    return ScalarValue::of_float(v, p.dtype);
  }
  if (p.dtype == Scalar::I1) {
    if (text == "1" || text == "true" || text == "True") return ScalarValue::of_int(1, Scalar::I1);
    if (text == "0" || text == "false" || text == "False") return ScalarValue::of_int(0, Scalar::I1);
    throw UserError("bad value '" + text + "' for i1 parameter '" + p.name + "'");
  }
  errno = 0;
  long long v = std::strtoll(s, &end, 0);
  if (end == s || *end || errno) throw UserError("bad value '" + text + "' for " + std::string(scalar_name(p.dtype)) + " parameter '" + p.name + "' (expected an integer)");
  if (p.dtype == Scalar::I32 && (v < INT32_MIN || v > INT32_MAX)) throw UserError("value " + text + " does not fit i32 parameter '" + p.name + "'");
  if (p.dtype == Scalar::I16 && (v < INT16_MIN || v > INT16_MAX)) throw UserError("value " + text + " does not fit i16 parameter '" + p.name + "'");
  if (p.dtype == Scalar::I8 && (v < INT8_MIN || v > INT8_MAX)) throw UserError("value " + text + " does not fit i8 parameter '" + p.name + "'");
  return ScalarValue::of_int(v, p.dtype);
}

ScalarValue convert(ScalarValue v, Scalar t) {
  if (is_float(t)) return ScalarValue::of_float(v.as_double(), t);
  if (v.dtype_is_float()) {  // the IR's cast semantics: NaN -> 0, out-of-range values saturate
    if (v.f != v.f) return ScalarValue::of_int(0, t);
    if (v.f <= -0x1p63) return ScalarValue::of_int(INT64_MIN, t);
    if (v.f >= 0x1p63) return ScalarValue::of_int(INT64_MAX, t);
  }
  return ScalarValue::of_int(v.as_int(), t);
}
}  // namespace

Bindings bind_params(const Module& m, const std::map<std::string, std::string>& overrides) {
  Bindings b;
  std::map<std::string, const Param*> seen;
  for (const Kernel& k : m.kernels) {
    for (const Param& p : k.params) {
      auto prev = seen.find(p.name);
      if (prev != seen.end()) {
        const Param& o = *prev->second;
        if (o.kind != p.kind || o.dtype != p.dtype)
          user_error(p.loc, "parameter '" + p.name + "' is declared differently by another kernel of this module");
        continue;
      }
      seen[p.name] = &p;
      if (p.kind == ParamKind::Pointer) continue;
      auto ov = overrides.find(p.name);
      if (ov != overrides.end()) {
        b[p.name] = parse_value(p, ov->second);
      } else if (p.init) {
        b[p.name] = convert(eval_param_expr(p.init, b), p.dtype);
      }
    }
  }
  for (const auto& [name, text] : overrides) {
    auto it = seen.find(name);
    if (it == seen.end()) {
      std::string names;
      for (const auto& [n, p] : seen)
        if (p->kind != ParamKind::Pointer) names += (names.empty() ? "" : ", ") + n;
      throw UserError("--arg " + name + ": no scalar parameter '" + name + "'" + (names.empty() ? "" : " (parameters: " + names + ")"));
    }
    if (it->second->kind == ParamKind::Pointer) throw UserError("--arg " + name + ": '" + name + "' is a pointer; give its data with --in " + name + "=file.npy");
  }
  for (const auto& [name, p] : seen)
    if (p->kind != ParamKind::Pointer && !b.count(name))
      user_error(p->loc, "parameter '" + name + "' has no value: give it a default or pass --arg " + name + "=VALUE");
  return b;
}

void verify_kernel(Kernel& k, const Bindings& b) { Verifier(k, b).run(); }

void verify_expr(const ExprP& e, const Kernel& k, const Bindings& b, const std::function<int(const std::string&)>& lookup) {
  // Only reads the kernel's slot table: expression checking declares nothing.
  Verifier(const_cast<Kernel&>(k), b, lookup).expr(e);
}

void verify_module(Module& m, const Bindings& b) {
  if (m.kernels.empty()) throw UserError(m.file + ": no kernel defined");
  for (Kernel& k : m.kernels) verify_kernel(k, b);
}

}  // namespace dtsim
