// The CUDA driver side: libcuda loaded with dlopen (exact `_v2` symbol names), the primary context,
// module load with the JIT log, buffer copies, launches and event timing (cuda_available,
// run_module_cuda, CudaModuleRunner, the device facts and the copy bandwidth).
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "ir/Walk.h"

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
  X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", (CUdevice))                                   \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                               \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", (CUmodule*, const void*, unsigned, CUjit_option*, void**)) \
  X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction*, CUmodule, const char*))                    \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule))                                                        \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction, CUfunction_attribute, int))                   \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", (int*, CUfunction_attribute, CUfunction))                  \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr*, size_t))                                                 \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                                            \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void*, size_t))                                 \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void*, CUdeviceptr, size_t))                                       \
  X(cuLaunchKernel, "cuLaunchKernel",                                                                    \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**)) \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int*, CUdevice_attribute, CUdevice))                 \
  X(cuDeviceGetName, "cuDeviceGetName", (char*, int, CUdevice))                                          \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t*, CUdevice))                                        \
  X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t*, size_t*))                                                 \
  X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))                  \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream))             \
  X(cuEventCreate, "cuEventCreate", (CUevent*, unsigned))                                                \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                                                      \
  X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                                                 \
  X(cuEventSynchronize, "cuEventSynchronize", (CUevent))                                                 \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", (int*, CUfunction, int, size_t))

