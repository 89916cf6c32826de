// The `.tile` printer: canonical text for any IR tree, parsed or built with the builders.
//
// Canonical choices (the parser reads every one back to the same text):
//   * minimal parentheses by precedence (levels below); comparisons never chain;
//   * floats in the shortest form that reads back to the same double, always with '.', 'e', inf or nan;
//   * ExpandDims with axis >= 0 as a subscript (x[None, :], x[:, None], x[:, :, None]);
//     a negative axis as expand_dims(x, -1);
//   * logical not prints as '~' (it is Unary Not), && and || for the logical binary ops;
//   * a typed (non-weak) literal as LIT.to(dtype), except i1 literals (True/False);
//   * Full as zeros([..], dt) when its value is a zero literal, else full([..], v, dt);
//   * load/store masks as keywords (mask=, other=), reductions as sum(x, axis=1);
//   * range(lo, hi) without a unit step; `else { if ... }` as `else if`;
//   * print_stmt's indent is a nesting level (two spaces each).
#include "ir/Printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dtsim {

namespace {

// Precedence levels (IR.h's Prec, loosest first): an operand prints bare when its level is at
// least the level its position needs.
constexpr int level(Prec p) { return static_cast<int>(p); }
constexpr int kCompare = level(Prec::Compare);
constexpr int kUnary = level(Prec::Unary);
constexpr int kPostfix = level(Prec::Postfix);

const ExprP& need(const ExprP& e) {
  if (!e) internal_error("Printer", "missing operand");
  return e;
}

int binop_prec(BinOp op) { return level(op_info(op).prec); }

bool const_negative(const Expr& e) {
  if (e.dtype == Scalar::I1 && !e.is_float) return false;  // True / False
  return e.is_float ? (!std::isnan(e.fval) && std::signbit(e.fval)) : e.ival < 0;
}

int prec_of(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Const: return const_negative(e) ? kUnary : kPostfix;
    case ExprKind::Unary: return level(op_info(e.uop).prec);
    case ExprKind::Binary: return binop_prec(e.bop);
    case ExprKind::Var:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::Where:
    case ExprKind::Cast:
    case ExprKind::Bitcast:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Swizzle2d:
    case ExprKind::CombineArg:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      return kPostfix;
  }
  return kPostfix;
}

}  // namespace

// Shortest decimal form that reads back as the same double; always recognisably a float.
std::string format_float_literal(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e16) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string expr_str(const ExprP& e);

// `e` as an operand needing at least level `min`.
std::string operand(const ExprP& e, int min) {
  std::string s = expr_str(need(e));
  return prec_of(*e) < min ? "(" + s + ")" : s;
}

std::string const_str(const Expr& e) {
  if (e.dtype == Scalar::I1 && !e.is_float) return e.ival ? "True" : "False";
  std::string lit = e.is_float ? format_float_literal(e.fval) : std::to_string(e.ival);
  if (e.weak) return lit;
  return lit + ".to(" + scalar_name(e.dtype) + ")";
}

std::string list_str(const std::vector<ExprP>& v, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to; ++i) s += (i > from ? ", " : "") + expr_str(need(v[i]));
  return s;
}

std::string call(const char* fn, const std::vector<ExprP>& args) {
  return std::string(fn) + "(" + list_str(args, 0, args.size()) + ")";
}

std::string full_str(const Expr& e) {
  if (e.args.empty()) internal_error("Printer", "full() without a value");
  const ExprP& v = need(e.args.back());
  std::string shape = "[" + list_str(e.args, 0, e.args.size() - 1) + "]";
  bool zero = v->kind == ExprKind::Const &&
              (v->is_float ? (v->fval == 0 && !std::signbit(v->fval)) : v->ival == 0);
  if (zero) return "zeros(" + shape + ", " + scalar_name(e.dtype) + ")";
  return "full(" + shape + ", " + expr_str(v) + ", " + scalar_name(e.dtype) + ")";
}

std::string binary_str(const Expr& e) {
  if (binop_is_call(e.bop)) return call(binop_name(e.bop), e.args);
  int p = binop_prec(e.bop);
  // Comparisons do not chain, so both sides need a tighter level; other ops associate left.
  int left = p == kCompare ? p + 1 : p;
  return operand(e.args[0], left) + " " + binop_name(e.bop) + " " + operand(e.args[1], p + 1);
}

