// The Python-subset parser: tokens -> syntax tree (PyAst.h). Module-level statements that are not
// kernel material (host code: classes, with, try, statements the subset cannot parse) are skipped
// and kept as `Other` nodes, so a file that also holds its launch script still loads; function
// bodies are parsed only for functions decorated with something (`@triton.jit`, ...).
#include <algorithm>
#include <set>

#include "pyfront/PyAst.h"
#include "pyfront/PyLexer.h"
#include "pyfront/PySyntax.h"

namespace dtsim::py {

namespace {

constexpr int kMaxDepth = 150;
constexpr int kMaxChain = 256;  // operators in one left-associative chain (the tree's height)

const std::set<std::string>& keywords() {
  static const std::set<std::string> kw = {"False", "None", "True", "and", "as", "assert", "async", "await", "break",
                                           "class", "continue", "def", "del", "elif", "else", "except", "finally",
                                           "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
                                           "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return kw;
}

NodeP mk(NK k, SourceLoc loc) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->loc = loc;
  return n;
}

class Parser {
 public:
  explicit Parser(int file) : file_(file), toks_(lex_python(file)) {}
  Parser(int file, std::vector<Token> toks) : file_(file), toks_(std::move(toks)) {}

  // file := (NEWLINE | statement)* EOF, host statements skipped
  PyModule module() {
    PyModule m;
    m.file = file_;
    m.path = Sources::name(file_);
    while (at().kind != Tok::Eof) {
      if (at().kind == Tok::Newline) {
        next();
        continue;
      }
      m.body.push_back(top_statement());
    }
    return m;
  }

  NodeP lone_expr() {
    NodeP e = test();
    if (at().kind != Tok::Eof) fail("unexpected " + at().describe() + " in an f-string field");
    return e;
  }

  // debugger_expr := testlist EOF   (a tuple without parentheses is a tuple, as in pdb's `p 1, 2`)
  NodeP debugger_expr() {
    if (at().kind == Tok::Eof) fail("expected an expression");
    NodeP e = testlist();
    if (at().kind != Tok::Eof) fail("unexpected " + at().describe() + " after the expression");
    return e;
  }

 private:
  int file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int decorator_depth_ = 0;  // > 0 while parsing a decorator expression

  const Token& at(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = at();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] void fail(const std::string& msg) const { user_error(at().loc, msg); }
  bool accept(const char* op) {
    if (!at().is_op(op)) return false;
    next();
    return true;
  }
  const Token& expect(const char* op, const std::string& context) {
    if (!at().is_op(op)) fail(std::string("expected '") + op + "' " + context + ", found " + at().describe());
    return next();
  }
  bool at_kw(const char* k) const { return at().is_name(k); }
  const Token& expect_name(const std::string& what) {
    if (at().kind != Tok::Name || keywords().count(at().text)) fail("expected " + what + ", found " + at().describe());
    return next();
  }
  struct Guard {
    Parser& p;
    explicit Guard(Parser& pp) : p(pp) {
      if (++p.depth_ > kMaxDepth) p.fail("nested too deeply");
    }
    ~Guard() { --p.depth_; }
  };

  // ---- module level ----
  NodeP top_statement() {
    size_t start = pos_;
    const Token& t = at();
    if (t.is_op("@") || t.is_name("def")) return top_function();
    if (t.is_name("if") || t.is_name("try")) {
      try {
        return top_conditional();
      } catch (const UserError&) {  // valid Python (checked) the subset does not read: host code
        pos_ = start;
        return skip_statement();
      }
    }
    if (t.is_name("import") || t.is_name("from")) {
      try {
        return statement(true);
      } catch (const UserError&) {  // valid Python (checked) the subset does not read: host code
        pos_ = start;
        return skip_statement();
      }
    }
    if (t.kind == Tok::Name && !keywords().count(t.text)) {
      // A constant (`GROUP = 8`, `NAME: tl.constexpr = 8`) or host code: parse what the subset can.
      try {
        NodeP s = simple_statements();
        return s;
      } catch (const UserError&) {
        pos_ = start;
      }
    }
    return skip_statement();
  }

