// Unsigned integers in the .py reader: tl.uint8 ... tl.uint64 values are the IR's signless integers
// of their width, marked by Val::uns. Triton's promotion rules for them (a Python int does not take
// part: uint8 + 1 is a uint8; between tensors the wider type wins, at equal width the unsigned one; a
// negative Python int is refused) and
// the operations whose meaning differs from the signed ones (// % >> < <= > >=, conversions,
// maximum/minimum, umulhi) are built with ir/Unsigned.h, as the TTIR reader builds Triton's divui,
// shrui, cmpi ult, uitofp ..., so the two readers agree bit for bit.
#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

struct Ty {
  Scalar s;
  bool uns;
};

// Triton's kinds, in the order of its scalar promotion rule: bool < integer (signed or not) < float.
int kind_of(const Ty& t) { return t.s == Scalar::I1 ? 0 : is_float(t.s) ? 2 : 1; }

// The type Triton gives a Python number used as a tensor (semantic.to_tensor_type).
Ty python_type(const Val& v) {
  if (v.k == VK::Bool) return {Scalar::I1, false};
  if (v.k == VK::Float) return {Scalar::F32, false};
  if (v.i >= INT32_MIN && v.i <= INT32_MAX) return {Scalar::I32, false};
  if (v.i > INT32_MAX && v.i <= int64_t{UINT32_MAX}) return {Scalar::I32, true};
  return {Scalar::I64, false};
}

int bits_of(Scalar s) { return s == Scalar::I1 ? 1 : scalar_bytes(s) * 8; }

// The usual arithmetic conversions on two integer types (semantic.integer_promote_impl).
Ty promote_ints(const Ty& a, const Ty& b) {
  if (a.uns == b.uns) return bits_of(a.s) > bits_of(b.s) ? a : b;
  const Ty& u = a.uns ? a : b;
  const Ty& s = a.uns ? b : a;
  return bits_of(u.s) >= bits_of(s.s) ? u : s;
}

}  // namespace

BindFn Lowerer::binder(SourceLoc loc) {
  return [this, loc](const std::string& base, ExprP v) {
    v = typed_tree(v);
    std::string n = fresh("__" + base);
    emit(make_assign(n, v, loc));
    blocks_.back().declared[n] = v->type;
    uns_vars_.erase(n);
    ExprP r = make_var(n, loc);
    r->type = v->type;
    return r;
  };
}

ExprP Lowerer::typed_tree(ExprP e) {
  if (!e) return e;
  if (e->kind == ExprKind::Var) {
    if (const Type* t = visible_type(e->name)) e->type = *t;
    return e;
  }
  for (ExprP& x : e->args) x = typed_tree(x);
  return typed(e);
}

bool Lowerer::unsigned_operands(const Val& a, const Val& b) {
  auto tensor_of = [](const Val& v) { return v.k == VK::Tensor; };
  if ((tensor_of(a) && a.t.ptr) || (tensor_of(b) && b.t.ptr)) return false;  // pointer arithmetic
  return (tensor_of(a) && a.uns) || (tensor_of(b) && b.uns);
}

ExprP Lowerer::promoted_operand(const Val& v, Scalar from, bool from_uns, Scalar to, bool to_uns, SourceLoc loc) {
  if (v.compile_time()) {
    if (to_uns && v.i < 0) user_error(loc, "Cannot perform a binary operation between an unsigned tensor and a negative scalar (Triton refuses it)");
    int64_t x = v.i;
    if (to == Scalar::I32) x = static_cast<int32_t>(static_cast<uint32_t>(x));
    if (to == Scalar::I16) x = static_cast<int16_t>(static_cast<uint16_t>(x));
    if (to == Scalar::I8) x = static_cast<int8_t>(static_cast<uint8_t>(x));
    return typed(int_of(x, to, loc));
  }
  ExprP e = ir(v, loc);
  if (from == to) return e;
  return typed_tree(from_uns ? unsigned_convert(e, from, to, loc, binder(loc)) : make_cast(e, to, loc));
}

std::pair<Val, Val> Lowerer::unsigned_promote(const Val& a, const Val& b, SourceLoc loc) {
  const bool as = a.compile_time(), bs = b.compile_time();
  Ty ta = as ? python_type(a) : Ty{a.t.elem, a.uns};
  Ty tb = bs ? python_type(b) : Ty{b.t.elem, b.uns};
  if (as != bs) {
    Ty& st = as ? ta : tb;
    const Ty& tt = as ? tb : ta;
    if (kind_of(st) <= kind_of(tt)) st = tt;
  }
  if (is_float(ta.s) || is_float(tb.s)) unsupported(loc, "mixing unsigned integers and floats here");
  const Ty r = promote_ints(ta, tb);
  Val x = tensor(promoted_operand(a, ta.s, ta.uns, r.s, r.uns, loc), a.bufs), y = tensor(promoted_operand(b, tb.s, tb.uns, r.s, r.uns, loc), b.bufs);
  x.uns = y.uns = r.uns;
  return {x, y};
}

