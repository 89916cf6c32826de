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
  int fma_rings = 0;             // pipelined loops whose FMA dot reads a cp.async ring
  int conversions = 0;           // layout conversions through shared memory
  int vector_accesses = 0;       // global loads/stores emitted as vectors
  int mma_dots = 0;              // dots on the tensor cores
  int pipelined_loops = 0;       // K loops whose operand loads are pipelined with cp.async
  int hoisted_loops = 0;         // loops emitted twice: unchecked, and checked where the hoisted test fails
  int tma_loops = 0;             // pipelined loops whose operands are TMA copies (sm_90a)
  int specialized_loops = 0;     // ... of them issued by a producer warp (threads then counts it)
  // A TMA ring multicasting a shared operand in clusters of two CTAs along this grid axis (-1: none):
  // launched with cluster dimensions where the grid's extent on the axis is even, else without (the
  // kernel then copies whole boxes).
  int cluster_axis = -1;
  int cluster_loops = 0;  // TMA-ring loops emitted for clusters
  // A persistent grid (KernelPlan::persistent): launched with min(tiles, SMs x CTAs per SM) CTAs on
  // grid axis 0, each walking the original program ids (it takes the original grid as arguments).
  bool persistent = false;
  // Registers a thread may use while as many CTAs share an SM as its shared memory and threads
  // allow, where that is at least 128 and the kernel has hoisted-check loops (0: no such cap).
  int occupancy_registers = 0;
  // `emit --layouts`: per statement id, the layouts of what it computes and how it accesses memory.
  std::vector<std::pair<int, std::string>> notes;
  // Kernel parameters in order: pointer params (buffer name) and runtime scalars (binding name).
  struct Arg {
    std::string name;
    bool pointer = false;
    Scalar dtype = Scalar::I32;
    bool status = false;  // the status buffer (last parameter, when `status`)
    bool shadow = false;  // conflict checks: the element words of buffer `name` (one u64 per element)
    bool granules = false;  // conflict checks: its granule words (16 bytes per kConflictGranule elements)
    bool epoch = false;     // conflict checks: the launch's number << 48 (u64), set at every launch
    // A CUtensorMap of buffer `name` (128 bytes by value), encoded at launch: element type dtype,
    // extents [rows, cols] and row stride (in elements), each a runtime parameter's name or a value
    // (name empty), and the box (rows x cols elements, 128-byte swizzle).
    // A map of rank 3 to 5 has planes: outer dimensions plane_strides_v[p] times the runtime
    // parameters plane_strides[p] elements apart, each as many as the buffer holds.
    bool tensor_map = false;
    std::string rows, cols, stride;
    int64_t rows_v = 0, cols_v = 0, stride_v = 0, box_rows = 0, box_cols = 0;
    std::vector<std::vector<std::string>> plane_strides;
    std::vector<int64_t> plane_strides_v;
    // Persistent kernels: the original grid's extent on this axis (i32), set at launch (-1: not one).
    int grid_axis = -1;
  };
  std::vector<Arg> args;
  // Located checks (asserts, and with CudaOptions::bounds_checks every global access): a failing
  // instance records its site in the status buffer (kStatus* words) and leaves. `sites[id]` says
  // what failed; the launcher renders the finding from it.
  struct Site {
    enum Kind { Assert, Load, Store, Conflict } kind = Assert;
    SourceLoc loc, loc2;
    std::string text;    // assert: its message; Load/Store: the buffer's name
    int64_t lanes = 1;   // assert: lanes of the condition
    Shape tile;          // the tile of the access or condition (its lanes are named by coordinates)
    bool atomic = false; // Conflict: the access is an atomic
  };
  int grid_rank = 1;     // axes of the launch grid (messages name pids as "[p0, p1]")
  std::vector<Site> sites;
  bool status = false;  // the kernel takes the status buffer
};

// A located failure as the host decodes it from the status buffer: kStatusWords i32 words.
enum StatusWord : int {
  kStatusClaim = 0,      // nonzero: a failure was recorded
  kStatusInstances = 1,  // failing instances in the launch
  kStatusSite = 2,
  kStatusPid = 3,        // 3 words: x, y, z of the recorded instance
  kStatusLane = 6,       // first failing lane (flat index in the tile)
  kStatusBad = 7,        // failing lanes of the instance
  kStatusActive = 8,     // active lanes of the access (bounds checks)
  kStatusFlat = 9,       // 2 words: the i64 flat buffer index of the first failing lane (bounds checks)
  kStatusOther = 11,     // conflicts: 3 words, the pid of the instance that claimed the element first
  kStatusOtherTag = 14,  // conflicts: its site id + 1 (bits 1..), whether it updated atomically (bit 0)
  kStatusWords = 16,
};

// The status buffer on the device: kDeviceStatusWords u64 words, zero before a launch. Word 0 counts
// failing instances; every other word holds (key << 32 | value) with key = 0xFFFFFFFF - linear pid
// (pid.x + grid.x * (pid.y + grid.y * pid.z)) and is updated with an unsigned atomic max, so each word
// ends up holding the value of the failing instance with the smallest linear pid: the instance the
// interpreter, running instances in that order, reports first.
enum DeviceStatusWord : int {
  kDevInstances = 0,
  kDevSite = 1,
  kDevLane = 2,
  kDevBad = 3,
  kDevActive = 4,
  kDevFlatLo = 5,
  kDevFlatHi = 6,
  kDevOther = 7,
  kDevOtherTag = 8,
  kDeviceStatusWords = 10,
};

// Conflict checks (NvvmChecks.cpp): the elements one granule word covers, and the launches a 16-bit
// epoch counts before the runner resets every shadow word to zero (epoch 0 is never a launch's).
constexpr int kConflictGranule = 64;
constexpr uint64_t kConflictEpochs = 0xFFFF;

// Device words -> the host layout (kStatusWords), given the launch's grid. False when nothing failed.
bool decode_status(const uint64_t* dev, const std::array<int64_t, 3>& grid, int32_t* w);

struct NvvmModule {
  std::string ir;
  std::vector<NvvmKernelInfo> kernels;  // one per Module kernel, same order
};

// The finding recorded in status buffer words `w` (kStatusWords) by kernel `ki`, with the text the
// interpreter gives the same finding; `bufs` are the launch's buffers (names, types).
CudaFinding render_status(const NvvmKernelInfo& ki, const std::string& kernel, const int32_t* w, const Buffers& bufs);

// Lowers a verified module (emit_nvvm returns `.ir` of this).
NvvmModule emit_nvvm_module(const Module& m, const Bindings& b, const CudaOptions& opt);

// The largest dynamic shared memory a CTA may use on `arch` (sm_90: 227 KiB, sm_80: 163 KiB,
// other sm_8x: 99 KiB, older: 48 KiB).
int64_t max_dynamic_smem(const std::string& arch);

}  // namespace dtsim
