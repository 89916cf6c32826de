// The GPU times a round on a thread of its own while the search draws and checks the next round
// (which, refining, draws around the fastest of the rounds before): with a model of the GPU that takes
// its time, the search's wall time is less than its checking and timing added up, and the search is
// the one --no-overlap makes (each round timed before the next is checked): the same candidates in
// the same order, the same statuses, times and best.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/Diag.h"
#include "tune/Tune.h"
#include "tune_model_timer.h"
#include "tune_test_files.h"

using namespace dtsim;

namespace {

// `dtsim tune WORDS --out FILE` with the model timer sleeping `delay_ms` per candidate; the result
// read back.
TuneResult run_model(std::vector<std::string> words, int delay_ms, int* timed = nullptr) {
  std::string path = (std::filesystem::temp_directory_path() / ("dtsim-tune-overlap-" + std::to_string(getpid()) + ".json")).string();
  ModelTimer timer;
  timer.delay_ms = delay_ms;
  std::ostringstream out, err;
  words.insert(words.end(), {"--out", path});
  int rc = tune_command_with_timer(words, &timer, out, err);
  INFO(err.str());
  REQUIRE(rc == 0);
  if (timed) *timed = timer.timed;
  TuneResult r = tune_result_from_json(read(path), path);
  std::filesystem::remove(path);
  return r;
}

}  // namespace

// The same search: every candidate in the same order with the same phase, status and time; the
// same best and rounds.
void check_same(const TuneResult& a, const TuneResult& b) {
  REQUIRE(a.candidates.size() == b.candidates.size());
  for (size_t k = 0; k < a.candidates.size(); ++k) {
    CAPTURE(k);
    const TuneCandidate &x = a.candidates[k], &y = b.candidates[k];
    CHECK(x.index == y.index);
    CHECK(x.draw == y.draw);
    CHECK(x.phase == y.phase);
    CHECK(x.status == y.status);
    CHECK(x.ms == y.ms);
  }
  REQUIRE(a.best());
  REQUIRE(b.best());
  CHECK(a.best()->index == b.best()->index);
  CHECK(a.rounds == b.rounds);
}

std::vector<std::string> with(std::vector<std::string> words, const std::string& flag) {
  words.push_back(flag);
  return words;
}

TEST_CASE("the GPU times a round while the next one is checked: the wall time is less than checking plus timing") {
  // dyt's first two rounds at these sizes are drawn at random (half the budget is not spent before
  // the third); checking a round takes a good part of the time the model GPU (15 ms a candidate)
  // takes to time one (--check-only here: ~0.56 s for the three rounds; at 64 x 2048, since the
  // check's reference got faster, ~0.15 s, too close to the 0.1 s asked of the overlap)
  std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=256", "--arg", "y_SIZE=4096", "--budget", "64", "--seed", "2"};
  int timed = 0, timed_seq = 0;
  TuneResult r = run_model(words, 15, &timed);
  CHECK(r.rounds >= 3);
  CHECK(r.overlap_seconds > 0.1);
  CHECK(r.overlap_seconds <= std::min(r.check_seconds, r.timing_seconds) + 1e-9);
  CHECK(r.seconds < r.check_seconds + r.timing_seconds);
  TuneResult seq = run_model(with(words, "--no-overlap"), 15, &timed_seq);
  CHECK(seq.overlap_seconds == 0);
  CHECK(seq.seconds >= seq.check_seconds + seq.timing_seconds);
  check_same(r, seq);
  CHECK(timed == timed_seq);
  CHECK(std::any_of(r.candidates.begin(), r.candidates.end(), [](const TuneCandidate& c) { return c.phase == "refined"; }));
}

TEST_CASE("overlapped or not, the same search: candidates, order, statuses, times and best, for several seeds and budgets") {
  for (const char* seed : {"1", "3", "5"})
    for (const char* budget : {"40", "100"}) {
      CAPTURE(seed);
      CAPTURE(budget);
      std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", budget, "--seed", seed};
      TuneResult r = run_model(words, 1), seq = run_model(with(words, "--no-overlap"), 1);
      check_same(r, seq);
      CHECK(seq.overlap_seconds == 0);
    }
  // an exhaustive search: nothing refines, every round overlaps the next
  TuneResult r = run_model({src("tests/tune/tiny.dt")}, 1), seq = run_model({src("tests/tune/tiny.dt"), "--no-overlap"}, 1);
  check_same(r, seq);
  CHECK(r.count("timed") == 48);
}

TEST_CASE("a GPU that fails on the timing thread ends the search with its error, overlapped or not") {
  for (bool overlap : {true, false}) {
    CAPTURE(overlap);
    std::vector<std::string> words = {src("examples/dyt.dt"), "--arg", "x_SIZE=16", "--arg", "y_SIZE=256", "--budget", "100", "--seed", "1"};
    if (!overlap) words.push_back("--no-overlap");
    ModelTimer timer;
    timer.fail_after = 40;  // in the second round, while the third is checked
    std::ostringstream out, err;
    CHECK_THROWS_WITH_AS(tune_command_with_timer(words, &timer, out, err), doctest::Contains("the model GPU fell off the bus"), UserError);
    CHECK(timer.timed == 40);
  }
}
