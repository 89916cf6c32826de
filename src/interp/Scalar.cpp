// The unboxed scalar form: scalar expressions (what every unscheduled DT kernel is made of: loop
// indices, address arithmetic, one-element loads and stores) evaluated on plain machine values in
// registers instead of one-element tiles, with no heap allocation. The element semantics are those
// of the tile operations (Elem.h), applied in the same order, so results are bit-identical; the
// frame slots keep holding ordinary Values, so the debugger sees every variable as before.
#include <cstring>
#include <functional>

#include "interp/Elem.h"

namespace dtsim::exec {

bool scalar_form(const Expr& e) {
  if (!e.type.shape.empty()) return false;
  switch (e.kind) {
    case ExprKind::Const:
    case ExprKind::Var:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms: return true;
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Where:
    case ExprKind::Cast:
    case ExprKind::Load:
      for (const ExprP& a : e.args)
        if (a && !scalar_form(*a)) return false;
      return true;
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: return false;
  }
  return false;
}

Raw raw_of(const Value& v) {
  return std::visit([](const auto& a) {
    using T = typename std::decay_t<decltype(a)>::value_type;
    return rmake<T>(a.data()[0]);
  }, v.data);
}

namespace {

template <class T> void put(Value& v, Raw r) { data<T>(v)[0] = rget<T>(r); }

void store_raw(Value& v, Raw r) {
  with_storage(storage_of(v.type.elem, v.type.ptr), [&](auto tag) {
    put<decltype(tag)>(v, r);
    return 0;
  });
}

// operand() of the generic path: `x` converted to `to`; literals built directly in that type.
Raw operand(Ctx& c, const Expr& x, Scalar to) {
  if (x.kind == ExprKind::Const) return const_raw(to, x);
  Sv v = eval_sv(c, x);
  if (!x.type.ptr && x.type.elem == to) return v.r;
  return convert_raw(v.r, x.type, to);
}

Sv binary(Ctx& c, const Expr& e) {
  const Expr& A = *e.args[0];
  const Expr& B = *e.args[1];
  if (A.type.ptr && B.type.ptr) {
    Sv a = eval_sv(c, A), b = eval_sv(c, B);
    bool same = a.buffer == b.buffer;
    uint8_t r = e.bop == BinOp::Eq ? (same && a.r.i64 == b.r.i64) : (!same || a.r.i64 != b.r.i64);
    return Sv{rmake<uint8_t>(r), -1};
  }
  if (A.type.ptr || B.type.ptr) {
    const Expr& P = A.type.ptr ? A : B;
    const Expr& I = A.type.ptr ? B : A;
    Sv p = eval_sv(c, P);
    int64_t off = rget<int64_t>(operand(c, I, Scalar::I64));
    int64_t r = e.bop == BinOp::Sub ? wsub(p.r.i64, off) : A.type.ptr ? wadd(p.r.i64, off) : wadd(off, p.r.i64);
    return Sv{rmake<int64_t>(r), p.buffer};
  }
  Scalar ct = e.type.elem;
  bool cmp = binop_is_compare(e.bop) || e.bop == BinOp::LAnd || e.bop == BinOp::LOr;
  if (binop_is_compare(e.bop)) ct = promote_operands(A, B);
  else if (e.bop == BinOp::LAnd || e.bop == BinOp::LOr) ct = Scalar::I1;
  Raw a = operand(c, A, ct);
  Raw b = operand(c, B, ct);
  return with_storage(storage_of(ct, false), [&](auto tag) {
    using T = decltype(tag);
    if (cmp) return Sv{rmake<uint8_t>(cmp_elem<T>(e.bop, rget<T>(a), rget<T>(b))), -1};
    return Sv{rmake<T>(round_elem<T>(bin_elem<T>(e.bop, rget<T>(a), rget<T>(b), e.loc), e.type.elem)), -1};
  });
}

Sv where(Ctx& c, const Expr& e) {
  Sv cond = eval_sv(c, *e.args[0]);
  bool pick = rget<uint8_t>(cond.r) != 0;
  if (e.type.ptr) {
    Sv a = eval_sv(c, *e.args[1]), b = eval_sv(c, *e.args[2]);
    return pick ? a : b;  // one pointer, whole (its buffer too: the sides may point into two arrays)
  }
  Raw a = operand(c, *e.args[1], e.type.elem);
  Raw b = operand(c, *e.args[2], e.type.elem);
  return Sv{pick ? a : b, -1};
}

}  // namespace

Raw const_raw(Scalar t, const Expr& x) {
  return with_storage(storage_of(t, false), [&](auto tag) {
    using T = decltype(tag);
    return rmake<T>(x.is_float ? conv_to<T>(x.fval, t) : conv_to<T>(x.ival, t));
  });
}

Raw convert_raw(Raw r, const Type& from, Scalar to) {
  return with_storage(storage_of(from.elem, from.ptr), [&](auto stag) {
    using S = decltype(stag);
    return with_storage(storage_of(to, false), [&](auto dtag) {
      using D = decltype(dtag);
      return rmake<D>(is_narrow(to) && from.elem != to ? conv_to<D>(rget<S>(r), to) : conv_elem<D>(rget<S>(r)));
    });
  });
}

int64_t raw_int(Raw r, const Type& t) {
  return with_storage(storage_of(t.elem, t.ptr), [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) return conv_elem<int64_t>(rget<T>(r));
    else return static_cast<int64_t>(rget<T>(r));
  });
}

