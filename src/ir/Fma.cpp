#include "ir/Fma.h"

namespace dtsim {

// Narrower than f64: the product of two values of at most 24 bits is exact in f64; the sum
// s = p + c rounds and Knuth's two-sum gives its exact error e (s + e = p + c). s is then rounded to
// odd: where e != 0, the f64 neighbour of the exact value toward zero (s itself, or one step back
// where e's sign differs from s's) with its last bit set. f64 has 29 bits more than f32, so the
// value rounded to odd rounds to the narrow type as the exact value does: no double rounding when
// s falls on a tie. Every step is exact or the one rounding it names, so a backend's fusion of a
// multiply and an add (fp fusion on the CUDA backend) changes nothing.
TwoSum two_sum(const ExprP& a, const ExprP& b, const std::string& name, SourceLoc loc, const BindFn& bind) {
  auto bo = [&](BinOp o, ExprP x, ExprP y) { return make_binary(o, std::move(x), std::move(y), loc); };
  ExprP s = bind(name + "_s", bo(BinOp::Add, clone_expr(a), clone_expr(b)));
  ExprP bb = bind(name + "_bb", bo(BinOp::Sub, clone_expr(s), clone_expr(a)));
  ExprP e = bind(name + "_e", bo(BinOp::Add, bo(BinOp::Sub, clone_expr(a), bo(BinOp::Sub, clone_expr(s), clone_expr(bb))),
                                 bo(BinOp::Sub, clone_expr(b), clone_expr(bb))));
  return {std::move(s), std::move(e)};
}

ExprP fused_multiply_add(ExprP a, ExprP b, ExprP c, Scalar t, SourceLoc loc, const BindFn& bind) {
  auto bo = [&](BinOp o, ExprP x, ExprP y) { return make_binary(o, std::move(x), std::move(y), loc); };
  if (t == Scalar::F64) return bo(BinOp::Add, bo(BinOp::Mul, std::move(a), std::move(b)), std::move(c));
  auto f64 = [&](ExprP x) { return make_cast(std::move(x), Scalar::F64, loc); };
  auto zero = [&] {
    ExprP z = make_const_float(0.0, loc);
    z->weak = false;
    z->dtype = Scalar::F64;
    return z;
  };
  ExprP p = bind("fma_p", bo(BinOp::Mul, f64(std::move(a)), f64(std::move(b))));
  ExprP cc = bind("fma_c", f64(std::move(c)));
  auto [s, e] = two_sum(p, cc, "fma", loc, bind);
  ExprP sb = bind("fma_sb", make_bitcast(clone_expr(s), Scalar::I64, loc));
  ExprP inexact = bind("fma_inexact", bo(BinOp::Ne, clone_expr(e), zero()));
  ExprP past = bo(BinOp::Ne, bo(BinOp::Lt, clone_expr(e), zero()), bo(BinOp::Lt, clone_expr(s), zero()));
  ExprP back = make_where(bo(BinOp::LAnd, clone_expr(inexact), std::move(past)), int_of(1, Scalar::I64, loc), int_of(0, Scalar::I64, loc), loc);
  ExprP odd = make_where(clone_expr(inexact), bo(BinOp::Or, bo(BinOp::Sub, clone_expr(sb), std::move(back)), int_of(1, Scalar::I64, loc)),
                         clone_expr(sb), loc);
  return make_cast(make_bitcast(std::move(odd), Scalar::F64, loc), t, loc);
}

}  // namespace dtsim
