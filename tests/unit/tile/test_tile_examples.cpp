// Round trip and golden text of every example: parse, bind defaults, verify, print; the printed
// text must parse and print back to itself and match tests/golden/tile/<relative path>.expected.
// DTSIM_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tile_test_util.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> tile_examples() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(DTSIM_SOURCE_DIR "/examples"))
    if (e.is_regular_file() && e.path().extension() == ".tile") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first differing line of two texts, as "line N:\n  expected: ...\n  actual:   ...".
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int n = 1;; ++n) {
    bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea && eb) return "(texts differ only in line endings)";
    if (ea) la = "<end of file>";
    if (eb) lb = "<end of file>";
    if (ea || eb || la != lb)
      return "line " + std::to_string(n) + ":\n  expected: " + la + "\n  actual:   " + lb;
  }
}

}  // namespace

TEST_CASE("there are tile examples, including the planted bugs") {
  auto ex = tile_examples();
  CHECK(ex.size() >= 10);
  CHECK(std::any_of(ex.begin(), ex.end(), [](const fs::path& p) { return p.parent_path().filename() == "bugs"; }));
}

TEST_CASE("every tile example verifies, round-trips and matches its golden text") {
  const bool update = std::getenv("DTSIM_UPDATE_GOLDEN") && std::string(std::getenv("DTSIM_UPDATE_GOLDEN")) == "1";
  const fs::path examples = DTSIM_SOURCE_DIR "/examples";
  for (const fs::path& path : tile_examples()) {
    const std::string rel = fs::relative(path, examples).generic_string();
    CAPTURE(rel);
    std::string printed;
    try {
      Module m = parse_tile_file(path.string());
      Bindings b = bind_params(m, {});
      verify_module(m, b);
      printed = print_module(m);
      Module again = tiletest::parse_text(printed, rel + " (printed)");
      verify_module(again, bind_params(again, {}));
      CHECK_MESSAGE(print_module(again) == printed, "printing is not stable:\n" << first_difference(printed, print_module(again)));
    } catch (const UserError& e) {
      FAIL_CHECK(e.render());
      continue;
    }
    const fs::path golden = fs::path(DTSIM_SOURCE_DIR "/tests/golden/tile") / (rel + ".expected");
    if (update) {
      fs::create_directories(golden.parent_path());
      std::ofstream(golden, std::ios::binary) << printed;
      continue;
    }
    if (!fs::exists(golden)) {
      FAIL_CHECK("missing golden file " << golden.string() << " (run with DTSIM_UPDATE_GOLDEN=1)");
      continue;
    }
    std::string want = read_file(golden);
    CHECK_MESSAGE(want == printed, "printed text differs from " << golden.string() << " at "
                                                                << first_difference(want, printed)
                                                                << "\n(run with DTSIM_UPDATE_GOLDEN=1 to accept)");
  }
}
