// Backend-internal: lowers one verified kernel to an NVVM IR function. Every tile value is held in a
// distributed layout (Layout.h: one SSA value per register of the layout); mutable variables are
// allocas (promoted by libNVVM's mem2reg) in the layout the plan chose for them (Plan.h); values
// that must move between threads (layout conversions, reductions across warps, dot operands) go
// through one dynamic shared buffer (@dtsim_smem), reused by every statement, with barriers.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_backend/AxisInfo.h"
#include "cuda_backend/Layout.h"
#include "cuda_backend/NvvmEmitter.h"
#include "cuda_backend/NvvmValues.h"
#include "cuda_backend/Plan.h"

namespace dtsim::nvvm {

// A lowered value: a scalar (one uniform SSA value) or a tile (one SSA value per register of `dist`).
struct TV {
  Type type;
  Dist dist;
  std::vector<std::string> v;
  const std::string& at(int r) const { return type.is_scalar() ? v[0] : v[static_cast<size_t>(r)]; }
};

// Every slot the statements assign, at any depth (loop variables included).
void slots_assigned(const std::vector<StmtP>& body, std::set<int>& out);

class KernelEmitter {
 public:
  KernelEmitter(const Kernel& k, const Bindings& b, const CudaOptions& opt, std::set<std::string>& decls,
                std::string entry);
  // The planning stages (Plan.cpp): fill the plan (kernel_plan()), which emission then only reads.
  void plan();
  const KernelPlan& kernel_plan() const { return plan_; }
  std::string emit();  // the `define void @...` text (after plan())
  NvvmKernelInfo info;
  std::string signature;  // "void (i32, float addrspace(1)*)*" for the annotations

 private:
  const Kernel& k_;
  const Bindings& b_;
  const CudaOptions& opt_;
  std::set<std::string>& decls_;
  int threads_;
  std::ostringstream prelude_, body_;
  int tmp_ = 0, label_ = 0;
  std::string cur_block_;
  std::map<std::string, std::string> coord_cache_;
  std::vector<std::vector<std::string>> slot_vars_;  // alloca names per variable slot
  KernelPlan plan_;                                   // decided by plan(), read by emission
  bool planned_ = false;
  // Loop variables of the loops being planned or emitted around the current point: divisibility of
  // lo and step (from the plan's LoopPlan::k while emitting).
  std::map<int, AxisInfo> loop_info_;
  // ---- planning stages (Plan.cpp) ----
  void plan_slots(const std::vector<StmtP>& body);
  void plan_dots();
  void plan_layouts();
  void plan_loops(const std::vector<StmtP>& body);
  void plan_for(const Stmt& f);
  void plan_loop_copy(const Stmt& f, std::optional<HoistPlan> hoist);
  std::optional<PipelinePlan> plan_pipeline(const Stmt& f, std::string& why);  // why: when not
  std::optional<HoistPlan> plan_hoist(const Stmt& f);
  void plan_accesses(const Stmt& s);
  void plan_conflicts();
  bool from_base_ = false;  // axis_info: pointer parameters aligned to anything (offsets from their start)
  void plan_smem();
  int64_t transient_smem(const std::vector<StmtP>& body, const std::set<const Stmt*>& skip);
  // Loads already emitted in this straight-line stretch of code, by expression text and layout, with
  // the variable slots their value depends on: a second identical load reuses the registers
  // (cleared at stores, control flow, and assignments to those slots).
  struct CachedLoad {
    TV value;
    std::set<int> slots;
  };
  std::map<std::string, CachedLoad> load_cache_;
  void depends_on(const ExprP& e, std::set<int>& slots);

  // ---- text helpers ----
  std::string tmp();
  std::string label(const std::string& hint);
  std::string op(const std::string& rhs);  // emits "%tN = rhs", returns %tN
  void line(const std::string& s);
  void start_block(const std::string& l);
  void br(const std::string& l);
  void declare(const std::string& d);
  std::string call(const std::string& ret, const std::string& fn, const std::string& args, const std::string& decl_args);
  [[noreturn]] void fail(SourceLoc loc, const std::string& msg);
  const Stmt* cur_stmt_ = nullptr;
  void note(const std::string& text);  // for `emit --layouts`, attached to the current statement

