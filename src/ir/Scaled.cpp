#include "ir/Scaled.h"

#include <map>

#include "ir/Diag.h"
#include "ir/Verify.h"

namespace dtsim {

namespace {

ExprP i32(int64_t v, SourceLoc loc) { return int_of(v, Scalar::I32, loc); }
ExprP bin(BinOp op, ExprP a, ExprP b, SourceLoc loc) { return make_binary(op, std::move(a), std::move(b), loc); }

std::vector<ExprP> dims(const Shape& s, SourceLoc loc) {
  std::vector<ExprP> d;
  for (int64_t x : s) d.push_back(make_const_int(x, loc));
  return d;
}

void check_size(const Shape& s, const std::string& what, SourceLoc loc) {
  if (static_cast<int>(s.size()) > kMaxRank || shape_numel(s) > kMaxTileElems)
    user_error(loc, what + " needs a tile of " + shape_str(s) + " (at most 2^20 elements): use smaller blocks");
}

// arange(0, n) laid along `axis` of a rank-`rank` tile
ExprP iota_along(int64_t n, int axis, int rank, SourceLoc loc) {
  ExprP idx = make_arange(make_const_int(0, loc), make_const_int(n, loc), loc);
  for (int b = 0; b < rank; ++b)
    if (b != axis) idx = make_expand_dims(idx, b < axis ? 0 : b, loc);
  return idx;
}

// x (i8 bytes of `shape`, two e2m1 values each along `axis`, the first in the low nibble) -> f32,
// `axis` twice as long.
ExprP unpack_e2m1(ExprP x, const Shape& shape, int axis, SourceLoc loc, const BindFn& bind) {
  int rank = static_cast<int>(shape.size());
  Shape wide = shape, pairs = shape;
  wide[static_cast<size_t>(axis)] *= 2;
  pairs.insert(pairs.begin() + axis + 1, 2);
  check_size(pairs, "tl.dot_scaled's e2m1 operand", loc);
  ExprP u = bin(BinOp::And, make_cast(std::move(x), Scalar::I32, loc), i32(0xFF, loc), loc);
  ExprP b = make_broadcast(make_expand_dims(u, axis + 1, loc), dims(pairs, loc), loc);
  ExprP shift = bin(BinOp::Mul, iota_along(2, axis + 1, rank + 1, loc), i32(4, loc), loc);
  ExprP nib = bin(BinOp::And, bin(BinOp::Shr, b, shift, loc), i32(0xF, loc), loc);
  nib = bind("e2m1", make_reshape(nib, dims(wide, loc), loc));
  // s e e m: e = 0 is 0 or 0.5 (m); otherwise (1 + m/2) * 2^(e-1), i.e. f32 exponent e + 126, mantissa m << 22
  ExprP e = bin(BinOp::And, bin(BinOp::Shr, clone_expr(nib), i32(1, loc), loc), i32(3, loc), loc);
  ExprP m = bin(BinOp::And, clone_expr(nib), i32(1, loc), loc);
  ExprP normal = bin(BinOp::Or, bin(BinOp::Shl, bin(BinOp::Add, e, i32(126, loc), loc), i32(23, loc), loc),
                     bin(BinOp::Shl, clone_expr(m), i32(22, loc), loc), loc);
  ExprP sub = bin(BinOp::Mul, m, i32(126 << 23, loc), loc);
  ExprP is_sub = bin(BinOp::Eq, bin(BinOp::And, clone_expr(nib), i32(6, loc), loc), i32(0, loc), loc);
  ExprP mag = bind("e2m1_abs", make_bitcast(make_where(is_sub, sub, normal, loc), Scalar::F32, loc));
  ExprP neg = bin(BinOp::Ne, bin(BinOp::And, clone_expr(nib), i32(8, loc), loc), i32(0, loc), loc);
  return make_where(neg, make_unary(UnOp::Neg, clone_expr(mag), loc), clone_expr(mag), loc);
}

// One operand as an f32 tile of its logical shape (M x K, or K x N for the rhs), scaled.
ExprP operand(const ScaledOperand& o, bool rhs, SourceLoc loc, const BindFn& bind) {
  const char* side = rhs ? "rhs" : "lhs";
  int rank = static_cast<int>(o.shape.size());
  if (rank != 2) user_error(loc, "tl.dot_scaled of " + std::to_string(rank) + "-D operands is not supported yet (2-D operands are)");
  int k_axis = rhs ? 0 : 1;
  Shape shape = o.shape;
  ExprP x;
  if (o.format == "e2m1") {
    if (o.elem != Scalar::I8) user_error(loc, std::string("tl.dot_scaled: an e2m1 ") + side + " must be packed in uint8, got " + scalar_name(o.elem));
    int axis = o.k_pack ? k_axis : 1 - k_axis;
    x = unpack_e2m1(o.value, o.shape, axis, loc, bind);
    shape[static_cast<size_t>(axis)] *= 2;
  } else {
    static const std::map<std::string, Scalar> fmts = {
        {"e4m3", Scalar::F8E4M3}, {"e5m2", Scalar::F8E5M2}, {"bf16", Scalar::BF16}, {"fp16", Scalar::F16}};
    auto f = fmts.find(o.format);
    if (f == fmts.end()) user_error(loc, "tl.dot_scaled: " + std::string(side) + " format '" + o.format + "' is not one of e2m1, e4m3, e5m2, bf16, fp16");
    if (!o.k_pack) user_error(loc, std::string("tl.dot_scaled: only e2m1 operands can be packed along another dimension than K (") + side + "_k_pack=False)");
    x = o.value;
    if (o.elem != f->second) {  // the format's bits in an unsigned integer of its width
      Scalar bits = scalar_bytes(f->second) == 1 ? Scalar::I8 : Scalar::I16;
      if (o.elem != bits)
        user_error(loc, std::string("tl.dot_scaled: a ") + o.format + " " + side + " must hold " + scalar_name(f->second) + " (or its bits as " +
                            scalar_name(bits) + "), got " + scalar_name(o.elem));
      x = make_bitcast(x, f->second, loc);
    }
    x = make_cast(x, Scalar::F32, loc);
  }
  if (!o.scale) return x;
  int64_t rows = shape[rhs ? 1 : 0], k = shape[static_cast<size_t>(k_axis)];
  if (o.scale_shape.size() != 2 || o.scale_shape[0] != rows || o.scale_shape[1] <= 0 || k % o.scale_shape[1] != 0)
    user_error(loc, std::string("tl.dot_scaled: the ") + side + " scale must be [" + std::to_string(rows) + ", K / group] with K = " +
                        std::to_string(k) + ", got " + shape_str(o.scale_shape));
  int64_t groups = o.scale_shape[1], group = k / groups;
  ExprP s;
  if (o.scale_elem == Scalar::I8) {  // e8m0: 2^(s - 127) (byte 0: 2^-127, an f32 subnormal), 0xFF: NaN
    ExprP u = bind("e8m0", bin(BinOp::And, make_cast(o.scale, Scalar::I32, loc), i32(0xFF, loc), loc));
    ExprP bits = make_where(bin(BinOp::Eq, clone_expr(u), i32(0, loc), loc), i32(0x00400000, loc),
                            bin(BinOp::Shl, clone_expr(u), i32(23, loc), loc), loc);
    bits = make_where(bin(BinOp::Eq, clone_expr(u), i32(0xFF, loc), loc), i32(0x7FC00000, loc), bits, loc);
    s = make_bitcast(bits, Scalar::F32, loc);
  } else if (is_fp8(o.scale_elem)) {
    s = make_cast(o.scale, Scalar::F32, loc);
  } else {
    user_error(loc, std::string("tl.dot_scaled: a scale must be e8m0 (uint8) or fp8, got ") + scalar_name(o.scale_elem));
  }
  check_size({rows, groups, group}, "tl.dot_scaled's scale", loc);
  s = make_broadcast(make_expand_dims(s, 2, loc), dims({rows, groups, group}, loc), loc);
  s = make_reshape(s, dims({rows, k}, loc), loc);
  if (rhs) s = make_trans(s, loc);
  return bin(BinOp::Mul, x, s, loc);
}

Shape logical(const ScaledOperand& o, bool rhs) {
  Shape s = o.shape;
  if (o.format == "e2m1" && s.size() == 2) s[static_cast<size_t>(o.k_pack ? (rhs ? 0 : 1) : (rhs ? 1 : 0))] *= 2;
  return s;
}

}  // namespace

ExprP scaled_dot(const ScaledOperand& lhs, const ScaledOperand& rhs, ExprP acc, SourceLoc loc, const BindFn& bind) {
  ExprP x = operand(lhs, false, loc, bind), y = operand(rhs, true, loc, bind);
  Shape a = logical(lhs, false), b = logical(rhs, true);
  if (a[1] != b[0]) user_error(loc, "tl.dot_scaled: the operands' K differ (" + shape_str(a) + " @ " + shape_str(b) + ", e2m1 unpacked)");
  // Triton's compute type: fp16 where an operand is fp16, else bf16 (exact for e2m1, fp8 and bf16
  // values and their scaled products while those stay in the type's range)
  Scalar ct = lhs.format == "fp16" || rhs.format == "fp16" ? Scalar::F16 : Scalar::BF16;
  return make_dot(make_cast(x, ct, loc), make_cast(y, ct, loc), std::move(acc), loc);
}

}  // namespace dtsim
