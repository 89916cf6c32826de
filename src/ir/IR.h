// The tile IR: the one program representation shared by the `.tile` parser, the DT frontend, the CPU
// interpreter and the CUDA backend.
//
// ============================================================================================
// SEMANTICS — every executor must honour exactly this.
// ============================================================================================
// Program instances. A launch runs one *program instance* for every point (pid0, pid1, pid2) of the
//   grid. Instances are independent: a kernel is correct only if its result does not depend on the
//   order in which instances run or on their interleaving. Two instances storing to one element, or
//   one instance reading an element another instance stores in the same launch, is a conflict (the
//   interpreter's sanitizer reports it). Kernels of a Module run one after another, in file order;
//   a later kernel sees everything an earlier one stored.
//
// Values. A value is a scalar or a *tile* (block): a dense array of a scalar type with a static shape
//   of rank 1-16 whose extents are powers of two (1 included) and whose size is at most 2^20 elements.
//   Shapes are known once constexpr parameters are bound; runtime scalars never change a shape.
//
// Element types. i1 (bool), i8, i16, i32, i64, f8e4m3, f8e5m2, f8e4b15, f8e4b8, f8e5b16, f16, bf16,
//   f32, f64, and pointers to each (`*f32`). Integers are signed (unsigned data lives in the integer
//   of its width; frontends emulate unsigned ops). f8e4m3 is OCP E4M3 "fn" (bias 7, no infinities,
//   max 448, NaN S.1111.111); f8e5m2 is E5M2 (bias 15, infinities, max 57344). f8e4b15 is E4M3 with
//   bias 15 (Triton's float8e4b15): no NaN or infinity, every pattern finite, max 1.875 (S.1111.111).
//   f8e4b8 and f8e5b16 are the "fnuz" E4M3 / E5M2 (bias 8 / 16; Triton's float8e4b8 / float8e5b16,
//   torch's float8_e4m3fnuz / float8_e5m2fnuz): no infinities and no negative zero, one NaN (0x80),
//   max 240 / 57344. A pointer value designates an element of one named global buffer; pointer
//   arithmetic is in elements.
//
// Broadcasting. Binary ops, where, load/store operands broadcast with numpy rules: shapes are aligned
//   at the right, each pair of extents must be equal or one of them 1; scalars broadcast to any shape.
//
// Type promotion (binary arithmetic, comparisons, where, minimum/maximum).
//   * A numeric literal is *weak*: it takes the type of the other operand when that operand is of the
//     same category (int literal with any int/float type -> that type; float literal with a float type
//     -> that type). A float literal with an integer operand gives f32. Two literals: i32 / f32.
//   * Otherwise: float beats int; among floats the wider wins (fp8 < f16 < bf16 < f32 < f64; f16 with
//     bf16 gives f32, two different fp8 types f16, fp8 with bf16 f32); among ints the wider wins
//     (i1 < i8 < i16 < i32 < i64). Arithmetic on i1 operands is done in i32.
//   * Pointer + integer -> pointer (same element type); pointer - integer likewise. Nothing else on
//     pointers except where(), comparisons ==/!= and load/store.
//
// Integer arithmetic wraps (two's complement) at the type's width. `//` and `%` on integers truncate
//   toward zero (C semantics, as Triton on the GPU): -7 // 2 == -3, -7 % 2 == -1. Integer division or
//   remainder by zero is a runtime fault. `/` always divides as floats: ints are converted to f32.
//   `//` on floats is an error; `%` on floats is fmod (sign of the dividend). cdiv(a, b) = (a+b-1)//b
//   for positive operands. Shifts `<<`, `>>` (arithmetic for signed): a count >= the width (unsigned) gives 0, `>>` the sign
//   (PTX's clamp); i8/i16 ops are computed in i32 (shifts: width 32) and wrapped to their width after every op.
//
// Floating point. f32/f64 ops are IEEE-754 round-to-nearest-even, no flush-to-zero, no FMA
//   contraction of separate ops. f16, bf16 and fp8 ops compute in f32 and round the result to the
//   storage type (round-to-nearest-even) after every op; for + - * / this equals a native f16/bf16 op.
//   Rounding to fp8 saturates: a finite value beyond the largest finite one, or an infinity, gives the
//   largest finite value of its sign (PTX cvt.rn.satfinite, as Triton on the GPU); NaN stays NaN.
//   f8e4b8 / f8e5b16 (as Triton's conversion for AMD GPUs): finite values saturate, an infinity or NaN
//   gives the NaN, and a result of zero is +0. f8e4b15 (as Triton's conversion on NVIDIA GPUs): ties
//   round away from zero, magnitudes from 1.75 up, infinities and NaN give +-1.75 (the sign kept). Math
//   functions (the Math rows of the op tables: exp ... cbrt, pow, atan2, hypot) take floats (ints are
//   converted to f32), compute f16/bf16 in f32 and round back; results may differ from the correctly
//   rounded value between executors by up to 1e-5 relative in f32 (the differential tester's
//   tolerance; the CUDA backend's f32 exp and exp2 use the GPU's approximate 2^x, the others
//   libdevice, whose f32 functions are within 4 ulp of the correctly rounded value).
//   round() rounds halves away from zero, rint() to even. minimum/maximum propagate NaN; minnum/maxnum
//   (Triton's tl.minimum/tl.maximum by default) give the other operand where one is NaN.
//   Casts: float -> int truncates toward zero and saturates at the target's range, NaN -> 0; int ->
//   int wraps to the target's width; int -> float rounds to nearest; anything -> i1 is `!= 0`; i1 ->
//   number is 0 or 1. bitcast(x, t) reinterprets the bits of a number as another type of the same
//   width (i8 <-> fp8, i16 <-> f16/bf16, i32 <-> f32, i64 <-> f64, f16 <-> bf16, fp8 <-> fp8).
//
// Reductions (sum max min argmax argmin xor_sum reduce_or) remove one axis. sum of i1/i8/i16/i32 gives i32, of i64 gives i64,
//   of any float accumulates and returns f32 (f64 for f64). max/min keep the type and propagate NaN.
//   argmax/argmin give i32: the smallest index among the extremal values. xor_sum and reduce_or take
//   integers or i1 and keep the type. reduce(x, axis, (a, b) -> f) and associative_scan(x, axis,
//   (a, b) -> f) combine with a function f of two elements of x's type (a: the value so far, b: the
//   next element, in index order; literals and ops only) that returns that type; f must be
//   associative for the result not to depend on the executor's order. The summation order is not
//   specified (executors may use a tree); results may differ by rounding.
//
// Scans (cumsum cumprod cummax cummin) keep the shape: element i along the axis combines elements
//   0..i (reverse: i..n-1) in that order. The type is the operand's (i1 computes as i32); f16/bf16
//   round after every step. Executors may combine in another order (a tree): results may differ by
//   rounding.
//
// dot(a, b, acc): a [M,K], b [K,N] of one float type (or two fp8 types); products and the sum are f32 (f64 for f64
//   inputs); acc (optional, [M,N] f32) is added. Result [M,N] f32. No tf32 unless asked. As for
//   reductions, the order of the sum is not specified, and a product may be added without rounding it
//   first (fused multiply-add, as tensor cores and FMA units do): results may differ by rounding.
// dot(a, b, acc, precision=tf32): f32 operands only; every operand element is first rounded to tf32
//   (10 explicit mantissa bits, to nearest with ties away from zero, as PTX cvt.rna.tf32.f32: the
//   low 13 bits of the f32 cleared; infinities and NaNs kept, a carry past the largest finite value
//   gives infinity); the products of tf32 values are exact in f32, the sum is as above.
//   precision=ieee is the default.
//
// Memory. load(ptr, mask, other): lanes where mask is false never touch memory and yield `other`
//   (converted to the element type; 0 when absent). An unmasked lane that points outside its buffer is
//   a fault (the interpreter reports it; on the GPU it is undefined behaviour). store(ptr, value, mask)
//   converts value to the element type and writes only lanes where mask is true. Within one instance,
//   statements take effect in program order; a store of a tile whose lanes hit one element twice
//   keeps the value of the last lane in row-major order (the GPU leaves it unspecified: a conflict).
//
// Control flow. `for v in range(lo, hi, step)` evaluates its bounds once, step > 0 (a step <= 0 is a
//   runtime fault); the loop variable has the promoted integer type of the bounds. `if` takes a scalar
//   i1 (any scalar number is compared with 0). `while cond { body }` evaluates its scalar condition
//   (i1, or any scalar number compared with 0) before every trip, including the first, and runs the
//   body while it holds; the body may run zero times or forever (there is no trip limit, as in
//   Python); `return` inside it ends the instance. Variables are block scoped: a name first assigned inside
//   a block is local to it; assigning an existing name updates it and must keep its type (this is how
//   values are carried across loop iterations). `return` ends the instance.
//
// Atomics. `old = atomic_add(ptr, val, mask)` (add max min umax umin and or xor xchg; and
//   `old = atomic_cas(ptr, cmp, val)`) is a statement: every active lane, in row-major order,
//   atomically replaces its element e by op(e, val) (cas: val where e == cmp) and yields e's old value
//   (masked-off lanes yield 0). val is converted to the element type; float add rounds as a store of
//   the sum would; float max/min order by the bits as the GPU does (the float order; a NaN is placed
//   by its bits). Atomics of different instances on one element do not conflict; an atomic and a
//   plain load or store of another instance on one element do. A spin lock (an atomic_cas that takes
//   a lock word, up to the atomic_xchg that gives it back) orders what the instance does while it
//   holds it: those accesses are not conflicts; nor are those after a scalar atomic that acquires a word (sem), with the
//   instances that released through it before. sem and scope are Triton's; the interpreter runs every atomic seq_cst.
//
// Addresses. ptr_to_int(p) is the i64 address of each pointer: its buffer's base address plus the
//   offset times the element size (the interpreter's buffers are host memory at real addresses; on
//   the GPU a device address). int_to_ptr(x, T) is the *T pointer at each i64 address: a lane whose
//   address lies in a buffer of the run (a kernel's argument, or memory the launch makes known, as
//   the Python package does for tensors whose addresses a kernel is given as integers) points into
//   that buffer; the buffer's element type must be T and the address aligned to it. Lanes of one tile
//   may point into several buffers. A lane at address 0 (null) stays valid until an unmasked access
//   through it, which is out of bounds; so does any other address in no buffer (aligned to T).
//
// Debugging. print(prefix, values...) prints, per instance, "pid (x, y, z) prefix v1 v2..."; assert(c,
//   msg) faults when any lane of c is false.
// ============================================================================================
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/Diag.h"