bool raw_truth(Raw r, const Type& t) {
  return with_storage(storage_of(t.elem, t.ptr), [&](auto tag) { return rget<decltype(tag)>(r) != 0; });
}

void Ctx::flush(int slot) {
  size_t s = static_cast<size_t>(slot);
  if (!rvalid) return;
  if (rvalid[s] == 2) {
    write_value(f->slots[s], *rtype[s], regs[s]);
    rvalid[s] = 1;
  } else if (rvalid[s] == 3) {
    lazy_tile(f->slots[s], *rtype[s], regs[s].r.i64);
    rvalid[s] = 4;
  }
}

void Ctx::flush_all() {
  if (!rvalid) return;
  for (size_t s = 0; s < f->slots.size(); ++s)
    if (rvalid[s] == 2) flush(static_cast<int>(s));
}

void lazy_tile(Value& out, const Type& t, int64_t v) {
  prep(out, t);
  const int64_t n = t.numel();
  if (t.elem == Scalar::I1) {
    uint8_t* p = data<uint8_t>(out);
    std::memset(p, 1, static_cast<size_t>(v));
    std::memset(p + v, 0, static_cast<size_t>(n - v));
  } else if (t.elem == Scalar::I32) {
    int32_t* p = data<int32_t>(out);
    for (int64_t o = 0; o < n; ++o) p[o] = static_cast<int32_t>(static_cast<uint32_t>(v) + static_cast<uint32_t>(o));
  } else {
    int64_t* p = data<int64_t>(out);
    for (int64_t o = 0; o < n; ++o) p[o] = wadd<int64_t>(v, o);
  }
}

Value box(const Type& t, const Sv& v) {
  Value out = alloc(t);
  store_raw(out, v.r);
  out.buffer = v.buffer;
  return out;
}


