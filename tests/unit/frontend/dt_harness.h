// Shared helpers of the DT frontend tests: run a DT program through lowering + verifier + the
// interpreter (with the sanitizer) and compare every output with the schedule-free reference.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/DtAst.h"

namespace dtsim::dttest {

// Every `examples/*.dt` file (sorted paths).
std::vector<std::string> dt_examples();

// Runs `p` on seeded random inputs and compares with eval_dt_reference. Returns "" when every output
// matches within `tol` (|got - want| <= tol * max(1, |want|)) and the sanitizer found nothing,
// else a description of the first problem.
std::string run_and_compare(const DtProgram& p, uint64_t seed, double tol, const std::map<std::string, std::string>& overrides = {});

// Tolerance for a program: 1e-4 for f32, looser when f16/bf16 values are involved.
double tolerance_for(const DtProgram& p);

// Parses DT source text registered under `name` (diagnostics name it).
std::shared_ptr<DtProgram> parse_text(const std::string& name, const std::string& text);

// The rendered UserError `f` raises ("" when it raises none).
std::string error_of(const std::function<void()>& f);

}  // namespace dtsim::dttest
