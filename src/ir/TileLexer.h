// The `.tile` text form: tokens and the lexer (the parser's first stage).
//
// Newlines end statements, except inside ( ) and [ ] where they are ordinary white space; a
// `{` or `}` resets that nesting so that one unclosed parenthesis cannot swallow later lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Diag.h"

namespace dtsim {

enum class TokKind : uint8_t { Ident, Int, Float, String, Op, Newline, Eof };

struct Token {
  TokKind kind = TokKind::Eof;
  std::string text;  // identifier / operator spelling; decoded contents of a string literal
  uint64_t ival = 0; // Int: the magnitude (up to 2^63, so that -2^63 can be written)
  double fval = 0;   // Float
  SourceLoc loc;

  bool is_op(const char* s) const { return kind == TokKind::Op && text == s; }
  bool is_ident(const char* s) const { return kind == TokKind::Ident && text == s; }
  // How a message names the token: 'x', end of line, end of file.
  std::string describe() const;
};

// Splits a registered source text into tokens, ending with one Eof token. Throws UserError at the
// first malformed literal or stray character.
std::vector<Token> lex_tile(int file_id);

}  // namespace dtsim
