// Debugger expressions: `--break-if` / `--print-if` conditions (expression and positional forms),
// watch/display/print expressions, and their evaluation in a running program instance.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interp/Interp.h"
#include "ir/IR.h"
#include "ir/Verify.h"

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

// Splits "a, load(x + o, m), b" at top-level commas; pieces are trimmed, empty pieces dropped.
std::vector<std::string> split_top_level(const std::string& text);

// Every variable name an expression reads (pid names included).
std::set<std::string> expr_names(const ExprP& e);

// Throws UserError(loc of the first offending name) when `e` mentions a name not in `names`.
void check_names(const ExprP& e, const std::vector<std::string>& names);

// An expression evaluated in whatever frame is current. Verification depends on which slots the
// names resolve to (block scoping), so it is verified lazily per (kernel, slots) and cached.
class BoundExpr {
 public:
  BoundExpr() = default;
  BoundExpr(ExprP parsed, std::string text) : parsed_(std::move(parsed)), text_(std::move(text)) {}

  const std::string& text() const { return text_; }
  const ExprP& parsed() const { return parsed_; }
  bool valid() const { return parsed_ != nullptr; }

  // The value in frame `f`; nullopt with `why` set when a name is not defined yet, the expression
  // does not type-check for this kernel, or evaluating it faults.
  std::optional<Value> eval(const Frame& f, std::string* why = nullptr) const;
  // As a condition: true when the value is a nonzero scalar or a tile with any nonzero lane.
  // Anything that cannot be evaluated (undefined variable, ...) is false.
  bool test(const Frame& f) const;
  // Type-checks the expression against every kernel in which all its names exist (each name
  // resolved to its first slot), so type errors surface before the run. Throws UserError.
  void check_types(const Module& m, const Bindings& b) const;

 private:
  ExprP instantiate(const Frame& f, std::string* why) const;

  ExprP parsed_;
  std::string text_;
  mutable std::map<std::pair<const Kernel*, std::vector<int>>, ExprP> cache_;  // null = does not verify
  mutable std::map<std::pair<const Kernel*, std::vector<int>>, std::string> errors_;
};

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
