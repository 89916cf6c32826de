// Backend stage 3 (after Layout.h and AxisInfo.h): the plan of one kernel, decided before any NVVM IR is written (`emit --plan`
// prints it). Planning stages, in order (Plan.cpp, KernelEmitter::plan):
//   slots     how often each variable slot is assigned, and with what (one definition, all of them);
//   dots      per dot: the engine (wgmma, mma.sync, FMA units), its instruction shape and warp split;
//   layouts   per tile variable slot: the one layout it is held in;
//   masks     the i1 tile variables true wherever they are read (a `where` on one selects nothing);
//   loops     per `for` (and per copy of it, where bounds checks are hoisted): the loop variable's
//             axis information, the bounds-check hoisting, the software pipeline, register prefetch;
//   axis      per global load and store: the axis information of its pointer (vector widths);
//   persistent (sm_90a) whether the grid is persistent: CTAs that each walk several program ids,
//             the TMA ring of the kernel's dot loop filled across tiles by a producer warp, and why
//             not where not;
//   conflicts (--sanitize=conflicts) per buffer a store or atomic writes: granule words or element
//             words only, and why;
//   smem      the shared-memory allocations (pipeline rings, transient buffers above them), their
//             total against the target's limit, and the fallback where the rings would not fit.
// Emission (NvvmKernel.cpp and the per-op-group files) reads the plan and changes none of it. A new
// backend stage (TMA copies, warp-specialized loops) is a new kind in PipelinePlan/MmaPlan, decided
// by a planning stage, and a case in the emitter that reads it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cuda_backend/AxisInfo.h"
#include "cuda_backend/Layout.h"
#include "ir/Footprint.h"
#include "ir/IR.h"

namespace dtsim {
struct CudaOptions;
}

