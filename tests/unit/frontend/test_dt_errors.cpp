// Must-fail inputs tests/errors/dt/*.dt: each starts with `# expect-error: LINE:COL: SUBSTRING`;
// parsing (which includes the schedule-legality lowering) must throw a UserError rendered as
// `<path>:LINE:COL: error: ...SUBSTRING...` followed by the source line and a caret. Files with a
// `# args:` line fail only with those flags; they run through the dtsim command (tests/errors).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "frontend/DT.h"

using namespace dtsim;

TEST_CASE("every tests/errors/dt file fails with its expected located message") {
  std::vector<std::string> files;
  for (auto& e : std::filesystem::directory_iterator(std::string(DTSIM_SOURCE_DIR) + "/tests/errors/dt"))
    if (e.path().extension() == ".dt") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 8);
  for (const std::string& f : files) {
    CAPTURE(f);
    std::ifstream in(f);
    std::string first;
    std::getline(in, first);
    const std::string tag = "# expect-error: ";
    REQUIRE_MESSAGE(first.rfind(tag, 0) == 0, "first line must be `# expect-error: LINE:COL: MESSAGE`");
    std::string second;
    std::getline(in, second);
    if (second.rfind("# args:", 0) == 0) continue;  // an error of the command line's sizes: tests/errors/check_error.py runs it
    std::string spec = first.substr(tag.size());
    size_t c1 = spec.find(':'), c2 = spec.find(':', c1 + 1);
    std::string linecol = spec.substr(0, c2), substring = spec.substr(c2 + 2);
    std::string rendered;
    try {
      parse_dt_file(f);
    } catch (const UserError& e) {
      rendered = e.render();
    }
    REQUIRE_MESSAGE(!rendered.empty(), "no error was reported");
    CHECK_MESSAGE(rendered.find(f + ":" + linecol + ": error: ") == 0, rendered);
    CHECK_MESSAGE(rendered.find(substring) != std::string::npos, rendered);
    // line 2 is the source line, line 3 the caret under column COL
    size_t nl1 = rendered.find('\n'), nl2 = rendered.find('\n', nl1 + 1);
    std::string caret = rendered.substr(nl2 + 1);
    int col = std::stoi(linecol.substr(linecol.find(':') + 1));
    CHECK_MESSAGE(caret.find('^') == static_cast<size_t>(2 + col - 1), rendered);
  }
}
