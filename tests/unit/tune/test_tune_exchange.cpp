// Shards that search together through an exchange folder (`dtsim tune --shard I/N --exchange DIR`),
// each in its own process (fork) and timed by the model of the GPU: merged, they are the unsharded
// search (same candidates, same best, refinement included; also while each times a round as it checks
// the next); with --time they stop after the same
// round; their GPUs time each round from one queue (a slower one times fewer); a shard that fails or
// never reports makes the others stop with an error instead of waiting;
// run_tune_workers stops the other workers when one fails.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tune/Exchange.h"
#include "tune/Tune.h"
#include "tune_model_timer.h"
#include "tune_test_files.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {

// What "stops, not hangs" allows: a hang waits for the default --exchange-timeout (600 s) or the
// model timer's sleeps; a loaded 2-core machine starts the shards' processes in seconds, not minutes.
constexpr double kNoHang = 60;

// A fresh folder for one test, removed at the end.
struct TempDir {
  fs::path p;
  explicit TempDir(const std::string& name) : p(fs::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~TempDir() { fs::remove_all(p); }
  std::string operator/(const std::string& n) const { return (p / n).string(); }
};

// How one shard's process ended: its exit status and what it wrote on the error stream.
struct ShardRun {
  int status = -1;
  std::string err;
};

// Runs `dtsim tune WORDS --shard I/N --exchange DIR --out DIR/sI.json` for each I in `which` at once,
// each in its own process with the model timer (`delay_ms` and `fail_after` of shard I from the
// vectors, when given), shard I starting `start_ms[I]` milliseconds late and given the words
// `extra[I]` too; waits for all.
std::vector<ShardRun> run_shards(const std::vector<std::string>& words, uint64_t n, const std::vector<uint64_t>& which, const TempDir& dir,
                                 const std::vector<int>& delay_ms = {}, const std::vector<int>& fail_after = {},
                                 const std::vector<int>& start_ms = {}, const std::vector<std::vector<std::string>>& extra = {}) {
  std::vector<pid_t> pids;
  for (uint64_t i : which) {
    std::vector<std::string> w = words;
    if (i < extra.size()) w.insert(w.end(), extra[i].begin(), extra[i].end());
    w.insert(w.end(), {"--shard", std::to_string(i) + "/" + std::to_string(n), "--exchange", dir / "exchange", "--out",
                       dir / ("s" + std::to_string(i) + ".json"), "--jobs", "1"});
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // the shard: no doctest here, only an exit status and the error text
      int rc = 2;
      std::ostringstream out, err;
      try {
        if (i < start_ms.size()) std::this_thread::sleep_for(std::chrono::milliseconds(start_ms[i]));
        ModelTimer timer;
        if (i < delay_ms.size()) timer.delay_ms = delay_ms[i];
        if (i < fail_after.size()) timer.fail_after = fail_after[i];
        rc = tune_command_with_timer(w, &timer, out, err);
      } catch (const std::exception& e) {
        err << "error: " << e.what() << "\n";
      }
      std::ofstream(dir / ("s" + std::to_string(i) + ".err")) << err.str();
      std::_Exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<ShardRun> runs;
  for (size_t k = 0; k < pids.size(); ++k) {
    int st = 0;
    REQUIRE(waitpid(pids[k], &st, 0) == pids[k]);
    runs.push_back({WIFEXITED(st) ? WEXITSTATUS(st) : -1, read(dir / ("s" + std::to_string(which[k]) + ".err"))});
  }
  return runs;
}

std::vector<uint64_t> all_shards(uint64_t n) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TuneResult run_whole(const std::vector<std::string>& words, const TempDir& dir) {
  ModelTimer timer;
  std::ostringstream out, err;
  std::vector<std::string> w = words;
  w.insert(w.end(), {"--out", dir / "whole.json", "--jobs", "1"});
  REQUIRE(tune_command_with_timer(w, &timer, out, err) == 0);
  return tune_result_from_json(read(dir / "whole.json"), dir / "whole.json");
}

TuneResult merge_shards(uint64_t n, const TempDir& dir, std::string* note) {
  std::vector<TuneResult> parts;
  for (uint64_t i = 0; i < n; ++i) parts.push_back(tune_result_from_json(read(dir / ("s" + std::to_string(i) + ".json")), "s.json"));
  return merge_tune_results(parts, note);
}

// The merged shards are the unsharded search: the same candidates in the same order, each with the
// draw, phase, status, time and schedule the single process gave it.
void check_same_candidates(const TuneResult& merged, const TuneResult& whole) {
  REQUIRE(merged.candidates.size() == whole.candidates.size());
  for (size_t k = 0; k < whole.candidates.size(); ++k) {
    const TuneCandidate &m = merged.candidates[k], &w = whole.candidates[k];
    CAPTURE(k);
    CHECK(m.index == w.index);
    CHECK(m.draw == w.draw);
    CHECK(m.phase == w.phase);
    CHECK(m.status == w.status);
    CHECK(m.ms == w.ms);
    CHECK(m.schedule == w.schedule);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("shards exchanging each round are the unsharded search: the same candidates, times and best, refinement included") {
  // dyt's space at these sizes is sampled (7428 schedules); a budget of 40 refines from its second round on.
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "40", "--seed", "3"};
  TempDir base("dtsim-tune-exchange-whole");
  TuneResult whole = run_whole(words, base);
  REQUIRE(whole.best());
  REQUIRE(std::any_of(whole.candidates.begin(), whole.candidates.end(), [](const TuneCandidate& c) { return c.phase == "refined"; }));
  for (uint64_t n : {2u, 3u}) {
    CAPTURE(n);
    TempDir dir("dtsim-tune-exchange-" + std::to_string(n));
    for (const ShardRun& s : run_shards(words, n, all_shards(n), dir)) {
      INFO(s.err);
      REQUIRE(s.status == 0);
    }
    std::string note;
    TuneResult merged = merge_shards(n, dir, &note);
    CHECK(note.empty());  // every shard, no schedule drawn twice
    check_same_candidates(merged, whole);
    REQUIRE(merged.best());
    CHECK(merged.best()->index == whole.best()->index);
    CHECK(merged.rounds == whole.rounds);
    // each shard holds the draws it checked (claimed from the round's queue): no draw in two
    std::set<uint64_t> held;
    for (uint64_t i = 0; i < n; ++i) {
      TuneResult part = tune_result_from_json(read(dir / ("s" + std::to_string(i) + ".json")), "s.json");
      CHECK(part.rounds == whole.rounds);
      for (const TuneCandidate& c : part.candidates) CHECK(held.insert(c.draw).second);
    }
    CHECK(held.size() == whole.candidates.size());
  }
}

TEST_CASE("overlapping shards (each times a round while checking the next; one GPU slower) are the unsharded search") {
  // a budget of 100 draws its first two rounds at random: the GPU times round 0 while round 1 is checked
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "100", "--seed", "1"};
  TempDir base("dtsim-tune-exchange-overlap-whole");
  TuneResult whole = run_whole(words, base);
  REQUIRE(whole.best());
  TempDir dir("dtsim-tune-exchange-overlap");
  for (const ShardRun& s : run_shards(words, 2, {0, 1}, dir, {1, 6})) {
    INFO(s.err);
    REQUIRE(s.status == 0);
  }
  std::string note;
  TuneResult merged = merge_shards(2, dir, &note);
  CHECK(note.empty());
  check_same_candidates(merged, whole);
  REQUIRE(merged.best());
  CHECK(merged.best()->index == whole.best()->index);
  CHECK(merged.overlap_seconds > 0);
  // two swaps per round: the checks (round-K) and the times (times-K)
  for (uint64_t k = 0; k < whole.rounds; ++k)
    for (const char* kind : {"round-", "times-"}) CHECK(fs::exists(dir / ("exchange/" + std::string(kind) + std::to_string(k) + ".shard-1-of-2")));
}

TEST_CASE("the shards' GPUs time each round from one queue: one 4x slower times about a fifth, and the timing ends in about the faster one's time") {
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "100", "--seed", "1"};
  TempDir base("dtsim-tune-exchange-queue-whole");
  TuneResult whole = run_whole(words, base);
  size_t timed = whole.count("timed");
  REQUIRE(timed >= 40);
  TempDir dir("dtsim-tune-exchange-queue");
  const int fast_ms = 8, slow_ms = 32;
  for (const ShardRun& s : run_shards(words, 2, {0, 1}, dir, {fast_ms, slow_ms})) {
    INFO(s.err);
    REQUIRE(s.status == 0);
  }
  // the same search: every candidate, its time and the best, whoever timed it
  std::string note;
  TuneResult merged = merge_shards(2, dir, &note);
  CHECK(note.empty());
  check_same_candidates(merged, whole);
  REQUIRE(merged.best());
  CHECK(merged.best()->index == whole.best()->index);
  CHECK(whole.gpu_timed == std::vector<uint64_t>{timed});
  // every timed candidate was claimed once; the fast GPU claimed most (4/5 if the rounds were long)
  size_t by[2] = {0, 0};
  for (const auto& e : fs::directory_iterator(dir / "exchange")) {
    std::string name = e.path().filename().string();
    if (name.rfind("claim-", 0) != 0) continue;
    std::string who = read(e.path().string());
    REQUIRE((who == "0\n" || who == "1\n"));
    ++by[who[0] - '0'];
  }
  CHECK(by[0] + by[1] == timed);
  CHECK(by[0] >= 2 * by[1]);
  CHECK(merged.gpu_timed == std::vector<uint64_t>{by[0], by[1]});
  // each shard reports the GPU time of the candidates it claimed: at least their timer's pace each
  // (an upper bound would be a wall-clock assertion, which a loaded machine breaks; the queue's share
  // is what the claim counts above show)
  const int pace_ms[2] = {fast_ms, slow_ms};
  for (uint64_t i = 0; i < 2; ++i) {
    TuneResult part = tune_result_from_json(read(dir / ("s" + std::to_string(i) + ".json")), "s.json");
    CAPTURE(i);
    CAPTURE(part.timing_seconds);
    CHECK(part.timing_seconds >= 0.9 * static_cast<double>(by[i]) * pace_ms[i] / 1000.0);
    CHECK(part.gpu_timed == std::vector<uint64_t>{by[i]});
  }
}

TEST_CASE("the shards check each round from one queue: a shard that starts late finds the first round checked by the other") {
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "40", "--seed", "3"};
  TempDir base("dtsim-tune-exchange-checkq-whole");
  TuneResult whole = run_whole(words, base);
  TempDir dir("dtsim-tune-exchange-checkq");
  for (const ShardRun& s : run_shards(words, 2, {0, 1}, dir, {}, {}, {0, 1500})) {
    INFO(s.err);
    REQUIRE(s.status == 0);
  }
  std::string note;
  TuneResult merged = merge_shards(2, dir, &note);
  CHECK(note.empty());
  check_same_candidates(merged, whole);
  // round 0: every draw claimed for its check, all (or all but a few) by shard 0
  size_t by[2] = {0, 0};
  for (const auto& e : fs::directory_iterator(dir / "exchange")) {
    std::string name = e.path().filename().string();
    if (name.rfind("check-0.", 0) != 0) continue;
    std::string who = read(e.path().string());
    REQUIRE((who == "0\n" || who == "1\n"));
    ++by[who[0] - '0'];
  }
  CHECK(by[0] + by[1] > 0);
  CHECK(by[0] > 3 * by[1]);
}

