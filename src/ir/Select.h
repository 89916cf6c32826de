// Selecting one lane along an axis, bit for bit, for both Triton readers (tl.gather, tl.split).
#pragma once

#include "ir/IR.h"

namespace dtsim {

// The lane of x (element type t) that `cond` selects along `axis`, one per position (none: 0): the
// sum over `axis` of where(cond, x, 0). Floats are selected as the integers of their bits, so that
// -0.0 and NaN payloads come through unchanged (a float sum would make -0.0 + 0 = +0.0).
ExprP select_lane(ExprP cond, ExprP x, int axis, Scalar t, SourceLoc loc);

}  // namespace dtsim
