// a * b + c rounded once, built from the IR's ops. Both Triton readers lower tl.fma and libdevice's
// fma / fmaf / fma_rn with it, so the two agree bit for bit.
#pragma once

#include "ir/IR.h"
#include "ir/Unsigned.h"  // BindFn

namespace dtsim {

// Knuth's two-sum of two f64 values (variables, or anything cheap to clone): s = a + b rounded to
// nearest and e = (a + b) - s exactly, each bound as `name`_s / `name`_e. No multiply, so a backend's
// fusion of a multiply and an add cannot change it.
struct TwoSum {
  ExprP s, e;
};
TwoSum two_sum(const ExprP& a, const ExprP& b, const std::string& name, SourceLoc loc, const BindFn& bind);

// a * b + c of float type t (the operands already of type t), rounded once to t: f64 by Boldo and
// Melquiond's emulation (Dekker's exact product, two-sums, rounding to odd); narrower, exact in f64
// up to one rounding to odd (ir/Fma.cpp).
ExprP fused_multiply_add(ExprP a, ExprP b, ExprP c, Scalar t, SourceLoc loc, const BindFn& bind);

// f64 a * b + c rounded once down ('d'), up ('u') or toward zero ('z'), exact (libdevice's fma_rd,
// fma_ru, fma_rz): the same emulation, its rounded sum stepped by the sign of its exact error;
// overflow to the infinity or the largest finite value as the direction says, an exact zero sum -0
// rounded down (IEEE 754).
ExprP fused_multiply_add_directed(ExprP a, ExprP b, ExprP c, char mode, SourceLoc loc, const BindFn& bind);

}  // namespace dtsim
