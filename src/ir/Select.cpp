#include "ir/Select.h"

#include "ir/Unsigned.h"

namespace dtsim {

ExprP select_lane(ExprP cond, ExprP x, int axis, Scalar t, SourceLoc loc) {
  const bool fl = is_float(t);
  const int bytes = scalar_bytes(t);
  const Scalar bits = !fl ? t : int_of_bits(8 * bytes);
  if (fl) x = make_bitcast(std::move(x), bits, loc);
  ExprP e = make_reduce(RedOp::Sum, make_where(std::move(cond), std::move(x), make_cast(int_of(0, Scalar::I32, loc), bits, loc), loc), axis, loc);
  if (bits != Scalar::I32 && bits != Scalar::I64) e = make_cast(std::move(e), bits, loc);  // narrow sums come back wider
  return fl ? make_bitcast(std::move(e), t, loc) : e;
}

}  // namespace dtsim