namespace dtsim {

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

#define DT_FOR_EACH_SCALAR(X) \
  X(I1, "i1", 1)              \
  X(I8, "i8", 1)              \
  X(I16, "i16", 2)            \
  X(I32, "i32", 4)            \
  X(I64, "i64", 8)            \
  X(F8E4M3, "f8e4m3", 1)      \
  X(F8E5M2, "f8e5m2", 1)      \
  X(F8E4B15, "f8e4b15", 1)    \
  X(F8E4B8, "f8e4b8", 1)      \
  X(F8E5B16, "f8e5b16", 1)    \
  X(F16, "f16", 2)            \
  X(BF16, "bf16", 2)          \
  X(F32, "f32", 4)            \
  X(F64, "f64", 8)

enum class Scalar : uint8_t {
#define X(e, s, b) e,
  DT_FOR_EACH_SCALAR(X)
#undef X
};

const char* scalar_name(Scalar s);
int scalar_bytes(Scalar s);
std::optional<Scalar> parse_scalar(const std::string& s);
inline bool is_fp8(Scalar s) {
  return s == Scalar::F8E4M3 || s == Scalar::F8E5M2 || s == Scalar::F8E4B15 || s == Scalar::F8E4B8 || s == Scalar::F8E5B16;
}
inline bool is_float(Scalar s) {
  return is_fp8(s) || s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F32 || s == Scalar::F64;
}
inline bool is_int(Scalar s) { return s == Scalar::I1 || s == Scalar::I8 || s == Scalar::I16 || s == Scalar::I32 || s == Scalar::I64; }
// Integers narrower than i32 (kept in 32 bits by executors that compute in i32 and wrap).
inline bool is_narrow_int(Scalar s) { return s == Scalar::I8 || s == Scalar::I16; }

using Shape = std::vector<int64_t>;
int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[4, 64]"

// A value's type: element type, whether it is a pointer to that element type, and a shape
// (empty = scalar).
struct Type {
  Scalar elem = Scalar::I32;
  bool ptr = false;
  Shape shape;

