// Undefined lanes of Triton loads, tracked by the sanitizer on request. Triton's contract leaves the
// lanes of `tl.load(p, mask=m)` (no `other`) where m is false undefined; the IR gives them 0 (IR.h,
// Memory), as Triton 3.9's NVIDIA lowering does in practice, so a kernel that lets such lanes reach
// its output relies on something Triton does not promise (docs/triton.md, "Undefined lanes of masked
// loads"). The Triton readers mark those loads (Expr::undef_masked); this pass, run by the compile
// driver when the launch asks for it (DTSIM_UNDEFINED_LANES=1, the interpreter with the sanitizer at
// `all`), rewrites a verified kernel so that every value that may hold undefined lanes
// carries a companion i1 value of its shape ("defined here"), built from the IR's own ops, and
// inserts asserts (Stmt::undefined_lanes) where undefined lanes matter:
//   * a store or atomic writes a value (or through a pointer) undefined at a lane its mask enables;
//   * a load or atomic reads through a pointer undefined at a lane its mask enables, or its mask
//     is undefined;
//   * an `if` / `while` condition, a `range` bound or an assert's condition (tl.device_assert, tl.assume,
//     a hint or gather check) is undefined.
// Propagation: elementwise ops and shape ops carry the companion lane by lane (an i1 `&` / `|` with a
// defined false / true operand is defined); `where(c, a, b)` takes the companion of the branch each
// lane picks; a reduction's lane is undefined if any lane it combines is, a scan's prefix-wise; dot's
// [i, j] if any lane of row i of a or column j of b is. Values that cannot hold undefined lanes get
// no companion, so a kernel without such loads is left as it was.
#pragma once

#include "ir/IR.h"

namespace dtsim {

// Rewrites every kernel of verified module `m` as above. True when it changed something (the module
// must then be verified again).
bool track_undefined_lanes(Module& m);

}  // namespace dtsim
