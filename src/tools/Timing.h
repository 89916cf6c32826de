// The GPU timing protocol shared by `dtsim bench` and `dtsim tune`, so both report the same figure
// for the same kernel: a few runs to estimate, ~25 ms of warm-up, then enough timed runs for ~100 ms
// (5 to 10000, or `reps`), each between two CUDA events after an L2 flush; the median is reported.
#pragma once

#include <functional>
#include <string>
#include <vector>

#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

double median_of(std::vector<double> v);

#ifdef DTSIM_HAVE_CUDA
// Milliseconds of each timed run of kernel `k` of `r` (CudaModuleRunner::kAllKernels: all in order).
// `status` is told what is happening ("estimating", "25 warm-up runs", ...).
std::vector<double> time_cuda_runs(CudaModuleRunner& r, size_t k, int reps,
                                   const std::function<void(const std::string&)>& status = {});
#endif

}  // namespace dtsim