struct Cu {
#define DTSIM_DECL(fn, sym, args) CUresult(*fn) args = nullptr;
  DTSIM_CU_FNS(DTSIM_DECL)
#undef DTSIM_DECL
  // cuda.h maps cuEventElapsedTime to the _v2 entry point; older drivers export only the first one.
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  // TMA tensor maps (drivers of CUDA 12 and later; null before: kernels taking maps cannot launch).
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                     const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill) = nullptr;
  // Launches with cluster dimensions (CUDA 12 and later; null before: clustered kernels launch without).
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
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
    cu.cuEventElapsedTime = reinterpret_cast<decltype(cu.cuEventElapsedTime)>(dlsym(h, "cuEventElapsedTime_v2"));
    if (!cu.cuEventElapsedTime)
      cu.cuEventElapsedTime = reinterpret_cast<decltype(cu.cuEventElapsedTime)>(dlsym(h, "cuEventElapsedTime"));
    cu.cuTensorMapEncodeTiled = reinterpret_cast<decltype(cu.cuTensorMapEncodeTiled)>(dlsym(h, "cuTensorMapEncodeTiled"));
    cu.cuLaunchKernelEx = reinterpret_cast<decltype(cu.cuLaunchKernelEx)>(dlsym(h, "cuLaunchKernelEx"));
    if (!all || !cu.cuEventElapsedTime) {
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

int function_registers(const Cu& cu, CUfunction f) {  // per thread, as compiled
  int n = 0;
  check(cu, cu.cuFuncGetAttribute(&n, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute(NUM_REGS)");
  return n;
}

std::array<int64_t, 3> grid_of(const Kernel& k, const Bindings& b) {
  std::array<int64_t, 3> g = grid_extents(k, b);
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i) {
    // CUDA's limits (a larger value would be truncated by the launch's unsigned dimensions).
    int64_t most = i == 0 ? INT32_MAX : 65535;
    if (g[i] > most)
      user_error(k.grid[i]->loc, "grid axis " + std::to_string(i) + " of kernel '" + k.name + "' is " + std::to_string(g[i]) +
                                     "; CUDA launches at most " + std::to_string(most) + " program instances on it");
  }
  return g;
}

Cu& ready_driver() {
  Cu& cu = driver();
  if (!cu.ok) user_error(SourceLoc{}, cu.why);
  check(cu, cu.cuCtxSetCurrent(cu.ctx), "cuCtxSetCurrent");
  return cu;
}

// CUDA events, destroyed on every path.
struct Events {
  const Cu& cu;
  std::vector<CUevent> ev;
  Events(const Cu& c, size_t n) : cu(c) {
    ev.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      CUevent e = nullptr;
      check(cu, cu.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
      ev.push_back(e);
    }
  }
  ~Events() {
    for (CUevent e : ev) cu.cuEventDestroy(e);
  }
  double ms(size_t a, size_t b) const {
    float t = 0;
    check(cu, cu.cuEventElapsedTime(&t, ev[a], ev[b]), "cuEventElapsedTime");
    return t;
  }
};

struct DeviceMem {
  const Cu& cu;
  CUdeviceptr p = 0;
  DeviceMem(const Cu& c, size_t bytes) : cu(c) { check(cu, cu.cuMemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc"); }
  ~DeviceMem() {
    if (p) cu.cuMemFree(p);
  }
};

}  // namespace

bool cuda_available(std::string* why) {
  Cu& cu = driver();
  if (why) *why = cu.ok ? "" : cu.why;
  return cu.ok;
}

int cuda_device_count(std::string* why) {
  Cu& cu = driver();
  if (why) *why = cu.ok ? "" : cu.why;
  int n = 0;
  if (cu.ok && cu.cuDeviceGetCount(&n) != CUDA_SUCCESS) n = 0;
  return n;
}

CudaDeviceInfo cuda_device_info() {
  Cu& cu = ready_driver();
  CudaDeviceInfo d;
  char name[256] = {0};
  check(cu, cu.cuDeviceGetName(name, sizeof name - 1, cu.dev), "cuDeviceGetName");
  d.name = name;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    check(cu, cu.cuDeviceGetAttribute(&v, a, cu.dev), "cuDeviceGetAttribute");
    return v;
  };
  d.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  d.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t mem = 0;
  check(cu, cu.cuDeviceTotalMem(&mem, cu.dev), "cuDeviceTotalMem");
  d.memory_bytes = static_cast<int64_t>(mem);
  return d;
}

double cuda_copy_bandwidth_gbs() {
  static double gbs = -1;
  if (gbs >= 0) return gbs;
  Cu& cu = ready_driver();
  size_t free_b = 0, total_b = 0;
  check(cu, cu.cuMemGetInfo(&free_b, &total_b), "cuMemGetInfo");
  size_t bytes = std::min<size_t>(size_t(512) << 20, free_b / 4) & ~size_t(255);
  if (bytes == 0) user_error(SourceLoc{}, "no free GPU memory to measure the copy bandwidth");
  DeviceMem src(cu, bytes), dst(cu, bytes);
  check(cu, cu.cuMemsetD8Async(src.p, 1, bytes, nullptr), "cuMemsetD8Async");
  const int reps = 20;
  Events ev(cu, 2 * reps);
  for (int i = 0; i < 3; ++i) check(cu, cu.cuMemcpyDtoDAsync(dst.p, src.p, bytes, nullptr), "cuMemcpyDtoDAsync");
  for (int i = 0; i < reps; ++i) {
    check(cu, cu.cuEventRecord(ev.ev[2 * i], nullptr), "cuEventRecord");
    check(cu, cu.cuMemcpyDtoDAsync(dst.p, src.p, bytes, nullptr), "cuMemcpyDtoDAsync");
    check(cu, cu.cuEventRecord(ev.ev[2 * i + 1], nullptr), "cuEventRecord");
  }
  check(cu, cu.cuEventSynchronize(ev.ev.back()), "cuEventSynchronize");
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) ms.push_back(ev.ms(2 * i, 2 * i + 1));
  std::sort(ms.begin(), ms.end());
  double med = ms[ms.size() / 2];
  gbs = med > 0 ? 2.0 * static_cast<double>(bytes) / (med * 1e-3) / 1e9 : 0;
  return gbs;
}

// ---- CudaModuleRunner ----

struct CudaModuleRunner::Impl {
  Cu& cu;
  Bindings b;
  NvvmModule nm;
  CUmodule mod = nullptr;
  std::map<std::string, int> caps;  // register caps for hoisted bounds checks, by entry
  std::vector<std::string> names;
  std::vector<const Kernel*> kernels;
  std::vector<CUfunction> fns;
  std::vector<std::array<int64_t, 3>> grids;
  // Per kernel: the CTAs a persistent kernel is launched with (SMs x CTAs per SM; 0: not persistent).
  std::vector<int64_t> resident;
  // Device buffers, parallel to the Buffers given to upload().
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  std::vector<BufIO> io;
  CudaDevicePool* pool = nullptr;  // ptrs belong to the pool (not freed here), and so does the flush buffer
  std::vector<bool> theirs;  // the caller's device memory (upload's `on_device`): never copied, downloaded or freed
  // Per kernel: one cell per parameter holding its value in the ABI type (8 bytes; a tensor map, 128
  // bytes 64-byte aligned), and pointers to them.
  struct alignas(64) Cell {
    uint8_t b[128];
    uint8_t* data() { return b; }
  };
  std::vector<std::vector<Cell>> cells;
  std::vector<std::vector<void*>> params;
  CUdeviceptr flush = 0;
  size_t flush_bytes = 0;
  CUdeviceptr status = 0;  // the status buffer of kernels with located checks (kDeviceStatusWords u64)
  bool lost = false;       // the context was recreated after a fault: nothing here is valid
  bool bounds = false;     // compiled with bounds checks
  bool int_to_ptr = false;  // some kernel accesses memory through pointers made from integers (never checked)
  // Conflict checks: per buffer, its element words and granule words (0 where no kernel takes them),
  // zero when allocated; a word holds the number of the launch that claimed it (the epoch, counted
  // per runner), so nothing is reset between launches until the 16-bit epoch wraps.
  std::vector<CUdeviceptr> shadows, granules;
  std::vector<size_t> shadow_bytes, granule_bytes;
  uint64_t epoch = 0;

  explicit Impl(Cu& c) : cu(c) {}
  ~Impl() {
    if (lost) return;
    free_buffers();
    if (flush && !pool) cu.cuMemFree(flush);
    if (status) cu.cuMemFree(status);
    if (mod) cu.cuModuleUnload(mod);
  }
  void free_buffers() {
    for (size_t i = 0; i < ptrs.size(); ++i)
      if (ptrs[i] && !pool && !theirs[i]) cu.cuMemFree(ptrs[i]);
    for (auto* v : {&shadows, &granules})
      for (CUdeviceptr s : *v)
        if (s) cu.cuMemFree(s);
    shadows.clear();
    shadow_bytes.clear();
    granules.clear();
    granule_bytes.clear();
    ptrs.clear();
    sizes.clear();
    io.clear();
    theirs.clear();
  }
};

std::string cuda_device_arch() {
  CudaDeviceInfo d = cuda_device_info();
  std::string a = "sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
  return d.cc_major == 9 && d.cc_minor == 0 ? a + "a" : a;
}

std::string resolve_cuda_arch(const CudaOptions& opt) {
  if (!opt.arch.empty()) return opt.arch;
  std::string why;
  return cuda_available(&why) ? cuda_device_arch() : "sm_90";
}

CudaModuleRunner::CudaModuleRunner(const Module& m, const Bindings& b, const CudaOptions& given) {
  CudaOptions opt = given;
  opt.arch = resolve_cuda_arch(given);
  Cu& cu = ready_driver();
  impl_ = std::make_unique<Impl>(cu);
  Impl& r = *impl_;
  r.b = b;
  r.bounds = opt.bounds_checks;
  for (const Kernel& k : m.kernels)
    r.int_to_ptr = r.int_to_ptr || any_expr(k.body, [](const Expr& e) { return e.kind == ExprKind::IntToPtr; });
  r.nm = emit_nvvm_module(m, b, opt);
  check(cu, cu.cuCtxSetCurrent(cu.ctx), "cuCtxSetCurrent");
  // Machine code from the cubin cache where precompile_cuda_module made it; else the driver
  // compiles the PTX.
  auto load = [&](const NvvmModule& nm, const CudaOptions& o_) {
    std::string ptx = compile_ptx(nm.ir, o_);
    std::vector<char> err(16384, '\0'), info(16384, '\0');
    CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* v[] = {err.data(), reinterpret_cast<void*>(err.size()), info.data(), reinterpret_cast<void*>(info.size())};
    std::string cubin = cached_cubin(ptx, o_);
    CUmodule mod = nullptr;
    CUresult res = cu.cuModuleLoadDataEx(&mod, cubin.empty() ? static_cast<const void*>(ptx.c_str()) : cubin.data(), 4, o, v);
    if (res != CUDA_SUCCESS) user_error(SourceLoc{}, "loading the PTX failed: " + cu_error(cu, res) + "\n" + err.data());
    return mod;
  };
  auto registers = [&](CUmodule mod, const std::string& entry) {
    CUfunction f = nullptr;
    check(cu, cu.cuModuleGetFunction(&f, mod, entry.c_str()), "cuModuleGetFunction");
    return function_registers(cu, f);
  };
  r.mod = load(r.nm, opt);
  // Bounds-checked kernels whose hoisted checks' copy takes registers past the count that keeps the
  // unchecked kernel's CTAs per SM: capped at that count when the unchecked kernel fits in it (the
  // checked copy, run only where the hoisted test fails, may then spill).
  std::vector<size_t> over;
  for (size_t i = 0; i < r.nm.kernels.size(); ++i) {
    const NvvmKernelInfo& ki = r.nm.kernels[i];
    if (ki.occupancy_registers && registers(r.mod, ki.entry) > ki.occupancy_registers) over.push_back(i);
  }
  if (!over.empty()) {
    CudaOptions unchecked = opt;
    unchecked.bounds_checks = false;
    CUmodule um = load(emit_nvvm_module(m, b, unchecked), unchecked);
    CudaOptions capped = opt;
    for (size_t i : over) {
      const NvvmKernelInfo& ki = r.nm.kernels[i];
      if (registers(um, ki.entry) <= ki.occupancy_registers) capped.max_registers[ki.entry] = ki.occupancy_registers;
    }
    cu.cuModuleUnload(um);
    r.caps = capped.max_registers;
    if (!capped.max_registers.empty()) {
      cu.cuModuleUnload(r.mod);
      r.nm = emit_nvvm_module(m, b, capped);
      r.mod = load(r.nm, capped);
    }
  }
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const NvvmKernelInfo& ki = r.nm.kernels[i];
    CUfunction f = nullptr;
    check(cu, cu.cuModuleGetFunction(&f, r.mod, ki.entry.c_str()), "cuModuleGetFunction");
    // Opted in whatever the size: the 48 KiB default also counts static variables (the status
    // buffer's), which the dynamic size does not show.
    if (ki.smem_bytes > 0)
      check(cu, cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(ki.smem_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    if (ki.status && !r.status) {
      check(cu, cu.cuMemAlloc(&r.status, kDeviceStatusWords * sizeof(uint64_t)), "cuMemAlloc (status buffer)");
      check(cu, cu.cuMemsetD8Async(r.status, 0, kDeviceStatusWords * sizeof(uint64_t), nullptr), "cuMemsetD8Async");
      // Finished before any launch: a launch may go to a stream that does not wait for the legacy one.
      check(cu, cu.cuCtxSynchronize(), "cuCtxSynchronize (status buffer cleared)");
    }
    r.fns.push_back(f);
    r.names.push_back(m.kernels[i].name);
    r.kernels.push_back(&m.kernels[i]);
    r.grids.push_back(grid_of(m.kernels[i], b));
    int per_sm = 0;
    if (ki.persistent) {
      check(cu, cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, ki.threads, static_cast<size_t>(ki.smem_bytes)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      per_sm = std::max(per_sm, 1);
    }
    int64_t resident = ki.persistent ? static_cast<int64_t>(per_sm) * cuda_device_info().sm_count : 0;
    // At most --persistent-ctas CTAs, else the kernel's persistent(N).
    const int64_t cap = opt.persistent_ctas > 0 ? opt.persistent_ctas : m.kernels[i].persistent_ctas;
    if (ki.persistent && cap > 0) resident = std::min<int64_t>(resident, cap);
    r.resident.push_back(resident);
  }
}

CudaModuleRunner::~CudaModuleRunner() = default;

size_t CudaModuleRunner::kernel_count() const { return impl_->fns.size(); }
const std::string& CudaModuleRunner::kernel_name(size_t i) const { return impl_->names.at(i); }
std::array<int64_t, 3> CudaModuleRunner::grid(size_t i) const { return impl_->grids.at(i); }
int CudaModuleRunner::threads(size_t i) const { return impl_->nm.kernels.at(i).threads; }
int64_t CudaModuleRunner::smem_bytes(size_t i) const { return impl_->nm.kernels.at(i).smem_bytes; }
int CudaModuleRunner::registers(size_t i) const { return function_registers(impl_->cu, impl_->fns.at(i)); }
int CudaModuleRunner::register_cap(size_t i) const {
  auto it = impl_->caps.find(impl_->nm.kernels.at(i).entry);
  return it == impl_->caps.end() ? 0 : it->second;
}

CudaDevicePool::~CudaDevicePool() {
  std::string why;
  if (!cuda_available(&why)) return;
  Cu& cu = ready_driver();
  for (const Entry& e : entries) cu.cuMemFree(static_cast<CUdeviceptr>(e.ptr));
  if (flush) cu.cuMemFree(static_cast<CUdeviceptr>(flush));
}

void CudaModuleRunner::upload(const Buffers& buffers, CudaDevicePool* pool, const std::map<std::string, uint64_t>& on_device) {
  Impl& r = *impl_;
  const Cu& cu = r.cu;
  // The thread that runs a module need not be the one that made it (tune builds runners on worker
  // threads ahead of the GPU's): the context is made current here, for the launches that follow.
  check(cu, cu.cuCtxSetCurrent(cu.ctx), "cuCtxSetCurrent");
  r.free_buffers();
  r.pool = pool;
  std::vector<std::string> keys;
  if (pool)
    for (const Buffer& buf : buffers.list)
      keys.push_back(buf.name + "|" + std::to_string(scalar_bytes(buf.dtype)) + "|" + std::to_string(buf.size_bytes()) + "|" +
                     bufio_name(buf.io));
  for (size_t i = 0; i < buffers.list.size(); ++i) {
    const Buffer& buf = buffers.list[i];
    CUdeviceptr d = 0;
    size_t bytes = buf.size_bytes();  // owned bytes or a view of the caller's memory (Buffer::view)
    auto given = on_device.find(buf.name);
    if (given != on_device.end()) {
      r.ptrs.push_back(static_cast<CUdeviceptr>(given->second));
      r.sizes.push_back(bytes);
      r.io.push_back(buf.io);
      r.theirs.push_back(true);
      continue;
    }
    bool fresh = true;
    if (pool) {
      auto& es = pool->entries;
      auto it = std::find_if(es.begin(), es.end(), [&](const CudaDevicePool::Entry& e) { return e.key == keys[i]; });
      if (it != es.end()) {  // most recently used last
        CudaDevicePool::Entry e = *it;
        es.erase(it);
        es.push_back(e);
        d = static_cast<CUdeviceptr>(e.ptr);
        fresh = false;
      } else {
        size_t total = bytes;
        for (const auto& e : es) total += e.bytes;
        for (auto e = es.begin(); e != es.end() && total > pool->limit_bytes;) {
          if (std::find(keys.begin(), keys.end(), e->key) != keys.end()) {
            ++e;
            continue;
          }
          total -= e->bytes;
          cu.cuMemFree(static_cast<CUdeviceptr>(e->ptr));
          e = es.erase(e);
        }
      }
    }
    if (fresh) {
      check(cu, cu.cuMemAlloc(&d, std::max<size_t>(bytes, 1)), "cuMemAlloc");
      if (pool) pool->entries.push_back({keys[i], static_cast<uint64_t>(d), bytes});
      if (bytes) check(cu, cu.cuMemcpyHtoD(d, buf.data(), bytes), "cuMemcpyHtoD");
    }
    r.ptrs.push_back(d);
    r.sizes.push_back(bytes);
    r.io.push_back(buf.io);
    r.theirs.push_back(false);
  }
  r.shadows.assign(buffers.list.size(), 0);
  r.shadow_bytes.assign(buffers.list.size(), 0);
  r.granules.assign(buffers.list.size(), 0);
  r.granule_bytes.assign(buffers.list.size(), 0);
  r.epoch = 0;
  bool cleared = false;
  for (const NvvmKernelInfo& ki : r.nm.kernels)
    for (const auto& arg : ki.args) {
      int bi = arg.shadow || arg.granules ? buffers.index(arg.name) : -1;
      if (bi < 0) continue;
      auto& words = (arg.shadow ? r.shadows : r.granules)[static_cast<size_t>(bi)];
      if (words) continue;
      size_t n = std::max<size_t>(static_cast<size_t>(buffers.list[static_cast<size_t>(bi)].numel()), 1);
      size_t bytes = arg.shadow ? n * sizeof(uint64_t) : (n + kConflictGranule - 1) / kConflictGranule * 2 * sizeof(uint64_t);
      check(cu, cu.cuMemAlloc(&words, bytes), arg.shadow ? "cuMemAlloc (conflict element words)" : "cuMemAlloc (conflict granule words)");
      check(cu, cu.cuMemsetD8Async(words, 0, bytes, nullptr), "cuMemsetD8Async (conflict shadow words)");
      (arg.shadow ? r.shadow_bytes : r.granule_bytes)[static_cast<size_t>(bi)] = bytes;
      cleared = true;
    }
  // The clears finished before any launch (a launch may go to a stream that does not wait for the
  // legacy one, e.g. torch's current stream).
  if (cleared) check(cu, cu.cuCtxSynchronize(), "cuCtxSynchronize (conflict shadow words cleared)");
  r.cells.assign(r.fns.size(), {});
  r.params.assign(r.fns.size(), {});
  for (size_t k = 0; k < r.fns.size(); ++k) {
    const NvvmKernelInfo& ki = r.nm.kernels[k];
    auto& cells = r.cells[k];
    cells.resize(ki.args.size());
    for (size_t a = 0; a < ki.args.size(); ++a) {
      const auto& arg = ki.args[a];
      uint8_t* c = cells[a].data();
      if (arg.status) {
        std::memcpy(c, &r.status, sizeof(CUdeviceptr));
        continue;
      }
      if (arg.shadow || arg.granules) {
        std::memcpy(c, &(arg.shadow ? r.shadows : r.granules)[static_cast<size_t>(buffers.index(arg.name))], sizeof(CUdeviceptr));
        continue;
      }
      if (arg.grid_axis >= 0) {  // a persistent kernel: the original grid
        int32_t x = static_cast<int32_t>(r.grids[k][static_cast<size_t>(arg.grid_axis)]);
        std::memcpy(c, &x, sizeof x);
        continue;
      }
      if (arg.epoch) {  // set by launch
        std::memset(c, 0, sizeof(uint64_t));
        continue;
      }
      if (arg.tensor_map) {
        int bi = buffers.index(arg.name);
        if (bi < 0) internal_error("CudaDriver", "no buffer named '" + arg.name + "'");
        // The extents and the row stride: runtime parameters' values, or the values the plan knew.
        auto value = [&](const std::string& name, int64_t v) {
          if (name.empty()) return v;
          auto it = r.b.find(name);
          if (it == r.b.end()) user_error(SourceLoc{}, "no value for parameter '" + name + "'");
          return it->second.as_int();
        };
        int64_t rows = value(arg.rows, arg.rows_v), cols = value(arg.cols, arg.cols_v), stride = value(arg.stride, arg.stride_v);
        int64_t eb = arg.dtype == Scalar::F32 ? 4 : 2;
        std::memset(c, 0, sizeof(Impl::Cell));
        // Empty extents: every element is masked off, and the loop that copies them runs with no
        // iteration reading the tensor only where they are (an empty grid or K loop); the map stays zero.
        if (rows <= 0 || cols <= 0) continue;
        if (!r.cu.cuTensorMapEncodeTiled) user_error(SourceLoc{}, "CUDA backend: this driver has no cuTensorMapEncodeTiled (TMA copies need CUDA 12 or later)");
        // Planes (outer dimensions): as many as the buffer holds, rounded up, so that no element the
        // load reads unmasked lies outside the map.
        const int64_t elems = static_cast<int64_t>(r.sizes[static_cast<size_t>(bi)]) / eb;
        const size_t rank = 2 + arg.plane_strides.size();
        if (rank > 5) internal_error("CudaDriver", "a tensor map of rank above 5");
        cuuint64_t dims[5] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
        cuuint64_t strides[4] = {static_cast<cuuint64_t>(stride * eb)};
        cuuint32_t box[5] = {static_cast<cuuint32_t>(arg.box_cols), static_cast<cuuint32_t>(arg.box_rows)};
        cuuint32_t ones[5] = {1, 1, 1, 1, 1};
        std::string planes;
        for (size_t p = 0; p < arg.plane_strides.size(); ++p) {
          int64_t ps = arg.plane_strides_v[p];
          for (const std::string& name : arg.plane_strides[p]) ps *= value(name, 0);
          int64_t n = ps > 0 ? std::clamp<int64_t>((elems + ps - 1) / ps, 1, INT32_MAX) : 1;
          dims[2 + p] = static_cast<cuuint64_t>(n);
          strides[1 + p] = static_cast<cuuint64_t>(ps * eb);
          box[2 + p] = 1;
          planes += ", " + std::to_string(n) + " planes " + std::to_string(ps) + " elements apart";
        }
        CUtensorMapDataType dt = arg.dtype == Scalar::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        CUresult res = r.cu.cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(c), dt, static_cast<cuuint32_t>(rank),
                                                   reinterpret_cast<void*>(r.ptrs[static_cast<size_t>(bi)]), dims, strides, box, ones,
                                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (res != CUDA_SUCCESS)
          user_error(SourceLoc{}, "CUDA backend: the TMA tensor map of buffer '" + arg.name + "' [" + std::to_string(rows) + ", " +
                                      std::to_string(cols) + "] (rows " + std::to_string(stride) + " elements apart" + planes +
                                      ") cannot be encoded: " + cu_error(r.cu, res));
        continue;
      }
      if (arg.pointer) {
        int bi = buffers.index(arg.name);
        if (bi < 0) internal_error("CudaDriver", "no buffer named '" + arg.name + "'");
        std::memcpy(c, &r.ptrs[static_cast<size_t>(bi)], sizeof(CUdeviceptr));
        continue;
      }
      auto it = r.b.find(arg.name);
      if (it == r.b.end()) user_error(SourceLoc{}, "no value for parameter '" + arg.name + "'");
      const ScalarValue& sv = it->second;
      switch (arg.dtype) {
        case Scalar::I1: { uint8_t x = sv.as_int() != 0; std::memcpy(c, &x, 1); break; }
        case Scalar::I8:
        case Scalar::I16: { int32_t x = static_cast<int32_t>(wrap_to(arg.dtype, sv.as_int())); std::memcpy(c, &x, 4); break; }
        case Scalar::F8E4M3:
        case Scalar::F8E5M2:
        case Scalar::F8E4B15:
        case Scalar::F8E4B8:
        case Scalar::F8E5B16: { float x = round_to(arg.dtype, static_cast<float>(sv.as_double())); std::memcpy(c, &x, 4); break; }
        case Scalar::I32: { int32_t x = static_cast<int32_t>(sv.as_int()); std::memcpy(c, &x, 4); break; }
        case Scalar::I64: { int64_t x = sv.as_int(); std::memcpy(c, &x, 8); break; }
        case Scalar::F16: { float x = f16_to_f32(f32_to_f16(static_cast<float>(sv.as_double()))); std::memcpy(c, &x, 4); break; }
        case Scalar::BF16: { float x = bf16_to_f32(f32_to_bf16(static_cast<float>(sv.as_double()))); std::memcpy(c, &x, 4); break; }
        case Scalar::F32: { float x = static_cast<float>(sv.as_double()); std::memcpy(c, &x, 4); break; }
        case Scalar::F64: { double x = sv.as_double(); std::memcpy(c, &x, 8); break; }
      }
    }
    for (auto& cell : cells) r.params[k].push_back(cell.data());
  }
}

bool CudaModuleRunner::reports(size_t i) const {
  const NvvmKernelInfo& ki = impl_->nm.kernels.at(i);
  return (ki.status && impl_->status) ||
         std::any_of(ki.args.begin(), ki.args.end(), [](const NvvmKernelInfo::Arg& a) { return a.shadow; });
}

void CudaModuleRunner::launch(size_t i, void* stream) {
  Impl& r = *impl_;
  if (r.params.size() != r.fns.size()) internal_error("CudaDriver", "launch before upload");
  const auto& g = r.grids.at(i);
  const NvvmKernelInfo& ki = r.nm.kernels[i];
  // Conflicts are per launch: a kernel that claims elements gets the next epoch, which leaves every
  // word claimed before free; when the 16-bit epoch wraps, every word is reset to zero (free).
  for (size_t a = 0; a < ki.args.size(); ++a) {
    if (!ki.args[a].epoch) continue;
    if (++r.epoch > kConflictEpochs) {
      for (size_t b = 0; b < r.shadows.size(); ++b) {
        CUstream st = static_cast<CUstream>(stream);
        if (r.shadows[b]) check(r.cu, r.cu.cuMemsetD8Async(r.shadows[b], 0, r.shadow_bytes[b], st), "cuMemsetD8Async (conflict element words)");
        if (r.granules[b]) check(r.cu, r.cu.cuMemsetD8Async(r.granules[b], 0, r.granule_bytes[b], st), "cuMemsetD8Async (conflict granule words)");
      }
      r.epoch = 1;
    }
    uint64_t v = r.epoch << 48;
    std::memcpy(r.cells[i][a].data(), &v, sizeof v);
  }
  // A clustered TMA ring: clusters of two CTAs along its axis where the grid's extent there is even
  // (else none: the kernel then copies whole boxes in each CTA).
  const int ax = ki.cluster_axis;
  if (ax >= 0 && ax < 3 && g[static_cast<size_t>(ax)] % 2 == 0 && r.cu.cuLaunchKernelEx) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = ax == 0 ? 2 : 1;
    attr.value.clusterDim.y = ax == 1 ? 2 : 1;
    attr.value.clusterDim.z = ax == 2 ? 2 : 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(g[0]);
    cfg.gridDimY = static_cast<unsigned>(g[1]);
    cfg.gridDimZ = static_cast<unsigned>(g[2]);
    cfg.blockDimX = static_cast<unsigned>(ki.threads);
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = static_cast<unsigned>(ki.smem_bytes);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cfg.hStream = static_cast<CUstream>(stream);
    check(r.cu, r.cu.cuLaunchKernelEx(&cfg, r.fns[i], r.params[i].data(), nullptr), "cuLaunchKernelEx (clusters of 2 CTAs)");
    return;
  }
  if (r.resident[i] > 0) {  // persistent: as many CTAs as run at once, each walking the original grid's tiles
    const int64_t ctas = std::min(g[0] * g[1] * g[2], r.resident[i]);
    check(r.cu, r.cu.cuLaunchKernel(r.fns[i], static_cast<unsigned>(ctas), 1, 1, static_cast<unsigned>(ki.threads), 1, 1,
                                    static_cast<unsigned>(ki.smem_bytes), static_cast<CUstream>(stream), r.params[i].data(), nullptr),
          "cuLaunchKernel (persistent)");
    return;
  }
  check(r.cu, r.cu.cuLaunchKernel(r.fns[i], static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2]),
                                  static_cast<unsigned>(ki.threads), 1, 1, static_cast<unsigned>(ki.smem_bytes), static_cast<CUstream>(stream),
                                  r.params[i].data(), nullptr),
        "cuLaunchKernel");
}

