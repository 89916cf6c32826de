// Signal flags and the registry of temporary files (see Interrupt.h). The handler only touches
// sig_atomic_t flags and fixed buffers, and calls unlink(), signal() and raise(), which are
// async-signal-safe.
#include "host/Interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace dtsim {

namespace {

volatile sig_atomic_t g_sigint = 0;
volatile sig_atomic_t g_term = 0;  // SIGTERM or SIGHUP

constexpr int kTempSlots = 64;
constexpr size_t kTempPath = 4096;
char g_temp[kTempSlots][kTempPath];
volatile sig_atomic_t g_temp_used[kTempSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void remove_temps() {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_used[i]) ::unlink(g_temp[i]);
}

void on_signal(int sig) {
  if (g_sigint || g_term) {  // a second signal: the work did not reach a poll; end now, as the signal does
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  if (sig == SIGINT) g_sigint = 1;
  else g_term = sig;
}

}  // namespace

SigintGuard::SigintGuard() {
  g_sigint = 0;
  g_term = 0;
  auto* old = new struct sigaction[3];
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old[i]);
  old_ = old;
}

SigintGuard::~SigintGuard() {
  auto* old = static_cast<struct sigaction*>(old_);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old[i], nullptr);
  delete[] old;
}

bool sigint_pending() { return g_sigint != 0 || g_term != 0; }

bool take_sigint() {
  if (!g_sigint) return false;
  g_sigint = 0;
  return true;
}

int pending_signal() { return g_term ? static_cast<int>(g_term) : g_sigint ? SIGINT : 0; }

bool stop_signal_pending(bool ctrl_c_handled_elsewhere) { return g_term != 0 || (g_sigint != 0 && !ctrl_c_handled_elsewhere); }

int interrupted_exit_code() {
  int s = pending_signal();
  return 128 + (s ? s : SIGINT);
}

bool register_temp_file(const std::string& path) {
  if (path.size() >= kTempPath) return false;
  for (int i = 0; i < kTempSlots; ++i)
    if (!g_temp_used[i]) {
      std::memcpy(g_temp[i], path.c_str(), path.size() + 1);
      g_temp_used[i] = 1;
      return true;
    }
  return false;
}

void unregister_temp_file(const std::string& path) {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_used[i] && path == g_temp[i]) {
      g_temp_used[i] = 0;
      return;
    }
}

}  // namespace dtsim
