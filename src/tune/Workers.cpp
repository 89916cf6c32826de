// The worker processes of `dtsim tune --gpus` (Tune.h): started together, each with its own
// environment (CUDA_VISIBLE_DEVICES) and log file, then waited for.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "tune/Tune.h"

extern char** environ;

namespace dtsim {

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
  for (size_t i = 0; i < workers.size(); ++i) {
    if (pids[i] < 0) continue;
    int st = 0;
    while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {
    }
    workers[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
}

}  // namespace dtsim
