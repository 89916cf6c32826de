// What `dtsim run` prints after a run: one line per reported buffer, the sanitizer line, and the
// `--check` comparison against the DT reference. The formats are stable (tests compare them).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "host/Buffers.h"
#include "interp/Interp.h"

namespace dtsim {

// "z: f32[98432] checksum=<sum of the values, %.6g> first=[v0, v1, ... up to 8 values, %.6g]".
std::string buffer_summary(const Buffer& b);

// Summary lines of every out/inout buffer, in buffer order.
std::string outputs_summary(const Buffers& bufs);

// "none", "bounds", "conflicts", "all".
const char* sanitize_name(Sanitize s);

// "sanitizer: off (N instances)", "sanitizer: bounds: no findings (N instances)",
// "sanitizer: all: 2 findings (N instances)".
std::string sanitizer_line(Sanitize s, const RunReport& r);

// --check: relative error per element = |got - ref| / max(|ref|, 1) (NaN/inf mismatches are
// infinite); max over the buffer, against the tolerance of its dtype.
double check_tolerance(Scalar dtype);
double max_rel_err(const Buffer& got, const std::vector<double>& ref);
// "c: max rel err = 3.1e-07  PASS (tol 0.0001)". `pass` receives the verdict.
std::string check_line(const std::string& name, double err, double tol, bool* pass);

// Row-major values of a buffer as doubles (for the reference evaluator).
std::vector<double> buffer_values(const Buffer& b);

}  // namespace dtsim
