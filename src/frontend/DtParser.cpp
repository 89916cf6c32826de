// The `.dt` lexer and recursive-descent parser (source text -> DtProgram), and the AST printer.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <sstream>

#include "frontend/DtAst.h"

namespace dtsim {

namespace {

enum class Tok { Name, Number, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  SourceLoc loc;
};

// Splits the source into names, numbers and punctuation; `#` comments run to the end of the line.
std::vector<Token> lex(int file) {
  const std::string& s = Sources::text(file);
  std::vector<Token> out;
  int line = 1, col = 1;
  size_t i = 0;
  auto adv = [&](size_t n) {
    for (size_t j = 0; j < n; ++j, ++i) {
      if (s[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '#') { while (i < s.size() && s[i] != '\n') adv(1); continue; }
    if (std::isspace(static_cast<unsigned char>(c))) { adv(1); continue; }
    Token t;
    t.loc = SourceLoc{file, line, col};
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.kind = Tok::Name;
      t.text = s.substr(i, j - i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          j = k;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        }
      }
      t.kind = Tok::Number;
      t.text = s.substr(i, j - i);
      if (std::count(t.text.begin(), t.text.end(), '.') > 1) user_error(t.loc, "malformed number '" + t.text + "'");
    } else {
      static const char* two[] = {"<=", ">=", "==", "!="};
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      for (const char* d : two)
        if (s.compare(i, 2, d) == 0) t.text = d;
      if (std::string("[](),;:.=+-*/<>").find(c) == std::string::npos)
        user_error(t.loc, std::string("unexpected character '") + c + "'");
    }
    adv(t.text.size());
    out.push_back(t);
  }
  Token end;
  end.loc = SourceLoc{file, line, col};
  out.push_back(end);
  return out;
}

class Parser {
 public:
  Parser(int file, DtProgram& p) : toks_(lex(file)), p_(p) {}

  // file ::= (decl | def | sched)* ; every statement ends in ';'
  void parse_file() {
    while (peek().kind != Tok::End) {
      const Token& t = peek();
      if (t.kind != Tok::Name) user_error(t.loc, "expected a declaration, a definition or a schedule call, got '" + t.text + "'");
      if (t.text == "Func" || t.text == "In" || t.text == "SIn" || t.text == "Var" || t.text == "RVar") {
        parse_decl();
      } else if (peek(1).text == "[") {
        parse_def();
      } else if (peek(1).text == ".") {
        parse_sched();
      } else {
        user_error(peek(1).loc, "expected '[' (a definition) or '.' (a schedule call) after '" + t.text + "'");
      }
      expect(";", "at the end of the statement");
    }
  }

 private:
  std::vector<Token> toks_;
  size_t pos_ = 0;
  DtProgram& p_;

  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token next() { Token t = peek(); if (pos_ < toks_.size() - 1) ++pos_; return t; }
  bool accept(const std::string& s) {
    if (peek().kind == Tok::Punct && peek().text == s) { ++pos_; return true; }
    return false;
  }
  Token expect(const std::string& s, const std::string& ctx) {
    if (peek().kind != Tok::Punct || peek().text != s) {
      std::string got = peek().kind == Tok::End ? "end of file" : "'" + peek().text + "'";
      user_error(peek().loc, "expected '" + s + "' " + ctx + ", got " + got);
    }
    return next();
  }
  Token expect_name(const std::string& what) {
    if (peek().kind != Tok::Name) {
      std::string got = peek().kind == Tok::End ? "end of file" : "'" + peek().text + "'";
      user_error(peek().loc, "expected " + what + ", got " + got);
    }
    return next();
  }
  int64_t expect_int(const std::string& what) {
    Token t = next();
    if (t.kind != Tok::Number || t.text.find_first_of(".eE") != std::string::npos)
      user_error(t.loc, "expected " + what + " (an integer), got '" + t.text + "'");
    return small_int(t);
  }

  // An integer literal up to 2^31 - 1 (sizes, extents, factors).
  static int64_t small_int(const Token& t) {
    if (t.text.size() > 10 || std::stoll(t.text) > 2147483647) user_error(t.loc, "integer " + t.text + " is too large (at most 2147483647)");
    return std::stoll(t.text);
  }
  // A finite number literal.
  static double number(const Token& t) {
    double d = std::strtod(t.text.c_str(), nullptr);
    if (!std::isfinite(d)) user_error(t.loc, "number " + t.text + " is out of range");
    return d;
  }

