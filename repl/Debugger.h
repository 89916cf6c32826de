// The debugger: conditional breakpoints and prints keyed on program ids, and the REPL that steps
// through statements and program instances. It drives the interpreter only through DebugHooks.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interp/Interp.h"

namespace dtsim {

struct DebugConfig {
  std::vector<std::string> break_if;  // --break-if COND (also the positional form '=0,>1')
  struct PrintIf {
    std::string cond;
    std::vector<std::string> exprs;
    std::optional<int> at_line;       // --at LINE: the statement on that line (default: end of instance)
  };
  std::vector<PrintIf> print_if;      // --print-if COND EXPR[, EXPR...]
  std::vector<std::string> break_at;  // --break-at FILE:LINE [if COND]
  bool stop_at_start = false;         // `dtsim debug`: stop before the first statement
  std::string history_file;           // readline history ("" = $DTSIM_HISTORY, else ~/.dtsim_history)
  std::istream* input = nullptr;      // REPL commands from this stream, echoed to `out` (scripted
                                      // sessions, tests); nullptr = readline on a terminal, else stdin
};

// Thrown by the REPL's `run`/`restart`: the caller re-creates the buffers and runs again with the
// same hooks object. `quit` throws QuitRequest.
struct RestartRequest {};
struct QuitRequest {};

class Debugger;
// Checks every condition and expression against the verified module now (UserError with a caret
// under the condition text for syntax errors and unknown names) and returns the hooks to pass in
// InterpOptions::hooks. `out` receives prints and the REPL transcript.
std::unique_ptr<DebugHooks> make_debugger(const Module& m, const Bindings& b, const DebugConfig& cfg, std::ostream& out);

}  // namespace dtsim
