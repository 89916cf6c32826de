// Backend-internal interface of the NVVM IR emitter: the IR text plus what the launcher needs to know
// about each kernel (entry name, threads, dynamic shared memory, kernel parameters in order).
#pragma once

#include <string>
#include <vector>

#include "cuda_backend/Cuda.h"

namespace dtsim {

struct NvvmKernelInfo {
  std::string entry;             // .entry name in the PTX
  int threads = 128;             // num_warps * 32
  int64_t smem_bytes = 0;        // dynamic shared memory needed per CTA
  // Kernel parameters in order: pointer params (buffer name) and runtime scalars (binding name).
  struct Arg {
    std::string name;
    bool pointer = false;
    Scalar dtype = Scalar::I32;
  };
  std::vector<Arg> args;
};

struct NvvmModule {
  std::string ir;
  std::vector<NvvmKernelInfo> kernels;  // one per Module kernel, same order
};

// Lowers a verified module (emit_nvvm returns `.ir` of this).
NvvmModule emit_nvvm_module(const Module& m, const Bindings& b, const CudaOptions& opt);

// The largest dynamic shared memory a CTA may use (sm_90: 227 KiB).
constexpr int64_t kMaxDynamicSmem = 232448;

}  // namespace dtsim
