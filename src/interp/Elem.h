// Element-level semantics shared by the tile operations (Ops.cpp) and the unboxed scalar form
// (Scalar.cpp): wraparound integer arithmetic, NaN-propagating min/max, math functions, and the
// per-element forms of every unary and binary op. Both executors of a statement call these same
// functions, so a scalar evaluated unboxed is bit-identical to a one-element tile.
#pragma once

#include <cmath>
#include <deque>

#include "interp/Exec.h"
#include "interp/VecMath.h"

namespace dtsim::exec {

// Calls f(T{}) with T the storage type of variant index `idx`.
template <class F> decltype(auto) with_storage(size_t idx, F&& f) {
  switch (idx) {
    case 0: return f(uint8_t{});
    case 1: return f(int32_t{});
    case 2: return f(int64_t{});
    case 3: return f(float{});
    default: return f(double{});
  }
}

template <class T> using U = std::make_unsigned_t<T>;
template <class T> inline T wadd(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<U<T>>(a) + static_cast<U<T>>(b));
  else return a + b;
}
template <class T> inline T wsub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<U<T>>(a) - static_cast<U<T>>(b));
  else return a - b;
}
template <class T> inline T wmul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<U<T>>(a) * static_cast<U<T>>(b));
  else return a * b;
}
// The smaller / larger of two elements: NaN-propagating (the IR's minimum / maximum), or IEEE
// minNum / maxNum (`Num`: a NaN operand left out, NaN only when both are: minnum / maxnum).
template <bool Max, bool Num, class T> inline T min_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return Num ? b : a;
    if (b != b) return Num ? a : b;
  }
  if constexpr (Max) return a < b ? b : a;
  else return b < a ? b : a;
}
template <class T> inline T fmin_nan(T a, T b) { return min_max<false, false>(a, b); }
template <class T> inline T fmax_nan(T a, T b) { return min_max<true, false>(a, b); }
template <class T> inline T fmin_num(T a, T b) { return min_max<false, true>(a, b); }
template <class T> inline T fmax_num(T a, T b) { return min_max<true, true>(a, b); }

template <class T> inline T math1(UnOp op, T x) {
  switch (op) {
    case UnOp::Exp:
      if constexpr (std::is_same_v<T, float>) return exp_f32(x);
      else return std::exp(x);
    case UnOp::Exp2: return std::exp2(x);
    case UnOp::Log:
      if constexpr (std::is_same_v<T, float>) return log_f32(x);
      else return std::log(x);
    case UnOp::Log2: return std::log2(x);
    case UnOp::Sqrt: return std::sqrt(x);
    case UnOp::Rsqrt: return T(1) / std::sqrt(x);
    case UnOp::Sigmoid: return T(1) / (T(1) + std::exp(-x));
    case UnOp::Tanh: return std::tanh(x);
    case UnOp::Erf: return std::erf(x);
    case UnOp::Erfc: return std::erfc(x);
    case UnOp::Floor: return std::floor(x);
    case UnOp::Ceil: return std::ceil(x);
    case UnOp::Trunc: return std::trunc(x);
    case UnOp::Round: return std::round(x);
    case UnOp::Rint: return std::nearbyint(x);
    case UnOp::Sin: return std::sin(x);
    case UnOp::Cos: return std::cos(x);
    case UnOp::Tan: return std::tan(x);
    case UnOp::Asin: return std::asin(x);
    case UnOp::Acos: return std::acos(x);
    case UnOp::Atan: return std::atan(x);
    case UnOp::Sinh: return std::sinh(x);
    case UnOp::Cosh: return std::cosh(x);
    case UnOp::Asinh: return std::asinh(x);
    case UnOp::Acosh: return std::acosh(x);
    case UnOp::Atanh: return std::atanh(x);
    case UnOp::Log10: return std::log10(x);
    case UnOp::Log1p: return std::log1p(x);
    case UnOp::Expm1: return std::expm1(x);
    case UnOp::Cbrt: return std::cbrt(x);
    case UnOp::Neg: return -x;
    case UnOp::Not: return x;
    case UnOp::Abs: return std::fabs(x);
  }
  return x;
}