TEST_CASE("a shard that only checks (--check-only, a cpu worker of --gpus) has its candidates timed by the other shard's GPU") {
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "40", "--seed", "3"};
  TempDir base("dtsim-tune-exchange-cpu-whole");
  TuneResult whole = run_whole(words, base);
  TempDir dir("dtsim-tune-exchange-cpu");
  for (const ShardRun& s : run_shards(words, 2, {0, 1}, dir, {}, {}, {}, {{}, {"--check-only"}})) {
    INFO(s.err);
    REQUIRE(s.status == 0);
  }
  std::string note;
  TuneResult merged = merge_shards(2, dir, &note);
  check_same_candidates(merged, whole);
  CHECK(merged.gpu_timed == std::vector<uint64_t>{whole.count("timed")});  // shard 0's GPU timed them all; shard 1 has none
  TuneResult cpu = tune_result_from_json(read(dir / "s1.json"), "s1.json");
  CHECK(cpu.count("timed") > 0);  // draws it checked, timed by shard 0
}

TEST_CASE("claims: each draw goes to the one shard that claims it first; a times report carries a GPU failure's reason") {
  TempDir dir("dtsim-tune-exchange-claims");
  TuneExchange a(dir / "x", 0, 2, "search of the test", 5), b(dir / "x", 1, 2, "search of the test", 5);
  a.start();
  b.start();
  CHECK(a.claim(0, 7, ExchangeKind::Times));
  CHECK(!b.claim(0, 7, ExchangeKind::Times));
  CHECK(b.claim(0, 8, ExchangeKind::Times));
  CHECK(!a.claim(0, 8, ExchangeKind::Times));
  CHECK(b.claim(1, 7, ExchangeKind::Times));   // another round's draw 7
  CHECK(b.claim(0, 7, ExchangeKind::Checks));  // checking it is another claim
  CHECK(!a.claim(0, 7, ExchangeKind::Checks));
  CHECK(read(dir / "x/claim-0.7-of-2") == "0\n");
  CHECK(read(dir / "x/claim-0.8-of-2") == "1\n");
  CHECK(read(dir / "x/check-0.7-of-2") == "1\n");
  ExchangeRound mine_a, mine_b;
  ExchangedDraw d;
  d.pos = 8;
  d.index = 42;
  d.done = d.lowered = true;
  d.status = "gpu-failed";
  d.reason = "launch failed: too many resources requested";
  mine_b.draws.push_back(d);
  d.pos = 7;
  d.status = "timed";
  d.ms = 0.25;
  d.reason.clear();
  mine_a.draws.push_back(d);
  std::vector<ExchangeRound> got_b;
  std::thread t([&] { got_b = b.swap(0, mine_b, ExchangeKind::Times); });
  std::vector<ExchangeRound> got_a = a.swap(0, mine_a, ExchangeKind::Times);
  t.join();
  REQUIRE(got_a.size() == 2);
  REQUIRE(got_a[1].draws.size() == 1);
  CHECK(got_a[1].draws[0].status == "gpu-failed");
  CHECK(got_a[1].draws[0].reason == "launch failed: too many resources requested");
  CHECK(!got_a[1].draws[0].ms);
  REQUIRE(got_b.size() == 2);
  REQUIRE(got_b[0].draws.size() == 1);
  CHECK(got_b[0].draws[0].ms == 0.25);
  CHECK(got_b[0].draws[0].reason.empty());
}

