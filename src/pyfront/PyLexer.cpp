// The Python-subset lexer: names, numbers, strings, operators, NEWLINE/INDENT/DEDENT.
#include "pyfront/PyLexer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dtsim::py {

std::string Token::describe() const {
  switch (kind) {
    case Tok::Newline: return "end of line";
    case Tok::Eof: return "end of file";
    case Tok::String: return "a string";
    case Tok::Indent: return "an indented block";
    case Tok::Dedent: return "the end of an indented block";
    case Tok::Name:
    case Tok::Int:
    case Tok::Float:
    case Tok::Op:
      return "'" + text + "'";
  }
  return "?";
}

size_t offset_of(const SourceLoc& loc) {
  const std::string& s = Sources::text(loc.file);
  size_t pos = 0;
  for (int l = 1; l < loc.line && pos < s.size(); ++pos)
    if (s[pos] == '\n') ++l;
  return pos + static_cast<size_t>(loc.col - 1);
}

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool name_char(char c) { return name_start(c) || digit(c); }

// Longest first.
const char* const kOps[] = {"**=", "//=", "<<=", ">>=", "...", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
                            "->",  "+=",  "-=",  "*=",  "/=",  "%=", "&=", "|=", "^=", "@=", ":=", "+",  "-",
                            "*",   "/",   "%",   "&",   "|",   "^",  "~",  "<",  ">",  "=",  "(",  ")",  "[",
                            "]",   "{",   "}",   ",",   ":",   ".",  ";",  "@"};

class Lexer {
 public:
  Lexer(int file, size_t begin, size_t end, SourceLoc start, bool part)
      : file_(file), src_(Sources::text(file)), pos_(begin), end_(end), line_(start.line), col_(start.col), part_(part) {
    if (part_) depth_ = 1;
  }

  std::vector<Token> run() {
    bool line_start = !part_;
    while (true) {
      if (line_start) {
        line_start = false;
        if (!indentation()) break;
      }
      skip_blanks();
      if (pos_ >= end_) break;
      char c = src_[pos_];
      if (c == '#') {
        while (pos_ < end_ && src_[pos_] != '\n') advance();
        continue;
      }
      if (c == '\\' && peek(1) == '\n') {
        advance();
        advance();
        continue;
      }
      if (c == '\\' && peek(1) == '\r' && peek(2) == '\n') {  // a continuation in a file of CRLF lines
        advance();
        advance();
        advance();
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (c == '\r') {
          advance();
          continue;
        }
        if (depth_ == 0) {
          if (!toks_.empty() && toks_.back().kind != Tok::Newline) push(Tok::Newline, "\n", here());
          advance();
          line_start = true;
        } else {
          advance();
        }
        continue;
      }
      if (string_prefix()) {
        lex_string();
      } else if (name_start(c)) {
        lex_name();
      } else if (digit(c) || (c == '.' && digit(peek(1)))) {
        lex_number();
      } else {
        lex_op();
      }
    }
    if (!part_ && depth_ > 0) user_error(open_.front(), "this bracket is never closed");
    if (!part_) {
      if (!toks_.empty() && toks_.back().kind != Tok::Newline) push(Tok::Newline, "\n", here());
      while (indents_.size() > 1) {
        indents_.pop_back();
        push(Tok::Dedent, "", here());
      }
    }
    push(Tok::Eof, "", here());
    return std::move(toks_);
  }

