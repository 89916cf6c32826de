// The CPU interpreter: runs every program instance of a launch with tile semantics (IR.h), checks
// every memory access (sanitizer), and exposes hooks for the debugger.
#pragma once

#include <array>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <xtensor/xarray.hpp>

#include "host/Buffers.h"
#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

// ---- runtime values ----
// Storage per element type: i1 -> uint8_t (0/1); i32; i64; f16/bf16/f32 -> float (f16/bf16 values are
// always exactly representable in their type); f64 -> double. Pointers: int64 element offsets into
// the buffer `buffer`. Scalars are 0-d arrays.
using TileData = std::variant<xt::xarray<uint8_t>, xt::xarray<int32_t>, xt::xarray<int64_t>, xt::xarray<float>,
                              xt::xarray<double>>;

struct Value {
  Type type;
  TileData data;
  int buffer = -1;  // pointers: index into Buffers::list
  bool defined() const;
  double get(int64_t flat) const;  // element `flat` (row-major) as double (pointers: the offset)
};

// Human-readable rendering, as numpy prints arrays: scalars as numbers; tiles multi-line (a row per
// line, a blank line between the matrices of a 3-D tile), columns right-aligned to one width, floats
// with one shared precision (the fewest fractional digits, at most 8, that show every element
// exactly) so that decimal points align, the exponent form when magnitudes call for it (largest
// >= 1e8, smallest nonzero < 1e-4, or a ratio > 1000), integers without decimals, booleans as
// True/False; tiles over 1000 elements show 3 items at each end of every axis around "...", rows
// wrap at 75 columns. `mask` (optional, same shape) shows masked-off lanes as "--" (and leaves them
// out of the precision). Lines after the first are indented by `indent` columns (the caller's
// "name = " prefix).
std::string format_value(const Value& v, const Value* mask = nullptr, int indent = 0);
// Element i (row-major) of v, as format_value writes one.
std::string format_element(const Value& v, int64_t i);
// numpy's np.set_printoptions settings that format_value follows, process-wide: `precision` (at most
// this many fractional digits, floatmode 'maxprec'), `linewidth` (lines, the caller's prefix
// included, wrap beyond it), `threshold` (tiles with more elements show `edgeitems` items at each
// end of every axis). The Python package copies numpy's current ones before each launch; the REPL's
// `set precision|linewidth|threshold|edgeitems N` changes them.
struct PrintOptions {
  int precision = 8;
  int linewidth = 75;
  int64_t threshold = 1000;
  int edgeitems = 3;
};
PrintOptions& print_options();
// One line: "f32[128, 128] min=-0.999 max=0.998 mean=0.00121" (6 significant digits each; integers
// exact; "(has nan)"; with a mask, only active lanes, and how many there are).
std::string format_summary(const Value& v, const Value* mask = nullptr);
// format_value when it fits on one line of at most `width` characters, else format_summary.
std::string format_one_line(const Value& v, size_t width = 75);

// ---- options and results ----
// Conflicts = bounds + conflicting instances (what the CUDA backend can check besides bounds).
enum class Sanitize { None, Bounds, Conflicts, All };
enum class Order { Sequential, Reverse, Shuffle };

struct InterpOptions {
  int threads = 1;                    // >1: OpenMP over instances (bit-identical to sequential)
  Sanitize sanitize = Sanitize::All;  // All = bounds + uninitialized reads + conflicting instances
  bool keep_going = false;            // count findings and continue (faulting lanes touch no memory)
  Order order = Order::Sequential;
  uint64_t shuffle_seed = 0;
  std::ostream* out = nullptr;        // print() output (nullptr = std::cout)
  class DebugHooks* hooks = nullptr;  // debugger; forces one thread
  struct RunControl* control = nullptr;  // --max-steps, --timeout, Ctrl-C, progress (RunControl.h)
  // Execution form: true = scalars unboxed and elementwise statements fused (the default); false =
  // every op on materialized tiles. Results and findings are identical; false exists to check that.
  bool fast = true;
  class RunMemory* memory = nullptr;  // state kept across runs of the same module (RunMemory below)
};

