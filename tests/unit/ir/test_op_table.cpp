// Every op of IR.h's op tables (UnOp, BinOp, RedOp): written in `.tile` it parses and prints back
// the same, written in Triton `.py` it lowers to the same printed IR, and both run on the
// interpreter to the reference value this file computes in f64. A row added to a table without a
// `.py` spelling, a parser entry, a printer form or an interpreter case fails here; a row without
// a reference below fails to compile (the switches have no `default:`).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "interp/Interp.h"
#include "ir/Printer.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"
#include "pyfront/Triton.h"

using namespace dtsim;

namespace {

constexpr int kN = 8;

// The operands every op is applied to, per lane i (the kernels below compute the same values):
//   x = (i + 1) * 0.25, y = (7 - i) * 0.5 - 1.25 (f32, exact; y is never 0);
//   a = 3 i - 5, b = i + 1 (i32; b is never 0);
//   u = sum(x) > 4 (true), w = sum(y) < 0 (false) (scalar i1);
//   s = y * 0.25 (in (-1, 1): asin, acos, atanh), g = x + 1.0 (>= 1: acosh).
double xv(int i) { return (i + 1) * 0.25; }
double yv(int i) { return (7 - i) * 0.5 - 1.25; }
double sv(int i) { return yv(i) * 0.25; }
double gv(int i) { return xv(i) + 1.0; }
int32_t av(int i) { return 3 * i - 5; }
int32_t bv(int i) { return i + 1; }
const bool kU = true, kW = false;

const char* kTileHead =
    "kernel k(out z: *f64[8]) grid(1) {\n"
    "  r = arange(0, 8)\n"
    "  x = (r + 1).to(f32) * 0.25\n"
    "  y = (7 - r).to(f32) * 0.5 - 1.25\n"
    "  a = r * 3 - 5\n"
    "  b = r + 1\n"
    "  u = sum(x, axis=0) > 4.0\n"
    "  w = sum(y, axis=0) < 0.0\n"
    "  s = y * 0.25\n"
    "  g = x + 1.0\n";

const char* kPyHead =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _maxfn(a, b):\n"
    "    return tl.maximum(a, b)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def k(z):\n"
    "    r = tl.arange(0, 8)\n"
    "    x = (r + 1).to(tl.float32) * 0.25\n"
    "    y = (7 - r).to(tl.float32) * 0.5 - 1.25\n"
    "    a = r * 3 - 5\n"
    "    b = r + 1\n"
    "    u = tl.sum(x, axis=0) > 4.0\n"
    "    w = tl.sum(y, axis=0) < 0.0\n"
    "    s = y * 0.25\n"
    "    g = x + 1.0\n";

// Operands of an op by its type rule: integers for IntOnly/Bits, scalar booleans for logical ops,
// floats otherwise.
struct Operands {
  std::string l, r;
};
Operands operands_for(const OpInfo& op) {
  if (op.cat == OpCat::Logical) return {"u", "w"};
  if (op.rule == TypeRule::IntOnly || op.rule == TypeRule::Bits) return {"a", "b"};
  return {"x", "y"};
}

std::string tile_expr(const OpInfo& op, int arity) {
  Operands o = operands_for(op);
  if (op.cat == OpCat::Reduce && std::string(op.name) == "reduce") return "reduce(y, axis=0, combine=(a, b) -> maxnum(a, b))";
  if (op.cat == OpCat::Reduce) return std::string(op.name) + "(" + o.r + ", axis=0)";
  if (arity == 1) return op.form == OpForm::Prefix ? op.name + o.r : std::string(op.name) + "(" + o.r + ")";
  if (op.form == OpForm::Infix) return o.l + " " + op.name + " " + o.r;
  return std::string(op.name) + "(" + o.l + ", " + o.r + ")";
}

std::string py_expr(const OpInfo& op, int arity) {
  Operands o = operands_for(op);
  if (op.cat == OpCat::Reduce && std::string(op.name) == "reduce") return "tl.reduce(y, 0, _maxfn)";
  if (op.cat == OpCat::Reduce) return std::string("tl.") + op.py + "(" + o.r + ", axis=0)";
  if (arity == 1) return op.form == OpForm::Prefix ? op.py + o.r : std::string("tl.") + op.py + "(" + o.r + ")";
  if (op.form == OpForm::Infix) return o.l + " " + op.py + " " + o.r;
  return std::string("tl.") + op.py + "(" + o.l + ", " + o.r + ")";
}

// ---- references, in f64 (or exact integer arithmetic) ----
double ref_unary(UnOp op, int i) {
  double y = yv(i), x = xv(i);
  switch (op) {
    case UnOp::Neg: return -y;
    case UnOp::Not: return ~bv(i);
    case UnOp::Exp: return std::exp(y);
    case UnOp::Exp2: return std::exp2(y);
    case UnOp::Log: return std::log(x);
    case UnOp::Log2: return std::log2(x);
    case UnOp::Sqrt: return std::sqrt(x);
    case UnOp::Rsqrt: return 1.0 / std::sqrt(x);
    case UnOp::Sigmoid: return 1.0 / (1.0 + std::exp(-y));
    case UnOp::Tanh: return std::tanh(y);
    case UnOp::Erf: return std::erf(y);
    case UnOp::Erfc: return std::erfc(y);
    case UnOp::Floor: return std::floor(y);
    case UnOp::Ceil: return std::ceil(y);
    case UnOp::Trunc: return std::trunc(y);
    case UnOp::Round: return std::round(y);
    case UnOp::Rint: return std::nearbyint(y);
    case UnOp::Sin: return std::sin(y);
    case UnOp::Cos: return std::cos(y);
    case UnOp::Tan: return std::tan(y);
    case UnOp::Asin: return std::asin(sv(i));
    case UnOp::Acos: return std::acos(sv(i));
    case UnOp::Atan: return std::atan(y);
    case UnOp::Sinh: return std::sinh(y);
    case UnOp::Cosh: return std::cosh(y);
    case UnOp::Asinh: return std::asinh(y);
    case UnOp::Acosh: return std::acosh(gv(i));
    case UnOp::Atanh: return std::atanh(sv(i));
    case UnOp::Log10: return std::log10(x);
    case UnOp::Log1p: return std::log1p(x);
    case UnOp::Expm1: return std::expm1(y);
    case UnOp::Cbrt: return std::cbrt(y);
    case UnOp::Abs: return std::fabs(y);
  }
  return NAN;
}

// The operand each unary op takes: y, or x where it must be positive, s in (-1, 1), g >= 1.
char unary_operand(UnOp op) {
  for (UnOp p : {UnOp::Log, UnOp::Log2, UnOp::Log10, UnOp::Log1p, UnOp::Sqrt, UnOp::Rsqrt})
    if (op == p) return 'x';
  if (op == UnOp::Asin || op == UnOp::Acos || op == UnOp::Atanh) return 's';
  return op == UnOp::Acosh ? 'g' : 'y';
}

double ref_binary(BinOp op, int i) {
  double x = xv(i), y = yv(i);
  int64_t a = av(i), b = bv(i);
  switch (op) {
    case BinOp::Add: return x + y;
    case BinOp::Sub: return x - y;
    case BinOp::Mul: return x * y;
    case BinOp::Div: return x / y;
    case BinOp::FloorDiv: return static_cast<double>(a / b);  // C truncation toward zero
    case BinOp::Mod: return std::fmod(x, y);
    case BinOp::And: return static_cast<double>(a & b);
    case BinOp::Or: return static_cast<double>(a | b);
    case BinOp::Xor: return static_cast<double>(a ^ b);
    case BinOp::Shl: return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(a) << b));
    case BinOp::Shr: return static_cast<double>(a >> b);
    case BinOp::Lt: return x < y;
    case BinOp::Le: return x <= y;
    case BinOp::Gt: return x > y;
    case BinOp::Ge: return x >= y;
    case BinOp::Eq: return 1.0;  // x == x (see below)
    case BinOp::Ne: return x != y;
    case BinOp::LAnd: return kU && kW;
    case BinOp::LOr: return kU || kW;
    case BinOp::Min: return std::fmin(x, y);
    case BinOp::Max: return std::fmax(x, y);
    case BinOp::MinNum: return std::fmin(x, y);
    case BinOp::MaxNum: return std::fmax(x, y);
    case BinOp::Cdiv: return static_cast<double>((a + b - 1) / b);
    case BinOp::Pow: return std::pow(x, y);
    case BinOp::Atan2: return std::atan2(x, y);
    case BinOp::Hypot: return std::hypot(x, y);
  }
  return NAN;
}

