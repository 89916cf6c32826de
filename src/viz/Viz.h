// Pictures of a schedule: which program instance stores (or loads) which element of each buffer,
// in which order, one instance's footprint, and the sanitizer's findings, drawn as SVG (or HTML
// with hover tooltips). The accesses are recorded from a real interpreter run through the debugger
// hooks (Interp.h): before each statement, the pointer and mask operands of its loads and stores
// are evaluated in the running instance's frame, so the pictures hold for any kernel.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "interp/Interp.h"

namespace dtsim {

// Per-element flags of a buffer trace.
enum VizFlag : uint8_t {
  kVizConflict = 1,   // stored by two instances, or a read/write conflict the sanitizer reported
  kVizUninit = 2,     // an uninitialized read (sanitizer)
  kVizFpLoad = 4,     // the selected instance loaded it
  kVizFpStore = 8,    // the selected instance stored it
  kVizOob = 32,       // (outside elements only) an active (unmasked) lane pointed here: out of bounds
};

// What one launch did to one buffer.
struct VizBufferTrace {
  bool used = false;
  bool stored = false, loaded = false, fp_touched = false;
  std::vector<int32_t> storer;  // per element: linear pid of the last instance that stored it (-1 none)
  std::vector<int32_t> loader;  // per element: linear pid of the first instance that loaded it (-1 none)
  std::vector<uint8_t> flags;   // VizFlag bits
  std::map<int64_t, uint8_t> outside;      // offsets outside [0, numel) that lanes pointed at: flags
  std::map<int64_t, int32_t> outside_pid;  // ... and the first instance whose unmasked lane did
};

// One access statement of the selected instance (--pid), merged over loop trips.
struct VizFootprintAccess {
  SourceLoc loc;
  bool store = false;
  int buffer = -1;
  Shape tile;
  int64_t times = 0, lanes = 0, masked = 0, oob = 0;
};

struct VizLaunch {
  const Kernel* kernel = nullptr;
  int kernel_index = 0;
  std::array<int64_t, 3> grid{1, 1, 1};
  InstanceOrder order;             // run order
  std::vector<int64_t> position;   // by linear pid: index in `order` (the picture draws every instance)
  std::vector<VizBufferTrace> buffers;        // by Buffers::list index
  std::vector<VizFootprintAccess> footprint;  // --pid
  std::array<int64_t, 6> findings{};          // by Finding::Kind
  int64_t equal_stores = 0;                   // stores of equal values (warnings), by statement run
  std::vector<std::string> finding_lines;     // first line of the first few findings
};

// Records every load and store of a run. Run the interpreter with keep_going and one thread.
class VizRecorder : public DebugHooks {
 public:
  // follow: the footprint is that of the running instance, cleared when the next one begins (the
  // debugger's `viz` command); otherwise that of instance `pid`, if any.
  explicit VizRecorder(std::optional<std::array<int64_t, 3>> pid, bool follow = false) : pid_(pid), follow_(follow) {}
  void on_launch(const Kernel& k, int kernel_index, const std::array<int64_t, 3>& grid,
                 const InstanceOrder& order) override;
  void on_instance_begin(Frame& f) override;
  void before_stmt(Frame& f, const Stmt& s) override;
  void after_loop_iteration(Frame& f, const Stmt& loop) override;
  void on_finding(Frame& f, const Stmt& s, const Finding& finding) override;
  void on_warning(Frame& f, const Stmt& s, const Finding& warning) override;

  std::vector<VizLaunch> launches;

 private:
  void record(Frame& f, const Stmt& s, const ExprP& ptr, const ExprP& mask, bool store);
  std::optional<std::array<int64_t, 3>> pid_;
  bool follow_ = false;
  std::vector<std::pair<size_t, size_t>> touched_;  // follow: (buffer, element) with footprint flags
  std::vector<std::vector<uint8_t>> written_;  // per buffer, over all launches: stored elements
  int32_t me_ = 0;
  bool selected_ = false;
};

struct VizOptions {
  bool html = false;   // wrap in HTML, with a tooltip per cell
  bool loads = false;  // also draw the buffers that are only loaded (coloured by first loader)
  std::optional<std::array<int64_t, 3>> pid;  // draw this instance's footprint instead
  std::string file;                     // shown in the caption
  std::string order;                    // the instance order, in words
  std::vector<std::string> schedule;    // schedule text for the caption (.dt)
  int launch = -1;                      // draw only this launch (index into launches; -1 all)
};

// The picture of a recorded run (`buffers`: their contents after the run, for tooltips).
std::string render_viz(const VizRecorder& rec, const Buffers& buffers, const VizOptions& o);

// Writes `text` to `path` as an output (host/Output.h: a temporary file renamed over a regular file,
// written through a device or FIFO, a symlink followed); false, with the reason in `why`, when it
// cannot.
bool write_viz_file(const std::string& path, const std::string& text, std::string* why = nullptr);

}  // namespace dtsim
