// Runtime values: definedness, element access and the human-readable renderings used by print(),
// --print-if and the debugger: numpy-style multi-line tiles (aligned columns, one shared precision
// per float tile, "..." elision of large tiles) and one-line summaries.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "interp/Exec.h"

namespace dtsim {

using namespace exec;

bool Value::defined() const { return data.index() == storage_of(type.elem, type.ptr); }

double Value::get(int64_t flat) const {
  return std::visit([flat](const auto& a) { return static_cast<double>(a.data()[flat]); }, data);
}

namespace {

// The settings of numpy's np.set_printoptions that apply (PrintOptions in Interp.h).
int64_t edge_items() { return std::max<int64_t>(1, print_options().edgeitems); }

bool same_in_type(double back, double v, bool f64) {
  return f64 ? back == v : static_cast<float>(back) == static_cast<float>(v);
}

// Fewest digits after the point (fixed, or in the mantissa of the exponent form) with which `v`
// reads back as itself in its precision; when kMaxDigits are not enough, kMaxDigits less the
// trailing zeros of the value rounded to kMaxDigits (0.30000000000000004 -> 1, as numpy shows 0.3).
int shortest_digits(double v, bool f64, bool exp) {
  const int kMaxDigits = std::clamp(print_options().precision, 0, 17);
  char buf[64];
  for (int p = 0; p < kMaxDigits; ++p) {
    std::snprintf(buf, sizeof buf, exp ? "%.*e" : "%.*f", p, v);
    if (same_in_type(std::strtod(buf, nullptr), v, f64)) return p;
  }
  std::snprintf(buf, sizeof buf, exp ? "%.*e" : "%.*f", kMaxDigits, v);
  std::string s = buf;
  size_t end = exp ? s.find('e') : s.size();
  int p = kMaxDigits;
  while (p > 0 && s[end - 1 - static_cast<size_t>(kMaxDigits - p)] == '0') --p;
  return p;
}

// The texts of float elements, as numpy's default (floatmode "maxprec") writes them: one notation
// for all (the exponent form when the largest magnitude is >= 1e8, the smallest nonzero < 1e-4, or
// their ratio > 1000) and one precision: the most fractional digits any element needs. In the
// fixed form each element keeps its own shortest digits and is padded with spaces to that
// precision, so decimal points align ("0.  0.5 1.25"); the exponent form pads the mantissas with
// zeros ("1.5e-05 1.0e+00"). Non-finite values are nan / inf / -inf.
struct FloatStyle {
  bool exp = false;
  bool f64 = false;
  int digits = 0;
};

FloatStyle float_style(const std::vector<double>& xs, bool f64) {
  double lo = INFINITY, hi = 0;
  for (double x : xs)
    if (std::isfinite(x) && x != 0) lo = std::min(lo, std::fabs(x)), hi = std::max(hi, std::fabs(x));
  FloatStyle st;
  st.f64 = f64;
  st.exp = hi > 0 && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1e3);
  for (double x : xs)
    if (std::isfinite(x)) st.digits = std::max(st.digits, shortest_digits(x, f64, st.exp));
  return st;
}

std::string float_elem(double x, const FloatStyle& st) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[64];
  int own = st.exp ? st.digits : shortest_digits(x, st.f64, false);
  std::snprintf(buf, sizeof buf, st.exp ? "%.*e" : "%.*f", own, x);
  std::string s = buf;
  if (own == 0) {  // "1." / "1.e+05", as numpy writes integral floats
    size_t e = s.find('e');
    s.insert(e == std::string::npos ? s.size() : e, ".");
  }
  return s + std::string(static_cast<size_t>(st.digits - own), ' ');
}

// Shortest text that reads back to the same value in the value's precision (scalars).
std::string float_text(double v, bool f64) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (same_in_type(std::strtod(buf, nullptr), v, f64)) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

bool is_float_value(const Value& v) { return !v.type.ptr && !is_int(v.type.elem); }

