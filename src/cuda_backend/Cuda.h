// The CUDA backend: verified tile IR -> NVVM IR text -> PTX (libNVVM, loaded at run time) -> launch
// through the CUDA driver API (libcuda loaded at run time). Works, minus launching, without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host/Buffers.h"
#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct CudaOptions {
  // PTX target (libNVVM gets -arch=compute_XX). Empty: the GPU's own when launching (sm_90a on a
  // compute capability 9.0 device, which enables warpgroup MMA), sm_90 when only compiling.
  std::string arch;
  bool fast_math = false;      // -ftz=1 -prec-div=0 -prec-sqrt=0 -fma=1 (off: IEEE, matches the interpreter)
  // fp fusion (`--fp-fusion`; Triton's enable_fp_fusion): float add/sub/mul carry LLVM's `contract`
  // flag and libNVVM gets -fma=1, so a multiply and an add may be contracted into one fma.rn (one
  // rounding instead of two) where the code generator chooses. Off
  // (-fma=0): every f32/f64 multiply and add rounds on its own, as the interpreter computes them.
  bool fp_fusion = false;
  // f32 division as Triton compiles `/` (arith.divf): div.full.f32, an approximation within 2 ulp
  // (libNVVM -prec-div=0), where IEEE division (div.rn.f32) is the default and what the interpreter
  // computes. On for kernels launched through Triton's frontend on backend='cuda' that use no
  // div_rn (tt.precise_divf); `--approx-div` for run, emit and bench.
  bool approx_div = false;
  // --sanitize=bounds: every active lane of every global load and store (vectors, cp.async copies) is
  // checked against its buffer's extent; a violation is recorded in the status buffer and the access
  // suppressed. Off: the accesses are emitted unchecked (asserts are located either way).
  bool bounds_checks = false;
  // --sanitize=conflicts|all (with bounds_checks): every element a store or atomic writes is claimed
  // for the launch (NvvmChecks.cpp): on sm_90, in buffers the plan gives granule words, once per warp
  // and granule of 64 elements (a 128-bit word), and in a word per element (atom.max: the writer's
  // pid, its site, whether atomically) in the other buffers and where instances or sites share a
  // granule; an element another instance claimed with a plain store, or
  // claimed atomically where this one stores plainly (or the reverse), is a conflict, reported as
  // the interpreter reports it. Stores between a
  // scalar atomic_cas that takes a lock and the atomic_xchg that gives it back are not checked.
  bool conflict_checks = false;
  // Conflict checks: a buffer whose writes are disjoint for the launch's values (ir/Footprint.h: no
  // two instances can write one element of it) is not claimed. Off: every written buffer is (tests of
  // the claims themselves).
  bool disjoint_writes = true;
  // When set, compile_ptx keeps every PTX it compiles in this folder (created when missing), named by
  // a hash of the NVVM IR (which holds the kernel text and its baked-in sizes), the libNVVM options
  // (target arch, math flags) and the libdevice file, and reads it back instead of compiling again.
  std::string ptx_cache_dir;
  // Per kernel entry: a register cap (`.maxnreg`). The runner sets it for a bounds-checked kernel
  // whose hoisted checks' copy would otherwise cost CTAs per SM that the unchecked kernel has.
  std::map<std::string, int> max_registers;
  // The three schedule options below are asked for by a flag (1), refused by one (-1), or, at 0 (the
  // default), left to the kernel's own options (Kernel::warp_specialize, persistent, cluster; the
  // plan's `asked for by the kernel`). A flag wins over the kernel's option.
  // sm_90a, `--warp-specialize`: a TMA-ring loop whose kernel allows it gets a producer warp of its
  // own (the plan's `specialized`); not asked for (measured no faster on an H100, bench/NOTES.md
  // 33): thread 0 issues the copies.
  int warp_specialize = 0;
  // sm_90a, `--cluster`: a TMA-ring loop whose CTAs pair up on one shared operand runs in clusters of
  // two CTAs, each loading half of that operand's box and multicasting it to both (the plan's
  // `cluster`, docs/cuda-backend.md). Not asked for: on an H100 no faster than the plain ring
  // (bench/NOTES.md 51).
  int cluster = 0;
  // sm_90a, a TMA-ring dot loop (the plan's `persistent`, docs/cuda-backend.md): asked for
  // (`--persistent`, or the kernel's `persistent`): a persistent grid wherever the kernel allows one;
  // else none (measured slower than the plain ring on an H100, bench/NOTES.md 46). A persistent kernel
  // is launched with at most as many CTAs as fit on the GPU at once, each walking the original
  // program ids; its producer warp fills the ring across tiles.
  int persistent = 0;
  // `--persistent-ctas N`: a persistent kernel is launched with at most N CTAs (0: the kernel's
  // persistent(N), else as many as fit on the GPU at once), so that each walks more tiles.
  int persistent_ctas = 0;
};