// The binary math functions (Math rows of the BinOp table) on floats.
template <class T> inline T math2(BinOp op, T x, T y) {
  switch (op) {
    case BinOp::Pow: return std::pow(x, y);
    case BinOp::Atan2: return std::atan2(x, y);
    case BinOp::Hypot: return std::hypot(x, y);
    DT_NOT_MATH_BINOP_CASES break;
  }
  internal_error("Interp", "math2 on a non-math op");
}

// Integer // % cdiv of one element: C truncation, MIN // -1 == MIN; `zero` set on a zero divisor.
template <class T> inline T int_div_elem(BinOp op, T x, T y, bool& zero) {
  if (y == 0) {
    zero = true;
    return 0;
  }
  if (y == -1) return op == BinOp::Mod ? T(0) : op == BinOp::FloorDiv ? wsub<T>(0, x) : wsub<T>(0, wsub<T>(x, T(2)));
  if (op == BinOp::FloorDiv) return x / y;
  if (op == BinOp::Mod) return x % y;
  return wadd<T>(x, wsub<T>(y, 1)) / y;
}

[[noreturn]] inline void div_zero(BinOp op, SourceLoc loc) {
  throw RuntimeFault(loc, std::string("integer ") + (op == BinOp::Mod ? "remainder" : "division") + " by zero");
}

// One element of a non-comparison binary op in storage type T (before f16/bf16 rounding).
template <class T> inline T bin_elem(BinOp op, T x, T y, SourceLoc loc) {
  constexpr bool F = std::is_floating_point_v<T>;
  [[maybe_unused]] constexpr int W = static_cast<int>(sizeof(T) * 8);
  switch (op) {
    case BinOp::Add: return wadd(x, y);
    case BinOp::Sub: return wsub(x, y);
    case BinOp::Mul: return wmul(x, y);
    case BinOp::Div:
      if constexpr (!F) {
        if (y == 0) div_zero(op, loc);
      }
      return static_cast<T>(x / y);
    case BinOp::Min: return fmin_nan(x, y);
    case BinOp::Max: return fmax_nan(x, y);
    case BinOp::MinNum: return fmin_num(x, y);
    case BinOp::MaxNum: return fmax_num(x, y);
    DT_MATH_BINOP_CASES
      if constexpr (F) return math2<T>(op, x, y);
      else internal_error("Interp", "math function on integers");
    case BinOp::FloorDiv:
    case BinOp::Cdiv:
    case BinOp::Mod:
      if constexpr (F) {
        return std::fmod(x, y);
      } else if constexpr (std::is_same_v<T, uint8_t>) {
        internal_error("Interp", "i1 division");
      } else {
        bool zero = false;
        T r = int_div_elem<T>(op, x, y, zero);
        if (zero) div_zero(op, loc);
        return r;
      }
    case BinOp::And:
    case BinOp::Or:
    case BinOp::Xor:
    case BinOp::Shl:
    case BinOp::Shr:
      if constexpr (F) {
        internal_error("Interp", "bitwise op on floats");
      } else {
        switch (op) {
          case BinOp::And: return static_cast<T>(x & y);
          case BinOp::Or: return static_cast<T>(x | y);
          case BinOp::Xor: return static_cast<T>(x ^ y);
          // a count at or past the width (as unsigned) gives 0, or the sign for >>, as PTX clamps it
          case BinOp::Shl:
            if constexpr (std::is_same_v<T, uint8_t>) return x;
            else return static_cast<U<T>>(y) >= static_cast<U<T>>(W) ? T(0) : static_cast<T>(static_cast<U<T>>(x) << static_cast<U<T>>(y));
          case BinOp::Shr:
            if constexpr (std::is_same_v<T, uint8_t>) return x;
            else return static_cast<T>(x >> std::min(static_cast<U<T>>(y), static_cast<U<T>>(W - 1)));
          case BinOp::Add:
          case BinOp::Sub:
          case BinOp::Mul:
          case BinOp::Div:
          case BinOp::FloorDiv:
          case BinOp::Mod:
          case BinOp::Lt:
          case BinOp::Le:
          case BinOp::Gt:
          case BinOp::Ge:
          case BinOp::Eq:
          case BinOp::Ne:
          case BinOp::LAnd:
          case BinOp::LOr:
          case BinOp::Min:
          case BinOp::Max:
          case BinOp::MinNum:
          case BinOp::MaxNum:
          case BinOp::Cdiv: DT_MATH_BINOP_CASES break;
        }
        internal_error("Interp", "not a bitwise op");
      }
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::LAnd:
    case BinOp::LOr: break;
  }
  internal_error("Interp", "comparison evaluated as arithmetic");
}