  // A module-level `if` / `try` (with its elif / else / except / finally parts): the module-level
  // statements of every part, in order, as the body of an Other node with text "conditional" (which
  // part runs is the host's business: the reader binds a name the first time a part binds it, so
  // `try: from triton.language.extra.libdevice import rsqrt` / `except ...: from ...cuda.libdevice
  // import rsqrt` and `if HAS_X: def f ... else: def f ...` give one binding each).
  NodeP top_conditional() {
    NodeP n = mk(NK::Other, at().loc);
    n->text = "conditional";
    do {
      next();  // if / elif / else / try / except / finally
      skip_balanced([](const Token& t) { return t.kind == Tok::Newline || t.is_op(":"); });
      expect(":", "after the header");
      if (at().kind != Tok::Newline) {  // `if X: import y` on one line
        n->body.push_back(top_statement());
        continue;
      }
      next();
      if (at().kind != Tok::Indent) fail("expected an indented block");
      next();
      while (at().kind != Tok::Dedent && at().kind != Tok::Eof) {
        if (at().kind == Tok::Newline) {
          next();
          continue;
        }
        n->body.push_back(top_statement());
      }
      if (at().kind == Tok::Dedent) next();
    } while (at_kw("elif") || at_kw("else") || at_kw("except") || at_kw("finally"));
    return n;
  }

  // A module-level function. The file is valid Python (checked before), so when the subset cannot
  // read it, its error is kept for when the function is used, and the reading goes on after it: a
  // kernel that is never launched nor called cannot stop the others.
  NodeP top_function() {
    size_t start = pos_;
    try {
      return statement(true);
    } catch (const UserError& e) {
      pos_ = start;
      NodeP n = mk(NK::FunctionDef, at().loc);
      n->deferred_error = e.what();
      n->deferred_loc = e.loc;
      bool jit = false;
      while (at().kind != Tok::Eof && !at().is_name("def")) {  // the decorators
        if (at().is_name("jit")) jit = true;
        next();
      }
      if (jit) n->kids.push_back(mk(NK::Name, at().loc)), n->kids.back()->text = "jit";
      if (at().is_name("def")) {
        n->loc = next().loc;
        if (at().kind == Tok::Name) n->text = at().text;
      }
      // the header, then the body (a block, or the rest of the line)
      skip_balanced([](const Token& t) { return t.is_op(":"); });
      if (at().is_op(":")) next();
      size_t body = pos_;
      if (at().kind == Tok::Newline) {
        next();
        if (at().kind == Tok::Indent) skip_block();
      } else {
        while (at().kind != Tok::Newline && at().kind != Tok::Eof) next();
        if (at().kind == Tok::Newline) next();
      }
      for (size_t i = body; i + 1 < pos_; ++i)  // the names it calls (which kernels are entry points)
        if (toks_[i].kind == Tok::Name && toks_[i + 1].is_op("(")) {
          NodeP call = mk(NK::Call, toks_[i].loc);
          NodeP callee = mk(NK::Name, toks_[i].loc);
          callee->text = toks_[i].text;
          call->kids.push_back(callee);
          NodeP st = mk(NK::ExprStmt, toks_[i].loc);
          st->kids.push_back(call);
          n->body.push_back(st);
        }
      if (n->text.empty()) n->kind = NK::Other;
      return n;
    }
  }

