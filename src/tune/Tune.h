// The schedule search of `dtsim tune` (docs/tune.md): its options, the search itself
// (run_tune_search: draw, lower, check on the interpreter, time through a TuneTimer), the result and
// what is written from it (text, CSV, JSON, the SVG plot). The command (src/tools/CmdTune.cpp) parses
// flags, picks the timer (dtsim's CUDA backend or the emitted Triton) and prints; the tests time
// through a model of the GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/Driver.h"
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
  std::string phase;           // "enumerated", "own", "seeded", "random" or "refined"
  uint64_t draw = 0;           // its position in the draw sequence (the space index when enumerated)
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
  double check_seconds = 0;         // drawing, lowering and checking on the interpreter (and compiling
                                    // the candidates that passed, for the CUDA timer's cache)
  double timing_seconds = 0;        // timing on the GPU (compiling included)
  double overlap_seconds = 0;       // both at once (the GPU timing a round while the next is checked)
  double compile_wait_seconds = 0;  // of the timing: waiting for candidates to be compiled
  // Of the checking, in thread-seconds (the checking threads' times added up, so they may add up to
  // more than check_seconds): lowering at the requested sizes, the check on the interpreter (its own
  // lowering at the check sizes, the run with the sanitizer, the reference), and compiling what
  // passed for the CUDA timer's cache (NVVM emission, libNVVM, ptxas).
  double lower_seconds = 0, interp_seconds = 0, compile_seconds = 0;
  int64_t bytes = 0;                // buffer bytes moved by one run (each buffer once)
  double flops = 0;                 // dot FLOPs of one run (0: no dot)
  int64_t ptx_cache_hits = 0, ptx_cache_misses = 0;
  std::vector<TuneCandidate> candidates;  // in evaluation order (merged: by draw)
  std::vector<TuneReference> references;
  // What was asked, so that shards can be merged: the seed, the budget or the time, the shard.
  uint64_t seed = 0, budget = 0;
  double time_s = 0;
  uint64_t shard = 0, shards = 1;
  std::vector<uint64_t> shards_merged;  // merged: the shards it holds (empty: one search)
  uint64_t rounds = 0;                  // rounds of the search (merged: the most of any shard)
  size_t workers = 1;                   // timing workers (GPUs) the search ran on
  double worker_seconds = 0;            // their wall times added (one search: seconds)
  // Candidates each worker's GPU timed (any shard's: the shards time from one queue), by shard;
  // one entry for one search with a timer, none without.
  std::vector<uint64_t> gpu_timed;

  const TuneCandidate* best() const;        // the fastest timed candidate, or nullptr
  size_t count(const std::string& status) const;
  size_t within(double fraction) const;     // timed candidates within best * (1 + fraction)
  // Reasons of rejected candidates with their counts, most frequent first.
  std::vector<std::pair<std::string, size_t>> reasons() const;
  double per_minute() const;                // candidates evaluated per minute of wall time
  size_t lowered() const;                   // candidates lowered legally (checked, maybe timed)
  double lowered_per_minute() const;
  // Candidates timed per minute of each worker's wall time (per GPU).
  double timed_per_minute_per_gpu() const;
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

// `dtsim tune --write-best`: the searched .dt `text` with its schedule calls (the lines from the
// first call's line, `calls` holding each call's location, to the ';' of the last) replaced by the
// fastest timed candidate's calls, under a "# dtsim tune:" comment naming the search, the sizes, the
// device, `date` and the times (a note of an earlier --write-best right above the calls is replaced).
// UserError when nothing was timed or the text has no calls.
std::string tune_best_source(const std::string& text, const std::vector<SourceLoc>& calls, const TuneResult& r,
                             const std::string& date);

// One candidate to time: its lowered module at the requested sizes, and (for Triton) the emitted module.
struct TuneJob {
  size_t id = 0;  // the caller's number for it
  const Module* module = nullptr;
  const Bindings* bindings = nullptr;
  std::string triton;                 // emitted Triton source (--backend=triton)
  // Valid while (or after) the search's compile ahead of this candidate (TuneTimer::prepare) runs: a
  // timer that compiles waits for it, then finds the result in its cache.
  std::shared_future<void> compiled;
  std::optional<double> ms;           // out: median milliseconds
  std::string error;                  // out: why it could not be timed
};

// Hands out the jobs to time, one per call, to whichever thread of the timer asks (calls are
// serialized by the caller's lock or the timer's): nullptr when none is left. A search with shards
// takes the next untimed candidate of the round here (the shared queue, docs/tune.md).
using TuneJobSource = std::function<TuneJob*()>;

// Times candidates. available() says whether it can (a driver, a GPU, python3 with torch and triton).
class TuneTimer {
 public:
  virtual ~TuneTimer() = default;
  virtual std::string name() const = 0;
  virtual bool available(std::string* why) = 0;
  virtual std::string device() { return ""; }
  // Times the jobs `next` hands out until it hands out none; `done` is called after each (on the
  // timer's thread). A timer takes a job only when it is about to work on it (compiling a few ahead
  // of the GPU at most), so that the jobs it has not taken stay for other timers.
  virtual void time(const TuneJobSource& next, const std::function<void(TuneJob&)>& done) = 0;
  // Called by the search (on threads of its own, several at once) as soon as a candidate is lowered
  // legally, beside its check and long before time() gets to it: a timer may compile it ahead into
  // a cache (the CUDA timer does, when it has a PTX cache). The job's module is the search's copy,
  // alive until prepare() returns. Never throws; time() reports what goes wrong.
  virtual void prepare(const TuneJob&) {}
  // Whether time() takes its jobs one at a time as above (false: all at once, e.g. one python3 call
  // for a round; a search with shards then gives each its own share of a round instead of a queue).
  virtual bool takes_one_at_a_time() const { return true; }
  // Every job of `jobs`; `done` is called after each with the job's position.
  void time_all(std::vector<TuneJob>& jobs, const std::function<void(size_t)>& done);
  // Seconds the GPU waited for candidates to be compiled, over all calls of time() (0: not measured).
  virtual double compile_wait_seconds() const { return 0; }
};