// One element of a comparison or logical op (i1 result).
template <class T> inline uint8_t cmp_elem(BinOp op, T x, T y) {
  switch (op) {
    case BinOp::Lt: return x < y;
    case BinOp::Le: return x <= y;
    case BinOp::Gt: return x > y;
    case BinOp::Ge: return x >= y;
    case BinOp::Eq: return x == y;
    case BinOp::Ne: return x != y;
    case BinOp::LAnd: return x != 0 && y != 0;
    case BinOp::LOr: return x != 0 || y != 0;
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::FloorDiv:
    case BinOp::Mod:
    case BinOp::And:
    case BinOp::Or:
    case BinOp::Xor:
    case BinOp::Shl:
    case BinOp::Shr:
    case BinOp::Min:
    case BinOp::Max:
    case BinOp::MinNum:
    case BinOp::MaxNum:
    case BinOp::Cdiv: DT_MATH_BINOP_CASES break;
  }
  internal_error("Interp", "arithmetic evaluated as a comparison");
}

// One element of a unary op in storage type T (before f16/bf16 rounding).
template <class T> inline T un_elem(UnOp op, T v) {
  switch (op) {
    case UnOp::Neg:  // floats: -0.0 of +0.0, as Triton's fneg (0 - x would give +0.0)
      if constexpr (std::is_floating_point_v<T>) return -v;
      else return wsub<T>(0, v);
    case UnOp::Not:
      if constexpr (std::is_same_v<T, uint8_t>) return !v;
      else if constexpr (std::is_integral_v<T>) return static_cast<T>(~v);
      else internal_error("Interp", "'~' on floats");
    case UnOp::Abs:
      if constexpr (std::is_floating_point_v<T>) return std::fabs(v);
      else return v < 0 ? wsub<T>(0, v) : v;
    DT_MATH_UNOP_CASES
      if constexpr (std::is_floating_point_v<T>) return math1<T>(op, v);
      else internal_error("Interp", "math function on integers");
  }
  return v;
}

// Narrowing of a result of type `t` held in wider storage (identity otherwise): f16/bf16/fp8
// rounding of a float-stored value, i8/i16 wraparound of an int32-stored one.
template <class T> inline T round_elem(T v, Scalar t) {
  if constexpr (std::is_same_v<T, float>) {
    if (is_half(t)) return round_to(t, v);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    if (is_narrow_int(t)) return static_cast<int32_t>(wrap_to(t, v));
  }
  return v;
}

// ---- unboxed scalars ----
// One element in its storage type (see TileData); pointers: the int64 offset plus the buffer.
union Raw {
  uint8_t b;
  int32_t i32;
  int64_t i64;
  float f;
  double d;
};
template <class T> inline T rget(const Raw& r) {
  if constexpr (std::is_same_v<T, uint8_t>) return r.b;
  else if constexpr (std::is_same_v<T, int32_t>) return r.i32;
  else if constexpr (std::is_same_v<T, int64_t>) return r.i64;
  else if constexpr (std::is_same_v<T, float>) return r.f;
  else return r.d;
}
template <class T> inline Raw rmake(T v) {
  Raw r;
  r.i64 = 0;
  if constexpr (std::is_same_v<T, uint8_t>) r.b = v;
  else if constexpr (std::is_same_v<T, int32_t>) r.i32 = v;
  else if constexpr (std::is_same_v<T, int64_t>) r.i64 = v;
  else if constexpr (std::is_same_v<T, float>) r.f = v;
  else r.d = v;
  return r;
}
struct Sv {
  Raw r;
  int buffer = -1;
};

