// Inline PTX of tl.inline_asm_elementwise (TTIR tt.elementwise_inline_asm) as tile IR, built the
// same way for both Triton readers: the block's instructions, one by one, become the IR's integer
// and float ops on tiles of 16-, 32- or 64-bit register values; `pack` elements share one asm
// invocation, their bits packed into registers as the GPU packs them (docs/triton.md, "Inline PTX").
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Unsigned.h"

namespace dtsim {

struct PtxOperand {
  ExprP value;  // a tile of the op's shape (or one that broadcasts to it)
  Scalar elem;  // its element type
};

// Lowers the asm `text` (newlines kept: `//` comments end at them) with its `constraints`
// ("=r,=r,r": outputs, then inputs) over operand tiles of `shape`. Returns one expression per
// result (element type results[i], shape `shape`); each instruction's value is bound to a variable
// through `bind`. Any instruction, operand or constraint outside the supported set is a located
// user error at `loc` that quotes it. `trap` (the GPU aborts the launch; `@p trap` where p holds)
// becomes an assert appended to `effects`, which the caller emits before it uses the results: it fails
// in an instance that reaches it (at the first lane whose guard holds). Without `effects`, `trap` is an
// error.
std::vector<ExprP> lower_inline_ptx(const std::string& text, const std::string& constraints, int pack, const std::vector<PtxOperand>& args,
                                    const std::vector<Scalar>& results, const Shape& shape, SourceLoc loc, const BindFn& bind,
                                    std::vector<StmtP>* effects = nullptr);

}  // namespace dtsim