  // ---- layout ----
  Dist dflt(const Shape& s) const { return blocked(s, k_.num_warps); }
  std::string lane_id();
  std::string warp_id();
  std::string thread_part(const Dist& d, size_t dim);           // i32, the lane/warp bits of coordinate dim
  std::vector<std::string> coords(const Dist& d, int r);        // i32 coordinates of register r
  std::string owner(const Dist& d);                             // i1 "first thread holding its elements"
  std::string flat_of(const Shape& s, const std::vector<std::string>& c);
  std::vector<std::string> unflatten(const Shape& s, const std::string& f);
  std::vector<std::string> bcast_coords(const Shape& from, const std::vector<std::string>& c, const Shape& to);
  std::string smem_ptr(const Type& t, int64_t byte_offset, const std::string& index);
  std::string smem_index(const std::string& flat);              // padded index: flat + flat/32
  void barrier();
  void guarded(const std::string& cond, const std::function<void()>& body);
  void smem_store_all(const TV& v, int64_t byte_offset);        // every element at its padded flat index
  // A value of type t laid out as d, register by register: value(r) for each register holding its
  // element first, a copy of that register's value for the registers that repeat an element
  TV each_element(const Type& t, const Dist& d, const std::function<std::string(int)>& value);
  TV smem_load_all(const Type& t, const Dist& d);               // layout d's registers from where smem_store_all put them
  TV eval_gather(const ExprP& e, const Dist& d);              // tl.gather, through shared memory
  TV eval_histogram(const ExprP& e, const Dist& d);           // tl.histogram: shared-memory counters and atomics
  TV convert(const TV& v, const Dist& want);
  std::string exchange_ptr(const Exchange& x, const Dist& d, int r, Scalar e);
  std::string exchange_off(const Exchange& x, const Dist& d, int r);
  Dist natural(const ExprP& e);                                 // the layout e is best produced in
  Dist reduce_parent(const ExprP& x);                           // the layout a reduction folds x in
  AxisInfo axis_info(const ExprP& e);
  std::optional<AxisInfo> carried_axis_info(int slot, const Type& t);
  // `v` is `slot + c` (or `c + slot`) with c an integer (Triton's `p += step`): c; null otherwise.
  static const ExprP* advance_step(const ExprP& v, int slot);
  std::set<int> axis_busy_;  // carried variables whose axis information is being computed
  using CarriedForm = nvvm::CarriedForm;
  std::optional<CarriedForm> carried_form(int slot) const;
  // `st`, a statement of loop f's body, advancing such a variable whose init is set outside f.
  std::optional<CarriedForm> loop_advance(const Stmt& f, const Stmt& st) const;

