// Every examples/*.dt: lower, verify, run with the interpreter (sanitizer on), compare with the
// schedule-free reference, at the default sizes and at smaller, non-divisible sizes.
#include <doctest/doctest.h>

#include "dt_harness.h"

using namespace dtsim;
using namespace dtsim::dttest;

TEST_CASE("every DT example matches the reference at its default sizes") {
  auto files = dt_examples();
  CHECK(files.size() >= 13);
  for (const std::string& f : files) {
    CAPTURE(f);
    auto p = parse_dt_file(f);
    std::string err = run_and_compare(*p, 7, tolerance_for(*p));
    CHECK_MESSAGE(err.empty(), err);
  }
}

TEST_CASE("every DT example matches the reference at non-divisible sizes") {
  for (const std::string& f : dt_examples()) {
    CAPTURE(f);
    auto p = parse_dt_file(f);
    for (int variant = 0; variant < 2; ++variant) {
      DtProgram q = *p;
      for (DtSymbol& s : q.syms)
        if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) s.size = variant == 0 ? s.size * 2 / 3 + 1 : std::max<int64_t>(1, s.size / 5 + 3);
      CAPTURE(dt_program_text(q));
      std::string err = run_and_compare(q, 11 + variant, tolerance_for(q));
      CHECK_MESSAGE(err.empty(), err);
    }
  }
}

TEST_CASE("--arg size overrides below the default keep every example correct") {
  for (const std::string& f : dt_examples()) {
    CAPTURE(f);
    auto p = parse_dt_file(f);
    std::map<std::string, std::string> ov;
    for (const DtSymbol& s : p->syms)
      if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) ov[s.name + "_SIZE"] = std::to_string(std::max<int64_t>(1, s.size - 3));
    std::string err = run_and_compare(*p, 5, tolerance_for(*p), ov);
    CHECK_MESSAGE(err.empty(), err);
  }
}