void CudaModuleRunner::synchronize(const std::string& what) {
  Impl& r = *impl_;
  if (r.lost) internal_error("CudaDriver", "a runner used after its context was lost");
  CUresult res = r.cu.cuCtxSynchronize();
  if (res == CUDA_SUCCESS) return;
  // A trap or an illegal address is sticky: the context is lost. Reset and retain the primary context
  // (this runner's module and buffers went with the old one); the driver may still refuse further
  // work in this process (seen on an H100 after an out-of-bounds load), which is then reported.
  std::string msg = what + " failed: " + cu_error(r.cu, res);
  r.lost = true;
  if (r.pool) {  // its memory went with the context
    r.pool->entries.clear();
    r.pool->flush = 0;
  }
  Cu& cu = r.cu;
  cu.cuDevicePrimaryCtxRelease(cu.dev);
  cu.cuDevicePrimaryCtxReset(cu.dev);
  CUresult again = cu.cuDevicePrimaryCtxRetain(&cu.ctx, cu.dev);
  if (again == CUDA_SUCCESS) again = cu.cuCtxSetCurrent(cu.ctx);
  if (again != CUDA_SUCCESS) {
    cu.ok = false;
    cu.why = "the GPU is unusable after a fault: " + cu_error(cu, again);
  }
  if (r.int_to_ptr)  // those accesses are the ones no check covers
    throw CudaFault(SourceLoc{}, msg + "\n  the kernel reaches memory through pointers made from integers (int_to_ptr), which the GPU "
                                       "does not check: an address that is not device memory of this process (a host array's, "
                                       "freed memory) faults; the interpreter (--backend=interp) checks them against the run's buffers");
  throw CudaFault(SourceLoc{}, msg + (r.bounds ? "\n  every access was bounds-checked, so this is likely a bug in dtsim's CUDA backend; the "
                                                 "interpreter (--backend=interp) runs the same kernel with every check"
                                               : "\n  the GPU faulted without a located finding; run with --sanitize=bounds to check every "
                                                 "access, or on the interpreter (--backend=interp) to locate it"));
}

