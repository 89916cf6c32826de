// TTIR text -> a tree of ops (TtirParse.cpp). MLIR prints one op per line; an op with regions ends
// its line with `{` (custom form) or `({` (generic form), its regions' blocks follow, and a line
// starting with `}` closes a region (`} else {`, `} do {` open the next one; what follows the last
// `}` is the rest of the op: its types and location). The op's own text is kept unparsed: the
// lowering reads each op's operands and types with a Cursor.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Diag.h"

namespace dtsim::ttir {

struct Op;

struct Block {
  std::string label;                   // "bb1" (without ^); "" for an unlabeled entry block
  std::vector<std::string> args;       // block argument names (without %)
  std::vector<std::string> arg_types;  // their types, as text
  std::vector<Op> ops;
};

struct Region {
  std::vector<Block> blocks;
};

struct Op {
  std::vector<std::string> results;  // result names without %; "x:2" groups expanded to x#0, x#1
  std::string name;                  // "arith.addi", "tt.reduce", ...
  std::string text;                  // everything after the name on its line (regions excluded)
  std::string trailer;               // text after the last region's closing brace
  std::vector<Region> regions;
  std::string loc;                   // the loc(...) operand, e.g. "#loc12" or "\"f.py\":3:4"
  SourceLoc text_loc;                // the op's line in the TTIR text
  // Compiler hints on the op's result (tl.multiple_of, tl.max_contiguous, tl.max_constancy): the
  // attribute ("tt.divisibility", "tt.contiguity", "tt.constancy") and its value per dimension.
  std::vector<std::pair<std::string, std::vector<int64_t>>> hints;
};

// A location of the source program: file, line, column and the variable name it carries.
struct PyLoc {
  std::string file;
  int line = 0, col = 0;
  std::string name;
};

struct ParsedModule {
  std::vector<Op> funcs;                   // tt.func ops (their text holds the signature)
  std::map<std::string, std::string> locs;  // "#locN" -> the loc(...) body
};

// Parses the module; UserError at the text's line when it is not TTIR as printed by Triton.
ParsedModule parse_ttir(int source_id);

// Resolves a loc(...) body through the table (name locs, call sites: the callee's position).
PyLoc resolve_loc(const ParsedModule& m, const std::string& body);

// A cursor over one op's text.
class Cursor {
 public:
  Cursor(const std::string& s, SourceLoc where) : s_(s), where_(where) {}
  Cursor(std::string&&, SourceLoc) = delete;  // the cursor keeps a reference: never to a temporary
  void ws();
  bool at_end();
  bool peek(const std::string& t);       // after whitespace
  bool eat(const std::string& t);        // consumes t when next
  void expect(const std::string& t);
  std::string value();                   // %name -> name (with #k for a result of a group)
  bool peek_value();
  std::string ident();                   // [A-Za-z_][A-Za-z0-9_.$]*
  std::string type();                    // a type, as text (balanced <...>)
  std::string balanced(char open, char close);  // "{...}" or "(...)", as text, outer brackets included
  std::string number();                  // an integer, float or hex literal, or true/false
  std::string string_lit();              // "..." without the quotes (escapes kept)
  std::string rest();                    // the remaining text
  void skip_to(char ch);                 // moves to the next `ch` at bracket depth 0 (or the end)
  [[noreturn]] void fail(const std::string& what);

 private:
  const std::string& s_;
  size_t p_ = 0;
  SourceLoc where_;
};

// "tensor<16x32x!tt.ptr<f16>>" -> shape {16, 32}, element "!tt.ptr<f16>"; a scalar type: no shape.
struct TypeText {
  std::vector<int64_t> shape;
  std::string elem;  // "f32", "i1", "!tt.ptr<f32>", ...
  bool ok = true;
};
TypeText split_type(const std::string& t);

}  // namespace dtsim::ttir
