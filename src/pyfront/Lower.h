// The Triton frontend's lowering (partial evaluator): internal interface shared by Lower.cpp
// (modules, statements, control flow, calls of @triton.jit functions) and Builtins.cpp (the tl.*
// functions, tensor methods and the guide's debugging helpers).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Unsigned.h"
#include "pyfront/PyAst.h"
#include "pyfront/Triton.h"
#include "pyfront/Value.h"

namespace dtsim::py {

// One parsed .py file: its functions, module-level constants and imports.
struct ModuleInfo {
  PyModule ast;
  std::string dir;
  std::string name;        // the file's path, for messages
  bool package = false;    // an __init__.py: its folder's submodules are its attributes
  std::vector<std::string> star;  // modules imported with `from M import *`, searched for names it lacks
  std::map<std::string, const Node*> funcs;    // every def (jit or host)
  std::set<std::string> jit;                   // the @triton.jit ones
  std::map<std::string, const Node*> consts;   // module-level `NAME = ...` / `NAME: T = ...`
  std::map<std::string, Val> imports;          // import aliases
  mutable std::map<std::string, Val> cache;    // evaluated constants (of consts)
  mutable std::set<std::string> evaluating;
  mutable std::set<std::string> plain;          // constants that are plain Python values (not tl.constexpr(...))
};

// Arguments of one call: positional and keyword values, with their locations.
struct CallArgs {
  std::vector<Val> pos;
  std::vector<SourceLoc> pos_loc;
  std::vector<std::pair<std::string, Val>> kw;
  std::vector<SourceLoc> kw_loc;
  SourceLoc loc;        // the callee
  std::string fname;    // for messages: "tl.load"
  std::vector<const Node*> pos_nodes;  // the argument expressions (f-strings of print)

  // The argument at position `i` or keyword `name` (nullptr when absent). `used` marks it taken.
  const Val* get(size_t i, const std::string& name);
  SourceLoc loc_of(size_t i, const std::string& name) const;
  // UserError for arguments not taken by get() (too many positional ones, unknown keywords).
  void done();
  std::vector<bool> pos_used;
  std::vector<bool> kw_used;
};

class Lowerer {
 public:
  Lowerer(const TritonLaunch& launch) : launch_(launch) {}
  TritonProgram run(const std::string& path);

  // ---- used by Builtins.cpp ----
  Val call_builtin(const std::string& name, CallArgs& a);
  Val attribute(const Val& v, const std::string& attr, SourceLoc loc);

  // IR helpers: an IR expression for a value (numbers become literals), a tensor value of a node.
  ExprP ir(const Val& v, SourceLoc loc, const char* what = "a tensor or a number");
  Val tensor(ExprP e, std::set<std::string> bufs = {});
  Val binop(const std::string& op, const Val& a, const Val& b, SourceLoc loc);
  void emit(StmtP s);
  Val eval_captured(const Node& e, std::vector<StmtP>& out);
  void runtime_while(const Node& s);
  std::string fresh(const std::string& base);
  Val materialize(const Val& v, const std::string& name, SourceLoc loc);
  Val hold_items(const Val& v, const std::string& name, SourceLoc loc);
  std::set<std::string> held_vars_;  // IR variables holding tuple items (hold_items)
  // A combine function of tl.reduce / tl.associative_scan as the IR's: an expression of the
  // CombineArgs 0 and 1 (elements of type `elem`). `simple` is set where it is one +, *, maximum
  // or minimum of its two arguments (cumsum ... cummin). A located error when the function emits
  // statements (it must be one expression of its arguments).
  ExprP combine_fn(const Val& fn, Scalar elem, SourceLoc loc, std::optional<ScanOp>* simple = nullptr);
  // A combine function of N operands of types elems: its N results over CombineArg 0..2N-1 (one
  // operand: the function returns one tensor, else a tuple of N).
  std::vector<ExprP> combine_fn_n(const Val& fn, const std::vector<Scalar>& elems, SourceLoc loc);
  // tl.reduce / tl.associative_scan of a tuple: a tuple of the N results (Expr::fns, Expr::part).
  Val combine_tuple(const Val& xs, int axis, bool scan, bool reverse, const Val& fn, SourceLoc xloc, SourceLoc fnloc, SourceLoc loc);
  bool in_runtime_block() const;