// compile_ptx calls that found their PTX in CudaOptions::ptx_cache_dir / that compiled and stored it.
struct PtxCacheStats {
  int64_t hits = 0, misses = 0;
};
PtxCacheStats ptx_cache_stats();

// A located failure reported by a kernel through its status buffer, with the interpreter's text.
struct CudaFinding {
  enum Kind { AssertFailed, OutOfBounds, Conflict } kind = AssertFailed;
  std::string message;   // file:line:col: error: ..., source line, caret, details (as the interpreter)
  std::string kernel;
  SourceLoc loc;
  std::array<int64_t, 3> pid{};
  std::array<int64_t, 3> other_pid{};  // Conflict: the instance that wrote the element first
  bool other_wrote = true;             // Conflict: false where that one updated it atomically
  std::string buffer;     // OutOfBounds, Conflict: the buffer
  int64_t flat_index = -1;
  int64_t lanes = 0;      // failing lanes of the reported instance (the failing one with the smallest pid)
  int64_t instances = 0;  // failing instances in the launch
};

// A kernel that faulted on the GPU (trap, illegal address): the text names the kernel and suggests
// --sanitize=bounds or the interpreter. The CUDA context was recreated, so later launches work.
struct CudaFault : RuntimeFault {
  using RuntimeFault::RuntimeFault;
};

// NVVM IR (LLVM 7 text dialect, typed pointers) for every kernel of a verified module; constexpr
// parameters are baked in, runtime scalars and buffers become kernel parameters.
std::string emit_nvvm(const Module& m, const Bindings& b, const CudaOptions& opt = {});

// What the backend decided for each statement (`emit --layouts`): the statements of every kernel in
// .tile form, each followed by `#` lines: the layout of the tile it assigns, how its loads and stores
// access memory, how reductions and dots are done, layout conversions, pipelined loops.
std::string emit_layouts(const Module& m, const Bindings& b, const CudaOptions& opt = {});

// The CUDA backend's plan of every kernel (`emit --plan`, Plan.h): per tile variable its layout, per
// dot its engine, per loop its hoisted bounds checks, pipeline or prefetch, the pointers' axis
// information, and the shared-memory allocations with the fallback taken where they would not fit.
std::string emit_plan(const Module& m, const Bindings& b, const CudaOptions& opt = {});

// NVVM IR -> PTX with libNVVM (verify first, libdevice added lazily). On failure: UserError whose
// text holds libNVVM's log, the offending IR line and a command that reproduces the failure.
std::string compile_ptx(const std::string& nvvm_ir, const CudaOptions& opt = {});

// Runs `ptxas -arch=<arch> [-v]` on PTX as a whole program. ok=false with the log on failure;
// `log` holds the -v resource report (registers, spills) on success, and with `cubin_out` the cubin is
// stored there (written whole).
struct PtxasResult {
  bool ok = false;
  bool available = true;  // false when no ptxas was found
  std::string log;
};
PtxasResult run_ptxas(const std::string& ptx, const std::string& arch, bool verbose = false, const std::string& cubin_out = "");

// The cubin cache next to the PTX cache (CudaOptions::ptx_cache_dir): `cached_cubin` returns the
// cubin ptxas made for this PTX and arch earlier ("" when none); `precompile_cuda_module` compiles a
// verified module's PTX into the cache and, where ptxas is found, its cubin, so that a later
// CudaModuleRunner loads machine code instead of having the driver compile the PTX. Both are safe
// to call from several threads at once (what `dtsim tune` does while the GPU times other schedules).
std::string cached_cubin(const std::string& ptx, const CudaOptions& opt);
void precompile_cuda_module(const Module& m, const Bindings& b, const CudaOptions& opt);

// Whether a CUDA driver and a GPU can be used; `why` gets "no CUDA driver found" / "no GPU" / ...
bool cuda_available(std::string* why);
// The number of GPUs the driver sees (those of CUDA_VISIBLE_DEVICES when set); 0 with `why` as
// cuda_available's when none can be used.
int cuda_device_count(std::string* why);

// Runs every kernel of a verified module on the GPU, in order, on `buffers` (copied to the device,
// and every Out/InOut/Scratch buffer copied back). UserError "no CUDA driver found" etc. without one.
// Stops after the first kernel that reports a located failure (an assert, or a bounds check with
// opt.bounds_checks) and returns it; a fault throws CudaFault.
std::vector<CudaFinding> run_module_cuda(const Module& m, const Bindings& b, Buffers& buffers, const CudaOptions& opt = {});

// With opt.bounds_checks: where a kernel of `m` makes pointers from integers (int_to_ptr), a located
// note (format_diag) that accesses through them are not checked on the GPU (their addresses are the
// caller's device memory, which no buffer of the run describes); "" otherwise.
std::string unchecked_address_note(const Module& m, const CudaOptions& opt);