Sv eval_sv(Ctx& c, const Expr& e) {
  switch (e.kind) {
    case ExprKind::Const: return Sv{const_raw(e.type.elem, e), -1};
    case ExprKind::Var: {
      c.flush(e.slot);
      const Value& v = c.f->slots[static_cast<size_t>(e.slot)];
      if (!v.defined()) throw RuntimeFault(e.loc, "'" + e.name + "' is used before it is assigned");
      return Sv{raw_of(v), v.buffer};
    }
    case ExprKind::ProgramId: return Sv{rmake<int32_t>(static_cast<int32_t>(c.f->pid[static_cast<size_t>(e.axis)])), -1};
    case ExprKind::NumPrograms: return Sv{rmake<int32_t>(static_cast<int32_t>(c.f->grid[static_cast<size_t>(e.axis)])), -1};
    case ExprKind::Unary: {
      Raw x = operand(c, *e.args[0], e.type.elem);
      return with_storage(storage_of(e.type.elem, false), [&](auto tag) {
        using T = decltype(tag);
        return Sv{rmake<T>(round_elem<T>(un_elem<T>(e.uop, rget<T>(x)), e.type.elem)), -1};
      });
    }
    case ExprKind::Binary: return binary(c, e);
    case ExprKind::Where: return where(c, e);
    case ExprKind::Cast: {
      const Expr& x = *e.args[0];
      Sv v = eval_sv(c, x);
      return Sv{convert_raw(v.r, x.type, e.dtype), -1};
    }
    case ExprKind::Load: {
      Sv p = eval_sv(c, *e.args[0]);
      Sv m;
      if (e.args[1]) m = eval_sv(c, *e.args[1]);
      Raw o;
      if (e.args[2]) o = operand(c, *e.args[2], e.type.elem);
      return Sv{load_scalar(c, e, p, e.args[1] ? &m : nullptr, e.args[2] ? &o : nullptr), -1};
    }
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: break;
  }
  internal_error("Interp", "expression outside the scalar form");
}

// ---- the compiled scalar form ----