double ref_reduce(RedOp op) {
  double s = 0, mx = -INFINITY, mn = INFINITY;
  int amax = 0, amin = 0;
  for (int i = 0; i < kN; ++i) {
    s += yv(i);
    if (yv(i) > mx) mx = yv(i), amax = i;
    if (yv(i) < mn) mn = yv(i), amin = i;
  }
  switch (op) {
    case RedOp::Sum: return s;
    case RedOp::Max:
    case RedOp::Fn: return mx;  // reduce with (a, b) -> maximum(a, b)
    case RedOp::Min: return mn;
    case RedOp::Argmax: return amax;
    case RedOp::Argmin: return amin;
    case RedOp::Xor:
    case RedOp::Or: {  // of b = i + 1
      int32_t acc = 0;
      for (int i = 0; i < kN; ++i) acc = op == RedOp::Xor ? acc ^ bv(i) : acc | bv(i);
      return acc;
    }
  }
  return NAN;
}

struct PyFile {
  std::string path;
  explicit PyFile(const std::string& text) {
    static int counter = 0;
    path = (std::filesystem::temp_directory_path() / ("dtsim_op_table_" + std::to_string(counter++) + ".py")).string();
    std::ofstream(path) << text;
  }
  ~PyFile() { std::remove(path.c_str()); }
};

