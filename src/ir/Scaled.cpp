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

ExprP batch_of(ExprP x, const Shape& shape, Scalar elem, int64_t b, SourceLoc loc) {
  if (shape.size() != 3) internal_error("Scaled", "batch_of takes a rank-3 tile");
  ExprP sel = bin(BinOp::Eq, iota_along(shape[0], 0, 3, loc), make_const_int(b, loc), loc);
  sel = make_broadcast(sel, dims(shape, loc), loc);
  // summed as f32 (narrower floats, exactly) or i32 (narrower integers), then converted back
  Scalar wide = elem == Scalar::F64 || elem == Scalar::I64 ? elem : is_float(elem) ? Scalar::F32 : Scalar::I32;
  if (wide != elem) x = make_cast(std::move(x), wide, loc);
  ExprP zero = is_float(wide) ? make_cast(make_const_float(0, loc), wide, loc) : int_of(0, wide, loc);
  ExprP e = make_reduce(RedOp::Sum, make_where(sel, std::move(x), zero, loc), 0, loc);
  return wide != elem ? make_cast(e, elem, loc) : e;
}

ExprP from_batches(int64_t batches, int64_t rows, int64_t cols, SourceLoc loc, const std::function<ExprP(int64_t)>& one) {
  Shape out = {batches, rows, cols};
  check_size(out, "a batched dot", loc);
  ExprP r;
  for (int64_t b = 0; b < batches; ++b) {
    ExprP d = make_broadcast(make_expand_dims(one(b), 0, loc), dims(out, loc), loc);
    if (!r) {
      r = d;
      continue;
    }
    ExprP sel = make_broadcast(bin(BinOp::Eq, iota_along(batches, 0, 3, loc), make_const_int(b, loc), loc), dims(out, loc), loc);
    r = make_where(sel, d, r, loc);
  }
  return r;
}

ExprP scaled_dot(const ScaledOperand& lhs, const ScaledOperand& rhs, ExprP acc, SourceLoc loc, const BindFn& bind) {
  if (lhs.shape.size() == 3 || rhs.shape.size() == 3) {
    if (lhs.shape.size() != 3 || rhs.shape.size() != 3 || lhs.shape[0] != rhs.shape[0])
      user_error(loc, "tl.dot_scaled: a batched dot needs two 3-D operands of one batch size, got " + shape_str(lhs.shape) + " and " +
                          shape_str(rhs.shape));
    int64_t batches = lhs.shape[0];
    Shape l2(lhs.shape.begin() + 1, lhs.shape.end()), r2(rhs.shape.begin() + 1, rhs.shape.end());
    ScaledOperand l = lhs, r = rhs;
    l.shape = l2;
    r.shape = r2;
    Shape a = logical(l, false), b = logical(r, true);
    // each input bound once, then read once per batch
    ExprP lv = bind("lhs", lhs.value), rv = bind("rhs", rhs.value), av = bind("acc", std::move(acc));
    ExprP ls = lhs.scale ? bind("lhs_scale", lhs.scale) : nullptr, rs = rhs.scale ? bind("rhs_scale", rhs.scale) : nullptr;
    auto scale_of = [&](const ScaledOperand& o, const ExprP& v, int64_t bi, ScaledOperand& into) {
      if (!v) return;
      if (o.scale_shape.size() == 3) {
        if (o.scale_shape[0] != batches)
          user_error(loc, "tl.dot_scaled: a 3-D scale must have the operands' " + std::to_string(batches) + " batches, got " + shape_str(o.scale_shape));
        into.scale = batch_of(clone_expr(v), o.scale_shape, o.scale_elem, bi, loc);
        into.scale_shape = Shape(o.scale_shape.begin() + 1, o.scale_shape.end());
      } else {
        into.scale = clone_expr(v);
      }
    };
    return from_batches(batches, a[0], b[1], loc, [&](int64_t bi) {
      ScaledOperand x = l, y = r;
      x.value = batch_of(clone_expr(lv), lhs.shape, lhs.elem, bi, loc);
      y.value = batch_of(clone_expr(rv), rhs.shape, rhs.elem, bi, loc);
      scale_of(lhs, ls, bi, x);
      scale_of(rhs, rs, bi, y);
      ExprP c = batch_of(clone_expr(av), {batches, a[0], b[1]}, Scalar::F32, bi, loc);
      return scaled_dot(x, y, c, loc, bind);
    });
  }
  ExprP x = operand(lhs, false, loc, bind), y = operand(rhs, true, loc, bind);
  Shape a = logical(lhs, false), b = logical(rhs, true);
  if (a[1] != b[0]) user_error(loc, "tl.dot_scaled: the operands' K differ (" + shape_str(a) + " @ " + shape_str(b) + ", e2m1 unpacked)");
  // Triton's compute type: fp16 where an operand is fp16, else bf16 (exact for e2m1, fp8 and bf16
  // values and their scaled products while those stay in the type's range)
  Scalar ct = lhs.format == "fp16" || rhs.format == "fp16" ? Scalar::F16 : Scalar::BF16;
  return make_dot(make_cast(x, ct, loc), make_cast(y, ct, loc), std::move(acc), loc);
}

}  // namespace dtsim
