// The search of `dtsim tune` with its timing done by a model of the GPU (a TuneTimer whose time is
// a smooth function of the grid and num_warps), so that the path a GPU takes runs without one: the
// file's schedule is timed as a reference, random draws then refinement around the best, the best
// reported and within 10% counted, CSV/SVG written.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "tune/Tune.h"
#include "tune_model_timer.h"
#include "tune_test_files.h"

using namespace dtsim;

TEST_CASE("a sampled search times through the timer, refines around the best and reports it") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtsim-tune-search-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string csv = (dir / "t.csv").string(), svg = (dir / "t.svg").string();
  ModelTimer timer;
  std::ostringstream out, err;
  int rc = tune_command_with_timer({src("examples/dyt.dt"), "--arg", "x_SIZE=128", "--arg", "y_SIZE=4096", "--budget", "60",
                                    "--seed", "2", "--csv", csv, "--plot", svg, "--ref", "torch=1.3"},
                                   &timer, out, err);
  INFO(out.str());
  INFO(err.str());
  REQUIRE(rc == 0);
  std::string text = out.str();
  CHECK(text.find("timing through a model of the GPU on model") != std::string::npos);
  CHECK(text.find("(sampled)") != std::string::npos);
  CHECK(text.find("timed 60 on model through dtsim's CUDA backend") != std::string::npos);
  CHECK(text.find("file's schedule: ") != std::string::npos);  // the file's own schedule, timed first
  CHECK(text.find("torch: 1.300 ms") != std::string::npos);
  CHECK(text.find("best schedule (paste it in place of the file's schedule):\ndyt.") != std::string::npos);
  CHECK(timer.timed == 61);  // 60 candidates and the file's schedule

  std::string table = read(csv);
  CHECK(table.find(",refined,") != std::string::npos);  // the second half refines around the best
  CHECK(table.find(",random,") != std::string::npos);
  // The best of the refined half is at least as good as the best random draw.
  double best_random = 1e9, best_refined = 1e9;
  std::istringstream rows(table);
  std::string row;
  std::getline(rows, row);
  while (std::getline(rows, row)) {
    std::vector<std::string> f;
    std::stringstream cells(row);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    if (f.size() < 4 || f[1] != "timed") continue;
    double ms = std::stod(f[3]);
    (f[2] == "random" ? best_random : best_refined) = std::min(f[2] == "random" ? best_random : best_refined, ms);
  }
  CHECK(best_refined <= best_random);
  CHECK(best_refined == doctest::Approx(1.0));  // the model's optimum: 128 instances, 4 warps

  std::string plot = read(svg);
  CHECK(plot.rfind("<svg", 0) == 0);
  CHECK(plot.find("file&apos;s schedule") == std::string::npos);
  CHECK(plot.find("file's schedule") != std::string::npos);
  CHECK(plot.find("torch 1.300 ms") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an exhaustive search with a timer: every schedule timed, the count within 10%") {
  ModelTimer timer;
  std::ostringstream out, err;
  int rc = tune_command_with_timer({src("tests/tune/tiny.dt"), "--json"}, &timer, out, err);
  REQUIRE(rc == 0);
  std::string j = out.str();
  CHECK(j.find("\"mode\": \"exhaustive\"") != std::string::npos);
  CHECK(j.find("\"timed\": 48") != std::string::npos);
  // x = 4: grids of 1 (unblocked, or a block of 4), 2 or 4 instances (blocks of 2 and 1); warps 1..32;
  // num_stages 1 or 3 (the model ignores it). The best, 4 instances with 4 warps, costs
  // 1 + 0.1 * |2 - 7| = 1.5; within 10% (1.65) also 4 instances with 2 or 8 warps and 2 instances
  // with 4 warps (1.6 each): 4, times 2 num_stages.
  CHECK(j.find("\"within_10pct\": 8") != std::string::npos);
  CHECK(j.find("\"best\": {\"index\": ") != std::string::npos);
  CHECK(j.find("\"ms\": 1.5,") != std::string::npos);
  CHECK(timer.timed == 49);
}

namespace {
// Runs `dtsim tune` with the model timer; the JSON result read back.
TuneResult run_model(std::vector<std::string> words, const std::string& out_json) {
  ModelTimer timer;
  std::ostringstream out, err;
  words.insert(words.end(), {"--out", out_json});
  REQUIRE(tune_command_with_timer(words, &timer, out, err) == 0);
  return tune_result_from_json(read(out_json), out_json);
}
}  // namespace