namespace {

Sv k_fn(Ctx&, const SNode& n) { return Sv{n.k, -1}; }

__attribute__((noinline)) Sv var_slow(Ctx& c, const SNode& n) {
  size_t s = static_cast<size_t>(n.slot);
  const Value& v = c.f->slots[s];
  if (!v.defined()) throw RuntimeFault(n.e->loc, "'" + n.e->name + "' is used before it is assigned");
  Sv r{raw_of(v), v.buffer};
  if (v.type == n.t) c.regs[s] = r, c.rvalid[s] = 1;
  return r;
}

template <class T> Sv var_fn(Ctx& c, const SNode& n) {
  size_t s = static_cast<size_t>(n.slot);
  if (c.rvalid[s]) [[likely]]
    return c.regs[s];
  return var_slow(c, n);
}

Sv pid_fn(Ctx& c, const SNode& n) { return Sv{rmake<int32_t>(static_cast<int32_t>(c.f->pid[static_cast<size_t>(n.slot)])), -1}; }
Sv nprog_fn(Ctx& c, const SNode& n) { return Sv{rmake<int32_t>(static_cast<int32_t>(c.f->grid[static_cast<size_t>(n.slot)])), -1}; }

template <class S, class D> Sv cvt_fn(Ctx& c, const SNode& n) {
  Sv v = run_node(c, n.a);
  D d = is_narrow(n.t.elem) && n.from.elem != n.t.elem ? conv_to<D>(rget<S>(v.r), n.t.elem) : conv_elem<D>(rget<S>(v.r));
  return Sv{rmake<D>(d), -1};
}

template <class T> Sv un_fn(Ctx& c, const SNode& n) {
  Sv x = run_node(c, n.a);
  return Sv{rmake<T>(round_elem<T>(un_elem<T>(n.uop, rget<T>(x.r)), n.t.elem)), -1};
}

// Operand fetch, specialized on the operand's kind so that variables and literals are read in
// place instead of through a node call: 0 = any node, 1 = variable, 2 = literal.
template <int K> inline Sv fetch(Ctx& c, const SNode* n) {
  if constexpr (K == 2) {
    return Sv{n->k, -1};
  } else if constexpr (K == 1) {
    size_t s = static_cast<size_t>(n->slot);
    if (c.rvalid[s]) [[likely]]
      return c.regs[s];
    return n->fn(c, *n);
  } else {
    return n->fn(c, *n);
  }
}
inline int kind_of(const SNode* n) { return n->slot >= 0 && n->e && n->e->kind == ExprKind::Var ? 1 : n->fn == &k_fn ? 2 : 0; }

template <class T, BinOp OP, int KA, int KB> Sv bin_op_fn(Ctx& c, const SNode& n) {
  T x = rget<T>(fetch<KA>(c, n.a).r);
  T y = rget<T>(fetch<KB>(c, n.b).r);
  return Sv{rmake<T>(round_elem<T>(bin_elem<T>(OP, x, y, n.e->loc), n.t.elem)), -1};
}
template <class T, int KA, int KB> Sv bin_fn(Ctx& c, const SNode& n) {
  T x = rget<T>(fetch<KA>(c, n.a).r);
  T y = rget<T>(fetch<KB>(c, n.b).r);
  return Sv{rmake<T>(round_elem<T>(bin_elem<T>(n.bop, x, y, n.e->loc), n.t.elem)), -1};
}
template <class T, int KA, int KB> Sv cmp_fn(Ctx& c, const SNode& n) {
  T x = rget<T>(fetch<KA>(c, n.a).r);
  T y = rget<T>(fetch<KB>(c, n.b).r);
  return Sv{rmake<uint8_t>(cmp_elem<T>(n.bop, x, y)), -1};
}

// Pointer +/- offset; I32 = the offset is an i32 value widened here (the i64 operand conversion).
template <int KA, int KB, bool I32> Sv ptr_arith_fn(Ctx& c, const SNode& n) {
  Sv p = fetch<KA>(c, n.a);
  Sv o = fetch<KB>(c, n.b);
  int64_t off = I32 ? static_cast<int64_t>(o.r.i32) : o.r.i64;
  int64_t r = n.bop == BinOp::Sub ? wsub(p.r.i64, off) : wadd(p.r.i64, off);
  return Sv{rmake<int64_t>(r), p.buffer};
}
Sv ptr_cmp_fn(Ctx& c, const SNode& n) {
  Sv a = run_node(c, n.a), b = run_node(c, n.b);
  bool same = a.buffer == b.buffer;
  uint8_t r = n.bop == BinOp::Eq ? (same && a.r.i64 == b.r.i64) : (!same || a.r.i64 != b.r.i64);
  return Sv{rmake<uint8_t>(r), -1};
}

Sv where_fn(Ctx& c, const SNode& n) {
  bool pick = run_node(c, n.x).r.b != 0;
  Sv a = run_node(c, n.a), b = run_node(c, n.b);
  if (n.t.ptr) return pick ? a : b;  // one pointer, whole (its buffer too: the sides may point into two arrays)
  return Sv{pick ? a.r : b.r, -1};
}

Sv load_fn(Ctx& c, const SNode& n) {
  Sv p = run_node(c, n.a);
  Sv m, o;
  if (n.b) m = run_node(c, n.b);
  if (n.x) o = run_node(c, n.x);
  return Sv{load_scalar(c, *n.e, p, n.b ? &m : nullptr, n.x ? &o.r : nullptr), -1};
}

template <template <class> class F> SFn by_storage(size_t idx) {
  switch (idx) {
    case 0: return &F<uint8_t>::fn;
    case 1: return &F<int32_t>::fn;
    case 2: return &F<int64_t>::fn;
    case 3: return &F<float>::fn;
    default: return &F<double>::fn;
  }
}
template <class T> struct VarF { static Sv fn(Ctx& c, const SNode& n) { return var_fn<T>(c, n); } };
template <class T> struct UnF { static Sv fn(Ctx& c, const SNode& n) { return un_fn<T>(c, n); } };
// The function of a binary node for storage T, op and operand kinds.
template <class T, int KA, int KB> SFn bin_kinds(BinOp op, bool cmp) {
  if (cmp) return &cmp_fn<T, KA, KB>;
  switch (op) {
    case BinOp::Add: return &bin_op_fn<T, BinOp::Add, KA, KB>;
    case BinOp::Sub: return &bin_op_fn<T, BinOp::Sub, KA, KB>;
    case BinOp::Mul: return &bin_op_fn<T, BinOp::Mul, KA, KB>;
    case BinOp::Div:
    case BinOp::FloorDiv:
    case BinOp::Mod:
    case BinOp::And:
    case BinOp::Or:
    case BinOp::Xor:
    case BinOp::Shl:
    case BinOp::Shr:
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::LAnd:
    case BinOp::LOr:
    case BinOp::Min:
    case BinOp::Max:
    case BinOp::MinNum:
    case BinOp::MaxNum:
    case BinOp::Cdiv:
    DT_MATH_BINOP_CASES
      return &bin_fn<T, KA, KB>;
  }
  return &bin_fn<T, KA, KB>;
}
template <class T> SFn bin_for(BinOp op, bool cmp, int ka, int kb) {
  switch (ka * 3 + kb) {
    case 0: return bin_kinds<T, 0, 0>(op, cmp);
    case 1: return bin_kinds<T, 0, 1>(op, cmp);
    case 2: return bin_kinds<T, 0, 2>(op, cmp);
    case 3: return bin_kinds<T, 1, 0>(op, cmp);
    case 4: return bin_kinds<T, 1, 1>(op, cmp);
    case 5: return bin_kinds<T, 1, 2>(op, cmp);
    case 6: return bin_kinds<T, 2, 0>(op, cmp);
    case 7: return bin_kinds<T, 2, 1>(op, cmp);
    default: return bin_kinds<T, 2, 2>(op, cmp);
  }
}
template <bool I32> SFn ptr_for(int ka, int kb) {
  switch (ka * 3 + kb) {
    case 0: return &ptr_arith_fn<0, 0, I32>;
    case 1: return &ptr_arith_fn<0, 1, I32>;
    case 2: return &ptr_arith_fn<0, 2, I32>;
    case 3: return &ptr_arith_fn<1, 0, I32>;
    case 4: return &ptr_arith_fn<1, 1, I32>;
    case 5: return &ptr_arith_fn<1, 2, I32>;
    case 6: return &ptr_arith_fn<2, 0, I32>;
    case 7: return &ptr_arith_fn<2, 1, I32>;
    default: return &ptr_arith_fn<2, 2, I32>;
  }
}

template <class S> SFn cvt_for(size_t d) {
  switch (d) {
    case 0: return &cvt_fn<S, uint8_t>;
    case 1: return &cvt_fn<S, int32_t>;
    case 2: return &cvt_fn<S, int64_t>;
    case 3: return &cvt_fn<S, float>;
    default: return &cvt_fn<S, double>;
  }
}

struct Compiler {
  std::deque<SNode>& nodes;