  bool is_scalar() const { return shape.empty(); }
  bool is_tile() const { return !shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  Type with_shape(Shape s) const { return Type{elem, ptr, std::move(s)}; }
  Type scalar_type() const { return Type{elem, ptr, {}}; }
  bool operator==(const Type&) const = default;
  std::string str() const;  // "f32", "*f16", "i32[64]", "*f32[32, 32]"
};

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------
// Operand conventions per kind (args[i]; a null ExprP means "absent"):
//   kind         | operands / fields                      | meaning
#define DT_FOR_EACH_EXPR(X)                                                                          \
  X(Const)       /* ival|fval, is_float, weak, dtype      | literal scalar (weak unless typed)      */ \
  X(Var)         /* name                                  | read a variable or parameter            */ \
  X(ProgramId)   /* axis                                  | i32 id of this instance on axis 0-2     */ \
  X(NumPrograms) /* axis                                  | i32 grid extent on axis 0-2             */ \
  X(Arange)      /* args: lo, hi (constant)               | i32 [hi-lo] = lo, lo+1, ..., hi-1       */ \
  X(Full)        /* args: shape... ; args.back(): value; dtype | tile of the given shape and type   */ \
  X(Unary)       /* uop; args: x                          | elementwise                             */ \
  X(Binary)      /* bop; args: a, b                       | elementwise with broadcasting           */ \
  X(Where)       /* args: cond, a, b                      | cond ? a : b, elementwise               */ \
  X(Cast)        /* dtype; args: x                        | x.to(dtype)                              */ \
  X(Bitcast)     /* dtype; args: x                        | x.to(dtype, bitcast=True): same width    */ \
  X(ExpandDims)  /* axis; args: x                         | insert a unit dim at axis (x[:, None])  */ \
  X(Reshape)     /* args: x, shape... (constant)          | same elements, row-major, new shape     */ \
  X(Trans)       /* args: x, order... (constant; absent: rank 2, [1, 0]) | permute: out dim i = x's dim order[i] */ \
  X(Broadcast)   /* args: x, shape... (constant)          | broadcast_to(x, shape)                  */ \
  X(Load)        /* args: ptr, mask?, other?              | masked gather                           */ \
  X(Dot)         /* args: a, b, acc?                      | a @ b (+ acc), f32                       */ \
  X(Reduce)      /* rop, axis; args: x                    | reduction over one axis                 */ \
  X(Scan)        /* sop, axis, reverse; args: x           | inclusive prefix combine along an axis  */ \
  X(Swizzle2d)   /* args: i, j, ni, nj, group             | grouped reordering; a pair (2 targets)  */ \
  X(CombineArg)  /* axis: 0 or 1                          | an argument of a combine function (fn)  */ \
  X(IntToPtr)    /* dtype; args: x (i64 addresses)        | the *dtype pointer at each address      */ \
  X(PtrToInt)    /* args: p                               | i64 address of each pointer             */ \
  X(Machine)     /* axis: a MachineReg                    | a reading of the machine (clock, SM id) */ \
  X(Gather)      /* axis; args: src, index (same rank)    | src's lane index[i] along axis (tl.gather) */ \
  X(Histogram)   /* args: x (1-D int), bins (constant), mask? | i32[bins]: lanes equal to each bin (tl.histogram) */

// The machine readings a Machine expression names (PTX's special registers that inline PTX and
// tl.extra.cuda.globaltimer() / smid() read). Columns: X(Enum, spelling, type). The interpreter reads
// its host: globaltimer the wall clock in ns since the Unix epoch (its _lo / _hi halves), clock64 and
// clock a steady count of ns (clock its low 32 bits), smid the OpenMP thread running the instance (0
// when sequential), nsmid the number of threads. The CUDA backend reads the registers. Values differ
// between runs and executors by nature; a program may only use them as opaque numbers.
#define DT_FOR_EACH_MACHINE_REG(X)               \
  X(GlobalTimer, "globaltimer", Scalar::I64)     \
  X(GlobalTimerLo, "globaltimer_lo", Scalar::I32) \
  X(GlobalTimerHi, "globaltimer_hi", Scalar::I32) \
  X(Clock64, "clock64", Scalar::I64)             \
  X(Clock, "clock", Scalar::I32)                 \
  X(SmId, "smid", Scalar::I32)                   \
  X(NSmId, "nsmid", Scalar::I32)

enum class MachineReg : uint8_t {
#define X(e, s, t) e,
  DT_FOR_EACH_MACHINE_REG(X)
#undef X
};
#define X(e, s, t) +1
inline constexpr int kNumMachineRegs = 0 DT_FOR_EACH_MACHINE_REG(X);
#undef X
const char* machine_reg_name(MachineReg r);
Scalar machine_reg_type(MachineReg r);
std::optional<MachineReg> parse_machine_reg(const std::string& s);

enum class ExprKind : uint8_t {
#define X(k) k,
  DT_FOR_EACH_EXPR(X)
#undef X
};
const char* expr_kind_name(ExprKind k);

// ---------------------------------------------------------------------------------------------
// The op tables. Each row below is the one definition of an op; everything else is derived:
//   * the enum (UnOp / BinOp / RedOp) and its name;
//   * the `.tile` spelling, which the parser reads and the printer writes (form: Prefix `-x`,
//     Infix `a + b` at precedence level `prec`, or Call `exp(x)`);
//   * the category an executor groups by (DT_MATH_UNOP_CASES below expands to the cases of every
//     Math row), and the result-type rule the verifier and every frontend apply (op_result_elem);
//   * the Triton `.py` spelling (an operator, or the name after `tl.`) and the `.dt` spelling
//     ("" where the frontend has none).
// Adding an op: one row here, then one case in every switch that fails to compile (executors'
// evaluation and the CUDA emitter; -Werror=switch, no `default:` over these enums). See
// docs/architecture.md.
//
// Columns: X(Enum, tile, category, type rule, form, prec, py, dt)
#define DT_FOR_EACH_UNOP(X)                                                                  \
  X(Neg, "-", Arith, Numeric, Prefix, Unary, "-", "-")           /* arithmetic negation    */ \
  X(Not, "~", Bitwise, Bits, Prefix, Unary, "~", "")             /* bitwise not; i1: logical */ \
  X(Exp, "exp", Math, FloatFn, Call, Postfix, "exp", "exp")                                  \
  X(Exp2, "exp2", Math, FloatFn, Call, Postfix, "exp2", "")                                 \
  X(Log, "log", Math, FloatFn, Call, Postfix, "log", "log")                                  \
  X(Log2, "log2", Math, FloatFn, Call, Postfix, "log2", "")                                 \
  X(Sqrt, "sqrt", Math, FloatFn, Call, Postfix, "sqrt", "sqrt")                              \
  X(Rsqrt, "rsqrt", Math, FloatFn, Call, Postfix, "rsqrt", "rsqrt")                          \
  X(Sigmoid, "sigmoid", Math, FloatFn, Call, Postfix, "sigmoid", "sigmoid") /* 1/(1+exp(-x)) */ \
  X(Tanh, "tanh", Math, FloatFn, Call, Postfix, "tanh", "tanh")                              \
  X(Erf, "erf", Math, FloatFn, Call, Postfix, "erf", "erf")                                      \
  X(Erfc, "erfc", Math, FloatFn, Call, Postfix, "erfc", "erfc")                                   \
  X(Floor, "floor", Math, FloatFn, Call, Postfix, "floor", "floor")                                \
  X(Ceil, "ceil", Math, FloatFn, Call, Postfix, "ceil", "ceil")                                   \
  X(Trunc, "trunc", Math, FloatFn, Call, Postfix, "trunc", "trunc")                                \
  X(Round, "round", Math, FloatFn, Call, Postfix, "round", "round")                  /* halves away from zero */\
  X(Rint, "rint", Math, FloatFn, Call, Postfix, "rint", "rint")                     /* halves to even */\
  X(Sin, "sin", Math, FloatFn, Call, Postfix, "sin", "sin")                                      \
  X(Cos, "cos", Math, FloatFn, Call, Postfix, "cos", "cos")                                      \
  X(Tan, "tan", Math, FloatFn, Call, Postfix, "tan", "tan")                                      \
  X(Asin, "asin", Math, FloatFn, Call, Postfix, "asin", "asin")                                   \
  X(Acos, "acos", Math, FloatFn, Call, Postfix, "acos", "acos")                                   \
  X(Atan, "atan", Math, FloatFn, Call, Postfix, "atan", "atan")                                   \
  X(Sinh, "sinh", Math, FloatFn, Call, Postfix, "sinh", "sinh")                                   \
  X(Cosh, "cosh", Math, FloatFn, Call, Postfix, "cosh", "cosh")                                   \
  X(Asinh, "asinh", Math, FloatFn, Call, Postfix, "asinh", "asinh")                                \
  X(Acosh, "acosh", Math, FloatFn, Call, Postfix, "acosh", "acosh")                                \
  X(Atanh, "atanh", Math, FloatFn, Call, Postfix, "atanh", "atanh")                                \
  X(Log10, "log10", Math, FloatFn, Call, Postfix, "log10", "log10")                                \
  X(Log1p, "log1p", Math, FloatFn, Call, Postfix, "log1p", "log1p")                  /* log(1 + x) */\
  X(Expm1, "expm1", Math, FloatFn, Call, Postfix, "expm1", "expm1")                  /* exp(x) - 1 */\
  X(Cbrt, "cbrt", Math, FloatFn, Call, Postfix, "cbrt", "cbrt")                                   \
  X(Abs, "abs", Arith, Numeric, Call, Postfix, "abs", "abs")     /* ints too               */

enum class UnOp : uint8_t {
#define X(e, ...) e,
  DT_FOR_EACH_UNOP(X)
#undef X
};

// Columns: X(Enum, tile, category, type rule, form, prec, py, dt)
#define DT_FOR_EACH_BINOP(X)                                                                    \
  X(Add, "+", Arith, Numeric, Infix, Add, "+", "+")                                             \
  X(Sub, "-", Arith, Numeric, Infix, Add, "-", "-")                                             \
  X(Mul, "*", Arith, Numeric, Infix, Mul, "*", "*")                                             \
  X(Div, "/", Arith, FloatFn, Infix, Mul, "/", "/")          /* true division, always float */ \
  X(FloorDiv, "//", Arith, IntOnly, Infix, Mul, "//", "")    /* integers, toward zero       */ \
  X(Mod, "%", Arith, Numeric, Infix, Mul, "%", "")           /* ints: C remainder; fmod     */ \
  X(And, "&", Bitwise, Bits, Infix, BitAnd, "&", "")         /* ints and i1                 */ \
  X(Or, "|", Bitwise, Bits, Infix, BitOr, "|", "")                                              \
  X(Xor, "^", Bitwise, Bits, Infix, BitXor, "^", "")                                            \
  X(Shl, "<<", Bitwise, Bits, Infix, Shift, "<<", "")                                           \
  X(Shr, ">>", Bitwise, Bits, Infix, Shift, ">>", "")                                           \
  X(Lt, "<", Compare, ToBool, Infix, Compare, "<", "<")                                         \
  X(Le, "<=", Compare, ToBool, Infix, Compare, "<=", "<=")                                      \
  X(Gt, ">", Compare, ToBool, Infix, Compare, ">", ">")                                         \
  X(Ge, ">=", Compare, ToBool, Infix, Compare, ">=", ">=")                                      \
  X(Eq, "==", Compare, ToBool, Infix, Compare, "==", "==")                                      \
  X(Ne, "!=", Compare, ToBool, Infix, Compare, "!=", "!=")                                      \
  X(LAnd, "&&", Logical, ToBool, Infix, And, "and", "")      /* operands converted to i1    */ \
  X(LOr, "||", Logical, ToBool, Infix, Or, "or", "")                                            \
  X(Min, "minimum", Arith, Numeric, Call, Postfix, "minimum", "minimum") /* NaN-propagating */ \
  X(Max, "maximum", Arith, Numeric, Call, Postfix, "maximum", "maximum")                        \
  X(MinNum, "minnum", Arith, Numeric, Call, Postfix, "minimum", "") /* IEEE minNum: a NaN  */ \
  X(MaxNum, "maxnum", Arith, Numeric, Call, Postfix, "maximum", "") /* operand is left out */ \
  X(Cdiv, "cdiv", Arith, IntOnly, Call, Postfix, "cdiv", "")  /* integers: (a + b - 1) // b  */ \
  X(Pow, "pow", Math, FloatFn, Call, Postfix, "pow", "pow")       /* a ** b, as C pow             */ \
  X(Atan2, "atan2", Math, FloatFn, Call, Postfix, "atan2", "atan2") /* the angle of (b, a)          */ \
  X(Hypot, "hypot", Math, FloatFn, Call, Postfix, "hypot", "hypot") /* sqrt(a*a + b*b), no overflow  */

enum class BinOp : uint8_t {
#define X(e, ...) e,
  DT_FOR_EACH_BINOP(X)
#undef X
};

// Reductions remove one axis; printed as sum(x, axis=1). The `.dt` spellings are the reduction
// calls its lowering turns into loops.
// Columns: X(Enum, tile, category, type rule, form, prec, py, dt)
#define DT_FOR_EACH_REDOP(X)                                       \
  X(Sum, "sum", Reduce, SumAcc, Call, Postfix, "sum", "rsum")      \
  X(Max, "max", Reduce, Keep, Call, Postfix, "max", "rmax")        \
  X(Min, "min", Reduce, Keep, Call, Postfix, "min", "rmin")        \
  X(Argmax, "argmax", Reduce, Index, Call, Postfix, "argmax", "")  \
  X(Argmin, "argmin", Reduce, Index, Call, Postfix, "argmin", "")  \
  X(Xor, "xor_sum", Reduce, Bits, Call, Postfix, "xor_sum", "")    \
  X(Or, "reduce_or", Reduce, Bits, Call, Postfix, "reduce_or", "") \
  X(Fn, "reduce", Reduce, Keep, Call, Postfix, "reduce", "")  /* Expr::fn combines */

enum class RedOp : uint8_t {
#define X(e, ...) e,
  DT_FOR_EACH_REDOP(X)
#undef X
};

// Scans (inclusive prefix combines along one axis, optionally from the end): the result has the
// operand's shape. Printed as cumsum(x, axis=0) or cumsum(x, axis=0, reverse=true).
// Columns: X(Enum, tile, py)   (py: the function after `tl.`)
#define DT_FOR_EACH_SCANOP(X) \
  X(Sum, "cumsum", "cumsum")  \
  X(Prod, "cumprod", "cumprod") \
  X(Max, "cummax", "cummax")  \
  X(Min, "cummin", "cummin")   \
  X(Fn, "associative_scan", "associative_scan") /* Expr::fn combines */

enum class ScanOp : uint8_t {
#define X(e, ...) e,
  DT_FOR_EACH_SCANOP(X)
#undef X
};
const char* scanop_name(ScanOp op);  // "cumsum"
const char* scanop_py(ScanOp op);    // "cumsum" (tl.cumsum)
inline constexpr ScanOp kAllScanOps[] = {
#define X(e, ...) ScanOp::e,
    DT_FOR_EACH_SCANOP(X)
#undef X
};

// Atomic read-modify-writes (the Atomic statement): each active lane updates its element
// atomically and yields the element's old value. Cas takes (ptr, cmp, val): the element becomes
// val where it equals cmp.
// Columns: X(Enum, tile, py)   (tile: `atomic_add(...)`; py: tl.atomic_add)
#define DT_FOR_EACH_ATOMICOP(X)             \
  X(Add, "atomic_add", "atomic_add")        \
  X(Max, "atomic_max", "atomic_max")        \
  X(Min, "atomic_min", "atomic_min")        \
  X(UMax, "atomic_umax", "")  /* integers compared as unsigned (Triton's float max/min lowering) */ \
  X(UMin, "atomic_umin", "")                \
  X(And, "atomic_and", "atomic_and")        \
  X(Or, "atomic_or", "atomic_or")           \
  X(Xor, "atomic_xor", "atomic_xor")        \
  X(Xchg, "atomic_xchg", "atomic_xchg")     \
  X(Cas, "atomic_cas", "atomic_cas")

enum class AtomicOp : uint8_t {
#define X(e, ...) e,
  DT_FOR_EACH_ATOMICOP(X)
#undef X
};
const char* atomicop_name(AtomicOp op);  // "atomic_add"
const char* atomicop_py(AtomicOp op);    // "atomic_add" ("" none)
inline constexpr AtomicOp kAllAtomicOps[] = {
#define X(e, ...) AtomicOp::e,
    DT_FOR_EACH_ATOMICOP(X)
#undef X
};
// Memory ordering and scope of an atomic (Triton's sem= and scope=; the defaults acq_rel, gpu).
#define DT_FOR_EACH_MEMSEM(X) X(AcqRel, "acq_rel") X(Relaxed, "relaxed") X(Acquire, "acquire") X(Release, "release")
enum class MemSem : uint8_t {
#define X(e, s) e,
  DT_FOR_EACH_MEMSEM(X)
#undef X
};
#define DT_FOR_EACH_MEMSCOPE(X) X(Gpu, "gpu") X(Cta, "cta") X(Sys, "sys")
enum class MemScope : uint8_t {
#define X(e, s) e,
  DT_FOR_EACH_MEMSCOPE(X)
#undef X
};
const char* memsem_name(MemSem s);
const char* memscope_name(MemScope s);
std::optional<MemSem> parse_memsem(const std::string& s);
std::optional<MemScope> parse_memscope(const std::string& s);

// What an op computes, for executors that handle a group alike.
enum class OpCat : uint8_t {
  Arith,    // numbers in, a number of the promoted type out
  Math,     // a float function of floats (ints are converted to f32)
  Bitwise,  // integers and i1 only
  Compare,  // i1 out
  Logical,  // operands converted to i1, i1 out
  Reduce,   // removes an axis
};

// The result element type of an op from its (promoted) operand type; see op_result_elem.
enum class TypeRule : uint8_t {
  Numeric,  // the promoted type; i1 computes as i32
  FloatFn,  // floats keep their type; integers give f32 (math functions, `/`)
  IntOnly,  // integer operands only (an error for floats); i1 computes as i32 (`//`, cdiv)
  Bits,     // integer or i1 operands only; the type is kept (~ & | ^ << >>)
  ToBool,   // i1 (comparisons, && ||)
  SumAcc,   // i1 -> i32, f16/bf16 -> f32, others kept (sum)
  Keep,     // the operand's type (max, min)
  Index,    // i32 (argmax, argmin)
};

// How the `.tile` parser reads and the printer writes an op.
enum class OpForm : uint8_t { Prefix, Infix, Call };

// Precedence levels of the `.tile` syntax, loosest first. An operand prints bare when its level is
// at least the level its position needs; the parser's binary levels are Or ... Mul.
enum class Prec : uint8_t { Or = 1, And = 2, Not = 3, Compare = 4, BitOr = 5, BitXor = 6, BitAnd = 7, Shift = 8, Add = 9, Mul = 10, Unary = 11, Postfix = 12 };

struct OpInfo {
  const char* name;  // the `.tile` spelling (also the printer's)
  OpCat cat;
  TypeRule rule;
  OpForm form;
  Prec prec;
  const char* py;  // Triton: the operator, or the function after `tl.` ("" none)
  const char* dt;  // `.dt` ("" none)
};

const OpInfo& op_info(UnOp op);
const OpInfo& op_info(BinOp op);
const OpInfo& op_info(RedOp op);

// Every op, in table order (for loops over the table: name lookups, tests).
inline constexpr UnOp kAllUnOps[] = {
#define X(e, ...) UnOp::e,
    DT_FOR_EACH_UNOP(X)
#undef X
};
inline constexpr BinOp kAllBinOps[] = {
#define X(e, ...) BinOp::e,
    DT_FOR_EACH_BINOP(X)
#undef X
};
inline constexpr RedOp kAllRedOps[] = {
#define X(e, ...) RedOp::e,
    DT_FOR_EACH_REDOP(X)
#undef X
};

// The result element type of `rule` on operands promoted to `t` (IR.h's semantics contract), or
// nullopt when the rule does not take `t` (a float operand of IntOnly or Bits). The verifier and
// the frontends' type inference all use this.
std::optional<Scalar> op_result_elem(TypeRule rule, Scalar t);

// `case UnOp::Exp: case UnOp::Exp2: ...` for every Math row: executors group the math functions
// with it, so a new Math row joins the group and needs only its own case where each is computed.
#define DT_WHEN_MATH_Math(x) x
#define DT_WHEN_MATH_Arith(x)
#define DT_WHEN_MATH_Bitwise(x)
#define DT_UNOP_MATH_CASE_(e, name, cat, ...) DT_WHEN_MATH_##cat(case UnOp::e:)
#define DT_MATH_UNOP_CASES DT_FOR_EACH_UNOP(DT_UNOP_MATH_CASE_)
// The same for the binary Math rows (pow, atan2, hypot), and the other binary rows.
#define DT_WHEN_MATH_Compare(x)
#define DT_WHEN_MATH_Logical(x)
#define DT_WHEN_NOT_MATH_Math(x)
#define DT_WHEN_NOT_MATH_Arith(x) x
#define DT_WHEN_NOT_MATH_Bitwise(x) x
#define DT_WHEN_NOT_MATH_Compare(x) x
#define DT_WHEN_NOT_MATH_Logical(x) x
#define DT_BINOP_MATH_CASE_(e, name, cat, ...) DT_WHEN_MATH_##cat(case BinOp::e:)
#define DT_BINOP_NOT_MATH_CASE_(e, name, cat, ...) DT_WHEN_NOT_MATH_##cat(case BinOp::e:)
#define DT_MATH_BINOP_CASES DT_FOR_EACH_BINOP(DT_BINOP_MATH_CASE_)
#define DT_NOT_MATH_BINOP_CASES DT_FOR_EACH_BINOP(DT_BINOP_NOT_MATH_CASE_)

const char* unop_name(UnOp op);
bool unop_is_math(UnOp op);  // category Math: a float function (exp ... tanh), not Neg/Not/Abs
const char* binop_name(BinOp op);
bool binop_is_compare(BinOp op);  // category Compare: < <= > >= == !=
bool binop_is_call(BinOp op);     // printed as a call: minimum(a, b), maximum, cdiv
const char* redop_name(RedOp op);

struct Expr;
using ExprP = std::shared_ptr<Expr>;

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  std::vector<ExprP> args;

