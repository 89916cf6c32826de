// The whole-file Python syntax check (see PySyntax.h): a tokenizer that follows CPython 3.11's
// (indentation stacks in columns and in "tabs as one" columns for TabError, number and string
// forms, bracket matching) and a recursive-descent recognizer of the 3.11 grammar that keeps only
// what the checks need: the kind of each expression (is it a valid assignment or deletion target).
#include "pyfront/PySyntax.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ir/Diag.h"
#include "pyfront/UnicodeNames.h"

namespace dtsim::py {

namespace {

enum class T { Name, Number, String, Op, Newline, Indent, Dedent, End };

struct Tok {
  T k;
  std::string s;  // name, operator, or the string token's full text
  int line, col;  // 1-based
  bool bytes = false, fstr = false, raw = false;
  int body_line = 0, body_col = 0;  // strings: where the body starts
  size_t body_at = 0, body_len = 0;  // strings: the body in the source
};

struct Fail {
  int line, col;
  std::string msg;
};

[[noreturn]] void fail_at(int line, int col, const std::string& m) { throw Fail{line, col, m}; }

bool ident_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool ident_char(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }

const std::set<std::string>& keywords() {
  static const std::set<std::string> k = {"False", "None",   "True",    "and",      "as",     "assert", "async", "await",
                                          "break", "class",  "continue", "def",     "del",    "elif",   "else",  "except",
                                          "finally", "for",  "from",    "global",   "if",     "import", "in",    "is",
                                          "lambda", "nonlocal", "not",  "or",       "pass",   "raise",  "return", "try",
                                          "while", "with",   "yield"};
  return k;
}

// ---- tokenizer ----
class Lexer {
 public:
  Lexer(const std::string& src, int line0 = 1, int col0 = 1, bool in_parens = false)
      : s_(src), line_(line0), col0_(col0), in_parens_(in_parens) {}

  std::vector<Tok> run() {
    bool bol = !in_parens_;
    while (true) {
      if (bol && parens_.empty()) {
        bol = false;
        int col = 0, alt = 0;
        size_t p = i_;
        while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\f')) {
          if (s_[p] == ' ') ++col, ++alt;
          else if (s_[p] == '\t') col = (col / 8 + 1) * 8, ++alt;
          else col = alt = 0;
          ++p;
        }
        i_ = p;
        if (i_ >= s_.size()) break;
        char c = s_[i_];
        // A backslash continuation in the first column: CPython 3.11 takes the indentation from the
        // line it continues onto (with any leading blanks, the backslash line's own column counts).
        if (c == '\\' && i_ == line_start_ && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
          ++i_;
          newline();
          if (i_ >= s_.size()) fail_at(line_, 1, "unexpected EOF while parsing");
          bol = true;
          continue;
        }
        if (c == '#' || c == '\n' || c == '\r' || c == '\\') {
          if (c == '#') while (i_ < s_.size() && s_[i_] != '\n') ++i_;
          if (i_ < s_.size() && s_[i_] == '\\') {
            // a backslash continuation on an otherwise blank line: the indentation counts as usual
          } else {
            if (i_ < s_.size()) newline();
            bol = true;
            continue;
          }
        }
        if (col == ind_.back()) {
          if (alt != alt_.back()) fail_at(line_, col_of(i_), "inconsistent use of tabs and spaces in indentation");
        } else if (col > ind_.back()) {
          if (alt <= alt_.back()) fail_at(line_, col_of(i_), "inconsistent use of tabs and spaces in indentation");
          ind_.push_back(col);
          alt_.push_back(alt);
          push(T::Indent, "", line_, col_of(i_));
        } else {
          while (ind_.size() > 1 && col < ind_.back()) {
            ind_.pop_back();
            alt_.pop_back();
            push(T::Dedent, "", line_, col_of(i_));
          }
          if (col != ind_.back()) fail_at(line_, col_of(i_), "unindent does not match any outer indentation level");
          if (alt != alt_.back()) fail_at(line_, col_of(i_), "inconsistent use of tabs and spaces in indentation");
        }
      }
      while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\f')) ++i_;
      if (i_ >= s_.size()) break;
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (c == '\n' || c == '\r') {
        bool blank = toks_.empty() || toks_.back().k == T::Newline || toks_.back().k == T::Indent || toks_.back().k == T::Dedent;
        if (parens_.empty() && !in_parens_ && !blank) push(T::Newline, "", line_, col_of(i_));
        newline();
        bol = parens_.empty() && !in_parens_;
        continue;
      }
      if (c == '\\') {
        if (i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
          ++i_;
          newline();
          if (i_ >= s_.size()) fail_at(line_, 1, "unexpected EOF while parsing");
          continue;
        }
        if (i_ + 1 >= s_.size()) fail_at(line_, col_of(i_), "unexpected EOF while parsing");
        fail_at(line_, col_of(i_) + 1, "unexpected character after line continuation character");
      }
      if (ident_start(c)) {
        size_t b = i_;
        while (i_ < s_.size() && ident_char(static_cast<unsigned char>(s_[i_]))) ++i_;
        std::string w = s_.substr(b, i_ - b);
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"') && w.size() <= 2) {
          std::string l;
          for (char ch : w) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          static const std::set<std::string> pre = {"r", "u", "f", "b", "br", "rb", "fr", "rf"};
          if (pre.count(l)) {
            string(b, l.find('b') != std::string::npos, l.find('f') != std::string::npos, l.find('r') != std::string::npos);
            continue;
          }
        }
        push(T::Name, w, line_, col_of(b));
        continue;
      }
      if (std::isdigit(c) || (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
        number();
        continue;
      }
      if (c == '\'' || c == '"') {
        string(i_, false, false, false);
        continue;
      }
      op();
    }
    if (!parens_.empty() && !in_parens_)
      fail_at(parens_.back().line, parens_.back().col, std::string("'") + parens_.back().c + "' was never closed");
    if (!in_parens_) {
      if (!toks_.empty() && toks_.back().k != T::Newline && toks_.back().k != T::Dedent && toks_.back().k != T::Indent)
        push(T::Newline, "", line_, col_of(i_));
      while (ind_.size() > 1) {
        ind_.pop_back();
        push(T::Dedent, "", line_, 1);
      }
    }
    push(T::End, "", line_, col_of(i_));
    return toks_;
  }

 private:
  struct Open {
    char c;
    int line, col;
  };
  const std::string& s_;
  size_t i_ = 0, line_start_ = 0;
  int line_;
  int col0_;
  bool in_parens_;
  std::vector<int> ind_{0}, alt_{0};
  std::vector<Open> parens_;
  std::vector<Tok> toks_;

