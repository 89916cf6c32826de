// tl.dot_scaled (Triton's microscaled dot, TTIR tt.dot_scaled) built from the IR's elementwise and
// shape ops and a dot. Both Triton readers build it with this: the TTIR reader for tt.dot_scaled,
// dtsim's own .py reader for tl.dot_scaled, so the two agree bit for bit.
#pragma once

#include <functional>
#include <string>

#include "ir/IR.h"
#include "ir/Unsigned.h"

namespace dtsim {

// One operand of a scaled dot as the kernel holds it: its value, element type and shape (the lhs
// M x K, the rhs K x N; e2m1 packed two per byte, halving K, or with k_pack = false M / N), its
// format (e2m1, e4m3, e5m2, bf16, fp16), and its scale (null for none: [M, K / group] for the lhs,
// [N, K / group] for the rhs; e8m0 bytes as i8, or fp8 values).
struct ScaledOperand {
  ExprP value;
  Scalar elem = Scalar::I8;
  Shape shape;
  std::string format;
  ExprP scale;
  Scalar scale_elem = Scalar::I8;
  Shape scale_shape;
  bool k_pack = true;
};

// lhs @ rhs + acc (acc: f32 M x N) as Triton defines tl.dot_scaled: each operand upcast exactly (e2m1
// nibbles unpacked, the first value in the low nibble; fp8, bf16, fp16 converted; a format's bits in
// an integer type of its width bitcast first, as Triton does), multiplied by its scale broadcast over
// its group of K (e8m0: 2^(s - 127), 0xFF NaN; fp8: its value), rounded to Triton's compute type (fp16
// where an operand is fp16, else bf16) and taken by a dot with the f32 accumulator. Shapes, formats
// and types that do not fit are UserErrors at `loc`. Each operand's value and scale is used once.
// Rank-3 operands (Triton's batched form: lhs [B, M, K], rhs [B, K, N], acc [B, M, N]; scales
// [B, rows, K / group], or 2-D, one for every batch) are taken one batch at a time by the 2-D form
// above (see batch_of), the results put together along the batch axis.
ExprP scaled_dot(const ScaledOperand& lhs, const ScaledOperand& rhs, ExprP acc, SourceLoc loc, const BindFn& bind);

// Batch `b` of a rank-3 tile `x` (`shape`, element type `elem`): the rank-2 tile x[b], exactly (the
// sum over the batch axis of where(axis index == b, x, 0), converted back to `elem`; a -0.0 reads as
// +0.0). `x` is used once.
ExprP batch_of(ExprP x, const Shape& shape, Scalar elem, int64_t b, SourceLoc loc);

// A rank-3 result [B, rows, cols] from its B rank-2 batches (`one(b)` builds batch b): where(batch
// index == b, one(b), ...) over the batch axis.
ExprP from_batches(int64_t batches, int64_t rows, int64_t cols, SourceLoc loc, const std::function<ExprP(int64_t)>& one);

}  // namespace dtsim