  SNode* node(const Expr& e, const Type& t) {
    nodes.emplace_back();
    SNode* n = &nodes.back();
    n->e = &e;
    n->t = t;
    return n;
  }
  const SNode* constant(const Expr& e, Raw k, Scalar t) {
    SNode* n = node(e, Type{t, false, {}});
    n->fn = &k_fn;
    n->k = k;
    return n;
  }
  const SNode* convert(const Expr& e, const SNode* a, const Type& from, Scalar to) {
    SNode* n = node(e, Type{to, false, {}});
    n->from = from;
    n->a = a;
    size_t d = storage_of(to, false);
    switch (storage_of(from.elem, from.ptr)) {
      case 0: n->fn = cvt_for<uint8_t>(d); break;
      case 1: n->fn = cvt_for<int32_t>(d); break;
      case 2: n->fn = cvt_for<int64_t>(d); break;
      case 3: n->fn = cvt_for<float>(d); break;
      default: n->fn = cvt_for<double>(d); break;
    }
    return n;
  }
  // operand(): `x` converted to `to`; literals built directly in that type.
  const SNode* operand(const Expr& x, Scalar to) {
    if (x.kind == ExprKind::Const) return constant(x, const_raw(to, x), to);
    const SNode* v = compile(x);
    if (!x.type.ptr && x.type.elem == to) return v;
    return convert(x, v, x.type, to);
  }

