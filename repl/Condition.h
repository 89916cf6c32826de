// Debugger expressions: `--break-if` / `--print-if` conditions (expression and positional forms),
// watch/display/print expressions, and their evaluation in a running program instance.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interp/Interp.h"
#include "ir/IR.h"
#include "ir/Verify.h"
#include "pyfront/DebugExpr.h"

namespace dtsim {

// `s` without leading and trailing blanks (spaces, tabs, CR, LF).
std::string trim(const std::string& s);

// Names a debugger expression may use besides the kernel's variables: pid0 pid1 pid2 (program ids)
// and pid (program id 0, unless the instance has a defined variable named `pid`).
bool is_pid_name(const std::string& name);

// Every name a debugger expression may mention in module `m`: pid names, then every kernel's
// variables and parameters, sorted, without duplicates.
std::vector<std::string> known_names(const Module& m);

// Parses a condition registered under `pseudo_file` ("<break-if>", "<print-if>", ...).
//   * positional form (text starts with = == != < <= > >= or a comma, or is blank):
//     '=0,>1' means pid0 == 0 && pid1 > 1; ',>1' means pid1 > 1; '' is always true.
//   * expression form: `.tile` expression syntax with && || ! and the pid names.
// Every name must be one of `names` (else UserError "'x' is not defined (names: ...)" with a caret
// under it). Throws UserError for syntax errors, with the caret in the condition text.
ExprP parse_condition(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names);

// Parses one expression (print/display/watch, --print-if values); same name check.
ExprP parse_debug_expr(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names);

// Splits "a, load(x + o, m), b" at top-level commas (not inside brackets or '...'/"..." strings);
// pieces are trimmed, empty pieces dropped.
std::vector<std::string> split_top_level(const std::string& text);

// Every variable name an expression reads (pid names included).
std::set<std::string> expr_names(const ExprP& e);

// Throws UserError(loc of the first offending name) when `e` mentions a name not in `names`.
void check_names(const ExprP& e, const std::vector<std::string>& names);

// An expression evaluated in whatever frame is current: `.tile` expression syntax (kernels read from
// .tile and .dt), or a Triton expression (kernels read from .py: pyfront/DebugExpr.h), lowered by
// the kernel lowering against the frame's variables. Verification (and, for Triton expressions,
// lowering) depends on which slots the names resolve to (block scoping), so it is done lazily per
// (kernel, slots) and cached.
class BoundExpr {
 public:
  BoundExpr() = default;
  BoundExpr(ExprP parsed, std::string text) : parsed_(std::move(parsed)), text_(std::move(text)) {}
  // A Triton expression of the kernel read from source file `py_file` (the module's globals and
  // imports are in scope; `known`: the names listed when one is not defined).
  BoundExpr(std::shared_ptr<const PyDebugExpr> py, std::string text, int py_file, std::vector<std::string> known)
      : py_(std::move(py)), text_(std::move(text)), py_file_(py_file), known_(std::move(known)) {}

  const std::string& text() const { return text_; }
  bool valid() const { return parsed_ != nullptr || py_ != nullptr; }

  // The value in frame `f`; nullopt with `why` set when a name is not defined yet, the expression
  // does not type-check for this kernel, evaluating it faults, or it is a compile-time Python value.
  // `located`: the error, when it has a place in the expression (an index out of bounds).
  std::optional<Value> eval(const Frame& f, std::string* why = nullptr, std::optional<UserError>* located = nullptr) const;
  // A Triton expression whose value is a compile-time Python value (`x.shape`, `x.dtype`,
  // `float("inf")`, `(1, 2)`): as Python prints it. nullopt otherwise.
  std::optional<std::string> constant(const Frame& f) const;
  // Rethrows the located UserError (caret in the expression) of an expression that does not lower
  // or verify in frame `f`; nothing when it does or when a name is not yet assigned.
  void check(const Frame& f) const;
  // As a condition: true when the value is a nonzero scalar or a tile with any nonzero lane.
  // Anything that cannot be evaluated (undefined variable, ...) is false.
  bool test(const Frame& f) const;
  // Type-checks the expression against every kernel in which all its names exist (each name
  // resolved to its first slot), so type errors surface before the run. Throws UserError.
  void check_types(const Module& m, const Bindings& b) const;