std::string int_elem(const Value& v, double x) {
  if (v.type.elem == Scalar::I1 && !v.type.ptr) return x != 0 ? "True" : "False";
  return std::to_string(static_cast<int64_t>(x));
}

// The indices kept along an axis of length n: all, or the first and last kEdge with -1 between.
std::vector<int64_t> kept(int64_t n, bool summarize) {
  const int64_t kEdge = edge_items();
  std::vector<int64_t> out;
  if (!summarize || n <= 2 * kEdge) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (int64_t i = 0; i < kEdge; ++i) out.push_back(i);
  out.push_back(-1);
  for (int64_t i = n - kEdge; i < n; ++i) out.push_back(i);
  return out;
}

struct Layout {
  const Shape& shape;
  std::vector<int64_t> strides;
  std::vector<std::vector<int64_t>> axes;  // kept indices per axis
};

// Calls f(flat) for every shown element, row-major.
template <class F> void for_shown(const Layout& L, size_t dim, int64_t base, F&& f) {
  for (int64_t i : L.axes[dim]) {
    if (i < 0) continue;
    int64_t at = base + i * L.strides[dim];
    if (dim + 1 == L.shape.size()) f(at);
    else for_shown(L, dim + 1, at, f);
  }
}

// Nested brackets, numpy style: a row per line, rows of a 3-D tile's matrices separated by a blank
// line, "..." for elided items and rows, long rows wrapped. `text(flat)` is an element's padded text.
template <class T>
void nest(std::string& out, const Layout& L, size_t dim, int64_t base, const T& text, size_t kLineWidth) {
  out += '[';
  const std::vector<int64_t>& ix = L.axes[dim];
  bool last_dim = dim + 1 == L.shape.size();
  size_t line_start = out.rfind('\n');
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  for (size_t k = 0; k < ix.size(); ++k) {
    if (last_dim) {
      std::string item = ix[k] < 0 ? "..." : text(base + ix[k] * L.strides[dim]);
      if (k) {
        // room is kept for the closing brackets of this row and the enclosing ones on every line,
        // as numpy does
        size_t tail = dim + 1;
        if (out.size() - line_start + 1 + item.size() + tail > kLineWidth) {
          while (out.back() == ' ') out.pop_back();  // a wrapped line ends in its last digit
          out += '\n' + std::string(dim + 1, ' ');
          line_start = out.size() - (dim + 1);
        } else {
          out += ' ';
        }
      }
      out += item;
      continue;
    }
    if (k) out += std::string(L.shape.size() - dim - 1, '\n') + std::string(dim + 1, ' ');
    if (ix[k] < 0) {
      out += "...";
      continue;
    }
    nest(out, L, dim + 1, base + ix[k] * L.strides[dim], text, kLineWidth);
  }
  out += ']';
}

std::string indent_lines(const std::string& s, int indent) {
  if (indent <= 0) return s;
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n') out += std::string(static_cast<size_t>(indent), ' ');
  }
  return out;
}

