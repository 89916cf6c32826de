// Tile IR -> a Triton Python module. Each kernel becomes a @triton.jit function with the IR's
// variable names and statements one for one; each IR op maps to its tl.* form, with casts inserted
// where Triton's typing differs from the IR's contract (IR.h):
//   * math functions on f16/bf16/ints compute in f32 (x.to(tl.float32)) and round back, as the IR does;
//   * sum() of f16/bf16 accumulates in f32, of i1 in i32; i1 operands of arithmetic become i32;
//   * dot of f32 is input_precision="ieee" (no tf32); minimum/maximum propagate NaN;
//   * shift counts are taken mod the width; logical && || become & | of i1 values;
//   * load/store pointers are broadcast to the full access shape (the IR broadcasts all operands).
// Host-side expressions (grids, buffer shapes) are plain Python with C-style // and %.
// A kernel's schedule options take Triton's own spellings (docs/triton.md): `warp_specialize` puts
// `warp_specialize=True` on its first top-level dot loop's tl.range; `persistent` / `persistent(N)`
// is the persistent form of Triton's tutorial 09: min(NUM_SMS, tiles) programs, each running
// `for _tile_id in tl.range(tl.program_id(0), _num_tiles, NUM_SMS, flatten=True)` over the original
// grid's tiles (axis 0 fastest, as the CUDA backend walks them), the tile loop then carrying
// warp_specialize; cluster(2) has no Triton spelling of the same schedule and is left out.
#include "triton/TritonEmitter.h"
#include "ir/Printer.h"
#include "ir/Walk.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <tuple>

#include "triton/TritonRuntime.h"

namespace dtsim {

namespace {

// Python precedence levels, loosest first (comparisons do not chain: both sides need a tighter level).
enum Prec : int { kCompare = 4, kBitOr = 5, kBitXor = 6, kBitAnd = 7, kShift = 8, kAdd = 9, kMul = 10, kUnary = 11, kAtom = 12 };

struct Py {
  std::string s;
  int prec = kAtom;
};

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> r = {
      // Python keywords and the names the emitted module itself uses
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
      "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
      "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "tl", "triton", "torch", "np", "os",
      "sys", "argparse", "libdevice", "range", "float", "int", "min", "max", "abs", "bool", "len", "print", "launch",
      "run", "bench", "bind", "grid", "_tanh", "_i1", "_tdiv", "_tmod", "NUM_SMS", "_num_sms", "_tile_id", "_num_tiles",
      "_pid0", "_pid1", "_pid2", "_grid0", "_grid1", "_grid2"};
  return r;
}

std::string py_name(const std::string& n) { return reserved_names().count(n) ? n + "_" : n; }

const char* tl_type(Scalar s) {
  switch (s) {
    case Scalar::I1: return "tl.int1";
    case Scalar::I8: return "tl.int8";
    case Scalar::I16: return "tl.int16";
    case Scalar::F8E4M3: return "tl.float8e4nv";
    case Scalar::F8E5M2: return "tl.float8e5";
    case Scalar::F8E4B15: return "tl.float8e4b15";
    case Scalar::F8E4B8: return "tl.float8e4b8";
    case Scalar::F8E5B16: return "tl.float8e5b16";
    case Scalar::I32: return "tl.int32";
    case Scalar::I64: return "tl.int64";
    case Scalar::F16: return "tl.float16";
    case Scalar::BF16: return "tl.bfloat16";
    case Scalar::F32: return "tl.float32";
    case Scalar::F64: return "tl.float64";
  }
  return "?";
}

int int_width(Scalar s) { return s == Scalar::I64 ? 64 : 32; }

// Shortest decimal form that reads back as the same double; inf/nan as float("...").
std::string float_literal(double v) {
  if (std::isnan(v)) return "float(\"nan\")";
  if (std::isinf(v)) return v < 0 ? "float(\"-inf\")" : "float(\"inf\")";
  return format_float_literal(v);  // the .tile printer's form is valid Python for finite values
}

std::string value_literal(const ScalarValue& v) {
  if (v.dtype_is_float()) return float_literal(v.f);
  return std::to_string(v.i);
}

std::string dims_list(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string op_error_name(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Dot: return "dot";
    case ExprKind::Reduce: return redop_name(e.rop);
    case ExprKind::Unary: return unop_name(e.uop);
    case ExprKind::Binary: return binop_name(e.bop);
    case ExprKind::Const:
    case ExprKind::Var:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::Where:
    case ExprKind::Cast:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Load:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      return expr_kind_name(e.kind);
    case ExprKind::Scan: return scanop_name(e.sop);
  }
  return expr_kind_name(e.kind);
}

// ---------------------------------------------------------------------------------------------
// Host-side expressions: grid extents, buffer shapes (parameters only; Python ints).
// ---------------------------------------------------------------------------------------------
std::string host_expr(const ExprP& e, const std::function<std::string(const std::string&)>& var) {
  if (!e) internal_error("TritonEmitter", "missing host operand");
  auto sub = [&](size_t i) { return host_expr(e->args.at(i), var); };
  switch (e->kind) {
    case ExprKind::Const:
      if (e->is_float) return float_literal(e->fval);
      return std::to_string(e->ival);
    case ExprKind::Var: return var(e->name);
    case ExprKind::Unary:
      if (e->uop == UnOp::Neg) return "(-" + sub(0) + ")";
      break;
    case ExprKind::Cast: return std::string(is_float(e->dtype) ? "float(" : "int(") + sub(0) + ")";
    case ExprKind::Where: return "(" + sub(1) + " if " + sub(0) + " else " + sub(2) + ")";
    case ExprKind::Binary:
      switch (e->bop) {
        case BinOp::Add:
        case BinOp::Sub:
        case BinOp::Mul:
        case BinOp::Div:
        case BinOp::And:
        case BinOp::Or:
        case BinOp::Xor:
        case BinOp::Shl:
        case BinOp::Shr:
          return "(" + sub(0) + " " + binop_name(e->bop) + " " + sub(1) + ")";
        case BinOp::Lt:
        case BinOp::Le:
        case BinOp::Gt:
        case BinOp::Ge:
        case BinOp::Eq:
        case BinOp::Ne:
          return "int(" + sub(0) + " " + binop_name(e->bop) + " " + sub(1) + ")";
        case BinOp::LAnd: return "int(bool(" + sub(0) + ") and bool(" + sub(1) + "))";
        case BinOp::LOr: return "int(bool(" + sub(0) + ") or bool(" + sub(1) + "))";
        case BinOp::FloorDiv: return "_tdiv(" + sub(0) + ", " + sub(1) + ")";
        case BinOp::Mod: return "_tmod(" + sub(0) + ", " + sub(1) + ")";
        case BinOp::Min:
        case BinOp::MinNum: return "min(" + sub(0) + ", " + sub(1) + ")";
        case BinOp::Max:
        case BinOp::MaxNum: return "max(" + sub(0) + ", " + sub(1) + ")";
        case BinOp::Cdiv: return "triton.cdiv(" + sub(0) + ", " + sub(1) + ")";
        DT_MATH_BINOP_CASES break;
      }
      break;
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      break;
  }
  user_error(e->loc, std::string("'") + op_error_name(*e) + "' in a grid or shape expression has no host-side Python form");
}

// ---------------------------------------------------------------------------------------------
// Kernel bodies
// ---------------------------------------------------------------------------------------------
// The helpers the module needs, noted while its kernels are written.
struct Uses {
  bool tanh = false, i1 = false, tf32 = false;
  bool libdevice = false;  // libdevice.<fn>: math functions tl does not have
  bool scan_max = false, scan_min = false;  // combine functions of cummax / cummin
  std::vector<std::string> combine_fns;      // @triton.jit functions of reduce / associative_scan, in order
};

class KernelWriter {
 public:
  KernelWriter(const Kernel& k, std::string& out, Uses& uses) : k_(k), out_(out), uses_(uses) {
    for (const Param& p : k.params)
      if (p.kind == ParamKind::Constexpr) constexprs_.insert(p.name);
  }