  // decl ::= KIND item (',' item)* ;  item ::= NAME [':' TYPE] ['=' ['-'] NUMBER]
  void parse_decl() {
    Token kw = next();
    DtSymKind kind = kw.text == "Func" ? DtSymKind::Func : kw.text == "In" ? DtSymKind::In
                   : kw.text == "SIn" ? DtSymKind::SIn : kw.text == "Var" ? DtSymKind::Var : DtSymKind::RVar;
    do {
      Token n = expect_name("a name to declare");
      if (n.text == "inf") user_error(n.loc, "'inf' is the literal infinity (write -inf for minus infinity) and cannot be declared");
      DtSymbol s;
      s.kind = kind;
      s.name = n.text;
      s.loc = n.loc;
      if (kind == DtSymKind::SIn) s.value = 1.0;
      if (accept(":")) {
        Token ty = expect_name("an element type (f32, f16, bf16, i32)");
        auto sc = parse_scalar(ty.text);
        if (kind == DtSymKind::Var || kind == DtSymKind::RVar) user_error(ty.loc, "a dimension has no element type (write `Var x = 128;` for its size)");
        if (!sc || (*sc != Scalar::F32 && *sc != Scalar::F16 && *sc != Scalar::BF16 && *sc != Scalar::I32))
          user_error(ty.loc, "unknown element type '" + ty.text + "' (expected f32, f16, bf16 or i32)");
        s.dtype = *sc;
      }
      if (accept("=")) {
        bool neg = accept("-");
        Token v = next();
        if (v.kind != Tok::Number) user_error(v.loc, "expected a number, got '" + v.text + "'");
        double d = number(v) * (neg ? -1 : 1);
        if (kind == DtSymKind::Var || kind == DtSymKind::RVar) {
          if (v.text.find_first_of(".eE") != std::string::npos || neg || d < 1)
            user_error(v.loc, "a dimension size must be a positive integer, got '" + std::string(neg ? "-" : "") + v.text + "'");
          s.size = small_int(v);
        } else if (kind == DtSymKind::SIn) {
          s.value = d;
        } else {
          user_error(v.loc, std::string("a ") + kw.text + " has no default value (only Var/RVar sizes and SIn scalars do)");
        }
        s.has_default = true;
      }
      if (p_.sym_index.count(s.name)) {
        const DtSymbol& old = p_.syms[static_cast<size_t>(p_.sym_index[s.name])];
        user_error(n.loc, "'" + s.name + "' is already declared (as " + dt_sym_kind_name(old.kind) + " at line " + std::to_string(old.loc.line) + ")");
      }
      p_.sym_index[s.name] = static_cast<int>(p_.syms.size());
      p_.syms.push_back(s);
    } while (accept(","));
  }

  // def ::= NAME '[' NAME (',' NAME)* ']' '=' expr
  void parse_def() {
    Token n = next();
    DtSymbol* f = p_.find(n.text);
    if (!f) user_error(n.loc, "'" + n.text + "' is not declared (declare it with `Func " + n.text + ";`)");
    if (f->kind != DtSymKind::Func) user_error(n.loc, "'" + n.text + "' is " + article(f->kind) + ", not a Func; only a Func can be defined");
    if (f->defined) user_error(n.loc, "'" + n.text + "' is already defined at line " + std::to_string(f->def_loc.line) + " (a Func has one definition)");
    expect("[", "after the Func name");
    std::vector<std::string> dims;
    do {
      Token d = expect_name("a dimension name");
      for (auto& e : dims)
        if (e == d.text) user_error(d.loc, "dimension '" + d.text + "' appears twice on the left side");
      dims.push_back(d.text);
      check_dim(d);
    } while (accept(","));
    expect("]", "after the dimensions");
    expect("=", "in the definition");
    f->dims = dims;
    f->def = parse_expr();
    f->def_loc = n.loc;
    f->defined = true;
    p_.def_order.push_back(f->name);
  }

  void check_dim(const Token& d) {
    const DtSymbol* s = p_.find(d.text);
    if (!s) user_error(d.loc, "'" + d.text + "' is not declared (declare it with `Var " + d.text + ";`)");
    if (s->kind != DtSymKind::Var && s->kind != DtSymKind::RVar)
      user_error(d.loc, "'" + d.text + "' is " + article(s->kind) + ", not a dimension (Var/RVar)");
  }

