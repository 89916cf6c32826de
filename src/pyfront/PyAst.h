// The Triton-Python frontend, stage 2: the syntax tree of the Python subset (what the parser
// accepts; which constructs a kernel may use is decided by the lowering).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Diag.h"

namespace dtsim::py {

struct Node;
using NodeP = std::shared_ptr<Node>;

enum class NK : uint8_t {
  // expressions
  Name,       // text
  Int,        // ival (big: does not fit 64 bits)
  Float,      // fval
  Str,        // text
  FStr,       // kids: the fields, in order; parts: the literal pieces (parts.size() == kids.size() + 1)
  NoneLit, TrueLit, FalseLit, Ellipsis,
  Lambda,     // kids[0]: the body (parameters dropped); only in decorators (triton.heuristics), never evaluated
  Attr,       // kids[0].text
  Call,       // kids[0] callee, kids[1..] positional args; kw: keyword names for the last kw.size() args
  Subscript,  // kids[0] value, kids[1..] items (Slice / NoneLit / expressions)
  Slice,      // kids: lo, hi, step (null when absent)
  BinOp,      // op; kids: a, b
  UnaryOp,    // op ("-", "+", "~", "not"); kids: x
  BoolOp,     // op ("and" / "or"); kids: operands
  Compare,    // ops (one per pair); kids: operands
  IfExp,      // kids: cond, then, else
  Tuple, List,
  Starred,    // *x in a call
  Dict,       // {k: v, ...} or a set {a, b}: kids alternate keys and values (only in decorators and host code)
  // statements
  ExprStmt,   // kids[0]
  Assign,     // kids: targets..., value (last)
  AugAssign,  // op; kids: target, value
  AnnAssign,  // kids: target, annotation, value (may be null)
  If,         // kids[0] cond; body; orelse
  For,        // kids: target, iter; body; orelse
  While,      // kids[0] cond; body
  Return,     // kids[0] value (may be null)
  Pass, Break, Continue,
  Assert,     // kids: cond, msg (may be null)
  FunctionDef,// text: name; params; decorators (kids); body
  Import,     // names: (module, alias)
  ImportFrom, // text: module; names: (name, alias)
  Other,      // a statement the kernel subset never runs (class, with, try, global, del, ...)
};

struct Param {
  std::string name;
  NodeP annotation, def;
  SourceLoc loc;
  bool star = false;  // *args / **kwargs
};

struct Node {
  NK kind;
  SourceLoc loc;
  std::string text;
  std::string op;
  std::vector<std::string> ops;
  int64_t ival = 0;
  bool big = false;
  double fval = 0;
  std::vector<NodeP> kids;
  std::vector<std::string> kw;
  std::vector<std::string> parts;
  std::vector<NodeP> body, orelse;
  std::vector<Param> params;
  std::vector<std::pair<std::string, std::string>> names;
  SourceLoc end;  // FunctionDef: the location just past the header
  // FunctionDef outside the kernel subset (valid Python the subset parser cannot read): the error,
  // raised only when the function is launched or called (body: its calls, for entry-point search).
  std::string deferred_error;
  SourceLoc deferred_loc;
};

struct PyModule {
  int file = -1;
  std::string path;
  std::vector<NodeP> body;
};

// Parses a registered source text. UserError (file:line:col, source line, caret) for syntax errors.
// Checks the whole file's syntax as Python does (PySyntax.h), then reads it: module-level constants
// and imports, and every @triton.jit function; one the subset cannot read keeps its error
// (Node::deferred_error) for when it is launched or called.
PyModule parse_python(int file);

// Parses a registered text holding one Python expression (newlines allowed, as inside brackets):
// the debugger's print/display/watch expressions and conditions on a kernel read from .py.
NodeP parse_python_expr(int file);

}  // namespace dtsim::py