  UnOp uop = UnOp::Neg;
  BinOp bop = BinOp::Add;
  RedOp rop = RedOp::Sum;
  ScanOp sop = ScanOp::Sum;
  bool reverse = false;        // Scan: from the last element of the axis to the first
  int axis = 0;                // ProgramId / NumPrograms / ExpandDims / Reduce / Scan / Gather; Machine: a MachineReg
  Scalar dtype = Scalar::I32;  // Const (when !weak), Full, Cast, Bitcast
  int64_t ival = 0;            // Const (integer or i1)
  double fval = 0;             // Const (float)
  bool is_float = false;       // Const: fval is the value
  bool weak = true;            // Const: literal without explicit type
  std::string name;            // Var
  bool tf32 = false;           // Dot: precision=tf32 (operands rounded to tf32)
  // Load with a mask and no `other`, from a Triton reader: Triton leaves the masked-off lanes
  // undefined. Executors give them 0 as for any load; the sanitizer tracks them (ir/Undefined.h).
  bool undef_masked = false;
  // Reduce / Scan with op Fn: the combine function, a scalar expression of CombineArg 0 (the value
  // so far) and CombineArg 1 (the next element), literals and ops; kept out of args so that walks
  // over a kernel's values do not enter it.
  std::shared_ptr<Expr> fn;
  // Reduce / Scan with op Fn over N > 1 operands (args[0..N-1], of one shape: Triton's tl.reduce /
  // tl.associative_scan of a tuple): component i of the combine function is fns[i], a scalar
  // expression of CombineArg 0..N-1 (the values so far) and N..2N-1 (the next elements); `fn` is
  // null. The expression's value is component `part` of the result (each component is its own
  // expression over the same operands and functions).
  std::vector<std::shared_ptr<Expr>> fns;
  int part = 0;

