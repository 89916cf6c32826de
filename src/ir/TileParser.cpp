// The `.tile` parser: tokens -> unverified IR (Module / Kernel / Stmt / Expr built with IR.h's
// builders). Grammar: docs/tile-language.md; each parse function names the rule it parses.
#include "ir/TileParser.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "ir/TileLexer.h"

namespace dtsim {

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

std::optional<AtomicOp> atomic_op_named(const std::string& s) {
  for (AtomicOp op : kAllAtomicOps)
    if (s == atomicop_name(op)) return op;
  return std::nullopt;
}

// The ops spelled as calls (minimum, exp, sum ...), by their `.tile` name, from IR.h's op tables.
template <class Op> const std::map<std::string, Op>& call_ops() {
  static const std::map<std::string, Op> m = [] {
    std::map<std::string, Op> r;
    auto add = [&](auto op) {
      if (op_info(op).form == OpForm::Call) r.emplace(op_info(op).name, op);
    };
    if constexpr (std::is_same_v<Op, UnOp>) for (UnOp op : kAllUnOps) add(op);
    if constexpr (std::is_same_v<Op, BinOp>) for (BinOp op : kAllBinOps) add(op);
    if constexpr (std::is_same_v<Op, RedOp>) for (RedOp op : kAllRedOps) add(op);
    return r;
  }();
  return m;
}

// Names that can be called in an expression (plus the statement-only ones, for messages).
const std::vector<std::string>& builtin_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"program_id", "num_programs", "arange", "zeros", "full", "load", "dot", "where"};
    auto add = [&](auto op) {
      if (op_info(op).form == OpForm::Call) n.push_back(op_info(op).name);
    };
    for (BinOp op : kAllBinOps) add(op);
    for (UnOp op : kAllUnOps) add(op);
    for (RedOp op : kAllRedOps) add(op);
    for (ScanOp op : kAllScanOps) n.push_back(scanop_name(op));
    for (AtomicOp op : kAllAtomicOps) n.push_back(atomicop_name(op));
    for (const char* s : {"expand_dims", "reshape", "broadcast_to", "trans", "permute", "swizzle2d", "int_to_ptr", "ptr_to_int", "machine", "gather", "histogram", "store", "print", "assert", "range"})
      n.push_back(s);
    return n;
  }();
  return names;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(const std::string& name) {
  std::string best;
  size_t best_d = 3;
  for (const std::string& n : builtin_names()) {
    size_t d = edit_distance(name, n);
    if (d < best_d && d * 3 <= std::max<size_t>(n.size(), 3)) {
      best_d = d;
      best = n;
    }
  }
  return best.empty() ? "" : " (did you mean " + q(best) + "?)";
}

// `t op= v` for every infix arithmetic or bitwise op.
std::optional<BinOp> aug_op(const std::string& s) {
  for (BinOp op : kAllBinOps) {
    const OpInfo& i = op_info(op);
    if (i.form == OpForm::Infix && (i.cat == OpCat::Arith || i.cat == OpCat::Bitwise) && s == std::string(i.name) + "=")
      return op;
  }
  return std::nullopt;
}

bool is_keyword(const std::string& s) {
  static const std::set<std::string> kw = {"kernel", "for", "while", "in", "if", "else", "return", "and",
                                           "or",     "not", "True", "False", "None", "inf",    "nan"};
  return kw.count(s) > 0;
}

// One argument of a call: positional or `name=value`; a value is an expression or a `[...]` list.
struct Arg {
  std::string kw;
  SourceLoc loc;
  ExprP e;
  std::vector<ExprP> list;
  bool is_list = false;
  bool is_lambda = false;  // e is a combine function's body: (a, b) -> e
  std::vector<ExprP> fns;  // of N > 1 operands: (a0, .., aN-1, b0, .., bN-1) -> (f0, .., fN-1)
};

constexpr int kMaxDepth = 200;   // nesting limit for expressions and blocks (no stack overflow)
constexpr int kMaxChain = 4096;  // operators in one left-associative chain
constexpr int kMaxHeight = 256;  // height of one expression tree: later passes recurse over it

class Parser {
 public:
  explicit Parser(int file) : file_(file), toks_(lex_tile(file)) {}

  // module := (NEWLINE | kernel)* EOF
  Module module() {
    Module m;
    m.file = Sources::name(file_);
    std::set<std::string> names;
    while (true) {
      skip_newlines();
      if (at().kind == TokKind::Eof) break;
      if (!at().is_ident("kernel")) fail("expected 'kernel'");
      Kernel k = kernel();
      if (!names.insert(k.name).second) user_error(name_loc_, "kernel " + q(k.name) + " is defined twice");
      m.kernels.push_back(std::move(k));
    }
    if (m.kernels.empty()) user_error(at().loc, "no kernel in " + m.file + " (expected 'kernel NAME(...) grid(...) { ... }')");
    return m;
  }

  ExprP lone_expr() {
    skip_newlines();
    ExprP e = expr();
    skip_newlines();
    if (at().kind != TokKind::Eof) fail("unexpected " + at().describe() + " after the expression");
    return e;
  }

 private:
  int file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::vector<std::string> lambda_;  // inside a combine function: its argument names
  int depth_ = 0;
  SourceLoc name_loc_;
  std::set<std::string> sched_seen_;  // the schedule options the kernel being parsed has given

