// Golden text of every example: the lowered tile IR (print_module) and the AST (print_dt_ast),
// compared with tests/golden/dt/<name>.{tile,ast}.expected. DTSIM_UPDATE_GOLDEN=1 rewrites them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dt_harness.h"
#include "ir/Printer.h"
#include "ir/TileParser.h"

using namespace dtsim;
using namespace dtsim::dttest;

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_golden(const std::string& path, const std::string& got) {
  const char* upd = std::getenv("DTSIM_UPDATE_GOLDEN");
  if (upd && std::string(upd) == "1") {
    std::ofstream(path) << got;
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(path), std::string(path + " is missing (regenerate with DTSIM_UPDATE_GOLDEN=1)"));
  std::string want = read(path);
  CHECK_MESSAGE(got == want, std::string(path + " differs; got:\n" + got));
}

// The AST printout names the file; keep the golden independent of the checkout path.
std::string strip_dir(std::string s) {
  std::string dir = std::string(DTSIM_SOURCE_DIR) + "/";
  for (size_t pos; (pos = s.find(dir)) != std::string::npos;) s.erase(pos, dir.size());
  return s;
}
}  // namespace

TEST_CASE("golden: lowered tile IR and AST of every DT example") {
  std::string dir = std::string(DTSIM_SOURCE_DIR) + "/tests/golden/dt/";
  std::filesystem::create_directories(dir);
  for (const std::string& f : dt_examples()) {
    CAPTURE(f);
    std::string name = std::filesystem::path(f).stem().string();
    auto p = parse_dt_file(f);
    Module m = lower_dt(*p);
    std::string tile = print_module(m);
    check_golden(dir + name + ".tile.expected", strip_dir(tile));
    check_golden(dir + name + ".ast.expected", strip_dir(print_dt_ast(*p)));
    // The printed IR is valid .tile text: it parses back and prints identically.
    int id = Sources::add(name + ".tile", tile);
    Module back = parse_tile(id);
    CHECK(print_module(back) == tile);
  }
}
