// Stopping long work from outside, in every phase of a run (filling inputs, the run, writing
// outputs): SIGINT (Ctrl-C), SIGTERM and SIGHUP set a flag that the long loops poll; the files an
// output writer has half written are registered here, so that even a signal that ends the process
// at once (a second Ctrl-C) leaves none of them behind.
#pragma once

#include <string>

namespace dtsim {

// While alive, SIGINT, SIGTERM and SIGHUP only set a flag (the work stops at its next poll; the
// debugger returns to its prompt on a Ctrl-C). A second signal before the first was acted on
// removes the registered temporary files and ends the process as that signal does (exit status
// 128 + signal). Restores the previous handlers when destroyed.
class SigintGuard {
 public:
  SigintGuard();
  ~SigintGuard();
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;
 private:
  void* old_ = nullptr;
};
bool sigint_pending();  // a Ctrl-C, SIGTERM or SIGHUP arrived and was not taken yet
bool take_sigint();     // true (and clears it) when a Ctrl-C was pending; SIGTERM/SIGHUP stay pending
int pending_signal();   // the signal to act on: SIGTERM or SIGHUP before SIGINT; 0 when none
// Whether work must stop for a signal: any pending one, except a lone Ctrl-C when
// `ctrl_c_handled_elsewhere` (a debugger returns to its prompt on Ctrl-C instead).
bool stop_signal_pending(bool ctrl_c_handled_elsewhere = false);
// 128 + the pending signal (130 for Ctrl-C), as a shell reports a process that signal ended.
int interrupted_exit_code();

// Temporary files being written; removed by the handler of a signal that ends the process. At most
// 64 at once (register returns false beyond that: the caller writes fewer at a time).
bool register_temp_file(const std::string& path);
void unregister_temp_file(const std::string& path);

// Thrown by a poll outside the interpreter (filling inputs, reading or writing files) when a signal
// or --timeout stops the work; `what` says where, e.g. "while filling input buffer 'x'".
struct WorkStopped {
  bool timeout = false;  // else a signal (pending_signal())
  std::string what;
};

}  // namespace dtsim
