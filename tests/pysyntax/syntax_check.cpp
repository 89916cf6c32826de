// The .py reader's whole-file syntax check on files named on the command line (or, with '-', one
// path per line of stdin): one line per file, "ok" or "error LINE:COL MESSAGE". Used by
// fuzz_syntax.py, which compares the verdicts with Python's own parser. With --unicode-names, reads
// names from stdin instead and answers, per line, 1 or 0: whether `\N{NAME}` is accepted (after a
// first line that says where the name table comes from), for test_unicode_names.py.
#include <iostream>
#include <string>

#include "ir/Diag.h"
#include "pyfront/PySyntax.h"
#include "pyfront/UnicodeNames.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--unicode-names") {
    const char* src = dtsim::py::unicode_names_source();
    std::cout << (src ? src : "form only") << "\n";
    std::string line;
    while (std::getline(std::cin, line)) std::cout << (dtsim::py::unicode_name_accepted(line) ? "1\n" : "0\n");
    return 0;
  }
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