// Whether `e` and all its operands are scalars of kinds the unboxed form evaluates.
bool scalar_form(const Expr& e);
// Evaluates a scalar_form expression unboxed (no allocation unless a load needs the checked path).
Sv eval_sv(Ctx& c, const Expr& e);
// The element of a defined scalar Value / a new scalar Value holding `v` / writes `v` into `dst`
// in place when it already holds a scalar of type `t`.
Raw raw_of(const Value& v);
Value box(const Type& t, const Sv& v);
// scalar_value(): a literal built directly in type `t`.
Raw const_raw(Scalar t, const Expr& x);
// Cast semantics of one element (convert() on a one-element tile).
Raw convert_raw(Raw r, const Type& from, Scalar to);
// scalar_int() / scalar_truth() of the generic path, on an unboxed value of type `t`.
int64_t raw_int(Raw r, const Type& t);
bool raw_truth(Raw r, const Type& t);

// Scalar load/store with every sanitizer check (Memory.cpp): the in-bounds, clean case without
// boxing; anything the sanitizer would report goes through load_op/store_op unchanged.
Raw load_scalar(Ctx& c, const Expr& e, const Sv& ptr, const Sv* mask, const Raw* other);
void store_scalar(Ctx& c, const Type& ptr_type, const Sv& ptr, const Type& val_type, Raw val, const Sv* mask);

// ---- the compiled scalar form ----
// A scalar expression prepared once per launch: one node per operation with its types, conversions
// and constants resolved, evaluated by calling the node's function (typed, no variant dispatch).
struct SNode;
using SFn = Sv (*)(Ctx&, const SNode&);
struct SNode {
  SFn fn = nullptr;
  const SNode* a = nullptr;
  const SNode* b = nullptr;
  const SNode* x = nullptr;
  Raw k{};              // constants
  Type t;               // result type
  Type from;            // conversions: operand type
  BinOp bop = BinOp::Add;
  UnOp uop = UnOp::Neg;
  int slot = -1;        // variables
  size_t idx = 0;       // variables: storage index of t
  const Expr* e = nullptr;
};
inline Sv run_node(Ctx& c, const SNode* n) { return n->fn(c, *n); }

// A tile expression node prepared for the execution form (Tiles.cpp): its operands, or its compiled
// scalar form; `idx` names its two per-thread tiles (its value, and its value converted for its
// consumer) in Ctx::tcache.
struct Fused;
struct TNode {
  const Expr* e = nullptr;
  std::vector<const TNode*> kids;  // per operand (null: absent or a resolved constant)
  const SNode* s = nullptr;        // scalar_form expressions (not variables): evaluated unboxed
  const Fused* fused = nullptr;    // the root of a fused elementwise tree (Fuse.cpp)
  const Fused* direct = nullptr;   // a stored value's tree (one op or more), for stores straight into the buffer
  bool consec = false;             // consecutive_expr(): a range test needs only its two ends
  bool affine = false;             // `scalar pointer + integer tile` (Tiles.cpp): maybe a range
  bool outer = false;              // `X + Y` of a [R, 1] and a [1, C] operand, one a pointer (RowPtr)
  int rp = -1;                     // its RowPtr (Ctx::rps): an outer pointer of a load or store, or a Var of a RowPtr slot
  int64_t numel = 1;               // elements of its value
  bool loads = false;              // a load somewhere in it (evaluating it twice could report twice)
  int idx = 0;
};

