// How a round is checked: every draw lowered first, then the ones lowered legally checked, the
// costliest first, with the round's threads shared out among them (the interpreter's threads are
// bit-identical to one), each compiled for the timer beside its check. The verdicts are those of one
// thread checking in draw order; the report splits the checking threads' time into lowering, the
// interpreter check and the compile, and the JSON carries the three through a merge.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "tune/Tune.h"
#include "tune_model_timer.h"
#include "tune_test_files.h"

using namespace dtsim;

namespace {

struct Run {
  TuneResult r;
  int prepared = 0;
  std::string text;
};

Run run_model(std::vector<std::string> words) {
  std::string path = (std::filesystem::temp_directory_path() / ("dtsim-tune-checks-" + std::to_string(getpid()) + ".json")).string();
  ModelTimer timer;
  std::ostringstream out, err;
  words.insert(words.end(), {"--out", path});
  int rc = tune_command_with_timer(words, &timer, out, err);
  INFO(err.str());
  REQUIRE(rc == 0);
  Run run;
  run.r = tune_result_from_json(read(path), path);
  run.prepared = timer.prepared;
  run.text = out.str();
  std::filesystem::remove(path);
  return run;
}

}  // namespace

TEST_CASE("a round's checks on shared threads, costliest first, compiled beside: the verdicts of one thread in draw order") {
  // layernorm at these sizes: most random draws are illegal, so most rounds hold one to three checks
  // (each then gets several interpreter threads); the seeds' round holds many
  std::vector<std::string> words = {src("examples/layernorm.dt"), "--arg", "x_SIZE=40", "--arg", "y_SIZE=300", "--budget", "24", "--seed", "3"};
  std::vector<std::string> one = words, many = words;
  one.insert(one.end(), {"--jobs", "1"});
  many.insert(many.end(), {"--jobs", "6"});
  Run a = run_model(one), b = run_model(many);
  REQUIRE(a.r.candidates.size() == b.r.candidates.size());
  size_t passed = 0;
  for (size_t k = 0; k < a.r.candidates.size(); ++k) {
    CAPTURE(k);
    const TuneCandidate &x = a.r.candidates[k], &y = b.r.candidates[k];
    CHECK(x.index == y.index);
    CHECK(x.draw == y.draw);
    CHECK(x.status == y.status);
    CHECK(x.reason == y.reason);
    CHECK(x.ms == y.ms);
    if (x.status == "timed") ++passed;
  }
  CHECK(passed > 10);
  CHECK(a.r.count("illegal") > 0);
  CHECK(a.r.rounds == b.r.rounds);
  // every candidate lowered legally was given to the timer's compile beside its check
  CHECK(a.prepared == static_cast<int>(a.r.lowered()));
  CHECK(b.prepared == static_cast<int>(b.r.lowered()));
  // the checking threads' time, split
  for (const Run* run : {&a, &b}) {
    CHECK(run->r.interp_seconds > 0);
    CHECK(run->r.lower_seconds > 0);
    CHECK(run->r.compile_seconds >= 0);
    CHECK(run->text.find("checking threads: ") != std::string::npos);
  }
  // one thread: the three add up to no more than the checking's wall time (the compile runs beside
  // the check, so it may overlap it)
  CHECK(a.r.lower_seconds + a.r.interp_seconds <= a.r.check_seconds + 1e-6);
  // merged, the shards' stage seconds add up
  std::string note;
  TuneResult s0 = b.r, s1 = b.r;
  s0.shards = s1.shards = 2;
  s0.shard = 0;
  s1.shard = 1;
  s1.candidates.clear();
  TuneResult m = merge_tune_results({s0, s1}, &note);
  CHECK(m.interp_seconds == doctest::Approx(2 * b.r.interp_seconds));
  CHECK(m.compile_seconds == doctest::Approx(2 * b.r.compile_seconds));
  CHECK(m.lower_seconds == doctest::Approx(2 * b.r.lower_seconds));
}