 private:
  int file_;
  const std::string& src_;
  size_t pos_, end_;
  int line_, col_;
  bool part_;
  int depth_ = 0;
  std::vector<int> indents_{0};
  std::vector<SourceLoc> open_;
  std::vector<Token> toks_;

  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  char peek(size_t ahead = 0) const { return pos_ + ahead < end_ ? src_[pos_ + ahead] : '\0'; }
  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  Token& push(Tok k, std::string text, SourceLoc loc) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.loc = loc;
    toks_.push_back(std::move(t));
    return toks_.back();
  }
  void skip_blanks() {
    while (pos_ < end_ && (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\f')) advance();
  }

  // At the start of a line: measures its indentation and emits Indent/Dedent. Blank and
  // comment-only lines are skipped. Returns false at the end of the text.
  bool indentation() {
    while (true) {
      int width = 0;
      while (pos_ < end_ && (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\f')) {
        width = src_[pos_] == '\t' ? (width / 8 + 1) * 8 : width + 1;
        advance();
      }
      if (pos_ >= end_) return false;
      char c = src_[pos_];
      if (c == '#') {
        while (pos_ < end_ && src_[pos_] != '\n') advance();
      }
      if (pos_ < end_ && (src_[pos_] == '\n' || src_[pos_] == '\r')) {
        advance();
        continue;
      }
      if (pos_ >= end_) return false;
      if (width > indents_.back()) {
        indents_.push_back(width);
        push(Tok::Indent, "", here());
      } else {
        while (width < indents_.back()) {
          indents_.pop_back();
          push(Tok::Dedent, "", here());
        }
        if (width != indents_.back()) user_error(here(), "unindent does not match any outer indentation level");
      }
      return true;
    }
  }

  void lex_name() {
    SourceLoc loc = here();
    size_t b = pos_;
    while (pos_ < end_ && name_char(src_[pos_])) advance();
    if (pos_ < end_ && static_cast<unsigned char>(src_[pos_]) >= 0x80)
      user_error(here(), "non-ASCII identifiers are not supported");
    push(Tok::Name, src_.substr(b, pos_ - b), loc);
  }

  void lex_number() {
    SourceLoc loc = here();
    size_t b = pos_;
    if (src_[pos_] == '0' && (peek(1) == 'x' || peek(1) == 'X' || peek(1) == 'o' || peek(1) == 'O' || peek(1) == 'b' || peek(1) == 'B')) {
      char k = static_cast<char>(src_[pos_ + 1] | 0x20);
      int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
      advance();
      advance();
      std::string digits;
      while (pos_ < end_ && (std::isxdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
        if (src_[pos_] != '_') digits += src_[pos_];
        advance();
      }
      Token& t = push(Tok::Int, src_.substr(b, pos_ - b), loc);
      if (digits.empty()) user_error(loc, "malformed number " + t.text);
      unsigned __int128 v = 0;
      for (char c : digits) {
        int d = digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
        if (d >= base) user_error(loc, "malformed number " + t.text);
        v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
        if (v > ~uint64_t(0)) t.big = true;
      }
      t.ival = t.big ? ~uint64_t(0) : static_cast<uint64_t>(v);
      return;
    }
    bool is_float = false;
    std::string clean;
    auto digits = [&] {
      while (pos_ < end_ && (digit(src_[pos_]) || src_[pos_] == '_')) {
        if (src_[pos_] != '_') clean += src_[pos_];
        advance();
      }
    };
    digits();
    if (pos_ < end_ && src_[pos_] == '.') {
      is_float = true;
      clean += '.';
      advance();
      digits();
    }
    if (pos_ < end_ && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      is_float = true;
      clean += 'e';
      advance();
      if (pos_ < end_ && (src_[pos_] == '+' || src_[pos_] == '-')) {
        clean += src_[pos_];
        advance();
      }
      size_t d0 = clean.size();
      digits();
      if (clean.size() == d0) user_error(loc, "malformed number " + src_.substr(b, pos_ - b));
    }
    if (pos_ < end_ && (name_char(src_[pos_]))) user_error(here(), "malformed number " + src_.substr(b, pos_ - b + 1));
    Token& t = push(is_float ? Tok::Float : Tok::Int, src_.substr(b, pos_ - b), loc);
    if (is_float) {
      t.fval = std::strtod(clean.c_str(), nullptr);
    } else {
      unsigned __int128 v = 0;
      for (char c : clean) {
        v = v * 10 + static_cast<unsigned>(c - '0');
        if (v > ~uint64_t(0)) {
          t.big = true;
          v = ~uint64_t(0);
        }
      }
      t.ival = static_cast<uint64_t>(v);
    }
  }

  // Whether a string literal (with an optional r/b/f prefix) starts here.
  bool string_prefix() const {
    size_t i = 0;
    while (i < 2 && std::string("rRbBfFuU").find(peek(i)) != std::string::npos && peek(i) != '\0') ++i;
    return peek(i) == '"' || peek(i) == '\'';
  }

  void lex_string() {
    SourceLoc loc = here();
    bool raw = false, f = false;
    while (peek() != '"' && peek() != '\'') {
      char c = static_cast<char>(peek() | 0x20);
      if (c == 'r') raw = true;
      if (c == 'f') f = true;
      advance();
    }
    char q = peek();
    bool triple = peek(1) == q && peek(2) == q;
    for (int i = 0; i < (triple ? 3 : 1); ++i) advance();
    SourceLoc body = here();
    std::string out;
    while (true) {
      if (pos_ >= end_) user_error(loc, "this string is never closed");
      char c = src_[pos_];
      if (!triple && c == '\n') user_error(loc, "this string is not closed on its line");
      if (c == q && (!triple || (peek(1) == q && peek(2) == q))) {
        for (int i = 0; i < (triple ? 3 : 1); ++i) advance();
        break;
      }
      if (c == '\\' && !raw && !f) {
        advance();
        if (pos_ >= end_) user_error(loc, "this string is never closed");
        char e = src_[pos_];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          case '\\': out += '\\'; break;
          case '\'': out += '\''; break;
          case '"': out += '"'; break;
          case '\n': break;
          default: out += '\\'; out += e; break;
        }
        advance();
        continue;
      }
      out += c;
      advance();
    }
    Token& t = push(Tok::String, out, loc);
    t.fstring = f;
    t.body = body;
  }

  void lex_op() {
    SourceLoc loc = here();
    for (const char* op : kOps) {
      size_t n = std::char_traits<char>::length(op);
      if (src_.compare(pos_, n, op) == 0 && pos_ + n <= end_) {
        std::string s(op);
        if (s == "(" || s == "[" || s == "{") {
          ++depth_;
          open_.push_back(loc);
        } else if (s == ")" || s == "]" || s == "}") {
          if (depth_ == (part_ ? 1 : 0)) user_error(loc, "unmatched '" + s + "'");
          --depth_;
          open_.pop_back();
        }
        for (size_t i = 0; i < n; ++i) advance();
        push(Tok::Op, s, loc);
        return;
      }
    }
    unsigned char c = static_cast<unsigned char>(src_[pos_]);
    if (c >= 0x80) user_error(loc, "non-ASCII character outside a string or comment");
    user_error(loc, std::string("unexpected character '") + static_cast<char>(c) + "'");
  }
};

}  // namespace

std::vector<Token> lex_python(int file) {
  const std::string& s = Sources::text(file);
  return Lexer(file, 0, s.size(), SourceLoc{file, 1, 1}, false).run();
}

std::vector<Token> lex_python_part(int file, size_t begin, size_t end, SourceLoc start) {
  return Lexer(file, begin, end, start, true).run();
}

}  // namespace dtsim::py
