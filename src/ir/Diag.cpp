// Diagnostics: the source registry and error formatting.
#include "ir/Diag.h"

#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>

namespace dtsim {

namespace {
struct SourceEntry {
  std::string name;
  std::string text;
  std::vector<size_t> line_starts;
};
std::mutex g_mu;
std::deque<SourceEntry> g_sources;  // deque: references stay valid while new entries are added

const SourceEntry& entry(int file) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (file < 0 || file >= static_cast<int>(g_sources.size())) internal_error("Sources", "bad file id");
  return g_sources[static_cast<size_t>(file)];
}
}  // namespace

int Sources::add(std::string name, std::string text) {
  SourceEntry e{std::move(name), std::move(text), {0}};
  for (size_t i = 0; i < e.text.size(); ++i)
    if (e.text[i] == '\n') e.line_starts.push_back(i + 1);
  std::lock_guard<std::mutex> lock(g_mu);
  g_sources.push_back(std::move(e));
  return static_cast<int>(g_sources.size()) - 1;
}

int Sources::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return add(path, ss.str());
}

void Sources::drop_from(int file) {
  std::lock_guard<std::mutex> lock(g_mu);
  while (file >= 0 && static_cast<int>(g_sources.size()) > file) g_sources.pop_back();
}

const std::string& Sources::name(int file) { return entry(file).name; }
const std::string& Sources::text(int file) { return entry(file).text; }

std::string Sources::line(int file, int line) {
  const SourceEntry& e = entry(file);
  if (line < 1 || line > static_cast<int>(e.line_starts.size())) return "";
  size_t b = e.line_starts[static_cast<size_t>(line - 1)];
  size_t end = e.text.find('\n', b);
  if (end == std::string::npos) end = e.text.size();
  std::string s = e.text.substr(b, end - b);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

std::string format_loc(const SourceLoc& loc) {
  if (!loc.valid()) return "<unknown>";
  return Sources::name(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

std::string format_diag(const SourceLoc& loc, const std::string& severity, const std::string& msg) {
  if (!loc.valid()) return "dtsim: " + severity + ": " + msg + "\n";
  std::string out = format_loc(loc) + ": " + severity + ": " + msg + "\n";
  std::string src = Sources::line(loc.file, loc.line);
  out += "  " + src + "\n  ";
  // Keep tabs so the caret lines up under the same columns.
  for (int i = 1; i < loc.col && i - 1 < static_cast<int>(src.size()); ++i)
    out += src[static_cast<size_t>(i - 1)] == '\t' ? '\t' : ' ';
  out += "^\n";
  return out;
}

void user_error(SourceLoc loc, const std::string& msg) { throw UserError(loc, msg); }
void internal_error(const std::string& pass, const std::string& msg) { throw InternalError(pass, msg); }

}  // namespace dtsim
