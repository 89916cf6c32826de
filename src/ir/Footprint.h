// Disjoint writes: per buffer a kernel writes, a condition on the kernel's integer parameters and
// grid under which no two program instances write one element of it (so a conflict check of that
// buffer cannot find anything, and an executor may skip its claims).
//
// The analysis models every write site's element offset (from the buffer's start) as
//     coef * rho + r,   r in [lo, hi] over the site's active lanes,
// where coef, lo and hi are symbolic integers (Sym: constants, integer parameters, the grid's
// extents, + - * // min max), and rho is an instance index: a value congruent to program_id(0)
// modulo num_programs(0) (program_id(0) itself, or the variable of a loop
// `for i in range(program_id(0), stop, num_programs(0))`), the grid's other axes being 1. Distinct
// instances have distinct rho, so when every site has the same coef and |coef| exceeds the span of
// all sites' r (max hi - min lo), their elements cannot meet. A store's mask narrows r: a term t of
// the offset that the mask bounds (`t < n` in a conjunction, t of the store's shape and free of
// rho) is taken in [lo(t), n - 1].
//
// What is read: integer arithmetic (+ - * << by a constant, // and % by a positive uniform value,
// minimum/maximum, where, casts to a width at least the source's), arange, full, broadcasting and
// reshaping, program ids, grid extents, never-reassigned parameters, variables assigned once before
// the write (their definition read in its place), for-loop variables (their range). Anything else
// (loaded values, reassigned variables, while loops, several buffers behind one pointer) leaves the
// buffer unproven, with the reason. The condition also requires every 32-bit value on the way to
// fit in 32 bits (the kernel's own arithmetic then does not wrap).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct SymNode;
using Sym = std::shared_ptr<const SymNode>;

// A symbolic integer.
struct SymNode {
  enum class Op : uint8_t { Const, Param, Grid, Add, Sub, Mul, Div, Min, Max };
  Op op = Op::Const;
  int64_t c = 0;     // Const
  std::string name;  // Param: an integer scalar or constexpr parameter
  int axis = 0;      // Grid: num_programs(axis)
  Sym a, b;          // operands (Div: a // b with a >= 0, b > 0)
};
std::string sym_str(const Sym& s);

// lhs <= rhs.
struct SymLe {
  Sym lhs, rhs;
};

struct DisjointWrites {
  size_t param = 0;           // the buffer (index into Kernel::params)
  std::vector<SymLe> conds;   // proven: when all hold, no two instances write one element
  std::string why;            // empty when proven; else why not (the first site that could not be read)
  std::vector<int> sites;     // the statements writing it (Stmt::id)
  std::string summary() const;  // "disjoint when ..." or "not proven: ..."
};

// One entry per buffer that some Store or Atomic may write (parameter order). With `constexprs`,
// constexpr parameters are read as their values there (the conditions then name runtime values only).
std::vector<DisjointWrites> disjoint_writes(const Kernel& k, const Bindings* constexprs = nullptr);

// Evaluates the conditions exactly (integer parameter values from `value`, the grid's extents):
// false where one fails, an operand is unknown, or a value leaves [-2^62, 2^62].
bool disjoint_holds(const std::vector<SymLe>& conds, const std::function<std::optional<int64_t>(const std::string&)>& value,
                    const std::array<int64_t, 3>& grid);

}  // namespace dtsim