TEST_CASE("shards of a timed search, merged: the whole search when exhaustive, else at least its best before refining; the JSON reads back") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtsim-tune-shards-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = [&](const std::string& n) { return (dir / n).string(); };
  struct Case {
    std::vector<std::string> words;
    bool exhaustive;
  };
  std::vector<Case> cases = {
      {{src("tests/tune/tiny.dt")}, true},
      {{src("examples/dyt.dt"), "--arg", "x_SIZE=128", "--arg", "y_SIZE=4096", "--budget", "60", "--seed", "2"}, false},
  };
  for (const Case& c : cases) {
    TuneResult whole = run_model(c.words, path("whole.json"));
    REQUIRE(whole.best());
    for (uint64_t n : {2u, 3u}) {
      std::vector<TuneResult> parts;
      for (uint64_t i = 0; i < n; ++i) {
        std::vector<std::string> w = c.words;
        w.insert(w.end(), {"--shard", std::to_string(i) + "/" + std::to_string(n)});
        parts.push_back(run_model(w, path("s" + std::to_string(i) + ".json")));
        CHECK(parts.back().shard == i);
        CHECK(parts.back().shards == n);
      }
      std::string note;
      TuneResult merged = merge_tune_results(parts, &note);
      CHECK(note.find("missing") == std::string::npos);
      std::set<uint64_t> indices;
      for (const TuneCandidate& m : merged.candidates) CHECK(indices.insert(m.index).second);  // each schedule once
      if (!c.exhaustive)  // each shard refines (around its own fastest) once half the budget is spent
        for (const TuneResult& part : parts)
          CHECK(std::any_of(part.candidates.begin(), part.candidates.end(), [](const TuneCandidate& x) { return x.phase == "refined"; }));
      CHECK(merged.shards_merged.size() == n);
      REQUIRE(merged.best());
      // Every draw of the whole search that depends on no time (the file's schedule, the seeds, the
      // random half) is in exactly one shard, so the merged best is at least as fast as the best of
      // those; the refined half is each shard's own (around its own fastest).
      double before_refining = 1e300;
      for (const TuneCandidate& w : whole.candidates)
        if (w.ms && w.phase != "refined") before_refining = std::min(before_refining, *w.ms);
      CHECK(*merged.best()->ms <= before_refining);
      if (c.exhaustive) CHECK(*merged.best()->ms == doctest::Approx(*whole.best()->ms));
      CHECK(merged.within(0.10) >= 1);
      CHECK(merged.workers == n);
      if (c.exhaustive) {  // nothing depends on a time: the shards are the whole search
        CHECK(merged.best()->index == whole.best()->index);
        REQUIRE(merged.candidates.size() == whole.candidates.size());
        for (size_t k = 0; k < whole.candidates.size(); ++k) CHECK(merged.candidates[k].index == whole.candidates[k].index);
        CHECK(merged.within(0.10) == whole.within(0.10));
      }
      // Missing shards are reported; a shard twice is an error.
      std::vector<TuneResult> some(parts.begin(), parts.end() - 1);
      (void)merge_tune_results(some, &note);
      CHECK(note.find("missing " + std::to_string(n - 1) + "/" + std::to_string(n)) != std::string::npos);
      some.push_back(parts.front());
      CHECK_THROWS_WITH_AS(merge_tune_results(some, nullptr), doctest::Contains("is given twice"), UserError);
    }
    // What tune_json writes reads back whole.
    TuneResult back = tune_result_from_json(tune_json(whole), "whole.json");
    CHECK(back.candidates.size() == whole.candidates.size());
    CHECK(back.references.size() == whole.references.size());
    CHECK(tune_json(back) == tune_json(whole));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a result that is not tune's JSON: a located error") {
  CHECK_THROWS_WITH_AS(tune_result_from_json("{\"file\": \"f.dt\",\n  \"sizes\": 3}", "r.json"),
                       doctest::Contains("r.json:2:12: error: not a dtsim tune JSON result: \"sizes\" has the wrong type"), UserError);
  CHECK_THROWS_WITH_AS(tune_result_from_json("{\"file\": \n  [1, 2", "bad.json"), doctest::Contains("bad.json:2:8: error: not a dtsim tune JSON result"),
                       UserError);
}
