// A model of the GPU for tune's tests: a TuneTimer whose time is a smooth function of the grid and
// num_warps (fastest at 128 program instances and 4 warps), so that the search's timing path runs
// without a GPU. It can also be slow (a delay per candidate) or fail (after some candidates).
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "ir/Diag.h"
#include "tune/Tune.h"

namespace dtsim {

// Fastest at 128 program instances and 4 warps; each factor of two away costs 10%.
class ModelTimer : public TuneTimer {
 public:
  std::string name() const override { return "a model of the GPU"; }
  bool available(std::string*) override { return true; }
  std::string device() override { return "model"; }
  void time(const TuneJobSource& next, const std::function<void(TuneJob&)>& done) override {
    while (TuneJob* j = next()) {
      if (fail_after >= 0 && timed >= fail_after) throw UserError("the model GPU fell off the bus");
      if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      double ms = 0;
      for (const Kernel& k : j->module->kernels) {
        double grid = 1;
        for (const ExprP& g : k.grid) grid *= static_cast<double>(eval_param_expr(g, *j->bindings).as_int());
        ms += 1.0 + 0.1 * std::fabs(std::log2(grid) - 7) + 0.1 * std::fabs(std::log2(k.num_warps) - 2);
      }
      j->ms = ms;
      ++timed;
      done(*j);
    }
  }
  // Called on the checking threads as the CUDA timer's compile ahead is: counts the lowered modules
  // it is given.
  void prepare(const TuneJob& j) override {
    if (j.module && !j.module->kernels.empty()) ++prepared;
  }
  int timed = 0;
  std::atomic<int> prepared{0};
  int delay_ms = 0;      // slept per candidate
  int fail_after = -1;   // >= 0: time() throws once this many candidates were timed
};

}  // namespace dtsim