std::vector<CudaFinding> CudaModuleRunner::check_status(size_t i, const Buffers& bufs) {
  Impl& r = *impl_;
  const NvvmKernelInfo& ki = r.nm.kernels.at(i);
  if (!ki.status || !r.status) return {};
  uint64_t dev[kDeviceStatusWords] = {};
  check(r.cu, r.cu.cuMemcpyDtoH(dev, r.status, sizeof dev), "cuMemcpyDtoH (status buffer)");
  int32_t w[kStatusWords] = {};
  if (!decode_status(dev, r.grids.at(i), w)) return {};
  check(r.cu, r.cu.cuMemsetD8Async(r.status, 0, sizeof dev, nullptr), "cuMemsetD8Async");
  check(r.cu, r.cu.cuCtxSynchronize(), "cuCtxSynchronize (status buffer cleared)");  // before the next launch, on any stream
  return {render_status(ki, r.names.at(i), w, bufs)};
}

void CudaModuleRunner::download(Buffers& buffers) const {
  const Impl& r = *impl_;
  for (size_t i = 0; i < buffers.list.size() && i < r.ptrs.size(); ++i) {
    Buffer& buf = buffers.list[i];
    size_t bytes = buf.size_bytes();
    if (buf.io == BufIO::In || bytes == 0 || r.theirs[i]) continue;
    if (bytes != r.sizes[i]) internal_error("CudaDriver", "download into buffers of another shape");
    check(r.cu, r.cu.cuMemcpyDtoH(buf.data(), r.ptrs[i], bytes), "cuMemcpyDtoH");
    buf.defined = true;
  }
}

