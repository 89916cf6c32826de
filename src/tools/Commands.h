// The dtsim subcommands, each taking parsed options and returning the process exit status
// (0 ok; 1 a finding, runtime fault or failed check; 2 bad usage or input — thrown as UserError).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/Args.h"

namespace dtsim {

// `dtsim run` and `dtsim debug`: parse, bind, verify, make buffers, run (interpreter or CUDA, under
// the debugger when asked), print findings and the summary, optionally --check, write --out files.
int run_command(const CliOptions& o, std::ostream& out, std::ostream& err);

// `dtsim emit --tile|--ast|--nvvm|--ptx|--triton`.
int emit_command(const CliOptions& o, std::ostream& out);

// `dtsim bench`: times every kernel (and the whole module) on the GPU or the interpreter.
int bench_command(const CliOptions& o, std::ostream& out, std::ostream& err);

// `dtsim viz`: runs the program on the interpreter under an access recorder and writes the picture
// (SVG or HTML) of which instance stored which element, or one instance's footprint (--pid).
int viz_command(const CliOptions& o, std::ostream& out, std::ostream& err);

// `dtsim tune FILE.dt [flags]`: `words` are the words after "tune" (its flags differ from the others').
int tune_command(const std::vector<std::string>& words, std::ostream& out, std::ostream& err);
std::string tune_help();

}  // namespace dtsim