  // ---- block pointers and tensor descriptors (BlockPointers.cpp) ----
  // tl.make_block_ptr, tl.advance, tl.make_tensor_descriptor, and tl.load / tl.store of a block
  // value: `out` and true where `name` is one of them or its first argument is a block value.
  bool call_block(const std::string& name, CallArgs& a, Val& out);
  Val block_attribute(const Val& v, const std::string& attr, SourceLoc loc);

  // ---- unsigned integers (Unsigned.cpp) ----
  // The IR variables that hold unsigned values (Val::uns); tensor() marks a reference to one.
  std::set<std::string> uns_vars_;
  // Binds a value to a fresh IR variable of the current block (ir/Unsigned.h's BindFn).
  BindFn binder(SourceLoc loc);
  // Types a tree built by ir/Unsigned.h (its variables from their declarations).
  ExprP typed_tree(ExprP e);
  // Whether a binary operator involves an unsigned operand (not pointer arithmetic).
  static bool unsigned_operands(const Val& a, const Val& b);
  // `a OP b` with Triton's promotion for unsigned integers and the unsigned meaning of // % >> and
  // the comparisons; also "maximum" / "minimum".
  Val unsigned_binop(const std::string& op, const Val& a, const Val& b, SourceLoc loc);
  // a and b converted to their promoted integer type (tl.where's values).
  std::pair<Val, Val> unsigned_promote(const Val& a, const Val& b, SourceLoc loc);
  ExprP promoted_operand(const Val& v, Scalar from, bool from_uns, Scalar to, bool to_uns, SourceLoc loc);
  // x.to(dtype) from or to an unsigned type (zero extension, uitofp, fptoui); `to_uns`: dtype is unsigned.
  Val unsigned_cast(const Val& x, Scalar to, bool to_uns, SourceLoc loc);
  // A builtin call with unsigned operands: the calls that keep their meaning (marking the results
  // unsigned where Triton's are), those with an unsigned form, and a located error for the rest.
  Val call_builtin_unsigned(const std::string& name, CallArgs& a);
  // tl.NAME of Triton's standard library (Stdlib.cpp): `out` and true where `name` is one of its
  // functions (the prelude's, inlined, or one built directly), else false.
  bool call_stdlib(const std::string& name, CallArgs& a, Val& out);
  // The prelude of those functions as a module (read once per lowering).
  const ModuleInfo& prelude();
  Val call_builtin_signless(const std::string& name, CallArgs& a);

  // The debugger's frame (DebugExpr.cpp): expressions read the names `vars`, then module `m`'s
  // globals; statements the lowering emits go to `out`. `debugger` words the errors for it.
  void enter_debug_frame(const ModuleInfo& m, std::map<std::string, Val> vars, std::vector<StmtP>* out);
  bool debugger = false;

  int file_of_entry() const { return entry_file_; }
  std::vector<std::string> break_at;
  bool precise_div = false;  // TritonProgram::precise_div
  std::set<std::string> stored, loaded;

 private:
  const TritonLaunch& launch_;
  std::map<std::string, std::unique_ptr<ModuleInfo>> modules_;
  int entry_file_ = -1;

  struct Frame {
    const ModuleInfo* mod = nullptr;
    std::map<std::string, Val> vars;
    std::map<std::string, size_t> bound_at;  // compile-time names: blocks_.size() when last bound
    bool kernel = false;
    Val ret;
    bool returned = false;
    size_t depth = 0;  // blocks_.size() at entry
    std::string name;
    // A combine function's own frame (combine_fn_n): a `return` inside a runtime if is a Return
    // statement holding the returned values, which combine_fn_n turns into a per-lane selection;
    // ret_types are the types of the first return's values (each return must give the same).
    bool combine = false;
    std::optional<std::vector<Type>> ret_types;
  };
  struct Block {
    std::vector<StmtP>* out;
    std::map<std::string, Type> declared;
    bool runtime;
  };
  void end_loop(const std::map<std::string, Val>& before, const StmtP& loop);
  std::vector<Frame> frames_;
  std::vector<Block> blocks_;
  int call_depth_ = 0;
  bool next_call_combines_ = false;  // the next call_function is a combine function's (its Frame::combine)
  // Per operand of the next combine_fn_n: whether it holds unsigned integers (the function's
  // arguments are then unsigned, as Triton types them; call_builtin_unsigned sets it).
  std::vector<bool> combine_unsigned_;
  std::vector<ExprP> combine_return(const Val& v, SourceLoc loc, bool strict);
  int64_t calls_ = 0;
  std::map<std::string, Type> captured_declared_;  // the names eval_captured's statements declared
  bool range_warp_specialize_ = false;  // some tl.range(warp_specialize=True): the kernel's schedule option warp_specialize
  int64_t range_stages_ = 0;  // the largest tl.range(num_stages=N): the kernel's num_stages hint  // helper calls inlined so far (a budget against exponential inlining)