  // ---- token helpers ----
  const Token& at(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = at();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] void fail(const std::string& msg) const { user_error(at().loc, msg); }
  bool accept_op(const char* s) {
    if (!at().is_op(s)) return false;
    next();
    return true;
  }
  const Token& expect_op(const char* s, const std::string& context) {
    if (!at().is_op(s)) fail(std::string("expected '") + s + "' " + context + ", found " + at().describe());
    return next();
  }
  const Token& expect_ident(const std::string& what) {
    if (at().kind != TokKind::Ident || is_keyword(at().text)) fail("expected " + what + ", found " + at().describe());
    return next();
  }
  void skip_newlines() {
    while (at().kind == TokKind::Newline) next();
  }
  void skip_newlines_before(const char* ident) {  // `}` NEWLINE `else`
    size_t p = pos_;
    while (toks_[p].kind == TokKind::Newline) ++p;
    if (toks_[p].is_ident(ident)) pos_ = p;
  }
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& pp) : p(pp) {
      if (++p.depth_ > kMaxDepth) p.fail("expression or block nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  Scalar dtype_name(const Token& t) {
    if (t.kind != TokKind::Ident) user_error(t.loc, "expected a type (i1 i32 i64 f16 bf16 f32 f64), found " + t.describe());
    auto s = parse_scalar(t.text);
    if (!s) user_error(t.loc, "unknown type " + q(t.text) + " (expected i1, i8, i16, i32, i64, f8e4m3, f8e5m2, f8e4b15, f8e4b8, f8e5b16, f16, bf16, f32 or f64)");
    return *s;
  }

  // ---- kernels ----
  // kernel := 'kernel' NAME '(' [param (',' param)*] ')' attr* '{' block '}'
  // attr   := grid '(' expr (',' expr)* ')' | num_warps '(' INT ')' | num_stages '(' INT ')'
  //          | warp_specialize | persistent ['(' INT ')'] | cluster '(' INT ')'
  Kernel kernel() {
    Kernel k;
    sched_seen_.clear();
    k.loc = next().loc;
    const Token& name = expect_ident("a kernel name");
    k.name = name.text;
    name_loc_ = name.loc;
    expect_op("(", "after the kernel name");
    std::set<std::string> seen;
    if (!at().is_op(")")) {
      do {
        k.params.push_back(param());
      } while (accept_op(","));
    }
    expect_op(")", "after the parameters");
    bool has_grid = false;
    while (true) {
      skip_newlines();
      if (at().is_op("{")) break;
      const Token& a = at();
      if (a.is_ident("grid")) {
        next();
        if (has_grid) user_error(a.loc, "grid is given twice");
        has_grid = true;
        expect_op("(", "after 'grid'");
        if (at().is_op(")")) fail("grid() needs 1 to 3 expressions");
        do {
          k.grid.push_back(expr());
        } while (accept_op(","));
        expect_op(")", "after the grid");
        if (k.grid.size() > 3) user_error(a.loc, "grid() takes 1 to 3 expressions, got " + std::to_string(k.grid.size()));
      } else if (a.is_ident("num_warps") || a.is_ident("num_stages")) {
        next();
        expect_op("(", "after " + q(a.text));
        if (at().kind != TokKind::Int) fail("expected an integer in " + a.text + "(), found " + at().describe());
        uint64_t v = next().ival;
        if (v > 1024) user_error(a.loc, a.text + " " + std::to_string(v) + " is too large");
        (a.text == "num_warps" ? k.num_warps : k.num_stages) = static_cast<int>(v);
        expect_op(")", "after " + a.text + "'s value");
      } else if (a.is_ident("warp_specialize") || a.is_ident("persistent") || a.is_ident("cluster")) {
        schedule_option(k);
      } else {
        fail("expected grid(...), num_warps(...), num_stages(...), warp_specialize, persistent, cluster(...) or '{', found " + a.describe());
      }
    }
    if (!has_grid) fail("kernel " + q(k.name) + " needs a grid: write grid(E0[, E1[, E2]]) before '{'");
    k.body = block();
    return k;
  }

  // The schedule options (Kernel::warp_specialize, persistent, cluster), each at most once.
  void schedule_option(Kernel& k) {
    const Token& a = next();
    if (!sched_seen_.insert(a.text).second) user_error(a.loc, a.text + " is given twice");
    if (a.text == "warp_specialize") {
      k.warp_specialize = true;
      return;
    }
    if (a.text == "persistent" && !at().is_op("(")) {
      k.persistent = true;
      return;
    }
    expect_op("(", "after " + q(a.text));
    if (at().kind != TokKind::Int) fail("expected an integer in " + a.text + "(), found " + at().describe());
    const Token& n = next();
    if (a.text == "persistent") {
      if (n.ival < 1 || n.ival > uint64_t(INT32_MAX)) user_error(n.loc, "persistent(N) takes 1 to 2147483647 CTAs, got " + std::to_string(n.ival));
      k.persistent = true;
      k.persistent_ctas = static_cast<int64_t>(n.ival);
    } else {
      if (n.ival != 1 && n.ival != 2) user_error(n.loc, "cluster(N) takes clusters of 1 or 2 CTAs, got " + std::to_string(n.ival));
      k.cluster = static_cast<int64_t>(n.ival);
    }
    expect_op(")", "after " + a.text + "'s value");
  }

  // param := [in|out|inout|scratch] NAME ':' '*' DTYPE ['[' expr (',' expr)* ']']
  //        | NAME ':' DTYPE ['=' expr] | NAME ':' 'constexpr' ['=' expr]
  Param param() {
    skip_newlines();
    Param p;
    std::optional<BufIO> io;
    SourceLoc io_loc = at().loc;
    if (at().kind == TokKind::Ident && at(1).kind == TokKind::Ident) {
      const std::string& w = at().text;
      if (w == "in") io = BufIO::In;
      else if (w == "out") io = BufIO::Out;
      else if (w == "inout") io = BufIO::InOut;
      else if (w == "scratch") io = BufIO::Scratch;
      else fail("unknown parameter qualifier " + q(w) + " (expected in, out, inout or scratch)");
      next();
    }
    const Token& name = expect_ident("a parameter name");
    p.name = name.text;
    p.loc = name.loc;
    expect_op(":", "after parameter " + q(p.name) + " (write NAME: TYPE)");
    if (accept_op("*")) {
      p.kind = ParamKind::Pointer;
      p.dtype = dtype_name(next());
      p.io = io.value_or(BufIO::In);
      if (accept_op("[")) {
        do {
          p.shape.push_back(expr());
        } while (accept_op(","));
        expect_op("]", "after the buffer shape");
      }
      return p;
    }
    if (io) user_error(io_loc, "in/out/inout/scratch apply to pointer parameters only");
    if (at().is_ident("constexpr")) {
      next();
      p.kind = ParamKind::Constexpr;
      p.dtype = Scalar::I32;
    } else {
      p.kind = ParamKind::Scalar;
      p.dtype = dtype_name(next());
    }
    if (accept_op("=")) p.init = expr();
    return p;
  }

  // ---- statements ----
  // block := '{' (NEWLINE | stmt NEWLINE)* '}'
  std::vector<StmtP> block() {
    DepthGuard g(*this);
    const Token& open = expect_op("{", "to open a block");
    SourceLoc open_loc = open.loc;
    std::vector<StmtP> body;
    while (true) {
      skip_newlines();
      if (at().kind == TokKind::Eof) user_error(open_loc, "this '{' is never closed (expected '}' before end of file)");
      if (accept_op("}")) break;
      body.push_back(stmt());
      if (at().kind != TokKind::Newline && !at().is_op("}"))
        fail("expected end of line after the statement, found " + at().describe());
    }
    return body;
  }

  StmtP stmt() {
    const Token& t = at();
    if (t.kind == TokKind::Ident && !is_keyword(t.text)) {
      const Token& n = at(1);
      if (n.is_op("=") || n.is_op(",") || (n.kind == TokKind::Op && aug_op(n.text))) return assignment();
      if (n.is_op("(")) {
        if (t.text == "store") return store_stmt();
        if (t.text == "print") return print_stmt();
        if (t.text == "assert") return assert_stmt();
        if (auto op = atomic_op_named(t.text)) return atomic_stmt(*op, "", t.loc);
      }
    }
    if (t.is_ident("for")) return for_stmt();
    if (t.is_ident("if")) return if_stmt();
    if (t.is_ident("while")) return while_stmt();
    if (t.is_ident("return")) {
      auto s = std::make_shared<Stmt>();
      s->kind = StmtKind::Return;
      s->loc = next().loc;
      return s;
    }
    if (t.is_ident("else")) fail("'else' without a matching 'if'");
    fail("expected a statement (assignment, store, for, while, if, print, assert or return), found " + t.describe());
  }

  // assignment := NAME '=' expr | NAME OP= expr | NAME ',' NAME '=' expr
  StmtP assignment() {
    const Token& target = next();
    SourceLoc loc = target.loc;
    std::vector<std::string> targets{target.text};
    if (accept_op(",")) targets.push_back(expect_ident("a second name to assign").text);
    const Token& op = next();
    if (op.is_op("=")) {
      if (auto aop = atomic_op_named(at().text); aop && at().kind == TokKind::Ident && at(1).is_op("(") && targets.size() == 1)
        return atomic_stmt(*aop, targets[0], loc);
      ExprP v = expr();
      StmtP s = make_assign(targets[0], v, loc);
      s->targets = targets;
      return s;
    }
    std::optional<BinOp> aug = aug_op(op.text);
    if (!aug || op.kind != TokKind::Op || targets.size() != 1)
      user_error(op.loc, "expected '=' after the assignment targets, found " + op.describe());
    ExprP rhs = expr();
    StmtP s = make_assign(targets[0], make_binary(*aug, make_var(targets[0], loc), rhs, op.loc), loc);
    s->aug = aug;
    return s;
  }

  // store := 'store' '(' ptr ',' value [',' mask] ')'    (mask= keyword allowed)
  StmtP store_stmt() {
    SourceLoc loc = at().loc;
    std::vector<std::optional<Arg>> a = call_args("store", {"pointer", "value", "mask"}, 2);
    return make_store(a[0]->e, a[1]->e, a[2] ? a[2]->e : nullptr, loc);
  }

  // atomic := [NAME '='] atomic_OP '(' ptr ',' value [',' mask] [',' sem=S] [',' scope=S] ')'
  //         | [NAME '='] 'atomic_cas' '(' ptr ',' cmp ',' value [',' sem=S] [',' scope=S] ')'
  StmtP atomic_stmt(AtomicOp op, const std::string& target, SourceLoc loc) {
    std::string fn = atomicop_name(op);
    bool cas = op == AtomicOp::Cas;
    std::vector<std::optional<Arg>> a =
        cas ? call_args(fn, {"pointer", "cmp", "value", "sem", "scope"}, 3) : call_args(fn, {"pointer", "value", "mask", "sem", "scope"}, 2);
    StmtP s = make_atomic(op, target, {value(a[0], fn), value(a[1], fn), value(a[2], fn)}, loc);
    auto word = [&](const std::optional<Arg>& w, const char* what) -> std::string {
      ExprP e = value(w, fn);
      if (e->kind != ExprKind::Var) user_error(w->loc, fn + "(): " + what + " must be a name like " + (what[1] == 'e' ? "relaxed" : "gpu"));
      return e->name;
    };
    if (a[3]) {
      auto m = parse_memsem(word(a[3], "sem"));
      if (!m) user_error(a[3]->loc, fn + "(): unknown sem " + q(word(a[3], "sem")) + " (acq_rel, relaxed, acquire or release)");
      s->sem = *m;
    }
    if (a[4]) {
      auto m = parse_memscope(word(a[4], "scope"));
      if (!m) user_error(a[4]->loc, fn + "(): unknown scope " + q(word(a[4], "scope")) + " (gpu, cta or sys)");
      s->scope = *m;
    }
    return s;
  }

  // print := 'print' '(' [STRING] (',' expr)* ')'
  StmtP print_stmt() {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Print;
    s->loc = next().loc;
    expect_op("(", "after 'print'");
    bool first = true;
    if (at().kind == TokKind::String) {
      s->text = next().text;
      first = false;
    }
    while (!at().is_op(")")) {
      if (!first) expect_op(",", "or ')' after a print argument");
      first = false;
      if (at().kind == TokKind::String) fail("print() takes its text first: print(\"text\", values...)");
      s->args.push_back(expr());
    }
    next();
    return s;
  }

  // assert := 'assert' '(' expr [',' STRING {',' expr}] ')'   (the values shown at the first false lane)
  StmtP assert_stmt() {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assert;
    s->loc = next().loc;
    expect_op("(", "after 'assert'");
    s->args.push_back(expr());
    if (accept_op(",")) {
      if (at().kind != TokKind::String) fail("expected a message string, found " + at().describe());
      s->text = next().text;
      while (accept_op(",")) s->args.push_back(expr());
    }
    expect_op(")", "after the assert arguments");
    return s;
  }

  // for := 'for' NAME 'in' 'range' '(' [lo ','] hi [',' step] ')' block
  StmtP for_stmt() {
    SourceLoc loc = next().loc;
    std::string var = expect_ident("a loop variable name").text;
    if (!at().is_ident("in")) fail("expected 'in' after the loop variable, found " + at().describe());
    next();
    if (!at().is_ident("range")) fail("expected 'range(...)' after 'in', found " + at().describe());
    SourceLoc rloc = next().loc;
    expect_op("(", "after 'range'");
    std::vector<ExprP> b;
    if (!at().is_op(")")) {
      do {
        b.push_back(expr());
      } while (accept_op(","));
    }
    expect_op(")", "after the range bounds");
    if (b.empty() || b.size() > 3) user_error(rloc, "range() takes 1 to 3 arguments, got " + std::to_string(b.size()));
    ExprP lo = b.size() == 1 ? make_const_int(0, rloc) : b[0];
    ExprP hi = b.size() == 1 ? b[0] : b[1];
    ExprP step = b.size() == 3 ? b[2] : make_const_int(1, rloc);
    return make_for(var, lo, hi, step, block(), loc);
  }

  // if := 'if' expr block ['else' (if | block)]
  StmtP if_stmt() {
    DepthGuard g(*this);
    SourceLoc loc = next().loc;
    ExprP cond = expr();
    std::vector<StmtP> body = block();
    std::vector<StmtP> orelse;
    skip_newlines_before("else");
    if (at().is_ident("else")) {
      next();
      if (at().is_ident("if")) orelse.push_back(if_stmt());
      else orelse = block();
    }
    return make_if(cond, std::move(body), std::move(orelse), loc);
  }

  // while := 'while' expr block
  StmtP while_stmt() {
    DepthGuard g(*this);
    SourceLoc loc = next().loc;
    ExprP cond = expr();
    return make_while(cond, block(), loc);
  }

  // ---- expressions, loosest first ----
  ExprP expr() {
    DepthGuard g(*this);
    ++expr_nest_;
    SourceLoc loc = at().loc;
    ExprP e = or_expr();
    if (--expr_nest_ == 0 && deeper_than(e, kMaxHeight))
      user_error(loc, "expression too deeply nested (more than " + std::to_string(kMaxHeight) + " levels); split it with variables");
    return e;
  }
  int expr_nest_ = 0;

  // Whether the tree under `e` is more than `limit` nodes high (recursion stops at the limit).
  static bool deeper_than(const ExprP& e, int limit) {
    if (!e) return false;
    if (limit <= 0) return true;
    for (const ExprP& a : e->args)
      if (deeper_than(a, limit - 1)) return true;
    return false;
  }

  // or := and (('||' | 'or') and)*
  ExprP or_expr() {
    ExprP e = and_expr();
    while (at().is_op("||") || at().is_ident("or")) {
      SourceLoc loc = next().loc;
      e = make_binary(BinOp::LOr, e, and_expr(), loc);
    }
    return e;
  }
  // and := not (('&&' | 'and') not)*
  ExprP and_expr() {
    ExprP e = not_expr();
    while (at().is_op("&&") || at().is_ident("and")) {
      SourceLoc loc = next().loc;
      e = make_binary(BinOp::LAnd, e, not_expr(), loc);
    }
    return e;
  }
  // not := ('!' | 'not') not | comparison
  ExprP not_expr() {
    if (at().is_op("!") || at().is_ident("not")) {
      DepthGuard g(*this);
      SourceLoc loc = next().loc;
      return make_unary(UnOp::Not, not_expr(), loc);
    }
    return comparison();
  }
  // comparison := bitor [CMP bitor]   (not chained)
  ExprP comparison() {
    ExprP e = binary_level(0);
    if (auto op = compare_op()) {
      SourceLoc loc = next().loc;
      e = make_binary(*op, e, binary_level(0), loc);
      if (compare_op()) fail("comparisons cannot be chained; combine them with && or &");
    }
    return e;
  }
  std::optional<BinOp> compare_op() const {
    if (at().kind != TokKind::Op) return std::nullopt;
    const std::string& s = at().text;
    for (BinOp op : kAllBinOps)
      if (op_info(op).cat == OpCat::Compare && s == op_info(op).name) return op;
    return std::nullopt;
  }

  // Left-associative binary levels, loosest first: | ^ & (<< >>) (+ -) (* / // %).
  ExprP binary_level(int level) {
    // From the op table: the infix ops of level BitOr + level.
    static const std::vector<std::vector<std::pair<const char*, BinOp>>> levels = [] {
      constexpr int lo = static_cast<int>(Prec::BitOr), hi = static_cast<int>(Prec::Mul);
      std::vector<std::vector<std::pair<const char*, BinOp>>> l(hi - lo + 1);
      for (BinOp op : kAllBinOps) {
        int p = static_cast<int>(op_info(op).prec);
        if (op_info(op).form == OpForm::Infix && p >= lo && p <= hi) l[static_cast<size_t>(p - lo)].push_back({op_info(op).name, op});
      }
      return l;
    }();
    if (level == static_cast<int>(levels.size())) return unary();
    ExprP e = binary_level(level + 1);
    for (int n = 0;; ++n) {
      if (n > kMaxChain) fail("expression too long (more than " + std::to_string(kMaxChain) + " operators in a row)");
      std::optional<BinOp> op;
      for (const auto& [s, b] : levels[static_cast<size_t>(level)])
        if (at().is_op(s)) op = b;
      if (!op) return e;
      SourceLoc loc = next().loc;
      e = make_binary(*op, e, binary_level(level + 1), loc);
    }
  }

  // unary := ('-' | '+' | '~' | '!') unary | postfix.  `-LITERAL` folds into a negative literal.
  ExprP unary() {
    const Token& t = at();
    if (!(t.is_op("-") || t.is_op("+") || t.is_op("~") || t.is_op("!"))) return postfix();
    DepthGuard g(*this);
    std::string op = next().text;
    SourceLoc loc = t.loc;
    const Token& operand_tok = at();
    bool literal = operand_tok.kind == TokKind::Int || operand_tok.kind == TokKind::Float ||
                   operand_tok.is_ident("inf") || operand_tok.is_ident("nan");
    if (op == "-" && literal) negating_ = true;
    ExprP x = unary();
    negating_ = false;
    if (op == "+") return x;
    if (op == "~" || op == "!") return make_unary(UnOp::Not, x, loc);
    if (literal && x->kind == ExprKind::Const && x->weak) {
      if (x->is_float) return make_const_float(-x->fval, loc);
      return make_const_int(static_cast<int64_t>(0 - static_cast<uint64_t>(x->ival)), loc);
    }
    return make_unary(UnOp::Neg, x, loc);
  }
  bool negating_ = false;  // the literal being parsed is the operand of a unary minus

  // postfix := primary ('[' subscript ']' | '.' 'to' '(' DTYPE [',' 'bitcast' '=' BOOL] ')')*
  ExprP postfix() {
    ExprP e = primary();
    for (int n = 0;; ++n) {
      if (n > kMaxChain) fail("too many subscripts or casts in a row");
      if (at().is_op("[")) {
        e = subscript(e);
      } else if (at().is_op(".")) {
        SourceLoc loc = next().loc;
        const Token& m = at();
        if (!m.is_ident("to")) fail("unknown method " + m.describe() + " (only .to(dtype) exists)");
        next();
        expect_op("(", "after '.to'");
        if (at().is_ident("dtype") && at(1).is_op("=")) {
          next();
          next();
        }
        Scalar dt = dtype_name(next());
        bool bitcast = false;
        if (accept_op(",")) {  // .to(T, bitcast=True)
          if (!(at().is_ident("bitcast") && at(1).is_op("="))) fail("expected 'bitcast=True' after the type, found " + at().describe());
          next();
          next();
          const Token& b = next();
          if (!b.is_ident("True") && !b.is_ident("False")) user_error(b.loc, "bitcast= takes True or False, found " + b.describe());
          bitcast = b.is_ident("True");
        }
        expect_op(")", "after the type");
        e = bitcast ? make_bitcast(e, dt, loc) : make_cast(e, dt, loc);
      } else {
        return e;
      }
    }
  }

  // subscript := '[' item (',' item)* ']', item := ':' | 'None'; exactly one None.
  ExprP subscript(const ExprP& x) {
    SourceLoc loc = next().loc;
    int axis = -1, n = 0;
    do {
      if (at().is_ident("None")) {
        if (axis >= 0) fail("only one None per subscript (write x[:, None][None, :] for two)");
        axis = n;
      } else if (!at().is_op(":")) {
        fail("only x[:, None]-style subscripts exist (':' or None), found " + at().describe());
      }
      next();
      ++n;
    } while (accept_op(","));
    expect_op("]", "after the subscript");
    if (axis < 0) user_error(loc, "a subscript needs one None (x[:, None] adds an axis)");
    return make_expand_dims(x, axis, loc);
  }

  // primary := INT | FLOAT | True | False | inf | nan | NAME | NAME '(' args ')' | '(' expr ')'
  ExprP primary() {
    const Token& t = at();
    switch (t.kind) {
      case TokKind::Int: {
        next();
        if (t.ival == uint64_t(1) << 63 && !negating_) user_error(t.loc, "integer literal " + t.text + " is too large");
        return make_const_int(static_cast<int64_t>(t.ival), t.loc);
      }
      case TokKind::Float:
        next();
        return make_const_float(t.fval, t.loc);
      case TokKind::String:
        fail("a string can only be print()'s or assert()'s text");
      case TokKind::Newline:
      case TokKind::Eof:
        fail("expected an expression, found " + t.describe());
      case TokKind::Op:
        if (t.is_op("(")) {
          next();
          ExprP e = expr();
          expect_op(")", "to close the parenthesis");
          return e;
        }
        fail("expected an expression, found " + t.describe());
      case TokKind::Ident:
        break;
    }
    next();
    if (t.text == "True" || t.text == "False") return make_const_bool(t.text == "True", t.loc);
    if (t.text == "inf") return make_const_float(INFINITY, t.loc);
    if (t.text == "nan") return make_const_float(NAN, t.loc);
    if (t.text == "None") user_error(t.loc, "None can only appear in a subscript like x[:, None]");
    if (is_keyword(t.text)) user_error(t.loc, "expected an expression, found " + t.describe());
    if (at().is_op("(")) {
      --pos_;
      return call();
    }
    for (size_t i = 0; i < lambda_.size(); ++i)
      if (t.text == lambda_[i]) return make_combine_arg(static_cast<int>(i), t.loc);
    return make_var(t.text, t.loc);
  }

  // A combine function: '(' NAME ',' NAME ')' '->' expr, its names read as the CombineArgs; of N > 1
  // operands '(' NAME * 2N ')' '->' '(' expr * N ')' (the values so far, then the next elements).
  bool at_lambda() {
    if (!at().is_op("(")) return false;
    size_t i = 1;
    while (at(i).kind == TokKind::Ident && at(i + 1).is_op(",")) i += 2;
    return i >= 3 && at(i).kind == TokKind::Ident && at(i + 1).is_op(")") && at(i + 2).is_op("->");
  }
  std::vector<ExprP> lambda() {
    if (!lambda_.empty()) fail("a combine function cannot contain another");
    next();
    std::vector<std::string> names;
    do {
      names.push_back(next().text);
    } while (accept_op(","));
    next();  // ')'
    next();  // '->'
    for (size_t i = 0; i < names.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (names[i] == names[j]) fail("a combine function needs different argument names");
    if (names.size() % 2) fail("a combine function takes the values so far and the next elements: an even number of arguments");
    const size_t n = names.size() / 2;
    lambda_ = names;
    std::vector<ExprP> bodies;
    try {
      if (n == 1) {
        bodies.push_back(expr());
      } else {
        expect_op("(", "before the " + std::to_string(n) + " results of a combine function of " + std::to_string(n) + " operands");
        SourceLoc extra = at().loc;
        do {
          if (bodies.size() == n) extra = at().loc;
          bodies.push_back(expr());
        } while (accept_op(","));
        expect_op(")", "after the results of a combine function");
        if (bodies.size() != n)
          user_error(extra, "a combine function of " + std::to_string(n) + " operands returns " + std::to_string(n) + " values, got " +
                                std::to_string(bodies.size()));
      }
    } catch (...) {
      lambda_.clear();
      throw;
    }
    lambda_.clear();
    return bodies;
  }

  // args := [arg (',' arg)*], arg := [NAME '='] (expr | '[' expr (',' expr)* ']')
  // Binds the arguments to the parameter names of a builtin; at least `required` must be given.
  std::vector<std::optional<Arg>> call_args(const std::string& fn, const std::vector<std::string>& names,
                                            size_t required) {
    SourceLoc fn_loc = next().loc;
    expect_op("(", "after " + q(fn));
    std::vector<std::optional<Arg>> out(names.size());
    size_t positional = 0, given = 0;
    bool seen_kw = false;
    while (!at().is_op(")")) {
      if (given > 0) {
        if (!at().is_op(",")) fail("expected ')' after arguments, found " + at().describe());
        next();
        if (at().is_op(")")) break;
      }
      Arg a;
      a.loc = at().loc;
      if (at().kind == TokKind::Ident && at(1).is_op("=")) {
        a.kw = next().text;
        next();
        seen_kw = true;
      } else if (seen_kw) {
        fail("a positional argument cannot follow a keyword argument");
      }
      if (at_lambda()) {
        std::vector<ExprP> bodies = lambda();
        if (bodies.size() == 1) a.e = bodies[0];
        else a.fns = std::move(bodies);
        a.is_lambda = true;
      } else if (at().is_op("[")) {
        next();
        a.is_list = true;
        if (!at().is_op("]")) {
          do {
            a.list.push_back(expr());
          } while (accept_op(","));
        }
        expect_op("]", "after the list");
      } else {
        a.e = expr();
      }
      ++given;
      size_t slot = positional;
      if (!a.kw.empty()) {
        auto it = std::find(names.begin(), names.end(), a.kw);
        if (it == names.end()) user_error(a.loc, fn + "() has no argument named " + q(a.kw));
        slot = static_cast<size_t>(it - names.begin());
      } else {
        ++positional;
      }
      if (slot >= names.size())
        user_error(a.loc, fn + "() takes " + arity_text(names.size(), required) + ", got " + std::to_string(given));
      if (out[slot]) user_error(a.loc, fn + "() got argument " + q(names[slot]) + " twice");
      out[slot] = std::move(a);
    }
    next();
    for (size_t i = 0; i < required; ++i)
      if (!out[i]) user_error(fn_loc, fn + "() is missing argument " + q(names[i]) + " (takes " + arity_text(names.size(), required) + ")");
    return out;
  }
  static std::string arity_text(size_t n, size_t required) {
    auto args = [](size_t k) { return std::to_string(k) + (k == 1 ? " argument" : " arguments"); };
    if (n == required) return args(n);
    return std::to_string(required) + " to " + args(n);
  }

  ExprP combine(const std::optional<Arg>& a, const std::string& fn) {
    if (!a || !a->is_lambda) user_error(a ? a->loc : at().loc, fn + "(): combine must be a function like (a, b) -> a + b");
    if (!a->fns.empty()) user_error(a->loc, fn + "(): a combine function of " + std::to_string(a->fns.size()) + " operands needs a list of " +
                                                std::to_string(a->fns.size()) + " operands, [x, y, ...]");
    return a->e;
  }
  // Several operands: `[x, y, ...]` with a combine function of as many components.
  std::vector<ExprP> combine_n(const std::optional<Arg>& xs, const std::optional<Arg>& a, const std::string& fn) {
    if (!a || !a->is_lambda || a->fns.size() != xs->list.size())
      user_error(a ? a->loc : xs->loc, fn + "() of " + std::to_string(xs->list.size()) + " operands needs a combine function (a0, .., b0, ..) -> (f0, ..) of " +
                                           std::to_string(xs->list.size()) + " results");
    return a->fns;
  }
  ExprP value(const std::optional<Arg>& a, const std::string& fn) {
    if (!a) return nullptr;
    if (a->is_lambda) user_error(a->loc, fn + "(): a combine function is not allowed here");
    if (a->is_list) user_error(a->loc, fn + "(): a list is not allowed here");
    return a->e;
  }
  std::vector<ExprP> shape(const std::optional<Arg>& a, const std::string& fn) {
    if (!a->is_list) user_error(a->loc, fn + "() takes a shape list like [64, 32] here");
    if (a->list.empty()) user_error(a->loc, fn + "(): a shape needs at least one extent");
    return a->list;
  }
  // part=K of a reduce / associative_scan of n operands (default 0)
  int part_of(const std::optional<Arg>& a, size_t n, const std::string& fn) {
    if (!a) return 0;
    int k = int_literal(a, fn, "part");
    if (k < 0 || static_cast<size_t>(k) >= n) user_error(a->loc, fn + "(): part must be in 0.." + std::to_string(n - 1) + ", got " + std::to_string(k));
    return k;
  }
  int int_literal(const std::optional<Arg>& a, const std::string& fn, const char* what) {
    ExprP e = value(a, fn);
    if (e->kind != ExprKind::Const || e->is_float || !e->weak || e->ival < -64 || e->ival > 64)
      user_error(a->loc, fn + "(): " + what + " must be an integer literal");
    return static_cast<int>(e->ival);
  }
  Scalar dtype_arg(const std::optional<Arg>& a, const std::string& fn) {
    ExprP e = value(a, fn);
    if (e->kind != ExprKind::Var) user_error(a->loc, fn + "(): expected a type like f32 here");
    auto s = parse_scalar(e->name);
    if (!s) user_error(a->loc, "unknown type " + q(e->name) + " (expected i1, i8, i16, i32, i64, f8e4m3, f8e5m2, f8e4b15, f8e4b8, f8e5b16, f16, bf16, f32 or f64)");
    return *s;
  }

  // call := NAME '(' args ')', NAME a builtin (see docs/tile-language.md)
  ExprP call() {
    const Token& t = at();
    const std::string fn = t.text;
    SourceLoc loc = t.loc;
    if (auto it = call_ops<UnOp>().find(fn); it != call_ops<UnOp>().end()) {
      auto a = call_args(fn, {"x"}, 1);
      return make_unary(it->second, value(a[0], fn), loc);
    }
    if (auto it = call_ops<BinOp>().find(fn); it != call_ops<BinOp>().end()) {
      auto a = call_args(fn, {"x", "y"}, 2);
      return make_binary(it->second, value(a[0], fn), value(a[1], fn), loc);
    }
    if (auto it = call_ops<RedOp>().find(fn); it != call_ops<RedOp>().end()) {
      bool fnop = it->second == RedOp::Fn;
      auto a = fnop ? call_args(fn, {"x", "axis", "combine", "part"}, 3) : call_args(fn, {"x", "axis"}, 2);
      if (fnop && a[0]->is_list && a[0]->list.size() > 1)
        return make_reduce_n(a[0]->list, int_literal(a[1], fn, "axis"), combine_n(a[0], a[2], fn), part_of(a[3], a[0]->list.size(), fn), loc);
      if (fnop && a[3]) user_error(a[3]->loc, fn + "(): part= is for several operands");
      ExprP r = make_reduce(it->second, value(a[0], fn), int_literal(a[1], fn, "axis"), loc);
      if (fnop) r->fn = combine(a[2], fn);
      return r;
    }
    for (ScanOp op : kAllScanOps) {
      if (fn != scanop_name(op)) continue;
      bool fnop = op == ScanOp::Fn;
      auto a = fnop ? call_args(fn, {"x", "axis", "combine", "reverse", "part"}, 3) : call_args(fn, {"x", "axis", "reverse"}, 2);
      std::optional<Arg> comb, part;
      if (fnop) {  // the combine function, read below
        comb = a[2];
        part = a[4];
        a.erase(a.begin() + 4);
        a.erase(a.begin() + 2);
      }
      bool reverse = false;
      if (a[2]) {
        ExprP r = value(a[2], fn);
        if (r->kind != ExprKind::Const || r->is_float || r->dtype != Scalar::I1 || r->weak) user_error(a[2]->loc, fn + "(): reverse must be True or False");
        reverse = r->ival != 0;
      }
      if (fnop && a[0]->is_list && a[0]->list.size() > 1)
        return make_scan_n(a[0]->list, int_literal(a[1], fn, "axis"), reverse, combine_n(a[0], comb, fn), part_of(part, a[0]->list.size(), fn), loc);
      if (fnop && part) user_error(part->loc, fn + "(): part= is for several operands");
      ExprP sc = make_scan(op, value(a[0], fn), int_literal(a[1], fn, "axis"), reverse, loc);
      if (fnop) sc->fn = combine(comb, fn);
      return sc;
    }
    if (atomic_op_named(fn)) user_error(loc, fn + "() is a statement: write `old = " + fn + "(...)` or `" + fn + "(...)` on its own line");
    if (fn == "program_id" || fn == "num_programs") {
      auto a = call_args(fn, {"axis"}, 1);
      int axis = int_literal(a[0], fn, "axis");
      return fn == "program_id" ? make_program_id(axis, loc) : make_num_programs(axis, loc);
    }
    if (fn == "arange") {
      auto a = call_args(fn, {"start", "end"}, 2);
      return make_arange(value(a[0], fn), value(a[1], fn), loc);
    }
    if (fn == "zeros") {
      auto a = call_args(fn, {"shape", "dtype"}, 1);
      Scalar dt = a[1] ? dtype_arg(a[1], fn) : Scalar::F32;
      return make_full(shape(a[0], fn), typed_zero(dt, loc), dt, loc);
    }
    if (fn == "full") {
      auto a = call_args(fn, {"shape", "value", "dtype"}, 3);
      return make_full(shape(a[0], fn), value(a[1], fn), dtype_arg(a[2], fn), loc);
    }
    if (fn == "load") {
      auto a = call_args(fn, {"pointer", "mask", "other"}, 1);
      return make_load(value(a[0], fn), value(a[1], fn), value(a[2], fn), loc);
    }
    if (fn == "dot") {
      auto a = call_args(fn, {"a", "b", "acc", "precision"}, 2);
      ExprP d = make_dot(value(a[0], fn), value(a[1], fn), value(a[2], fn), loc);
      if (a[3]) {
        ExprP p = value(a[3], fn);
        if (p->kind != ExprKind::Var || (p->name != "tf32" && p->name != "ieee"))
          user_error(a[3]->loc, "dot(): precision must be ieee or tf32");
        d->tf32 = p->name == "tf32";
      }
      return d;
    }
    if (fn == "where") {
      auto a = call_args(fn, {"condition", "x", "y"}, 3);
      return make_where(value(a[0], fn), value(a[1], fn), value(a[2], fn), loc);
    }
    if (fn == "expand_dims") {
      auto a = call_args(fn, {"x", "axis"}, 2);
      return make_expand_dims(value(a[0], fn), int_literal(a[1], fn, "axis"), loc);
    }
    if (fn == "reshape" || fn == "broadcast_to") {
      auto a = call_args(fn, {"x", "shape"}, 2);
      return fn == "reshape" ? make_reshape(value(a[0], fn), shape(a[1], fn), loc)
                             : make_broadcast(value(a[0], fn), shape(a[1], fn), loc);
    }
    if (fn == "trans") {
      auto a = call_args(fn, {"x"}, 1);
      return make_trans(value(a[0], fn), loc);
    }
    if (fn == "permute") {  // permute(x, [2, 0, 1]): result dim i is x's dim order[i]
      auto a = call_args(fn, {"x", "order"}, 2);
      return make_permute(value(a[0], fn), shape(a[1], fn), loc);
    }
    if (fn == "swizzle2d") {
      auto a = call_args(fn, {"i", "j", "size_i", "size_j", "size_g"}, 5);
      return make_swizzle2d(value(a[0], fn), value(a[1], fn), value(a[2], fn), value(a[3], fn), value(a[4], fn), loc);
    }
    if (fn == "gather") {  // gather(src, index, axis=1): src's lane index[i] along the axis
      auto a = call_args(fn, {"src", "index", "axis"}, 3);
      return make_gather(value(a[0], fn), value(a[1], fn), int_literal(a[2], fn, "axis"), loc);
    }
    if (fn == "histogram") {  // histogram(x, 512, mask=m): per bin, the lanes of x equal to it
      auto a = call_args(fn, {"x", "bins", "mask"}, 2);
      return make_histogram(value(a[0], fn), value(a[1], fn), value(a[2], fn), loc);
    }
    if (fn == "int_to_ptr") {  // int_to_ptr(addresses, f16): the *f16 pointers at those addresses
      auto a = call_args(fn, {"x", "dtype"}, 2);
      return make_int_to_ptr(value(a[0], fn), dtype_arg(a[1], fn), loc);
    }
    if (fn == "ptr_to_int") {
      auto a = call_args(fn, {"p"}, 1);
      return make_ptr_to_int(value(a[0], fn), loc);
    }
    if (fn == "machine") {  // machine(globaltimer): a reading of the machine (IR.h's DT_FOR_EACH_MACHINE_REG)
      auto a = call_args(fn, {"reg"}, 1);
      ExprP e = value(a[0], fn);
      std::optional<MachineReg> r = e->kind == ExprKind::Var ? parse_machine_reg(e->name) : std::nullopt;
      if (!r) {
        std::string names;
#define X(en, sp, t) names += std::string(names.empty() ? "" : ", ") + sp;
        DT_FOR_EACH_MACHINE_REG(X)
#undef X
        user_error(a[0]->loc, "machine() reads one of " + names);
      }
      return make_machine(*r, loc);
    }
    if (fn == "store" || fn == "print" || fn == "assert")
      user_error(loc, fn + "() is a statement and has no value");
    if (fn == "range") user_error(loc, "range() can only appear in 'for NAME in range(...)'");
    user_error(loc, "unknown function " + q(fn) + did_you_mean(fn));
  }

  static ExprP typed_zero(Scalar dt, SourceLoc loc) {
    if (dt == Scalar::I1) return make_const_bool(false, loc);
    ExprP z = is_float(dt) ? make_const_float(0.0, loc) : make_const_int(0, loc);
    z->weak = false;
    z->dtype = dt;
    return z;
  }
};

}  // namespace

Module parse_tile(int file_id) { return Parser(file_id).module(); }

Module parse_tile_file(const std::string& path) { return parse_tile(Sources::load(path)); }

ExprP parse_tile_expr(int file_id) { return Parser(file_id).lone_expr(); }

}  // namespace dtsim
