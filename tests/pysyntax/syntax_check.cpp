// The .py reader's whole-file syntax check on files named on the command line (or, with '-', one
// path per line of stdin): one line per file, "ok" or "error LINE:COL MESSAGE". Used by
// fuzz_syntax.py, which compares the verdicts with Python's own parser.
#include <iostream>
#include <string>

#include "ir/Diag.h"
#include "pyfront/PySyntax.h"

int main(int argc, char** argv) {
  auto one = [](const std::string& path) {
    int mark = dtsim::Sources::add("<mark>", "");
    try {
      dtsim::py::check_python_syntax(dtsim::Sources::load(path));
      std::cout << "ok\n";
    } catch (const dtsim::UserError& e) {
      std::string m = e.what();
      for (char& c : m)
        if (c == '\n') c = ' ';
      std::cout << "error " << e.loc.line << ":" << e.loc.col << " " << m << "\n";
    }
    dtsim::Sources::drop_from(mark);
  };
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-") {
      std::string line;
      while (std::getline(std::cin, line)) one(line);
    } else {
      one(argv[i]);
    }
  }
  return 0;
}