std::string unary_str(const Expr& e) {
  const OpInfo& op = op_info(e.uop);
  switch (op.form) {
    case OpForm::Prefix: {
      std::string x = operand(e.args[0], kUnary);
      if (x[0] == '-') x = "(" + x + ")";  // never `--3`, which would read back as a literal
      return op.name + x;
    }
    case OpForm::Call: return std::string(op.name) + "(" + expr_str(need(e.args[0])) + ")";
    case OpForm::Infix: break;
  }
  internal_error("Printer", std::string("unary op '") + op.name + "' has no unary form");
}

std::string load_str(const Expr& e) {
  std::string s = "load(" + expr_str(need(e.args[0]));
  if (e.args.size() > 1 && e.args[1]) s += ", mask=" + expr_str(e.args[1]);
  if (e.args.size() > 2 && e.args[2]) s += ", other=" + expr_str(e.args[2]);
  return s + ")";
}

// Several operands: the number of them while their combine function is printed (its arguments are
// a0 .. a<N-1>, b0 .. b<N-1>).
static thread_local size_t combine_operands = 0;

// `, combine=(a, b) -> f` of a reduce / associative_scan ("" for the other reductions and scans);
// of N operands `, combine=(a0, a1, b0, b1) -> (f0, f1), part=K`.
static std::string combine_str(const Expr& e) {
  if (!e.fns.empty()) {
    const size_t n = e.fns.size();
    std::string names, bodies;
    for (size_t i = 0; i < 2 * n; ++i) names += (i ? ", " : "") + std::string(i < n ? "a" : "b") + std::to_string(i % n);
    size_t saved = combine_operands;
    combine_operands = n;
    for (size_t i = 0; i < n; ++i) bodies += (i ? ", " : "") + expr_str(e.fns[i]);
    combine_operands = saved;
    return ", combine=(" + names + ") -> (" + bodies + "), part=" + std::to_string(e.part);
  }
  if (!e.fn) return "";
  return ", combine=(a, b) -> " + expr_str(e.fn);
}

// The operand of a reduce / associative_scan: `x`, or `[x, y, ...]` of several.
static std::string combine_operands_str(const Expr& e) {
  if (e.args.size() == 1) return expr_str(need(e.args[0]));
  std::string s = "[";
  for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + expr_str(need(e.args[i]));
  return s + "]";
}