  // ---- filled by the verifier (verify_module) ----
  Type type;                // the value's type after promotion
  int slot = -1;            // Var: frame slot
  std::vector<int64_t> ints;  // resolved constants: Arange {lo, hi}; Full/Reshape/Broadcast: shape; Trans: order; Histogram: {bins}
};

// Builders (locations optional). Keep them thin: the verifier does all checking.
ExprP make_const_int(int64_t v, SourceLoc loc = {});
ExprP make_const_float(double v, SourceLoc loc = {});
ExprP make_const_bool(bool v, SourceLoc loc = {});
ExprP make_var(const std::string& name, SourceLoc loc = {});
ExprP make_program_id(int axis, SourceLoc loc = {});
ExprP make_num_programs(int axis, SourceLoc loc = {});
ExprP make_machine(MachineReg r, SourceLoc loc = {});
ExprP make_arange(ExprP lo, ExprP hi, SourceLoc loc = {});
ExprP make_full(std::vector<ExprP> shape, ExprP value, Scalar dtype, SourceLoc loc = {});
ExprP make_unary(UnOp op, ExprP x, SourceLoc loc = {});
ExprP make_binary(BinOp op, ExprP a, ExprP b, SourceLoc loc = {});
ExprP make_where(ExprP c, ExprP a, ExprP b, SourceLoc loc = {});
ExprP make_cast(ExprP x, Scalar dtype, SourceLoc loc = {});
ExprP make_bitcast(ExprP x, Scalar dtype, SourceLoc loc = {});
ExprP make_expand_dims(ExprP x, int axis, SourceLoc loc = {});
ExprP make_reshape(ExprP x, std::vector<ExprP> shape, SourceLoc loc = {});
ExprP make_trans(ExprP x, SourceLoc loc = {});  // rank 2
ExprP make_permute(ExprP x, std::vector<ExprP> order, SourceLoc loc = {});
ExprP make_broadcast(ExprP x, std::vector<ExprP> shape, SourceLoc loc = {});
ExprP make_load(ExprP ptr, ExprP mask = nullptr, ExprP other = nullptr, SourceLoc loc = {});
ExprP make_dot(ExprP a, ExprP b, ExprP acc = nullptr, SourceLoc loc = {});
// tl.gather(src, index, axis): out[i] = src[i with i[axis] replaced by index[i]]; index (an integer
// tile of src's rank) matches src's shape outside `axis`; the result has index's shape and src's type.
// An index outside [0, src.shape[axis]) selects the nearest lane (each executor clamps it); the
// readers put a located assert before the gather to report such an index.
ExprP make_gather(ExprP src, ExprP index, int axis, SourceLoc loc = {});
// tl.histogram(x, bins, mask): an i32[bins] tile whose element b counts the lanes of x (a 1-D integer
// tile) equal to b where the mask (an optional i1 tile of x's shape) is on; a value outside [0, bins)
// (as a signed integer of x's type) is counted nowhere. bins is a constant expression: a power of two.
ExprP make_histogram(ExprP x, ExprP bins, ExprP mask = nullptr, SourceLoc loc = {});
ExprP make_reduce(RedOp op, ExprP x, int axis, SourceLoc loc = {});
ExprP make_scan(ScanOp op, ExprP x, int axis, bool reverse, SourceLoc loc = {});
ExprP make_combine_arg(int index, SourceLoc loc = {});  // 0: the value so far, 1: the next element
// Component `part` of the reduce / associative_scan of operands xs (N > 1) with combine components fns
// (see Expr::fns).
ExprP make_reduce_n(std::vector<ExprP> xs, int axis, std::vector<ExprP> fns, int part, SourceLoc loc = {});
ExprP make_scan_n(std::vector<ExprP> xs, int axis, bool reverse, std::vector<ExprP> fns, int part, SourceLoc loc = {});
ExprP make_swizzle2d(ExprP i, ExprP j, ExprP ni, ExprP nj, ExprP group, SourceLoc loc = {});
ExprP make_int_to_ptr(ExprP x, Scalar elem, SourceLoc loc = {});  // i64 addresses -> *elem
ExprP make_ptr_to_int(ExprP p, SourceLoc loc = {});               // pointers -> i64 addresses

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------
#define DT_FOR_EACH_STMT(X)                                                                         \
  X(Assign) /* targets (1; 2 for swizzle2d), args: value; aug: printed as `t op= rhs`             */ \
  X(Store)  /* args: ptr, value, mask?                                                            */ \
  X(For)    /* targets: loop var; args: lo, hi, step; body                                        */ \
  X(If)     /* args: cond; body, orelse                                                           */ \
  X(While)  /* args: cond (scalar, evaluated before each trip); body                              */ \
  X(Print)  /* text: prefix; args: values                                                         */ \
  X(Assert) /* text: message; args: cond                                                          */ \
  X(Atomic) /* aop, sem, scope; targets: old value (0 or 1); args: ptr, val, mask? (Cas: ptr, cmp, val) */ \
  X(Return) /* ends the program instance                                                          */

enum class StmtKind : uint8_t {
#define X(k) k,
  DT_FOR_EACH_STMT(X)
#undef X
};
const char* stmt_kind_name(StmtKind k);

struct Stmt;
using StmtP = std::shared_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  SourceLoc loc;   // where the statement is written (.tile line, or the .dt algorithm line)
  SourceLoc loc2;  // optional second origin (the .dt schedule line that produced it)
  std::vector<std::string> targets;
  std::vector<ExprP> args;
  std::vector<StmtP> body;
  std::vector<StmtP> orelse;
  std::string text;
  // Assign only, for printing: when set, args[0] is Binary(aug_op, Var(target), rhs) and the printer
  // writes `target op= rhs`. Executors ignore it.
  std::optional<BinOp> aug;
  // Atomic only.
  AtomicOp aop = AtomicOp::Add;
  MemSem sem = MemSem::AcqRel;
  MemScope scope = MemScope::Gpu;
  // Assert only: a check of ir/Undefined.h (lanes a Triton load left undefined reach a use that
  // matters). The interpreter reports it as an uninitialized read whose message is `text`.
  bool undefined_lanes = false;