  // ---- expressions ----
  // any_scalar: scalar subexpressions count as recomputable whatever they read (their current value
  // is the one wanted: at() evaluates them once), so at() can evaluate e at any coordinates.
  bool recomputable(const ExprP& e, bool any_scalar = false);
  bool reads_slice(const ExprP& e, size_t rank, int depth = 0);
  bool stable_scalar(int slot) const;
  void plan_prefix_scalars();
  // e's value in layout d (d's shape is e's shape; scalars ignore d).
  TV eval(const ExprP& e, const Dist& d);
  TV eval(const ExprP& e) { return eval(e, natural(e)); }
  // e broadcast to a consumer laid out as d (d's shape is the consumer's).
  TV fit(const ExprP& e, const Dist& d);
  // Like fit(), but a recomputable tile is evaluated register by register when asked (few live values).
  std::function<std::string(int)> lazy_fit(const ExprP& e, const Dist& d);
  std::string at(const ExprP& e, const std::vector<std::string>& c);
  std::string eval_scalar(const ExprP& e);
  TV eval_load(const ExprP& e, const Dist& d);
  TV eval_load_uncached(const ExprP& e, const Dist& d);
  TV eval_dot(const ExprP& e);
  // ---- dot (NvvmDot.cpp) ----
  using MmaPlan = nvvm::MmaPlan;
  int sm_version() const;
  std::string half_atomic_name(const Stmt& s, Scalar et) const;
  std::string atomic_half(const Stmt& s, const std::string& cond, const std::string& addr, const std::string& val, const std::string& cmpv,
                          const std::function<std::string(const std::string&)>& pred_of);
  std::string atomic_narrow(const Stmt& s, const std::string& cond, const std::string& addr, const std::string& val, const std::string& cmpv);
  std::string atomic_in_word(const Stmt& s, const std::string& cond, const std::string& addr, const std::string& name, int64_t align_mask,
                             int64_t field_mask, const std::string& ty, const std::string& inactive,
                             const std::function<std::string(const std::string&)>& decode,
                             const std::function<std::string(const std::string&)>& update,
                             const std::function<std::string(const std::string&)>& encode);
  MmaPlan mma_plan(const Expr& dot);
  Dist accumulator(const MmaPlan& p) const;  // the layout the plan's dot produces
  TV eval_dot_fma(const ExprP& e);
  static int64_t fma_lda(int64_t K);  // row length of A in shared memory for the FMA dot
  std::vector<std::string> fma_tiles(const Dist& D, int64_t K, Scalar rt, const std::string& a_at, int64_t lda,
                                     const std::string& b_at, std::vector<std::string> acc);
  std::string smem_base32();  // the shared buffer's address (32-bit shared window)
  // Shared memory below smem_floor_ is held by an enclosing pipelined loop's ring of buffers: every
  // other use is placed above it (smem_addr32, smem_gep, smem_ptr) and sized through use_smem.
  int64_t smem_floor_ = 0;
  std::string smem_addr32();                    // smem_base32() + smem_floor_
  std::string smem_gep(const std::string& off);  // i8 addrspace(3)* at smem_floor_ + off
  void use_smem(int64_t bytes) { info.smem_bytes = std::max(info.smem_bytes, smem_floor_ + bytes); }
  // A tile in registers -> shared memory as 16-bit rows of `ld` elements at byte offset `off`.
  void stage_b16(const TV& v, const std::string& off, int64_t ld);
  // A tile of i8 in registers -> shared memory as bytes, rows of `ld` bytes (transposed: one row per column).
  void stage_b8(const TV& v, const std::string& off, int64_t ld, bool transpose);
  // wgmma operand layouts (byte offset of element (row, col) of an A [M, K] or B [K, N] tile): rows
  // of 128 bytes with the 128-byte swizzle where the tile allows (A: K = 64; B: N % 64 == 0), else
  // 8x8 core matrices of 128 contiguous bytes.
  static bool wgmma_swizzled(const Shape& tile, bool b_operand);
  std::string wgmma_offset(const std::string& row, const std::string& col, const Shape& tile, bool b_operand);
  void stage_core_matrices(const TV& v, const std::string& off, bool b_operand);
  // acc += A @ B from core-matrix tiles at a_off (A [M, K]) and b_off (B [K, N]), wgmma (sm_90a).
  // `pending` groups may still run when it returns (0: the result is ready; 1: the previous dot's
  // group is complete, this one may still run; wgmma_wait(0) before anything else reads it).
  // b_atoms: for a swizzled N-major B, the bytes between its 64-column atoms (0: 1024, the atoms of
  // each 8 rows side by side as wgmma_offset lays them out; TMA boxes: K * 128). With a_regs
  // (wgmma_a_fragments), A is read from registers and a_off is unused. a_atoms: A in TMA boxes of 64
  // columns (M rows, 128-byte swizzled) this many bytes apart (0: wgmma_offset's layout).
  TV wgmma_tiles(const MmaPlan& p, const std::string& a_off, const std::string& b_off, const TV& acc, int pending = 0,
                 bool b_kmajor = false, int64_t b_atoms = 0, const std::vector<std::string>* a_regs = nullptr, int64_t a_atoms = 0);
  std::vector<std::string> wgmma_wait(const std::vector<std::string>& acc, int pending);
  // acc += A (at a_off, rows of K+8 halves) @ B (at b_off, rows of N+8 halves), mma.sync.
  TV mma_tiles(const MmaPlan& p, const std::string& a_off, const std::string& b_off, const TV& acc);
  // acc += A (at a_off, rows of K+16 bytes) @ B (B's transpose at b_off, rows of K+16 bytes), i8 mma.sync.
  TV mma_tiles_s8(const MmaPlan& p, const std::string& a_off, const std::string& b_off, const TV& acc);
  TV eval_reduce(const ExprP& e);
  void mma_grid(const std::string& mma, const std::string& acc, const std::vector<std::vector<std::string>>& af,
                const std::vector<std::vector<std::string>>& bf, int64_t mtiles, int64_t ntiles, std::vector<std::string>& c);
  TV eval_scan(const ExprP& e, const Dist& d);    // NvvmReduce.cpp, as the next three
  TV eval_scan_n(const ExprP& e, const Dist& d);  // of several operands (Expr::fns)
  void scan_lines(int64_t n, int64_t inner, int64_t lines, bool reverse, const std::vector<Scalar>& types,
                  const std::function<std::vector<std::string>(const std::string&)>& first,
                  const std::function<std::vector<std::string>(const std::vector<std::string>&, const std::string&)>& step);
  std::string scan_line_last(const std::string& l2, int64_t n, int64_t inner);
  TV scan_results(const ExprP& e, const Dist& d, const std::function<std::string(int)>& value);
  std::vector<std::string> combine_regs_;  // while a combine function (Expr::fn or fns) is emitted: its arguments
  std::string combine(RedOp rop, Scalar vt, const std::string& a, const std::string& b, const std::string& ia,
                      const std::string& ib, std::string* idx);
  std::string shuffle_xor(Scalar vt, const std::string& v, int mask);
  // Vector width for global accesses through pointer tile `ptr` laid out as d (1: scalar accesses).
  int vector_width(const Dist& d, const ExprP& ptr, const ExprP& mask, const ExprP& other);
  std::pair<std::string, std::string> swizzle(const ExprP& e);

