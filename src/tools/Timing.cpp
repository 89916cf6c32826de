// The GPU timing protocol of `dtsim bench` and `dtsim tune` (Timing.h).
#include "tools/Timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace dtsim {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#ifdef DTSIM_HAVE_CUDA
std::vector<double> time_cuda_runs(CudaModuleRunner& r, size_t k, int reps, const std::function<void(const std::string&)>& status,
                                   const TimingWindow& w) {
  auto say = [&](const std::string& s) {
    if (status) status(s);
  };
  say("estimating");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<double> first = r.time(k, std::max(1, w.estimate_runs), true);
  double est = std::max(median_of(first), 1e-4);
  if (w.by_wall) {  // what a run costs with its L2 flush and launch: the window counts that
    double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / static_cast<double>(first.size());
    est = std::max(est, wall);
  }
  if (!reps && w.slow_reps > 0 && est * w.min_reps > w.timed_ms) {
    int n = std::max(w.slow_reps, static_cast<int>(std::ceil(w.timed_ms / est))) - static_cast<int>(first.size());
    say(std::to_string(n + static_cast<int>(first.size())) + " timed runs (a slow kernel: no warm-up)");
    std::vector<double> more = r.time(k, n, true);
    first.insert(first.end(), more.begin(), more.end());
    return first;
  }
  int warm = static_cast<int>(std::clamp(w.warm_ms / est, 1.0, 1000.0));
  say(std::to_string(warm) + " warm-up runs");
  r.time(k, warm, true);
  int n = reps ? reps : static_cast<int>(std::clamp(std::ceil(w.timed_ms / est), static_cast<double>(w.min_reps), 10000.0));
  say(std::to_string(n) + " timed runs");
  return r.time(k, n, true);
}
#endif

}  // namespace dtsim
