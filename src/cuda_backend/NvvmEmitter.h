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
  int conversions = 0;           // layout conversions through shared memory
  int vector_accesses = 0;       // global loads/stores emitted as vectors
  int mma_dots = 0;              // dots on the tensor cores
  int pipelined_loops = 0;       // K loops whose operand loads are pipelined with cp.async
  // `emit --layouts`: per statement id, the layouts of what it computes and how it accesses memory.
  std::vector<std::pair<int, std::string>> notes;
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

// The largest dynamic shared memory a CTA may use on `arch` (sm_90: 227 KiB, sm_80: 163 KiB,
// other sm_8x: 99 KiB, older: 48 KiB).
int64_t max_dynamic_smem(const std::string& arch);

}  // namespace dtsim
