// Small text helpers of the reports the tools print, write and read back (bench, tune).
#pragma once

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace dtsim {

// printf-style formatting of one number.
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A JSON string literal: quotes, backslashes and control characters escaped.
inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) o += fmt("\\u%04x", c);
    else o += c;
  }
  return o + "\"";
}

// The whole contents of the file at `path` (bytes as they are), or nullopt when it cannot be opened.
inline std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace dtsim
