// Unsigned integer operations on the IR's signed ones (Unsigned.h).
#include "ir/Unsigned.h"

#include <cstdint>

namespace dtsim {

namespace {

ExprP B(BinOp o, ExprP x, ExprP y, SourceLoc loc) { return make_binary(o, std::move(x), std::move(y), loc); }

}  // namespace

ExprP int_of(int64_t v, Scalar t, SourceLoc loc) {
  ExprP c = t == Scalar::I1 ? make_const_bool(v != 0, loc) : make_const_int(v, loc);
  c->weak = t == Scalar::I32 && v == static_cast<int32_t>(v);
  c->dtype = t;
  return c;
}

Scalar int_of_bits(int bits) { return bits == 8 ? Scalar::I8 : bits == 16 ? Scalar::I16 : bits == 32 ? Scalar::I32 : Scalar::I64; }

int64_t sign_bit_of(Scalar t) { return t == Scalar::I64 ? INT64_MIN : -(int64_t{1} << (scalar_bytes(t) * 8 - 1)); }

ExprP flip_sign(ExprP x, Scalar t, SourceLoc loc) { return B(BinOp::Xor, std::move(x), int_of(sign_bit_of(t), t, loc), loc); }

ExprP unsigned_compare(BinOp cmp, ExprP a, ExprP b, Scalar t, SourceLoc loc) {
  if (t == Scalar::I1)  // true (1) above false (0): compared as i32
    return B(cmp, make_cast(std::move(a), Scalar::I32, loc), make_cast(std::move(b), Scalar::I32, loc), loc);
  return B(cmp, flip_sign(std::move(a), t, loc), flip_sign(std::move(b), t, loc), loc);
}

ExprP zero_extend_i64(ExprP x, Scalar from, SourceLoc loc) {
  int bits = scalar_bytes(from) * 8;
  return B(BinOp::And, make_cast(std::move(x), Scalar::I64, loc), int_of((int64_t{1} << bits) - 1, Scalar::I64, loc), loc);
}

// A logical shift clears the bits an arithmetic shift copies in; narrow division and remainder go
// through i64 on zero-extended operands (i64 ones: a halved dividend, corrected); max/min compare
// with the sign bit flipped; the high half of a product comes from the wide product (i64: from the
// four products of 32-bit halves).
ExprP unsigned_binary(UnsignedOp op, ExprP a, ExprP b, Scalar it, SourceLoc loc, const BindFn& bind) {
  if (it == Scalar::I1) user_error(loc, "unsigned ops on i1 are not supported");
  auto k = [&](int64_t x, Scalar s) { return int_of(x, s, loc); };
  auto Bo = [&](BinOp o, ExprP x, ExprP y) { return B(o, std::move(x), std::move(y), loc); };
  const int bits = scalar_bytes(it) * 8;
  const int64_t low = it == Scalar::I64 ? -1 : (int64_t{1} << bits) - 1;  // the zero-extension mask
  switch (op) {
    case UnsignedOp::Shr: {
      // a count >= the width (unsigned) gives 0 (IR.h)
      if (it != Scalar::I64) {
        ExprP wide = Bo(BinOp::And, make_cast(a, Scalar::I64, loc), k(low, Scalar::I64));
        ExprP n = Bo(BinOp::And, make_cast(b, Scalar::I64, loc), k(low, Scalar::I64));  // the count, unsigned
        return make_cast(Bo(BinOp::Shr, wide, n), it, loc);  // (>= 64: the sign of a non-negative value, 0)
      }
      // (a >> s) & (((1 << (63 - s)) << 1) - 1) for s in [0, 63]; 0 past it
      ExprP s = bind("shift", b);
      ExprP in = make_binary(BinOp::Eq, Bo(BinOp::And, make_var(s->name, loc), k(~int64_t(63), it)), k(0, it), loc);
      ExprP s63 = Bo(BinOp::And, make_var(s->name, loc), k(63, it));
      ExprP keep = Bo(BinOp::Sub, Bo(BinOp::Shl, Bo(BinOp::Shl, k(1, it), Bo(BinOp::Sub, k(63, it), clone_expr(s63))), k(1, it)), k(1, it));
      return make_where(in, Bo(BinOp::And, Bo(BinOp::Shr, a, s63), keep), k(0, it), loc);
    }
    case UnsignedOp::MulHi: {
      if (it == Scalar::I64) {
        // The high 64 bits of the 128-bit product, from the four products of 32-bit halves (each
        // exact in 64 bits), with the carries out of the middle column.
        auto lo32 = [&](ExprP x) { return Bo(BinOp::And, std::move(x), k(0xFFFFFFFFll, it)); };
        auto hi32 = [&](ExprP x) { return Bo(BinOp::And, Bo(BinOp::Shr, std::move(x), k(32, it)), k(0xFFFFFFFFll, it)); };  // logical
        ExprP va = bind("umulhi_a", a), vb = bind("umulhi_b", b);
        auto V = [&](const ExprP& v) { return make_var(v->name, loc); };
        ExprP al = bind("umulhi_al", lo32(V(va))), ah = bind("umulhi_ah", hi32(V(va)));
        ExprP bl = bind("umulhi_bl", lo32(V(vb))), bh = bind("umulhi_bh", hi32(V(vb)));
        ExprP lh = bind("umulhi_lh", Bo(BinOp::Mul, V(al), V(bh))), hl = bind("umulhi_hl", Bo(BinOp::Mul, V(ah), V(bl)));
        ExprP mid = Bo(BinOp::Add, Bo(BinOp::Add, hi32(Bo(BinOp::Mul, V(al), V(bl))), lo32(V(lh))), lo32(V(hl)));
        return Bo(BinOp::Add, Bo(BinOp::Add, Bo(BinOp::Add, Bo(BinOp::Mul, V(ah), V(bh)), hi32(V(lh))), hi32(V(hl))), hi32(mid));
      }
      ExprP wa = Bo(BinOp::And, make_cast(a, Scalar::I64, loc), k(low, Scalar::I64));
      ExprP wb = Bo(BinOp::And, make_cast(b, Scalar::I64, loc), k(low, Scalar::I64));
      ExprP prod = Bo(BinOp::Mul, wa, wb);  // wraps past 2^63: the shift below is then arithmetic
      ExprP hi = Bo(BinOp::And, Bo(BinOp::Shr, prod, k(bits, Scalar::I64)), k(low, Scalar::I64));
      return make_cast(hi, it, loc);
    }
    case UnsignedOp::Div:
    case UnsignedOp::Rem: {
      if (it == Scalar::I64) {
        // No wider type: halve the dividend (a logical shift, so it is non-negative), divide by b as
        // signed, double the quotient and correct it by one (Hacker's Delight 9-3). A divisor of 2^63
        // or more (negative as signed) gives quotient 1 where a >= b (unsigned), else 0. A divisor of
        // 0 divides by zero as the signed division does.
        auto V = [&](const ExprP& v) { return make_var(v->name, loc); };
        auto uge = [&](ExprP x, ExprP y) { return Bo(BinOp::Ge, Bo(BinOp::Xor, std::move(x), k(INT64_MIN, it)), Bo(BinOp::Xor, std::move(y), k(INT64_MIN, it))); };
        ExprP va = bind("udiv_a", a), vb = bind("udiv_b", b);
        ExprP half = Bo(BinOp::And, Bo(BinOp::Shr, V(va), k(1, it)), k(INT64_MAX, it));
        ExprP q0 = bind("udiv_q", Bo(BinOp::Shl, Bo(BinOp::FloorDiv, half, V(vb)), k(1, it)));
        ExprP r0 = bind("udiv_r", Bo(BinOp::Sub, V(va), Bo(BinOp::Mul, V(q0), V(vb))));
        ExprP fix = bind("udiv_fix", uge(V(r0), V(vb)));
        ExprP big = bind("udiv_big", Bo(BinOp::Lt, V(vb), k(0, it)));
        ExprP ge = uge(V(va), V(vb));
        if (op == UnsignedOp::Div)
          return make_where(V(big), make_where(ge, k(1, it), k(0, it), loc), Bo(BinOp::Add, V(q0), make_where(V(fix), k(1, it), k(0, it), loc)), loc);
        return make_where(V(big), make_where(ge, Bo(BinOp::Sub, V(va), V(vb)), V(va), loc), make_where(V(fix), Bo(BinOp::Sub, V(r0), V(vb)), V(r0), loc), loc);
      }
      ExprP wa = Bo(BinOp::And, make_cast(a, Scalar::I64, loc), k(low, Scalar::I64));
      ExprP wb = Bo(BinOp::And, make_cast(b, Scalar::I64, loc), k(low, Scalar::I64));
      return make_cast(Bo(op == UnsignedOp::Div ? BinOp::FloorDiv : BinOp::Mod, wa, wb), it, loc);
    }
    case UnsignedOp::Max:
    case UnsignedOp::Min: {
      // each operand is used twice: a leaf (a variable, a combine function's argument, a literal) is
      // copied, anything else bound first (a combine function has no statements: its operands are leaves)
      auto hold = [&](const std::string& base, ExprP x) {
        bool leaf = x->kind == ExprKind::Var || x->kind == ExprKind::CombineArg || x->kind == ExprKind::Const;
        return leaf ? x : bind(base, x);
      };
      ExprP va = hold("umm_a", a), vb = hold("umm_b", b);
      ExprP lt = Bo(BinOp::Lt, flip_sign(clone_expr(va), it, loc), flip_sign(clone_expr(vb), it, loc));
      bool mx = op == UnsignedOp::Max;
      return make_where(lt, clone_expr(mx ? vb : va), clone_expr(mx ? va : vb), loc);
    }
  }
  internal_error("Unsigned", "bad unsigned op");
}

ExprP unsigned_convert(ExprP x, Scalar from, Scalar to, SourceLoc loc, const BindFn& bind) {
  auto k = [&](int64_t v, Scalar s) { return int_of(v, s, loc); };
  if (from == Scalar::I64 && is_float(to)) {
    // 2^63 and above (negative as signed): half the value, its lowest bit kept as a sticky bit so
    // that the one rounding is the same, converted, then doubled (exact)
    ExprP xv = bind("u64", x);
    auto X = [&] { return make_var(xv->name, loc); };
    ExprP half = B(BinOp::Or, B(BinOp::And, B(BinOp::Shr, X(), k(1, Scalar::I64), loc), k(INT64_MAX, Scalar::I64), loc),
                   B(BinOp::And, X(), k(1, Scalar::I64), loc), loc);
    ExprP two = make_const_float(2.0, loc);
    two->weak = to == Scalar::F32;
    two->dtype = to;
    ExprP big = B(BinOp::Mul, make_cast(half, to, loc), two, loc);
    return make_where(B(BinOp::Lt, X(), k(0, Scalar::I64), loc), big, make_cast(X(), to, loc), loc);
  }
  if (from != Scalar::I1 && from != Scalar::I64) x = zero_extend_i64(x, from, loc);
  return make_cast(x, to, loc);
}

ExprP float_to_unsigned(ExprP x, Scalar to, SourceLoc loc, const BindFn& bind) {
  if (to == Scalar::I64) {
    // from 2^63 up: 2^63 subtracted (exact) before the signed conversion, the top bit set after
    ExprP fv = bind("f64", make_cast(x, Scalar::F64, loc));
    auto F = [&] { return make_var(fv->name, loc); };
    auto f64 = [&](double v) {
      ExprP c = make_const_float(v, loc);
      c->dtype = Scalar::F64;
      return c;
    };
    ExprP hi = B(BinOp::Xor, make_cast(B(BinOp::Sub, F(), f64(9223372036854775808.0), loc), Scalar::I64, loc), int_of(INT64_MIN, Scalar::I64, loc), loc);
    return make_where(B(BinOp::Ge, F(), f64(9223372036854775808.0), loc), hi, make_cast(F(), Scalar::I64, loc), loc);
  }
  // through the next wider signed type, whose low bits are the unsigned result
  if (to != Scalar::I1) x = make_cast(x, to == Scalar::I32 ? Scalar::I64 : Scalar::I32, loc);
  return make_cast(x, to, loc);
}

}  // namespace dtsim
