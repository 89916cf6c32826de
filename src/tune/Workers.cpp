// The worker processes of `dtsim tune --gpus` (Tune.h): started together, each with its own
// environment (CUDA_VISIBLE_DEVICES) and log file, then waited for; the first that fails stops the
// others.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "tune/Tune.h"

extern char** environ;

namespace dtsim {

namespace {
constexpr auto kStopGrace = std::chrono::seconds(10);  // SIGTERM, then SIGKILL after this
}  // namespace

void run_tune_workers(std::vector<TuneWorker>& workers) {
  std::vector<pid_t> pids(workers.size(), -1);
  for (size_t i = 0; i < workers.size(); ++i) {
    TuneWorker& w = workers[i];
    // The environment: this process's, without the names the worker sets, then the worker's.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      bool overridden = false;
      for (const std::string& mine : w.env)
        overridden = overridden || kv.compare(0, mine.find('=') + 1, mine, 0, mine.find('=') + 1) == 0;
      if (!overridden) env.push_back(kv);
    }
    env.insert(env.end(), w.env.begin(), w.env.end());
    std::vector<char*> argv, envp;
    for (std::string& a : w.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, w.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
    if (rc == 0) pids[i] = pid;
    else std::ofstream(w.log) << "cannot start " << w.argv[0] << ": " << std::strerror(rc) << "\n";
    posix_spawn_file_actions_destroy(&fa);
  }
  // Waits for whichever ends first; the first failure stops the rest (SIGTERM; SIGKILL after
  // kStopGrace), so that no worker is left waiting for one that died.
  size_t running = 0;
  bool failed = false;
  for (pid_t p : pids) running += p >= 0 ? 1 : 0;
  auto stop_rest = [&] {
    if (failed) return;
    failed = true;
    for (size_t i = 0; i < workers.size(); ++i)
      if (pids[i] >= 0) {
        workers[i].stopped = true;
        kill(pids[i], SIGTERM);
      }
  };
  if (running < workers.size()) stop_rest();  // one could not start
  auto stop_time = std::chrono::steady_clock::now();
  bool killed = false;
  while (running > 0) {
    int st = 0;
    pid_t pid = waitpid(-1, &st, failed ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;  // no children left (ECHILD)
    if (pid == 0) {      // stopping: none has ended yet
      if (!killed && std::chrono::steady_clock::now() - stop_time > kStopGrace) {
        killed = true;
        for (pid_t p : pids)
          if (p >= 0) kill(p, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    auto it = std::find(pids.begin(), pids.end(), pid);
    if (it == pids.end()) continue;  // not one of ours
    size_t i = static_cast<size_t>(it - pids.begin());
    *it = -1;
    --running;
    TuneWorker& w = workers[i];
    w.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (w.status == 0) {
      w.stopped = false;  // it finished before it could be stopped
    } else if (!w.stopped) {
      stop_rest();
      stop_time = std::chrono::steady_clock::now();
    }
  }
}

}  // namespace dtsim
