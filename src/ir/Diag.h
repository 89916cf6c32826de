// Diagnostics: source locations, the registry of source texts, and user/internal errors.
//
// Every user-facing error has the form
//   file:line:col: error: message
//     <the source line>
//     ^
// `UserError` is the user's mistake (bad input); `InternalError` is a bug in dtsim and names the pass.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim {

// A position in a registered source text. file == -1 means "no location".
struct SourceLoc {
  int file = -1;
  int line = 0;  // 1-based
  int col = 0;   // 1-based
  bool valid() const { return file >= 0 && line > 0; }
  bool operator==(const SourceLoc&) const = default;
};

// Registry of every source text dtsim has read (files, `--break-if` conditions, REPL input), so that
// any location can be printed with its line and a caret. Thread-safe for reads after registration.
class Sources {
 public:
  // Registers `text` under `name` (a path, or a pseudo name like "<break-if>") and returns its id.
  static int add(std::string name, std::string text);
  // Reads a file from disk and registers it; throws UserError("cannot open ...") when unreadable.
  static int load(const std::string& path);
  static const std::string& name(int file);
  static const std::string& text(int file);
  // The 1-based line `line` of `file` without its newline ("" when out of range).
  static std::string line(int file, int line);
  // Drops `file` and every source registered after it (a fuzzer registers one input per iteration;
  // nothing may refer to a dropped source afterwards).
  static void drop_from(int file);
};

// "file:line:col" (or "<unknown>").
std::string format_loc(const SourceLoc& loc);
// The full diagnostic: "file:line:col: <severity>: msg\n  <source line>\n  <caret>\n".
// Without a valid location: "dtsim: <severity>: msg\n".
std::string format_diag(const SourceLoc& loc, const std::string& severity, const std::string& msg);

// The user's mistake: bad source, bad flags, bad files. Printed with format_diag.
struct UserError : std::runtime_error {
  SourceLoc loc;
  UserError(SourceLoc l, const std::string& msg) : std::runtime_error(msg), loc(l) {}
  explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
  std::string render() const { return format_diag(loc, "error", what()); }
};

// A fault detected while running a kernel (out-of-bounds, failed assert, ...). Printed like UserError.
struct RuntimeFault : std::runtime_error {
  SourceLoc loc;
  RuntimeFault(SourceLoc l, const std::string& msg) : std::runtime_error(msg), loc(l) {}
  std::string render() const { return format_diag(loc, "error", what()); }
};

// A bug in dtsim, named by the pass that found it.
struct InternalError : std::logic_error {
  InternalError(const std::string& pass, const std::string& msg)
      : std::logic_error("internal error in " + pass + ": " + msg) {}
};

[[noreturn]] void user_error(SourceLoc loc, const std::string& msg);
[[noreturn]] void internal_error(const std::string& pass, const std::string& msg);

}  // namespace dtsim