// The printed line of `text` that starts with `store(`.
std::string store_line(const std::string& text) {
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    size_t p = line.find_first_not_of(' ');
    if (p != std::string::npos && line.compare(p, 6, "store(") == 0) return line.substr(p);
  }
  return "";
}

std::vector<double> run(Module m) {
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  Buffers bufs = make_buffers(m, b, 1);
  std::ostringstream os;
  InterpOptions opt;
  opt.out = &os;
  RunReport rep = run_module(m, b, bufs, opt);
  REQUIRE(rep.findings.empty());
  std::vector<double> out;
  for (int i = 0; i < kN; ++i) out.push_back(bufs.find("z")->get(i));
  return out;
}

// `pir`: what the .py spelling lowers to where that is not the op itself ("": texpr).
void check_op(const std::string& what, const std::string& texpr, const std::string& pexpr, const std::function<double(int)>& ref,
              const std::string& pir = "") {
  CAPTURE(what);
  std::string src = std::string(kTileHead) + "  store(z + r, " + texpr + ")\n}\n";
  // .tile: parses, prints the op as written, and printing is a fixed point.
  std::string printed = print_module(parse_tile(Sources::add("<op.tile>", src)));
  CHECK(store_line(printed) == "store(z + r, " + texpr + ")");
  CHECK(print_module(parse_tile(Sources::add("<op2.tile>", printed))) == printed);
  // .py: lowers to the same IR.
  PyFile py(std::string(kPyHead) + "    tl.store(z + r, " + pexpr + ")\n");
  TritonLaunch launch;
  launch.buffers = {TritonBuffer{"z", Scalar::F64, {kN}, false}};
  launch.grid = {"1"};
  launch.kernel = "k";
  Module pm = lower_triton_file(py.path, launch).module;
  CHECK(store_line(print_module(pm)) == "store(z + r, " + (pir.empty() ? texpr : pir) + ")");
  // Both run on the interpreter to the reference.
  std::vector<double> got_tile = run(parse_tile(Sources::add("<op3.tile>", src)));
  std::vector<double> got_py = run(pm);
  for (int i = 0; i < kN; ++i) {
    CAPTURE(i);
    double want = ref(i);
    CHECK(got_tile[static_cast<size_t>(i)] == doctest::Approx(want).epsilon(1e-6));
    CHECK(got_py[static_cast<size_t>(i)] == got_tile[static_cast<size_t>(i)]);
  }
}

}  // namespace

