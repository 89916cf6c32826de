// The schedule-free reference semantics of a `.dt` program: every Func evaluated point by point with
// naive loops in f64, reductions as plain sums/extrema over their RVar's whole extent. It shares no
// code with the lowering; it is the oracle every schedule must match.
#include <cmath>
#include <functional>
#include <limits>

#include "frontend/DtAst.h"

namespace dtsim {

namespace {

// Rounds v to a float format with `mant` significand bits (implicit bit included) and the smallest
// normal exponent `emin` (frexp convention), saturating to inf above `maxv`.
double round_float(double v, int mant, int emin, double maxv) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(v, &e);
  if (e < emin) e = emin;
  double scale = std::ldexp(1.0, mant - e);
  double r = std::nearbyint(v * scale) / scale;
  if (std::fabs(r) > maxv) return r > 0 ? INFINITY : -INFINITY;
  return r;
}

double to_type(Scalar t, double v) {
  switch (t) {
    case Scalar::F16: return round_float(v, 11, -13, 65504.0);
    case Scalar::BF16: return round_float(v, 8, -125, 3.3895313892515355e38);
    case Scalar::F32: return static_cast<double>(static_cast<float>(v));
    case Scalar::F64: return v;
    case Scalar::F8E4M3: return std::isnan(v) ? v : std::fmin(std::fmax(round_float(v, 4, -5, INFINITY), -448.0), 448.0);
    case Scalar::F8E5M2: return std::isnan(v) ? v : std::fmin(std::fmax(round_float(v, 3, -13, INFINITY), -57344.0), 57344.0);
    case Scalar::F8E4B15: return std::isnan(v) ? std::copysign(1.75, v) : std::fmin(std::fmax(round_float(v, 4, -13, INFINITY), -1.75), 1.75);
    case Scalar::F8E4B8: return std::isnan(v) || std::isinf(v) ? NAN : std::fmin(std::fmax(round_float(v, 4, -6, INFINITY), -240.0), 240.0);
    case Scalar::F8E5B16:
      return std::isnan(v) || std::isinf(v) ? NAN : std::fmin(std::fmax(round_float(v, 3, -14, INFINITY), -57344.0), 57344.0);
    case Scalar::I1: return v != 0 ? 1 : 0;
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32:
    case Scalar::I64: {
      if (std::isnan(v)) return 0;
      double hi = t == Scalar::I8 ? 127.0 : t == Scalar::I16 ? 32767.0 : t == Scalar::I32 ? 2147483647.0 : 9.2233720368547758e18;
      return std::trunc(std::fmin(std::fmax(v, -hi - 1), hi));
    }
  }
  return v;
}

// An expression with its names resolved once per Func (symbols, dim numbers, extents, scalar
// values, ops), so that evaluating it at each point looks nothing up by name. The values are those of
// evaluating the syntax tree directly: the same f64 operations in the same order.
struct RefNode {
  enum Kind { Num, Access, Reduce, Where, Bin, Un, Neg, Pass, Dim } kind = Num;
  double num = 0;                    // Num: the literal, a scalar's value or a len()
  std::vector<RefNode> args;
  BinOp bop = BinOp::Add;
  UnOp uop = UnOp::Neg;
  // Access: the tensor, and per position its extent and the env slot of the dim that reads it
  DtExprP expr;
  const DtSymbol* sym = nullptr;
  std::vector<std::pair<int64_t, size_t>> at;
  const std::vector<double>* data = nullptr;  // found on the first read
  // Reduce: 0 rsum, 1 rmax, 2 rmin, 3 rdot over env slot `slot` of extent `n`; Dim: the index in slot `slot`
  int fn = 0;
  size_t slot = 0;
  int64_t n = 0;
};

class RefEval {
 public:
  RefEval(const DtProgram& p, const Bindings& b, const std::map<std::string, std::vector<double>>& in) : p_(p), b_(b), in_(in) {
    for (const DtSymbol& s : p.syms) {
      if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) {
        dim_id_[s.name] = static_cast<int>(sizes_.size());
        auto it = b.find(s.name + "_SIZE");
        sizes_.push_back(it != b.end() ? it->second.as_int() : s.size);
      }
    }
    env_.assign(sizes_.size(), 0);
  }

