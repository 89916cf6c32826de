// Control over long runs: a statement budget per instance (--max-steps), a wall-clock budget
// (--timeout), stopping on request (Ctrl-C, SIGTERM, or request_stop() from any thread) between
// instances and inside an instance's loops, and the counters a progress line reads. The interpreter
// touches it at two places only: an add and compare per block of statements run (a loop trip, a
// branch, a kernel body; every kPollStatements statements it then looks at the flags and the
// clock) and a flag check per instance.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

#include "host/Interrupt.h"
#include "ir/Diag.h"

namespace dtsim {

struct RunControl {
  // ---- limits (0 = none) ----
  int64_t max_steps = 0;  // statements executed per instance (a loop's body counts again every trip)
  double timeout_s = 0;   // wall-clock seconds for the whole run, from start()

  // ---- progress, written by the interpreter, read by ProgressLine ----
  std::atomic<int64_t> done{0};   // instances finished in the current launch
  std::atomic<int64_t> total{0};  // instances of the current launch
  std::atomic<double> launch_start{0};  // elapsed() when the current launch began (for its rate)
  std::mutex name_mu;
  std::string kernel;             // the current launch's kernel (under name_mu)

  // ---- stopping on request ----
  // request_stop() may be called from any thread (a signal watcher, a Python signal handler's
  // thread, a GUI): the run stops within a few thousand statements, also inside a loop of a single
  // instance, as on a Ctrl-C (with or without the debugger's hooks). A Ctrl-C, SIGTERM or SIGHUP
  // caught by a SigintGuard (host/Interrupt.h) stops it the same way, except that under a debugger
  // that handles_interrupt() a Ctrl-C goes to the debugger instead.
  std::atomic<bool> stop_flag{false};
  void request_stop() { stop_flag.store(true, std::memory_order_relaxed); }
  bool stop_requested() const { return stop_flag.load(std::memory_order_relaxed); }

  // ---- where an interrupted run stopped (set by the interpreter) ----
  bool interrupted = false;
  std::string stopped_kernel;
  std::array<int64_t, 3> stopped_pid{};  // the instance that was running (inside), else the next one
  size_t stopped_rank = 3;               // its grid's rank: the pid is written [p0, p1] (pid_text)
  int64_t stopped_done = 0, stopped_total = 0;
  bool stopped_inside = false;  // inside an instance: stopped_loc and stopped_where say where
  SourceLoc stopped_loc;        // the innermost enclosing loop, else the statement
  std::string stopped_where;    // "in the loop over 'i' (i = 41)", "in this while loop" or ""

  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void start() { t0 = std::chrono::steady_clock::now(); }
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  bool past_deadline() const { return timeout_s > 0 && elapsed() > timeout_s; }

  void begin_launch(const std::string& name, int64_t instances);
  // One line for stderr: "interrupted: kernel 'k' before pid (3, 0, 0): 3 of 16 instances done;
  // no output file written", or inside an instance "interrupted: kernel 'k' in pid (0, 0, 0), in the
  // loop over 'i' (i = 41) at f.tile:8:3: 0 of 1 instances done; ...". `verb` replaces
  // "interrupted" (e.g. "terminated" for SIGTERM).
  std::string interrupted_line(const std::string& verb = "interrupted") const;
};


// ---- progress line ----
// While alive, and when stderr is a terminal, redraws one line on stderr every 0.25 s once the run
// took more than about a second: what `describe` returns (called from the drawing thread), elapsed
// seconds. Erases the line when destroyed.
class ProgressLine {
 public:
  using Describe = std::string (*)(void* ctx, double elapsed);
  ProgressLine(Describe describe, void* ctx, bool force_on = false);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // The interpreter's instance counters: "k: 120/4096 instances (2%), 1.3 s, 92 instances/s".
  static std::string describe_run(void* run_control, double elapsed);
 private:
  void loop();
  Describe describe_;
  void* ctx_;
  bool on_;
  std::atomic<bool> quit_{false};
  std::thread th_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace dtsim
