// Line input for the debugger REPL: readline (editing, history, completion) on a terminal, plain
// line-by-line reading with echo when stdin is not a terminal (scripted sessions).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtsim {

class LineReader {
 public:
  virtual ~LineReader() = default;
  // The next line without its newline; nullopt at end of input.
  virtual std::optional<std::string> read(const std::string& prompt) = 0;
};

// Picks readline when stdin is a TTY, else a reader that echoes "prompt line" to stdout.
// `history_file` ("" = none) is loaded at start and saved after every line; `complete` returns the
// candidates for the word being typed, given the line before that word and the word's prefix (so
// that they depend on the command: `info ` completes info's subcommands). A completed word is
// followed by a space unless `no_space` (a function name before its `(`, `tl.`, `FILE:`).
struct Completions {
  std::vector<std::string> words;
  bool no_space = false;
};
using Completer = std::function<Completions(const std::string& before, const std::string& prefix)>;
std::unique_ptr<LineReader> make_line_reader(const std::string& history_file, Completer complete);

// Reads lines from `in` and echoes "prompt line" to `echo` (scripted sessions and tests).
std::unique_ptr<LineReader> make_stream_reader(std::istream& in, std::ostream& echo);

}  // namespace dtsim