  static std::string article(DtSymKind k) {
    switch (k) {
      case DtSymKind::Func: return "a Func";
      case DtSymKind::In: return "an In tensor";
      case DtSymKind::SIn: return "an SIn scalar";
      case DtSymKind::Var: return "a Var";
      case DtSymKind::RVar: return "an RVar";
    }
    return "";
  }

  // sched ::= NAME '.' PRIM '(' [sarg (',' sarg)*] ')' ; sarg ::= INT | NAME [':' (INT | NAME '/' INT)]
  void parse_sched() {
    DtSchedCall c;
    Token f = next();
    c.func = f.text;
    c.loc = f.loc;
    expect(".", "before the schedule primitive");
    Token prim = expect_name("a schedule primitive");
    c.prim = prim.text;
    expect("(", "after '" + prim.text + "'");
    if (!accept(")")) {
      do {
        DtSchedArg a;
        a.loc = peek().loc;
        if (peek().kind == Tok::Number) {
          a.has_value = true;
          a.value = expect_int("a number");
        } else {
          a.name = expect_name("a dimension").text;
          if (accept(":")) {
            if (peek().kind == Tok::Name) {
              a.inner = next().text;
              expect("/", "in a map split `v:inner/factor`");
              a.factor = expect_int("the split factor");
            } else {
              a.has_value = true;
              a.value = expect_int("a tile or block extent");
            }
          }
        }
        c.args.push_back(a);
      } while (accept(","));
      expect(")", "to close the argument list");
    }
    p_.calls.push_back(c);
  }

