// The `.tile` lexer: identifiers, integer/float/string literals, operators, significant newlines.
#include "ir/TileLexer.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dtsim {

std::string Token::describe() const {
  switch (kind) {
    case TokKind::Newline: return "end of line";
    case TokKind::Eof: return "end of file";
    case TokKind::String: return "a string";
    case TokKind::Ident:
    case TokKind::Int:
    case TokKind::Float:
    case TokKind::Op:
      return "'" + text + "'";
  }
  return "?";
}

namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool ident_char(char c) { return ident_start(c) || digit(c); }

// Operators, longest first so that the first match is the longest one.
const char* const kOps[] = {"//=", "<<=", ">>=", "->", "//", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
                            "-=",  "*=",  "/=",  "%=", "&=", "|=", "^=", "+",  "-",  "*",  "/",  "%",  "&",
                            "|",   "^",   "~",   "!",  "<",  ">",  "=",  "(",  ")",  "[",  "]",  "{",  "}",
                            ",",   ":",   "."};

class Lexer {
 public:
  explicit Lexer(int file) : file_(file), src_(Sources::text(file)) {}

  std::vector<Token> run() {
    while (true) {
      skip_space_and_comments();
      if (pos_ >= src_.size()) break;
      char c = src_[pos_];
      if (c == '\n') {
        if (depth_ == 0) push(TokKind::Newline, "\n", here());
        advance();
      } else if (ident_start(c)) {
        lex_ident();
      } else if (digit(c) || (c == '.' && pos_ + 1 < src_.size() && digit(src_[pos_ + 1]))) {
        lex_number();
      } else if (c == '"') {
        lex_string();
      } else {
        lex_op();
      }
    }
    push(TokKind::Newline, "\n", here());
    push(TokKind::Eof, "", here());
    return std::move(toks_);
  }

 private:
  int file_;
  const std::string& src_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  int depth_ = 0;
  std::vector<Token> toks_;

  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  Token& push(TokKind k, std::string text, SourceLoc loc) {
    toks_.push_back(Token{k, std::move(text), 0, 0, loc});
    return toks_.back();
  }

  void skip_space_and_comments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      } else if (c == '\\' && peek(1) == '\n') {  // explicit line continuation
        advance();
        advance();
      } else {
        break;
      }
    }
  }

  void lex_ident() {
    SourceLoc loc = here();
    size_t b = pos_;
    while (pos_ < src_.size() && ident_char(src_[pos_])) advance();
    push(TokKind::Ident, src_.substr(b, pos_ - b), loc);
  }

  // digits [. digits] [e [+-] digits]; a '.' directly followed by a letter is not part of the
  // number, so that `3.to(i64)` lexes as 3 . to ( i64 ).
  void lex_number() {
    SourceLoc loc = here();
    size_t b = pos_;
    bool is_float = false;
    while (digit(peek())) advance();
    if (peek() == '.' && !ident_start(peek(1)) && peek(1) != '.') {
      is_float = true;
      advance();
      while (digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && digit(peek(2))))) {
      is_float = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (digit(peek())) advance();
    }
    std::string text = src_.substr(b, pos_ - b);
    if (ident_char(peek())) user_error(loc, "invalid number literal '" + text + peek() + "...'");
    Token& t = push(is_float ? TokKind::Float : TokKind::Int, text, loc);
    if (is_float) {
      errno = 0;
      t.fval = std::strtod(text.c_str(), nullptr);
      if (std::isinf(t.fval)) user_error(loc, "float literal " + text + " is out of range");
      return;
    }
    const uint64_t limit = uint64_t(1) << 63;
    uint64_t v = 0;
    for (char c : text) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (limit - d) / 10) user_error(loc, "integer literal " + text + " is too large");
      v = v * 10 + d;
    }
    t.ival = v;
  }

  void lex_string() {
    SourceLoc loc = here();
    advance();
    std::string out;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') user_error(loc, "unterminated string");
      char c = src_[pos_];
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\\') {
        SourceLoc eloc = here();
        advance();
        char e = peek();
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case '\\': out += '\\'; break;
          case '"': out += '"'; break;
          default: user_error(eloc, "unknown escape sequence in string (use \\n \\t \\\\ \\\")");
        }
        advance();
        continue;
      }
      out += c;
      advance();
    }
    push(TokKind::String, out, loc);
  }

  void lex_op() {
    SourceLoc loc = here();
    for (const char* op : kOps) {
      size_t n = std::char_traits<char>::length(op);
      if (src_.compare(pos_, n, op) != 0) continue;
      for (size_t i = 0; i < n; ++i) advance();
      std::string s = op;
      if (s == "(" || s == "[") ++depth_;
      if ((s == ")" || s == "]") && depth_ > 0) --depth_;
      if (s == "{" || s == "}") depth_ = 0;
      push(TokKind::Op, s, loc);
      return;
    }
    unsigned char c = static_cast<unsigned char>(src_[pos_]);
    if (c >= 0x20 && c < 0x7f) user_error(loc, std::string("unexpected character '") + static_cast<char>(c) + "'");
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    user_error(loc, std::string("unexpected character '") + buf + "'");
  }
};

}  // namespace

std::vector<Token> lex_tile(int file_id) { return Lexer(file_id).run(); }

}  // namespace dtsim
