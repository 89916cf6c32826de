// Robustness: randomly mutated example files (deleted/inserted characters and keywords) must either
// lower to IR that verifies, or fail with a located UserError — never another exception or a crash.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "dt_harness.h"
#include "ir/Printer.h"
#include "ir/Verify.h"

using namespace dtsim;
using namespace dtsim::dttest;

TEST_CASE("mutated .dt inputs give a clean UserError or valid IR") {
  std::vector<std::string> texts;
  for (const std::string& f : dt_examples()) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back(ss.str());
  }
  std::mt19937_64 rng(2024);
  const std::string alphabet = "xyzkAB[](),;:.=+-*/<>0123456789 \n#_lmn";
  const std::vector<std::string> words = {"rsum", "rdot", "fuse_at", "block", "tensorize", "map", "Var", "RVar", "Func", "In", "SIn",
                                          "99999999999999999999", "1e400", "0", "x:0", "x1/8", "reshape", "len", ": f16", "compile()", "1.2.3"};
  int lowered = 0, rejected = 0;
  for (int it = 0; it < 3000; ++it) {
    std::string t = texts[rng() % texts.size()];
    for (int m = 0, n = 1 + static_cast<int>(rng() % 4); m < n; ++m) {
      size_t pos = rng() % (t.size() + 1);
      switch (rng() % 4) {
        case 0: if (pos < t.size()) t.erase(pos, 1 + rng() % 6); break;
        case 1: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: t.insert(pos, words[rng() % words.size()]); break;
        default: if (pos < t.size()) t[pos] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    try {
      auto p = parse_dt(Sources::add("mutant.dt", t));
      Module m = lower_dt(*p);
      Bindings b = bind_params(m, {});
      try {
        verify_module(m, b);
      } catch (const UserError& e) {
        // the only legal verifier complaint about lowered DT is a tile too large for the IR
        std::string w = e.what();
        CHECK_MESSAGE(w.find("element") != std::string::npos, std::string(e.render() + "\n" + t));
      }
      ++lowered;
    } catch (const UserError& e) {
      CHECK(e.loc.valid());
      ++rejected;
    } catch (const std::exception& e) {
      FAIL_CHECK("non-user exception: " << e.what() << "\n" << t);
    }
  }
  CHECK(lowered > 100);
  CHECK(rejected > 100);
}
