// `dtsim tune --write-best`: the searched .dt text with its schedule calls replaced by the fastest
// candidate's, under a comment that says where and when that schedule was measured (Tune.h).
#include <algorithm>
#include <sstream>

#include "host/Text.h"
#include "tune/Tune.h"

namespace dtsim {

namespace {

const char kNoteMarker[] = "# dtsim tune:";

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Words folded into comment lines of at most `width` characters: the first starts with `first`,
// the others with "#   ". A '\x01' joins two words that stay on one line (a time and its unit).
std::vector<std::string> fold_comment(const std::string& first, const std::string& words, size_t width) {
  std::vector<std::string> out{first};
  std::istringstream in(words);
  for (std::string w; in >> w;) {
    for (char& c : w)
      if (c == '\x01') c = ' ';
    if (out.back().size() + 1 + w.size() > width && out.back().size() > 4) out.push_back("#  ");
    out.back() += " " + w;
  }
  return out;
}

}  // namespace

std::string tune_best_source(const std::string& text, const std::vector<SourceLoc>& calls, const TuneResult& r,
                             const std::string& date) {
  const TuneCandidate* best = r.best();
  if (!best) throw UserError("--write-best: no schedule was timed (timing " + r.timing + "), so there is no fastest schedule to write");
  std::vector<std::string> lines = split_lines(text);
  // The lines the schedule calls take: from the first call's line to the line of the ';' that ends
  // the last (a call may run over several lines; a '#' starts a comment).
  size_t first = lines.size(), last = 0;
  for (const SourceLoc& l : calls) {
    if (l.line < 1 || static_cast<size_t>(l.line) > lines.size()) continue;
    first = std::min(first, static_cast<size_t>(l.line - 1));
    size_t at = static_cast<size_t>(l.line - 1), col = static_cast<size_t>(std::max(l.col - 1, 0));
    for (; at < lines.size(); ++at, col = 0) {
      const std::string& s = lines[at];
      size_t hash = s.find('#', col), semi = s.find(';', col);
      if (semi != std::string::npos && (hash == std::string::npos || semi < hash)) break;
    }
    last = std::max(last, std::min(at, lines.size() - 1));
  }
  if (first == lines.size()) throw UserError("--write-best: " + r.file + " has no schedule calls to replace");
  // A note of an earlier --write-best right above the calls is replaced, not stacked.
  size_t note = first;
  while (note > 0 && starts_with(lines[note - 1], "#   ")) --note;
  if (note > 0 && starts_with(lines[note - 1], kNoteMarker)) first = note - 1;

  size_t timed = r.count("timed");
  std::string what = "the fastest of " + std::to_string(timed) + " timed schedule" + (timed == 1 ? "" : "s");
  std::string seed = "seed " + std::to_string(r.seed);
  if (r.budget) what += " (budget " + std::to_string(r.budget) + ", " + seed + ")";
  else what += " (" + fmt("%g", r.time_s) + " s, " + seed + ")";
  what += " at " + r.sizes;
  if (!r.device.empty()) what += " on " + r.device;
  what += " through " + r.backend + ", " + date + ": " + fmt("%.4g", *best->ms) + "\x01ms";
  for (const TuneReference& ref : r.references) what += "; " + ref.name + " " + fmt("%.4g", ref.ms) + "\x01ms";
  what += ".";
  std::vector<std::string> block = fold_comment(kNoteMarker, what, 100);
  for (const std::string& l : split_lines(best->schedule))
    if (!l.empty()) block.push_back(l);

  std::string out;
  for (size_t i = 0; i < first; ++i) out += lines[i] + "\n";
  for (const std::string& l : block) out += l + "\n";
  for (size_t i = last + 1; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace dtsim