  // ---- filled by the verifier ----
  std::vector<int> slots;  // Assign / For: frame slot of each target
  bool declares = false;   // Assign / For: the first target is a new variable in this scope
  int id = -1;             // unique per kernel, in pre-order; indexes Kernel::stmts
};

StmtP make_assign(const std::string& target, ExprP value, SourceLoc loc = {});
StmtP make_store(ExprP ptr, ExprP value, ExprP mask = nullptr, SourceLoc loc = {});
StmtP make_for(const std::string& var, ExprP lo, ExprP hi, ExprP step, std::vector<StmtP> body,
               SourceLoc loc = {});
StmtP make_if(ExprP cond, std::vector<StmtP> body, std::vector<StmtP> orelse = {}, SourceLoc loc = {});
StmtP make_while(ExprP cond, std::vector<StmtP> body, SourceLoc loc = {});
// `target = atomic_<op>(ptr, val, mask)` (target "" : the old value is not kept). Cas: (ptr, cmp, val).
StmtP make_atomic(AtomicOp op, const std::string& target, std::vector<ExprP> args, SourceLoc loc = {});

// ---------------------------------------------------------------------------------------------
// Kernels and modules
// ---------------------------------------------------------------------------------------------

enum class ParamKind : uint8_t { Pointer, Scalar, Constexpr };
// What a pointer parameter's buffer holds before the module runs and whether it is reported:
//   In: input (from --in file, or seeded random data); Out: output, starts uninitialized (poisoned);
//   InOut: input that is also written and reported; Scratch: intermediate, starts uninitialized and
//   is not reported (DT materializes non-fused Funcs in such buffers).
enum class BufIO : uint8_t { In, Out, InOut, Scratch };
const char* bufio_name(BufIO io);

