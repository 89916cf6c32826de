// Runtime values: definedness, element access and the human-readable (numpy-like) rendering used
// by print() and the debugger.
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

// Shortest text that reads back to the same value in the value's precision.
std::string float_text(double v, bool f64, bool in_tile) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    double back = std::strtod(buf, nullptr);
    if (f64 ? back == v : static_cast<float>(back) == static_cast<float>(v)) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += in_tile ? "." : ".0";
  return s;
}

std::string elem_text(const Value& v, int64_t i, bool in_tile) {
  double x = v.get(i);
  if (v.type.ptr || is_int(v.type.elem)) {
    if (v.type.elem == Scalar::I1 && !v.type.ptr) return x != 0 ? "True" : "False";
    return std::to_string(static_cast<int64_t>(x));
  }
  return float_text(x, v.type.elem == Scalar::F64, in_tile);
}

// Nested brackets over the given element texts (row-major), numpy style.
std::string nest(const std::vector<std::string>& t, const Shape& s, size_t dim, int64_t& pos, size_t width) {
  std::string out = "[";
  for (int64_t i = 0; i < s[dim]; ++i) {
    if (dim + 1 == s.size()) {
      if (i) out += " ";
      const std::string& e = t[static_cast<size_t>(pos++)];
      out += std::string(width > e.size() ? width - e.size() : 0, ' ') + e;
    } else {
      if (i) out += std::string(s.size() - dim - 1, '\n') + std::string(dim + 1, ' ');
      out += nest(t, s, dim + 1, pos, width);
    }
  }
  return out + "]";
}

}  // namespace

std::string format_value(const Value& v, const Value* mask) {
  if (!v.defined()) return "<undefined>";
  if (v.type.is_scalar()) return elem_text(v, 0, false);
  int64_t n = v.type.numel();
  if (n > 64) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      double x = v.get(i);
      if (std::isnan(x)) nan = true;
      lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
    }
    bool f64 = v.type.elem == Scalar::F64;
    std::string out = v.type.str() + " min=" + float_text(lo, f64, false) + " max=" + float_text(hi, f64, false) +
                      " mean=" + float_text(sum / static_cast<double>(n), true, false) + (nan ? " (has nan)" : "") + " corner=";
    // Top-left corner: up to 4 rows x 8 columns of the last two axes, first index elsewhere.
    const Shape& s = v.type.shape;
    int64_t cols = s.back(), rows = s.size() >= 2 ? s[s.size() - 2] : 1;
    int64_t rc = std::min<int64_t>(rows, 4), cc = std::min<int64_t>(cols, 8);
    out += s.size() >= 2 ? "[" : "";
    for (int64_t r = 0; r < rc; ++r) {
      out += r ? " [" : "[";
      for (int64_t c = 0; c < cc; ++c) {
        if (c) out += ' ';
        out += elem_text(v, r * cols + c, true);
      }
      out += cc < cols ? " ...]" : "]";
    }
    out += s.size() >= 2 ? (rc < rows ? " ...]" : "]") : "";
    return out;
  }
  std::vector<std::string> t(static_cast<size_t>(n));
  size_t width = 0;
  for (int64_t i = 0; i < n; ++i) {
    t[static_cast<size_t>(i)] = mask && mask->get(i) == 0 ? "--" : elem_text(v, i, true);
    width = std::max(width, t[static_cast<size_t>(i)].size());
  }
  int64_t pos = 0;
  return nest(t, v.type.shape, 0, pos, width);
}

}  // namespace dtsim