  // Skips one logical line and, when it opens a block, the block. The result is an `Other` node.
  // Skips tokens up to the first one outside brackets for which stop() holds (or the end of the file).
  template <class Stop> void skip_balanced(Stop stop) {
    int depth = 0;
    while (at().kind != Tok::Eof && !(depth == 0 && stop(at()))) {
      if (at().is_op("(") || at().is_op("[") || at().is_op("{")) ++depth;
      if (at().is_op(")") || at().is_op("]") || at().is_op("}")) --depth;
      next();
    }
  }
  NodeP skip_statement() {
    NodeP n = mk(NK::Other, at().loc);
    while (at().kind != Tok::Newline && at().kind != Tok::Eof) next();
    if (at().kind == Tok::Newline) next();
    if (at().kind == Tok::Indent) skip_block();
    return n;
  }
  void skip_block() {
    int d = 0;
    do {
      if (at().kind == Tok::Indent) ++d;
      if (at().kind == Tok::Dedent) --d;
      if (at().kind == Tok::Eof) return;
      next();
    } while (d > 0);
  }

  // ---- statements ----
  // statement := decorated | def | if | for | while | simple_statements
  NodeP statement(bool top = false) {
    Guard g(*this);
    const Token& t = at();
    if (t.is_op("@") || t.is_name("def")) return function_def(top);
    if (t.is_name("if")) return if_statement();
    if (t.is_name("for")) return for_statement();
    if (t.is_name("while")) {
      NodeP n = mk(NK::While, next().loc);
      n->kids.push_back(named_test());
      n->body = block();
      if (at_kw("else")) fail("while ... else is not supported");
      return n;
    }
    if (t.is_name("class") || t.is_name("with") || t.is_name("try") || t.is_name("async")) {
      if (top) return skip_statement();
      fail("'" + t.text + "' is not supported in a Triton kernel");
    }
    return simple_statements();
  }

  // decorated := ('@' expr NEWLINE)* 'def' NAME '(' params ')' ['->' expr] ':' block
  NodeP function_def(bool top) {
    std::vector<NodeP> decorators;
    while (accept("@")) {
      size_t start = pos_;
      ++decorator_depth_;
      try {
        decorators.push_back(test());
      } catch (const UserError&) {
        --decorator_depth_;
        if (!top) throw;
        // host code the subset does not read (`@triton.autotune(configs=[triton.Config(...) for ...])`):
        // only whether it is `jit` matters to the reader
        pos_ = start;
        skip_balanced([](const Token& t) { return t.kind == Tok::Newline; });
        bool jit = std::any_of(toks_.begin() + static_cast<std::ptrdiff_t>(start), toks_.begin() + static_cast<std::ptrdiff_t>(pos_),
                               [](const Token& t) { return t.is_name("jit"); });
        NodeP d = mk(jit ? NK::Name : NK::Other, toks_[start].loc);
        if (jit) d->text = "jit";
        decorators.push_back(d);
        ++decorator_depth_;
      }
      --decorator_depth_;
      if (at().kind != Tok::Newline) fail("expected end of line after the decorator, found " + at().describe());
      next();
    }
    if (!at_kw("def")) fail("expected 'def' after the decorators, found " + at().describe());
    NodeP n = mk(NK::FunctionDef, next().loc);
    n->kids = decorators;
    n->text = expect_name("a function name").text;
    expect("(", "after the function name");
    while (!at().is_op(")")) {
      Param p;
      p.loc = at().loc;
      if (accept("*") || accept("**")) {
        p.star = true;
        if (at().is_op(",")) {  // bare `*`: keyword-only marker
          next();
          continue;
        }
      }
      if (accept("/")) {
        if (!at().is_op(")")) expect(",", "after '/'");
        continue;
      }
      p.name = expect_name("a parameter name").text;
      if (accept(":")) p.annotation = test();
      if (accept("=")) p.def = test();
      n->params.push_back(p);
      if (!at().is_op(")")) expect(",", "or ')' after a parameter");
    }
    next();
    if (accept("->")) test();
    n->end = at().loc;
    if (top && !mentions_jit(decorators)) {  // a host function: its body is not kernel material
      expect(":", "after the function header");
      if (at().kind == Tok::Newline) {
        next();
        if (at().kind != Tok::Indent) fail("expected an indented block");
        skip_block();
      } else {
        while (at().kind != Tok::Newline && at().kind != Tok::Eof) next();
        if (at().kind == Tok::Newline) next();
      }
      return n;
    }
    n->body = block();
    return n;
  }

