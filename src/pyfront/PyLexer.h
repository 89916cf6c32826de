// The Triton-Python frontend, stage 1: tokens of the Python subset `@triton.jit` kernels are
// written in, with Python's INDENT/DEDENT structure.
//
// Newlines end logical lines except inside ( ) [ ] { } and after a `\`; blank and comment-only
// lines produce nothing; indentation changes produce Indent/Dedent tokens. String literals take
// the prefixes r, b, f (any case, combined) and all four quote forms; an f-string keeps its raw
// text and the location of its first character so that the parser can read the `{...}` fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Diag.h"

namespace dtsim::py {

enum class Tok : uint8_t { Name, Int, Float, String, Op, Newline, Indent, Dedent, Eof };

struct Token {
  Tok kind = Tok::Eof;
  std::string text;    // Name / Op spelling; String: decoded contents (f-string: raw contents)
  uint64_t ival = 0;   // Int (saturated at 2^64-1; `big` is set when the literal does not fit)
  bool big = false;
  double fval = 0;     // Float
  bool fstring = false;
  SourceLoc loc;
  SourceLoc body;      // String: where the contents start (after prefix and quotes)

  bool is_op(const char* s) const { return kind == Tok::Op && text == s; }
  bool is_name(const char* s) const { return kind == Tok::Name && text == s; }
  std::string describe() const;  // 'x', end of line, end of file, a string, indentation
};

// Tokenizes the registered source text `file`. With `begin`/`end` (byte offsets) and `start`
// (the location of byte `begin`), tokenizes only that part as one bracketed expression (f-string
// fields). Throws UserError at malformed literals, bad indentation and stray characters.
std::vector<Token> lex_python(int file);
std::vector<Token> lex_python_part(int file, size_t begin, size_t end, SourceLoc start);

// The byte offset of a location in its file's text.
size_t offset_of(const SourceLoc& loc);

}  // namespace dtsim::py