std::vector<double> CudaModuleRunner::time(size_t i, int reps, bool flush_l2) {
  Impl& r = *impl_;
  const Cu& cu = r.cu;
  if (reps < 1) return {};
  if (flush_l2 && !r.flush && r.pool && r.pool->flush) {
    r.flush = static_cast<CUdeviceptr>(r.pool->flush);
    r.flush_bytes = r.pool->flush_bytes;
  }
  if (flush_l2 && !r.flush) {
    CudaDeviceInfo d = cuda_device_info();
    r.flush_bytes = static_cast<size_t>(std::max<int64_t>(d.l2_bytes, 1 << 20)) * 2;
    check(cu, cu.cuMemAlloc(&r.flush, r.flush_bytes), "cuMemAlloc (L2 flush buffer)");
    if (r.pool) {
      r.pool->flush = static_cast<uint64_t>(r.flush);
      r.pool->flush_bytes = r.flush_bytes;
    }
  }
  Events ev(cu, 2 * static_cast<size_t>(reps));
  for (int rep = 0; rep < reps; ++rep) {
    if (flush_l2) check(cu, cu.cuMemsetD8Async(r.flush, static_cast<unsigned char>(rep), r.flush_bytes, nullptr), "cuMemsetD8Async");
    check(cu, cu.cuEventRecord(ev.ev[2 * static_cast<size_t>(rep)], nullptr), "cuEventRecord");
    if (i == kAllKernels)
      for (size_t k = 0; k < r.fns.size(); ++k) launch(k);
    else
      launch(i);
    check(cu, cu.cuEventRecord(ev.ev[2 * static_cast<size_t>(rep) + 1], nullptr), "cuEventRecord");
  }
  synchronize(i == kAllKernels ? "the module's kernels" : "kernel '" + r.names.at(i) + "'");
  std::vector<double> ms;
  for (size_t rep = 0; rep < static_cast<size_t>(reps); ++rep) ms.push_back(ev.ms(2 * rep, 2 * rep + 1));
  return ms;
}

std::vector<CudaFinding> run_module_cuda(const Module& m, const Bindings& b, Buffers& buffers, const CudaOptions& opt) {
  CudaModuleRunner r(m, b, opt);
  r.upload(buffers);
  for (size_t i = 0; i < r.kernel_count(); ++i) {
    r.launch(i);
    r.synchronize("kernel '" + r.kernel_name(i) + "'");
    auto found = r.check_status(i, buffers);
    if (!found.empty()) {
      r.download(buffers);
      return found;
    }
  }
  r.download(buffers);
  return {};
}

}  // namespace dtsim