  const SNode* compile(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Const: return constant(e, const_raw(e.type.elem, e), e.type.elem);
      case ExprKind::Var: {
        SNode* n = node(e, e.type);
        n->slot = e.slot;
        n->idx = storage_of(e.type.elem, e.type.ptr);
        n->fn = by_storage<VarF>(n->idx);
        return n;
      }
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms: {
        SNode* n = node(e, e.type);
        n->slot = e.axis;
        n->fn = e.kind == ExprKind::ProgramId ? &pid_fn : &nprog_fn;
        return n;
      }
      case ExprKind::Unary: {
        SNode* n = node(e, e.type);
        n->uop = e.uop;
        n->a = operand(*e.args[0], e.type.elem);
        n->fn = by_storage<UnF>(storage_of(e.type.elem, false));
        return n;
      }
      case ExprKind::Binary: {
        const Expr& A = *e.args[0];
        const Expr& B = *e.args[1];
        SNode* n = node(e, e.type);
        n->bop = e.bop;
        if (A.type.ptr && B.type.ptr) {
          n->a = compile(A);
          n->b = compile(B);
          n->fn = &ptr_cmp_fn;
        } else if (A.type.ptr || B.type.ptr) {
          const Expr& I = A.type.ptr ? B : A;
          n->a = compile(A.type.ptr ? A : B);
          bool i32 = I.kind != ExprKind::Const && !I.type.ptr && I.type.elem == Scalar::I32;
          n->b = i32 ? compile(I) : operand(I, Scalar::I64);
          // int + ptr adds in the other order; wraparound addition commutes, so one function serves.
          n->fn = i32 ? ptr_for<true>(kind_of(n->a), kind_of(n->b)) : ptr_for<false>(kind_of(n->a), kind_of(n->b));
        } else {
          Scalar ct = e.type.elem;
          bool cmp = binop_is_compare(e.bop) || e.bop == BinOp::LAnd || e.bop == BinOp::LOr;
          if (binop_is_compare(e.bop)) ct = promote_operands(A, B);
          else if (e.bop == BinOp::LAnd || e.bop == BinOp::LOr) ct = Scalar::I1;
          n->a = operand(A, ct);
          n->b = operand(B, ct);
          int ka = kind_of(n->a), kb = kind_of(n->b);
          switch (storage_of(ct, false)) {
            case 0: n->fn = bin_for<uint8_t>(e.bop, cmp, ka, kb); break;
            case 1: n->fn = bin_for<int32_t>(e.bop, cmp, ka, kb); break;
            case 2: n->fn = bin_for<int64_t>(e.bop, cmp, ka, kb); break;
            case 3: n->fn = bin_for<float>(e.bop, cmp, ka, kb); break;
            default: n->fn = bin_for<double>(e.bop, cmp, ka, kb); break;
          }
        }
        return n;
      }
      case ExprKind::Where: {
        SNode* n = node(e, e.type);
        n->x = compile(*e.args[0]);
        if (e.type.ptr) {
          n->a = compile(*e.args[1]);
          n->b = compile(*e.args[2]);
        } else {
          n->a = operand(*e.args[1], e.type.elem);
          n->b = operand(*e.args[2], e.type.elem);
        }
        n->fn = &where_fn;
        return n;
      }
      case ExprKind::Cast: {
        const Expr& x = *e.args[0];
        if (!x.type.ptr && x.type.elem == e.dtype) return compile(x);  // the identity conversion
        return convert(e, compile(x), x.type, e.dtype);
      }
      case ExprKind::Load: {
        SNode* n = node(e, e.type);
        n->a = compile(*e.args[0]);
        if (e.args[1]) n->b = compile(*e.args[1]);
        if (e.args[2]) n->x = operand(*e.args[2], e.type.elem);
        n->fn = &load_fn;
        return n;
      }
      case ExprKind::Arange:
      case ExprKind::Full:
      case ExprKind::ExpandDims:
      case ExprKind::Reshape:
      case ExprKind::Trans:
      case ExprKind::Broadcast:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Bitcast:
      case ExprKind::CombineArg:
      case ExprKind::Swizzle2d:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt:
      case ExprKind::Machine:
      case ExprKind::Gather:
      case ExprKind::Histogram: break;
    }
    internal_error("Interp", "expression outside the scalar form");
  }
};

}  // namespace

const SNode* ScalarProgram::compile_scalar(const Expr& e) { return Compiler{nodes}.compile(e); }

