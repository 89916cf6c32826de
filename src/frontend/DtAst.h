// The checked AST of a `.dt` file (frontend-private): declarations, algorithm definitions and the
// schedule of every Func, with source locations on every node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/DT.h"
#include "ir/Diag.h"
#include "ir/IR.h"

namespace dtsim {

// ---- expressions ----
// kind     | fields
//   Num    | num, is_int                       numeric literal
//   Num    | num = inf                         the literal `inf`
//   Name   | name                              an SIn scalar, a dim as a value (is_dim: its index),
//          |                                   or a dim name where the grammar wants one
//   Access | name, args: index Names           A[x, k]
//   Call   | name, args                        exp(e), rsum(e, r), rdot(a, b, k), reshape(e, x, 1), len(v), ...
//   Binary | op, args: a, b                    + - * / < <= > >= == !=
//   Neg    | args: x                           unary minus
enum class DtExprKind { Num, Name, Access, Call, Binary, Neg };

struct DtExpr;
using DtExprP = std::shared_ptr<DtExpr>;

struct DtExpr {
  DtExprKind kind = DtExprKind::Num;
  SourceLoc loc;
  double num = 0;
  bool is_int = false;
  std::string name;
  std::string op;
  std::vector<DtExprP> args;
  // ---- filled by sema ----
  Scalar type = Scalar::F32;  // element type (literals: f32/i32, weak)
  bool weak = false;          // a literal (takes the other operand's type)
  bool is_dim = false;        // Name: a dim used as a value (the index of the point, i32)
};

enum class DtSymKind { Func, In, SIn, Var, RVar };
const char* dt_sym_kind_name(DtSymKind k);

// One item of `map(...)`: a block dim `v`, a split `v:w/f`, or the inner part `w` of a split.
struct DtMapItem {
  std::string dim;    // the blocked dim (for an inner part: the dim it splits)
  std::string inner;  // split: the inner name w; inner part: w
  int64_t factor = 0; // split factor (0 = not a split)
  bool is_inner = false;
  SourceLoc loc;
};

// The schedule of one Func, resolved from its schedule calls.
struct DtSchedule {
  std::vector<std::pair<std::string, int64_t>> block;  // in call order
  SourceLoc block_loc;
  std::map<std::string, std::pair<int64_t, SourceLoc>> tensorize;  // dim -> (extent, 0 = whole; loc)
  std::vector<DtMapItem> map;
  SourceLoc map_loc;
  std::string fuse_into, fuse_level;  // fuse_at(consumer, level)
  SourceLoc fuse_loc;
  int num_warps = 4, num_stages = 3;
  // Schedule options, copied to the kernel (ir/IR.h Kernel): warp_specialize(), persistent() /
  // persistent(n), cluster(2).
  bool warp_specialize = false, persistent = false;
  int64_t persistent_ctas = 0, cluster = 1;
  bool compiled = false, to_kernel = false;
  SourceLoc compile_loc;
  int compile_order = -1;
};

struct DtSymbol {
  DtSymKind kind = DtSymKind::Var;
  std::string name;
  SourceLoc loc;
  Scalar dtype = Scalar::F32;  // Func / In / SIn
  double value = 1.0;          // SIn default
  int64_t size = 64;           // Var / RVar default size
  bool has_default = false;
  // Func: the definition; In: the dims of its first access.
  std::vector<std::string> dims;
  DtExprP def;
  SourceLoc def_loc;
  bool defined = false;
  SourceLoc dims_loc;  // In: where the dims were fixed
  DtSchedule sched;
};

// A schedule call as written (kept for printing the program back).
struct DtSchedArg {
  std::string name;      // dim (or consumer Func for fuse_at's first argument)
  bool has_value = false;
  int64_t value = 0;
  std::string inner;     // map split `v:w/f`
  int64_t factor = 0;
  SourceLoc loc;
};
struct DtSchedCall {
  std::string func, prim;
  std::vector<DtSchedArg> args;
  SourceLoc loc;
};

// Two dims that must have the same size at run time: `access` (e.g. A[k, x]) reads dim `pos` of
// tensor `tensor`, which is `own` (the tensor's dim there: first access or definition), with `other`.
struct DtSizeTie {
  std::string own, other, tensor;
  size_t pos = 0;
  std::string access;  // the access as written
  SourceLoc loc;
};

struct DtProgram {
  int file_id = -1;
  std::vector<DtSymbol> syms;             // declaration order
  std::map<std::string, int> sym_index;   // name -> index into syms
  std::vector<std::string> def_order;     // Funcs in definition order
  std::vector<DtSchedCall> calls;         // schedule calls in file order
  std::vector<std::string> kernels;       // compiled Funcs in compile order
  std::vector<DtSizeTie> ties;            // permuted / repeated accesses (sema)

  const DtSymbol* find(const std::string& n) const {
    auto it = sym_index.find(n);
    return it == sym_index.end() ? nullptr : &syms[static_cast<size_t>(it->second)];
  }
  DtSymbol* find(const std::string& n) {
    auto it = sym_index.find(n);
    return it == sym_index.end() ? nullptr : &syms[static_cast<size_t>(it->second)];
  }
  const DtSymbol& sym(const std::string& n) const;
};

// ---- shared helpers between the frontend passes ----
// Sema: resolves schedule calls into DtSymbol::sched, checks names, ranks, reductions, cycles and
// schedule legality that does not need lowering; infers element types.
void dt_check(DtProgram& p);  // dt_check_semantics + dt_apply_schedule + a lowering at the default sizes
// Re-resolves the schedules from p.calls (used after with_random_schedule rewrites the calls).
void dt_apply_schedule(DtProgram& p);
// The Funcs an expression reads (directly).
void dt_collect_reads(const DtExprP& e, std::set<std::string>& out);
// Printing an expression / a schedule call back as .dt text.
std::string dt_expr_str(const DtExprP& e);
std::string dt_call_str(const DtSchedCall& c);
// Element type of a binary combination (IR promotion rules, literals weak).
Scalar dt_promote(const DtExpr& a, const DtExpr& b);
// True for the built-in reductions rsum/rmax/rmin/rdot.
bool dt_is_reduction(const std::string& fn);
// The IR op a `.dt` spelling names (IR.h's op tables, column dt): a call such as exp(x) or
// maximum(a, b), an infix operator such as `+`, a reduction such as rsum(...); nullopt for none.
std::optional<UnOp> dt_call_unop(const std::string& fn);
std::optional<BinOp> dt_call_binop(const std::string& fn);
std::optional<BinOp> dt_infix_binop(const std::string& op);
std::optional<RedOp> dt_redop(const std::string& fn);
int64_t dt_next_pow2(int64_t v);
// The compiled Func selected by a kernel name: the Func's name or `<name>_kernel`; "" when none.
std::string dt_kernel_func(const DtProgram& p, const std::string& kernel);
// Dims that share one size (tied by permuted or repeated accesses): dim -> the first-declared dim
// of its class.
std::map<std::string, std::string> dt_size_classes(const DtProgram& p);
// The dims an expression reduces over (rsum/rmax/rmin/rdot), outermost first.
void dt_reduced_dims(const DtExprP& e, std::vector<std::string>& out);
// Every dim an expression uses: access indices, reduction dims, len() arguments.
void dt_dims_used(const DtExprP& e, std::set<std::string>& out);
// The whole program as `.dt` text (declarations with sizes, definitions, schedule calls).
std::string dt_program_text(const DtProgram& p);

}  // namespace dtsim