TEST_CASE("with --time, exchanging shards stop after the same round, even when one is slower") {
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--time", "1.5", "--seed", "1",
                                    "--exchange-timeout", "3"};
  TempDir dir("dtsim-tune-exchange-time");
  auto t0 = std::chrono::steady_clock::now();
  // shard 1 starts 0.6 s late and times each candidate 15 ms slower: its own clock alone would
  // stop it rounds after shard 0
  for (const ShardRun& s : run_shards(words, 2, {0, 1}, dir, {0, 15}, {}, {0, 600})) {
    INFO(s.err);
    REQUIRE(s.status == 0);
  }
  CHECK(seconds_since(t0) < kNoHang);
  TuneResult a = tune_result_from_json(read(dir / "s0.json"), "s0.json"), b = tune_result_from_json(read(dir / "s1.json"), "s1.json");
  CHECK(a.rounds >= 1);
  CHECK(a.rounds == b.rounds);
  // the last round's reports of both shards are in the folder, and none after it
  CHECK(fs::exists(dir / ("exchange/round-" + std::to_string(a.rounds - 1) + ".shard-0-of-2")));
  CHECK(fs::exists(dir / ("exchange/round-" + std::to_string(a.rounds - 1) + ".shard-1-of-2")));
  CHECK(!fs::exists(dir / ("exchange/round-" + std::to_string(a.rounds) + ".shard-0-of-2")));
  std::string note;
  TuneResult merged = merge_shards(2, dir, &note);
  CHECK(note.empty());
  std::set<uint64_t> seen;
  for (const TuneCandidate& c : merged.candidates) CHECK(seen.insert(c.index).second);
}

