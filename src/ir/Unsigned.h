// Unsigned integer operations built from the IR's signed ones (the IR's integers are signless and
// its division, shifts, comparisons and conversions signed). Both Triton readers build unsigned
// values with these: the TTIR reader for Triton's divui/shrui/cmpi ult/uitofp..., dtsim's own .py
// reader for tl.uint8..tl.uint64 values, so the two agree bit for bit.
#pragma once

#include <functional>
#include <string>

#include "ir/IR.h"

namespace dtsim {

// Binds `value` to a fresh variable named after `base` in the caller's statement list and returns
// a reference to it (for values an expansion uses more than once).
using BindFn = std::function<ExprP(const std::string& base, ExprP value)>;

enum class UnsignedOp { Shr, Div, Rem, Max, Min, MulHi };

// An integer literal of type t (weak where it is an i32 that fits, as a Triton literal is).
ExprP int_of(int64_t v, Scalar t, SourceLoc loc);
// The integer type of `bits` bits (8, 16, 32; anything else i64): the one a float of that width bitcasts to.
Scalar int_of_bits(int bits);
// The sign bit of integer type t as a value of t (-2^(bits-1)).
int64_t sign_bit_of(Scalar t);
// a OP b on the unsigned integers held by a and b (both of integer type t, not i1).
ExprP unsigned_binary(UnsignedOp op, ExprP a, ExprP b, Scalar t, SourceLoc loc, const BindFn& bind);
// a < b (Lt, Le, Gt, Ge) as unsigned values of type t: the signed comparison with the sign bits flipped
// (i1: true above false, compared as i32).
ExprP unsigned_compare(BinOp cmp, ExprP a, ExprP b, Scalar t, SourceLoc loc);
// x ^ sign bit: maps unsigned order onto signed order (and back).
ExprP flip_sign(ExprP x, Scalar t, SourceLoc loc);
// The unsigned value of x (type `from`, narrower than i64, not i1) in i64: zero-extended.
ExprP zero_extend_i64(ExprP x, Scalar from, SourceLoc loc);
// Unsigned x of type `from` converted to `to` (a float type or a wider integer type): uitofp / extui.
ExprP unsigned_convert(ExprP x, Scalar from, Scalar to, SourceLoc loc, const BindFn& bind);
// Float x converted to the unsigned integer type `to` (fptoui; out of range saturates as the IR's
// conversions do).
ExprP float_to_unsigned(ExprP x, Scalar to, SourceLoc loc, const BindFn& bind);

}  // namespace dtsim
