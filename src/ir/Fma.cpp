#include "ir/Fma.h"

#include <limits>

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

// f64: a * b + c rounded once, from f64 operations that are each exact or one rounding named here
// (Boldo and Melquiond's emulation of an FMA by rounding to odd). On the magnitudes,
// |a| = ma 2^ka and |b| = mb 2^kb with ma, mb in [1, 2) (subnormals scaled by 2^64 first):
//  * P = ma mb = uh + ul exactly: uh rounded to nearest, ul Dekker's product error from 26-bit
//    halves split by their bits (each partial product exact); uh passes through an opaque identity
//    (its bits xor'd with 1 only for a NaN) so that a backend's contraction of a multiply and an add
//    cannot fuse it into the later sums;
//  * c' = c 2^-k (k = ka + kb), exact: where |c'| < 2^-200 it is +-2^-200 instead, which rounds with
//    P as c' does (P's bits end at 2^-104); where |c'| > 2^58, P is less than a quarter of c's ulp
//    and the result is c;
//  * th + tl = c' + uh and v0 + ve = tl + ul by Knuth's two-sum (exact); v = v0 rounded to odd (where
//    ve != 0, the neighbour of the exact tl + ul whose last bit is 1); z = th + v rounded to nearest
//    is P + c' rounded once;
//  * the result z 2^k, in two exact factors; past the largest finite value, infinity. Below 2^-1022
//    that product rounds z again, to a multiple of 2^-1074, which differs from rounding P + c' once
//    only where z lies on a midpoint of that grid and P + c' does not: there the sign of
//    P + c' - z (from z's two-sum error, else from the rounding to odd) picks the neighbour.
// Zeros, infinities and NaNs take the IEEE result of the plain a * b + c (exact there), a zero c the
// product a * b, an infinite c (a and b finite) c itself.
static ExprP fma_f64(ExprP a0, ExprP b0, ExprP c0, char mode, SourceLoc loc, const BindFn& bind) {
  auto bo = [&](BinOp o, ExprP x, ExprP y) { return make_binary(o, std::move(x), std::move(y), loc); };
  auto un = [&](UnOp o, ExprP x) { return make_unary(o, std::move(x), loc); };
  auto wh = [&](ExprP cnd, ExprP x, ExprP y) { return make_where(std::move(cnd), std::move(x), std::move(y), loc); };
  auto cf = [&](double v) {
    ExprP z = make_const_float(v, loc);
    z->weak = false;
    z->dtype = Scalar::F64;
    return z;
  };
  auto ci = [&](int64_t v) { return int_of(v, Scalar::I64, loc); };
  auto bits = [&](ExprP x) { return make_bitcast(std::move(x), Scalar::I64, loc); };
  auto fbits = [&](ExprP x) { return make_bitcast(std::move(x), Scalar::F64, loc); };
  auto pow2 = [&](ExprP k) {  // 2^k for an i64 k, clamped to [-1022, 1023] (the lanes that use it have k there)
    ExprP kk = bind("fma_p2", std::move(k));
    ExprP kc = wh(bo(BinOp::Lt, clone_expr(kk), ci(-1022)), ci(-1022), wh(bo(BinOp::Gt, clone_expr(kk), ci(1023)), ci(1023), clone_expr(kk)));
    return fbits(bo(BinOp::Shl, bo(BinOp::Add, std::move(kc), ci(1023)), ci(52)));
  };
  auto decomp = [&](const ExprP& x, const std::string& n, ExprP& m, ExprP& k) {  // |x| = m 2^k, m in [1, 2)
    ExprP ax = bind(n + "_ax", un(UnOp::Abs, clone_expr(x)));
    ExprP sub = bind(n + "_sub", bo(BinOp::Lt, clone_expr(ax), cf(0x1p-1022)));
    ExprP xb = bind(n + "_xb", bits(wh(clone_expr(sub), bo(BinOp::Mul, clone_expr(ax), cf(0x1p64)), clone_expr(ax))));
    k = bind(n + "_k", bo(BinOp::Sub, bo(BinOp::Sub, bo(BinOp::Shr, clone_expr(xb), ci(52)), ci(1023)), wh(std::move(sub), ci(64), ci(0))));
    m = bind(n + "_m", fbits(bo(BinOp::Or, bo(BinOp::And, clone_expr(xb), ci((int64_t{1} << 52) - 1)), ci(int64_t{1023} << 52))));
  };
  auto split = [&](const ExprP& x, const std::string& n, ExprP& hi, ExprP& lo) {
    hi = bind(n + "_hi", fbits(bo(BinOp::And, bo(BinOp::Add, bits(clone_expr(x)), ci(int64_t{1} << 26)), ci(~((int64_t{1} << 27) - 1)))));
    lo = bind(n + "_lo", bo(BinOp::Sub, clone_expr(x), clone_expr(hi)));
  };
  auto negative = [&](const ExprP& x) { return bo(BinOp::Lt, bits(clone_expr(x)), ci(0)); };
  auto finite_nonzero = [&](const ExprP& x) {
    ExprP below_inf = bo(BinOp::Lt, un(UnOp::Abs, clone_expr(x)), cf(std::numeric_limits<double>::infinity()));
    return bo(BinOp::And, std::move(below_inf), bo(BinOp::Gt, un(UnOp::Abs, clone_expr(x)), cf(0)));
  };
  ExprP a = bind("fma_a", std::move(a0)), b = bind("fma_b", std::move(b0)), c = bind("fma_c", std::move(c0));
  ExprP ma, ka, mb, kb, mc, kc;
  decomp(a, "fma_a", ma, ka);
  decomp(b, "fma_b", mb, kb);
  decomp(c, "fma_cd", mc, kc);
  ExprP k = bind("fma_k", bo(BinOp::Add, clone_expr(ka), clone_expr(kb)));
  ExprP uh = bind("fma_uh", bo(BinOp::Mul, clone_expr(ma), clone_expr(mb)));
  uh = bind("fma_uo", fbits(bo(BinOp::Xor, bits(clone_expr(uh)), wh(bo(BinOp::Ne, clone_expr(uh), clone_expr(uh)), ci(1), ci(0)))));
  ExprP ah, al, bh, bl;
  split(ma, "fma_sa", ah, al);
  split(mb, "fma_sb", bh, bl);
  ExprP t = bo(BinOp::Sub, clone_expr(uh), bo(BinOp::Mul, clone_expr(ah), clone_expr(bh)));
  t = bo(BinOp::Sub, std::move(t), bo(BinOp::Mul, clone_expr(al), clone_expr(bh)));
  t = bind("fma_dt", bo(BinOp::Sub, std::move(t), bo(BinOp::Mul, clone_expr(ah), clone_expr(bl))));
  ExprP ul = bind("fma_ul", bo(BinOp::Sub, bo(BinOp::Mul, clone_expr(al), clone_expr(bl)), std::move(t)));  // ma mb - uh
  ExprP pneg = bind("fma_pneg", bo(BinOp::Ne, negative(a), negative(b)));
  ExprP sph = bind("fma_ph", wh(clone_expr(pneg), un(UnOp::Neg, clone_expr(uh)), clone_expr(uh)));
  ExprP spl = bind("fma_pl", wh(clone_expr(pneg), un(UnOp::Neg, clone_expr(ul)), clone_expr(ul)));
  // c' = c 2^-k: mc 2^(kc - k), its sign; an exponent below -200 is the sticky stand-in 2^-200
  ExprP d = bind("fma_d", bo(BinOp::Sub, clone_expr(kc), clone_expr(k)));
  ExprP tiny = bind("fma_tiny", bo(BinOp::Lt, clone_expr(d), ci(-200)));
  ExprP mag = bind("fma_cm", wh(clone_expr(tiny), cf(0x1p-200),
                                bo(BinOp::Mul, clone_expr(mc), pow2(clone_expr(d)))));
  ExprP cs = bind("fma_cs", wh(bo(BinOp::Eq, clone_expr(c), cf(0)), cf(0), wh(negative(c), un(UnOp::Neg, clone_expr(mag)), clone_expr(mag))));
  auto [th, tl] = two_sum(cs, sph, "fma_th", loc, bind);
  auto [v0, ve] = two_sum(tl, spl, "fma_v", loc, bind);
  ExprP vb = bind("fma_vb", bits(clone_expr(v0)));
  ExprP inexact = bind("fma_vx", bo(BinOp::Ne, clone_expr(ve), cf(0)));
  ExprP back = wh(bo(BinOp::LAnd, clone_expr(inexact), bo(BinOp::Ne, bo(BinOp::Lt, clone_expr(ve), cf(0)), bo(BinOp::Lt, clone_expr(v0), cf(0)))), ci(1), ci(0));
  ExprP v = bind("fma_vo", fbits(wh(clone_expr(inexact), bo(BinOp::Or, bo(BinOp::Sub, clone_expr(vb), std::move(back)), ci(1)), clone_expr(vb))));
  auto [z, ze] = two_sum(th, v, "fma_z", loc, bind);  // z = th + v rounded; ze exact
  // the sign of X' - z (X' = P + c'): ze's where ze != 0 (a multiple of v's ulp, more than the
  // rounding to odd moved v), else that of tl + ul - v (0 where v0 was exact; v0 - v where v is v0
  // stepped; ve where v is v0)
  auto sgn = [&](const ExprP& x) { return wh(bo(BinOp::Gt, clone_expr(x), cf(0)), cf(1), wh(bo(BinOp::Lt, clone_expr(x), cf(0)), cf(-1), cf(0))); };
  ExprP stepped = bo(BinOp::Ne, bits(clone_expr(v)), clone_expr(vb));
  ExprP dv = bind("fma_dv", bo(BinOp::Sub, clone_expr(v0), clone_expr(v)));
  ExprP delta = wh(clone_expr(inexact), wh(std::move(stepped), sgn(dv), sgn(ve)), cf(0));
  ExprP es = bind("fma_es", wh(bo(BinOp::Ne, clone_expr(ze), cf(0)), sgn(ze), std::move(delta)));
  auto times2 = [&](ExprP x, const ExprP& e, const std::string& n) {  // x 2^e in two factors
    ExprP e1 = bind(n, bo(BinOp::Shr, clone_expr(e), ci(1)));
    return bo(BinOp::Mul, bo(BinOp::Mul, std::move(x), pow2(clone_expr(e1))), pow2(bo(BinOp::Sub, clone_expr(e), clone_expr(e1))));
  };
  ExprP zu = bind("fma_zu", times2(clone_expr(z), k, "fma_k1"));
  // below 2^-1022, z 2^k rounds again, to a multiple of 2^-1074: wrong only where z is a midpoint of
  // that grid (m = z 2^(k + 1075) an odd integer) and X' is not z; there the neighbour on X''s side
  ExprP j = bind("fma_j", bo(BinOp::Add, clone_expr(k), ci(1075)));
  ExprP m = bind("fma_m", times2(clone_expr(z), j, "fma_j1"));
  ExprP h = bind("fma_h", un(UnOp::Floor, bo(BinOp::Mul, clone_expr(m), cf(0.5))));
  ExprP mid = bo(BinOp::LAnd, bo(BinOp::Eq, bo(BinOp::Sub, clone_expr(m), bo(BinOp::Mul, clone_expr(h), cf(2))), cf(1)),
                 bo(BinOp::Ne, clone_expr(es), cf(0)));
  ExprP fixed = bind("fma_fix", bo(BinOp::Mul, bo(BinOp::Mul, bo(BinOp::Add, clone_expr(m), clone_expr(es)), cf(0.5)), cf(0x1p-1074)));
  fixed = wh(bo(BinOp::Eq, clone_expr(fixed), cf(0)), bo(BinOp::Mul, clone_expr(z), cf(0)), clone_expr(fixed));  // a zero keeps z's sign
  ExprP core = wh(std::move(mid), std::move(fixed), clone_expr(zu));
  const double inf = std::numeric_limits<double>::infinity(), dmax = std::numeric_limits<double>::max();
  // rounded down ('d'), up ('u') or toward zero ('z'): whether x's bits step one ulp, the sign of the
  // exact value's side being s (+1 above x, -1 below): toward -inf is bits - 1 for a positive x
  auto step = [&](const ExprP& x, ExprP s) {
    ExprP pos = bo(BinOp::Gt, clone_expr(x), cf(0));
    ExprP xb = bits(clone_expr(x));
    if (mode == 'd') return fbits(wh(bo(BinOp::Lt, std::move(s), cf(0)), wh(std::move(pos), bo(BinOp::Sub, clone_expr(xb), ci(1)), bo(BinOp::Add, clone_expr(xb), ci(1))), clone_expr(xb)));
    if (mode == 'u') return fbits(wh(bo(BinOp::Gt, std::move(s), cf(0)), wh(std::move(pos), bo(BinOp::Add, clone_expr(xb), ci(1)), bo(BinOp::Sub, clone_expr(xb), ci(1))), clone_expr(xb)));
    ExprP against = bo(BinOp::LOr, bo(BinOp::LAnd, clone_expr(pos), bo(BinOp::Lt, clone_expr(s), cf(0))),
                       bo(BinOp::LAnd, bo(BinOp::Lt, clone_expr(x), cf(0)), bo(BinOp::Gt, clone_expr(s), cf(0))));
    return fbits(wh(std::move(against), bo(BinOp::Sub, clone_expr(xb), ci(1)), clone_expr(xb)));
  };
  if (mode != 'n') {
    // z stepped where the exact value lies past it in the direction, then 2^k: exact down to 2^-1022;
    // past the largest value, the infinity or that value as the direction says. Below 2^-1022, q =
    // z 2^1074 (exact) to an integer: floor / ceil, or where q is one, q stepped by the error's sign.
    ExprP zd = bind("fma_zd", step(z, clone_expr(es)));
    ExprP zdu = bind("fma_zdu", times2(clone_expr(zd), k, "fma_k2"));
    ExprP over = bo(BinOp::Eq, un(UnOp::Abs, clone_expr(zdu)), cf(inf));
    ExprP keep_max = mode == 'z' ? std::move(over)
                   : bo(BinOp::LAnd, std::move(over), mode == 'd' ? bo(BinOp::Gt, clone_expr(zdu), cf(0)) : bo(BinOp::Lt, clone_expr(zdu), cf(0)));
    ExprP normal = wh(std::move(keep_max), wh(bo(BinOp::Gt, clone_expr(zdu), cf(0)), cf(dmax), cf(-dmax)), clone_expr(zdu));
    ExprP q = bind("fma_q", bo(BinOp::Mul, clone_expr(m), cf(0.5)));
    ExprP isint = bind("fma_qi", bo(BinOp::Eq, un(UnOp::Floor, clone_expr(q)), clone_expr(q)));
    auto grid = [&](char dir) {
      ExprP stepped = dir == 'd' ? wh(bo(BinOp::Lt, clone_expr(es), cf(0)), bo(BinOp::Sub, clone_expr(q), cf(1)), clone_expr(q))
                                 : wh(bo(BinOp::Gt, clone_expr(es), cf(0)), bo(BinOp::Add, clone_expr(q), cf(1)), clone_expr(q));
      return wh(clone_expr(isint), std::move(stepped), un(dir == 'd' ? UnOp::Floor : UnOp::Ceil, clone_expr(q)));
    };
    ExprP r = mode == 'z' ? wh(bo(BinOp::Gt, clone_expr(z), cf(0)), grid('d'), grid('u')) : grid(mode);
    ExprP rv = bind("fma_rv", bo(BinOp::Mul, std::move(r), cf(0x1p-1074)));
    rv = wh(bo(BinOp::Eq, clone_expr(rv), cf(0)), bo(BinOp::Mul, clone_expr(z), cf(0)), clone_expr(rv));  // a zero keeps z's sign
    ExprP below = bo(BinOp::Lt, un(UnOp::Abs, clone_expr(q)), cf(0x1p52));
    // an exact zero sum: -0 rounded down, else +0 (IEEE 754)
    core = wh(bo(BinOp::Eq, clone_expr(z), cf(0)), cf(mode == 'd' ? -0.0 : 0.0), wh(std::move(below), std::move(rv), std::move(normal)));
  }
  // which case applies
  ExprP regular = bind("fma_reg", bo(BinOp::And, finite_nonzero(a), finite_nonzero(b)));
  ExprP c_inf = bo(BinOp::Eq, un(UnOp::Abs, clone_expr(c)), cf(std::numeric_limits<double>::infinity()));
  ExprP c_big = bo(BinOp::And, finite_nonzero(c), bo(BinOp::Gt, clone_expr(d), ci(58)));
  ExprP c_zero = bo(BinOp::Eq, clone_expr(c), cf(0));
  ExprP c_nan = bo(BinOp::Ne, clone_expr(c), clone_expr(c));
  ExprP plain = bo(BinOp::Add, bo(BinOp::Mul, clone_expr(a), clone_expr(b)), clone_expr(c));
  ExprP product = bo(BinOp::Mul, clone_expr(a), clone_expr(b));
  if (mode != 'n') {
    // a dominant c moves one ulp where the product lies past it in the direction; a zero c is the
    // core's (c' = 0); a zero product and a zero c sum to -0 rounded down unless both are +0
    ExprP ps = wh(clone_expr(pneg), cf(-1), cf(1));
    ExprP in_regular = wh(clone_expr(c_nan), clone_expr(c), wh(std::move(c_inf), clone_expr(c), wh(std::move(c_big), step(c, std::move(ps)), std::move(core))));
    if (mode == 'd') {
      ExprP pz = bind("fma_pz", bo(BinOp::Mul, clone_expr(a), clone_expr(b)));
      ExprP zeros = bo(BinOp::LAnd, bo(BinOp::Eq, clone_expr(pz), cf(0)), bo(BinOp::Eq, clone_expr(c), cf(0)));
      ExprP both_pos = bo(BinOp::LAnd, bo(BinOp::Eq, bits(clone_expr(pz)), ci(0)), bo(BinOp::Eq, bits(clone_expr(c)), ci(0)));
      plain = wh(std::move(zeros), wh(std::move(both_pos), cf(0.0), cf(-0.0)), std::move(plain));
    }
    return wh(std::move(regular), std::move(in_regular), std::move(plain));
  }
  ExprP in_regular = wh(bo(BinOp::LOr, std::move(c_nan), std::move(c_zero)), wh(bo(BinOp::Ne, clone_expr(c), clone_expr(c)), clone_expr(c), std::move(product)),
                        wh(bo(BinOp::LOr, std::move(c_inf), std::move(c_big)), clone_expr(c), std::move(core)));
  return wh(std::move(regular), std::move(in_regular), std::move(plain));
}

ExprP fused_multiply_add(ExprP a, ExprP b, ExprP c, Scalar t, SourceLoc loc, const BindFn& bind) {
  auto bo = [&](BinOp o, ExprP x, ExprP y) { return make_binary(o, std::move(x), std::move(y), loc); };
  if (t == Scalar::F64) return fma_f64(std::move(a), std::move(b), std::move(c), 'n', loc, bind);
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

ExprP fused_multiply_add_directed(ExprP a, ExprP b, ExprP c, char mode, SourceLoc loc, const BindFn& bind) {
  return fma_f64(std::move(a), std::move(b), std::move(c), mode, loc, bind);
}

}  // namespace dtsim