// What a caller that runs one module again and again (the Python package's compiled launch) keeps
// between runs, so that a repeated launch neither rebuilds nor allocates (and faults in) it again:
// per kernel, the execution form (ScalarProgram) and the one-thread frame's tiles and registers;
// per buffer, the conflict maps' shards and arrays (their capacity; their state is reset every
// launch). Nothing in it carries values from one run to the next: every slot is assigned before it
// is read, and the maps are reset. One run at a time may use it; it serves the module it was first
// used with, and is emptied when a run passes another module or another execution form.
class RunMemory {
 public:
  RunMemory();
  ~RunMemory();
  RunMemory(const RunMemory&) = delete;
  RunMemory& operator=(const RunMemory&) = delete;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

// One sanitizer or runtime finding. `message` is complete and printable (file:line:col: error: ...,
// source line and caret, then the details: buffer, shape, index, pid, lanes).
struct Finding {
  enum Kind { OutOfBounds, Uninitialized, WriteWrite, ReadWrite, AssertFailed, Fault } kind;
  std::string message;
  SourceLoc loc;
  std::array<int64_t, 3> pid{};
  std::string buffer;
  int64_t flat_index = -1;
  int64_t lanes = 0;  // how many lanes of the access were affected
};

struct RunReport {
  std::vector<Finding> findings;  // in detection order (at most a bounded number kept; see count)
  int64_t findings_count = 0;
  // Accesses past a buffer's end inside its slack (Buffer::slack): they ran; one warning per
  // statement and buffer (kind OutOfBounds, message a warning), in detection order, at most 20.
  std::vector<Finding> warnings;
  int64_t instances = 0;          // program instances run, over all kernels
  bool ok() const { return findings_count == 0; }
};

// The instance order of a grid: sequential (pid0 fastest), reverse, or a seeded shuffle. Generated,
// not listed: the i-th instance and the position of a pid are computed in O(1) memory, so a grid of
// 2^31 instances costs nothing to order. A shuffle is a keyed permutation of [0, N) (a 4-round
// Feistel network on the smallest even bit width that covers N, walked until it lands inside
// [0, N)): reproducible from the seed, a few hash rounds per instance.
class InstanceOrder {
 public:
  InstanceOrder() = default;
  InstanceOrder(const std::array<int64_t, 3>& grid, Order o, uint64_t seed);
  int64_t size() const { return n_; }
  Order order() const { return order_; }
  const std::array<int64_t, 3>& grid() const { return grid_; }
  int64_t linear_at(int64_t i) const;                       // the linear pid run i-th (0 <= i < size())
  std::array<int64_t, 3> operator[](int64_t i) const;       // the pid run i-th
  int64_t position(const std::array<int64_t, 3>& pid) const;  // where pid runs; -1 outside the grid
  std::string name() const;  // "sequential", "reverse" or "shuffled" ("sequential" for one instance)

 private:
  uint64_t permute(uint64_t x) const;
  uint64_t unpermute(uint64_t x) const;
  std::array<int64_t, 3> grid_{1, 1, 1};
  int64_t n_ = 1;
  Order order_ = Order::Sequential;
  int half_ = 0;  // bits of each Feistel half
  std::array<uint64_t, 4> keys_{};
};

// ---- debugger interface ----
// The state of one running program instance, as the debugger sees it.
struct Frame {
  const Kernel* kernel = nullptr;
  int kernel_index = 0;
  std::array<int64_t, 3> pid{};
  std::array<int64_t, 3> grid{};
  int64_t linear_pid = 0;   // pid0 + grid0 * (pid1 + grid1 * pid2)
  int64_t order_index = 0;  // position of this instance in the run order
  std::vector<Value> slots; // by Kernel slot; undefined until assigned
  Buffers* buffers = nullptr;
  const Bindings* bindings = nullptr;
  std::vector<const Stmt*> loop_stack;  // enclosing For and While statements, outermost first

  // Evaluates a verified expression (see verify_expr) in this frame. Throws RuntimeFault.
  Value eval(const ExprP& e) const;
  // The slot of the innermost defined variable named `name`, or -1.
  int lookup(const std::string& name) const;
};

// The interpreter calls these, in this order, from the (single) running thread. Implementations
// may block (the REPL runs inside before_stmt) and may throw to abort the run.
class DebugHooks {
 public:
  virtual ~DebugHooks() = default;
  virtual void on_launch(const Kernel& k, int kernel_index, const std::array<int64_t, 3>& grid,
                         const InstanceOrder& order) {}
  virtual void on_instance_begin(Frame& f) {}
  virtual void before_stmt(Frame& f, const Stmt& s) {}
  virtual void after_loop_iteration(Frame& f, const Stmt& loop) {}
  virtual void on_instance_end(Frame& f) {}
  virtual void on_finding(Frame& f, const Stmt& s, const Finding& finding) {}  // before stopping/continuing
  // A store of equal values (a warning, RunReport::warnings): this store's instance, first element
  // and element count, the warning's message. The run goes on.
  virtual void on_warning(Frame& f, const Stmt& s, const Finding& warning) {}
  // True when the hooks handle Ctrl-C themselves (the REPL stops at the next statement); else
  // the interpreter stops the run at the next instance boundary, as without hooks.
  virtual bool handles_interrupt() const { return false; }
};

// Runs every kernel of a verified module, one launch each, in order, on `buffers`.
RunReport run_module(const Module& m, const Bindings& b, Buffers& buffers, const InterpOptions& opt);

// The launch grid of a kernel under `b` (each axis >= 1; UserError when an axis is <= 0).
std::array<int64_t, 3> launch_grid(const Kernel& k, const Bindings& b);

}  // namespace dtsim
