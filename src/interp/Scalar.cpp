// The unboxed scalar form: scalar expressions (what every unscheduled DT kernel is made of: loop
// indices, address arithmetic, one-element loads and stores) evaluated on plain machine values in
// registers instead of one-element tiles, with no heap allocation. The element semantics are those
// of the tile operations (Elem.h), applied in the same order, so results are bit-identical; the
// frame slots keep holding ordinary Values, so the debugger sees every variable as before.
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
    case ExprKind::Swizzle2d: return false;
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
    if (a.buffer != b.buffer) {
      const Buffers* bs = c.f->buffers;
      throw RuntimeFault(e.loc, "where() selects between pointers into two buffers ('" + bs->list[static_cast<size_t>(a.buffer)].name + "' and '" +
                                    bs->list[static_cast<size_t>(b.buffer)].name + "'); the interpreter needs one buffer per pointer tile");
    }
    return Sv{pick ? a.r : b.r, a.buffer};
  }
  Raw a = operand(c, *e.args[1], e.type.elem);
  Raw b = operand(c, *e.args[2], e.type.elem);
  return Sv{pick ? a : b, -1};
}

}  // namespace

Raw const_raw(Scalar t, const Expr& x) {
  return with_storage(storage_of(t, false), [&](auto tag) {
    using T = decltype(tag);
    T v = x.is_float ? conv_elem<T>(x.fval) : conv_elem<T>(x.ival);
    return rmake<T>(round_elem<T>(v, t));
  });
}

Raw convert_raw(Raw r, const Type& from, Scalar to) {
  return with_storage(storage_of(from.elem, from.ptr), [&](auto stag) {
    using S = decltype(stag);
    return with_storage(storage_of(to, false), [&](auto dtag) {
      using D = decltype(dtag);
      D d = conv_elem<D>(rget<S>(r));
      if (is_half(to) && from.elem != to) d = round_elem<D>(d, to);
      return rmake<D>(d);
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

Value box(const Type& t, const Sv& v) {
  Value out = alloc(t);
  store_raw(out, v.r);
  out.buffer = v.buffer;
  return out;
}

void write_slot(Value& dst, const Type& t, const Sv& v) {
  if (dst.defined() && dst.type == t) {
    store_raw(dst, v.r);
    dst.buffer = v.buffer;
  } else {
    dst = box(t, v);
  }
}

Sv eval_sv(Ctx& c, const Expr& e) {
  switch (e.kind) {
    case ExprKind::Const: return Sv{const_raw(e.type.elem, e), -1};
    case ExprKind::Var: {
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
    case ExprKind::Swizzle2d: break;
  }
  internal_error("Interp", "expression outside the scalar form");
}

}  // namespace dtsim::exec
