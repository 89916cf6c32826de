// The CUDA driver side: libcuda loaded with dlopen (exact `_v2` symbol names), the primary context,
// module load with the JIT log, buffer copies and launches (cuda_available / run_module_cuda).
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"

namespace dtsim {

namespace {

#define DTSIM_CU_FNS(X)                                                                                  \
  X(cuInit, "cuInit", (unsigned))                                                                        \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int*))                                                    \
  X(cuGetErrorString, "cuGetErrorString", (CUresult, const char**))                                      \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int*))                                                        \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice*, int))                                                        \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext*, CUdevice))                        \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                                     \
  X(cuCtxSynchronize, "cuCtxSynchronize", (void))                                                        \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", (CUmodule*, const void*, unsigned, CUjit_option*, void**)) \
  X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction*, CUmodule, const char*))                    \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule))                                                        \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction, CUfunction_attribute, int))                   \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr*, size_t))                                                 \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                                            \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void*, size_t))                                 \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void*, CUdeviceptr, size_t))                                       \
  X(cuLaunchKernel, "cuLaunchKernel",                                                                    \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**))

struct Cu {
#define DTSIM_DECL(fn, sym, args) CUresult(*fn) args = nullptr;
  DTSIM_CU_FNS(DTSIM_DECL)
#undef DTSIM_DECL
  bool ok = false;
  std::string why;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
};

std::string cu_error(const Cu& cu, CUresult r) {
  const char* s = nullptr;
  if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUDA error " + std::to_string(static_cast<int>(r));
}

Cu& driver() {
  static Cu cu;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      cu.why = "no CUDA driver found";
      return;
    }
    bool all = true;
#define DTSIM_SYM(fn, sym, args) all = all && (cu.fn = reinterpret_cast<decltype(cu.fn)>(dlsym(h, sym))) != nullptr;
    DTSIM_CU_FNS(DTSIM_SYM)
#undef DTSIM_SYM
    if (!all) {
      cu.why = "no CUDA driver found (libcuda.so.1 lacks the driver API)";
      return;
    }
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
      cu.why = r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY ? "no GPU" : "no GPU (cuInit: " + cu_error(cu, r) + ")";
      return;
    }
    int n = 0, version = 0;
    if (cu.cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
      cu.why = "no GPU";
      return;
    }
    cu.cuDriverGetVersion(&version);
    if (version < 13000) {
      cu.why = "the CUDA driver is too old for PTX 9.0 (driver API " + std::to_string(version) + ", need 13000)";
      return;
    }
    if ((r = cu.cuDeviceGet(&cu.dev, 0)) != CUDA_SUCCESS || (r = cu.cuDevicePrimaryCtxRetain(&cu.ctx, cu.dev)) != CUDA_SUCCESS) {
      cu.why = "cannot open the GPU: " + cu_error(cu, r);
      return;
    }
    cu.ok = true;
  });
  return cu;
}

void check(const Cu& cu, CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) user_error(SourceLoc{}, std::string(what) + " failed: " + cu_error(cu, r));
}

std::array<int64_t, 3> grid_of(const Kernel& k, const Bindings& b) {
  std::array<int64_t, 3> g{1, 1, 1};
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i) {
    g[i] = eval_param_expr(k.grid[i], b).as_int();
    if (g[i] <= 0) user_error(k.grid[i]->loc, "grid axis " + std::to_string(i) + " of kernel '" + k.name + "' is " + std::to_string(g[i]) + "; it must be >= 1");
  }
  return g;
}

}  // namespace

bool cuda_available(std::string* why) {
  Cu& cu = driver();
  if (why) *why = cu.ok ? "" : cu.why;
  return cu.ok;
}