Val Lowerer::unsigned_binop(const std::string& op, const Val& a, const Val& b, SourceLoc loc) {
  const bool as = a.compile_time(), bs = b.compile_time();
  if ((as && !a.number()) || (bs && !b.number())) user_error(loc, "unsupported operand types for " + op + ": " + py_type_name(a) + " and " + py_type_name(b));
  Ty ta = as ? python_type(a) : Ty{a.t.elem, a.uns};
  Ty tb = bs ? python_type(b) : Ty{b.t.elem, b.uns};
  if (as != bs) {  // a Python scalar of a lower or equal kind does not take part in the promotion
    Ty& st = as ? ta : tb;
    const Ty& tt = as ? tb : ta;
    if (kind_of(st) <= kind_of(tt)) st = tt;
  }
  const bool mulhi = op == "umulhi";
  std::set<std::string> bufs = a.bufs;
  bufs.insert(b.bufs.begin(), b.bufs.end());
  auto plain = [&](const std::string& o, const Val& x, const Val& y) {
    if (o == "maximum" || o == "minimum") return tensor(make_binary(o == "maximum" ? BinOp::Max : BinOp::Min, ir(x, loc), ir(y, loc), loc), bufs);
    return binop(o, x, y, loc);
  };
  if (is_float(ta.s) || is_float(tb.s) || op == "/") {
    if (mulhi) user_error(loc, "tl.umulhi() needs integer operands");
    // Triton's float promotion; the unsigned operand converted as uitofp does
    Scalar ft = Scalar::F32;
    bool divmod = op == "/" || op == "//" || op == "%";
    if (ta.s == Scalar::F64 || tb.s == Scalar::F64) ft = Scalar::F64;
    else if (!divmod && is_float(ta.s) && ta.s != Scalar::F32 && !is_float(tb.s)) ft = ta.s;
    else if (!divmod && is_float(tb.s) && tb.s != Scalar::F32 && !is_float(ta.s)) ft = tb.s;
    auto conv = [&](const Val& v) {
      if (v.k != VK::Tensor || !v.uns) return v;
      return tensor(typed_tree(unsigned_convert(ir(v, loc), v.t.elem, ft, loc, binder(loc))), v.bufs);
    };
    return plain(op, conv(a), conv(b));
  }
  const Ty r = promote_ints(ta, tb);
  ExprP ea = promoted_operand(a, ta.s, ta.uns, r.s, r.uns, loc), eb = promoted_operand(b, tb.s, tb.uns, r.s, r.uns, loc);
  if (r.s == Scalar::I1) user_error(loc, "unsigned operations on i1 are not supported");
  std::optional<UnsignedOp> uop;
  if (op == "//") uop = UnsignedOp::Div;
  if (op == "%") uop = UnsignedOp::Rem;
  if (op == ">>") uop = UnsignedOp::Shr;
  if (op == "maximum") uop = UnsignedOp::Max;
  if (op == "minimum") uop = UnsignedOp::Min;
  if (mulhi) uop = UnsignedOp::MulHi;
  static const std::map<std::string, BinOp> cmps = {{"<", BinOp::Lt}, {"<=", BinOp::Le}, {">", BinOp::Gt}, {">=", BinOp::Ge}};
  ExprP e;
  bool cmp = false;
  if (mulhi || (r.uns && uop)) {
    e = unsigned_binary(*uop, ea, eb, r.s, loc, binder(loc));
  } else if (auto c = cmps.find(op); r.uns && c != cmps.end()) {
    e = unsigned_compare(c->second, ea, eb, r.s, loc);
    cmp = true;
  } else {
    Val x = tensor(ea, a.bufs), y = tensor(eb, b.bufs);
    x.uns = y.uns = false;
    Val out = plain(op, x, y);  // the same bits as the signed operation (+ - * & | ^ << == !=), or a signed result type
    out.uns = r.uns && out.k == VK::Tensor && !out.t.ptr && out.t.elem != Scalar::I1;
    return out;
  }
  Val out = tensor(typed_tree(e), bufs);
  out.uns = r.uns && !cmp;
  return out;
}

Val Lowerer::unsigned_cast(const Val& x, Scalar to, bool to_uns, SourceLoc loc) {
  ExprP e = ir(x, loc);
  const Scalar from = x.t.elem;
  ExprP r;
  if (x.uns && is_int(from) && from != Scalar::I1 && (is_float(to) || (to != Scalar::I1 && scalar_bytes(to) > scalar_bytes(from))))
    r = unsigned_convert(e, from, to, loc, binder(loc));  // uitofp, zero extension
  else if (to_uns && is_float(from) && is_int(to) && to != Scalar::I1)
    r = float_to_unsigned(e, to, loc, binder(loc));  // fptoui
  else
    r = make_cast(e, to, loc);  // truncation, sign extension, != 0
  Val out = tensor(typed_tree(r), x.bufs);
  out.uns = to_uns;
  return out;
}

}  // namespace dtsim::py
