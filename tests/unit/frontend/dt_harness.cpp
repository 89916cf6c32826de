// Shared helpers of the DT frontend tests (see dt_harness.h).
#include "dt_harness.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "frontend/DT.h"
#include "host/Buffers.h"
#include "interp/Interp.h"
#include "ir/Verify.h"

namespace dtsim::dttest {

std::vector<std::string> dt_examples() {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::directory_iterator(std::string(DTSIM_SOURCE_DIR) + "/examples"))
    if (e.path().extension() == ".dt") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

double tolerance_for(const DtProgram& p) {
  for (const DtSymbol& s : p.syms)
    if ((s.kind == DtSymKind::In || s.kind == DtSymKind::Func) && (s.dtype == Scalar::F16 || s.dtype == Scalar::BF16)) return 2e-2;
  return 1e-4;
}

std::string run_and_compare(const DtProgram& p, uint64_t seed, double tol, const std::map<std::string, std::string>& overrides) {
  Module m = lower_dt(p);
  Bindings b = bind_params(m, overrides);
  verify_module(m, b);
  Buffers bufs = make_buffers(m, b, seed);
  std::map<std::string, std::vector<double>> inputs;
  for (const Buffer& buf : bufs.list) {
    if (buf.io != BufIO::In) continue;
    std::vector<double>& v = inputs[buf.name];
    for (int64_t i = 0; i < buf.numel(); ++i) v.push_back(buf.get(i));
  }
  InterpOptions opt;
  opt.sanitize = Sanitize::All;
  std::ostringstream printed;
  opt.out = &printed;
  RunReport rep = run_module(m, b, bufs, opt);
  if (!rep.ok()) return "sanitizer/runtime finding: " + rep.findings.at(0).message;
  auto ref = eval_dt_reference(p, b, inputs);
  for (auto& [name, want] : ref) {
    const Buffer* got = bufs.find(name);
    if (!got) return "no output buffer '" + name + "'";
    if (got->numel() != static_cast<int64_t>(want.size()))
      return name + ": " + std::to_string(got->numel()) + " elements, reference has " + std::to_string(want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      double g = got->get(static_cast<int64_t>(i)), w = want[i];
      bool same = (std::isnan(g) && std::isnan(w)) || g == w || std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w));
      if (!same) {
        std::ostringstream os;
        os.precision(9);
        os << name << "[" << i << "] = " << g << ", reference " << w;
        return os.str();
      }
    }
  }
  return "";
}

std::shared_ptr<DtProgram> parse_text(const std::string& name, const std::string& text) { return parse_dt(Sources::add(name, text)); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.render();
  }
  return "";
}

}  // namespace dtsim::dttest