void run_module_cuda(const Module& m, const Bindings& b, Buffers& buffers, const CudaOptions& opt) {
  Cu& cu = driver();
  if (!cu.ok) user_error(SourceLoc{}, cu.why);
  NvvmModule nm = emit_nvvm_module(m, b, opt);
  std::string ptx = compile_ptx(nm.ir, opt);
  check(cu, cu.cuCtxSetCurrent(cu.ctx), "cuCtxSetCurrent");

  std::vector<char> err(16384, '\0'), info(16384, '\0');
  CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                      CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* v[] = {err.data(), reinterpret_cast<void*>(err.size()), info.data(), reinterpret_cast<void*>(info.size())};
  CUmodule mod = nullptr;
  CUresult r = cu.cuModuleLoadDataEx(&mod, ptx.c_str(), 4, o, v);
  if (r != CUDA_SUCCESS) user_error(SourceLoc{}, "loading the PTX failed: " + cu_error(cu, r) + "\n" + err.data());

  // Device copies of every buffer; freed on every path.
  struct Mem {
    const Cu& cu;
    CUmodule mod;
    std::vector<CUdeviceptr> ptrs;
    ~Mem() {
      for (auto p : ptrs)
        if (p) cu.cuMemFree(p);
      cu.cuModuleUnload(mod);
    }
  } mem{cu, mod, {}};
  for (Buffer& buf : buffers.list) {
    CUdeviceptr d = 0;
    size_t bytes = std::max<size_t>(buf.bytes.size(), 1);
    check(cu, cu.cuMemAlloc(&d, bytes), "cuMemAlloc");
    mem.ptrs.push_back(d);
    if (!buf.bytes.empty()) check(cu, cu.cuMemcpyHtoD(d, buf.bytes.data(), buf.bytes.size()), "cuMemcpyHtoD");
  }
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel& k = m.kernels[i];
    const NvvmKernelInfo& ki = nm.kernels[i];
    CUfunction f = nullptr;
    check(cu, cu.cuModuleGetFunction(&f, mod, ki.entry.c_str()), "cuModuleGetFunction");
    if (ki.smem_bytes > 48 * 1024)
      check(cu, cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(ki.smem_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    // Argument storage: one 8-byte cell per parameter, holding the value in its ABI type.
    std::vector<std::array<uint8_t, 8>> cells(ki.args.size());
    std::vector<void*> params;
    for (size_t a = 0; a < ki.args.size(); ++a) {
      const auto& arg = ki.args[a];
      uint8_t* c = cells[a].data();
      if (arg.pointer) {
        int bi = buffers.index(arg.name);
        if (bi < 0) internal_error("CudaDriver", "no buffer named '" + arg.name + "'");
        std::memcpy(c, &mem.ptrs[static_cast<size_t>(bi)], sizeof(CUdeviceptr));
      } else {
        auto it = b.find(arg.name);
        if (it == b.end()) user_error(SourceLoc{}, "no value for parameter '" + arg.name + "'");
        const ScalarValue& sv = it->second;
        switch (arg.dtype) {
          case Scalar::I1: { uint8_t x = sv.as_int() != 0; std::memcpy(c, &x, 1); break; }
          case Scalar::I32: { int32_t x = static_cast<int32_t>(sv.as_int()); std::memcpy(c, &x, 4); break; }
          case Scalar::I64: { int64_t x = sv.as_int(); std::memcpy(c, &x, 8); break; }
          case Scalar::F16: { float x = f16_to_f32(f32_to_f16(static_cast<float>(sv.as_double()))); std::memcpy(c, &x, 4); break; }
          case Scalar::BF16: { float x = bf16_to_f32(f32_to_bf16(static_cast<float>(sv.as_double()))); std::memcpy(c, &x, 4); break; }
          case Scalar::F32: { float x = static_cast<float>(sv.as_double()); std::memcpy(c, &x, 4); break; }
          case Scalar::F64: { double x = sv.as_double(); std::memcpy(c, &x, 8); break; }
        }
      }
      params.push_back(c);
    }
    auto g = grid_of(k, b);
    check(cu, cu.cuLaunchKernel(f, static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2]),
                                static_cast<unsigned>(ki.threads), 1, 1, static_cast<unsigned>(ki.smem_bytes), nullptr,
                                params.data(), nullptr),
          "cuLaunchKernel");
    check(cu, cu.cuCtxSynchronize(), ("kernel '" + k.name + "'").c_str());
  }
  for (size_t i = 0; i < buffers.list.size(); ++i) {
    Buffer& buf = buffers.list[i];
    if (buf.io == BufIO::In || buf.bytes.empty()) continue;
    check(cu, cu.cuMemcpyDtoH(buf.bytes.data(), mem.ptrs[i], buf.bytes.size()), "cuMemcpyDtoH");
    buf.defined = true;
  }
}

}  // namespace dtsim