  void write() {
    out_ += "@triton.jit\ndef " + py_name(k_.name) + "(";
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      out_ += (i ? ", " : "") + py_name(p.name) + (p.kind == ParamKind::Constexpr ? ": tl.constexpr" : "");
    }
    if (k_.persistent) out_ += std::string(k_.params.empty() ? "" : ", ") + "NUM_SMS: tl.constexpr";
    out_ += "):\n";
    bool any = false;
    // Python floats reach Triton as fp32: narrow f16/bf16 scalar parameters to their declared type.
    for (const Param& p : k_.params)
      if (p.kind == ParamKind::Scalar && (p.dtype == Scalar::F16 || p.dtype == Scalar::BF16)) {
        out_ += "    " + py_name(p.name) + " = " + py_name(p.name) + ".to(" + tl_type(p.dtype) + ")\n";
        any = true;
      }
    if (k_.warp_specialize)
      for (const StmtP& s : k_.body)
        if (s->kind == StmtKind::For && any_dot(s->body)) {
          ws_loop_ = s.get();
          break;
        }
    if (k_.persistent) {
      tile_loop();
      return;
    }
    block(k_.body, 1, false);
    if (k_.body.empty() && !any) out_ += "    pass\n";
  }

 private:
  const Kernel& k_;
  std::string& out_;
  Uses& uses_;
  std::set<std::string> constexprs_;
  const Stmt* ws_loop_ = nullptr;  // the loop whose tl.range carries warp_specialize=True (not persistent)

  static bool any_dot(const std::vector<StmtP>& body) {
    bool found = false;
    for_each_stmt(body, [&](const Stmt& s) {
      for (const ExprP& a : s.args) found = found || (a && any_expr(*a, [](const Expr& x) { return x.kind == ExprKind::Dot; }));
    });
    return found;
  }

  // A persistent kernel (Kernel::persistent) in tutorial 09's form: the grid's tiles walked by a
  // tl.range of step NUM_SMS from the program's id, program_id(a) and num_programs(a) the tile's
  // coordinate and the original grid's extent (_pid<a>, _grid<a>).
  void tile_loop() {
    if (const Stmt* r = first_return(k_.body))
      user_error(r->loc, "'return' in a persistent kernel has no Triton form (the tiles' loop would hold it; Triton allows return only outside loops)");
    std::string tiles;
    for (size_t a = 0; a < k_.grid.size(); ++a) {
      out_ += "    _grid" + std::to_string(a) + " = " + expr(k_.grid[a]).s + "\n";
      tiles += (a ? " * " : "") + std::string("_grid") + std::to_string(a);
    }
    out_ += "    _num_tiles = " + tiles + "\n";
    out_ += "    for _tile_id in tl.range(tl.program_id(0), _num_tiles, NUM_SMS, flatten=True" +
            std::string(ws_loop_ ? ", warp_specialize=True" : "") + "):\n";
    std::string rest = "_tile_id";
    for (size_t a = 0; a < k_.grid.size(); ++a) {
      const std::string g = "_grid" + std::to_string(a);
      out_ += "        _pid" + std::to_string(a) + " = " + (a + 1 < k_.grid.size() ? rest + " % " + g : rest) + "\n";
      if (a + 1 < k_.grid.size()) rest = (a ? "(" + rest + ")" : rest) + " // " + g;
    }
    in_tile_loop_ = true;
    block(k_.body, 2, true);
    in_tile_loop_ = false;
  }
  bool in_tile_loop_ = false;

  static bool has_scalar_i1(const Expr& e) {
    return any_expr(e, [](const Expr& x) {
      return x.type.elem == Scalar::I1 && !x.type.ptr && x.type.is_scalar() && x.kind != ExprKind::Const;
    });
  }

  // A mask or where() condition. Triton's interpreter keeps some scalar i1 values as int32 data,
  // which its load/store/where reject; _i1() turns them into booleans there (identity on the GPU).
  std::string mask(const ExprP& m) {
    if (!has_scalar_i1(*m)) return expr(m).s;
    uses_.i1 = true;
    return "_i1(" + expr(m).s + ")";
  }

  static std::string pad(int n) { return std::string(static_cast<size_t>(n) * 4, ' '); }