 private:
  struct Index {  // a DebugIndex, verified
    int kind = 0;
    ExprP index, lo, hi, step;
    SourceLoc loc;
  };
  struct Instance {
    ExprP e;                                  // null: a compile-time Python value
    std::vector<std::vector<Index>> subscripts;  // applied to the value of e
    std::optional<std::string> constant;
  };
  using Key = std::pair<const Kernel*, std::vector<int>>;
  std::vector<std::string> names_read() const;  // the names the expression reads, in either language
  std::shared_ptr<const Instance> instantiate(const Frame& f, std::string* why, const UserError** error = nullptr) const;
  std::shared_ptr<const Instance> lower_python(const Kernel& k, const Bindings& b,
                                               const std::map<std::string, int>& slots) const;

  ExprP parsed_;  // .tile syntax
  std::shared_ptr<const PyDebugExpr> py_;  // Triton syntax
  std::string text_;
  int py_file_ = -1;
  std::vector<std::string> known_;
  mutable std::map<Key, std::shared_ptr<const Instance>> cache_;  // null = does not verify
  mutable std::map<Key, UserError> errors_;
};

// The source file (its Sources id) of a module read from Python (.py, through dtsim's reader or
// Triton's TTIR): its debugger expressions are Triton expressions. -1 for .tile and .dt modules.
int python_source(const Module& m);

// A debugger expression (print/display/watch, --print-if values) in the module's language:
// parse_debug_expr for .tile/.dt, a Triton expression of `py_file` when it is >= 0. UserError
// with a caret for syntax errors and unknown names (names neither in `names` nor globals of the file).
BoundExpr make_debug_expr(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names,
                          int py_file);
// A condition likewise (the positional form '=0,>1' in both languages).
BoundExpr make_condition(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names,
                         int py_file);

// numpy indexing of a value (the debugger's subscripts): per item an index (negative counts from
// the end), a slice [lo:hi:step] (bounds clipped, as numpy) or a new axis; axes after the items are
// kept whole. UserError(loc) for an index out of bounds, a zero step, too many indices.
struct IndexItem {
  enum Kind { Index, Slice, NewAxis } kind = Index;
  int64_t index = 0;
  std::optional<int64_t> lo, hi;
  int64_t step = 1;
  SourceLoc loc;
};
Value index_value(const Value& v, const std::vector<IndexItem>& items);

// True when any element of `v` is nonzero.
bool value_truthy(const Value& v);
// True when two values have the same type and the same elements (NaNs compare equal).
bool same_value(const Value& a, const Value& b);

// `FILE:LINE [if COND]` (or `LINE [if COND]` when `default_file` is given) as given to
// --break-at / `break`.
struct LineSpec {
  std::string file;  // as written ("" = default file)
  int line = 0;
  std::string cond;  // "" = none
};
LineSpec parse_line_spec(const std::string& text, const std::string& what);

// The statements of `m` on `line` of the source file matching `file` (the path or its final
// components; "" = any file of the module): `.tile` lines and, for lowered `.dt` statements, either
// the algorithm line (loc) or the schedule line (loc2). When no statement is on that line, the next
// line that has one is used and `*resolved_line` says which. Throws UserError when none follows.
std::vector<const Stmt*> stmts_at_line(const Module& m, const std::string& file, int line, int* resolved_line);

// Whether the source file `file_id` is named by `spec` (exact, or a suffix at a '/' boundary).
bool file_matches(int file_id, const std::string& spec);

}  // namespace dtsim
