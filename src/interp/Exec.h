// Interpreter internals shared by its source files: storage types of tiles, allocation, broadcast
// loops, the per-launch state (sanitizer shadow memory, findings) and the per-instance context.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "interp/Interp.h"

namespace dtsim::exec {

template <class T> using Arr = xt::xarray<T>;
using XShape = Arr<float>::shape_type;

// Variant index of the storage of an element type (pointers are int64 offsets).
inline size_t storage_of(Scalar s, bool ptr) {
  if (ptr) return 2;
  switch (s) {
    case Scalar::I1: return 0;
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32: return 1;
    case Scalar::I64: return 2;
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: return 3;
    case Scalar::F64: return 4;
  }
  return 0;
}
// Float types kept in float storage and rounded to their precision after every op (f16, bf16, fp8).
inline bool is_half(Scalar s) { return s == Scalar::F16 || s == Scalar::BF16 || is_fp8(s); }
// Types kept in wider storage and narrowed after every op: the is_half floats, and i8/i16 in int32
// storage, wrapped (sign-extended from their width).
inline bool is_narrow(Scalar s) { return is_half(s) || is_narrow_int(s); }

Value alloc(const Type& t);  // contents uninitialized
// `out` made a tile of type `rt`, keeping its storage when it already is one (the *_into forms
// below write into `out` this way, so per-node tiles are reused across instances and loop trips).
// `out` must not be one of the operands.
void prep(Value& out, const Type& rt);
Value scalar_value(Scalar t, double f, int64_t i, bool from_float);
template <class T> T* data(Value& v) { return std::get<Arr<T>>(v.data).data(); }
template <class T> const T* data(const Value& v) { return std::get<Arr<T>>(v.data).data(); }
inline int64_t numel(const Value& v) { return v.type.numel(); }

// Element conversion with IR cast semantics (f16/bf16 rounding is applied by the caller).
template <class D, class S> inline D conv_elem(S x) {
  if constexpr (std::is_same_v<D, uint8_t>) {
    return x != 0;
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    if (x != x) return 0;
    if (x <= static_cast<S>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    if (x >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(x);
  } else {
    return static_cast<D>(x);
  }
}
// conv_elem to type `to` held in storage D, narrowed to `to`: floats rounded (f16, bf16, fp8);
// i8/i16 from integers wrapped, from floats truncated and saturated at their own range.
template <class D, class S> inline D conv_to(S x, Scalar to) {
  if constexpr (std::is_same_v<D, int32_t>) {
    if (is_narrow_int(to)) {
      if constexpr (std::is_floating_point_v<S>) {
        const S hi = to == Scalar::I8 ? S(127) : S(32767), lo = -hi - S(1);
        if (x != x) return 0;
        if (x <= lo) return static_cast<int32_t>(lo);
        if (x >= hi) return static_cast<int32_t>(hi);
        return static_cast<int32_t>(x);
      } else {
        return static_cast<int32_t>(wrap_to(to, static_cast<int64_t>(x)));
      }
    }
  } else if constexpr (std::is_same_v<D, float>) {
    if (is_half(to)) return round_to(to, conv_elem<float>(x));
  }
  return conv_elem<D>(x);
}
// A copy of `v` converted to element type `to` (cast semantics; f16/bf16 rounded).
Value convert(const Value& v, Scalar to);
void convert_into(Value& out, const Value& v, Scalar to);
// `v` itself when it already has element type `to` (and is no pointer), else a converted copy in tmp.
const Value& coerce(const Value& v, Scalar to, Value& tmp);

// ---- broadcasting ----
// Shapes are right-aligned in kMaxRank slots (unused leading slots have extent 1), so one loop serves
// every rank.
constexpr int kSlots = kMaxRank;
using Strides = std::array<int64_t, kSlots>;
struct Dims {
  std::array<int64_t, kSlots> n = filled(1);
  int64_t numel = 1;
  static constexpr std::array<int64_t, kSlots> filled(int64_t v) {
    std::array<int64_t, kSlots> a{};
    for (auto& x : a) x = v;
    return a;
  }
};
Dims dims_of(const Shape& out);
Strides bstrides(const Shape& in, const Shape& out);  // 0 on broadcast axes

// Calls row(o, base, W) for every row (the last axis, W elements) of the output: o is the row's first
// output element (row-major), base[k] the row's first element of operand k, whose stride along the
// row is st[k][kSlots - 1]. The outer axes advance like an odometer.
template <size_t K, class F>
inline void brows(const Dims& d, const std::array<Strides, K>& st, F&& row) {
  if (d.numel == 0) return;
  constexpr int L = kSlots - 1;
  const int64_t W = d.n[L];
  std::array<int64_t, kSlots> ctr{};
  std::array<int64_t, K> base{};
  for (int64_t o = 0;; o += W) {
    row(o, base, W);
    int ax = L - 1;
    for (; ax >= 0; --ax) {
      if (++ctr[ax] < d.n[ax]) {
        for (size_t k = 0; k < K; ++k) base[k] += st[k][ax];
        break;
      }
      for (size_t k = 0; k < K; ++k) base[k] -= st[k][ax] * (d.n[ax] - 1);
      ctr[ax] = 0;
    }
    if (ax < 0) return;
  }
}

// Calls f(o, idx) for every output element o (row-major) with idx[k] the element of operand k.
template <size_t K, class F>
inline void bloop(const Dims& d, const std::array<Strides, K>& st, F&& f) {
  brows<K>(d, st, [&](int64_t o, const std::array<int64_t, K>& base, int64_t W) {
    for (int64_t j = 0; j < W; ++j) {
      std::array<int64_t, K> idx;
      for (size_t k = 0; k < K; ++k) idx[k] = base[k] + j * st[k][kSlots - 1];
      f(o + j, idx);
    }
  });
}

// Floats are summed as a tree, as the GPU reduces: each half of the rows folded onto the other (row
// k plus row k + n/2, then again), so the rounding error grows with log n rather than n. `buf` holds
// n rows of `inner` values (each row's values summed independently); row 0 ends with the sums.
template <class A> inline void tree_fold(A* buf, int64_t n, int64_t inner) {
  for (int64_t m = n; m > 1;) {
    const int64_t h = (m + 1) / 2;
    const A* hi = buf + h * inner;
    for (int64_t k = 0; k < (m - h) * inner; ++k) buf[k] += hi[k];
    m = h;
  }
}

// ---- tile operations (Ops.cpp); operands already have the compute type ----
Value unary_op(UnOp op, const Value& x, const Type& rt);
Value binary_op(BinOp op, const Value& a, const Value& b, const Type& rt, SourceLoc loc);
Value where_op(const Value& c, const Value& a, const Value& b, const Type& rt);
Value broadcast_op(const Value& x, const Shape& s);
Value trans_op(const Value& x, const std::vector<int64_t>& order);  // out dim i = x dim order[i]
Value gather_op(const Value& src, const Value& index, int axis, const Type& rt);  // tl.gather, indices clamped
Value histogram_op(const Value& x, const Value* mask, int64_t bins);  // tl.histogram: i32[bins], one pass over x
Value reduce_op(RedOp op, const Value& x, int axis, const Type& rt);
Value bitcast_op(const Value& x, Scalar to);  // the same bits as another type of the same width
Value scan_op(ScanOp op, const Value& x, int axis, bool reverse, const Type& rt);
Value dot_op(const Value& a, const Value& b, const Value* acc, const Type& rt, bool tf32 = false);
void dot_into(Value& out, const Value& a, const Value& b, const Value* acc, const Type& rt, bool tf32 = false);  // out: not an operand
// f32 -> tf32 as PTX cvt.rna.tf32.f32 (IR.h): low 13 bits cleared, to nearest, ties away from zero.
float round_tf32(float x);
Value full_op(const Value& v, const Type& rt);
void unary_into(Value& out, UnOp op, const Value& x, const Type& rt);
void binary_into(Value& out, BinOp op, const Value& a, const Value& b, const Type& rt, SourceLoc loc);
void where_into(Value& out, const Value& c, const Value& a, const Value& b, const Type& rt);
// ---- pointer tiles ----
// A pointer tile's lanes are element offsets into its buffer (Value::buffer). A null address
// (int_to_ptr of 0) is the offset kNullOffset, far out of every buffer, so that an unmasked access
// through it is out of bounds and pointer arithmetic on it cannot wrap into a buffer; an address in
// no buffer is kNullOffset + address / element size.
constexpr int64_t kNullOffset = INT64_MIN / 2;
constexpr int64_t kNullSpan = int64_t(1) << 50;
// Whether a pointer offset came from address 0 (int_to_ptr), moved by pointer arithmetic or not.
inline bool null_offset(int64_t off) { return off > kNullOffset - kNullSpan && off < kNullOffset + kNullSpan; }
// A pointer tile whose lanes point into several buffers (a table of addresses of several tensors,
// a where() between two arrays lane by lane) has buffer kMultiBuffer, and each lane holds its
// buffer and offset packed: buffer * 2^kPackShift + offset. Pointer arithmetic on packed lanes is
// the same addition. Lanes from null or stray addresses are "buffer" -1 with the address / element
// size as offset (>= 0); a negative offset there, or an offset a buffer's lane cannot hold (2^46
// elements or more away), is a lane out of every buffer. The accesses split such a tile into one
// access per buffer (Memory.cpp).
constexpr int kMultiBuffer = -2;
constexpr int kPackShift = 48;
constexpr int64_t kPackLimit = int64_t(1) << 46;
inline int64_t pack_lane(int b, int64_t off) {
  return static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(b)) << kPackShift) + off;
}
inline int packed_buffer(int64_t v) { return static_cast<int>((v + (int64_t(1) << (kPackShift - 1))) >> kPackShift); }
inline int64_t packed_offset(int64_t v) { return v - pack_lane(packed_buffer(v), 0); }
// Lane `off` of a pointer tile into buffer `b` (b >= 0), packed.
inline int64_t pack_offset(int b, int64_t off) {
  if (null_offset(off)) return pack_lane(-1, off - kNullOffset >= 0 && off - kNullOffset < kPackLimit ? off - kNullOffset : -1);
  return off > -kPackLimit && off < kPackLimit ? pack_lane(b, off) : pack_lane(-1, -1);
}
// `p` (a pointer tile) with packed lanes (a copy when p is in one buffer).
Value packed_pointers(const Value& p);
// A pointer where(): one buffer when both sides have it, or when the condition picks one side for
// every lane (`tl.where(pid < n, A1, A2)`); otherwise a tile with packed lanes.
void where_ptr_into(Value& out, const Value& c, const Value& a, const Value& b, const Type& rt);
void reduce_into(Value& out, RedOp op, const Value& x, int axis, const Type& rt);
void full_into(Value& out, const Value& v, const Type& rt);
Value arange_op(int64_t lo, int64_t hi);
std::array<int64_t, 2> swizzle2d(int64_t i, int64_t j, int64_t ni, int64_t nj, int64_t group, SourceLoc loc);

// ---- the run and its sanitizer state ----
struct StopRun {};  // unwinds an instance when the run stops at a finding

// Conflict tracking of one buffer during one launch (instance linear ids; -1 = none). Per element:
// the first instance that stored it (and its statement), and, when the buffer is also loaded, the
// first two instances that loaded it. A buffer that is only stored starts in range mode: its range
// stores record spans of elements (first writer and statement) in interval maps instead, and the
// per-element arrays are built from the spans (dense()) at the first access that needs them, so
// they hold exactly what per-element tracking would hold at that point.
// The interval maps are sharded by element index (2^shift elements per shard, each with its own
// lock), so that threads storing into different parts of the buffer do not wait for one another;
// a span that crosses shards is kept as one piece per shard. Locks are always taken in ascending
// shard order (and only when instances run on several threads); the switch to per-element state
// takes them all.
struct ConflictMap {
  std::vector<int32_t> writer, wstmt, reader1, r1stmt, reader2, r2stmt;
  struct Span {
    int64_t lo, hi;
    int32_t inst, stmt;
  };
  struct Shard {
    std::mutex mu;
    std::vector<Span> spans;  // range mode: disjoint spans [lo, hi) by first writer, sorted
  };
  std::unique_ptr<Shard[]> shards;
  int64_t nshards = 0;
  int shift = 0;
  // The buffer's shadow "written" bytes (null: all defined). In range mode nothing reads them during
  // the launch (the buffer is not loaded), so range stores leave them to the switch to per-element
  // state or to the end of the launch (flush_init), which set them from the spans.
  uint8_t* init = nullptr;
  int64_t n = 0;
  bool tracked = false;
  std::atomic<bool> is_dense{false};      // the per-element arrays are the state
  ConflictMap() = default;
  ConflictMap(ConflictMap&& o) noexcept { *this = std::move(o); }
  ConflictMap& operator=(ConflictMap&& o) noexcept;
  void reset(int64_t n, bool readers);  // readers: also track loads (the buffer is loaded and stored)
  // Switches to per-element state (once; thread-safe). Every access but a range store calls it.
  void dense() {
    if (!is_dense.load(std::memory_order_acquire)) densify();
  }
  void densify();
  void flush_init();  // end of the launch: the shadow bytes of the spans still in range mode
};

// Instances ordered before another by synchronization, each with an epoch: instance i's accesses
// made before its release number `ep` (Ctx::epoch counts them) are ordered. Held as sorted,
// disjoint ranges [lo, hi) of linear instance ids with one epoch each: instances run in order and
// do the same releases, so the sets that synchronization builds are mostly a range or a few.
struct IdRanges {
  struct R {
    int32_t lo, hi, ep;
  };
  std::vector<R> r;
  bool empty() const { return r.empty(); }
  int32_t epoch_of(int32_t id) const;  // -1: not in the set
  void add(int32_t lo, int32_t hi, int32_t ep);  // an id already in the set keeps the larger epoch
  void add(const IdRanges& o) {
    for (const R& x : o.r) add(x.lo, x.hi, x.ep);
  }
};

// Synchronization through atomics (the sanitizer's happens-before). Every Triton atomic is a
// read-modify-write, so each one continues the release sequence of the word it updates: an atomic
// with release semantics (acq_rel, release) adds its instance (at its epoch), and every instance
// ordered before it, to the word's set; one with acquire semantics (acq_rel, acquire) orders the
// word's whole set before the rest of its instance (Ctx::after). Kept for scalar atomics (flags,
// counters, locks), per (buffer, element), for one launch.
struct SyncWords {
  std::mutex mu;
  std::map<std::pair<int, int64_t>, IdRanges> words;
};

// The statement id kept with each tracked access (ConflictMap's wstmt, r1stmt, r2stmt, spans)
// carries the epoch of the access: the instance's count of releases before it (bits 20-30,
// saturating), and the statement in bits 0-19. Epoch 0 leaves the id as it is (-1: none).
constexpr int32_t kStmtBits = 20, kNoStmt = (1 << kStmtBits) - 1, kMaxEpoch = (1 << 11) - 1;
inline int32_t access_stamp(int32_t stmt, int32_t epoch) {
  if (epoch == 0) return stmt;
  return (std::min(epoch, kMaxEpoch) << kStmtBits) | (stmt < 0 ? kNoStmt : stmt);
}
inline int32_t stamp_stmt(int32_t st) {
  if (st < 0) return -1;
  int32_t f = st & kNoStmt;
  return f == kNoStmt ? -1 : f;
}
inline int32_t stamp_epoch(int32_t st) { return st < 0 ? 0 : st >> kStmtBits; }

// Whether sanitizer level `s` tracks conflicting instances (and so synchronization between them).
inline bool tracks_conflicts(Sanitize s) { return s == Sanitize::All || s == Sanitize::Conflicts; }

struct ScalarProgram;

struct RunState {
  Buffers* buffers = nullptr;
  const Bindings* bindings = nullptr;
  const InterpOptions* opt = nullptr;
  RunReport* report = nullptr;
  std::mutex mu;                           // findings
  std::atomic<bool> stop{false};
  std::vector<std::vector<uint8_t>> init;  // per buffer: shadow "written" bytes (empty = all defined)
  std::vector<ConflictMap> conflicts;      // per buffer (empty = not tracked in this launch)
  SyncWords sync;                          // scalar atomics' release sets (conflicts tracked)
  // Plain stores that found an element another instance had stored with the same bits (Memory.cpp,
  // warn_equal_stores): one warning per (statement pair, buffer) in the run, its count kept here and
  // written into the warning's message (`head` + count + `tail`). Guarded by `mu`.
  struct EqualStores {
    const Stmt* a = nullptr;  // the pair, in the order first seen: this store's statement,
    const Stmt* b = nullptr;  // the other instance's
    std::string buffer;
    size_t warning = 0;  // its index in report->warnings
    int64_t count = 0;   // element stores
    std::string head, tail;
  };
  std::vector<EqualStores> equal_stores;
  // current launch
  const Kernel* kernel = nullptr;
  std::array<int64_t, 3> grid{1, 1, 1};
  bool parallel = false;
  std::shared_ptr<const ScalarProgram> sp;  // fast mode: the compiled scalar statements
  // Per buffer, for this launch: element storage, size, and the sanitizer state the checks use
  // (null where not checked), so that a scalar access needs no lookups.
  struct BufInfo {
    uint8_t* data = nullptr;
    int64_t numel = 0;
    Scalar dtype = Scalar::F32;
    uint8_t* init = nullptr;
    ConflictMap* cm = nullptr;
  };
  std::vector<BufInfo> binfo;
};

// The context of one running instance.
struct Ctx {
  RunState* rs = nullptr;   // null when the debugger evaluates an expression (faults throw)
  Frame* f = nullptr;
  const Stmt* stmt = nullptr;
  std::string* print_buf = nullptr;  // parallel mode: this instance's prints
  int32_t me = 0;                    // linear pid
  bool fast = true;                  // unboxed scalars and fused tile paths (InterpOptions::fast)
  const ScalarProgram* sp = nullptr; // compiled scalar statements of this launch (fast mode)
  DebugHooks* hooks = nullptr;       // rs->opt->hooks
  // Unboxed registers of the frame's scalar slots (fast mode): rvalid[s] says regs[s] holds the
  // value of slots[s]. Every write of a slot Value outside the scalar form clears it.
  // rvalid[s]: 0 = slots[s] only; 1 = regs[s] and slots[s] agree; 2 = regs[s] is newer (slots[s] is
  // written on the next read of the Value: flush()). With debug hooks, Values are always written.
  // Tile slots (execution form, no debugger): 3 = slots[s] is a tile described by regs[s].r.i64, not
  // made yet (lazy_tile()): an integer tile of wrap(first + o) (first = the register), or an i1
  // tile of that many leading ones; flush() makes it and sets 4 (made; the register still says
  // what it is).
  struct Sv* regs = nullptr;
  uint8_t* rvalid = nullptr;
  const Type** rtype = nullptr;  // the type of regs[s]
  Value* tcache = nullptr;  // per-thread tiles of the tile-form nodes (2 per TNode)
  // Per slot (execution form, no debugger): a load left in its buffer (ScalarProgram::view_slot):
  // the slot's elements are `views[s].p` in buffer `views[s].buffer`, not slots[s]; p null: none.
  struct View {
    const void* p = nullptr;
    int buffer = -1;
  };
  View* views = nullptr;
  // Execution form, no debugger: pointer tiles held as rows plus columns (RowPtr), per
  // ScalarProgram::nrp; null under the debugger (every pointer tile is then made).
  struct RowPtr* rps = nullptr;
  // Statements executed by this thread (exec_block adds a block's statements when it starts it),
  // and the count at which step_poll() must look at the RunControl limits (INT64_MAX without one);
  // step_base: the count when this instance began.
  int64_t steps = 0, step_check = INT64_MAX, step_base = 0;
  // Lock words (buffer, element) this instance holds: taken by an atomic_cas that found the word at
  // its `cmp` value, given back by an atomic_xchg on it. While one is held, the instance's loads and
  // stores are ordered by the lock and left out of conflict tracking.
  std::vector<std::pair<int, int64_t>> locks;
  // Instances whose accesses (up to an epoch) are ordered before this instance's from here on:
  // those whose release this instance acquired through an atomic on one word (SyncWords); their
  // loads and stores are no conflict with this instance's. epoch: this instance's releases so far.
  IdRanges after;
  int32_t epoch = 0;
  // Elements this instance stored with the bits another instance's plain store had left there (a
  // store of equal values: a warning, not made), as ranges [lo, hi) per buffer. Its later loads of
  // them read those bits in every order the stores can land in (another store of other bits is a
  // write-write finding of its own), so they are no read/write conflict. At most kMaxCoWrites ranges
  // are kept; past that, loads are checked as any other (findings, never fewer).
  struct CoWrite {
    int buffer;
    int64_t lo, hi;
  };
  static constexpr size_t kMaxCoWrites = 4096;
  std::vector<CoWrite> cowrites;
  void add_cowrite(int buffer, int64_t off) {
    if (!cowrites.empty() && cowrites.back().buffer == buffer && cowrites.back().hi == off) {
      ++cowrites.back().hi;
    } else if (!cowrote(buffer, off) && cowrites.size() < kMaxCoWrites) {
      cowrites.push_back(CoWrite{buffer, off, off + 1});
    }
  }
  bool cowrote(int buffer, int64_t off) const {
    for (auto it = cowrites.rbegin(); it != cowrites.rend(); ++it)
      if (it->buffer == buffer && off >= it->lo && off < it->hi) return true;
    return false;
  }
  int32_t stamp() const { return access_stamp(stmt ? stmt->id : -1, epoch); }  // of an access now
  // While a combine function (reduce / associative_scan with Expr::fn) runs: its two arguments.
  std::vector<const Value*> combine_args;  // while a combine function runs: its arguments (CombineArg i)
  void invalidate(int slot) {
    if (rvalid) rvalid[static_cast<size_t>(slot)] = 0;
  }
  void flush(int slot);  // writes regs[slot] into slots[slot] when it is newer
  void flush_all();      // every newer scalar register (lazy tiles are left: slots are assigned before they are read)
};

// A 2-d pointer tile [R, C] into `buffer` held as the sum of a column of R values and a row of C
// values: element [i, j] is rows[i] + cols[j] (wrapping i64, as the tile path's additions make it).
// `consec`: cols[j] == cols[0] + j, so every row is a range starting at rows[i] + cols[0] (bases).
struct RowPtr {
  std::vector<int64_t> rows, cols, bases;
  int buffer = -1;
  bool consec = false;
  void set_consec();  // consec and bases from rows and cols
  void add(BinOp op, int64_t s);  // the tile's every element +/- s (the rows)
  void make(Value& out, const Type& t) const;  // the pointer tile itself, of type t
};

// Memory access with every sanitizer check (Memory.cpp).
Value load_op(Ctx& c, const Expr& e, const Value& ptr, const Value* mask, const Value* other);
void load_into(Value& out, Ctx& c, const Expr& e, const Value& ptr, const Value* mask, const Value* other);
// Range forms (execution form): the load/store of the consecutive elements base.. of buffer `bi`
// as a plain copy. They return false, having changed nothing, unless the range is in bounds and the
// sanitizer needs no per-lane work (so only where the lane-by-lane path would report nothing).
// `prefix` >= 0 (here and below): the mask, then null, is that many leading ones of the tile's lanes.
bool load_range(Value& out, Ctx& c, const Expr& e, int bi, int64_t base, const Value* mask, const Value* other, int64_t prefix = -1);
// The same load left in the buffer: the address of its first element when load_range would copy
// every lane from memory unconverted (all lanes active, the buffer of the load's element type, not
// f16/bf16) after the same checks; null, having changed nothing, otherwise.
const void* load_range_view(Ctx& c, const Expr& e, int bi, int64_t base, const Value* mask, const Value* other, int64_t prefix = -1);
bool store_range(Ctx& c, int bi, int64_t base, int64_t total, const Value& val, const Value* mask, int64_t prefix = -1);
// The load / store through a pointer tile held as rows (RowPtr with consec), as load_into and
// store_op would make it through the whole-tile or row-by-row range path. False when those paths
// would not take it (the caller then makes the pointer tile and calls load_into / store_op);
// a false store may have stored (and claimed) leading rows, as store_op's row path does.
// `om` (mask then null): the mask is rows[i] & cols[j] (an i1 column of R and row of C values); the
// whole-tile path is then not tried (the row path takes every tile it would).
struct OuterMask {
  const uint8_t* rows = nullptr;
  const uint8_t* cols = nullptr;
};
bool load_rowptr(Value& out, Ctx& c, const Expr& e, const RowPtr& p, const Value* mask, const Value* other, const OuterMask* om = nullptr);
bool store_rowptr(Ctx& c, const RowPtr& p, const Value& val, const Value* mask);
// A range store whose value (element type `elem`, `total` lanes) is not made yet: when the store
// is a range store as above with the buffer of type `elem` (not f16/bf16) and a prefix mask (or
// none), claims the active lanes and calls produce(ctx, dst, live) to write the first `live` lanes
// straight into the buffer. False, having changed nothing, otherwise.
bool store_range_direct(Ctx& c, int bi, int64_t base, int64_t total, Scalar elem, const Value* mask, void (*produce)(void*, void*, int64_t), void* ctx,
                        int64_t prefix = -1);
void store_op(Ctx& c, const Value& ptr, const Value& val, const Value* mask);
// The Atomic statement `s` on every active lane: ptr, then val and mask (Cas: cmp and val); returns
// the old values (element type of the buffer; masked-off and faulting lanes 0). A cas that takes a
// lock word and the xchg that gives it back mark the instance's critical section (Ctx::locks).
Value atomic_op(Ctx& c, const Stmt& s, const Value& ptr, const Value& a1, const Value* a2);
// The same through a pointer tile held as rows plus columns (of type `ptype`): no pointer tile is
// made where every operand has the pointer's shape (or broadcasts to it), else it is made.
Value atomic_rowptr(Ctx& c, const Stmt& s, const RowPtr& p, const Type& ptype, const Value& a1, const Value* a2);
// Records a finding: counts it, keeps its message, calls the debugger hook; throws StopRun unless
// keep_going. With no run state, throws RuntimeFault.
void report_finding(Ctx& c, Finding f);
std::string pid_str(const Ctx& c, const std::array<int64_t, 3>& p);  // "[1, 0]" (host/Buffers.h pid_text)
std::array<int64_t, 3> unlinear(int64_t lin, const std::array<int64_t, 3>& grid);

// Run control (RunControl.cpp): called when Ctx::steps reaches step_check. Throws RuntimeFault
// past --max-steps or --timeout (naming the innermost loop); else sets the next step_check.
void step_poll(Ctx& c, const Stmt& s);
// The first step_check of an instance that begins at c.steps.
int64_t first_step_check(const Ctx& c, int64_t next_poll);

// Evaluation (Eval.cpp).
const Value& eval_expr(Ctx& c, const Expr& e, Value& tmp);
// A reduce / associative_scan with a combine function (Expr::fn) over x: each step evaluates the
// function on the value so far and the next element, in index order.
Value combine_op(Ctx& c, const Expr& e, const Value& x);
// Reduce / Scan of several operands (Expr::fns): the operands evaluated, and component e.part.
std::vector<Value> operands(Ctx& c, const Expr& e);
Value combine_n_op(Ctx& c, const Expr& e, const std::vector<Value>& xs);
enum class Flow { Next, Return };
Flow exec_block(Ctx& c, const std::vector<StmtP>& body);

}  // namespace dtsim::exec

namespace dtsim::exec {
// Pointer arithmetic on offsets (Ops.cpp): p + off / p - off (off is i64), and == / != of two pointers.
// int_to_ptr / ptr_to_int (IR.h, Addresses): an address resolves to the run's buffer that holds it.
Value int_to_ptr_op(Ctx& c, const Expr& e, const Value& addr);
Value ptr_to_int_op(Ctx& c, const Value& p);
Value ptr_arith(BinOp op, const Value& p, const Value& off, const Type& rt, bool ptr_first);
Value ptr_compare(BinOp op, const Value& a, const Value& b, const Type& rt);
void ptr_arith_into(Value& out, BinOp op, const Value& p, const Value& off, const Type& rt, bool ptr_first);
void ptr_compare_into(Value& out, BinOp op, const Value& a, const Value& b, const Type& rt);
}  // namespace dtsim::exec
