// CudaFinding -> Finding (Findings.h).
#include "driver/Findings.h"

namespace dtsim {

#ifdef DTSIM_HAVE_CUDA
Finding finding_of(const CudaFinding& cf) {
  Finding f;
  switch (cf.kind) {
    case CudaFinding::AssertFailed: f.kind = Finding::AssertFailed; break;
    case CudaFinding::OutOfBounds: f.kind = Finding::OutOfBounds; break;
    case CudaFinding::Conflict: f.kind = Finding::WriteWrite; break;
  }
  f.message = cf.message;
  if (cf.instances > 1)
    f.message += "  " + std::to_string(cf.instances) + " program instances of kernel '" + cf.kernel +
                 "' failed this way (the one with the smallest pid is shown)\n";
  f.loc = cf.loc;
  f.pid = cf.pid;
  f.buffer = cf.buffer;
  f.flat_index = cf.flat_index;
  f.lanes = cf.lanes;
  return f;
}
#endif

}  // namespace dtsim