// ---- fused elementwise trees (Fuse.cpp) ----
// A tree of elementwise ops inside one statement, evaluated chunk by chunk: each op is one typed
// loop over a chunk of elements held in per-thread scratch (in L1), and only the root writes a
// tile. Operands that are not inlined ops ("leaves": variables, loads, reductions, scalars...) are
// evaluated first, in the order the node-by-node evaluation meets them. Ops that can fault
// (integer division) are never inlined, so evaluating the tree chunk by chunk reports what the
// node-by-node evaluation reports.
struct FInstr;
using FFn = void (*)(const FInstr& I, const void* const* in, const int64_t* st, void* out, int64_t n);
struct FInstr {
  FFn fn = nullptr;
  int nin = 0;
  std::array<int, 3> in{0, 0, 0};  // >= 0: a leaf; < 0: temporary -1 - in
  int out = -1;                    // temporary index; -1: the result tile
  Scalar rt = Scalar::F32;         // result element type (f16/bf16 rounding)
  bool round = false;              // conversions: round to rt
  SourceLoc loc;
};
struct FLeaf {
  const TNode* n = nullptr;
  Scalar ct = Scalar::F32;  // operand(n, ct) when `conv`, else the node's value as it is
  bool conv = false;
};
struct Fused {
  std::vector<FLeaf> leaves;
  std::vector<FInstr> code;  // in evaluation order; the last one makes the result
  int ntemps = 0;
  int64_t numel = 0;         // elements of the tree's result
  size_t storage = 0;        // storage index of the tree's result
  bool reduce = false;       // the root is a sum/max/min of the tree over its only axis
  RedOp rop = RedOp::Sum;
};
// Builds the fused form of `n` when it is the root of an elementwise tree worth fusing (two or
// more ops, or a 1-d reduction of one or more); null otherwise.
// `one_op`: a single op is fused too (store values written straight into a buffer).
const Fused* fuse_tree(std::deque<Fused>& store, const TNode& n, bool one_op = false);
// Runs `f` with its leaves' values `lv` (in f.leaves order) into `out` (type `rt`). `raw` (may be
// null): per leaf, when not null, the leaf's elements in memory instead of *lv[i] (a load left in
// its buffer, Ctx::views).
void run_fused(const Fused& f, const Value* const* lv, Value& out, const Type& rt, const void* const* raw = nullptr);
// Runs `f` (not a reduction) for its first `len` elements into `dst` (its result's storage type).
void run_fused_to(const Fused& f, const Value* const* lv, void* dst, int64_t len, const void* const* raw = nullptr);
// Per slot: whether every assignment of the slot is `c + arange`-like (arange, +/- a scalar
// integer, i32/i64 casts, copies of such slots): its tile is then a wraparound of c + [0, n), so
// it is consecutive exactly when its last element is its first plus n - 1.
std::vector<uint8_t> consecutive_slots(const Kernel& k);
bool consecutive_expr(const Expr& e, const std::vector<uint8_t>& slots);

// The execution form of one kernel, prepared once per launch. Per statement id: the compiled root
// of each operand (args[0..2]) in the scalar form (`roots`), else in the tile form (`troots`).
struct ScalarProgram {
  std::deque<SNode> nodes;
  std::deque<TNode> tnodes;
  std::deque<Fused> fused;
  std::vector<uint8_t> consec;  // consecutive_slots() of the kernel
  std::vector<std::array<const SNode*, 3>> roots;
  std::vector<std::array<const TNode*, 3>> troots;
  // Per slot: its only assignment is a tile load that may be left in the buffer (Ctx::views): the
  // slot is read only as leaves of fused trees in the statements that follow it in its block,
  // before any other store, and is dead after the last of them (view_slots()).
  std::vector<uint8_t> view_slot;
  // Per slot: its RowPtr (Ctx::rps) when the slot's pointer tile is held as rows plus columns, else
  // -1 (row_slots()): its first mention is an outer assignment in the kernel's top-level block, its
  // other assignments are outer ones or steps, and it is read only as the pointer of a load or a
  // store and by its steps. nrp: RowPtrs per thread.
  std::vector<int> slot_rp;
  int nrp = 0;
  explicit ScalarProgram(const Kernel& k);
  const SNode* compile_scalar(const Expr& e);
  const TNode* tile(const Expr& e);
  void view_slots(const Kernel& k);
  void row_slots(const Kernel& k);
};
const Value& eval_tnode(Ctx& c, const TNode& n);
// Evaluates `n` and assigns it to slot `slot` (into the slot's storage when it has the type).
void assign_tnode(Ctx& c, int slot, const TNode& n);
// Executes an Atomic statement whose pointer is an outer pointer (its RowPtr); returns the old values.
Value atomic_tnode(Ctx& c, const Stmt& s, const std::array<const TNode*, 3>& t);
// Executes a Store statement whose operands are in the tile form.
void store_tnode(Ctx& c, const Stmt& s, const std::array<const TNode*, 3>& t);
// Writes a scalar of type `t` into a frame slot (in place when it already holds one).
inline void write_value(Value& dst, const Type& t, const Sv& v) {
  size_t k = storage_of(t.elem, t.ptr);
  if (dst.data.index() == k && dst.type.elem == t.elem && dst.type.ptr == t.ptr && dst.type.shape.empty()) {
    with_storage(k, [&](auto tag) {
      using T = decltype(tag);
      std::get_if<Arr<T>>(&dst.data)->data()[0] = rget<T>(v.r);
      return 0;
    });
    dst.buffer = v.buffer;
  } else {
    dst = box(t, v);
  }
}