TEST_CASE("an exchanging shard that fails or never reports stops the others with an error, not a hang") {
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "40", "--seed", "3"};
  SUBCASE("a shard fails: the others name it and its reason") {
    TempDir dir("dtsim-tune-exchange-fail");
    auto t0 = std::chrono::steady_clock::now();
    // shard 1's GPU fails at its 4th candidate; shard 0's is the slower, so that shard 1 takes enough
    // candidates from the queue to get there
    std::vector<ShardRun> runs = run_shards(words, 2, {0, 1}, dir, {20, 1}, {-1, 3});
    CHECK(seconds_since(t0) < kNoHang);
    CHECK(runs[1].status == 2);
    CHECK(runs[1].err.find("the model GPU fell off the bus") != std::string::npos);
    CHECK(runs[0].status == 2);
    CHECK(runs[0].err.find("--exchange " + (dir / "exchange") + ": shard 1/2 failed: the model GPU fell off the bus") != std::string::npos);
  }
  SUBCASE("a shard never reports: the waiting one gives up after --exchange-timeout; its folder is not taken again") {
    TempDir dir("dtsim-tune-exchange-timeout");
    std::vector<std::string> w = words;
    w.insert(w.end(), {"--exchange-timeout", "0.5"});
    auto t0 = std::chrono::steady_clock::now();
    std::vector<ShardRun> runs = run_shards(w, 2, {0}, dir);  // shard 1/2 is never started
    CHECK(seconds_since(t0) < kNoHang);
    CHECK(runs[0].status == 2);
    CHECK(runs[0].err.find("--exchange " + (dir / "exchange") + ": no report of round 0 from shard(s) 1/2 after ") != std::string::npos);
    // the folder holds shard 0's round-0 report: a second search there is refused
    runs = run_shards(w, 2, {0}, dir);
    CHECK(runs[0].status == 2);
    CHECK(runs[0].err.find("already holds shard 0/2's reports of an earlier search; give each search an empty folder") != std::string::npos);
  }
}