  int col_of(size_t at) const { return static_cast<int>(at - line_start_) + (line_start_ == 0 ? col0_ : 1); }
  void newline() {
    if (s_[i_] == '\r' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') ++i_;
    ++i_;
    ++line_;
    line_start_ = i_;
  }
  void push(T k, std::string s, int line, int col) { toks_.push_back(Tok{k, std::move(s), line, col}); }

  bool digit_at(size_t p) const { return p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p])); }
  char at(size_t p) const { return p < s_.size() ? s_[p] : '\0'; }

  // After a number: a keyword that may follow (1if, 0x1for) is allowed, another name character not.
  void end_of_number(const char* kind) {
    char c = at(i_);
    auto la = [&](const char* w) { return s_.compare(i_ + 1, std::strlen(w), w) == 0; };
    bool kw = (c == 'a' && la("nd")) || (c == 'e' && la("lse")) || (c == 'f' && la("or")) ||
              (c == 'i' && (at(i_ + 1) == 'f' || at(i_ + 1) == 'n' || at(i_ + 1) == 's')) || (c == 'o' && la("r")) ||
              (c == 'n' && la("ot"));
    if (!kw && ident_char(static_cast<unsigned char>(c))) fail_at(line_, col_of(i_), std::string("invalid ") + kind + " literal");
  }
  // Digits with single underscores between them (the first digit is at i_).
  void decimal_tail() {
    while (true) {
      while (digit_at(i_)) ++i_;
      if (at(i_) != '_') return;
      ++i_;
      if (!digit_at(i_)) fail_at(line_, col_of(i_), "invalid decimal literal");
    }
  }
  void fraction_exponent_imag() {
    if (at(i_) == '.') {
      ++i_;
      if (digit_at(i_)) decimal_tail();
    }
    if (at(i_) == 'e' || at(i_) == 'E') {
      size_t e = i_;
      ++i_;
      if (at(i_) == '+' || at(i_) == '-') {
        ++i_;
        if (!digit_at(i_)) fail_at(line_, col_of(i_), "invalid decimal literal");
      } else if (!digit_at(i_)) {
        i_ = e;  // `3else`: the e starts a keyword, and the number ends before it (else an error)
        end_of_number("decimal");
        return;
      }
      decimal_tail();
    }
    if (at(i_) == 'j' || at(i_) == 'J') {
      ++i_;
      end_of_number("imaginary");
      return;
    }
    end_of_number("decimal");
  }
  void number() {
    size_t b = i_;
    int col = col_of(b);
    if (s_[i_] == '.') {
      ++i_;
      decimal_tail();
      fraction_exponent_imag_after_dot();
      push(T::Number, s_.substr(b, i_ - b), line_, col);
      return;
    }
    if (s_[i_] == '0') {
      ++i_;
      char x = static_cast<char>(std::tolower(static_cast<unsigned char>(at(i_))));
      if (x == 'x' || x == 'o' || x == 'b') {
        ++i_;
        const char* kind = x == 'x' ? "hexadecimal" : x == 'o' ? "octal" : "binary";
        auto ok = [&](char ch) {
          if (x == 'x') return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
          if (x == 'o') return ch >= '0' && ch <= '7';
          return ch == '0' || ch == '1';
        };
        do {
          if (at(i_) == '_') ++i_;
          if (!ok(at(i_))) {
            if (x != 'x' && std::isdigit(static_cast<unsigned char>(at(i_))))
              fail_at(line_, col_of(i_) + 1, std::string("invalid digit '") + at(i_) + "' in " + kind + " literal");
            fail_at(line_, col_of(i_), std::string("invalid ") + kind + " literal");
          }
          while (ok(at(i_))) ++i_;
        } while (at(i_) == '_');
        if (x != 'x' && std::isdigit(static_cast<unsigned char>(at(i_))))
          fail_at(line_, col_of(i_) + 1, std::string("invalid digit '") + at(i_) + "' in " + kind + " literal");
        end_of_number(kind);
        push(T::Number, s_.substr(b, i_ - b), line_, col);
        return;
      }
      bool nonzero = false;
      while (true) {  // 0, 00, 0_0 ...
        if (at(i_) == '_') {
          ++i_;
          if (!digit_at(i_)) fail_at(line_, col_of(i_), "invalid decimal literal");
        }
        if (at(i_) != '0') break;
        ++i_;
      }
      if (digit_at(i_)) {
        nonzero = true;
        decimal_tail();
      }
      char c = at(i_);
      if (c == '.' || c == 'e' || c == 'E' || c == 'j' || c == 'J') {
        fraction_exponent_imag();
      } else if (nonzero) {
        fail_at(line_, col, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
      } else {
        end_of_number("decimal");
      }
      push(T::Number, s_.substr(b, i_ - b), line_, col);
      return;
    }
    decimal_tail();
    fraction_exponent_imag();
    push(T::Number, s_.substr(b, i_ - b), line_, col);
  }
  void fraction_exponent_imag_after_dot() {
    // `.5e3j`: the digits after the dot are read; an exponent and a j may follow.
    if (at(i_) == 'e' || at(i_) == 'E' || at(i_) == 'j' || at(i_) == 'J') {
      fraction_exponent_imag();
      return;
    }
    end_of_number("decimal");
  }

  void string(size_t b, bool bytes, bool f, bool raw) {
    int line = line_, col = col_of(b);
    while (s_[i_] != '\'' && s_[i_] != '"') ++i_;
    char q = s_[i_];
    bool triple = at(i_ + 1) == q && at(i_ + 2) == q;
    i_ += triple ? 3 : 1;
    Tok t{T::String, "", line, col};
    t.bytes = bytes;
    t.fstr = f;
    t.raw = raw;
    t.body_line = line_;
    t.body_col = col_of(i_);
    t.body_at = i_;
    while (true) {
      if (i_ >= s_.size()) {
        if (triple) fail_at(line, col, "unterminated triple-quoted string literal (detected at line " + std::to_string(line_) + ")");
        fail_at(line, col, "unterminated string literal (detected at line " + std::to_string(line_) + ")");
      }
      char c = s_[i_];
      if (c == '\\') {
        if (i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
          ++i_;
          newline();
        } else {
          i_ += 2;
        }
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) fail_at(line, col, "unterminated string literal (detected at line " + std::to_string(line_) + ")");
        newline();
        continue;
      }
      if (c == q && (!triple || (at(i_ + 1) == q && at(i_ + 2) == q))) {
        t.body_len = i_ - t.body_at;
        i_ += triple ? 3 : 1;
        break;
      }
      if (bytes && static_cast<unsigned char>(c) >= 0x80) fail_at(line, col, "bytes can only contain ASCII literal characters");
      ++i_;
    }
    t.s = s_.substr(b, i_ - b);
    if (!raw) escapes(t);
    toks_.push_back(std::move(t));
  }

  // The escapes Python refuses in a literal that is not raw: \x without two hex digits, and in a
  // str \u without four, \U without eight (or past U+10FFFF), \N without {name}.
  void escapes(const Tok& t) const {
    const char* kind = t.bytes ? "bytes" : "unicode error";
    for (size_t k = t.body_at; k < t.body_at + t.body_len; ++k) {
      if (s_[k] != '\\') continue;
      char e = k + 1 < t.body_at + t.body_len ? s_[k + 1] : '\0';
      int need = e == 'x' ? 2 : (!t.bytes && e == 'u') ? 4 : (!t.bytes && e == 'U') ? 8 : 0;
      if (need) {
        uint32_t v = 0;
        for (int d = 0; d < need; ++d) {
          size_t at = k + 2 + static_cast<size_t>(d);
          if (at >= t.body_at + t.body_len || !std::isxdigit(static_cast<unsigned char>(s_[at])))
            fail_at(t.line, t.col, std::string("(") + kind + ") truncated \\" + e + " escape");
          char c = s_[at];
          v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
        }
        if (e == 'U' && v > 0x10FFFF) fail_at(t.line, t.col, "(unicode error) illegal Unicode character");
      } else if (!t.bytes && e == 'N') {
        size_t end = t.body_at + t.body_len;
        if (k + 2 >= end || s_[k + 2] != '{' || s_.find('}', k + 3) >= end || s_.find('}', k + 3) == k + 3)
          fail_at(t.line, t.col, "(unicode error) malformed \\N character escape");
        // Looked up as Python does (UnicodeNames.h: a table generated from python3's unicodedata;
        // a build without python3 checks the name's form only).
        std::string nm = s_.substr(k + 3, s_.find('}', k + 3) - (k + 3));
        bool ok = unicode_name_accepted(nm);
        if (!ok) fail_at(t.line, t.col, "(unicode error) unknown Unicode character name '" + nm + "'");
      }
      ++k;  // the escaped character
    }
  }

  void op() {
    static const char* three[] = {"**=", "//=", ">>=", "<<=", "...", nullptr};
    static const char* two[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", "+=", "-=", "*=", "/=", "%=",
                                "&=", "|=", "^=", "@=", ":=", nullptr};
    int col = col_of(i_);
    for (const char** p = three; *p; ++p)
      if (s_.compare(i_, 3, *p) == 0) {
        push(T::Op, *p, line_, col);
        i_ += 3;
        return;
      }
    for (const char** p = two; *p; ++p)
      if (s_.compare(i_, 2, *p) == 0) {
        push(T::Op, *p, line_, col);
        i_ += 2;
        return;
      }
    char c = s_[i_];
    if (std::strchr("+-*/%@&|^~<>()[]{},:.;=", c)) {
      if (c == '(' || c == '[' || c == '{') parens_.push_back(Open{c, line_, col});
      if (c == ')' || c == ']' || c == '}') {
        if (parens_.empty()) fail_at(line_, col, std::string("unmatched '") + c + "'");
        char o = parens_.back().c;
        if ((o == '(' && c != ')') || (o == '[' && c != ']') || (o == '{' && c != '}'))
          fail_at(line_, col, std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" + o + "'");
        parens_.pop_back();
      }
      push(T::Op, std::string(1, c), line_, col);
      ++i_;
      return;
    }
    if (c == '!') fail_at(line_, col, "invalid syntax");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail_at(line_, col, "invalid non-printable character");
    fail_at(line_, col, std::string("invalid character '") + c + "'");
  }
};