std::string expr_str(const ExprP& ep) {
  const Expr& e = *need(ep);
  switch (e.kind) {
    case ExprKind::Const: return const_str(e);
    case ExprKind::Var: return e.name;
    case ExprKind::ProgramId: return "program_id(" + std::to_string(e.axis) + ")";
    case ExprKind::NumPrograms: return "num_programs(" + std::to_string(e.axis) + ")";
    case ExprKind::Arange: return call("arange", e.args);
    case ExprKind::Full: return full_str(e);
    case ExprKind::Unary: return unary_str(e);
    case ExprKind::Binary: return binary_str(e);
    case ExprKind::Where: return call("where", e.args);
    case ExprKind::Cast: return operand(e.args[0], kPostfix) + ".to(" + scalar_name(e.dtype) + ")";
    case ExprKind::Bitcast: return operand(e.args[0], kPostfix) + ".to(" + scalar_name(e.dtype) + ", bitcast=True)";
    case ExprKind::ExpandDims: {
      if (e.axis < 0) return "expand_dims(" + expr_str(need(e.args[0])) + ", " + std::to_string(e.axis) + ")";
      // Axis 0 reads best as x[None, :] (the ':' only documents the kept axis).
      std::string sub;
      for (int i = 0; i < e.axis; ++i) sub += ":, ";
      return operand(e.args[0], kPostfix) + "[" + sub + (e.axis == 0 ? "None, :]" : "None]");
    }
    case ExprKind::Reshape:
      return "reshape(" + expr_str(need(e.args[0])) + ", [" + list_str(e.args, 1, e.args.size()) + "])";
    case ExprKind::Trans:
      if (e.args.size() == 1) return "trans(" + expr_str(need(e.args[0])) + ")";
      return "permute(" + expr_str(need(e.args[0])) + ", [" + list_str(e.args, 1, e.args.size()) + "])";
    case ExprKind::Broadcast:
      return "broadcast_to(" + expr_str(need(e.args[0])) + ", [" + list_str(e.args, 1, e.args.size()) + "])";
    case ExprKind::Load: return load_str(e);
    case ExprKind::Dot: {
      std::string s = "dot(" + expr_str(need(e.args[0])) + ", " + expr_str(need(e.args[1]));
      if (e.args.size() > 2 && e.args[2]) s += ", " + expr_str(e.args[2]);
      if (e.tf32) s += ", precision=tf32";
      return s + ")";
    }
    case ExprKind::Reduce:
      return std::string(redop_name(e.rop)) + "(" + combine_operands_str(e) + ", axis=" + std::to_string(e.axis) + combine_str(e) + ")";
    case ExprKind::Scan:
      return std::string(scanop_name(e.sop)) + "(" + combine_operands_str(e) + ", axis=" + std::to_string(e.axis) + (e.reverse ? ", reverse=True" : "") +
             combine_str(e) + ")";
    case ExprKind::CombineArg:
      if (combine_operands > 0)
        return std::string(static_cast<size_t>(e.axis) < combine_operands ? "a" : "b") + std::to_string(static_cast<size_t>(e.axis) % combine_operands);
      return e.axis == 0 ? "a" : "b";
    case ExprKind::Swizzle2d: return call("swizzle2d", e.args);
    case ExprKind::IntToPtr: return "int_to_ptr(" + expr_str(need(e.args[0])) + ", " + scalar_name(e.dtype) + ")";
    case ExprKind::PtrToInt: return call("ptr_to_int", e.args);
    case ExprKind::Machine: return std::string("machine(") + machine_reg_name(static_cast<MachineReg>(e.axis)) + ")";
    case ExprKind::Histogram: {
      std::string s = "histogram(" + expr_str(need(e.args[0])) + ", " + expr_str(need(e.args[1]));
      if (e.args.size() > 2 && e.args[2]) s += ", mask=" + expr_str(e.args[2]);
      return s + ")";
    }
    case ExprKind::Gather:
      return "gather(" + expr_str(need(e.args[0])) + ", " + expr_str(need(e.args[1])) + ", axis=" + std::to_string(e.axis) + ")";
  }
  return "?";
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string pad(int indent) { return std::string(static_cast<size_t>(indent) * 2, ' '); }

std::string block_str(const std::vector<StmtP>& body, int indent) {
  std::string s;
  for (const StmtP& st : body) {
    if (!st) internal_error("Printer", "null statement");
    s += print_stmt(*st, indent);
  }
  return s;
}

bool is_unit_step(const ExprP& e) { return e && e->kind == ExprKind::Const && e->weak && !e->is_float && e->ival == 1; }

std::string assign_str(const Stmt& s) {
  if (s.targets.empty() || s.args.empty()) internal_error("Printer", "assignment without a target or value");
  const ExprP& v = need(s.args[0]);
  if (s.aug && s.targets.size() == 1 && v->kind == ExprKind::Binary && v->bop == *s.aug && need(v->args[0])->kind == ExprKind::Var &&
      v->args[0]->name == s.targets[0] && !binop_is_call(*s.aug) && !binop_is_compare(*s.aug))
    return s.targets[0] + " " + binop_name(*s.aug) + "= " + expr_str(v->args[1]);
  std::string t;
  for (size_t i = 0; i < s.targets.size(); ++i) t += (i ? ", " : "") + s.targets[i];
  return t + " = " + expr_str(v);
}

std::string if_str(const Stmt& s, int indent) {
  std::string out = "if " + expr_str(need(s.args[0])) + " {\n" + block_str(s.body, indent + 1) + pad(indent) + "}";
  if (s.orelse.empty()) return out + "\n";
  if (s.orelse.size() == 1 && s.orelse[0] && s.orelse[0]->kind == StmtKind::If)
    return out + " else " + if_str(*s.orelse[0], indent);
  return out + " else {\n" + block_str(s.orelse, indent + 1) + pad(indent) + "}\n";
}

std::string param_str(const Param& p) {
  switch (p.kind) {
    case ParamKind::Pointer: {
      std::string s = p.io == BufIO::In ? "" : std::string(bufio_name(p.io)) + " ";
      s += p.name + ": *" + scalar_name(p.dtype);
      if (!p.shape.empty()) s += "[" + list_str(p.shape, 0, p.shape.size()) + "]";
      return s;
    }
    case ParamKind::Scalar:
    case ParamKind::Constexpr: {
      std::string s = p.name + ": " + (p.kind == ParamKind::Constexpr ? "constexpr" : scalar_name(p.dtype));
      if (p.init) s += " = " + expr_str(p.init);
      return s;
    }
  }
  return "?";
}

constexpr size_t kMaxHeaderWidth = 100;

}  // namespace

