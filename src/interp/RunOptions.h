// The options of a run that `dtsim run`/`dtsim debug` flags, `python -m dtsim` flags and
// dtsim.config() share, checked by one function per option so that the three accept the same values
// and say the same thing about a bad one.
#pragma once

#include <cstdint>
#include <string>

#include "interp/Interp.h"

namespace dtsim {

struct RunSettings {
  Sanitize sanitize = Sanitize::All;
  int threads = 1;
  Order order = Order::Sequential;
  uint64_t shuffle_seed = 0;
  bool keep_going = false;
  bool equal_stores_conflict = false;  // equal-stores: warn (false) or conflict (true)
  int64_t max_steps = 0;       // 0 = no budget
  double timeout_s = 0;        // 0 = none
  std::string backend = "interp";
  void apply(InterpOptions& o) const {
    o.sanitize = sanitize;
    o.threads = threads;
    o.order = order;
    o.shuffle_seed = shuffle_seed;
    o.keep_going = keep_going;
    o.equal_stores_conflict = equal_stores_conflict;
  }
};

// Bounds of the numeric options.
constexpr int kMaxThreads = 1024;

// Checks the text `value` of option `name` (sanitize, threads, order, keep-going, equal-stores,
// max-steps, timeout, backend; '_' may stand for '-') and stores it in `s`. Returns "" when it is valid, else
// what is wrong without the option's name: "expects an integer in [1, 1024], got 'abc'". Throws
// nothing; an unknown name is "is not a run option".
std::string set_run_option(RunSettings& s, const std::string& name, const std::string& value);

}  // namespace dtsim
