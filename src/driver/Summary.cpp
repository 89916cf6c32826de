// Formatting of run summaries, the sanitizer line and --check verdicts.
#include "driver/Summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtsim {

namespace {

std::string fmt_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}


}  // namespace

const char* sanitize_name(Sanitize s) {
  switch (s) {
    case Sanitize::None: return "none";
    case Sanitize::Bounds: return "bounds";
    case Sanitize::Conflicts: return "conflicts";
    case Sanitize::All: return "all";
  }
  return "?";
}

std::string buffer_summary(const Buffer& b) {
  std::string line = b.name + ": " + scalar_name(b.dtype) + shape_str(b.shape);
  double sum = 0;
  int64_t n = b.numel();
  for (int64_t i = 0; i < n; ++i) sum += b.get(i);
  line += " checksum=" + fmt_g(sum) + " first=[";
  for (int64_t i = 0; i < std::min<int64_t>(n, 8); ++i) line += (i ? ", " : "") + fmt_g(b.get(i));
  line += n > 8 ? ", ...]" : "]";
  return line;
}

std::string outputs_summary(const Buffers& bufs) {
  std::string out;
  for (const Buffer& b : bufs.list)
    if (b.io == BufIO::Out || b.io == BufIO::InOut) out += buffer_summary(b) + "\n";
  return out;
}

std::string sanitizer_line(Sanitize s, const RunReport& r) {
  std::string instances = std::to_string(r.instances) + (r.instances == 1 ? " instance)" : " instances)");
  if (s == Sanitize::None) return "sanitizer: off (" + instances;
  std::string what = r.findings_count == 0 ? "no findings"
                     : r.findings_count == 1 ? "1 finding"
                                             : std::to_string(r.findings_count) + " findings";
  if (!r.warnings.empty()) what += r.warnings.size() == 1 ? ", 1 warning" : ", " + std::to_string(r.warnings.size()) + " warnings";
  return std::string("sanitizer: ") + sanitize_name(s) + ": " + what + " (" + instances;
}

double check_tolerance(Scalar dtype) {
  switch (dtype) {
    case Scalar::F32: return 1e-4;
    case Scalar::F16: return 1e-2;
    case Scalar::BF16: return 5e-2;
    case Scalar::F8E4M3: return 0.125;
    case Scalar::F8E5M2:
    case Scalar::F8E5B16: return 0.25;
    case Scalar::F8E4B15:
    case Scalar::F8E4B8: return 0.125;
    case Scalar::F64: return 1e-9;
    case Scalar::I1:
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32:
    case Scalar::I64: return 0;
  }
  return 0;
}

double max_rel_err(const Buffer& got, const std::vector<double>& ref) {
  if (static_cast<int64_t>(ref.size()) != got.numel()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get(i), r = ref[static_cast<size_t>(i)];
    double e;
    if (std::isnan(g) || std::isnan(r)) e = std::isnan(g) && std::isnan(r) ? 0 : INFINITY;
    else if (std::isinf(g) || std::isinf(r)) e = g == r ? 0 : INFINITY;
    else e = std::fabs(g - r) / std::max(std::fabs(r), 1.0);
    worst = std::max(worst, e);
  }
  return worst;
}

std::string check_line(const std::string& name, double err, double tol, bool* pass) {
  *pass = err <= tol;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: max rel err = %.3g  %s (tol %g)", name.c_str(), err, *pass ? "PASS" : "FAIL", tol);
  return buf;
}

std::vector<double> buffer_values(const Buffer& b) {
  std::vector<double> v(static_cast<size_t>(b.numel()));
  for (int64_t i = 0; i < b.numel(); ++i) v[static_cast<size_t>(i)] = b.get(i);
  return v;
}

}  // namespace dtsim