std::string num6(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

PrintOptions& print_options() {
  static PrintOptions opts;
  return opts;
}

std::string format_element(const Value& v, int64_t i) {
  if (!v.defined()) return "<undefined>";
  if (v.type.elem == Scalar::I1 && !v.type.ptr) return v.get(i) != 0 ? "True" : "False";
  return is_float_value(v) ? float_text(v.get(i), v.type.elem == Scalar::F64) : int_elem(v, v.get(i));
}

std::string format_value(const Value& v, const Value* mask, int indent) {
  if (!v.defined()) return "<undefined>";
  if (v.type.is_scalar()) return is_float_value(v) ? float_text(v.get(0), v.type.elem == Scalar::F64) : int_elem(v, v.get(0));
  const Shape& s = v.type.shape;
  int64_t n = v.type.numel();
  if (n == 0) return "[]";
  Layout L{s, std::vector<int64_t>(s.size(), 1), {}};
  for (size_t d = s.size() - 1; d > 0; --d) L.strides[d - 1] = L.strides[d] * s[d];
  bool summarize = n > print_options().threshold;
  for (int64_t extent : s) L.axes.push_back(kept(extent, summarize));
  auto masked = [&](int64_t i) { return mask && mask->get(i) == 0; };

  // One style for the whole tile, from the elements shown (as numpy does), then one width.
  FloatStyle st;
  if (is_float_value(v)) {
    std::vector<double> xs;
    for_shown(L, 0, 0, [&](int64_t i) {
      if (!masked(i)) xs.push_back(v.get(i));
    });
    st = float_style(xs, v.type.elem == Scalar::F64);
  }
  bool boolean = v.type.elem == Scalar::I1 && !v.type.ptr;
  auto raw = [&](int64_t i) -> std::string {
    if (masked(i)) return "--";
    if (boolean) return v.get(i) != 0 ? " True" : "False";  // numpy pads True to False's width
    return is_float_value(v) ? float_elem(v.get(i), st) : int_elem(v, v.get(i));
  };
  size_t width = 0;
  for_shown(L, 0, 0, [&](int64_t i) { width = std::max(width, raw(i).size()); });
  auto text = [&](int64_t i) {
    std::string e = raw(i);
    return std::string(width - e.size(), ' ') + e;
  };
  // The caller's "name = " prefix (indent) counts in the line width, as numpy's prefix does.
  size_t limit = static_cast<size_t>(std::max(print_options().linewidth - std::max(indent, 0), 10));
  std::string out;
  nest(out, L, 0, 0, text, limit);
  return indent_lines(out, indent);
}

std::string format_summary(const Value& v, const Value* mask) {
  if (!v.defined()) return "<undefined>";
  if (v.type.is_scalar()) return v.type.str() + " " + format_value(v);
  int64_t n = v.type.numel(), shown = 0, counted = 0, truths = 0, pos_inf = 0, neg_inf = 0;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && mask->get(i) == 0) continue;
    double x = v.get(i);
    ++shown;
    truths += x != 0;
    if (std::isnan(x)) {
      nan = true;
      continue;
    }
    lo = std::min(lo, x), hi = std::max(hi, x);
    if (std::isinf(x)) {
      ++(x < 0 ? neg_inf : pos_inf);
      continue;
    }
    sum += x, ++counted;
  }
  std::string out = v.type.str();
  if (mask) out += " (" + std::to_string(shown) + " of " + std::to_string(n) + " lanes active)";
  if (v.type.elem == Scalar::I1 && !v.type.ptr)  // a mask: how many lanes are on
    return out + (shown ? " " + std::to_string(truths) + " True, " + std::to_string(shown - truths) + " False" : " no active lanes");
  if (shown == 0 || lo > hi) return out + (nan ? " all nan" : " no active lanes");
  bool ints = !is_float_value(v);
  auto num = [&](double x) { return ints ? std::to_string(static_cast<int64_t>(x)) : num6(x); };
  out += " min=" + num(lo) + " max=" + num(hi);
  if (pos_inf || neg_inf) {  // the mean of the finite values, and how many are not
    out += counted ? " mean of finite=" + num6(sum / static_cast<double>(counted)) : std::string(" no finite values");
    if (neg_inf) out += " (" + std::to_string(neg_inf) + " -inf)";
    if (pos_inf) out += " (" + std::to_string(pos_inf) + " inf)";
  } else {
    out += " mean=" + num6(sum / static_cast<double>(counted));
  }
  if (nan) out += " (has nan)";
  return out;
}

std::string format_one_line(const Value& v, size_t width) {
  if (!v.defined() || v.type.is_scalar()) return format_value(v);
  if (v.type.numel() <= static_cast<int64_t>(width)) {  // more elements cannot fit
    std::string s = format_value(v);
    if (s.find('\n') == std::string::npos && s.size() <= width) return s;
  }
  return format_summary(v);
}

}  // namespace dtsim
