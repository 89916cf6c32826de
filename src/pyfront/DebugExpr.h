// Debugger expressions in Triton syntax (docs/debugger.md "Triton expressions"): when the debugged
// kernel was read from a .py file, `print`, `display`, `watch` and conditions are Python
// expressions, parsed by the Python reader and lowered by the same lowering as the kernel's own
// expressions (tl.* functions, tensor methods and attributes, operators, broadcasting, promotion),
// with the program instance's live variables in scope as typed IR variables. The result is an IR
// expression for the interpreter's evaluator, or a compile-time Python value (`x.shape`).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace dtsim {

namespace py {
struct Node;
}

// What a name of a debugger expression stands for in the current program instance.
struct DebugBinding {
  enum Kind { Runtime, Constexpr, ProgramId } kind = Runtime;
  Type type;          // Runtime: the variable's IR type (the expression reads it as an IR Var)
  int64_t value = 0;  // Constexpr: the parameter's value (a Python int, as in the kernel)
  int axis = 0;       // ProgramId: the axis (pid0, pid1, pid2)
};
// nullopt: not a variable of the instance (then the kernel file's globals, tl, Python builtins).
using DebugScope = std::function<std::optional<DebugBinding>(const std::string& name)>;

// One item of a subscript applied to the evaluated value (the debugger's indexing extension: Triton
// cannot index tiles). Index, lo, hi, step: scalar integer IR expressions (null = absent).
struct DebugIndex {
  enum Kind { Index, Slice, NewAxis } kind = Index;
  ExprP index, lo, hi, step;
  SourceLoc loc;
};

struct LoweredDebugExpr {
  ExprP ir;              // the value (runtime values and Python numbers); null for other Python values
  std::string constant;  // a compile-time value as Python prints it ("(64,)", "tl.float32", "inf")
  // Subscripts with numbers or bounded slices at the end of the expression (`(x + 1)[3]`, `x[:, 0]`),
  // applied in order, as numpy indexes, to the value of `ir`.
  std::vector<std::vector<DebugIndex>> subscripts;
};

class PyDebugExpr {
 public:
  // Parses `text`, registered under `pseudo_file`. UserError with a caret for syntax errors.
  PyDebugExpr(const std::string& text, const std::string& pseudo_file);

  // Every name the expression reads, with the location of its first use.
  const std::vector<std::pair<std::string, SourceLoc>>& names() const { return names_; }

  // Lowers the expression as the kernel file `kernel_file` (source text `kernel_text`, as the
  // kernel was read) would: its imports and module constants are in scope after `scope`'s names;
  // `tl` and `triton` always are. UserError with the location in the expression for every error:
  // a name neither in scope nor global ("'y' is not defined (names: `known`)"), types, an operation
  // that needs statements.
  LoweredDebugExpr lower(const std::string& kernel_file, const std::string& kernel_text, const DebugScope& scope,
                         const std::vector<std::string>& known) const;
  // Before any instance runs: UserError "'y' is not defined (names: `known`)" (caret under it) for
  // a name that is neither in `known` (the program's variables and pid names) nor a global of the
  // kernel file (its imports, constants, functions, Python's builtins, tl, triton).
  void check_names(const std::string& kernel_file, const std::string& kernel_text, const std::vector<std::string>& known) const;

 private:
  std::shared_ptr<py::Node> node_;
  std::vector<std::pair<std::string, SourceLoc>> names_;
};

// The `tl.` functions the lowering knows (completion after `tl.`), sorted.
std::vector<std::string> triton_tl_names();

}  // namespace dtsim