  const std::vector<double>& func(const std::string& f) {
    auto it = done_.find(f);
    if (it != done_.end()) return it->second;
    const DtSymbol& s = p_.sym(f);
    std::vector<int> ids;
    int64_t n = 1;
    for (auto& d : s.dims) { ids.push_back(dim_id_.at(d)); n *= sizes_[static_cast<size_t>(ids.back())]; }
    RefNode def = resolve(s.def);
    std::vector<double> out(static_cast<size_t>(n));
    std::vector<int64_t> saved = env_;
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t rem = flat;
      for (size_t i = ids.size(); i-- > 0;) {
        int64_t sz = sizes_[static_cast<size_t>(ids[i])];
        env_[static_cast<size_t>(ids[i])] = rem % sz;
        rem /= sz;
      }
      out[static_cast<size_t>(flat)] = to_type(s.dtype, eval(def));
    }
    env_ = saved;
    return done_[f] = std::move(out);
  }

 private:
  const DtProgram& p_;
  const Bindings& b_;
  const std::map<std::string, std::vector<double>>& in_;
  std::map<std::string, int> dim_id_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> env_;
  std::map<std::string, std::vector<double>> done_;  // a map: references to its values stay valid

  size_t slot(const std::string& dim) const { return static_cast<size_t>(dim_id_.at(dim)); }

  double scalar(const std::string& n) {
    auto it = b_.find(n);
    const DtSymbol& s = p_.sym(n);
    return to_type(s.dtype, it != b_.end() ? it->second.as_double() : s.value);
  }

  RefNode resolve(const DtExprP& e) {
    RefNode r;
    auto kids = [&](size_t count) {
      for (size_t i = 0; i < count; ++i) r.args.push_back(resolve(e->args[i]));
    };
    switch (e->kind) {
      case DtExprKind::Num:
        r.num = e->num;
        return r;
      case DtExprKind::Name:
        if (e->is_dim) {  // the index of the point along the dim
          r.kind = RefNode::Dim;
          r.slot = slot(e->name);
          return r;
        }
        r.num = scalar(e->name);
        return r;
      case DtExprKind::Access: {
        r.kind = RefNode::Access;
        r.expr = e;
        r.sym = &p_.sym(e->name);
        for (size_t i = 0; i < e->args.size(); ++i) r.at.push_back({sizes_[slot(r.sym->dims[i])], slot(e->args[i]->name)});
        return r;
      }
      case DtExprKind::Neg:
        r.kind = RefNode::Neg;
        kids(1);
        return r;
      case DtExprKind::Binary: {
        std::optional<BinOp> op = dt_infix_binop(e->op);
        if (!op) internal_error("DtReference", "unknown operator " + e->op);
        r.kind = RefNode::Bin;
        r.bop = *op;
        kids(2);
        return r;
      }
      case DtExprKind::Call: {
        const std::string& fn = e->name;
        if (dt_is_reduction(fn)) {
          r.kind = RefNode::Reduce;
          r.fn = fn == "rsum" ? 0 : fn == "rmax" ? 1 : fn == "rmin" ? 2 : 3;
          r.slot = slot(e->args.back()->name);
          r.n = sizes_[r.slot];
          kids(fn == "rdot" ? 2 : 1);
          return r;
        }
        if (fn == "len") {
          r.num = static_cast<double>(sizes_[slot(e->args[0]->name)]);
          return r;
        }
        if (fn == "reshape") {
          r.kind = RefNode::Pass;
          kids(1);
          return r;
        }
        if (fn == "where") {
          r.kind = RefNode::Where;
          kids(3);
          return r;
        }
        if (std::optional<BinOp> op = dt_call_binop(fn)) {
          r.kind = RefNode::Bin;
          r.bop = *op;
          kids(2);
          return r;
        }
        if (std::optional<UnOp> op = dt_call_unop(fn)) {
          r.kind = RefNode::Un;
          r.uop = *op;
          kids(1);
          return r;
        }
        internal_error("DtReference", "unknown function " + fn);
      }
    }
    internal_error("DtReference", "bad expression");
  }

  double access(RefNode& r) {
    // Position i is read with the access's dim i; the strides are those of the tensor's own dims.
    int64_t flat = 0;
    for (size_t i = 0; i < r.at.size(); ++i) {
      int64_t extent = r.at[i].first, at = env_[r.at[i].second];
      if (at >= extent) throw UserError("reference: " + dt_expr_str(r.expr) + " reads past dim " + std::to_string(i) + " of " + r.sym->name);
      flat = flat * extent + at;
    }
    const std::vector<double>& data = data_of(r);
    if (r.sym->kind == DtSymKind::In && static_cast<int64_t>(data.size()) <= flat)
      throw UserError("reference: input '" + r.sym->name + "' has too few elements");
    return data[static_cast<size_t>(flat)];
  }

  const std::vector<double>& data_of(RefNode& r) {
    if (!r.data) {
      if (r.sym->kind == DtSymKind::In) {
        auto it = in_.find(r.sym->name);
        if (it == in_.end()) throw UserError("reference: no data for input '" + r.sym->name + "'");
        r.data = &it->second;
      } else {
        r.data = &func(r.sym->name);
      }
    }
    return *r.data;
  }

  // A read inside a reduction over env slot `s` of extent `n`: its flat index moves by a fixed step
  // as the reduced index goes 0..n-1. Gives the first element and the step when every one of those n
  // reads is in bounds; false otherwise (the generic path then reports the first read past the end).
  bool strided_read(RefNode& r, size_t s, int64_t n, const double*& first, int64_t& step) {
    if (r.kind != RefNode::Access) return false;
    int64_t flat = 0;
    step = 0;
    for (size_t i = 0; i < r.at.size(); ++i) {
      int64_t extent = r.at[i].first;
      bool reduced = r.at[i].second == s;
      int64_t at = reduced ? 0 : env_[r.at[i].second];
      if ((reduced ? n - 1 : at) >= extent) return false;
      flat = flat * extent + at;
      step = step * extent + (reduced ? 1 : 0);
    }
    const std::vector<double>& data = data_of(r);
    if (flat + (n - 1) * step >= static_cast<int64_t>(data.size())) return false;
    first = data.data() + flat;
    return true;
  }

  double reduce(RefNode& r) {
    double acc = r.fn == 1 ? -INFINITY : r.fn == 2 ? INFINITY : 0.0;
    // Reductions of plain reads (rdot of two tensors, rsum/rmax/rmin of one) loop over the data
    // directly: the same f64 operations in the same order as evaluating each point's tree.
    const double *a = nullptr, *b = nullptr;
    int64_t sa = 0, sb = 0;
    if (r.n > 0 && strided_read(r.args[0], r.slot, r.n, a, sa) && (r.fn != 3 || strided_read(r.args[1], r.slot, r.n, b, sb))) {
      if (r.fn == 3) {
        for (int64_t i = 0; i < r.n; ++i) acc += a[i * sa] * b[i * sb];
        return acc;
      }
      for (int64_t i = 0; i < r.n; ++i) {
        double v = a[i * sa];
        if (r.fn == 0) acc += v;
        else if (std::isnan(v) || std::isnan(acc)) acc = NAN;
        else acc = r.fn == 1 ? std::fmax(acc, v) : std::fmin(acc, v);
      }
      return acc;
    }
    int64_t saved = env_[r.slot];
    for (int64_t i = 0; i < r.n; ++i) {
      env_[r.slot] = i;
      if (r.fn == 3) {
        acc += eval(r.args[0]) * eval(r.args[1]);
      } else {
        double v = eval(r.args[0]);
        if (r.fn == 0) acc += v;
        else if (std::isnan(v) || std::isnan(acc)) acc = NAN;
        else acc = r.fn == 1 ? std::fmax(acc, v) : std::fmin(acc, v);
      }
    }
    env_[r.slot] = saved;
    return acc;
  }

  static double nan_min(double a, double b, bool mx) {
    if (std::isnan(a) || std::isnan(b)) return NAN;
    return mx ? std::fmax(a, b) : std::fmin(a, b);
  }

  // The ops `.dt` spells (IR.h's op tables, column dt), in f64.
  static double unary(UnOp op, double x) {
    switch (op) {
      case UnOp::Neg: return -x;
      case UnOp::Exp: return std::exp(x);
      case UnOp::Exp2: return std::exp2(x);
      case UnOp::Log: return std::log(x);
      case UnOp::Log2: return std::log2(x);
      case UnOp::Sqrt: return std::sqrt(x);
      case UnOp::Rsqrt: return 1.0 / std::sqrt(x);
      case UnOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
      case UnOp::Tanh: return std::tanh(x);
      case UnOp::Erf: return std::erf(x);
      case UnOp::Erfc: return std::erfc(x);
      case UnOp::Floor: return std::floor(x);
      case UnOp::Ceil: return std::ceil(x);
      case UnOp::Trunc: return std::trunc(x);
      case UnOp::Round: return std::round(x);
      case UnOp::Rint: return std::nearbyint(x);
      case UnOp::Sin: return std::sin(x);
      case UnOp::Cos: return std::cos(x);
      case UnOp::Tan: return std::tan(x);
      case UnOp::Asin: return std::asin(x);
      case UnOp::Acos: return std::acos(x);
      case UnOp::Atan: return std::atan(x);
      case UnOp::Sinh: return std::sinh(x);
      case UnOp::Cosh: return std::cosh(x);
      case UnOp::Asinh: return std::asinh(x);
      case UnOp::Acosh: return std::acosh(x);
      case UnOp::Atanh: return std::atanh(x);
      case UnOp::Log10: return std::log10(x);
      case UnOp::Log1p: return std::log1p(x);
      case UnOp::Expm1: return std::expm1(x);
      case UnOp::Cbrt: return std::cbrt(x);
      case UnOp::Abs: return std::fabs(x);
      case UnOp::Not: break;
    }
    internal_error("DtReference", std::string("no .dt form of ") + unop_name(op));
  }
  static double binary(BinOp op, double a, double b) {
    switch (op) {
      case BinOp::Add: return a + b;
      case BinOp::Sub: return a - b;
      case BinOp::Mul: return a * b;
      case BinOp::Div: return a / b;
      case BinOp::Lt: return a < b;
      case BinOp::Le: return a <= b;
      case BinOp::Gt: return a > b;
      case BinOp::Ge: return a >= b;
      case BinOp::Eq: return a == b;
      case BinOp::Ne: return a != b;
      case BinOp::Min: return nan_min(a, b, false);
      case BinOp::Max: return nan_min(a, b, true);
      case BinOp::MinNum: return std::fmin(a, b);
      case BinOp::MaxNum: return std::fmax(a, b);
      case BinOp::Pow: return std::pow(a, b);
      case BinOp::Atan2: return std::atan2(a, b);
      case BinOp::Hypot: return std::hypot(a, b);
      case BinOp::FloorDiv:
      case BinOp::Mod:
      case BinOp::And:
      case BinOp::Or:
      case BinOp::Xor:
      case BinOp::Shl:
      case BinOp::Shr:
      case BinOp::LAnd:
      case BinOp::LOr:
      case BinOp::Cdiv: break;
    }
    internal_error("DtReference", std::string("no .dt form of ") + binop_name(op));
  }

  double eval(RefNode& r) {
    switch (r.kind) {
      case RefNode::Num: return r.num;
      case RefNode::Access: return access(r);
      case RefNode::Reduce: return reduce(r);
      case RefNode::Where: return eval(r.args[0]) != 0 ? eval(r.args[1]) : eval(r.args[2]);
      case RefNode::Bin: {
        double a = eval(r.args[0]), b = eval(r.args[1]);
        return binary(r.bop, a, b);
      }
      case RefNode::Un: return unary(r.uop, eval(r.args[0]));
      case RefNode::Neg: return -eval(r.args[0]);
      case RefNode::Pass: return eval(r.args[0]);
      case RefNode::Dim: return static_cast<double>(env_[r.slot]);
    }
    internal_error("DtReference", "bad node");
  }
};

}  // namespace

std::map<std::string, std::vector<double>> eval_dt_reference(const DtProgram& p, const Bindings& b,
                                                             const std::map<std::string, std::vector<double>>& inputs,
                                                             const std::string& kernel) {
  RefEval ev(p, b, inputs);
  std::map<std::string, std::vector<double>> out;
  std::string want = kernel.empty() ? "" : dt_kernel_func(p, kernel);
  for (const std::string& k : p.kernels)
    if (kernel.empty() || k == want) out[k] = ev.func(k);
  if (!kernel.empty() && out.empty()) throw UserError("no kernel '" + kernel + "'");
  return out;
}

}  // namespace dtsim
