// Line input for the debugger REPL (see LineReader.h).
#include "repl/LineReader.h"

#include "interp/RunControl.h"

#include <readline/history.h>
#include <readline/readline.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>

namespace dtsim {

namespace {

Completer g_complete;
std::vector<std::string> g_matches;
std::string g_before;  // the line before the word being completed

char* completion_generator(const char*, int state) {
  if (state < 0 || static_cast<size_t>(state) >= g_matches.size()) return nullptr;
  return strdup(g_matches[static_cast<size_t>(state)].c_str());
}

// Ctrl-C at the prompt: readline has already passed the signal on (the flag is set); drop the line
// being typed and show a fresh prompt, as a shell does.
int on_signal_event() {
  if (take_sigint()) {
    rl_replace_line("", 0);
    rl_crlf();
    rl_on_new_line();
    rl_redisplay();
  }
  return 0;
}

char** completion(const char* text, int start, int) {
  rl_attempted_completion_over = 1;  // no filename completion
  g_before.assign(rl_line_buffer, static_cast<size_t>(std::max(0, start)));
  Completions c = g_complete ? g_complete(g_before, text) : Completions{};
  g_matches = std::move(c.words);
  rl_completion_append_character = c.no_space ? '\0' : ' ';
  return rl_completion_matches(text, completion_generator);
}

class ReadlineReader : public LineReader {
 public:
  ReadlineReader(std::string history, Completer complete)
      : history_(std::move(history)) {
    g_complete = std::move(complete);
    rl_attempted_completion_function = completion;
    rl_signal_event_hook = on_signal_event;
    using_history();
    stifle_history(1000);
    if (!history_.empty()) read_history(history_.c_str());
  }
  std::optional<std::string> read(const std::string& prompt) override {
    char* line = readline(prompt.c_str());
    if (!line) return std::nullopt;
    std::string s(line);
    std::free(line);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();  // completion adds a space
    if (!s.empty()) {
      add_history(s.c_str());
      if (!history_.empty()) write_history(history_.c_str());
    }
    return s;
  }

 private:
  std::string history_;
};

class EchoReader : public LineReader {
 public:
  EchoReader(std::istream& in, std::ostream& echo) : in_(in), echo_(echo) {}
  std::optional<std::string> read(const std::string& prompt) override {
    std::string s;
    if (!std::getline(in_, s)) return std::nullopt;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    echo_ << prompt << s << "\n" << std::flush;
    return s;
  }

 private:
  std::istream& in_;
  std::ostream& echo_;
};

}  // namespace

std::unique_ptr<LineReader> make_line_reader(const std::string& history_file, Completer complete) {
  if (isatty(STDIN_FILENO)) return std::make_unique<ReadlineReader>(history_file, std::move(complete));
  return std::make_unique<EchoReader>(std::cin, std::cout);
}

std::unique_ptr<LineReader> make_stream_reader(std::istream& in, std::ostream& echo) {
  return std::make_unique<EchoReader>(in, echo);
}

}  // namespace dtsim