// Assigns a scalar to slot `slot`: its unboxed register; its Value (what the debugger, prints and
// tile operands read) when it is next read, or at once under the debugger.
inline void write_slot(Ctx& c, int slot, const Type& t, const Sv& v) {
  size_t s = static_cast<size_t>(slot);
  c.regs[s] = v;
  c.rtype[s] = &t;
  if (c.hooks) {
    write_value(c.f->slots[s], t, v);
    c.rvalid[s] = 1;
  } else {
    c.rvalid[s] = 2;
  }
}

// Lazy tile slots (Ctx::rvalid 3 and 4): the description of slot `slot`'s tile, or null.
inline const int64_t* lazy_of(const Ctx& c, int slot) {
  size_t s = static_cast<size_t>(slot);
  return c.rvalid && c.rvalid[s] >= 3 ? &c.regs[s].r.i64 : nullptr;
}
// Holds slot `slot` (of type t: a 1-d integer or i1 tile) as a lazy tile described by v.
inline void write_lazy(Ctx& c, int slot, const Type& t, int64_t v) {
  size_t s = static_cast<size_t>(slot);
  c.regs[s].r.i64 = v;
  c.regs[s].buffer = -1;
  c.rtype[s] = &t;
  c.rvalid[s] = 3;
}
// The tile a lazy description stands for: wrap(v + o) for integers, v leading ones for i1.
void lazy_tile(Value& out, const Type& t, int64_t v);

// ---- typed elementwise loops (fused chunks, whole tiles, tile rows): o[i] = f(a[i], ...) for
// i < n; stride 0 = a one-element operand broadcast over the n elements. The output must not
// overlap an operand. ----

template <class A, class R, class F> inline void zip1(const void* a, int64_t sa, void* o, int64_t n, F f) {
  const A* __restrict pa = static_cast<const A*>(a);
  R* __restrict po = static_cast<R*>(o);
  if (sa) {
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i]);
  } else {
    R r = f(pa[0]);
    for (int64_t i = 0; i < n; ++i) po[i] = r;
  }
}

template <class A, class R, class F> inline void zip2(const void* a, int64_t sa, const void* b, int64_t sb, void* o, int64_t n, F f) {
  const A* __restrict pa = static_cast<const A*>(a);
  const A* __restrict pb = static_cast<const A*>(b);
  R* __restrict po = static_cast<R*>(o);
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
  } else if (sa) {
    A y = pb[0];
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], y);
  } else if (sb) {
    A x = pa[0];
    for (int64_t i = 0; i < n; ++i) po[i] = f(x, pb[i]);
  } else {
    R r = f(pa[0], pb[0]);
    for (int64_t i = 0; i < n; ++i) po[i] = r;
  }
}


}  // namespace dtsim::exec