  friend struct LowererAccess;

 public:
  const ModuleInfo& load_module(const std::string& path);
  const ModuleInfo* sibling(const ModuleInfo& from, const std::string& name);
  // `in_body`: read by name from a @triton.jit function's body, where (as in Triton) a module-level
  // value must be a tl.constexpr(...), a dtype, a module or a @triton.jit function.
  Val global(const ModuleInfo& m, const std::string& name, SourceLoc loc, bool in_body = false);
  Val lookup(const std::string& name, SourceLoc loc);
  Val host_value(const ModuleInfo& m, const std::string& name, const Node& value);
  // Whether `name` is one of Python's builtins a kernel may use (range, min, float, ...).
  static bool python_builtin(const std::string& name);
  // Whether global() finds `name` in module `m` (a function, constant, import or builtin).
  static bool defines(const ModuleInfo& m, const std::string& name);

  Val eval(const Node& n);
  Val eval_call(const Node& n);
  Val call_function(const Node& fn, const ModuleInfo& mod, CallArgs& a);
  bool truthy(const Val& v, SourceLoc loc);

  void exec_block(const std::vector<NodeP>& body);
  void exec(const Node& s);
  void assign(const Node& target, const Val& v, SourceLoc loc, std::optional<BinOp> aug = std::nullopt, ExprP aug_rhs = nullptr);
  // `irbase`: the base of a new IR variable's name where it is not `name` (a block value's parts)
  void assign_name(const std::string& name, const Val& v, SourceLoc loc, std::optional<BinOp> aug, ExprP aug_rhs,
                   const std::string& irbase = "");
  // A block value's parts as names NAME.base, NAME.off0, ... (IR variables where a runtime block rebinds it).
  void assign_block(const std::string& name, const Val& v, SourceLoc loc);
  void materialize_block(const std::string& name, SourceLoc loc);
  void runtime_if(const Node& s, const Val& cond);
  void lower_for(const Node& s);
  void materialize_assigned(const std::vector<NodeP>& body, SourceLoc loc);
  bool visible(const std::string& irname) const;
  const Type* visible_type(const std::string& irname) const;

  Kernel entry_kernel(const ModuleInfo& m, const Node& fn, TritonProgram& out);
};

// Every tl.NAME the lowering gives a meaning (functions and dtypes), sorted (Builtins.cpp).
std::vector<std::string> tl_names();
// The tl.NAME functions of Stdlib.cpp (its prelude's public functions and those it builds directly).
std::vector<std::string> stdlib_names();
// Whether `path` is the prelude's pseudo path, and the prelude's text (Modules.cpp reads it there).
bool is_prelude_path(const std::string& path);
const char* prelude_text();
// "tl.atomic_add is not supported yet" and friends.
[[noreturn]] void unsupported(SourceLoc loc, const std::string& what);
// The location of the leftmost token of an expression (calls and attributes point at their start).
SourceLoc start_loc(const Node& n);
// Whether a parameter annotation is `tl.constexpr` (or `constexpr`).
bool is_constexpr_annotation(const Node* a);
// Python literal text of --arg values: int, float, True/False, 'str' / str, tl.float16.
Val parse_arg_value(const std::string& text, const std::string& name);
// arange(0, n) laid along `axis` of a rank-`rank` tile (size 1 on the other axes), typed (Builtins.cpp).
ExprP arange_along(int64_t n, int axis, int rank, SourceLoc loc);
// A fully typed node: the lowering keeps each node's inferred type in `type` (the verifier
// recomputes it; the lowering needs shapes for zeros_like, reshape, keep_dims ...).
ExprP typed(ExprP e);

}  // namespace dtsim::py