  // A value Python (not Triton) computes: literals and constexpr parameters combined.
  bool is_static(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::Const: return true;
      case ExprKind::Var: return constexprs_.count(e.name) > 0;
      case ExprKind::Unary: return e.uop == UnOp::Neg && is_static(*e.args[0]);
      case ExprKind::Binary: return !binop_is_compare(e.bop) && is_static(*e.args[0]) && is_static(*e.args[1]);
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
      case ExprKind::Arange:
      case ExprKind::Full:
      case ExprKind::Where:
      case ExprKind::Cast:
      case ExprKind::ExpandDims:
      case ExprKind::Reshape:
      case ExprKind::Trans:
      case ExprKind::Broadcast:
      case ExprKind::Load:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Bitcast:
      case ExprKind::CombineArg:
      case ExprKind::Swizzle2d:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt:
      case ExprKind::Machine:
      case ExprKind::Gather:
      case ExprKind::Histogram:
        return false;
    }
    return false;
  }

  std::string operand(const ExprP& e, int min) {
    Py p = expr(e);
    return p.prec < min ? "(" + p.s + ")" : p.s;
  }

  // `e` as a Triton value of its verified type (a literal or constexpr becomes a 0-d tensor).
  std::string tensor(const ExprP& e) {
    if (is_static(*e)) return "tl.full([], " + expr(e).s + ", " + tl_type(e->type.elem) + ")";
    return operand(e, kAtom);
  }

  // Operand of arithmetic: i1 values compute in i32, as the IR says.
  std::string arith(const ExprP& e, int min, Scalar result) {
    if (e->type.elem == Scalar::I1 && !e->type.ptr && result != Scalar::I1) {
      if (is_static(*e)) return "int(" + expr(e).s + ")";
      return operand(e, kAtom) + ".to(tl.int32)";
    }
    return operand(e, min);
  }

  std::string as_bool(const ExprP& e, int min) {
    if (e->type.elem == Scalar::I1) return operand(e, min);
    return "(" + operand(e, kCompare + 1) + " != 0)";
  }

  std::string math_call(const char* fn, const Expr& e) {
    const ExprP& x = e.args[0];
    Scalar in = x->type.elem;
    std::string arg = is_static(*x) ? "tl.full([], " + expr(x).s + ", tl.float32)"
                      : in == Scalar::F32 || in == Scalar::F64 ? expr(x).s
                                                               : operand(x, kAtom) + ".to(tl.float32)";
    std::string call = std::string(fn) + "(" + arg + ")";
    if (e.type.elem == Scalar::F16 || e.type.elem == Scalar::BF16) call += std::string(".to(") + tl_type(e.type.elem) + ")";
    return call;
  }

  Py unary(const Expr& e) {
    const ExprP& x = e.args[0];
    if (is_fp8(e.type.elem) && !e.type.ptr) return through_f32(e);
    switch (e.uop) {
      case UnOp::Neg: return {"-" + arith(x, kUnary, e.type.elem), kUnary};
      case UnOp::Not:
        if (is_static(*x)) return {"(not " + expr(x).s + ")", kAtom};
        return {"~" + operand(x, kUnary), kUnary};
      case UnOp::Exp: return {math_call("tl.exp", e)};
      case UnOp::Exp2: return {math_call("tl.exp2", e)};
      case UnOp::Log: return {math_call("tl.log", e)};
      case UnOp::Log2: return {math_call("tl.log2", e)};
      case UnOp::Sqrt: return {math_call(e.args[0]->type.elem == Scalar::F64 ? "tl.sqrt" : "tl.sqrt_rn", e)};
      case UnOp::Rsqrt: return {math_call("tl.rsqrt", e)};
      case UnOp::Sigmoid: return {math_call("tl.sigmoid", e)};
      case UnOp::Tanh: uses_.tanh = true; return {math_call("_tanh", e)};
      case UnOp::Erf: return {math_call("tl.erf", e)};
      case UnOp::Floor: return {math_call("tl.floor", e)};
      case UnOp::Ceil: return {math_call("tl.ceil", e)};
      case UnOp::Sin: return {math_call("tl.sin", e)};
      case UnOp::Cos: return {math_call("tl.cos", e)};
      case UnOp::Erfc:
      case UnOp::Trunc:
      case UnOp::Round:
      case UnOp::Rint:
      case UnOp::Tan:
      case UnOp::Asin:
      case UnOp::Acos:
      case UnOp::Atan:
      case UnOp::Sinh:
      case UnOp::Cosh:
      case UnOp::Asinh:
      case UnOp::Acosh:
      case UnOp::Atanh:
      case UnOp::Log10:
      case UnOp::Log1p:
      case UnOp::Expm1:
      case UnOp::Cbrt: uses_.libdevice = true; return {math_call((std::string("libdevice.") + unop_name(e.uop)).c_str(), e)};
      case UnOp::Abs: return {"tl.abs(" + tensor(x) + ")"};
    }
    return {"?"};
  }

  // `e` (an fp8 op) computed in f32 and rounded back, the IR's fp8 semantics, spelled as Triton
  // converts: its operands widened with .to(tl.float32), the result narrowed with .to(fp8).
  Py through_f32(const Expr& e) {
    ExprP wide = std::make_shared<Expr>(e);
    wide->type.elem = Scalar::F32;
    for (ExprP& x : wide->args) {
      ExprP c = make_cast(x, Scalar::F32, x->loc);
      c->type = Type{Scalar::F32, false, x->type.shape};
      x = c;
    }
    ExprP back = make_cast(wide, e.type.elem, e.loc);
    back->type = e.type;
    return expr(back);
  }

  Py binary(const Expr& e) {
    const ExprP& a = e.args[0];
    const ExprP& b = e.args[1];
    Scalar r = e.type.elem;
    if (is_fp8(r) && !e.type.ptr && !binop_is_compare(e.bop) && e.bop != BinOp::LAnd && e.bop != BinOp::LOr) return through_f32(e);
    auto infix = [&](int p) {
      int left = p == kCompare ? p + 1 : p;
      return Py{arith(a, left, r) + " " + binop_name(e.bop) + " " + arith(b, p + 1, r), p};
    };
    switch (e.bop) {
      case BinOp::Add:
      case BinOp::Sub: return infix(kAdd);
      case BinOp::Mul:
      case BinOp::Div:
      case BinOp::FloorDiv:
      case BinOp::Mod: return infix(kMul);
      case BinOp::And: return infix(kBitAnd);
      case BinOp::Or: return infix(kBitOr);
      case BinOp::Xor: return infix(kBitXor);
      case BinOp::Shl:
      case BinOp::Shr: {
        if (is_narrow_int(r)) {  // computed in 32 bits (count mod 32), then wrapped (IR.h)
          std::string count = b->kind == ExprKind::Const && !b->is_float ? std::to_string(b->ival & 31)
                                                                         : "(" + operand(b, kAtom) + ".to(tl.int32) & 31)";
          return {"(" + operand(a, kAtom) + ".to(tl.int32) " + binop_name(e.bop) + " " + count + ").to(" + tl_type(r) + ")", kAtom};
        }
        int w = int_width(r);
        bool in_range = b->kind == ExprKind::Const && !b->is_float && b->ival >= 0 && b->ival < w;
        std::string count = in_range ? arith(b, kShift + 1, r) : "(" + arith(b, kBitAnd, r) + " & " + std::to_string(w - 1) + ")";
        return {arith(a, kShift, r) + " " + binop_name(e.bop) + " " + count, kShift};
      }
      case BinOp::Lt:
      case BinOp::Le:
      case BinOp::Gt:
      case BinOp::Ge:
      case BinOp::Eq:
      case BinOp::Ne:
        return {operand(a, kCompare + 1) + " " + binop_name(e.bop) + " " + operand(b, kCompare + 1), kCompare};
      case BinOp::LAnd: return {as_bool(a, kBitAnd) + " & " + as_bool(b, kBitAnd + 1), kBitAnd};
      case BinOp::LOr: return {as_bool(a, kBitOr) + " | " + as_bool(b, kBitOr + 1), kBitOr};
      case BinOp::Min:
      case BinOp::Max:
      case BinOp::MinNum:
      case BinOp::MaxNum: {  // Triton's default propagate_nan=NONE is minnum / maxnum
        const bool mn = e.bop == BinOp::Min || e.bop == BinOp::MinNum;
        const char* fn = mn ? "minimum" : "maximum";
        if (is_static(*a) && is_static(*b)) return {std::string(mn ? "min(" : "max(") + expr(a).s + ", " + expr(b).s + ")"};
        std::string args = arith(a, 0, r) + ", " + arith(b, 0, r);
        if (is_float(r) && (e.bop == BinOp::Min || e.bop == BinOp::Max)) return {std::string("tl.") + fn + "(" + args + ", propagate_nan=tl.PropagateNan.ALL)"};
        return {std::string("tl.") + fn + "(" + args + ")"};
      }
      DT_MATH_BINOP_CASES {  // libdevice.pow(x, y) ...: f32 (or f64) operands, the result rounded as the IR says
        uses_.libdevice = true;
        auto arg = [&](const ExprP& x) {
          if (is_static(*x)) return "tl.full([], " + expr(x).s + ", " + tl_type(r == Scalar::F64 ? Scalar::F64 : Scalar::F32) + ")";
          return x->type.elem == Scalar::F32 || x->type.elem == Scalar::F64 ? expr(x).s : operand(x, kAtom) + ".to(tl.float32)";
        };
        std::string call = std::string("libdevice.") + binop_name(e.bop) + "(" + arg(a) + ", " + arg(b) + ")";
        if (r == Scalar::F16 || r == Scalar::BF16) call += std::string(".to(") + tl_type(r) + ")";
        return {call};
      }
      case BinOp::Cdiv:
        if (is_static(*a) && is_static(*b)) {
          std::string x = operand(a, kAdd), y = operand(b, kAdd + 1);
          return {"(" + x + " + " + y + " - 1) // " + operand(b, kMul + 1), kMul};
        }
        return {"tl.cdiv(" + arith(a, 0, r) + ", " + arith(b, 0, r) + ")"};
    }
    return {"?"};
  }

  std::string shape_args(const Expr& e, size_t from, size_t to) {
    std::string s = "[";
    for (size_t i = from; i < to; ++i) s += (i > from ? ", " : "") + expr(e.args[i]).s;
    return s + "]";
  }

  // A pointer operand broadcast to `shape` when its own shape is smaller.
  std::string ptr_to(const ExprP& p, const Shape& shape) {
    if (p->type.shape == shape || shape.empty()) return expr(p).s;
    return "tl.broadcast_to(" + expr(p).s + ", " + dims_list(shape) + ")";
  }

  Py load(const Expr& e) {
    std::string s = "tl.load(" + ptr_to(e.args[0], e.type.shape);
    if (e.args.size() > 1 && e.args[1]) s += ", mask=" + mask(e.args[1]);
    if (e.args.size() > 2 && e.args[2]) s += ", other=" + expr(e.args[2]).s;
    return {s + ")"};
  }

  Py dot(const Expr& e) {
    const Shape& a = e.args[0]->type.shape;
    const Shape& b = e.args[1]->type.shape;
    if (a.size() != 2 || b.size() != 2) internal_error("TritonEmitter", "dot of rank != 2");
    for (int64_t d : {a[0], a[1], b[1]})
      if (d < 16)
        user_error(e.loc, "dot of " + e.args[0]->type.str() + " and " + e.args[1]->type.str() +
                              " has no Triton form: tl.dot needs every dimension >= 16");
    // tf32: the operands rounded as the IR says (cvt.rna.tf32.f32) before Triton's tf32 dot, which
    // would otherwise take the f32 values as they are (the tensor cores ignore the low 13 bits).
    auto operand = [&](const ExprP& x) {
      if (!e.tf32) return expr(x).s;
      uses_.tf32 = true;
      return "_tf32(" + expr(x).s + ")";
    };
    std::string s = "tl.dot(" + operand(e.args[0]) + ", " + operand(e.args[1]);
    if (e.args.size() > 2 && e.args[2]) s += ", " + expr(e.args[2]).s;
    Scalar in = e.args[0]->type.elem;
    if (in == Scalar::F32) s += e.tf32 ? ", input_precision=\"tf32\"" : ", input_precision=\"ieee\"";
    return {s + ")"};
  }

  // A @triton.jit function (a, b) of the module for e's combine function; its name.
  std::string combine_fn(const Expr& e) {
    std::string name = "_combine_" + std::to_string(uses_.combine_fns.size());
    if (!e.fns.empty()) {  // several operands: (a0, .., aN-1, b0, .., bN-1) -> a tuple
      const size_t n = e.fns.size();
      std::string params, bodies;
      for (size_t i = 0; i < 2 * n; ++i) params += (i ? ", " : "") + std::string(i < n ? "a" : "b") + std::to_string(i % n);
      size_t saved = combine_operands_;
      combine_operands_ = n;
      for (size_t i = 0; i < n; ++i) bodies += (i ? ", " : "") + expr(e.fns[i]).s;
      combine_operands_ = saved;
      uses_.combine_fns.push_back("@triton.jit\ndef " + name + "(" + params + "):\n    return " + bodies + "\n\n");
      return name;
    }
    uses_.combine_fns.push_back("@triton.jit\ndef " + name + "(a, b):\n    return " + expr(e.fn).s + "\n\n");
    return name;
  }
  size_t combine_operands_ = 0;  // while a combine function of several operands is emitted
  // `(x, y, ...)` of several operands
  std::string operands_tuple(const Expr& e) {
    std::string s = "(";
    for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + expr(e.args[i]).s;
    return s + ")";
  }

  Py reduce(const Expr& e) {
    const ExprP& x = e.args[0];
    int axis = e.ints.empty() ? e.axis : static_cast<int>(e.ints[0]);
    std::string ax = ", axis=" + std::to_string(axis);
    if (!e.fns.empty())
      return {"tl.reduce(" + operands_tuple(e) + ax + ", combine_fn=" + combine_fn(e) + ")[" + std::to_string(e.part) + "]"};
    switch (e.rop) {
      case RedOp::Sum: {
        Scalar in = x->type.elem;
        std::string arg = in == Scalar::F16 || in == Scalar::BF16 ? operand(x, kAtom) + ".to(tl.float32)"
                          : in == Scalar::I1                      ? operand(x, kAtom) + ".to(tl.int32)"
                                                                  : expr(x).s;
        return {"tl.sum(" + arg + ax + ")"};
      }
      case RedOp::Max: return {"tl.max(" + expr(x).s + ax + ")"};
      case RedOp::Xor: return {"tl.xor_sum(" + expr(x).s + ax + ")"};
      case RedOp::Fn: return {"tl.reduce(" + expr(x).s + ax + ", combine_fn=" + combine_fn(e) + ")"};
      case RedOp::Or: return {"tl.reduce_or(" + expr(x).s + ax + ")"};
      case RedOp::Min: return {"tl.min(" + expr(x).s + ax + ")"};
      case RedOp::Argmax: return {"tl.argmax(" + expr(x).s + ax + ", tie_break_left=True)"};
      case RedOp::Argmin: return {"tl.argmin(" + expr(x).s + ax + ", tie_break_left=True)"};
    }
    return {"?"};
  }

  Py expr(const ExprP& ep) {
    if (!ep) internal_error("TritonEmitter", "missing operand");
    const Expr& e = *ep;
    switch (e.kind) {
      case ExprKind::Const: {
        std::string lit = e.dtype == Scalar::I1 && !e.is_float ? (e.ival ? "True" : "False")
                          : e.is_float                          ? float_literal(e.fval)
                                                                : std::to_string(e.ival);
        bool neg = lit[0] == '-';
        if (!e.weak && e.dtype != Scalar::I1) return {"tl.full([], " + lit + ", " + tl_type(e.dtype) + ")"};
        return {lit, neg ? kUnary : kAtom};
      }
      case ExprKind::Var: return {py_name(e.name)};
      case ExprKind::ProgramId:
        if (in_tile_loop_) return {e.axis < static_cast<int>(k_.grid.size()) ? "_pid" + std::to_string(e.axis) : std::string("0")};
        return {"tl.program_id(" + std::to_string(e.axis) + ")"};
      case ExprKind::NumPrograms:
        if (in_tile_loop_) return {e.axis < static_cast<int>(k_.grid.size()) ? "_grid" + std::to_string(e.axis) : std::string("1")};
        return {"tl.num_programs(" + std::to_string(e.axis) + ")"};
      case ExprKind::Arange: return {"tl.arange(" + expr(e.args[0]).s + ", " + expr(e.args[1]).s + ")"};
      case ExprKind::Full: {
        const ExprP& v = e.args.back();
        std::string shape = shape_args(e, 0, e.args.size() - 1);
        bool zero = v->kind == ExprKind::Const && (v->is_float ? (v->fval == 0 && !std::signbit(v->fval)) : v->ival == 0);
        if (zero) return {"tl.zeros(" + shape + ", dtype=" + tl_type(e.dtype) + ")"};
        return {"tl.full(" + shape + ", " + expr(v).s + ", dtype=" + tl_type(e.dtype) + ")"};
      }
      case ExprKind::Unary: return unary(e);
      case ExprKind::Binary: return binary(e);
      case ExprKind::Where: return {"tl.where(" + mask(e.args[0]) + ", " + expr(e.args[1]).s + ", " + expr(e.args[2]).s + ")"};
      case ExprKind::Cast: {
        if (is_static(*e.args[0])) return {"tl.full([], " + expr(e.args[0]).s + ", " + tl_type(e.dtype) + ")"};
        return {operand(e.args[0], kAtom) + ".to(" + tl_type(e.dtype) + ")"};
      }
      case ExprKind::ExpandDims: {
        if (e.axis < 0 || is_static(*e.args[0]))
          return {"tl.expand_dims(" + tensor(e.args[0]) + ", " + std::to_string(e.axis) + ")"};
        std::string sub;
        for (int i = 0; i < e.axis; ++i) sub += ":, ";
        return {operand(e.args[0], kAtom) + "[" + sub + (e.axis == 0 ? "None, :]" : "None]")};
      }
      case ExprKind::Reshape: return {"tl.reshape(" + expr(e.args[0]).s + ", " + shape_args(e, 1, e.args.size()) + ")"};
      case ExprKind::Trans:
        if (e.args.size() == 1) return {"tl.trans(" + expr(e.args[0]).s + ")"};
        return {"tl.permute(" + expr(e.args[0]).s + ", " + shape_args(e, 1, e.args.size()) + ")"};
      case ExprKind::Broadcast: {
        const ExprP& x = e.args[0];
        std::string shape = shape_args(e, 1, e.args.size());
        if (x->type.is_scalar()) return {"tl.full(" + shape + ", " + expr(x).s + ", dtype=" + tl_type(e.type.elem) + ")"};
        return {"tl.broadcast_to(" + expr(x).s + ", " + shape + ")"};
      }
      case ExprKind::Load: return load(e);
      case ExprKind::Dot: return dot(e);
      case ExprKind::Reduce: return reduce(e);
      case ExprKind::Scan: {
        const ExprP& x = e.args[0];
        std::string xs = x->type.elem == Scalar::I1 ? operand(x, kAtom) + ".to(tl.int32)" : expr(x).s;
        std::string tail = ", axis=" + std::to_string(e.ints.empty() ? e.axis : e.ints[0]) + (e.reverse ? ", reverse=True" : "") + ")";
        switch (e.sop) {
          case ScanOp::Sum: return {"tl.cumsum(" + xs + tail};
          case ScanOp::Prod: return {"tl.cumprod(" + xs + tail};
          case ScanOp::Max: uses_.scan_max = true; return {"tl.associative_scan(" + xs + tail.substr(0, tail.size() - 1) + ", combine_fn=_scan_max)"};
          case ScanOp::Min: uses_.scan_min = true; return {"tl.associative_scan(" + xs + tail.substr(0, tail.size() - 1) + ", combine_fn=_scan_min)"};
          case ScanOp::Fn:
            if (!e.fns.empty())
              return {"tl.associative_scan(" + operands_tuple(e) + tail.substr(0, tail.size() - 1) + ", combine_fn=" + combine_fn(e) + ")[" +
                      std::to_string(e.part) + "]"};
            return {"tl.associative_scan(" + xs + tail.substr(0, tail.size() - 1) + ", combine_fn=" + combine_fn(e) + ")"};
        }
        return {"?"};
      }
      case ExprKind::Bitcast:
        return {operand(e.args[0], kAtom) + ".to(" + tl_type(e.dtype) + ", bitcast=True)"};
      case ExprKind::CombineArg:
        if (combine_operands_ > 0)
          return {std::string(static_cast<size_t>(e.axis) < combine_operands_ ? "a" : "b") + std::to_string(static_cast<size_t>(e.axis) % combine_operands_)};
        return {e.axis == 0 ? "a" : "b"};
      case ExprKind::Swizzle2d: return {swizzle(e) + "[0]"};
      case ExprKind::IntToPtr: return {operand(e.args[0], kAtom) + ".to(tl.pointer_type(" + tl_type(e.dtype) + "))"};
      case ExprKind::PtrToInt: return {operand(e.args[0], kAtom) + ".to(tl.int64)"};
      case ExprKind::Gather: return {"tl.gather(" + expr(e.args[0]).s + ", " + expr(e.args[1]).s + ", " + std::to_string(e.ints[0]) + ")"};
      case ExprKind::Histogram: {  // Triton 3.9 takes 32-bit inputs: narrower ones widened, i64 clamped to [-1, bins] (both ends dropped)
        const ExprP& x = e.args[0];
        const std::string bins = std::to_string(e.ints[0]);
        std::string xs = expr(x).s;
        if (is_narrow_int(x->type.elem)) xs = operand(x, kAtom) + ".to(tl.int32)";
        if (x->type.elem == Scalar::I64) xs = "tl.maximum(tl.minimum(" + xs + ", " + bins + "), -1).to(tl.int32)";
        std::string s = "tl.histogram(" + xs + ", " + bins;
        if (e.args.size() > 2 && e.args[2]) s += ", mask=" + expr(e.args[2]).s;
        return {s + ")"};
      }
      case ExprKind::Machine: {  // the PTX that tl.extra.cuda.globaltimer() and smid() are made of
        const MachineReg r = static_cast<MachineReg>(e.axis);
        const bool wide = machine_reg_type(r) == Scalar::I64;
        return {std::string("tl.inline_asm_elementwise(\"mov.") + (wide ? "u64" : "u32") + " $0, %" + machine_reg_name(r) + ";\", \"=" +
                (wide ? "l" : "r") + "\", [], dtype=" + (wide ? "tl.int64" : "tl.int32") + ", is_pure=False, pack=1)"};
      }
    }
    return {"?"};
  }

  std::string swizzle(const Expr& e) {
    std::string s = "tl.swizzle2d(";
    for (size_t i = 0; i < 5; ++i) s += (i ? ", " : "") + expr(e.args[i]).s;
    return s + ")";
  }

  static bool contains_return(const std::vector<StmtP>& body) {
    for (const StmtP& s : body) {
      if (s->kind == StmtKind::Return) return true;
      if (contains_return(s->body) || contains_return(s->orelse)) return true;
    }
    return false;
  }

  static const Stmt* first_return(const std::vector<StmtP>& body) {
    for (const StmtP& s : body) {
      if (s->kind == StmtKind::Return) return s.get();
      if (const Stmt* r = first_return(s->body)) return r;
      if (const Stmt* r = first_return(s->orelse)) return r;
    }
    return nullptr;
  }

  void block(const std::vector<StmtP>& body, int indent, bool need_pass) {
    if (body.empty() && need_pass) out_ += pad(indent) + "pass\n";
    for (const StmtP& s : body) stmt(*s, indent);
  }

  void assign(const Stmt& s, int indent) {
    const ExprP& v = s.args[0];
    if (s.targets.size() == 2) {
      if (v->kind != ExprKind::Swizzle2d) internal_error("TritonEmitter", "two targets without swizzle2d");
      out_ += pad(indent) + py_name(s.targets[0]) + ", " + py_name(s.targets[1]) + " = " + swizzle(*v) + "\n";
      return;
    }
    std::string t = py_name(s.targets[0]);
    if (s.aug && v->kind == ExprKind::Binary && v->bop == *s.aug) {
      BinOp op = *s.aug;
      bool infix = op == BinOp::Add || op == BinOp::Sub || op == BinOp::Mul || op == BinOp::Div || op == BinOp::FloorDiv ||
                   op == BinOp::Mod || op == BinOp::And || op == BinOp::Or || op == BinOp::Xor;
      const ExprP& rhs = v->args[1];
      if (infix && v->args[0]->type.elem != Scalar::I1 && rhs->type.elem != Scalar::I1) {
        out_ += pad(indent) + t + " " + binop_name(op) + "= " + expr(rhs).s + "\n";
        return;
      }
    }
    out_ += pad(indent) + t + " = " + expr(v).s + "\n";
  }

  static const char* atomicop_py_or_error(const Stmt& s) {
    const char* py = atomicop_py(s.aop);
    if (!py[0]) user_error(s.loc, std::string(atomicop_name(s.aop)) + " has no Triton form (Triton spells unsigned atomics through bitcast pointers)");
    return py;
  }

  void store(const Stmt& s, int indent) {
    Shape shape = s.args[0]->type.shape;
    for (size_t i = 1; i < s.args.size(); ++i)
      if (s.args[i])
        if (auto b = broadcast_shapes(shape, s.args[i]->type.shape)) shape = *b;
    std::string line = "tl.store(" + ptr_to(s.args[0], shape) + ", " + expr(s.args[1]).s;
    if (s.args.size() > 2 && s.args[2]) line += ", mask=" + mask(s.args[2]);
    out_ += pad(indent) + line + ")\n";
  }

  void if_stmt(const Stmt& s, int indent, const char* kw) {
    const ExprP& c = s.args[0];
    std::string cond = c->type.elem == Scalar::I1 ? expr(c).s : operand(c, kCompare + 1) + " != 0";
    out_ += pad(indent) + kw + " " + cond + ":\n";
    block(s.body, indent + 1, true);
    if (s.orelse.size() == 1 && s.orelse[0]->kind == StmtKind::If) {
      if_stmt(*s.orelse[0], indent, "elif");
    } else if (!s.orelse.empty()) {
      out_ += pad(indent) + "else:\n";
      block(s.orelse, indent + 1, true);
    }
  }

  void stmt(const Stmt& s, int indent) {
    switch (s.kind) {
      case StmtKind::Assign: assign(s, indent); return;
      case StmtKind::Store: store(s, indent); return;
      case StmtKind::Atomic: {
        bool cas = s.aop == AtomicOp::Cas;
        std::string line = std::string("tl.") + atomicop_py_or_error(s) + "(" + expr(s.args[0]).s + ", " + expr(s.args[1]).s;
        if (cas) line += ", " + expr(s.args[2]).s;
        else if (s.args[2]) line += ", mask=" + mask(s.args[2]);
        line += std::string(", sem=\"") + memsem_name(s.sem) + "\", scope=\"" + memscope_name(s.scope) + "\")";
        out_ += pad(indent) + (s.targets.empty() ? "" : py_name(s.targets[0]) + " = ") + line + "\n";
        return;
      }
      case StmtKind::For: {
        if (const Stmt* r = first_return(s.body))
          user_error(r->loc, "'return' inside a for loop has no Triton form (Triton allows return only outside loops)");
        std::string range = "range(" + expr(s.args[0]).s + ", " + expr(s.args[1]).s;
        const ExprP& step = s.args[2];
        const bool ws = &s == ws_loop_ && !k_.persistent;
        if (ws || !(step && step->kind == ExprKind::Const && !step->is_float && step->ival == 1)) range += ", " + expr(step).s;
        if (ws) range = "tl." + range + ", warp_specialize=True";
        out_ += pad(indent) + "for " + py_name(s.targets[0]) + " in " + range + "):\n";
        block(s.body, indent + 1, true);
        return;
      }
      case StmtKind::If: if_stmt(s, indent, "if"); return;
      case StmtKind::While: {
        if (const Stmt* r = first_return(s.body))
          user_error(r->loc, "'return' inside a while loop has no Triton form (Triton allows return only outside loops)");
        const ExprP& c = s.args[0];
        std::string cond = c->type.elem == Scalar::I1 ? expr(c).s : operand(c, kCompare + 1) + " != 0";
        out_ += pad(indent) + "while " + cond + ":\n";
        block(s.body, indent + 1, true);
        return;
      }
      case StmtKind::Print: {
        std::string line = "tl.device_print(\"" + s.text + "\"";
        for (const ExprP& a : s.args) line += ", " + expr(a).s;
        out_ += pad(indent) + line + ")\n";
        return;
      }
      case StmtKind::Assert: {
        std::string msg;
        for (char ch : s.text) msg += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
        out_ += pad(indent) + "tl.device_assert(" + expr(s.args[0]).s + ", \"" + msg + "\")\n";
        return;
      }
      case StmtKind::Return: out_ += pad(indent) + "return\n"; return;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Host side: launchers, tables, the runtime block
// ---------------------------------------------------------------------------------------------
const char* io_name(BufIO io) {
  switch (io) {
    case BufIO::In: return "in";
    case BufIO::Out: return "out";
    case BufIO::InOut: return "inout";
    case BufIO::Scratch: return "scratch";
  }
  return "?";
}

struct ModuleParams {
  std::vector<const Param*> buffers;  // distinct pointer parameters, first declaration, module order
  std::vector<const Param*> scalars;  // distinct scalar/constexpr parameters
};

ModuleParams collect(const std::vector<const Kernel*>& ks) {
  ModuleParams mp;
  std::set<std::string> seen;
  for (const Kernel* k : ks)
    for (const Param& p : k->params) {
      if (!seen.insert(p.name).second) continue;
      (p.kind == ParamKind::Pointer ? mp.buffers : mp.scalars).push_back(&p);
    }
  return mp;
}

std::string quoted_list(const std::vector<const Param*>& ps) {
  std::string s = "[";
  for (size_t i = 0; i < ps.size(); ++i) s += (i ? ", " : "") + std::string("\"") + ps[i]->name + "\"";
  return s + "]";
}

std::string launcher_signature(const ModuleParams& mp, const Bindings& b) {
  std::string s;
  for (const Param* p : mp.buffers) s += (s.empty() ? "" : ", ") + py_name(p->name);
  for (const Param* p : mp.scalars) {
    auto it = b.find(p->name);
    if (it == b.end()) internal_error("TritonEmitter", "no binding for '" + p->name + "'");
    s += (s.empty() ? "" : ", ") + py_name(p->name) + "=" + value_literal(it->second);
  }
  return s;
}

std::string kernel_launcher(const Kernel& k, const Bindings& b) {
  ModuleParams mp = collect({&k});
  auto local = [](const std::string& n) { return py_name(n); };
  std::string grid = "(";
  for (size_t i = 0; i < k.grid.size(); ++i) grid += (i ? ", " : "") + host_expr(k.grid[i], local);
  grid += k.grid.size() == 1 ? ",)" : ")";
  std::string args;
  for (size_t i = 0; i < k.params.size(); ++i) args += (i ? ", " : "") + py_name(k.params[i].name);
  std::string head = "def launch_" + k.name + "(" + launcher_signature(mp, b) + "):\n" + "    \"\"\"Launches " + k.name +
                     " on torch tensors (buffers first, then scalars).\"\"\"\n";
  if (k.persistent) {  // tutorial 09: min(NUM_SMS, tiles) programs
    std::string tiles;
    for (size_t i = 0; i < k.grid.size(); ++i) tiles += (i ? " * " : "") + host_expr(k.grid[i], local);
    head += "    NUM_SMS = " + (k.persistent_ctas > 0 ? std::to_string(k.persistent_ctas) : std::string("_num_sms()")) + "\n";
    grid = "(min(NUM_SMS, " + tiles + "),)";
    args += std::string(args.empty() ? "" : ", ") + "NUM_SMS=NUM_SMS";
  }
  return head + "    " + py_name(k.name) + "[" + grid + "](" + args + ", num_warps=" + std::to_string(k.num_warps) +
         ", num_stages=" + std::to_string(k.num_stages) + ")\n";
}

}  // namespace

std::string emit_triton(const Module& in, const Bindings& b, const TritonEmitOptions& opt) {
  Module m = clone_module(in);
  for (Kernel& k : m.kernels) {
    if (opt.warp_specialize) k.warp_specialize = opt.warp_specialize > 0;
    if (opt.persistent) k.persistent = opt.persistent > 0;
    if (k.persistent && opt.persistent_ctas > 0) k.persistent_ctas = opt.persistent_ctas;
  }
  std::vector<const Kernel*> ks;
  for (const Kernel& k : m.kernels) ks.push_back(&k);
  ModuleParams mp = collect(ks);

  std::string bound;
  for (const Param* p : mp.scalars) bound += (bound.empty() ? "" : ", ") + p->name + "=" + value_literal(b.at(p->name));
  std::string src = opt.source.empty() ? m.file : opt.source;
  std::string out;
  out += "\"\"\"Triton version of " + src + ", generated by " + (opt.tool_version.empty() ? "dtsim" : opt.tool_version) +
         " (emit --triton).\n\n";
  out += "One @triton.jit function per kernel, with the tile IR's names and schedule; num_warps and num_stages\n"
         "are passed at launch. Parameters bound when emitted: " + (bound.empty() ? "none" : bound) + ".\n\n";
  out += "Run it: python3 THIS.py [--arg NAME=VALUE]... [--in NAME=FILE.npy]... [--out NAME=FILE.npy]... [--seed S]\n"
         "prints the same summary lines as `dtsim run` on the same seeded inputs; --bench times every kernel\n"
         "with triton.testing.do_bench; TRITON_INTERPRET=1 runs it on the CPU.\n\"\"\"\n";
  out += "import argparse\nimport os\nimport sys\n\nimport numpy as np\nimport torch\nimport triton\nimport triton.language as tl\n\n";

  std::string kernels;
  Uses uses;
  for (const Kernel& k : m.kernels) {
    kernels += "\n";
    KernelWriter(k, kernels, uses).write();
  }
  const bool uses_i1 = uses.i1, uses_tanh = uses.tanh, uses_tf32 = uses.tf32;
  if (uses.libdevice) out += "from triton.language.extra import libdevice\n\n";
  for (const std::string& f : uses.combine_fns) out += f;
  for (auto [used, name, op] : {std::tuple{uses.scan_max, "_scan_max", "maximum"}, std::tuple{uses.scan_min, "_scan_min", "minimum"}})
    if (used) out += std::string("@triton.jit\ndef ") + name + "(a, b):\n    return tl." + op + "(a, b, propagate_nan=tl.PropagateNan.ALL)\n\n";
  if (uses_i1) {
    out += "if os.environ.get(\"TRITON_INTERPRET\") == \"1\":\n"
           "    @triton.jit\n"
           "    def _i1(x):  # the interpreter keeps some scalar i1 values as int32 data; masks must be bool\n"
           "        return x != 0\n"
           "else:\n"
           "    @triton.jit\n"
           "    def _i1(x):\n"
           "        return x\n\n";
  }
  if (uses_tanh) {
    out += "if os.environ.get(\"TRITON_INTERPRET\") == \"1\":\n"
           "    @triton.jit\n"
           "    def _tanh(x):  # the interpreter has no libdevice: tanh(x) = 2 * sigmoid(2x) - 1\n"
           "        return 2.0 * tl.sigmoid(2.0 * x) - 1.0\n"
           "else:\n"
           "    from triton.language.extra import libdevice\n\n"
           "    @triton.jit\n"
           "    def _tanh(x):\n"
           "        return libdevice.tanh(x)\n\n";
  }
  if (uses_tf32) {
    out += "@triton.jit\n"
           "def _tf32(x):  # f32 -> tf32 as cvt.rna.tf32.f32: to nearest, ties away from zero; inf/nan kept\n"
           "    u = x.to(tl.uint32, bitcast=True)\n"
           "    r = tl.where((u & 0x7F800000) == 0x7F800000, u, (u + 0x1000) & 0xFFFFE000)\n"
           "    return r.to(tl.float32, bitcast=True)\n\n";
  }
  bool any_persistent = false;
  for (const Kernel& k : m.kernels) any_persistent = any_persistent || (k.persistent && k.persistent_ctas == 0);
  if (any_persistent)
    out += "def _num_sms():  # a persistent grid's programs: the GPU's SMs (its CPU's cores under TRITON_INTERPRET=1)\n"
           "    if os.environ.get(\"TRITON_INTERPRET\") != \"1\" and torch.cuda.is_available():\n"
           "        return torch.cuda.get_device_properties(\"cuda\").multi_processor_count\n"
           "    return os.cpu_count() or 1\n\n";
  out += kernels;

  // Launchers: one per kernel, then the whole module.
  for (const Kernel& k : m.kernels) out += "\n\n" + kernel_launcher(k, b);
  out += "\n\ndef launch(" + launcher_signature(mp, b) + "):\n    \"\"\"Launches every kernel in order (buffers first, then scalars).\"\"\"\n";
  for (const Kernel& k : m.kernels) {
    ModuleParams kp = collect({&k});
    std::string args;
    for (const Param* p : kp.buffers) args += (args.empty() ? "" : ", ") + py_name(p->name);
    for (const Param* p : kp.scalars) args += (args.empty() ? "" : ", ") + py_name(p->name) + "=" + py_name(p->name);
    out += "    launch_" + k.name + "(" + args + ")\n";
  }

  // Tables the runtime block reads.
  out += "\n\nKERNELS = [";
  for (size_t i = 0; i < m.kernels.size(); ++i) out += (i ? ", " : "") + std::string("\"") + m.kernels[i].name + "\"";
  out += "]\nPARAMS = {";
  for (size_t i = 0; i < mp.scalars.size(); ++i)
    out += (i ? ", " : "") + std::string("\"") + mp.scalars[i]->name + "\": " + value_literal(b.at(mp.scalars[i]->name));
  out += "}\nPARAM_TYPES = {";
  for (size_t i = 0; i < mp.scalars.size(); ++i)
    out += (i ? ", " : "") + std::string("\"") + mp.scalars[i]->name + "\": \"" + scalar_name(b.at(mp.scalars[i]->name).type) + "\"";
  out += "}\n# name, io, dtype, shape as a function of the parameters\nBUFFERS = [\n";
  auto dict_var = [](const std::string& n) { return "p[\"" + n + "\"]"; };
  for (const Param* p : mp.buffers) {
    std::string shape;
    for (size_t i = 0; i < p->shape.size(); ++i) shape += (i ? ", " : "") + host_expr(p->shape[i], dict_var);
    if (p->shape.size() == 1) shape += ",";
    out += "    (\"" + p->name + "\", \"" + io_name(p->io) + "\", \"" + scalar_name(p->dtype) + "\", lambda p: (" + shape + ")),\n";
  }
  out += "]\n# launcher -> (buffers, scalars) in argument order; \"\" is launch()\nSIGNATURES = {\n";
  out += "    \"\": (" + quoted_list(mp.buffers) + ", " + quoted_list(mp.scalars) + "),\n";
  for (const Kernel& k : m.kernels) {
    ModuleParams kp = collect({&k});
    out += "    \"" + k.name + "\": (" + quoted_list(kp.buffers) + ", " + quoted_list(kp.scalars) + "),\n";
  }
  out += "}\n";
  out += kTritonRuntime;
  return out;
}

}  // namespace dtsim
