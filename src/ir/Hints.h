// Checks of the compiler hints tl.multiple_of, tl.max_contiguous and tl.max_constancy, built from
// the IR's ops. Both Triton readers lower a hint with them when the launch asks for hint checks (the
// interpreter with the sanitizer on): a hint that does not hold is an assert that fails at the
// lanes that break it (docs/triton.md, "Compiler hints").
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Unsigned.h"  // BindFn

namespace dtsim {

enum class HintKind { Divisibility, Contiguity, Constancy };

// The Triton spelling of a hint: "tl.multiple_of" ...
const char* hint_py_name(HintKind k);

// The asserts that hint `k` with `values` (one per dimension; one for a scalar) holds for `x`, a value
// of type `t` that may be read several times (a variable). `what` names the value in messages (the
// Python variable, or "" for none). Per dimension d with v = values[d] > 1, lane i (its index i_d
// along d, prev_d the element before it along d):
//   Divisibility: x % v == 0 at each lane that starts a run of consecutive values along every
//                 dimension e (i_e == 0, or x != prev_e + 1): the first element of each group;
//   Contiguity:   i_d % v == 0 (an aligned group's first lane), or x == prev_d + 1, or x == 0 (the
//                 restart of `(a + arange) % n` at its wrap);
//   Constancy:    i_d % v == 0, or x == prev_d (floats: or both NaN).
// No checks for pointers, for Divisibility / Contiguity of floats, or for dimensions with v <= 1.
std::vector<StmtP> hint_checks(HintKind k, const std::vector<int64_t>& values, const ExprP& x, const Type& t,
                               const std::string& what, SourceLoc loc, const BindFn& bind);

}  // namespace dtsim
