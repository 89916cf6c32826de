// The CUDA backend: verified tile IR -> NVVM IR text -> PTX (libNVVM, loaded at run time) -> launch
// through the CUDA driver API (libcuda loaded at run time). Works, minus launching, without a GPU.
#pragma once

#include <string>

#include "host/Buffers.h"
#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct CudaOptions {
  std::string arch = "sm_90";  // PTX target; libNVVM gets -arch=compute_XX
  bool fast_math = false;      // -ftz=1 -prec-div=0 -prec-sqrt=0 (off: IEEE, matches the interpreter)
};

// NVVM IR (LLVM 7 text dialect, typed pointers) for every kernel of a verified module; constexpr
// parameters are baked in, runtime scalars and buffers become kernel parameters.
std::string emit_nvvm(const Module& m, const Bindings& b, const CudaOptions& opt = {});

// NVVM IR -> PTX with libNVVM (verify first, libdevice added lazily). On failure: UserError whose
// text holds libNVVM's log, the offending IR line and a command that reproduces the failure.
std::string compile_ptx(const std::string& nvvm_ir, const CudaOptions& opt = {});

// Runs `ptxas -arch=<arch> [-v]` on PTX as a whole program. ok=false with the log on failure;
// `log` holds the -v resource report (registers, spills) on success.
struct PtxasResult {
  bool ok = false;
  bool available = true;  // false when no ptxas was found
  std::string log;
};
PtxasResult run_ptxas(const std::string& ptx, const std::string& arch, bool verbose = false);

// Whether a CUDA driver and a GPU can be used; `why` gets "no CUDA driver found" / "no GPU" / ...
bool cuda_available(std::string* why);

// Runs every kernel of a verified module on the GPU, in order, on `buffers` (copied to the device,
// and every Out/InOut/Scratch buffer copied back). UserError "no CUDA driver found" etc. without one.
void run_module_cuda(const Module& m, const Bindings& b, Buffers& buffers, const CudaOptions& opt = {});

}  // namespace dtsim