  // ---- elementwise ops (NvvmOps.cpp); values in register types ----
  std::string unary(const Expr& e, const std::string& x);
  std::string binary(const Expr& e, const std::string& a, const std::string& b);
  std::string where(const Expr& e, const std::string& c, const std::string& a, const std::string& b);
  std::string binary_typed(BinOp op, Scalar t, const std::string& a, const std::string& b);
  std::string cast(Scalar from, Scalar to, const std::string& v);
  std::string bitcast(Scalar from, Scalar to, const std::string& v);  // i32 <-> f32, i64 <-> f64
  void reject_unsupported(const std::vector<StmtP>& body);
  std::string round_to(Scalar t, const std::string& v);  // f16/bf16/fp8 rounding of a float register, i8/i16 wrap
  std::string wrap_int(Scalar t, const std::string& v);  // an i32 register wrapped to i8/i16
  std::string f32_to_fp8(Scalar t, const std::string& v);  // float register -> i8 bits (rn, satfinite)
  std::string fp8_to_f32(Scalar t, const std::string& b);  // i8 bits -> float register (exact)
  std::string fp8_nan_byte(Scalar t, const std::string& v);
  std::string soft_to_fp8(Scalar t, const std::string& v, bool exact);  // the formats PTX cannot convert
  std::string soft_from_fp8(Scalar t, const std::string& b);
  std::string math(UnOp op, Scalar t, const std::string& x);
  std::string nan_minmax(bool is_max, Scalar t, const std::string& a, const std::string& b);
  std::string to_bool(Scalar t, const std::string& v);
  std::string load_mem(Scalar s, const std::string& ptr);
  void store_mem(Scalar s, const std::string& ptr, const std::string& v);
  std::string from_mem(Scalar s, const std::string& x);  // memory bits -> register value
  std::string to_mem(Scalar s, const std::string& v);    // register value -> memory bits
  // Global memory by default; addrspace 3: shared memory (element types stored as they are held).
  std::vector<std::string> load_vec(Scalar s, const std::string& ptr, int w, int addrspace = 1);
  void store_vec(Scalar s, const std::string& ptr, const std::vector<std::string>& v, int addrspace = 1);
  std::string pack2(Scalar s, const std::string& lo, const std::string& hi);
  std::pair<std::string, std::string> unpack2(Scalar s, const std::string& word);
  std::string constant(Scalar s, double f, int64_t i, bool from_float);
  std::string trap_if(const std::string& cond);

