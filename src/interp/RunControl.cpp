// Run control: the Ctrl-C flag and its handler, the progress line's drawing thread, and the
// interrupted-run message (see RunControl.h).
#include "interp/RunControl.h"

#include "interp/Exec.h"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>

namespace dtsim {

namespace {

std::string rate_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, r >= 100 ? "%.0f" : "%.3g", r);
  return buf;
}

}  // namespace

void RunControl::begin_launch(const std::string& name, int64_t instances) {
  {
    std::lock_guard<std::mutex> lock(name_mu);
    kernel = name;
  }
  done.store(0, std::memory_order_relaxed);
  total.store(instances, std::memory_order_relaxed);
  launch_start.store(elapsed(), std::memory_order_relaxed);
}

std::string RunControl::interrupted_line(const std::string& verb) const {
  std::string at = stopped_inside ? "' in pid " + pid_text(stopped_pid, stopped_rank) + (stopped_where.empty() ? "" : ", " + stopped_where) +
                                        (stopped_loc.valid() ? " at " + format_loc(stopped_loc) : "")
                                  : "' before pid " + pid_text(stopped_pid, stopped_rank);
  return verb + ": kernel '" + stopped_kernel + at + ": " + std::to_string(stopped_done) + " of " + std::to_string(stopped_total) +
         " instances done; no output file written";
}

ProgressLine::ProgressLine(Describe describe, void* ctx, bool force_on)
    : describe_(describe), ctx_(ctx), on_(force_on || isatty(2)), t0_(std::chrono::steady_clock::now()) {
  if (on_) th_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  if (!on_) return;
  quit_ = true;
  th_.join();
}

void ProgressLine::loop() {
  bool shown = false;
  while (!quit_) {
    for (int i = 0; i < 25 && !quit_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (quit_) break;
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    if (t < 1.0) continue;
    std::string line = "\r\033[K" + describe_(ctx_, t);
    ssize_t w = write(2, line.data(), line.size());
    (void)w;
    shown = true;
  }
  if (shown) {
    ssize_t w = write(2, "\r\033[K", 4);
    (void)w;
  }
}

std::string ProgressLine::describe_run(void* run_control, double elapsed) {
  auto* rc = static_cast<RunControl*>(run_control);
  std::string name;
  {
    std::lock_guard<std::mutex> lock(rc->name_mu);
    name = rc->kernel;
  }
  int64_t d = rc->done.load(std::memory_order_relaxed), n = rc->total.load(std::memory_order_relaxed);
  double since = rc->elapsed() - rc->launch_start.load(std::memory_order_relaxed);
  char t[32];
  std::snprintf(t, sizeof t, "%.1f", elapsed);
  std::string s = name + ": " + std::to_string(d) + "/" + std::to_string(n) + " instances";
  if (n > 0) s += " (" + std::to_string(d * 100 / n) + "%)";
  s += ", " + std::string(t) + " s";
  if (since > 0.05) s += ", " + rate_text(static_cast<double>(d) / since) + " instances/s";
  return s;
}

namespace exec {

namespace {

constexpr int64_t kPollStatements = 1024;  // statements between looks at the stop flags and the clock

std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Where an instance is: the innermost enclosing loop (else `s`), and "in the loop over 'i' (i = 5)",
// "in this while loop" (no loop variable) or "" (no loop).
std::string where_in(Ctx& c, const Stmt& s, SourceLoc& loc) {
  const Stmt* loop = c.f->loop_stack.empty() ? nullptr : c.f->loop_stack.back();
  loc = loop ? loop->loc : s.loc;
  if (!loop) return "";
  if (loop->slots.empty()) return "in this while loop";
  int slot = loop->slots[0];
  c.flush(slot);
  const Value& v = c.f->slots[static_cast<size_t>(slot)];
  std::string var = loop->targets.empty() ? "?" : loop->targets[0];
  std::string at = v.defined() ? " (" + var + " = " + std::to_string(static_cast<int64_t>(v.get(0))) + ")" : "";
  return "in the loop over '" + var + "'" + at;
}

// A fault at the innermost enclosing loop (else at `s`) that says which limit was hit and where.
[[noreturn]] void limit_fault(Ctx& c, const Stmt& s, const std::string& what) {
  SourceLoc loc;
  std::string where = where_in(c, s, loc);
  throw RuntimeFault(loc, where.empty() ? what : what + " " + where);
}

// A stop was requested (request_stop(), or a signal the debugger does not take): records where this
// instance is (the first thread to get here wins) and unwinds the run.
[[noreturn]] void stop_inside(Ctx& c, const Stmt& s) {
  RunControl& rc = *c.rs->opt->control;
  {
    std::lock_guard<std::mutex> lock(c.rs->mu);
    if (!rc.interrupted) {
      rc.interrupted = true;
      rc.stopped_inside = true;
      rc.stopped_kernel = c.f->kernel ? c.f->kernel->name : "";
      rc.stopped_pid = c.f->pid;
      rc.stopped_rank = c.f->kernel ? c.f->kernel->grid.size() : 3;
      rc.stopped_done = rc.done.load();
      rc.stopped_total = rc.total.load();
      rc.stopped_where = where_in(c, s, rc.stopped_loc);
    }
  }
  c.rs->stop = true;
  throw StopRun{};
}

}  // namespace

int64_t first_step_check(const Ctx& c, int64_t next_poll) {
  const RunControl& rc = *c.rs->opt->control;
  int64_t check = std::max(next_poll, c.steps + 1);
  if (rc.max_steps > 0) check = std::min(check, c.step_base + rc.max_steps + 1);
  return check;
}

void step_poll(Ctx& c, const Stmt& s) {
  RunControl& rc = *c.rs->opt->control;
  if (rc.max_steps > 0 && c.steps - c.step_base > rc.max_steps)
    limit_fault(c, s, "program instance exceeded its budget of " + std::to_string(rc.max_steps) + " statements (--max-steps)");
  if (rc.stop_requested() || stop_signal_pending(c.hooks && c.hooks->handles_interrupt()))
    stop_inside(c, s);
  if (rc.past_deadline()) {
    // One finding for the timeout: a thread that finds the run already stopped (by another thread's
    // timeout between instances or inside one) unwinds without a second report.
    bool already;
    {
      std::lock_guard<std::mutex> lock(c.rs->mu);
      already = c.rs->stop.exchange(true);
    }
    if (already) throw StopRun{};
    limit_fault(c, s, "run stopped after " + num_text(rc.timeout_s) + " s (--timeout)");
  }
  int64_t next = c.steps + kPollStatements;
  if (rc.max_steps > 0) next = std::min(next, c.step_base + rc.max_steps + 1);
  c.step_check = next;
}

}  // namespace exec

}  // namespace dtsim