namespace dtsim::nvvm {

// A schedule option as the plan is asked for it: by a flag (CudaOptions), by the kernel's own option
// (Kernel::warp_specialize, persistent, cluster), or not at all. A flag wins: `--no-persistent`
// refuses what the kernel's `persistent` asks for. `by` says who decided ("" where nobody asked):
// "asked for by the kernel (persistent)", "asked for by --persistent", "refused by --no-persistent".
struct ScheduleAsk {
  enum class Who { Nobody, Flag, Kernel };
  bool on = false;
  std::string by;
  Who who = Who::Nobody;  // who decided: a flag (either way), the kernel's own option, or nobody
};
struct ScheduleAsks {
  ScheduleAsk warp_specialize, cluster, persistent;
  int64_t persistent_ctas = 0;  // at most this many CTAs (--persistent-ctas, else persistent(N); 0: as many as fit)
};
ScheduleAsks schedule_asks(const Kernel& k, const CudaOptions& opt);

// How one dot runs. ok: on tensor cores (wgmma or mma.sync); else the FMA path, `why` saying why.
struct MmaPlan {
  bool ok = false;
  std::string why;  // why the tensor-core path does not apply
  bool wgmma = false;  // sm_90a: warpgroup MMA from shared memory (else mma.sync + ldmatrix)
  int wm = 1, wn = 1;
  int wr = 1;  // wgmma: 64-row tiles per warpgroup
  int64_t M = 0, N = 0, K = 0;
  Scalar in = Scalar::F16;
};
std::string describe(const MmaPlan& p);

// A slot assigned exactly twice, `v = init` and `v = v + c` with neither init nor c reading v: the
// two assigned values (init, then the advance `v + c`); null when the slot is not of that form.
struct CarriedForm {
  const ExprP* init = nullptr;
  const ExprP* advance = nullptr;
};

// The loop a bounds-check hoisting analyses (NvvmChecks.cpp).
struct HoistLoop {
  int kslot = -1;
  std::set<int> in_body;  // the slots the loop assigns
  // Pointer variables set before the loop and advanced once per iteration at the body's top level
  // by a loop-invariant step (`p = p + c`, Triton's `p += BK * stride`): slot -> c.
  std::map<int, ExprP> carried;
};

// One global access of a loop whose bounds checks are hoisted: what planning found (the first six
// fields); the run fields are filled when the test is emitted.
struct HoistAccess {
  ExprP ptr;                  // with the body's variables inlined
  std::vector<ExprP> conds;   // the mask's conjuncts that do not depend on k
  std::vector<ExprP> kconds;  // its comparisons of degree-1 terms in k (Triton's `offs_k < K - k * BK`)
  std::vector<ExprP> terms;   // the k-dependent integer terms of the pointer
  const Param* buf = nullptr;
  std::map<int, int> after;  // carried pointers it uses: 1 when it comes after their advance
  // The test reads the pointer tile in runs of `run` consecutive elements along its last dimension
  // (see loop_in_bounds); 1: element by element.
  int64_t run = 1;
  std::vector<std::vector<std::string>> starts;  // the coordinates of this thread's runs
  std::vector<bool> cond_prefix, kcond_prefix;   // per conjunct: a prefix comparison (else constant over a run)
};

// Bounds checks hoisted out of a `for` loop: the loop is emitted twice, a copy without checks run
// when a test before it proves every access of every iteration in bounds, and the checked copy.
struct HoistPlan {
  HoistLoop loop;
  std::vector<HoistAccess> accesses;
  bool has_k_mask = false;
};

// An operand tile of a TMA ring (PipelinePlan::Kind::TmaRing): the load reads rows row0 + i and
// columns col0 + j (i, j over the tile) of a row-major 2-D tensor at `buf` whose rows are `stride`
// elements apart, with a mask that is exactly `row < rows && col < cols` (NvvmTma.cpp). The box's
// origin (col0, row0) is `col` and `row` at the tile's element (0, 0); TMA zero-fills what lies
// outside [0, cols) x [0, rows), which is the mask.
//
// A tensor of rank 3 to 5 read a 2-D box at a time (a head of attention's [Z, L, D] keys): the
// pointer's other terms are scalars `index * stride` (`z_index * l_SIZE * k_SIZE`), each an outer
// dimension of the map (a plane) that no mask conjunct names; the box is one element deep in each.
// The map's planes lie `stride` elements apart; their extent, which no mask gives, is what the
// buffer holds (its elements / stride, rounded up; set at launch), so that every element the load
// reads unmasked is in the map and a box never runs past its plane's rows: the row mask clips it
// (a ragged last key block is zero-filled, not read from the next head).
struct TmaOperand {
  const Stmt* load = nullptr;
  bool b_operand = false;
  std::vector<ExprP> row, col;  // the row and column indices as sums of terms ([R, 1]; [1, C] or [C]; scalars)
  std::vector<ExprP> planes;    // the outer dimensions' indices (scalars), innermost first
  int map = -1;               // its tensor map: KernelPlan::tma_maps[map]
  ExprP rows_e, cols_e;       // the mask's extents (an empty one leaves the map zero: no copy may use it)
};

// A kernel parameter holding a CUtensorMap (128 bytes, by value, __grid_constant__), encoded on the
// host at launch (cuTensorMapEncodeTiled) from the buffer's address and these values: each a runtime
// scalar parameter's name or, where `param` is empty, `value`.
struct HostInt {
  std::string param;
  int64_t value = 0;
  std::string str() const { return param.empty() ? std::to_string(value) : param; }
};
struct TmaMap {
  const Param* buf = nullptr;
  Scalar elem = Scalar::F16;
  HostInt rows, cols, stride;  // the tensor's extents (the mask's bounds) and its row stride in elements
  // Outer dimensions (TmaOperand::planes): their strides in elements, each `value` times the runtime
  // scalar parameters named (`z * M * K`: 1 x M x K).
  struct Plane {
    std::vector<std::string> params;
    int64_t value = 1;
    std::string str() const;
  };
  std::vector<Plane> planes;
  int64_t box_rows = 0, box_cols = 0;  // box_cols * element bytes = 128 (the 128-byte swizzle)
};
std::string describe(const TmaOperand& o, const TmaMap& m);

// One loaded tile of an OperandRings pipeline: read by nothing but one wgmma dot, as its B operand
// (`trans(x)` K-major, as A is laid out), at `offset` bytes of each stage.
struct RingOperand {
  const Stmt* load = nullptr;
  const Stmt* dot = nullptr;  // the statement whose dot reads it
  const Stmt* view = nullptr;  // `xt = trans(x)` where the dot reads xt (emitted as nothing)
  bool kmajor = false;
  int64_t offset = 0, bytes = 0;
  // Filled by TMA (PipelinePlan::tma[tma]: boxes of 64 columns, rows x 128 bytes apart, the 128-byte
  // swizzle) where the load is a box of a 2-D row-major tensor masked by its extents; else cp.async,
  // not_tma saying why.
  int tma = -1;
  std::string not_tma;
};

// A software-pipelined K loop, of one of three kinds. CpAsyncRing keeps `stages` shared buffers of
// the two operands of its one dot `acc = dot(x, y, acc)` filled by cp.async copies `stages - 1`
// iterations ahead. TmaRing (sm_90a, wgmma, operands proven to be boxes of 2-D row-major tensors)
// fills them with bulk tensor copies issued by one thread, each stage completing on its mbarrier.
// OperandRings (NvvmRings.cpp) does as CpAsyncRing for a body of several wgmma dots (attention's
// q @ k^T and p @ v): every loaded tile read only as a dot's B operand gets a slot of each stage;
// the copies of iteration i + stages - 1 are issued while the first dot of iteration i runs; a tile
// that is a box of a 2-D tensor (RingOperand::tma) is copied by TMA into its slot, the stage
// completing on its mbarrier. A warp-specialized producer would be a new kind.
struct PipelinePlan {
  enum class Kind { CpAsyncRing, TmaRing, OperandRings };
  Kind kind = Kind::CpAsyncRing;
  std::vector<RingOperand> rings;  // OperandRings: the copied tiles (lx, ly and dot are then null)
  int stages = 0;
  bool fma = false;  // the dot runs on the FMA units, reading f32 operands from the ring
  MmaPlan mma;
  const Stmt* lx = nullptr;  // the loads of the dot's operands, and the dot's statement
  const Stmt* ly = nullptr;
  const Stmt* dot = nullptr;
  int64_t a_row = 0, b_row = 0;  // row lengths in shared memory (0: wgmma core matrices)
  int64_t a_bytes = 0, stage_bytes = 0;
  std::map<int, CarriedForm> carried;  // variables the copies read as init + m * c (m: the copied iteration)
  std::vector<TmaOperand> tma;          // TmaRing: x's tile, then y's; OperandRings: the rings TMA fills
  std::string not_tma;                  // CpAsyncRing on sm_90a with wgmma: why not TMA
  // TmaRing: a producer warp (warp num_warps, one more than the kernel's) issues the copies, waiting
  // on a second mbarrier per stage that the consumer warps arrive on once their wgmma group reading
  // the stage has completed; the consumers wait only for full stages (no CTA barrier per iteration).
  bool specialized = false;
  std::string not_specialized;  // TmaRing without the producer warp: why
  // TmaRing, `--cluster` (NvvmTma.cpp, plan_cluster): CTAs whose program ids on grid axis
  // `cluster_axis` are 2c and 2c + 1 run as a cluster of two; both read the same box of operand
  // tma[cluster_operand] (its map's box is half the tile's rows), each copies its half and multicasts
  // it to both, and a stage is refilled once both CTAs released it (an empty mbarrier per stage, two
  // arrivals). At run time a cluster whose two CTAs do not read the same box (or a launch without
  // clusters) copies the whole box in each CTA. -1: no cluster, `not_cluster` says why.
  int cluster_axis = -1;
  int cluster_operand = -1;
  std::string not_cluster;
  // TmaRing, and OperandRings with ring TMA fills: the stages' mbarriers (8 bytes each; full at 0,
  // empty at 512 where specialized or clustered; a cluster's exchanged box origins at 768) in 1 KiB
  // above the buffers.
  int64_t ring_bytes() const { return stages * stage_bytes + (kind == Kind::TmaRing || !tma.empty() ? 1024 : 0); }
};

// One `for` loop as one copy of it is emitted (`unchecked`: the copy that runs without checks).
struct LoopPlan {
  const Stmt* loop = nullptr;
  bool unchecked = false;
  AxisInfo k;                              // the loop variable inside the body
  std::optional<HoistPlan> hoist;          // only on a checked copy
  std::optional<PipelinePlan> pipeline;
  std::string not_pipelined;               // why there is no pipeline (when there is none)
  std::vector<const Stmt*> prefetch;       // loads issued one iteration ahead into registers (not pipelined)
  // A wgmma A operand the body does not assign (attention's q), staged into shared memory once before
  // the loop and read from there by its dots (not pipelined): its slot (-1: none) and bytes, held at
  // the bottom of shared memory while the loop runs.
  int resident = -1;
  ExprP resident_var;  // the operand as the dot reads it
  int64_t resident_bytes = 0;
  // Two loops of one statement list with the same resident operand and nothing between them that
  // assigns it or runs a statement other than an assignment (the causal attention's off-band and
  // on-band key loops, both reading q): the first stages it and keeps it staged after it ends
  // (resident_kept: the statements between place their shared-memory uses above it), the later one
  // reads it there (resident_from: the loop that staged it) instead of staging it again, so the
  // operand's registers are free from the first staging on.
  bool resident_kept = false;
  const Stmt* resident_from = nullptr;
  int64_t kept_between = 0;  // resident_from: the shared memory the statements between use, at most (above the operand)
  // The resident operand copied by TMA (sm_90a, an OperandRings loop whose rings TMA fills, no
  // checks): its one assignment is a load of a box of a 2-D row-major tensor masked by its extents
  // (tma_operand, 64-column boxes), earlier in the loop's statement list, and nothing reads it but
  // the dots of this loop and of the loops keeping it. That load is not emitted where it stands:
  // thread 0 copies the box into the staging with the ring's mbarriers (64-column boxes of M rows,
  // M * 128 bytes apart, the 128-byte swizzle: wgmma_tiles' a_atoms), and every thread waits for it
  // once the ring's first copies are issued, so no register holds it. not_resident_tma: why not.
  std::optional<TmaOperand> resident_tma;
  std::string not_resident_tma;
};

// Dynamic shared memory: the pipeline rings at offset 0 of their loop, every other (transient) use
// above the ring of the loop it is in; the total is the largest of those.
struct SmemPlan {
  struct Alloc {
    std::string what;
    int64_t offset = 0, bytes = 0;
  };
  std::vector<Alloc> allocs;
  int64_t total = 0;  // planned bound (emission reports what it used, at most this)
  int64_t limit = 0;  // the target's dynamic shared memory, less 1 KiB where checks report
  bool fma_rings = true;
  std::string fallback;  // why the FMA rings were dropped ("" where they fit or there are none)
};

// A persistent grid (planning stage `persistent`, NvvmPersistent.cpp). The kernel is launched with
// min(tiles, SMs x CTAs per SM) CTAs on grid axis 0; CTA c runs the original program ids of tiles
// t = c, c + G, c + 2G, ... (G CTAs; t in the launch's linear order, axis 0 fastest), so
// program_id(a) is t's coordinate on axis a and num_programs(a) the original grid's extent (the
// kernel's own pid arithmetic, swizzle2d included, is unchanged). The statements before `loop` (a
// TMA ring at the kernel's top level) are run per tile by the consumer warps and by a producer warp
// (plan_specialize's conditions); the producer walks the same tiles and issues every tile's copies
// into the ring, whose stages and phases continue from tile to tile, so the next tile's first stages
// fill while the consumers run this tile's epilogue (the statements after the loop). That epilogue's
// shared memory therefore lies above the ring, not on it. Where the ring and the epilogue would not
// fit together, its stores go from the layout their values are held in (`direct_stores`: a dot's
// accumulator stored as f16 pairs, no exchange tile) where that fits, else the ring has fewer stages
// (`stages_from`: the stages it had).
struct PersistentPlan {
  bool on = false;
  std::string why;  // on: what decided it; off: why not
  const Stmt* loop = nullptr;
  int64_t tiles = 0;  // the grid's instances for the launch's values (0: not known when planning)
  int stages_from = 0;  // the ring's stages before the epilogue was placed above it (0: unchanged)
  int64_t epilogue_bytes = 0;  // the statements after the loop: shared memory, at most (above the ring)
  bool direct_stores = false;  // the epilogue's tile stores go from where their values are held
  bool asked = false;  // --persistent or --no-persistent (`emit --plan` then says why not on any target)
};

struct KernelPlan {
  std::string arch;
  ScheduleAsks asks;  // the schedule options asked for (by flags or by the kernel)
  // slots
  std::vector<int> assigns;               // statements (and the parameter) assigning each slot
  std::vector<ExprP> single_def;          // the last single-target Assign value of each slot
  // Scalars assigned more than once, every time by the kernel's leading assignments (before its first
  // other statement), and read by no tile assignment before their last: their value is fixed from
  // then on, so index arithmetic reading them may be evaluated anywhere after (a Python variable
  // rebound before the loops, as Triton's swizzle2d rebinds `ij`; plan_prefix_scalars).
  std::vector<char> prefix_scalar;
  std::vector<std::vector<ExprP>> defs;   // every value assigned to each slot
  // dots
  std::map<const Expr*, MmaPlan> dots;
  std::vector<std::pair<const Stmt*, const Expr*>> dot_order;  // in program order, for printing
  // layouts
  std::vector<Dist> layouts;  // per slot (scalars: the trivial layout)
  // loops
  std::map<std::pair<const Stmt*, bool>, LoopPlan> loops;
  std::vector<std::pair<const Stmt*, bool>> loop_order;
  // axis
  struct Access {
    const Stmt* stmt = nullptr;
    const Expr* ptr = nullptr;
    bool store = false;
    AxisInfo info;
    AxisInfo from_base;  // stores under conflict checks: the same with the buffer's start aligned to anything (granules)
  };
  std::vector<Access> accesses;
  // conflicts: per buffer some store or atomic writes, how its claims go (NvvmChecks.cpp). Granule
  // words (sm_90) where every site writing it is a plain tile store in runs that own whole granules
  // (see plan_conflicts); element words only otherwise. Every site of one buffer claims one way.
  // `disjoint`: the condition under which no two instances can write one element of the buffer
  // (ir/Footprint.h), or why there is none; `disjoint_now`: it holds for the values the kernel is
  // compiled for (a runner launches with the values it was built with), so no write of the buffer is
  // claimed or reported.
  struct ConflictWords {
    bool granules = false;
    std::string why;
    std::optional<DisjointWrites> disjoint;
    bool disjoint_now = false;
  };
  std::map<std::string, ConflictWords> conflict_words;
  // masks: i1 tile variables assigned once whose every element is true wherever they are read, with
  // why (`l_mask = l_index < l_SIZE`, l_index = l_iter + arange(0, 64) in `for l_iter in range(0,
  // l_SIZE, 64)`, l_SIZE a constexpr the step divides: at most 4095 < 4096). A `where` on one is its
  // first operand: no select, and no registers for the mask (the DT lowering's key masks at a key
  // count the tile divides).
  std::map<int, std::string> true_masks;
  // asserts: scalar asserts whose condition holds for the values the kernel is compiled for (literals
  // and constexprs only: a .dt file's `y_SIZE <= 8192` checks). They emit nothing, and do not make a
  // kernel one that reports (no status buffer, so its launches need no synchronize).
  std::set<const Stmt*> true_asserts;
  // persistent
  PersistentPlan persistent;
  // smem
  SmemPlan smem;
  // TMA: the tensor maps the kernel takes as parameters (after its own), in order
  std::vector<TmaMap> tma_maps;
  std::map<const Stmt*, int> tma_map_of;  // per load statement (both copies of a hoisted loop share it)
  int map_for(const Stmt* s, const TmaMap& m);  // s's index in tma_maps, m added for it where it has none
  std::set<const Stmt*> tma_resident_loads;  // loads of resident operands TMA copies (LoopPlan::resident_tma): not emitted
  // Stores of a 2-D f16/bf16 tile at the top level of the kernel's body whose value reads a slice of
  // its own layout (attention's `(acc / l[:, None]).to(f16)`, stored from the accumulator layout
  // otherwise) and that are a box of a 2-D row-major tensor masked by its extents (tma_operand,
  // 64-column boxes; sm_90a, no checks):
  // the value is written to shared memory in the boxes' layout (128-byte swizzle, rows * 128 bytes
  // apart) and thread 0 stores the boxes with cp.async.bulk.tensor (the tensor's bounds clip what
  // lies outside, which is the mask).
  std::map<const Stmt*, TmaOperand> tma_stores;

  const LoopPlan& loop(const Stmt& f, bool unchecked) const;
  const MmaPlan& dot(const Expr& e) const;
  std::string print(const Kernel& k) const;  // stable text, for `emit --plan` and its golden tests
  std::string ask_outcome(const std::string& option) const;  // "yes, ..." / "no, why" of an option asked for
};

}  // namespace dtsim::nvvm
