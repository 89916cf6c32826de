// The difftest's worker processes: a trial that kills its worker is reported and the sweep goes on
// in a fresh worker; a worker that stops after a fault hands over to the next; errors end the sweep.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "difftest/Worker.h"
#include "ir/Diag.h"

using namespace dtsim;

namespace {

struct Seen {
  std::vector<int> trials;
  std::vector<std::string> texts;
};

}  // namespace

TEST_CASE("a trial that kills its worker is reported and the next trial runs in a new worker") {
  Seen seen;
  pid_t parent = getpid();
  WorkerSweep s = run_in_workers(
      5,
      [&](int from, WorkerChannel& ch) {
        ch.hello(false, "pid " + std::to_string(getpid()));
        for (int t = from; t < 5; ++t) {
          if (t == 2) {  // as a sticky GPU fault would end the process (without the test framework's handler)
            signal(SIGSEGV, SIG_DFL);
            raise(SIGSEGV);
          }
          ch.record(WorkerRecord{t, 0, -1, "trial " + std::to_string(t) + " in " + std::to_string(getpid()) + "\n"});
        }
      },
      [&](const WorkerRecord& r) {
        seen.trials.push_back(r.trial);
        seen.texts.push_back(r.text);
        return false;
      },
      [&](int t, const std::string& how) { return WorkerRecord{t, 7, -1, "died: " + how}; }, [] { return false; });
  CHECK(getpid() == parent);
  CHECK(s.error_code == -1);
  CHECK(s.end_code == -1);
  CHECK(s.why.rfind("pid ", 0) == 0);
  CHECK(s.why != "pid " + std::to_string(parent));  // the work ran in another process
  REQUIRE(seen.trials == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(seen.texts[2].find("died: died (signal 11") == 0);
  // Trials 0-1 and 3-4 ran in two different workers.
  auto proc = [&](int i) { return seen.texts[i].substr(seen.texts[i].find(" in ")); };
  CHECK(proc(0) == proc(1));
  CHECK(proc(3) == proc(4));
  CHECK(proc(0) != proc(3));
}

TEST_CASE("a worker that stops early hands over; a record can end the sweep; errors carry their exit code") {
  std::vector<int> trials;
  WorkerSweep s = run_in_workers(
      6,
      [&](int from, WorkerChannel& ch) {
        ch.hello(true, "");
        ch.record(WorkerRecord{from, 0, from == 3 ? 1 : -1, ""});  // one trial per worker
      },
      [&](const WorkerRecord& r) {
        trials.push_back(r.trial);
        return r.end_code >= 0;
      },
      [&](int t, const std::string&) { return WorkerRecord{t, 0, -1, ""}; }, [] { return false; });
  CHECK(trials == std::vector<int>{0, 1, 2, 3});
  CHECK(s.gpu);
  CHECK(s.end_code == 1);

  WorkerSweep e = run_in_workers(
      3, [&](int, WorkerChannel& ch) { ch.hello(true, ""); throw UserError("bad size"); },
      [&](const WorkerRecord&) { return false; }, [&](int t, const std::string&) { return WorkerRecord{t, 0, -1, ""}; },
      [] { return false; });
  CHECK(e.error_code == 2);
  CHECK(e.error.find("bad size") != std::string::npos);
}

TEST_CASE("a stop request ends the sweep without waiting for a worker that never reports") {
  std::vector<int> trials;
  auto t0 = std::chrono::steady_clock::now();
  auto secs = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  WorkerSweep s = run_in_workers(
      4,
      [&](int from, WorkerChannel& ch) {
        ch.hello(false, "");
        ch.record(WorkerRecord{from, 0, -1, ""});
        for (;;) pause();  // stuck in trial from + 1, deaf to everything but SIGKILL
      },
      [&](const WorkerRecord& r) {
        trials.push_back(r.trial);
        return false;
      },
      [&](int t, const std::string&) { return WorkerRecord{t, 0, -1, ""}; }, [&] { return secs() > 0.3; });
  CHECK(trials == std::vector<int>{0});
  CHECK(s.stopped_at == 1);
  CHECK(s.end_code == -1);
  CHECK(s.error_code == -1);
  CHECK(secs() < 30);
}