  // Whether a decorator list names `jit` (`@triton.jit`, `@jit`), the mark of kernel material.
  static bool mentions_jit(const std::vector<NodeP>& ds) {
    for (const NodeP& d : ds)
      if (mentions_jit(d)) return true;
    return false;
  }
  static bool mentions_jit(const NodeP& d) {
    if (!d) return false;
    if ((d->kind == NK::Name || d->kind == NK::Attr) && d->text == "jit") return true;
    for (const NodeP& k : d->kids)
      if (mentions_jit(k)) return true;
    return false;
  }

  // block := ':' (simple_statements | NEWLINE INDENT statement+ DEDENT)
  std::vector<NodeP> block() {
    expect(":", "to open a block");
    std::vector<NodeP> body;
    if (at().kind != Tok::Newline) {
      body.push_back(simple_statements());
      return body;
    }
    next();
    if (at().kind != Tok::Indent) fail("expected an indented block, found " + at().describe());
    next();
    while (at().kind != Tok::Dedent && at().kind != Tok::Eof) body.push_back(statement());
    if (at().kind == Tok::Dedent) next();
    return body;
  }

  // if := 'if' test block ('elif' test block)* ['else' block]
  NodeP if_statement() {
    NodeP n = mk(NK::If, next().loc);
    n->kids.push_back(named_test());
    n->body = block();
    if (at_kw("elif")) {
      n->orelse.push_back(if_statement());
    } else if (at_kw("else")) {
      next();
      n->orelse = block();
    }
    return n;
  }

  // for := 'for' targets 'in' testlist block ['else' block]
  NodeP for_statement() {
    NodeP n = mk(NK::For, next().loc);
    n->kids.push_back(target_list());
    if (!at_kw("in")) fail("expected 'in' after the loop variable, found " + at().describe());
    next();
    n->kids.push_back(testlist());
    n->body = block();
    if (at_kw("else")) fail("for ... else is not supported");
    return n;
  }

  NodeP target_list() {
    SourceLoc loc = at().loc;
    std::vector<NodeP> items;
    items.push_back(bitor_expr());
    while (accept(",")) {
      if (at_kw("in") || at().is_op("=")) break;
      items.push_back(bitor_expr());
    }
    if (items.size() == 1) return items[0];
    NodeP t = mk(NK::Tuple, loc);
    t->kids = items;
    return t;
  }

  // simple_statements := small (';' small)* NEWLINE   (several become an If-less list: only one kept
  // per node, so they are returned as consecutive statements through a Tuple-free wrapper)
  NodeP simple_statements() {
    NodeP s = small_statement();
    if (at().is_op(";")) {
      NodeP group = mk(NK::If, s->loc);  // if True: a; b  -- a statement list in one node
      group->op = "group";
      group->body.push_back(s);
      while (accept(";")) {
        if (at().kind == Tok::Newline) break;
        group->body.push_back(small_statement());
      }
      s = group;
    }
    if (at().kind != Tok::Newline && at().kind != Tok::Eof) fail("expected end of line, found " + at().describe());
    if (at().kind == Tok::Newline) next();
    return s;
  }