  // Nesting (parentheses, unary minus, call arguments) is bounded, so that no input overflows the stack.
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;
  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& pp, const SourceLoc& at) : p(pp) {
      if (++p.depth_ > kMaxDepth) user_error(at, "expression nested too deeply (more than 200 levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // expr ::= add [CMP add]
  DtExprP parse_expr() {
    DepthGuard guard(*this, peek().loc);
    DtExprP a = parse_add();
    static const std::set<std::string> cmps = {"<", "<=", ">", ">=", "==", "!="};
    if (peek().kind == Tok::Punct && cmps.count(peek().text)) {
      Token op = next();
      a = binary(op, a, parse_add());
    }
    return a;
  }
  // add ::= mul (('+'|'-') mul)*
  DtExprP parse_add() {
    DtExprP a = parse_mul();
    while (peek().kind == Tok::Punct && (peek().text == "+" || peek().text == "-")) {
      Token op = next();
      a = binary(op, a, parse_mul());
    }
    return a;
  }
  // mul ::= unary (('*'|'/') unary)*
  DtExprP parse_mul() {
    DtExprP a = parse_unary();
    while (peek().kind == Tok::Punct && (peek().text == "*" || peek().text == "/")) {
      Token op = next();
      a = binary(op, a, parse_unary());
    }
    return a;
  }
  // unary ::= '-' unary | primary
  DtExprP parse_unary() {
    if (peek().kind == Tok::Punct && peek().text == "-") {
      DepthGuard guard(*this, peek().loc);
      Token m = next();
      auto e = std::make_shared<DtExpr>();
      e->kind = DtExprKind::Neg;
      e->loc = m.loc;
      e->args = {parse_unary()};
      return e;
    }
    return parse_primary();
  }
  // primary ::= NUMBER | 'inf' | NAME | NAME '[' NAME, ... ']' | NAME '(' expr, ... ')' | '(' expr ')'
  DtExprP parse_primary() {
    Token t = next();
    auto e = std::make_shared<DtExpr>();
    e->loc = t.loc;
    if (t.kind == Tok::Number) {
      e->kind = DtExprKind::Num;
      e->is_int = t.text.find_first_of(".eE") == std::string::npos;
      e->num = number(t);
      if (e->is_int && e->num > 2147483647.0) user_error(t.loc, "integer " + t.text + " is too large (at most 2147483647; write it as a float)");
      return e;
    }
    if (t.kind == Tok::Punct && t.text == "(") {
      DtExprP in = parse_expr();
      expect(")", "to close the parenthesis");
      return in;
    }
    if (t.kind != Tok::Name) {
      std::string got = t.kind == Tok::End ? "end of file" : "'" + t.text + "'";
      user_error(t.loc, "expected an expression, got " + got);
    }
    e->name = t.text;
    if (t.text == "inf" && !(peek().kind == Tok::Punct && (peek().text == "[" || peek().text == "("))) {
      e->kind = DtExprKind::Num;  // the literal infinity (`-inf` is its negation)
      e->num = std::numeric_limits<double>::infinity();
      return e;
    }
    if (accept("[")) {
      e->kind = DtExprKind::Access;
      do {
        Token d = expect_name("a dimension name as index");
        auto ix = std::make_shared<DtExpr>();
        ix->kind = DtExprKind::Name;
        ix->name = d.text;
        ix->loc = d.loc;
        e->args.push_back(ix);
      } while (accept(","));
      expect("]", "to close the index list");
    } else if (accept("(")) {
      e->kind = DtExprKind::Call;
      if (!accept(")")) {
        do e->args.push_back(parse_expr());
        while (accept(","));
        expect(")", "to close the call");
      }
    } else {
      e->kind = DtExprKind::Name;
    }
    return e;
  }

  DtExprP binary(const Token& op, DtExprP a, DtExprP b) {
    auto e = std::make_shared<DtExpr>();
    e->kind = DtExprKind::Binary;
    e->loc = op.loc;
    e->op = op.text;
    e->args = {a, b};
    return e;
  }
};

void print_expr_tree(std::ostringstream& os, const DtExprP& e, int indent) {
  os << std::string(static_cast<size_t>(indent), ' ');
  switch (e->kind) {
    case DtExprKind::Num: os << "Num " << dt_expr_str(e); break;
    case DtExprKind::Name: os << "Name " << e->name; break;
    case DtExprKind::Access: os << "Access " << e->name; break;
    case DtExprKind::Call: os << "Call " << e->name; break;
    case DtExprKind::Binary: os << "Binary " << e->op; break;
    case DtExprKind::Neg: os << "Neg"; break;
  }
  os << " : " << scalar_name(e->type) << (e->weak ? " (literal)" : "") << "  @" << e->loc.line << ":" << e->loc.col << "\n";
  for (auto& a : e->args) print_expr_tree(os, a, indent + 2);
}

}  // namespace

std::shared_ptr<DtProgram> parse_dt_syntax(int file_id) {
  auto p = std::make_shared<DtProgram>();
  p->file_id = file_id;
  Parser(file_id, *p).parse_file();
  return p;
}

std::shared_ptr<DtProgram> parse_dt(int file_id) {
  auto p = parse_dt_syntax(file_id);
  dt_check(*p);
  return p;
}

std::shared_ptr<DtProgram> parse_dt_file(const std::string& path) { return parse_dt(Sources::load(path)); }

std::string print_dt_ast(const DtProgram& p) {
  std::ostringstream os;
  os << "DtProgram " << (p.file_id >= 0 ? Sources::name(p.file_id) : "<generated>") << "\n";
  for (const DtSymbol& s : p.syms) {
    os << "  " << dt_sym_kind_name(s.kind) << " " << s.name;
    switch (s.kind) {
      case DtSymKind::Func:
      case DtSymKind::In:
        os << ": " << scalar_name(s.dtype);
        if (!s.dims.empty()) {
          os << " [";
          for (size_t i = 0; i < s.dims.size(); ++i) os << (i ? ", " : "") << s.dims[i];
          os << "]";
        }
        break;
      case DtSymKind::SIn: os << ": " << scalar_name(s.dtype) << " = " << s.value; break;
      case DtSymKind::Var:
      case DtSymKind::RVar: os << " = " << s.size << (s.has_default ? "" : " (default)"); break;
    }
    os << "  @" << s.loc.line << ":" << s.loc.col << "\n";
  }
  for (const DtSizeTie& t : p.ties)
    os << "  Tie " << t.own << " = " << t.other << "  by " << t.access << " (dim " << t.pos << ")  @" << t.loc.line << ":" << t.loc.col << "\n";
  for (const std::string& f : p.def_order) {
    const DtSymbol& s = p.sym(f);
    os << "  Def " << f << "[";
    for (size_t i = 0; i < s.dims.size(); ++i) os << (i ? ", " : "") << s.dims[i];
    os << "]  @" << s.def_loc.line << ":" << s.def_loc.col << "\n";
    print_expr_tree(os, s.def, 4);
  }
  for (const DtSchedCall& c : p.calls) os << "  Schedule " << dt_call_str(c) << "  @" << c.loc.line << ":" << c.loc.col << "\n";
  return os.str();
}

}  // namespace dtsim