std::string print_expr(const ExprP& e) { return expr_str(e); }

std::string print_stmt(const Stmt& s, int indent) {
  std::string out = pad(indent);
  switch (s.kind) {
    case StmtKind::Assign: return out + assign_str(s) + "\n";
    case StmtKind::Store: {
      out += "store(" + expr_str(need(s.args.at(0))) + ", " + expr_str(need(s.args.at(1)));
      if (s.args.size() > 2 && s.args[2]) out += ", mask=" + expr_str(s.args[2]);
      return out + ")\n";
    }
    case StmtKind::Atomic: {
      if (!s.targets.empty()) out += s.targets[0] + " = ";
      out += std::string(atomicop_name(s.aop)) + "(" + expr_str(need(s.args.at(0))) + ", " + expr_str(need(s.args.at(1)));
      if (s.aop == AtomicOp::Cas) out += ", " + expr_str(need(s.args.at(2)));
      else if (s.args.at(2)) out += ", mask=" + expr_str(s.args[2]);
      if (s.sem != MemSem::AcqRel) out += std::string(", sem=") + memsem_name(s.sem);
      if (s.scope != MemScope::Gpu) out += std::string(", scope=") + memscope_name(s.scope);
      return out + ")\n";
    }
    case StmtKind::For: {
      if (s.targets.empty() || s.args.size() < 2) internal_error("Printer", "malformed for loop");
      out += "for " + s.targets[0] + " in range(" + expr_str(need(s.args[0])) + ", " + expr_str(need(s.args[1]));
      if (s.args.size() > 2 && s.args[2] && !is_unit_step(s.args[2])) out += ", " + expr_str(s.args[2]);
      return out + ") {\n" + block_str(s.body, indent + 1) + pad(indent) + "}\n";
    }
    case StmtKind::If: return out + if_str(s, indent);
    case StmtKind::While:
      return out + "while " + expr_str(need(s.args.at(0))) + " {\n" + block_str(s.body, indent + 1) + pad(indent) + "}\n";
    case StmtKind::Print: {
      out += "print(" + quote(s.text);
      for (const ExprP& a : s.args) out += ", " + expr_str(need(a));
      return out + ")\n";
    }
    case StmtKind::Assert: {
      out += "assert(" + expr_str(need(s.args.at(0)));
      if (!s.text.empty() || s.args.size() > 1) out += ", " + quote(s.text);
      for (size_t i = 1; i < s.args.size(); ++i) out += ", " + expr_str(need(s.args[i]));
      return out + ")\n";
    }
    case StmtKind::Return: return out + "return\n";
  }
  return out + "?\n";
}

// The kernel's schedule options as written after num_stages (nothing for those not asked for).
static std::string schedule_options_str(const Kernel& k) {
  std::string out;
  if (k.warp_specialize) out += " warp_specialize";
  if (k.persistent) out += k.persistent_ctas > 0 ? " persistent(" + std::to_string(k.persistent_ctas) + ")" : std::string(" persistent");
  if (k.cluster != 1) out += " cluster(" + std::to_string(k.cluster) + ")";
  return out;
}

std::string print_kernel(const Kernel& k) {
  std::vector<std::string> ps;
  size_t width = 8 + k.name.size();
  for (const Param& p : k.params) {
    ps.push_back(param_str(p));
    width += ps.back().size() + 2;
  }
  std::string head = "kernel " + k.name + "(";
  std::string sep = width > kMaxHeaderWidth ? ",\n" + std::string(head.size(), ' ') : ", ";
  for (size_t i = 0; i < ps.size(); ++i) head += (i ? sep : "") + ps[i];
  head += ")\n    grid(" + list_str(k.grid, 0, k.grid.size()) + ") num_warps(" + std::to_string(k.num_warps) +
          ") num_stages(" + std::to_string(k.num_stages) + ")" + schedule_options_str(k) + " {\n";
  return head + block_str(k.body, 1) + "}\n";
}

std::string print_module(const Module& m) {
  std::string out;
  for (size_t i = 0; i < m.kernels.size(); ++i) out += (i ? "\n" : "") + print_kernel(m.kernels[i]);
  return out;
}

}  // namespace dtsim
