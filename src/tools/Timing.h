// The GPU timing protocol shared by `dtsim bench` and `dtsim tune`, so both report the same figure
// for the same kernel: a few runs to estimate, ~25 ms of warm-up, then enough timed runs for ~100 ms
// (5 to 10000, or `reps`), each between two CUDA events after an L2 flush; the median is reported.
// `dtsim tune` times many candidates back to back with a shorter window (TimingWindow): the same
// runs and statistic, fewer of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

double median_of(std::vector<double> v);

// How long to warm up and to time: runs for about warm_ms, then timed runs for about timed_ms (at
// least min_reps, at most 10000), sized by an estimate from estimate_runs runs. The defaults are
// bench's protocol. With slow_reps > 0, a kernel slower than timed_ms / min_reps (whose min_reps runs
// alone would outlast the window) gets no warm-up: its estimate runs are timed runs, and as many more
// as make slow_reps or timed_ms. With by_wall, the runs are counted by what one costs on the host's
// clock (its L2 flush, launch and wait included: a 10 us kernel costs ~10x that) instead of the
// kernel's own time, so that the window is wall time.
struct TimingWindow {
  int estimate_runs = 3;
  double warm_ms = 25;
  double timed_ms = 100;
  int min_reps = 5;
  int slow_reps = 0;
  bool by_wall = false;
};

#ifdef DTSIM_HAVE_CUDA
// Milliseconds of each timed run of kernel `k` of `r` (CudaModuleRunner::kAllKernels: all in order).
// `status` is told what is happening ("estimating", "25 warm-up runs", ...). `reps` > 0: that many
// timed runs, whatever the window.
std::vector<double> time_cuda_runs(CudaModuleRunner& r, size_t k, int reps,
                                   const std::function<void(const std::string&)>& status = {}, const TimingWindow& w = {});
#endif

}  // namespace dtsim