namespace {

// Reads of slot `s` in an expression.
int var_reads(const Expr* e, int s) {
  if (!e) return 0;
  int n = e->kind == ExprKind::Var && e->slot == s ? 1 : 0;
  for (const ExprP& a : e->args) n += var_reads(a.get(), s);
  return n;
}

// Reads of slot `s` (element type `t`) that the tile form makes as leaves of fused trees (Tiles.cpp's
// leaves()) when it evaluates `n`; `bad` set when `s` is read any other way.
int leaf_reads(const TNode* n, int s, Scalar t, bool& bad);
int tree_leaf_reads(const Fused& f, int s, Scalar t, bool& bad) {
  int r = 0;
  for (const FLeaf& L : f.leaves) {
    const Expr& le = *L.n->e;
    if (le.kind == ExprKind::Var && le.slot == s) {
      if (L.conv && L.ct != t) bad = true;
      ++r;
    } else {
      r += leaf_reads(L.n, s, t, bad);
    }
  }
  return r;
}
int leaf_reads(const TNode* n, int s, Scalar t, bool& bad) {
  if (!n) return 0;
  if (n->s) {  // compiled scalar form: it reads no tile slot
    if (var_reads(n->e, s)) bad = true;
    return 0;
  }
  if (n->fused) return tree_leaf_reads(*n->fused, s, t, bad);
  if (n->e->kind == ExprKind::Var && n->e->slot == s) bad = true;
  int r = 0;
  for (const TNode* k : n->kids) r += leaf_reads(k, s, t, bad);
  return r;
}

}  // namespace

// A tile load `v = load(p + offs, ...)` (v's only assignment) may leave its elements in the
// buffer when every later read of v is a leaf of a fused tree in the statements that directly follow
// it in the same block (assignments and stores only, the last of them the last read of v, no store
// before it): nothing writes a buffer between the load and those reads, so the buffer still holds
// what the copy would hold (a store whose tree reads v writes only after it has read it, or, into
// v's own buffer, after v is copied: store_tnode). The slot is read nowhere else, so no one sees it.
void ScalarProgram::view_slots(const Kernel& k) {
  size_t ns = k.slot_types.size();
  view_slot.assign(ns, 0);
  std::vector<int> assigns(ns, 0), reads(ns, 0);
  for (const Stmt* s : k.stmts) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::For)
      for (int sl : s->slots)
        if (sl >= 0 && static_cast<size_t>(sl) < ns) ++assigns[static_cast<size_t>(sl)];
    std::function<void(const Expr*)> count = [&](const Expr* e) {
      if (!e) return;
      if (e->kind == ExprKind::Var && e->slot >= 0 && static_cast<size_t>(e->slot) < ns) ++reads[static_cast<size_t>(e->slot)];
      for (const ExprP& a : e->args) count(a.get());
    };
    for (const ExprP& a : s->args) count(a.get());
  }
  // Reads of slot `sl` in statement `s` through fused leaves; -1 when read another way.
  auto stmt_reads = [&](const Stmt& s, int sl, Scalar t) {
    bool bad = false;
    int r = 0;
    const auto& tr = troots[static_cast<size_t>(s.id)];
    if (s.kind == StmtKind::Assign && s.targets.size() == 1 && tr[0]) {
      r = leaf_reads(tr[0], sl, t, bad);
    } else if (s.kind == StmtKind::Store && tr[0]) {
      r = leaf_reads(tr[0], sl, t, bad) + leaf_reads(tr[2], sl, t, bad);
      const TNode* v = tr[1];
      // store_tnode's direct path (its shape test is static) reads the direct tree's leaves
      if (tr[0]->affine && v->direct && v->direct->numel == tr[0]->e->type.numel()) r += tree_leaf_reads(*v->direct, sl, t, bad);
      else r += leaf_reads(v, sl, t, bad);
    } else if (s.kind != StmtKind::Assign && s.kind != StmtKind::Store) {
      return -1;
    }
    int all = 0;
    for (const ExprP& a : s.args) all += var_reads(a.get(), sl);
    return bad || r != all ? -1 : r;
  };
  std::function<void(const std::vector<StmtP>&)> block = [&](const std::vector<StmtP>& body) {
    for (size_t i = 0; i < body.size(); ++i) {
      const Stmt& s = *body[i];
      block(s.body);
      block(s.orelse);
      if (s.kind != StmtKind::Assign || s.targets.size() != 1) continue;
      const TNode* t = troots[static_cast<size_t>(s.id)][0];
      int sl = s.slots[0];
      if (!t || t->e->kind != ExprKind::Load || !t->kids[0] || !t->kids[0]->affine || sl < 0 || static_cast<size_t>(sl) >= ns) continue;
      const Type& ty = t->e->type;
      size_t u = static_cast<size_t>(sl);
      if (assigns[u] != 1 || reads[u] == 0 || !(k.slot_types[u] == ty) || ty.ptr || ty.shape.empty() || is_narrow(ty.elem) || ty.elem == Scalar::I1) continue;
      int got = 0;
      for (size_t j = i + 1; j < body.size() && got < reads[u]; ++j) {
        const Stmt& q = *body[j];
        int r = stmt_reads(q, sl, ty.elem);
        if (r < 0) break;
        got += r;
        if (q.kind == StmtKind::Store && got < reads[u]) break;  // a store before the last read
      }
      if (got == reads[u]) view_slot[u] = 1;
    }
  };
  block(k.body);
}