TEST_CASE("every unary op of the table: .tile and .py spellings, printer, interpreter") {
  for (UnOp op : kAllUnOps) {
    const OpInfo& info = op_info(op);
    std::string t = tile_expr(info, 1), p = py_expr(info, 1);
    if (char v = unary_operand(op); v != 'y') {  // log, sqrt ... of x (positive); asin ... of s; acosh of g
      t.replace(t.rfind('y'), 1, 1, v);
      p.replace(p.rfind('y'), 1, 1, v);
    }
    check_op(info.name, t, p, [op](int i) { return ref_unary(op, i); });
  }
}

TEST_CASE("every binary op of the table: .tile and .py spellings, printer, interpreter") {
  for (BinOp op : kAllBinOps) {
    const OpInfo& info = op_info(op);
    std::string t = tile_expr(info, 2), p = py_expr(info, 2);
    if (op == BinOp::Eq) {  // x == y holds in no lane; x == x in every one
      t = "x == x";
      p = "x == x";
    }
    // tl.minimum / tl.maximum of floats: minnum / maxnum by default, NaN-propagating minimum /
    // maximum with propagate_nan=ALL
    if (op == BinOp::Min || op == BinOp::Max) p = p.substr(0, p.size() - 1) + ", propagate_nan=tl.PropagateNan.ALL)";
    check_op(info.name, t, p, [op](int i) { return ref_binary(op, i); });
  }
}

TEST_CASE("every reduction of the table: .tile and .py spellings, printer, interpreter") {
  for (RedOp op : kAllRedOps) {
    const OpInfo& info = op_info(op);
    // tl.max / tl.min / tl.argmax / tl.argmin of floats leave NaN lanes out as Triton's library does
    // (the .py reader builds that as the TTIR reader does: NaN read as -inf / inf, NaN where all are)
    std::string pir;
    std::string t = tile_expr(info, 1);
    const bool large = op == RedOp::Max || op == RedOp::Argmax, arg = op == RedOp::Argmax || op == RedOp::Argmin;
    if (op == RedOp::Max || op == RedOp::Min || arg) {
      std::string inner = std::string(info.name) + "(where(y != y, " + (large ? "-inf" : "inf") + ", y), axis=0)";
      pir = arg ? inner : "where(sum((y == y).to(i32), axis=0) == 0, nan, " + inner + ")";
    }
    check_op(info.name, t, py_expr(info, 1), [op](int) { return ref_reduce(op); }, pir);
  }
}

TEST_CASE("the op tables are consistent") {
  auto check_row = [](const OpInfo& i) {
    CAPTURE(i.name);
    CHECK(i.name[0] != '\0');
    CHECK(i.py[0] != '\0');  // every op has a Triton spelling (the test above uses it)
    if (i.form == OpForm::Infix) CHECK(i.prec >= Prec::Or);
    if (i.form == OpForm::Infix) CHECK(i.prec <= Prec::Mul);
    if (i.form == OpForm::Call) CHECK(i.prec == Prec::Postfix);
    if (i.form == OpForm::Prefix) CHECK(i.prec == Prec::Unary);
  };
  for (UnOp op : kAllUnOps) check_row(op_info(op));
  for (BinOp op : kAllBinOps) check_row(op_info(op));
  for (RedOp op : kAllRedOps) check_row(op_info(op));
  CHECK(std::string(unop_name(UnOp::Sigmoid)) == "sigmoid");
  CHECK(unop_is_math(UnOp::Tanh));
  CHECK(!unop_is_math(UnOp::Abs));
  CHECK(binop_is_compare(BinOp::Ne));
  CHECK(binop_is_call(BinOp::Cdiv));
  CHECK(op_result_elem(TypeRule::IntOnly, Scalar::F32) == std::nullopt);
  CHECK(op_result_elem(TypeRule::FloatFn, Scalar::I64) == Scalar::F32);
  CHECK(op_result_elem(TypeRule::SumAcc, Scalar::BF16) == Scalar::F32);
}