// The GPU in use (device 0), as the driver reports it. UserError without a driver or GPU.
struct CudaDeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t clock_khz = 0;  // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (the SM clock the driver reports)
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
};
CudaDeviceInfo cuda_device_info();
// The PTX target for the GPU in use: "sm_XY", or "sm_90a" for compute capability 9.0.
std::string cuda_device_arch();
// `opt.arch`, or when it is empty the device's (cuda_device_arch) if a GPU can be used, else sm_90.
std::string resolve_cuda_arch(const CudaOptions& opt);

// Device-to-device copy bandwidth in GB/s (bytes read + bytes written per second; median of timed
// cuMemcpyDtoDAsync copies of a 512 MiB buffer, or of a quarter of free memory when smaller).
// Measured on the first call, then remembered for the process.
double cuda_copy_bandwidth_gbs();

// One compiled module on the GPU for repeated and timed launches: compiles and loads the PTX once,
// keeps device copies of the buffers, launches kernel i on the default stream, times launches with
// CUDA events. Every call throws UserError on a driver error (kernel faults name the kernel).
// Device memory kept across runners, for callers that run many variants of one program on the same
// inputs (`dtsim tune`): each buffer is uploaded once per (name, element size, bytes, direction) and
// then shared, and one L2 flush buffer serves every runner. Only for timing: a buffer a kernel writes
// keeps what the previous runner left in it. Destroy it while the CUDA context is alive.
struct CudaDevicePool {
  struct Entry {
    std::string key;
    uint64_t ptr = 0;
    size_t bytes = 0;
  };
  std::vector<Entry> entries;  // least recently used first
  uint64_t flush = 0;
  size_t flush_bytes = 0;
  size_t limit_bytes = size_t(16) << 30;  // beyond this, older entries are freed
  CudaDevicePool() = default;
  CudaDevicePool(const CudaDevicePool&) = delete;
  CudaDevicePool& operator=(const CudaDevicePool&) = delete;
  ~CudaDevicePool();
};

class CudaModuleRunner {
 public:
  CudaModuleRunner(const Module& m, const Bindings& b, const CudaOptions& opt = {});
  ~CudaModuleRunner();
  CudaModuleRunner(const CudaModuleRunner&) = delete;
  CudaModuleRunner& operator=(const CudaModuleRunner&) = delete;

  size_t kernel_count() const;
  const std::string& kernel_name(size_t i) const;
  std::array<int64_t, 3> grid(size_t i) const;
  int threads(size_t i) const;  // per CTA
  int64_t smem_bytes(size_t i) const;
  int registers(size_t i) const;     // per thread, as compiled
  int register_cap(size_t i) const;  // the cap given for hoisted bounds checks (CudaOptions::max_registers), or 0

  // Allocates device buffers (freeing earlier ones) and copies every buffer of `bufs` to the device;
  // with a pool, takes the pool's buffers of the same name and size instead (uploaded when first made).
  // A buffer named in `on_device` is bound to that device address instead (the caller's memory of at
  // least its size_bytes(), in this process's primary context): never copied, downloaded or freed.
  void upload(const Buffers& bufs, CudaDevicePool* pool = nullptr, const std::map<std::string, uint64_t>& on_device = {});
  // Launches kernel i asynchronously on `stream` (a CUstream; 0: the legacy default stream); kernels
  // of one runner launched on one stream run in launch order.
  void launch(size_t i, void* stream = nullptr);
  // Whether kernel i can report anything after it ran: a status buffer (asserts, bounds checks) or
  // conflict shadow words. A launch of a kernel that cannot needs no synchronize unless its buffers
  // are downloaded.
  bool reports(size_t i) const;
  // Waits for everything launched; a fault throws CudaFault ("<what> failed: <driver message>" and a
  // hint) after recreating the context (this runner is unusable afterwards).
  void synchronize(const std::string& what);
  // After synchronize(): the located failure kernel i recorded, if any (the status buffer is then
  // cleared). `bufs` are the buffers given to upload (for the buffer types in the message).
  std::vector<CudaFinding> check_status(size_t i, const Buffers& bufs);
  // Copies every Out/InOut/Scratch buffer back into `bufs` (the buffers given to upload), except
  // those bound to the caller's device memory.
  void download(Buffers& bufs) const;

  static constexpr size_t kAllKernels = static_cast<size_t>(-1);
  // Milliseconds of each of `reps` runs of kernel `i` (kAllKernels: every kernel in order), from CUDA
  // events recorded around each run. With `flush_l2`, a buffer of twice the L2 size is written
  // (cuMemsetD8Async) before each run, outside the timed interval, so no run finds its data in L2.
  std::vector<double> time(size_t i, int reps, bool flush_l2);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dtsim