  // ---- statements ----
  void emit_block(const std::vector<StmtP>& body);
  void emit_stmt(const Stmt& s);
  void emit_stmt_body(const Stmt& s);
  void assign(int slot, const TV& v);
  void emit_store(const Stmt& s);
  void emit_atomic(const Stmt& s);
  void emit_for(const Stmt& s);
  void emit_for_loop(const Stmt& s);  // emit_for without hoisted bounds checks
  void emit_plain_for(const Stmt& s, const LoopPlan& lp);
  // ---- software pipelining of dot operand loads (NvvmPipeline.cpp) ----
  // Carried variables of the loop whose copies are being issued: while set, v reads as its value at
  // the iteration in the loop variable, init + ((k - lo) / step) * c (see emit_pipelined_for).
  struct Carried {
    CarriedForm form;
    std::string kvar, lo, step;  // the loop variable's register, and lo and step in its type
    Scalar kt = Scalar::I32;
  };
  std::map<int, Carried> carried_;
  std::map<int, int64_t> resident_;  // slot -> absolute shared-memory offset of an A operand staged before its loop
  void plan_resident(const Stmt& f, LoopPlan& lp);
  void plan_kept_residents(const std::vector<StmtP>& body);
  void plan_loop_stages();  // loops, kept residents, resident TMA copies, TMA stores, persistent
  void plan_resident_tma(const std::vector<StmtP>& body);
  void plan_tma_stores();
  void plan_true_masks();
  void plan_true_asserts();
  // Whether statement s reports at run time: an assert not folded by plan_true_asserts, or a print.
  bool reports_at_run_time(const Stmt& s) const;
  // Whether some statement of the kernel does (a failing CTA leaves early; reports meet at barriers).
  bool reports_at_run_time() const;
  bool always_true(const ExprP& e) const;
  void emit_tma_store(const Stmt& s, const TmaOperand& o);
  std::string tma_nonempty(const TmaOperand& o);
  std::map<int, int64_t> resident_atoms_;  // slot -> a_atoms of a resident operand TMA copied in boxes (absent: 0)
  std::map<int, int64_t> kept_floor_;  // slot -> smem_floor_ before a kept resident operand was staged
  std::string carried_at(const ExprP& v, const std::vector<std::string>& c);
  size_t loop_and_after(const Stmt& f, const std::vector<const Stmt*>& readers, std::set<int>& loop);
  std::map<int, Carried> carried_vars(const Stmt& f, const std::vector<const Stmt*>& readers);
  bool varies_in(const ExprP& e, const std::set<int>& loop, std::set<int>& seen);
  struct LoopBounds {
    Scalar t = Scalar::I32;
    std::string ty, kvar, lo, hi, step;
  };
  LoopBounds loop_bounds(const Stmt& f);
  std::map<int, Carried> ring_carried_of(const PipelinePlan& pp, const LoopBounds& lb);
  std::string carried_note(const std::map<int, Carried>& carried, const Stmt& f);
  struct RingHead {
    std::string ctr, sc, head, exit, i, cur;
  };
  RingHead ring_head(const LoopBounds& b, int S, const std::string& prefix,
                     const std::function<void(const std::string&, const std::string&, bool)>& issue, bool cp_async = true);
  void emit_pipelined_for(const Stmt& s, const PipelinePlan& pp);
  // ---- TMA rings (NvvmTma.cpp) ----
  void plan_tma(const Stmt& f, PipelinePlan& pp);
  std::optional<TmaOperand> tma_operand(const Stmt& load, bool b_operand, TmaMap& map, std::string& why);
  std::optional<HostInt> host_int(const ExprP& e);
  bool consecutive_along(const std::vector<ExprP>& terms, int dim, int64_t len);
  std::string index_origin(const std::vector<ExprP>& terms);
  void emit_tma_for(const Stmt& s, const PipelinePlan& pp);
  // ---- loops of several wgmma dots whose B operands are copied into rings (NvvmRings.cpp) ----
  std::optional<PipelinePlan> plan_operand_rings(const Stmt& f, std::string& why);
  const Expr* ring_b_operand(const Stmt& f, const Expr& dot, bool& kmajor, const Stmt** view);
  std::map<int, Carried> ring_carried(const Stmt& f, const std::vector<const Stmt*>& readers);
  // The shared memory an OperandRings loop's body uses above its rings, at most.
  int64_t ring_transient(const Stmt& f, const PipelinePlan& pp);
  void emit_ring_for(const Stmt& s, const PipelinePlan& pp);
  // While an OperandRings loop's body is emitted: per ring operand's slot, the i32 absolute
  // shared-memory offset of its tile in the current stage, and whether it is laid out K-major.
  struct RingTile {
    std::string at;
    bool kmajor = false;
    int64_t atoms = 0;  // filled by TMA: 64-column boxes this many bytes apart (wgmma_tiles' b_atoms)
  };
  std::map<int, RingTile> ring_;
  // Emitted by the next wgmma_tiles between its commit and its wait (the next stage's copies).
  std::function<void()> in_flight_;
  // The f16x2 A fragments of wgmma from a tile held in the accumulator layout of [M, K] (operand A
  // in registers): per 64-row tile r and k16 step ks, four i32 registers.
  std::vector<std::string> wgmma_a_fragments(const MmaPlan& p, const TV& a);
  // Loads of a `for` body that can be issued one iteration ahead into registers (num_stages >= 2):
  // see emit_for.
  std::vector<const Stmt*> prefetchable_loads(const Stmt& f);
  int count_reads(int slot) const;
  // cp.async of a load's tile (f16/bf16, 16-byte vectors) into shared rows of ld elements at `off`.
  bool cp_async_ok(const Expr& load, std::string& why);
  // ld > 0: rows of ld elements (ldmatrix); ld == 0: the wgmma layout of operand A or B.
  struct BoundsCheck;
  // With `checks`, the bounds check of the copies is left there for report_checks (one barrier for
  // several tiles) instead of being reported at once, and the copies are returned, to be issued
  // once the checks have passed (without `checks`: issued at once, nullptr returned).
  std::function<void()> cp_async_tile(const Expr& load, const std::string& off, int64_t ld, bool b_operand = false,
                     std::vector<BoundsCheck>* checks = nullptr);
  void emit_if(const Stmt& s);
  void emit_while(const Stmt& s);
  void emit_assert(const Stmt& s);
  // ---- located checks (asserts, bounds checks) ----
  int add_site(NvvmKernelInfo::Site::Kind kind, const std::string& text, int64_t lanes, SourceLoc fallback);
  // Per-thread partials of one check: `bad` (i1, a lane of this thread failed), `nbad` and `nact`
  // (i32 counts of its failing and active lanes, each lane counted by one thread), `first` (i32, the
  // smallest failing lane, INT32_MAX when none) and `flat` (i64 buffer index at `first`, or "").
  // The CTA agrees whether any lane failed (bar.red.or of `bad`); only then are the partials, which
  // `partials` emits there (in the failing branch: the passing path pays for none of them), reduced
  // in shared memory, and thread 0 records them in the status buffer (the smallest failing pid wins);
  // a failing instance leaves. The passing path costs one barrier.
  struct CheckAcc;
  void report_check(int site, const std::string& bad, const std::function<CheckAcc()>& partials);
  // Several checks with one barrier on the passing path; where one fails, the first that failed
  // anywhere in the instance reports (one more barrier per check, on the failing path only).
  struct PendingCheck {
    int site;
    std::string bad;
    std::function<CheckAcc()> partials;
  };
  void report_checks(const std::vector<PendingCheck>& checks);
  // Checks of loads in assignments wait here, to be reported together (one barrier) before the next
  // statement that is not an assignment, the end of the block, or a loop's back edge: a barrier
  // orders the memory accesses before it, so a barrier per load would serialize the loads'
  // latencies. Loads have no effect to undo: their failing lanes are suppressed where they run.
  std::vector<PendingCheck> deferred_;
  bool defer_ok_ = false;  // emitting an assignment statement
  int guard_depth_ = 0;    // inside guarded(): a check made there must be reported there
  void flush_checks();
  // The failing path of one check: partials reduced, thread 0 records, the instance leaves.
  void report_failure(int site, const std::function<CheckAcc()>& partials);
  // A check whose condition every thread holds alike (a scalar assert): no barrier; thread 0 records
  // lane 0 when `bad`, and the instance leaves.
  void report_uniform(int site, const std::string& bad);
  void drain_async();
  // Thread 0 of a failing instance: counts it and offers its finding (kept if its pid is the smallest).
  void record_status(int site, const std::string& lane, const std::string& count, const std::string& active,
                     const std::string& flat, const std::string& other = "");
  // Accumulates one register's check into running partials (see report_check).
  struct CheckAcc {
    std::string bad = "false", nbad = "0", first = "2147483647", nact = "0", flat;
    std::string other;  // conflicts: the i64 shadow word found at `first` (who claimed it, where)
  };
  void check_lane(CheckAcc& a, const std::string& fails, const std::string& active, const std::string& lane,
                  const std::string& flat_index, const std::string& other = "");
  // Bounds checks (CudaOptions::bounds_checks, NvvmChecks.cpp). The buffers a pointer expression
  // can point into: the pointer parameters it is derived from.
  // Where `address` is given, it is set when the pointer may come from int_to_ptr (an address that
  // names no buffer parameter; such an access cannot be checked), and no error is raised.
  std::vector<const Param*> buffers_of(const ExprP& ptr, bool* address = nullptr);
  struct BoundsCheck {
    int site = -1;
    std::vector<const Param*> bufs;
    Shape tile;  // the access's tile shape (empty: a scalar access)
    std::string bad = "false";  // i1: an element this thread counts failed (the passing path's test)
    std::vector<std::function<void(CheckAcc&)>> lanes;  // per-lane accounting, emitted on failure
    // Conflict checks: granule claims emitted when the statement ends, phase by phase (NvvmChecks.cpp).
    std::vector<std::function<void(int, BoundsCheck&)>> claims;
    // Between their phases: whether a claim of this thread needs the slow path (i1), and the blocks
    // that skip it (the whole warp settled on the fast path) and that took it.
    std::string any_fix = "false", fix_skip, fix_done;
  };
  // Starts the check of one load or store (site kind Load/Store) through pointer expression `ptr`.
  // A pointer that may come from int_to_ptr gives a check of site -1: nothing is checked or reported.
  BoundsCheck begin_bounds(bool store, const ExprP& ptr, const Shape& tile);
  bool unchecked_address(const ExprP& ptr);
  // Checks the w consecutive elements at `ptr_reg` (register r0 of layout d; `active` i1: the mask,
  // `counted` i1: this thread counts these lanes); returns the i1 "every element in bounds", which
  // the caller adds to the access's condition. In one buffer, w elements cost one comparison of the
  // first one's offset; lane-by-lane accounting is left to the failing branch.
  std::string bounds_lanes(BoundsCheck& bc, Scalar elem, const std::string& ptr_reg, int w, const Dist& d, int r0,
                           const std::string& active, const std::string& counted);
  void end_bounds(BoundsCheck& bc);
  // Conflict checks (CudaOptions::conflict_checks, NvvmChecks.cpp): a check of site kind Conflict
  // for the store or atomic through `ptr`; conflict_lanes claims the w consecutive elements at
  // `ptr_reg` that `cond` (the access's own condition: mask, owner, in bounds) lets this thread write
  // in their granule or element words, and accounts for those another instance claimed in a
  // conflicting way.
  BoundsCheck begin_conflicts(const ExprP& ptr, const Shape& tile);
  void conflict_lanes(BoundsCheck& cc, Scalar elem, const std::string& ptr_reg, int w, const Dist& d, int r0,
                      const std::string& cond, bool atomic);
  bool conflicts() const { return opt_.conflict_checks && checking(); }
  bool conflict_granules() const;        // the target has granule words (sm_90: atom.cas.b128)
  bool conflict_granules(const std::string& buf) const;  // buffer buf's claims go through them (planned)
  std::string lin_pid();                 // i64 linear pid (x + nx * (y + ny * z)), computed at entry
  std::set<std::string> shadowed_;       // buffers whose shadow words the kernel takes
  bool lin_pid_ = false;
  PendingCheck pending(BoundsCheck& bc);  // end_bounds' check, for report_checks
  // Bounds checks hoisted out of a `for` loop (NvvmChecks.cpp). Where every global access of the
  // body goes through a pointer that is the loop-invariant base plus integer terms each of degree
  // at most 1 in the loop variable k (ring operations in one integer width, nothing else depending
  // on k), the elements an access touches move by a fixed amount per iteration, so each lane's
  // offsets over all iterations lie between those of the first and the last iteration, provided no
  // term wraps around its width in between (checked from the term's values at the first two
  // iterations). loop_in_bounds emits that test before the loop for every lane its mask's
  // k-independent conjuncts leave active, agreed by the CTA: the returned i1 (uniform) says that the
  // loop can run without per-iteration checks. plan_hoist (planning stage `loops`) decides whether
  // a loop qualifies and finds its accesses; loop_in_bounds emits the test from what it found.
  std::string loop_in_bounds(const Stmt& f, const HoistPlan& h);
  using HoistLoop = nvvm::HoistLoop;
  // How `e` depends on the iteration: 0 not at all, 1 as a degree-1 polynomial in k over its integer
  // width (or through a carried pointer), -1 otherwise or where evaluating it before the loop could
  // have an effect (loads, integer division).
  int k_degree(const ExprP& e, const HoistLoop& L);
  // e with the (non-carried) variables the loop assigns replaced by their single definitions
  // (evaluable before the loop).
  ExprP inline_body_vars(const ExprP& e, const HoistLoop& L);
  bool unchecked_ = false;  // emitting the copy of a loop whose accesses were proven in bounds
  bool checking() const { return opt_.bounds_checks && !unchecked_; }
  // Warp specialization (NvvmTma.cpp): whether the kernel's statements allow a producer warp for
  // TMA ring `f`; while emitting, the threads a barrier waits for once the producer warp has left
  // (0: the whole CTA) and whether the statements before the split are being emitted.
  void plan_specialize(const Stmt& f, PipelinePlan& pp);
  // Why TMA ring f cannot have a producer warp ("" where it can).
  std::string specialize_blocker(const Stmt& f, const PipelinePlan& pp);
  // Persistent grids (NvvmPersistent.cpp): planning stage `persistent`, and the kernel's emission
  // when it is on (instead of its body's): the tile loops of the producer warp and the consumers.
  void plan_persistent();
  // The shared memory the statements after a persistent kernel's loop use, at most: with
  // `direct`, their tile stores go from where the values are held (store_in_place_).
  int64_t epilogue_smem(const std::vector<StmtP>& after, bool direct);
  bool stores_in_place(const Stmt& s);  // a tile store whose pointer and mask any layout computes
  bool store_in_place_ = false;         // emit_store: from the value's own layout (no conversion)
  void emit_persistent();
  // While a persistent kernel's tiles are emitted: per grid axis, the alloca holding this tile's
  // program id, and the i32 argument holding the original grid's extent (empty: not persistent).
  std::vector<std::string> tile_pid_, tile_grid_;
  // Runs `body` once per tile of this CTA (t = ctaid.x, then + nctaid.x while t < the grid's tiles),
  // the tile's program ids in tile_pid_.
  void tile_loop(const std::function<void()>& body);
  void emit_tma_specialized(const Stmt& f, const PipelinePlan& pp);
  std::string tma_bar(const PipelinePlan& pp, const std::string& st, bool empty);
  void tma_wait(const std::string& bar, const std::string& parity);
  // A producer warp's wait, from round 1 on, until the consumers released stage `st` in the round
  // before (its empty mbarrier's phase round - 1), and a consumer warp's release of a stage (lane 0
  // arrives on its empty mbarrier).
  void tma_wait_empty(const PipelinePlan& pp, const std::string& st, const std::string& round);
  void tma_free(const PipelinePlan& pp, const std::string& stage);
  // (stage + S - 1) mod S: the ring stage before `stage`, which is also the one S - 1 ahead of it.
  std::string stage_before(const std::string& stage, int S);
  void tma_issue(const PipelinePlan& pp, const std::string& st, const std::string& mc = "", const std::string& rank = "");
  void tma_copy(const TmaOperand& o, const std::string& dst, const std::string& bar, const std::string& mc = "", const std::string& rank = "");
  void plan_ring_tma(PipelinePlan& pp);
  // Clusters (NvvmTma.cpp): whether TMA ring `f` runs in 2-CTA clusters sharing an operand, and its
  // emission; pair_invariant: whether e is the same in CTAs whose program ids on `axis` are 2c, 2c + 1.
  void plan_cluster(const Stmt& f, PipelinePlan& pp);
  bool pair_invariant(const ExprP& e, int axis, int loop_slot, int depth = 0);
  void emit_tma_cluster(const Stmt& f, const PipelinePlan& pp);
  struct ClusterPair {
    std::string mc, rank, peer;  // i1: the pair multicasts; i32: this CTA's rank in the cluster, the peer's
  };
  ClusterPair cluster_agree(const PipelinePlan& pp, const LoopBounds& lb, const std::string& leader);
  void cluster_sync();
  void cluster_arrive(const std::string& bar, const std::string& rank);
  void tma_init(const PipelinePlan& pp, const std::string& leader);
  void tma_drain(const Stmt& f, const PipelinePlan& pp);
  void tma_release(const PipelinePlan& pp, const std::string& leader);
  void tma_body(const Stmt& f, const PipelinePlan& pp, const std::string& cur);
  std::string tma_begin(const Stmt& f, const PipelinePlan& pp);
  // `counters`: the stage and wrap counters' allocas, kept from an earlier run of the ring (a
  // persistent kernel's tiles), instead of new ones starting at 0.
  struct RingCounters {
    std::string stage, wraps;
  };
  // New stage and wrap counters, both 0 (wraps: rounds with `rounds`, else the phase's parity).
  RingCounters ring_counters(const std::string& prefix, bool rounds);
  void tma_loop(const LoopBounds& lb, int S, const std::string& prefix, bool rounds,
                const std::function<void(const std::string&, const std::string&, const std::string&)>& body,
                const RingCounters* counters = nullptr);
  int bar_threads_ = 0;
  bool before_split_ = false;
};

}  // namespace dtsim::nvvm
