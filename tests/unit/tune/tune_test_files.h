// File helpers of tune's tests: a path in the source tree, and a file's whole text ("" when it
// cannot be read).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace dtsim {

inline std::string src(const std::string& rel) { return std::string(DTSIM_SOURCE_DIR) + "/" + rel; }

inline std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace dtsim
