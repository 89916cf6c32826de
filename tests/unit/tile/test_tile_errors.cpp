// Must-fail inputs: every tests/errors/tile/*.tile starts with
//   # expect-error: LINE:COL: MESSAGE-SUBSTRING
// and parsing + binding defaults + verifying it must raise a UserError rendered as
// "<path>:LINE:COL: error: ...MESSAGE-SUBSTRING..." followed by the source line and a caret line.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tile_test_util.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {

struct Expectation {
  std::string where;  // "LINE:COL"
  std::string message;
};

std::optional<Expectation> read_expectation(const fs::path& p) {
  std::ifstream in(p);
  std::string first;
  std::getline(in, first);
  const std::string tag = "# expect-error: ";
  if (first.rfind(tag, 0) != 0) return std::nullopt;
  std::string rest = first.substr(tag.size());
  size_t c1 = rest.find(':');
  size_t c2 = c1 == std::string::npos ? c1 : rest.find(':', c1 + 1);
  if (c2 == std::string::npos) return std::nullopt;
  std::string msg = rest.substr(c2 + 1);
  msg.erase(0, msg.find_first_not_of(' '));
  return Expectation{rest.substr(0, c2), msg};
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("every must-fail tile file fails where and how it says") {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(DTSIM_SOURCE_DIR "/tests/errors/tile"))
    if (e.path().extension() == ".tile") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 15);
  for (const fs::path& path : files) {
    CAPTURE(path.filename().string());
    auto want = read_expectation(path);
    REQUIRE_MESSAGE(want, "first line must be '# expect-error: LINE:COL: MESSAGE'");
    std::string rendered;
    try {
      Module m = parse_tile_file(path.string());
      verify_module(m, bind_params(m, {}));
    } catch (const UserError& e) {
      rendered = e.render();
    }
    REQUIRE_MESSAGE(!rendered.empty(), "no error was raised");
    CAPTURE(rendered);
    CHECK(rendered.find(path.string() + ":" + want->where + ": error: ") == 0);
    CHECK(rendered.find(want->message) != std::string::npos);
    auto lines = lines_of(rendered);
    REQUIRE(lines.size() >= 3);
    std::string caret = lines[2];
    CHECK(caret.find_first_not_of(" \t") == caret.find('^'));
    CHECK(caret.back() == '^');
  }
}

TEST_CASE("gather(): operand checks") {
  using tiletest::error_of;
  CHECK(error_of("kernel k(x: *f32[8]) grid(1) {\n  v = gather(load(x + arange(0, 8)), arange(0, 8).to(f32), axis=0)\n}\n", "g1.tile")
            .find("g1.tile:2:7: error: gather() needs a tile and an integer index tile of the same rank") == 0);
  CHECK(error_of("kernel k(x: *f32[8]) grid(1) {\n  v = gather(load(x + arange(0, 8)), arange(0, 8), axis=1)\n}\n", "g2.tile")
            .find("g2.tile:2:7: error: axis 1 is out of range for f32[8]") == 0);
  CHECK(error_of("kernel k(x: *f32[8]) grid(1) {\n  v = gather(reshape(load(x + arange(0, 8)), [2, 4]), reshape(arange(0, 8), [4, 2]), axis=1)\n}\n", "g3.tile")
            .find("g3.tile:2:7: error: gather(): the index i32[4, 2] must match the source f32[2, 4] outside axis 1") == 0);
}

TEST_CASE("histogram(): operand checks") {
  using tiletest::error_of;
  auto err = [](const std::string& body) {
    return error_of("kernel k(x: *i32[8], y: *f32[8]) grid(1) {\n  r = arange(0, 8)\n  h = " + body + "\n}\n", "h.tile");
  };
  CHECK(err("histogram(load(y + r), 8)").find("h.tile:3:7: error: histogram() needs a 1-D integer tile, got f32[8]") == 0);
  CHECK(err("histogram(load(x), 8)").find("h.tile:3:7: error: histogram() needs a 1-D integer tile, got i32") == 0);
  CHECK(err("histogram(reshape(r, [2, 4]), 8)").find("h.tile:3:7: error: histogram() needs a 1-D integer tile, got i32[2, 4]") == 0);
  CHECK(err("histogram(r == 1, 8)").find("h.tile:3:7: error: histogram() needs a 1-D integer tile, got i1[8]") == 0);
  CHECK(err("histogram(r, 12)").find("h.tile:3:20: error: histogram(): the number of bins must be a power of two, got 12") == 0);
  CHECK(err("histogram(r, 0)").find("h.tile:3:20: error: histogram(): the number of bins must be a power of two, got 0") == 0);
  CHECK(err("histogram(r, 2097152)").find("h.tile:3:7: error: tile [2097152] has more than 2^20 elements") == 0);
  CHECK(err("histogram(r, 8, mask=r < arange(0, 16))").find("h.tile:3:30: error: shapes [8] and [16] do not broadcast") == 0);
  CHECK(err("histogram(r, 8, mask=arange(0, 4) < 2)").find("h.tile:3:41: error: histogram(): the mask must be an i1 tile of the input's shape [8], got i1[4]") == 0);
  CHECK(err("histogram(r, 8, mask=r)").find("h.tile:3:28: error: histogram(): the mask must be an i1 tile of the input's shape [8], got i32[8]") == 0);
  CHECK(err("histogram(r, n)").find("h.tile:3:20: error: 'n' is not a constexpr parameter; this must be a compile-time constant") == 0);
}