TEST_CASE("run_tune_workers: the first worker that fails stops the others") {
  TempDir dir("dtsim-tune-workers");
  std::vector<TuneWorker> ws(3);
  ws[0].argv = {"/bin/sh", "-c", "sleep 30"};
  ws[1].argv = {"/bin/sh", "-c", "echo first line; sleep 0.2; echo the last line; exit 3"};
  ws[2].argv = {"/bin/sh", "-c", "exit 0"};
  for (size_t i = 0; i < ws.size(); ++i) ws[i].log = dir / (std::to_string(i) + ".log");
  auto t0 = std::chrono::steady_clock::now();
  run_tune_workers(ws);
  CHECK(seconds_since(t0) < kNoHang);
  CHECK(ws[1].status == 3);
  CHECK(!ws[1].stopped);
  CHECK(read(ws[1].log) == "first line\nthe last line\n");
  CHECK(ws[0].stopped);
  CHECK(ws[0].status == -1);  // terminated
  CHECK(ws[2].status == 0);
  CHECK(!ws[2].stopped);

  // A worker that cannot start stops the others at once.
  std::vector<TuneWorker> bad(2);
  bad[0].argv = {"/bin/sh", "-c", "sleep 30"};
  bad[1].argv = {(dir / "no-such-program")};
  for (size_t i = 0; i < bad.size(); ++i) bad[i].log = dir / ("b" + std::to_string(i) + ".log");
  t0 = std::chrono::steady_clock::now();
  run_tune_workers(bad);
  CHECK(seconds_since(t0) < kNoHang);
  CHECK(bad[1].status == -1);
  CHECK(!bad[1].stopped);
  CHECK(read(bad[1].log).find("cannot start") != std::string::npos);
  CHECK(bad[0].stopped);
}