  NodeP small_statement() {
    const Token& t = at();
    if (t.is_name("pass")) return mk(NK::Pass, next().loc);
    if (t.is_name("break")) return mk(NK::Break, next().loc);
    if (t.is_name("continue")) return mk(NK::Continue, next().loc);
    if (t.is_name("return")) {
      NodeP n = mk(NK::Return, next().loc);
      n->kids.push_back(at().kind == Tok::Newline || at().is_op(";") ? nullptr : testlist());
      return n;
    }
    if (t.is_name("assert")) {
      NodeP n = mk(NK::Assert, next().loc);
      n->kids.push_back(test());
      n->kids.push_back(accept(",") ? test() : nullptr);
      return n;
    }
    if (t.is_name("import")) {
      NodeP n = mk(NK::Import, next().loc);
      do {
        std::string mod = dotted_name();
        std::string alias = mod;
        if (at_kw("as")) {
          next();
          alias = expect_name("a name after 'as'").text;
        }
        n->names.push_back({mod, alias});
      } while (accept(","));
      return n;
    }
    if (t.is_name("from")) {
      NodeP n = mk(NK::ImportFrom, next().loc);
      std::string dots;
      while (at().is_op(".") || at().is_op("...")) dots += next().text;
      n->text = dots + (at_kw("import") ? "" : dotted_name());
      if (!at_kw("import")) fail("expected 'import', found " + at().describe());
      next();
      bool paren = accept("(");
      if (accept("*")) {
        n->names.push_back({"*", "*"});
      } else {
        do {
          if (paren && at().is_op(")")) break;
          std::string name = expect_name("a name to import").text;
          std::string alias = name;
          if (at_kw("as")) {
            next();
            alias = expect_name("a name after 'as'").text;
          }
          n->names.push_back({name, alias});
        } while (accept(","));
      }
      if (paren) expect(")", "after the imported names");
      return n;
    }
    if (t.is_name("global") || t.is_name("nonlocal") || t.is_name("del") || t.is_name("raise") || t.is_name("yield"))
      fail("'" + t.text + "' is not supported in a Triton kernel");
    // expression statement / assignment
    SourceLoc loc = t.loc;
    NodeP first = testlist_star();
    if (at().kind == Tok::Op && at().text.size() >= 2 && at().text.back() == '=' && at().text != "==" &&
        at().text != "<=" && at().text != ">=" && at().text != "!=") {
      NodeP n = mk(NK::AugAssign, at().loc);
      std::string op = next().text;
      n->op = op.substr(0, op.size() - 1);
      n->kids = {first, testlist()};
      n->loc = loc;
      return n;
    }
    if (at().is_op(":")) {
      next();
      NodeP n = mk(NK::AnnAssign, loc);
      NodeP ann = test();
      n->kids = {first, ann, accept("=") ? testlist() : nullptr};
      return n;
    }
    if (at().is_op("=")) {
      NodeP n = mk(NK::Assign, loc);
      n->kids.push_back(first);
      while (accept("=")) n->kids.push_back(testlist_star());
      return n;
    }
    NodeP n = mk(NK::ExprStmt, loc);
    n->kids.push_back(first);
    return n;
  }

  std::string dotted_name() {
    std::string s = expect_name("a module name").text;
    while (accept(".")) s += "." + expect_name("a module name").text;
    return s;
  }

  // ---- expressions ----
  NodeP testlist() { return testlist_star(); }
  NodeP testlist_star() {
    SourceLoc loc = at().loc;
    NodeP e = test_or_star();
    if (!at().is_op(",")) return e;
    NodeP t = mk(NK::Tuple, loc);
    t->kids.push_back(e);
    while (accept(",")) {
      if (at().kind == Tok::Newline || at().is_op("=") || at().is_op(")") || at().is_op(";") || at().kind == Tok::Eof ||
          (at().kind == Tok::Op && at().text.size() >= 2 && at().text.back() == '='))
        break;
      t->kids.push_back(test_or_star());
    }
    return t;
  }
  NodeP test_or_star() {
    if (at().is_op("*")) {
      NodeP n = mk(NK::Starred, next().loc);
      n->kids.push_back(bitor_expr());
      return n;
    }
    return test();
  }

  NodeP named_test() {
    NodeP e = test();
    if (at().is_op(":=")) fail("':=' is not supported in a Triton kernel");
    return e;
  }