ScalarProgram::ScalarProgram(const Kernel& k) : consec(consecutive_slots(k)) {
  roots.assign(k.stmts.size(), {nullptr, nullptr, nullptr});
  troots.assign(k.stmts.size(), {nullptr, nullptr, nullptr});
  Compiler cc{nodes};
  for (const Stmt* s : k.stmts) {
    auto& r = roots[static_cast<size_t>(s->id)];
    switch (s->kind) {
      case StmtKind::Assign:
        if (s->targets.size() != 1) break;
        if (scalar_form(*s->args[0])) r[0] = cc.compile(*s->args[0]);
        else troots[static_cast<size_t>(s->id)][0] = tile(*s->args[0]);
        break;
      case StmtKind::Store: {
        const Expr& pe = *s->args[0];
        const Expr& ve = *s->args[1];
        if (scalar_form(pe) && scalar_form(ve) && (!s->args[2] || scalar_form(*s->args[2]))) {
          r[0] = cc.compile(pe);
          // A literal is stored as the pointer's element type, any other value as its own type.
          r[1] = ve.kind == ExprKind::Const ? cc.constant(ve, const_raw(pe.type.elem, ve), pe.type.elem) : cc.compile(ve);
          if (s->args[2]) r[2] = cc.compile(*s->args[2]);
        } else {
          auto& t = troots[static_cast<size_t>(s->id)];
          t[0] = tile(pe);
          t[1] = tile(ve);
          if (t[0]->affine) {  // a range store may compute the value straight into the buffer (store_tnode)
            TNode& v = tnodes[static_cast<size_t>(t[1]->idx)];
            v.direct = v.fused && !v.fused->reduce ? v.fused : v.fused ? nullptr : fuse_tree(fused, v, true);
          }
          // An outer pointer's rows and columns; a nested one (also affine) only where the value
          // is not computed straight into the buffer.
          if (t[0]->outer && (!t[0]->affine || !t[1]->direct)) tnodes[static_cast<size_t>(t[0]->idx)].rp = nrp++;
          if (s->args[2]) t[2] = tile(*s->args[2]);
        }
        break;
      }
      case StmtKind::For:
        for (size_t i = 0; i < 3; ++i)
          if (scalar_form(*s->args[i])) r[i] = cc.compile(*s->args[i]);
        break;
      case StmtKind::If:
      case StmtKind::While:
        if (scalar_form(*s->args[0])) r[0] = cc.compile(*s->args[0]);
        break;
      case StmtKind::Atomic: {  // through an outer pointer: its rows and columns (atomic_tnode), else the tile path
        if (!scalar_form(*s->args[0])) {
          const TNode* p = tile(*s->args[0]);
          if (p->outer) {
            auto& t = troots[static_cast<size_t>(s->id)];
            t[0] = p;
            tnodes[static_cast<size_t>(p->idx)].rp = nrp++;
            t[1] = tile(*s->args[1]);
            if (s->args[2]) t[2] = tile(*s->args[2]);
          }
        }
        break;
      }
      case StmtKind::Print:
      case StmtKind::Assert:
      case StmtKind::Return: break;
    }
  }
  view_slots(k);
  row_slots(k);
}

}  // namespace dtsim::exec