// ---- recognizer ----
enum class E { Name, Attr, Subscript, Starred, Tuple, List, Call, Const, Other, Yield, Named };

struct X {
  E k = E::Other;
  bool paren = false;
  std::vector<X> elts;  // Tuple/List elements; Starred: its operand
  std::string what;     // for messages
  int line = 0, col = 0;
};

class Parser {
 public:
  explicit Parser(std::vector<Tok> t, const std::string& src) : t_(std::move(t)), src_(src) {}

  void file() {
    while (at().k != T::End) statement();
  }
  // f-string field: star_expressions (the whole token list, inside parentheses).
  void fstring_field() {
    star_expressions();
    if (at().k != T::End) bad();
  }

 private:
  std::vector<Tok> t_;
  const std::string& src_;
  size_t p_ = 0;
  int depth_ = 0;

  struct Deep {
    Parser& p;
    explicit Deep(Parser& q) : p(q) {
      if (++p.depth_ > 200) fail_at(p.at().line, p.at().col, "too many nested parentheses");
    }
    ~Deep() { --p.depth_; }
  };

  const Tok& at(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Tok& next() {
    const Tok& x = at();
    if (p_ < t_.size() - 1) ++p_;
    return x;
  }
  bool is_op(const char* o, size_t k = 0) const { return at(k).k == T::Op && at(k).s == o; }
  bool is_kw(const char* w, size_t k = 0) const { return at(k).k == T::Name && at(k).s == w; }
  bool accept(const char* o) {
    if (!is_op(o)) return false;
    next();
    return true;
  }
  bool accept_kw(const char* w) {
    if (!is_kw(w)) return false;
    next();
    return true;
  }
  [[noreturn]] void bad(const std::string& m = "invalid syntax") const {
    const Tok& x = at();
    if (x.k == T::Indent) fail_at(x.line, x.col, "unexpected indent");
    fail_at(x.line, x.col, m);
  }
  void expect(const char* o) {
    if (!accept(o)) bad();
  }
  void expect_kw(const char* w) {
    if (!accept_kw(w)) bad();
  }
  bool at_name() const { return at().k == T::Name && !keywords().count(at().s); }
  std::string name() {
    if (!at_name()) bad();
    return next().s;
  }
  bool at_end_of_simple() const { return at().k == T::Newline || is_op(";") || at().k == T::End; }

  // ---- statements ----
  void statement() {
    Deep d(*this);
    const Tok& x = at();
    if (x.k == T::Indent) bad();
    if (x.k == T::Newline) {
      next();
      return;
    }
    if (x.k == T::Name) {
      const std::string& w = x.s;
      if (w == "if") return if_stmt();
      if (w == "while") return while_stmt();
      if (w == "for") return for_stmt();
      if (w == "try") return try_stmt();
      if (w == "with") return with_stmt();
      if (w == "def") return def_stmt();
      if (w == "class") return class_stmt();
      if (w == "match" && match_stmt()) return;
      if (w == "async" && (is_kw("def", 1) || is_kw("for", 1) || is_kw("with", 1))) {
        next();
        if (is_kw("def")) return def_stmt();
        if (is_kw("for")) return for_stmt();
        return with_stmt();
      }
    }
    if (is_op("@")) return decorated();
    simple_stmts();
  }

  void simple_stmts() {
    simple_stmt();
    while (accept(";")) {
      if (at().k == T::Newline || at().k == T::End) break;
      simple_stmt();
    }
    if (at().k == T::End) return;
    if (at().k != T::Newline) bad();
    next();
  }

  void block(const char* what, int line) {
    expect(":");
    if (at().k == T::Newline) {
      next();
      if (at().k != T::Indent)
        fail_at(at().line, at().col, std::string("expected an indented block after ") + what + " on line " + std::to_string(line));
      next();
      while (at().k != T::Dedent && at().k != T::End) statement();
      if (at().k == T::Dedent) next();
      return;
    }
    simple_stmts();
  }

  void if_stmt() {
    int line = next().line;
    named_expression();
    block("'if' statement", line);
    while (is_kw("elif")) {
      int l = next().line;
      named_expression();
      block("'elif' statement", l);
    }
    if (is_kw("else")) {
      int l = next().line;
      block("'else' statement", l);
    }
  }
  void while_stmt() {
    int line = next().line;
    named_expression();
    block("'while' statement", line);
    if (is_kw("else")) {
      int l = next().line;
      block("'else' statement", l);
    }
  }
  void for_stmt() {
    int line = next().line;
    X tg = target_list();
    check_assign(tg);
    expect_kw("in");
    star_expressions();
    block("'for' statement", line);
    if (is_kw("else")) {
      int l = next().line;
      block("'else' statement", l);
    }
  }
  void try_stmt() {
    int line = next().line;
    block("'try' statement", line);
    bool any = false, star = false, plain = false;
    while (is_kw("except")) {
      int l = next().line;
      any = true;
      bool st = accept("*");
      (st ? star : plain) = true;
      if (star && plain) fail_at(l, 1, "cannot have both 'except' and 'except*' on the same 'try'");
      if (!is_op(":")) {
        expression();
        if (is_op(",")) fail_at(at().line, at().col, "multiple exception types must be parenthesized");
        if (accept_kw("as")) name();
      } else if (st) {
        bad("expected one or more exception types");
      }
      block("'except' statement", l);
    }
    if (any && is_kw("else")) {
      int l = next().line;
      block("'else' statement", l);
    }
    if (is_kw("finally")) {
      int l = next().line;
      block("'finally' statement", l);
      return;
    }
    if (!any) bad("expected 'except' or 'finally' block");
  }
  // ---- match (3.10+): `match` and `case` are soft keywords ----
  // `match SUBJECT:` followed by a newline is a match statement; any other statement that starts
  // with the name `match` is an ordinary one (`match = re.match(s)`, `match(x)`, `match -x`), as
  // CPython's parser decides by trying the match statement first. Returns false (nothing consumed)
  // for an ordinary statement.
  bool match_stmt() {
    size_t save = p_;
    const Tok& kw = next();
    int line = kw.line;
    bool head = false, no_colon = false;
    Tok nl{};
    try {
      // subject_expr: star_named_expression ',' star_named_expressions? | named_expression
      X first = star_named_expression();
      if (accept(",")) {
        while (starts_expression() && !is_op("**")) {
          star_named_expression();
          if (!accept(",")) break;
        }
      } else if (first.k == E::Starred) {
        bad();
      }
      head = is_op(":") && at(1).k == T::Newline;
      no_colon = at().k == T::Newline;
      nl = at();
    } catch (const Fail&) {
    }
    if (!head) {
      p_ = save;
      try {
        simple_stmts();
      } catch (const Fail&) {
        if (no_colon) fail_at(nl.line, nl.col, "expected ':'");
        throw;
      }
      return true;
    }
    next();  // ':'
    next();  // NEWLINE
    if (at().k != T::Indent)
      fail_at(at().line, at().col, "expected an indented block after 'match' statement on line " + std::to_string(line));
    next();
    while (at().k != T::Dedent && at().k != T::End) {
      if (at().k == T::Newline) {
        next();
        continue;
      }
      if (!(at().k == T::Name && at().s == "case")) bad();
      case_block();
    }
    if (at().k == T::Dedent) next();
    return true;
  }
  void case_block() {
    Deep d(*this);
    int line = next().line;  // 'case'
    // patterns: open_sequence_pattern | pattern
    bool star = maybe_star_pattern();
    if (is_op(",")) {
      while (accept(",")) {
        if (is_op(":") || is_kw("if")) break;
        maybe_star_pattern();
      }
    } else if (star) {
      bad();
    }
    if (accept_kw("if")) named_expression();
    if (at().k == T::Newline) fail_at(at().line, at().col, "expected ':'");
    block("'case' statement", line);
  }
  // star_pattern ('*' NAME or '*_'), else a pattern; true for a star pattern.
  bool maybe_star_pattern() {
    if (accept("*")) {
      if (at().k == T::Name && at().s == "_") next();
      else capture_target();
      return true;
    }
    pattern();
    return false;
  }
  // pattern_capture_target: a NAME other than `_`, not followed by '.', '(' or '='.
  void capture_target() {
    if (!at_name() || at().s == "_") bad();
    next();
    if (is_op(".") || is_op("(") || is_op("=")) bad();
  }
  // pattern: or_pattern ['as' pattern_capture_target]
  void pattern() {
    Deep d(*this);
    closed_pattern();
    while (accept("|")) closed_pattern();
    if (accept_kw("as")) {
      if (at().k == T::Name && at().s == "_") fail_at(at().line, at().col, "cannot use '_' as a target");
      capture_target();
    }
  }
  void closed_pattern() {
    Deep d(*this);
    const Tok& t = at();
    if (t.k == T::Number || is_op("-")) return number_pattern();
    if (t.k == T::String) {  // strings, concatenated (f-strings parse; the compiler refuses them)
      atom();
      return;
    }
    if (t.k == T::Name) {
      if (t.s == "None" || t.s == "True" || t.s == "False") {
        next();
        return;
      }
      if (!at_name()) bad();
      if (t.s == "_") {  // the wildcard: CPython commits to it, so `_(...)` and `_.x` are errors
        next();
        return;
      }
      next();
      while (accept(".")) name();       // value pattern (a.b) or class name
      if (accept("(")) return class_arguments();
      if (is_op("=")) bad();
      return;
    }
    if (accept("(")) {  // group or sequence
      if (accept(")")) return;
      bool star = maybe_star_pattern();
      if (is_op(",")) {
        while (accept(",")) {
          if (is_op(")")) break;
          maybe_star_pattern();
        }
      } else if (star) {
        bad();
      }
      expect(")");
      return;
    }
    if (accept("[")) {
      while (!is_op("]")) {
        maybe_star_pattern();
        if (!accept(",")) break;
      }
      expect("]");
      return;
    }
    if (accept("{")) {  // mapping: key: pattern, ..., then at most one **rest, last
      while (!is_op("}")) {
        if (accept("**")) {
          capture_target();
          accept(",");
          break;
        }
        mapping_key();
        expect(":");
        pattern();
        if (!accept(",")) break;
      }
      expect("}");
      return;
    }
    bad();
  }
  // A number, a negated number or a complex literal `[-]REAL (+|-) IMAG`.
  void number_pattern() {
    const Tok& start = at();
    accept("-");
    if (at().k != T::Number) bad();
    auto imaginary = [](const std::string& n) { return !n.empty() && (n.back() == 'j' || n.back() == 'J'); };
    bool first_imag = imaginary(next().s);
    if (is_op("+") || is_op("-")) {
      if (first_imag) fail_at(start.line, start.col, "real number required in complex literal");
      next();
      if (at().k != T::Number) bad();
      const Tok& im = at();
      if (!imaginary(im.s)) fail_at(im.line, im.col, "imaginary number required in complex literal");
      next();
    }
  }
  // A mapping pattern's key: a literal or a dotted name (a.b; a bare name is not a key).
  void mapping_key() {
    if (at().k == T::Number || is_op("-")) return number_pattern();
    if (at().k == T::String) {
      atom();
      return;
    }
    if (is_kw("None") || is_kw("True") || is_kw("False")) {
      next();
      return;
    }
    name();
    if (!is_op(".")) bad();
    while (accept(".")) name();
  }
  // Class pattern arguments after '(': positional patterns, then NAME=pattern keywords.
  void class_arguments() {
    bool keywords_seen = false;
    while (!is_op(")")) {
      if (at_name() && is_op("=", 1)) {
        next();
        next();
        pattern();
        keywords_seen = true;
      } else {
        const Tok& p = at();
        pattern();
        if (keywords_seen) fail_at(p.line, p.col, "positional patterns follow keyword patterns");
      }
      if (!accept(",")) break;
    }
    expect(")");
  }

  void with_item() {
    expression();
    if (accept_kw("as")) {
      X tg = star_target();
      check_assign(tg);
      if (!is_op(",") && !is_op(":") && !is_op(")")) bad();
    }
  }
  void with_stmt() {
    int line = next().line;
    if (is_op("(")) {  // parenthesized with items, or an expression that starts with '('
      size_t save = p_;
      try {
        next();
        with_item();
        while (accept(",")) {
          if (is_op(")")) break;
          with_item();
        }
        expect(")");
        if (!is_op(":")) bad();
        block("'with' statement", line);
        return;
      } catch (const Fail&) {
        p_ = save;
      }
    }
    with_item();
    while (accept(",")) with_item();
    block("'with' statement", line);
  }
  void decorated() {
    while (accept("@")) {
      named_expression();
      if (at().k != T::Newline) bad();
      next();
    }
    if (is_kw("def")) return def_stmt();
    if (is_kw("class")) return class_stmt();
    if (is_kw("async") && is_kw("def", 1)) {
      next();
      return def_stmt();
    }
    bad();
  }
  void def_stmt() {
    int line = next().line;
    name();
    expect("(");
    params(")", true);
    expect(")");
    if (accept("->")) expression();
    block("function definition", line);
  }
  void class_stmt() {
    int line = next().line;
    name();
    if (accept("(")) {
      if (!is_op(")")) arguments();
      expect(")");
    }
    block("class definition", line);
  }
  // Parameters up to `close` (")" or ":"): order of /, *, **, defaults.
  void params(const char* close, bool annotations) {
    bool slash = false, star = false, dstar = false, defaults = false;
    int count = 0;
    while (!is_op(close)) {
      const Tok& x = at();
      if (dstar) fail_at(x.line, x.col, "arguments cannot follow var-keyword argument");
      if (accept("/")) {
        if (slash) bad("/ may appear only once");
        if (star) bad("/ must be ahead of *");
        if (count == 0) fail_at(x.line, x.col, "at least one argument must precede /");
        slash = true;
      } else if (accept("**")) {
        name();
        if (annotations && accept(":")) expression();
        if (is_op("=")) bad("var-keyword argument cannot have default value");
        dstar = true;
      } else if (accept("*")) {
        if (star) bad("* argument may appear only once");
        star = true;
        if (is_op(",") || is_op(close)) {
          if (is_op(close) || is_op("**", 1) || is_op(close, 1))
            fail_at(at().line, at().col, "named arguments must follow bare *");
        } else {
          name();
          if (annotations && accept(":")) {
            if (is_op("*")) {
              next();
              bitwise_or();
            } else {
              expression();
            }
          }
          if (is_op("=")) bad("var-positional argument cannot have default value");
        }
      } else {
        name();
        ++count;
        if (annotations && accept(":")) expression();
        if (accept("=")) {
          expression();
          if (!star) defaults = true;
        } else if (defaults && !star) {
          fail_at(x.line, x.col + static_cast<int>(x.s.size()), "non-default argument follows default argument");
        }
      }
      if (!accept(",")) break;
    }
    if (!is_op(close)) bad();
  }

  void simple_stmt() {
    const Tok& x = at();
    if (x.k == T::Name) {
      const std::string& w = x.s;
      if (w == "pass" || w == "break" || w == "continue") {
        next();
        return;
      }
      if (w == "return") {
        next();
        if (!at_end_of_simple()) star_expressions();
        return;
      }
      if (w == "raise") {
        next();
        if (!at_end_of_simple()) {
          expression();
          if (accept_kw("from")) expression();
        }
        return;
      }
      if (w == "global" || w == "nonlocal") {
        next();
        name();
        while (accept(",")) name();
        return;
      }
      if (w == "del") {
        next();
        X t = star_expressions();
        check_del(t);
        if (!at_end_of_simple()) bad();
        return;
      }
      if (w == "assert") {
        next();
        expression();
        if (accept(",")) expression();
        return;
      }
      if (w == "import") {
        next();
        do {
          dotted_name();
          if (accept_kw("as")) name();
        } while (accept(","));
        return;
      }
      if (w == "from") {
        next();
        int dots = 0;
        while (is_op(".") || is_op("...")) dots += static_cast<int>(next().s.size());
        if (!is_kw("import")) dotted_name();
        else if (dots == 0) bad();
        expect_kw("import");
        if (accept("*")) return;
        bool par = accept("(");
        do {
          if (par && is_op(")")) break;
          name();
          if (accept_kw("as")) name();
          if (!par && is_op(",") && at_end_of_simple_at(1))
            fail_at(at().line, at().col, "trailing comma not allowed without surrounding parentheses");
        } while (accept(","));
        if (par) expect(")");
        return;
      }
    }
    // expressions, assignments
    X first = is_kw("yield") ? yield_expr() : star_expressions();
    if (is_op(":")) {  // annotated assignment
      if (first.k == E::Tuple && !first.paren) fail_at(first.line, first.col, "only single target (not tuple) can be annotated");
      if (first.k == E::Tuple || first.k == E::List) fail_at(first.line, first.col, "only single target (not tuple) can be annotated");
      if (first.k != E::Name && first.k != E::Attr && first.k != E::Subscript)
        fail_at(first.line, first.col, "illegal target for annotation");
      next();
      expression();
      if (accept("=")) {
        if (is_kw("yield")) yield_expr();
        else star_expressions();
      }
      return;
    }
    static const std::set<std::string> aug = {"+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=", "|=", "^=", ">>=", "<<=", "**="};
    if (at().k == T::Op && aug.count(at().s)) {
      if (first.paren && first.k == E::Tuple) fail_at(first.line, first.col, "'tuple' is an illegal expression for augmented assignment");
      if (first.k != E::Name && first.k != E::Attr && first.k != E::Subscript)
        fail_at(first.line, first.col, "illegal expression for augmented assignment");
      next();
      if (is_kw("yield")) yield_expr();
      else star_expressions();
      return;
    }
    if (is_op("=")) {
      X lhs = first;
      while (accept("=")) {
        check_assign(lhs);
        lhs = is_kw("yield") ? yield_expr() : star_expressions();
      }
      return;
    }
    if (first.k == E::Name && first.what == "print" && !first.paren && at().k != T::Newline && !is_op(";") && at().k != T::End)
      fail_at(first.line, first.col, "Missing parentheses in call to 'print'. Did you mean print(...)?");
  }
  bool at_end_of_simple_at(size_t k) const { return at(k).k == T::Newline || is_op(";", k) || at(k).k == T::End; }
  void dotted_name() {
    name();
    while (accept(".")) name();
  }

  // ---- targets ----
  void check_assign(const X& x) {
    switch (x.k) {
      case E::Name:
      case E::Attr:
      case E::Subscript: return;
      case E::Starred: return check_assign(x.elts[0]);
      case E::Tuple:
      case E::List:
        for (const X& e : x.elts) check_assign(e);
        return;
      case E::Const: fail_at(x.line, x.col, "cannot assign to " + (x.what.empty() ? std::string("literal") : x.what));
      case E::Call: fail_at(x.line, x.col, "cannot assign to function call");
      default: fail_at(x.line, x.col, "cannot assign to expression");
    }
  }
  void check_del(const X& x) {
    switch (x.k) {
      case E::Name:
      case E::Attr:
      case E::Subscript: return;
      case E::Tuple:
      case E::List:
        for (const X& e : x.elts) check_del(e);
        return;
      case E::Starred: fail_at(x.line, x.col, "cannot delete starred");
      default: fail_at(x.line, x.col, "cannot delete expression");
    }
  }
  // star_targets of `for` (stops before `in`): elements at the bitwise-or level.
  X target_list() {
    X first = star_target();
    if (!is_op(",")) return first;
    X t;
    t.k = E::Tuple;
    t.line = first.line;
    t.col = first.col;
    t.elts.push_back(first);
    while (accept(",")) {
      if (is_kw("in") || is_op("=") || is_op(":") || is_op(")")) break;
      t.elts.push_back(star_target());
    }
    return t;
  }
  X star_target() {
    if (is_op("*")) {
      X s;
      s.k = E::Starred;
      s.line = at().line;
      s.col = at().col;
      next();
      s.elts.push_back(star_target());
      return s;
    }
    return bitwise_or();
  }

  // ---- expressions ----
  X star_expressions() {
    X first = star_expression();
    if (!is_op(",")) return first;
    X t;
    t.k = E::Tuple;
    t.line = first.line;
    t.col = first.col;
    t.elts.push_back(first);
    while (accept(",")) {
      if (!starts_expression()) break;
      t.elts.push_back(star_expression());
    }
    return t;
  }
  bool starts_expression() const {
    const Tok& x = at();
    if (x.k == T::Name) {
      static const std::set<std::string> ok = {"not", "lambda", "await", "None", "True", "False", "yield"};
      return !keywords().count(x.s) || ok.count(x.s);
    }
    if (x.k == T::Number || x.k == T::String) return true;
    if (x.k != T::Op) return false;
    static const std::set<std::string> ops = {"(", "[", "{", "-", "+", "~", "*", "...", "**"};
    return ops.count(x.s) > 0;
  }
  X star_expression() {
    if (is_op("*")) {
      X s;
      s.k = E::Starred;
      s.line = at().line;
      s.col = at().col;
      next();
      s.elts.push_back(bitwise_or());
      return s;
    }
    return expression();
  }
  X star_named_expression() {
    if (is_op("*")) return star_expression();
    return named_expression();
  }
  X named_expression() {
    if (at_name() && is_op(":=", 1)) {
      X n;
      n.k = E::Named;
      n.line = at().line;
      n.col = at().col;
      next();
      next();
      expression();
      return n;
    }
    X x = expression();
    if (is_op(":=")) {
      fail_at(x.line, x.col, "cannot use assignment expressions with " + std::string(x.k == E::Attr ? "attribute" : x.k == E::Subscript ? "subscript" : "expression"));
    }
    return x;
  }
  X yield_expr() {
    X y;
    y.k = E::Yield;
    y.line = at().line;
    y.col = at().col;
    next();
    if (accept_kw("from")) {
      expression();
      return y;
    }
    if (starts_expression() && !is_kw("yield")) star_expressions();
    return y;
  }
  X expression() {
    Deep d(*this);
    if (is_kw("lambda")) {
      X l;
      l.line = at().line;
      l.col = at().col;
      next();
      params(":", false);
      expect(":");
      expression();
      return l;
    }
    X x = disjunction();
    if (is_kw("if")) {
      next();
      disjunction();
      if (!accept_kw("else")) fail_at(x.line, x.col, "expected 'else' after 'if' expression");
      expression();
      X o;
      o.line = x.line;
      o.col = x.col;
      o.what = "conditional expression";
      return o;
    }
    return x;
  }
  X disjunction() {
    X x = conjunction();
    if (!is_kw("or")) return x;
    while (accept_kw("or")) conjunction();
    return other(x);
  }
  X conjunction() {
    X x = inversion();
    if (!is_kw("and")) return x;
    while (accept_kw("and")) inversion();
    return other(x);
  }
  X inversion() {
    if (is_kw("not")) {
      X o;
      o.line = at().line;
      o.col = at().col;
      next();
      Deep d(*this);
      inversion();
      return o;
    }
    return comparison();
  }
  X comparison() {
    X x = bitwise_or();
    bool any = false;
    while (true) {
      if (at().k == T::Op && (at().s == "==" || at().s == "!=" || at().s == "<" || at().s == "<=" || at().s == ">" || at().s == ">=")) {
        next();
      } else if (is_kw("in")) {
        next();
      } else if (is_kw("not") && is_kw("in", 1)) {
        next();
        next();
      } else if (is_kw("is")) {
        next();
        accept_kw("not");
      } else {
        break;
      }
      any = true;
      bitwise_or();
    }
    return any ? other(x) : x;
  }
  X other(const X& x) {
    X o;
    o.line = x.line;
    o.col = x.col;
    return o;
  }
  X binary_level(int level) {
    static const std::vector<std::vector<std::string>> ops = {{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
    if (level == 6) return factor();
    X x = binary_level(level + 1);
    bool any = false;
    while (at().k == T::Op) {
      bool hit = false;
      for (const std::string& o : ops[static_cast<size_t>(level)])
        if (at().s == o) hit = true;
      if (!hit) break;
      next();
      binary_level(level + 1);
      any = true;
    }
    return any ? other(x) : x;
  }
  X bitwise_or() { return binary_level(0); }
  X factor() {
    if (is_op("-") || is_op("+") || is_op("~")) {
      X o;
      o.line = at().line;
      o.col = at().col;
      next();
      Deep d(*this);
      factor();
      return o;
    }
    return power();
  }
  X power() {
    X x;
    if (is_kw("await")) {
      x.line = at().line;
      x.col = at().col;
      next();
      primary();
    } else {
      x = primary();
    }
    if (accept("**")) {
      factor();
      return other(x);
    }
    return x;
  }
  X primary() {
    X x = atom();
    while (true) {
      if (is_op(".")) {
        next();
        name();
        x.k = E::Attr;
        x.paren = false;
      } else if (is_op("(")) {
        next();
        if (!is_op(")")) arguments();
        expect(")");
        x.k = E::Call;
        x.paren = false;
      } else if (is_op("[")) {
        next();
        slices();
        expect("]");
        x.k = E::Subscript;
        x.paren = false;
      } else {
        return x;
      }
    }
  }
  void slices() {
    bool first = true;
    do {
      if (!first && is_op("]")) break;
      first = false;
      if (is_op("*")) {
        star_expression();
        continue;
      }
      if (!is_op(":")) named_expression();
      if (accept(":")) {
        if (!is_op(":") && !is_op(",") && !is_op("]")) expression();
        if (accept(":"))
          if (!is_op(",") && !is_op("]")) expression();
      }
    } while (accept(","));
  }
  // Call arguments up to ')'.
  void arguments() {
    bool kw = false, dstar = false;
    int n = 0;
    bool genexp = false;
    while (!is_op(")")) {
      const Tok& x = at();
      ++n;
      if (accept("**")) {
        expression();
        dstar = true;
      } else if (accept("*")) {
        if (dstar) fail_at(x.line, x.col, "iterable argument unpacking follows keyword argument unpacking");
        expression();
      } else if (at().k == T::Name && is_op("=", 1)) {
        if (keywords().count(at().s)) {
          if (at().s == "True" || at().s == "False" || at().s == "None") fail_at(x.line, x.col, "cannot assign to " + at().s);
          bad();
        }
        next();
        next();
        expression();
        kw = true;
      } else {
        X e = named_expression();
        if (is_op("=")) fail_at(e.line, e.col, "expression cannot contain assignment, perhaps you meant \"==\"?");
        if (is_kw("for") || (is_kw("async") && is_kw("for", 1))) {
          comprehension_clauses();
          genexp = true;
        } else {
          if (dstar) fail_at(x.line, x.col, "positional argument follows keyword argument unpacking");
          if (kw) fail_at(x.line, x.col, "positional argument follows keyword argument");
        }
      }
      if (!accept(",")) break;
    }
    if (genexp && n > 1) fail_at(at().line, at().col, "Generator expression must be parenthesized");
    if (!is_op(")")) bad();
  }
  void comprehension_clauses() {
    while (is_kw("for") || (is_kw("async") && is_kw("for", 1))) {
      if (is_kw("async")) next();
      next();
      X tg = target_list();
      check_assign(tg);
      expect_kw("in");
      disjunction();
      while (accept_kw("if")) disjunction();
    }
  }
  X atom() {
    Deep d(*this);
    const Tok& t = at();
    X x;
    x.line = t.line;
    x.col = t.col;
    if (t.k == T::Name) {
      if (t.s == "True" || t.s == "False" || t.s == "None") {
        x.k = E::Const;
        x.what = t.s;
        next();
        return x;
      }
      if (keywords().count(t.s)) bad();
      x.k = E::Name;
      x.what = t.s;
      next();
      return x;
    }
    if (t.k == T::Number) {
      x.k = E::Const;
      x.what = "literal";
      next();
      return x;
    }
    if (t.k == T::String) {
      bool any_bytes = false, any_str = false;
      while (at().k == T::String) {
        const Tok& s = at();
        (s.bytes ? any_bytes : any_str) = true;
        if (any_bytes && any_str) fail_at(s.line, s.col, "cannot mix bytes and nonbytes literals");
        if (s.fstr) check_fstring(s);
        next();
      }
      x.k = E::Const;
      x.what = "literal";
      return x;
    }
    if (t.k != T::Op) bad();
    if (t.s == "...") {
      next();
      x.k = E::Const;
      x.what = "ellipsis";
      return x;
    }
    if (t.s == "(") {
      next();
      if (accept(")")) {
        x.k = E::Tuple;
        x.paren = true;
        return x;
      }
      if (is_kw("yield")) {
        yield_expr();
        expect(")");
        x.k = E::Yield;
        return x;
      }
      X first = star_named_expression();
      if (is_kw("for") || (is_kw("async") && is_kw("for", 1))) {
        if (first.k == E::Starred) fail_at(first.line, first.col, "iterable unpacking cannot be used in comprehension");
        comprehension_clauses();
        expect(")");
        x.k = E::Other;
        return x;
      }
      if (accept(")")) {
        if (first.k == E::Starred) fail_at(first.line, first.col, "cannot use starred expression here");
        first.paren = true;
        return first;
      }
      x.k = E::Tuple;
      x.paren = true;
      x.elts.push_back(first);
      while (accept(",")) {
        if (is_op(")")) break;
        x.elts.push_back(star_named_expression());
      }
      expect(")");
      return x;
    }
    if (t.s == "[") {
      next();
      x.k = E::List;
      if (accept("]")) return x;
      X first = star_named_expression();
      if (is_kw("for") || (is_kw("async") && is_kw("for", 1))) {
        if (first.k == E::Starred) fail_at(first.line, first.col, "iterable unpacking cannot be used in comprehension");
        comprehension_clauses();
        expect("]");
        x.k = E::Other;
        return x;
      }
      x.elts.push_back(first);
      while (accept(",")) {
        if (is_op("]")) break;
        x.elts.push_back(star_named_expression());
      }
      expect("]");
      return x;
    }
    if (t.s == "{") {
      next();
      x.k = E::Other;
      if (accept("}")) return x;
      bool dict;
      if (is_op("**")) {
        next();
        bitwise_or();
        dict = true;
        if (is_kw("for") || (is_kw("async") && is_kw("for", 1))) fail_at(t.line, t.col, "dict unpacking cannot be used in dict comprehension");
      } else {
        X first = star_named_expression();
        if (accept(":")) {
          if (first.k == E::Starred || first.k == E::Named) bad();
          expression();
          dict = true;
        } else {
          dict = false;
        }
        if (is_kw("for") || (is_kw("async") && is_kw("for", 1))) {
          if (first.k == E::Starred) fail_at(first.line, first.col, "iterable unpacking cannot be used in comprehension");
          comprehension_clauses();
          expect("}");
          return x;
        }
      }
      while (accept(",")) {
        if (is_op("}")) break;
        if (dict) {
          if (accept("**")) {
            bitwise_or();
            continue;
          }
          expression();
          if (!accept(":")) fail_at(at().line, at().col, "':' expected after dictionary key");
          expression();
        } else {
          star_named_expression();
        }
      }
      if (dict && !is_op("}") && is_op(":")) bad();
      expect("}");
      return x;
    }
    bad();
  }

  // ---- f-strings (3.11: the fields are parsed from the string token's text) ----
  void check_fstring(const Tok& s) {
    std::string body = src_.substr(s.body_at, s.body_len);
    size_t i = 0;
    fstring_literal(s, body, i, 0);
  }
  // Position of body[i] for messages.
  std::pair<int, int> pos_in(const Tok& s, const std::string& body, size_t i) const {
    int line = s.body_line, col = s.body_col;
    for (size_t k = 0; k < i && k < body.size(); ++k) {
      if (body[k] == '\n') ++line, col = 1;
      else ++col;
    }
    return {line, col};
  }
  [[noreturn]] void ffail(const Tok& s, const std::string& body, size_t i, const std::string& m) const {
    auto [l, c] = pos_in(s, body, i);
    fail_at(l, c, m);
  }
  // Literal text up to the end (level 0) or to the '}' that closes a format spec (level > 0).
  void fstring_literal(const Tok& s, const std::string& b, size_t& i, int level) {
    while (i < b.size()) {
      char c = b[i];
      if (!s.raw && c == '\\' && i + 1 < b.size()) {
        if (b[i + 1] == 'N' && i + 2 < b.size() && b[i + 2] == '{') {
          size_t e = b.find('}', i + 3);
          i = e == std::string::npos ? b.size() : e + 1;
          continue;
        }
        // A backslash does not escape a brace: `\{x}` is a backslash and then a field.
        i += b[i + 1] == '{' || b[i + 1] == '}' ? 1 : 2;
        continue;
      }
      if (c == '{') {
        if (level == 0 && i + 1 < b.size() && b[i + 1] == '{') {
          i += 2;
          continue;
        }
        if (level >= 2) ffail(s, b, i, "f-string: expressions nested too deeply");
        ++i;
        fstring_field(s, b, i, level);
        continue;
      }
      if (c == '}') {
        if (level > 0) return;
        if (i + 1 < b.size() && b[i + 1] == '}') {
          i += 2;
          continue;
        }
        ffail(s, b, i, "f-string: single '}' is not allowed");
      }
      ++i;
    }
    if (level > 0) ffail(s, b, i, "f-string: expecting '}'");
  }
  void fstring_field(const Tok& s, const std::string& b, size_t& i, int level) {
    size_t start = i;
    std::vector<char> nest;
    char quote = 0;
    bool triple = false;
    size_t end = std::string::npos;
    char stop = 0;
    for (; i < b.size(); ++i) {
      char c = b[i];
      if (c == '\\') ffail(s, b, i, "f-string expression part cannot include a backslash");
      if (quote) {
        if (c == quote && (!triple || (i + 2 < b.size() && b[i + 1] == quote && b[i + 2] == quote))) {
          if (triple) i += 2;
          quote = 0;
        }
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        triple = i + 2 < b.size() && b[i + 1] == c && b[i + 2] == c;
        if (triple) i += 2;
        continue;
      }
      if (c == '[' || c == '(' || c == '{') {
        if (nest.size() >= 200) ffail(s, b, i, "f-string: too many nested parenthesis");
        nest.push_back(c);
        continue;
      }
      if (c == '#') ffail(s, b, i, "f-string expression part cannot include '#'");
      if (nest.empty()) {
        if (c == '!' && i + 1 < b.size() && b[i + 1] == '=') {
          ++i;
          continue;
        }
        if ((c == '=' || c == '<' || c == '>') && i + 1 < b.size() && b[i + 1] == '=') {
          ++i;
          continue;
        }
        if (c == '=' && i > start && (b[i - 1] == '<' || b[i - 1] == '>')) continue;
        if (c == '!' || c == ':' || c == '}' || c == '=') {
          end = i;
          stop = c;
          break;
        }
      }
      if (c == ']' || c == ')' || c == '}') {
        if (nest.empty()) ffail(s, b, i, std::string("f-string: unmatched '") + c + "'");
        char o = nest.back();
        if ((o == '[' && c != ']') || (o == '(' && c != ')') || (o == '{' && c != '}'))
          ffail(s, b, i, std::string("f-string: closing parenthesis '") + c + "' does not match opening parenthesis '" + o + "'");
        nest.pop_back();
      }
    }
    if (quote) ffail(s, b, i, "f-string: unterminated string");
    if (end == std::string::npos) {
      if (!nest.empty()) ffail(s, b, i, std::string("f-string: unmatched '") + nest.back() + "'");
      ffail(s, b, i, "f-string: expecting '}'");
    }
    std::string expr = b.substr(start, end - start);
    if (expr.find_first_not_of(" \t\n\r\f") == std::string::npos) ffail(s, b, end, "f-string: empty expression not allowed");
    {
      auto [l, c] = pos_in(s, b, start);
      Lexer lx(expr, l, c, true);
      Parser sub(lx.run(), expr);
      sub.fstring_field();
    }
    if (stop == '=') {
      ++i;
      while (i < b.size() && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n')) ++i;
      if (i >= b.size()) ffail(s, b, i, "f-string: expecting '}'");
      stop = b[i];
      if (stop != '!' && stop != ':' && stop != '}') ffail(s, b, i, "f-string: expecting '}'");
    }
    if (stop == '!') {
      ++i;
      if (i >= b.size()) ffail(s, b, i, "f-string: expecting '}'");
      char conv = b[i];
      if (conv != 's' && conv != 'r' && conv != 'a') ffail(s, b, i, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      ++i;
      if (i >= b.size()) ffail(s, b, i, "f-string: expecting '}'");
      stop = b[i];
      if (stop != ':' && stop != '}') ffail(s, b, i, "f-string: expecting '}'");
    }
    if (stop == ':') {
      ++i;
      fstring_literal(s, b, i, level + 1);
      if (i >= b.size()) ffail(s, b, i, "f-string: expecting '}'");
    }
    if (i >= b.size() || b[i] != '}') ffail(s, b, i, "f-string: expecting '}'");
    ++i;
  }
};

}  // namespace

void check_python_syntax(int file) {
  const std::string& src = Sources::text(file);
  try {
    Lexer lx(src);
    Parser p(lx.run(), src);
    p.file();
  } catch (const Fail& f) {
    throw UserError(SourceLoc{file, f.line, std::max(1, f.col)}, f.msg);
  }
}

}  // namespace dtsim::py