  // test := or_test ['if' or_test 'else' test]
  NodeP test() {
    Guard g(*this);
    if (at_kw("lambda")) {
      // A decorator's lambda (@triton.heuristics({'EVEN': lambda args: ...})) is host code: parsed, kept
      // as a Lambda node that nothing evaluates. Anywhere else it is an error.
      if (decorator_depth_ == 0) fail("lambda is not supported in a Triton kernel");
      NodeP n = mk(NK::Lambda, next().loc);
      while (!at().is_op(":")) {
        if (at().kind == Tok::Newline || at().kind == Tok::Eof) fail("expected ':' in the lambda, found " + at().describe());
        next();
      }
      next();
      n->kids.push_back(test());
      return n;
    }
    NodeP e = or_test();
    if (at_kw("if")) {
      NodeP n = mk(NK::IfExp, next().loc);
      NodeP c = or_test();
      if (!at_kw("else")) fail("expected 'else' in a conditional expression, found " + at().describe());
      next();
      n->kids = {c, e, test()};
      return n;
    }
    return e;
  }
  NodeP or_test() {
    NodeP e = and_test();
    if (!at_kw("or")) return e;
    NodeP n = mk(NK::BoolOp, at().loc);
    n->op = "or";
    n->kids.push_back(e);
    while (at_kw("or")) {
      next();
      n->kids.push_back(and_test());
    }
    return n;
  }
  NodeP and_test() {
    NodeP e = not_test();
    if (!at_kw("and")) return e;
    NodeP n = mk(NK::BoolOp, at().loc);
    n->op = "and";
    n->kids.push_back(e);
    while (at_kw("and")) {
      next();
      n->kids.push_back(not_test());
    }
    return n;
  }
  NodeP not_test() {
    if (at_kw("not")) {
      Guard g(*this);
      NodeP n = mk(NK::UnaryOp, next().loc);
      n->op = "not";
      n->kids.push_back(not_test());
      return n;
    }
    return comparison();
  }
  std::string comp_op() {
    const Token& t = at();
    if (t.kind == Tok::Op && (t.text == "<" || t.text == ">" || t.text == "==" || t.text == ">=" || t.text == "<=" || t.text == "!="))
      return t.text;
    if (t.is_name("in")) return "in";
    if (t.is_name("is")) return at(1).is_name("not") ? "is not" : "is";
    if (t.is_name("not") && at(1).is_name("in")) return "not in";
    return "";
  }
  NodeP comparison() {
    NodeP e = bitor_expr();
    std::string op = comp_op();
    if (op.empty()) return e;
    NodeP n = mk(NK::Compare, at().loc);
    n->kids.push_back(e);
    while (!(op = comp_op()).empty()) {
      n->ops.push_back(op);
      next();
      if (op == "is not" || op == "not in") next();
      n->kids.push_back(bitor_expr());
    }
    return n;
  }
  NodeP binary(int level) {
    static const std::vector<std::vector<const char*>> levels = {
        {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
    if (level == static_cast<int>(levels.size())) return factor();
    NodeP e = binary(level + 1);
    for (int count = 0;; ++count) {
      if (count > kMaxChain) fail("expression too long (more than " + std::to_string(kMaxChain) + " operators in a row); split it with variables");
      const char* found = nullptr;
      for (const char* op : levels[static_cast<size_t>(level)])
        if (at().is_op(op)) found = op;
      if (!found) return e;
      NodeP n = mk(NK::BinOp, next().loc);
      n->op = found;
      n->kids = {e, binary(level + 1)};
      e = n;
    }
  }
  NodeP bitor_expr() { return binary(0); }
  NodeP factor() {
    if (at().is_op("-") || at().is_op("+") || at().is_op("~")) {
      Guard g(*this);
      NodeP n = mk(NK::UnaryOp, at().loc);
      n->op = next().text;
      n->kids.push_back(factor());
      return n;
    }
    return power();
  }
  NodeP power() {
    NodeP e = postfix();
    if (at().is_op("**")) {
      Guard g(*this);
      NodeP n = mk(NK::BinOp, next().loc);
      n->op = "**";
      n->kids = {e, factor()};
      return n;
    }
    return e;
  }
  NodeP postfix() {
    NodeP e = atom();
    for (int count = 0;; ++count) {
      if (count > kMaxChain) fail("too many calls, subscripts or attributes in a row");
      if (at().is_op("(")) {
        NodeP n = mk(NK::Call, next().loc);
        n->kids.push_back(e);
        std::vector<NodeP> kwvals;
        while (!at().is_op(")")) {
          if (at().is_op("**")) fail("'**kwargs' is not supported in a Triton kernel");
          if (at().kind == Tok::Name && at(1).is_op("=")) {
            n->kw.push_back(next().text);
            next();
            kwvals.push_back(test());
          } else {
            if (!kwvals.empty()) fail("a positional argument cannot follow keyword arguments");
            n->kids.push_back(test_or_star());
            if (at_kw("for")) fail("comprehensions are not supported in a Triton kernel");
          }
          if (!at().is_op(")")) expect(",", "or ')' after an argument");
        }
        next();
        for (auto& v : kwvals) n->kids.push_back(v);
        e = n;
      } else if (at().is_op("[")) {
        NodeP n = mk(NK::Subscript, next().loc);
        n->kids.push_back(e);
        do {
          if (at().is_op("]")) break;
          n->kids.push_back(subscript_item());
        } while (accept(","));
        expect("]", "after the subscript");
        e = n;
      } else if (at().is_op(".")) {
        NodeP n = mk(NK::Attr, next().loc);
        n->kids.push_back(e);
        n->text = expect_name("an attribute name").text;
        e = n;
      } else {
        return e;
      }
    }
  }
  NodeP subscript_item() {
    SourceLoc loc = at().loc;
    NodeP lo;
    if (!at().is_op(":")) {
      lo = test();
      if (!at().is_op(":")) return lo;
    }
    NodeP n = mk(NK::Slice, loc);
    next();
    NodeP hi, step;
    if (!at().is_op(":") && !at().is_op(",") && !at().is_op("]")) hi = test();
    if (accept(":") && !at().is_op(",") && !at().is_op("]")) step = test();
    n->kids = {lo, hi, step};
    return n;
  }

  NodeP atom() {
    const Token& t = at();
    switch (t.kind) {
      case Tok::Int: {
        NodeP n = mk(NK::Int, t.loc);
        n->ival = static_cast<int64_t>(t.ival);
        n->big = t.big || t.ival > static_cast<uint64_t>(INT64_MAX);
        n->text = t.text;
        next();
        return n;
      }
      case Tok::Float: {
        NodeP n = mk(NK::Float, t.loc);
        n->fval = t.fval;
        n->text = t.text;
        next();
        return n;
      }
      case Tok::String: return strings();
      case Tok::Name: break;
      case Tok::Op:
        if (t.is_op("(") || t.is_op("[")) {
          bool list = t.is_op("[");
          NodeP n = mk(list ? NK::List : NK::Tuple, next().loc);
          const char* close = list ? "]" : ")";
          if (accept(close)) return n;
          NodeP e = test_or_star();
          if (at_kw("for")) fail("comprehensions are not supported in a Triton kernel");
          if (!list && at().is_op(")")) {
            next();
            return e;  // parenthesized expression
          }
          n->kids.push_back(e);
          while (accept(",")) {
            if (at().is_op(close)) break;
            n->kids.push_back(test_or_star());
          }
          expect(close, list ? "to close the list" : "to close the parenthesis");
          return n;
        }
        if (t.is_op("...")) return mk(NK::Ellipsis, next().loc);
        if (t.is_op("{")) {  // parsed for decorators (triton.Config({...})); an error when a kernel evaluates it
          NodeP n = mk(NK::Dict, next().loc);
          while (!at().is_op("}")) {
            if (accept("**")) n->kids.push_back(bitor_expr());
            else n->kids.push_back(test());
            if (accept(":")) n->kids.push_back(test());
            if (at_kw("for")) fail("comprehensions are not supported in a Triton kernel");
            if (!at().is_op("}")) expect(",", "or '}' in a dict");
          }
          next();
          return n;
        }
        fail("expected an expression, found " + t.describe());
      default:
        fail("expected an expression, found " + t.describe());
    }
    if (t.text == "None") return mk(NK::NoneLit, next().loc);
    if (t.text == "True") return mk(NK::TrueLit, next().loc);
    if (t.text == "False") return mk(NK::FalseLit, next().loc);
    if (keywords().count(t.text)) fail("expected an expression, found " + t.describe());
    NodeP n = mk(NK::Name, t.loc);
    n->text = t.text;
    next();
    return n;
  }

  // STRING+ (adjacent literals concatenate; any f-string makes the whole an FStr)
  NodeP strings() {
    SourceLoc loc = at().loc;
    NodeP f = mk(NK::FStr, loc);
    f->parts.push_back("");
    bool any_f = false;
    while (at().kind == Tok::String) {
      const Token& t = next();
      if (!t.fstring) {
        f->parts.back() += t.text;
        continue;
      }
      any_f = true;
      fstring_fields(t, *f);
    }
    if (!any_f) {
      NodeP s = mk(NK::Str, loc);
      s->text = f->parts[0];
      return s;
    }
    return f;
  }

  // Splits an f-string's raw text into literal pieces and `{expr[!r][:spec]}` fields.
  void fstring_fields(const Token& t, Node& f) {
    const std::string& raw = t.text;
    size_t base = offset_of(t.body);
    SourceLoc cur = t.body;
    auto loc_at = [&](size_t i) {
      SourceLoc l = t.body;
      for (size_t k = 0; k < i; ++k) {
        if (raw[k] == '\n') {
          ++l.line;
          l.col = 1;
        } else {
          ++l.col;
        }
      }
      return l;
    };
    (void)cur;
    for (size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c == '{' && i + 1 < raw.size() && raw[i + 1] == '{') {
        f.parts.back() += '{';
        ++i;
      } else if (c == '}' && i + 1 < raw.size() && raw[i + 1] == '}') {
        f.parts.back() += '}';
        ++i;
      } else if (c == '{') {
        size_t j = i + 1;
        int d = 0;
        while (j < raw.size() && !(d == 0 && (raw[j] == '}' || raw[j] == '!' || (raw[j] == ':' ) || raw[j] == '='))) {
          if (raw[j] == '(' || raw[j] == '[') ++d;
          if (raw[j] == ')' || raw[j] == ']') --d;
          if ((raw[j] == '=' || raw[j] == '!') && j + 1 < raw.size() && raw[j + 1] == '=') {
            j += 2;
            continue;
          }
          ++j;
        }
        if (j >= raw.size()) user_error(loc_at(i), "this f-string field is never closed");
        std::vector<Token> toks = lex_python_part(t.loc.file, base + i + 1, base + j, loc_at(i + 1));
        NodeP e = Parser(file_, std::move(toks)).lone_expr();
        bool self_doc = raw[j] == '=';
        if (self_doc) {
          f.parts.back() += raw.substr(i + 1, j - i);
          ++j;
        }
        size_t k = j;
        while (k < raw.size() && raw[k] != '}') ++k;
        if (k >= raw.size()) user_error(loc_at(i), "this f-string field is never closed");
        f.kids.push_back(e);
        f.parts.push_back("");
        i = k;
      } else if (c == '}') {
        user_error(loc_at(i), "single '}' in an f-string (write '}}')");
      } else if (c == '\\' && i + 1 < raw.size()) {
        char e = raw[++i];
        f.parts.back() += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        f.parts.back() += c;
      }
    }
  }
};

}  // namespace

NodeP parse_python_expr(int file) {
  const std::string& text = Sources::text(file);
  std::vector<Token> toks = lex_python_part(file, 0, text.size(), SourceLoc{file, 1, 1});
  return Parser(file, std::move(toks)).debugger_expr();
}

PyModule parse_python(int file) {
  check_python_syntax(file);
  return Parser(file).module();
}

}  // namespace dtsim::py
