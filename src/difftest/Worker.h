// Worker processes for a sweep whose cases may wreck the process they run in. CUDA makes a trap or
// an illegal address sticky: the context is lost and, on some drivers, even a primary-context reset
// does not bring the process back. So the sweep's process never touches the GPU; a forked worker
// runs trials from a given one on and reports each as a record through a pipe. When a worker ends
// early (it saw a fault and stopped, or it died), the next trial starts in a fresh worker; a trial
// that killed its worker is reported as such.
#pragma once

#include <functional>
#include <string>

namespace dtsim {

// One trial's result as it crosses from a worker to the sweep.
struct WorkerRecord {
  int trial = 0;
  int outcome = 0;    // the caller's code
  int end_code = -1;  // >= 0: the sweep ends after this trial with this exit code
  std::string text;   // what the sweep prints for it
};

// The worker's side of the pipe.
class WorkerChannel {
 public:
  explicit WorkerChannel(int fd) : fd_(fd) {}
  // Sent once by each worker before its first trial: whether it can use a GPU, and why not.
  void hello(bool gpu, const std::string& why);
  void record(const WorkerRecord& r);

 private:
  int fd_;
};

struct WorkerSweep {
  bool gpu = false;     // from the first worker's hello
  std::string why;
  int end_code = -1;    // a record ended the sweep with this code
  int error_code = -1;  // a worker stopped on an error (its text in `error`): exit with this code
  std::string error;
  int stopped_at = -1;  // `stop` said yes while this trial was running (or about to start)
};

// Runs trials [0, trials) in workers: `body(from, channel)` runs in a forked child and reports
// trials from `from` on (it may return early: the next worker starts after its last record).
// `on_record` sees every record in order in this process; returning true ends the sweep. A trial
// whose worker died before reporting it gets `on_death(trial, how)`'s record instead. A UserError
// (exit 2), RuntimeFault (exit 1) or other exception (exit 3) in a worker ends the sweep with its text.
// While waiting for a record the sweep asks `stop` (Ctrl-C) every tenth of a second; on yes it kills
// the worker and ends with `stopped_at`, without waiting for the worker to reach a boundary (a worker
// deep in one case, or stuck, must not keep the sweep alive).
WorkerSweep run_in_workers(int trials, const std::function<void(int from, WorkerChannel&)>& body,
                           const std::function<bool(const WorkerRecord&)>& on_record,
                           const std::function<WorkerRecord(int trial, const std::string& how)>& on_death,
                           const std::function<bool()>& stop);

}  // namespace dtsim
