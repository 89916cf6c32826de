// The debugger: conditional breakpoints and prints keyed on program ids, and the REPL that steps
// through statements and program instances. It drives the interpreter only through DebugHooks.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interp/Interp.h"

namespace dtsim {

// What the REPL keeps across the launches of one program (a Python script launching kernels one
// after the other; each launch builds a new Session): the breakpoints and watchpoints as the user
// left them (deleted, disabled, conditions changed), the display expressions, the numbering, and
// which --break-if/--break-at texts were already turned into breakpoints. A breakpoint that does not
// apply to a launch (its line is not in that kernel, its names are not defined there) is kept and
// comes back in the launches where it applies. `findings` are those the current launch's session
// saw (they survive a `quit`, which unwinds the run).
struct DebugMemory {
  struct Bp {
    int id = 0;
    int kind = 0;          // Breakpoint::Kind
    std::string text;      // Cond: the condition; Watch: the expression; Line: "FILE:LINE"
    std::string cond;      // Line: the condition ("" = none)
    bool enabled = true;
    int64_t hits = 0;
  };
  struct Disp {
    int id = 0;
    std::string expr, mask;
  };
  std::vector<Bp> bps;
  std::vector<Disp> displays;
  int next_bp_id = 1, next_display_id = 1;
  std::set<std::string> seeded;  // "if:COND" / "at:SPEC" already added
  std::vector<Finding> findings;
};

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
  std::shared_ptr<DebugMemory> memory;  // kept across launches (nullptr: this run only)
  // The host program's side of this launch, shown by `where` above the kernel frame: its call
  // stack, outermost first ("script.py:42 in main: add[grid](x, y, out, n)"), and the launch's
  // number among the program's launches (0 = not given).
  std::vector<std::string> host_stack;
  int launch = 0;
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
