// GPU findings as interpreter findings: the one conversion from the CUDA backend's CudaFinding to
// the Finding every report prints (dtsim run --backend=cuda, the Python module's backend='cuda').
// The driver sits above both executors, which never include each other.
#pragma once

#include "interp/Interp.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

#ifdef DTSIM_HAVE_CUDA
// The finding, its message followed by a line counting the other failing instances when several
// failed the same way.
Finding finding_of(const CudaFinding& cf);
#endif

}  // namespace dtsim