struct Param {
  std::string name;
  ParamKind kind = ParamKind::Scalar;
  Scalar dtype = Scalar::I32;  // element type for Pointer; value type for Scalar; Constexpr is i32/i64
  std::vector<ExprP> shape;    // Pointer: buffer shape, expressions of scalar/constexpr params
  BufIO io = BufIO::In;        // Pointer only
  ExprP init;                  // Scalar/Constexpr: default value (expression of earlier params), or null
  SourceLoc loc;
  int slot = -1;               // filled by the verifier
};

struct Kernel {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::vector<ExprP> grid;  // 1-3 expressions of scalar/constexpr params
  int num_warps = 4;
  int num_stages = 3;
  // Schedule options (docs/tile-language.md "Schedule options"): requests to the CUDA backend's plan,
  // which takes them where it can and says why not where it cannot (`emit --plan`). They change how
  // instances are run, never what an instance computes: the interpreter ignores them.
  //   warp_specialize   `warp_specialize`: the dot loop's TMA ring filled by a producer warp
  //                     (Triton: `tl.range(..., warp_specialize=True)`);
  //   persistent        `persistent` / `persistent(N)`: a persistent grid, at most persistent_ctas
  //                     CTAs (0: as many as fit on the GPU at once) each walking the program ids;
  //   cluster           `cluster(2)`: TMA-ring CTAs in clusters of 2 sharing an operand (1: none).
  bool warp_specialize = false;
  bool persistent = false;
  int64_t persistent_ctas = 0;
  int64_t cluster = 1;
  std::vector<StmtP> body;

