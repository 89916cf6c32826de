// Property test: for every example algorithm, random *legal* schedules (block / tensorize / map /
// fuse_at / num_warps) at random, mostly non-divisible sizes must match the schedule-free
// reference under the interpreter with the sanitizer on. A failure prints the seed and a complete
// `.dt` reproduction, shrunk (smaller sizes, fewer schedule calls) while it still fails.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "dt_harness.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {

std::string failure_of(const DtProgram& q, uint64_t seed) {
  try {
    return run_and_compare(q, seed, tolerance_for(q));
  } catch (const UserError& e) {
    return "error: " + e.render();
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
}

bool still_legal(DtProgram& q) {
  try {
    dt_apply_schedule(q);
    (void)lower_dt(q);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

// Greedy shrinking: drop schedule calls (except compile), then shrink each size, keeping every step
// that still fails.
DtProgram shrink(DtProgram q, uint64_t seed) {
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < q.calls.size(); ++i) {
      if (q.calls[i].prim == "compile" || q.calls[i].prim == "compile_to_kernel") continue;
      DtProgram t = q;
      t.calls.erase(t.calls.begin() + static_cast<long>(i));
      if (still_legal(t) && !failure_of(t, seed).empty()) { q = t; progress = true; break; }
    }
    for (DtSymbol& s : q.syms) {
      if ((s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar) || s.size <= 1) continue;
      for (int64_t cand : {int64_t(1), s.size / 2, s.size - 1}) {
        if (cand < 1 || cand >= s.size) continue;
        DtProgram t = q;
        (void)bind_dt_sizes(t, {{s.name + "_SIZE", std::to_string(cand)}});  // the dims tied to it shrink with it
        if (still_legal(t) && !failure_of(t, seed).empty()) { q = t; progress = true; break; }
      }
    }
  }
  return q;
}

}  // namespace

TEST_CASE("random legal schedules match the reference on every example algorithm") {
  int per_example = 10;
  if (const char* n = std::getenv("DTSIM_PROPERTY_TRIALS")) per_example = std::atoi(n);
  int schedules_tried = 0;
  for (const std::string& f : dt_examples()) {
    auto p = parse_dt_file(f);
    std::string name = std::filesystem::path(f).stem().string();
    for (int trial = 0; trial < per_example; ++trial) {
      uint64_t seed = std::hash<std::string>{}(name) % 100000 * 100 + static_cast<uint64_t>(trial);
      std::string text;
      std::map<std::string, int64_t> sizes;
      auto q = with_random_schedule(*p, seed, &text, &sizes);
      ++schedules_tried;
      std::string err = failure_of(*q, seed);
      if (!err.empty()) {
        DtProgram small = shrink(*q, seed);
        FAIL_CHECK(name << " seed " << seed << ": " << err << "\n--- schedule (.dt):\n" << text << "--- shrunk reproduction (.dt):\n"
                        << dt_program_text(small) << "--- shrunk failure: " << failure_of(small, seed));
      }
    }
  }
  CHECK(schedules_tried >= 13 * per_example);
}

TEST_CASE("random schedules are legal, varied and reproducible") {
  auto p = parse_dt_file(std::string(DTSIM_SOURCE_DIR) + "/examples/attention.dt");
  std::set<std::string> texts;
  int fused = 0, blocked = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::string a, b;
    std::map<std::string, int64_t> sa, sb;
    auto q1 = with_random_schedule(*p, seed, &a, &sa);
    auto q2 = with_random_schedule(*p, seed, &b, &sb);
    CHECK(a == b);
    CHECK(sa == sb);
    texts.insert(a);
    fused += a.find("fuse_at") != std::string::npos;
    blocked += a.find(".block(") != std::string::npos;
    CHECK_NOTHROW(lower_dt(*q1));
    // the description is a complete program: it parses back to the same schedule
    int id = Sources::add("<random-" + std::to_string(seed) + ">", a);
    auto back = parse_dt(id);
    CHECK(dt_program_text(*back) == a);
  }
  CHECK(texts.size() >= 15);
  CHECK(fused >= 5);
  CHECK(blocked >= 5);
}
