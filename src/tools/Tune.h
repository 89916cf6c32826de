// `dtsim tune`: the result of a schedule search and what is written from it (text, CSV, JSON, the
// SVG plot), and the interface through which candidates are timed (dtsim's CUDA backend or the
// emitted Triton), so that the reports and the search can be exercised without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

// One schedule of the search.
struct TuneCandidate {
  uint64_t index = 0;     // its number in the schedule space
  std::string schedule;   // the schedule calls as .dt text, one per line
  // "timed" (passed the check and timed), "checked" (passed the check; not timed), "pruned" (a tile
  // too large to keep in registers: neither lowered nor checked), "illegal" (the
  // lowering rejects it), "check-failed" (wrong result or a sanitizer finding on small sizes),
  // "no-triton-form" (--backend=triton: the emitter cannot express it), "gpu-failed" (compile,
  // launch or fault on the GPU)
  std::string status;
  std::string reason;          // why, for every status but timed/checked
  std::optional<double> ms;    // median time at the requested sizes
  std::string phase;           // "enumerated", "random" or "refined"
};

// A timed implementation drawn as a horizontal line on the plot (the file's own schedule, torch...).
struct TuneReference {
  std::string name;
  double ms = 0;
};

struct TuneResult {
  std::string file, backend, device, sizes;  // sizes: "x=128 y=65536"
  uint64_t space = 0;
  size_t configs = 0;
  std::string mode;                 // "exhaustive" or "sampled"
  std::string timing = "done";      // or "skipped: <why>"
  double seconds = 0;               // wall time of the search
  double check_seconds = 0;         // of which: drawing, lowering and checking on the interpreter
  double timing_seconds = 0;        // of which: timing on the GPU (compiling included)
  double compile_wait_seconds = 0;  // of the timing: waiting for candidates to be compiled
  int64_t bytes = 0;                // buffer bytes moved by one run (each buffer once)
  double flops = 0;                 // dot FLOPs of one run (0: no dot)
  int64_t ptx_cache_hits = 0, ptx_cache_misses = 0;
  std::vector<TuneCandidate> candidates;  // in evaluation order
  std::vector<TuneReference> references;

  const TuneCandidate* best() const;        // the fastest timed candidate, or nullptr
  size_t count(const std::string& status) const;
  size_t within(double fraction) const;     // timed candidates within best * (1 + fraction)
  // Reasons of rejected candidates with their counts, most frequent first.
  std::vector<std::pair<std::string, size_t>> reasons() const;
  double per_minute() const;                // candidates evaluated per minute of wall time
  size_t lowered() const;                   // candidates lowered legally (checked, maybe timed)
  double lowered_per_minute() const;
};

// GB/s of buffer data and dot TFLOP/s of a run of `ms` milliseconds (NaN when not applicable).
double tune_gbps(const TuneResult& r, double ms);
double tune_tflops(const TuneResult& r, double ms);

// The text report (what `dtsim tune` prints at the end).
std::string tune_text(const TuneResult& r);
// One line per candidate: index,status,phase,ms,gbps,tflops,reason,schedule (RFC 4180 quoting; the
// schedule's calls joined by spaces).
std::string tune_csv(const TuneResult& r);
// One JSON object: the summary and every candidate.
std::string tune_json(const TuneResult& r);
// Every timed candidate's time, sorted, as an SVG line plot, with a horizontal line per reference.
// Needs at least one timed candidate (UserError otherwise).
std::string tune_svg(const TuneResult& r);

// One candidate to time: its lowered module at the requested sizes, and (for Triton) the emitted module.
struct TuneJob {
  size_t id = 0;  // the caller's number for it
  const Module* module = nullptr;
  const Bindings* bindings = nullptr;
  std::string triton;                 // emitted Triton source (--backend=triton)
  std::optional<double> ms;           // out: median milliseconds
  std::string error;                  // out: why it could not be timed
};

// Times candidates. available() says whether it can (a driver, a GPU, python3 with torch and triton).
class TuneTimer {
 public:
  virtual ~TuneTimer() = default;
  virtual std::string name() const = 0;
  virtual bool available(std::string* why) = 0;
  virtual std::string device() { return ""; }
  // Times every job; `done` is called after each with the job's position.
  virtual void time(std::vector<TuneJob>& jobs, const std::function<void(size_t)>& done) = 0;
  // Seconds the GPU waited for candidates to be compiled, over all calls of time() (0: not measured).
  virtual double compile_wait_seconds() const { return 0; }
};

// dtsim's CUDA backend with bench's protocol (Timing.h), PTX through the cache in `ptx_cache_dir`
// ("" none), inputs of `seed`; nullptr when dtsim was built without the CUDA backend.
std::unique_ptr<TuneTimer> make_cuda_timer(const std::string& arch, const std::string& ptx_cache_dir, uint64_t seed);
// The emitted Triton modules (TuneJob::triton), each timed by its own bench() (do_bench, median) on
// device data of `seed`, one python3 call per time().
std::unique_ptr<TuneTimer> make_triton_timer(uint64_t seed);

// The first line of a (located) message without its location, whole numbers folded to N: a reason
// that groups ("processed in tiles of N").
std::string tune_reason(const std::string& message);

// `dtsim tune` (words: what follows "tune") with its candidates timed by `timer` instead of the
// backend's (the tests time through a model of the GPU); nullptr: the backend's timer.
int tune_command_with_timer(const std::vector<std::string>& words, TuneTimer* timer, std::ostream& out, std::ostream& err);

}  // namespace dtsim
