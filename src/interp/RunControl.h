// Control over long runs: a statement budget per instance (--max-steps), a wall-clock budget
// (--timeout), Ctrl-C stopping at the next instance boundary, and the counters a progress line
// reads. The interpreter touches it at two places only: an add and compare per block of statements
// run (a loop trip, a branch, a kernel body) and a flag check per instance.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

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

  // ---- where an interrupted run stopped (set by the interpreter) ----
  bool interrupted = false;
  std::string stopped_kernel;
  std::array<int64_t, 3> stopped_pid{};  // the next instance that would have run
  int64_t stopped_done = 0, stopped_total = 0;

  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void start() { t0 = std::chrono::steady_clock::now(); }
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  bool past_deadline() const { return timeout_s > 0 && elapsed() > timeout_s; }

  void begin_launch(const std::string& name, int64_t instances);
  // One line for stderr: "interrupted: kernel 'k' before pid (3, 0, 0): 3 of 16 instances done".
  std::string interrupted_line() const;
};

// ---- Ctrl-C ----
// Installs a SIGINT handler that only sets a flag (the run stops at the next instance boundary; the
// debugger returns to its prompt). A second Ctrl-C before the flag is taken ends the process (exit
// status 130, as the shell reports a SIGINT). Restores the previous handler when destroyed.
class SigintGuard {
 public:
  SigintGuard();
  ~SigintGuard();
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;
 private:
  void* old_ = nullptr;
};
bool sigint_pending();  // a Ctrl-C arrived and was not taken yet
bool take_sigint();     // true (and clears the flag) when one was pending

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
