// `dtsim tune --write-best`: the searched .dt file rewritten with the fastest schedule (timed by the
// model of the GPU), its declarations and comments kept, a note naming the search above the calls,
// the note replaced (not stacked) when the written file is searched again, and nothing written when
// nothing was timed.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "ir/Diag.h"
#include "tune/Tune.h"
#include "tune_model_timer.h"
#include "tune_test_files.h"

using namespace dtsim;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The "best schedule" block of the text report: the calls (lines ending in ';') after its heading.
std::vector<std::string> reported_best(const std::string& text) {
  const std::string head = "best schedule (paste it in place of the file's schedule):\n";
  size_t at = text.find(head);
  REQUIRE(at != std::string::npos);
  std::istringstream lines(text.substr(at + head.size()));
  std::vector<std::string> calls;
  for (std::string l; std::getline(lines, l) && !l.empty() && l.back() == ';';) calls.push_back(l);
  return calls;
}

// The note's comment lines joined back into one line.
std::string unfolded(std::string s) {
  for (size_t at; (at = s.find("\n#   ")) != std::string::npos;) s.replace(at, 5, " ");
  return s;
}

}  // namespace

TEST_CASE("--write-best writes the searched file with the fastest schedule and a note") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtsim-tune-write-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string first = (dir / "dyt_best.dt").string(), second = (dir / "dyt_best2.dt").string();
  ModelTimer timer;
  std::ostringstream out, err;
  int rc = tune_command_with_timer({src("examples/dyt.dt"), "--arg", "x_SIZE=128", "--arg", "y_SIZE=4096", "--budget", "24",
                                    "--seed", "1", "--ref", "torch=1.5", "--write-best", first},
                                   &timer, out, err);
  INFO(out.str());
  INFO(err.str());
  REQUIRE(rc == 0);
  std::string original = read(src("examples/dyt.dt")), written = read(first);
  // The declarations and definitions (everything before the schedule calls) are the file's own.
  // (dyt.dt itself carries a note of an earlier --write-best above its calls: it is replaced.)
  size_t calls = std::min(original.find("\n# dtsim tune:"), original.find("\ndyt."));
  REQUIRE(calls != std::string::npos);
  CHECK(written.compare(0, calls + 1, original, 0, calls + 1) == 0);
  CHECK(count(written, "# dtsim tune:") == 1);
  std::string note = unfolded(written);
  CHECK(note.find("# dtsim tune: the fastest of 24 timed schedules (budget 24, seed 1) at x=128 y=4096 on model through "
                  "dtsim's CUDA backend") != std::string::npos);
  CHECK(note.find("; torch 1.5 ms.") != std::string::npos);
  size_t own = note.find("; file's schedule ");
  REQUIRE(own != std::string::npos);
  CHECK(note.find(" ms", own) < note.find('\n', own));  // a time, its unit on the same line
  // The calls written are the reported best schedule's, in its order, right after the note.
  std::vector<std::string> best = reported_best(out.str());
  REQUIRE(best.size() >= 2);
  std::string block;
  for (const std::string& l : best) block += l + "\n";
  CHECK(written.find(block) != std::string::npos);
  CHECK(written.size() == written.find(block) + block.size());  // dyt.dt ends with its calls

  // Searching the written file again replaces its note instead of adding one.
  std::ostringstream out2, err2;
  rc = tune_command_with_timer({first, "--arg", "x_SIZE=128", "--arg", "y_SIZE=4096", "--budget", "8", "--seed", "1",
                                "--write-best", second},
                               &timer, out2, err2);
  INFO(err2.str());
  REQUIRE(rc == 0);
  std::string again = read(second);
  CHECK(count(again, "# dtsim tune:") == 1);
  CHECK(count(again, ".compile") == count(original, ".compile"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("--write-best with nothing timed is an error and writes no file") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtsim-tune-write0-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "never.dt").string(), csv = (dir / "t.csv").string();
  std::ostringstream out, err;
  CHECK_THROWS_WITH_AS(tune_command_with_timer({src("examples/dyt.dt"), "--arg", "x_SIZE=128", "--arg", "y_SIZE=4096", "--budget",
                                                "4", "--check-only", "--csv", csv, "--write-best", path},
                                               nullptr, out, err),
                       doctest::Contains("--write-best needs timed schedules, and timing is skipped here: --check-only"), UserError);
  CHECK(!std::filesystem::exists(path));
  CHECK(!std::filesystem::exists(csv));
  std::filesystem::remove_all(dir);
}

TEST_CASE("GB/s counts the program's inputs and outputs once, not the file's materialized intermediate") {
  ModelTimer timer;
  std::ostringstream out, err;
  // rmsnorm_materialized.dt's own schedule reads X in two kernels and writes and reads the scratch
  // ms; the program's data is X and w read once and rms written once.
  int rc = tune_command_with_timer({src("examples/rmsnorm_materialized.dt"), "--arg", "x_SIZE=64", "--arg", "y_SIZE=256", "--budget",
                                    "4", "--json"},
                                   &timer, out, err);
  INFO(err.str());
  REQUIRE(rc == 0);
  CHECK(out.str().find("\"bytes\": " + std::to_string(4 * (64 * 256 * 2 + 256)) + ",") != std::string::npos);
}