  // ---- filled by the verifier ----
  int num_slots = 0;
  std::vector<std::string> slot_names;  // per slot: variable name (for the debugger)
  std::vector<Type> slot_types;         // per slot: type
  std::vector<Stmt*> stmts;             // every statement by id (pre-order)

  const Param* find_param(const std::string& n) const;
};

struct Module {
  std::string file;  // source file name (for messages)
  std::vector<Kernel> kernels;
};

// A scalar value bound to a parameter (constexpr or runtime scalar).
struct ScalarValue {
  Scalar type = Scalar::I32;
  int64_t i = 0;
  double f = 0;
  bool is_float() const { return dtype_is_float(); }
  bool dtype_is_float() const { return ::dtsim::is_float(type); }
  double as_double() const { return dtype_is_float() ? f : static_cast<double>(i); }
  int64_t as_int() const { return dtype_is_float() ? static_cast<int64_t>(f) : i; }
  static ScalarValue of_int(int64_t v, Scalar t = Scalar::I32) { return ScalarValue{t, v, 0}; }
  static ScalarValue of_float(double v, Scalar t = Scalar::F32) { return ScalarValue{t, 0, v}; }
  std::string str() const;
};

// Deep copy (the verifier annotates nodes in place; clone before verifying one module twice with
// different bindings).
ExprP clone_expr(const ExprP& e);
StmtP clone_stmt(const StmtP& s);
Kernel clone_kernel(const Kernel& k);
Module clone_module(const Module& m);

}  // namespace dtsim