// dtsim's CUDA backend with bench's protocol (Timing.h) in a window of about `timed_ms` of timed runs
// (at least 10; warm-up a quarter of that, 25 ms after the GPU idled; a kernel slower than a tenth of
// the window: 3 runs or the window, no warm-up), PTX through the cache in
// `ptx_cache_dir` ("" none), inputs of `seed`; nullptr when dtsim was built without the CUDA backend.
std::unique_ptr<TuneTimer> make_cuda_timer(const std::string& arch, const std::string& ptx_cache_dir, uint64_t seed, double timed_ms = 25);
// The emitted Triton modules (TuneJob::triton), each timed by its own bench() (do_bench, median) on
// device data of `seed`, one python3 call per time().
std::unique_ptr<TuneTimer> make_triton_timer(uint64_t seed);

// The first line of a (located) message without its location, whole numbers folded to N: a reason
// that groups ("processed in tiles of N").
std::string tune_reason(const std::string& message);

// What a search is asked to do (the flags of `dtsim tune`).
struct TuneOptions {
  uint64_t budget = 200;       // schedules lowered legally (checked, timed); pruned and illegal draws use none
  double time_s = 0;           // > 0: search for this many seconds instead of a budget
  uint64_t seed = 0;           // the draw and the input data
  int jobs = 0;                // candidates lowered and checked at once (0: the cores, at most 16)
  int threads = 1;             // interpreter threads of each check
  std::string backend = "cuda";  // "cuda" or "triton" (candidates must have a Triton form)
  std::string version;         // the version line written into emitted Triton modules
  std::map<std::string, std::string> scalars;  // --arg values that are not sizes
  uint64_t shard = 0, shards = 1;  // --shard I/N: the draws at positions p with p mod N == I
  std::string exchange;            // --exchange DIR: the shards swap each round's outcomes there (one search)
  double exchange_timeout_s = 600; // --exchange-timeout S: a shard gives up after S seconds with no report
  bool overlap = true;             // time a round on a thread of its own while the next is checked
                                   // (--no-overlap: one after the other; the same search either way)
};

// The schedule space, the program and the options of one search.
class DtScheduleSpace;
struct TuneSearch {
  const Program* program = nullptr;     // the .dt program at the requested sizes (compile())
  const DtScheduleSpace* space = nullptr;
  TuneOptions options;
  TuneTimer* timer = nullptr;           // nullptr: check only (timing skipped)
  // Without a timer: compiles each candidate lowered legally beside its check as `timer` would (its
  // prepare()), timing none (`--compile-only`: the compiles of a CUDA search, measured without a GPU).
  TuneTimer* compiler = nullptr;
};

// Runs the search: appends every candidate to r.candidates in draw order and fills r.mode and the
// seconds. `show` (may be empty) gets progress: done, goal (0 with a time limit), the share done,
// what is happening, the best time so far ("-" when none).
void run_tune_search(const TuneSearch& s, TuneResult& r,
                     const std::function<void(size_t, size_t, double, const std::string&, const std::string&)>& show = {});

// A result as tune_json writes it, read back (`path` names it in errors: UserError
// "path:line:col: error: ..." when the text is not such a result).
TuneResult tune_result_from_json(const std::string& text, const std::string& path);
// The results of shards of one search (the same file, sizes, space, backend, seed, budget or time,
// and shard count; each shard once; UserError otherwise) as one: the candidates of all, by draw;
// times added up; the first shard's references; a schedule that several shards drew (refining around
// their own fastest) once. `note` says which shards are missing and how many duplicates were dropped.
TuneResult merge_tune_results(const std::vector<TuneResult>& parts, std::string* note);

// One worker process of `dtsim tune --gpus`: its command line, the environment it adds, and the
// file that gets its stdout and stderr.
struct TuneWorker {
  std::string label;              // "GPU 0", "cpu"
  std::vector<std::string> argv;  // argv[0]: the program
  std::vector<std::string> env;   // NAME=VALUE added to this process's environment
  std::string log;
  int status = -1;                // out: its exit status (-1: it could not start or was killed)
  bool stopped = false;           // out: terminated because another worker failed first
};
// Starts every worker at once and waits for them; as soon as one fails (exit status not 0, a
// signal, or it could not start), terminates the others (SIGTERM) and marks them stopped.
void run_tune_workers(std::vector<TuneWorker>& workers);

// `dtsim tune` (words: what follows "tune") with its candidates timed by `timer` instead of the
// backend's (the tests time through a model of the GPU); nullptr: the backend's timer.
int tune_command_with_timer(const std::vector<std::string>& words, TuneTimer* timer, std::ostream& out, std::ostream& err);

}  // namespace dtsim
