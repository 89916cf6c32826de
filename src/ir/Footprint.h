// Disjoint writes: per buffer a kernel writes, a condition on the kernel's integer parameters and
// grid under which no two program instances write one element of it (so a conflict check of that
// buffer cannot find anything, and an executor may skip its claims).
//
// The analysis models every write site's element offset (from the buffer's start) as a linear form
// over digits plus an interval,
//     sum_i coef_i * d_i + r,   d_i in [0, count_i - 1],   r in [lo, hi],
// where coef, count, lo and hi are symbolic integers (Sym: constants, integer parameters, the grid's
// extents, + - * // min max). A digit is the pid of a grid axis k (count num_programs(k); axis 0 may
// instead be the variable of a loop `for i in range(program_id(0), stop, num_programs(0))`, a value
// congruent to the pid, count max(num_programs(0), stop)), a lane coordinate of the store's tile
// (the dimension named by its position counted from the right, so broadcasting keeps it and
// expand_dims shifts it; `arange(a, b)` is that digit + a, count b - a), or an expression that the
// mask bounds (`t < n` in a conjunction, t a sum of digits: one digit of count hi - lo + 1 once its
// own digits are shown distinct). What is not linear (min, //, %, a product of two tiles, where() of
// different forms, reshape and trans) goes into the interval. A product with a uniform value scales
// every coefficient. The mask's `t < n`, t a lane digit plus an instance-uniform value, also bounds
// that lane's count.
// Disjointness is a mixed-radix condition: along the digits ordered by |coef| (the order taken from
// the values in `constexprs` where given; the condition is sound for any values, it may just fail),
//     |coef_i| * (count_i - 1) >= (S_{i-1} + 1) * (count_i - 1),   S_0 = hi - lo,
//     S_i = S_{i-1} + |coef_i| * (count_i - 1),
// so distinct digit tuples give distinct offsets whatever r; a grid axis that no digit reads must
// have num_programs(k) == 1 (two instances differing only there would write the same elements).
// Several sites of one buffer: the same digits and coefficients (their intervals joined), else their
// lanes collapsed into their intervals and the same instance digits.
// What is read: integer arithmetic (+ - * << by a constant, // and % by a positive uniform value,
// minimum/maximum, where, casts to a width at least the source's), arange, full, broadcasting and
// reshaping, program ids, grid extents, never-reassigned parameters, variables assigned once before
// the write (their definition read in its place), for-loop variables (their range). Anything else
// (loaded values, reassigned variables, while loops, several buffers behind one pointer,
// program_id(0) beside an instance loop's variable in one offset) leaves the buffer unproven, with
// the reason. The condition also requires every 32-bit value on the way to
// fit in 32 bits (the kernel's own arithmetic then does not wrap).
#pragma once

#include <cstdint>
#include <memory>
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
  // Proven, and every condition holds for a launch of kernel k with bindings b (its integer parameter
  // values, its grid evaluated under them), evaluated exactly: false where one fails, an operand is
  // unknown, or a value leaves [-2^52, 2^52].
  bool holds(const Kernel& k, const Bindings& b) const;
};

// One entry per buffer that some Store or Atomic may write (parameter order). With `constexprs`,
// constexpr parameters are read as their values there (the conditions then name runtime values only).
std::vector<DisjointWrites> disjoint_writes(const Kernel& k, const Bindings* constexprs = nullptr);

}  // namespace dtsim
