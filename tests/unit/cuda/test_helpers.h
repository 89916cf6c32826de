// Text helpers shared by the CUDA backend's unit tests: a source file of the tree read whole, one
// replacement in a kernel's text (the text must hold it), and how often a plan or PTX holds a string.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace dtsim::test {

// The file at `path` below the source tree (e.g. "tests/gpu/tma_matmul.tile").
inline std::string source_file(const std::string& path) {
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/" + path);
  REQUIRE(in.is_open());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `s` with its first `from` replaced by `to`.
inline std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The number of (possibly overlapping) occurrences of `what` in `text`.
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace dtsim::test
