// The `dtsim` executable: subcommand dispatch and the top-level error handling (exit status 2 for
// the user's mistakes, 1 for runtime faults, 3 for bugs in dtsim; never a crash).
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "ir/Diag.h"
#include "tools/Args.h"
#include "tools/Commands.h"
#include "difftest/Difftest.h"

using namespace dtsim;

namespace {

bool is_help(const std::string& w) { return w == "--help" || w == "-h"; }

// A message that already names its file ("x.npy: error: ...") is printed as it is.
std::string render_user_error(const UserError& e) {
  if (e.loc.valid()) return e.render();
  std::string msg = e.what();
  size_t at = msg.find(": error: ");
  if (at != std::string::npos && msg.find(' ') > at) return msg + "\n";
  return e.render();
}

// `dtsim difftest`: its flags parsed as every command's (tools/Args.cpp), the sweep in src/difftest.
int difftest(const std::vector<std::string>& rest) {
  CliOptions o = parse_cli("difftest", rest);
  if (o.help) {
    std::cout << difftest_help();
    return 0;
  }
  DifftestOptions d;
  d.file = o.file;
  d.oracle_triton = o.oracle_triton;
  d.trials = o.trials;
  d.seed = o.seed;
  d.schedule_seed = o.schedule_seed;
  d.arch = o.arch;
  d.fast_math = o.fast_math;
  d.warp_specialize = o.warp_specialize;
  d.cluster = o.cluster;
  d.persistent = o.persistent;
  d.persistent_ctas = o.persistent_ctas;
  d.bounds_checks = o.bounds_checks;
  d.args = o.args;
  d.kernel = o.kernel;
  d.grid = o.grid_text;
  d.grid_items = o.grid;
  d.ins = o.ins;
  d.bufs = o.bufs;
  return difftest_command(d, std::cout, std::cerr);
}

int dispatch(const std::vector<std::string>& words) {
  if (words.empty()) {
    std::cerr << main_help();
    return 2;
  }
  const std::string& first = words[0];
  std::vector<std::string> rest(words.begin() + 1, words.end());
  if (is_help(first)) {
    std::cout << main_help();
    return 0;
  }
  if (first == "help") {
    std::cout << (rest.empty() ? main_help() : command_help(rest[0]));
    return 0;
  }
  if (first == "--version") {
    std::cout << version_line() << "\n";
    return 0;
  }
  if (first == "difftest") return difftest(rest);
  if (first == "tune") return tune_command(rest, std::cout, std::cerr);
  std::string command = first;
  if (first == "run" || first == "debug" || first == "emit" || first == "bench" || first == "viz") {
  } else if (first[0] == '-' || file_kind_of(first)) {
    command = "run";  // `dtsim [flags] FILE [flags]` means run
    rest = words;
  } else {
    throw UserError("unknown command '" + first + "' (see 'dtsim --help')");
  }
  CliOptions o = parse_cli(command, rest);
  if (o.help) {
    std::cout << command_help(command);
    return 0;
  }
  if (command == "emit") return emit_command(o, std::cout);
  if (command == "bench") return bench_command(o, std::cout, std::cerr);
  if (command == "viz") return viz_command(o, std::cout, std::cerr);
  return run_command(o, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  try {
    return dispatch(words);
  } catch (const UserError& e) {
    std::cout.flush();
    std::cerr << render_user_error(e);
    return 2;
  } catch (const RuntimeFault& e) {
    std::cout.flush();
    std::cerr << e.render();
    return 1;
  } catch (const InternalError& e) {
    std::cout.flush();
    std::cerr << "dtsim: " << e.what() << "\n"
              << "dtsim: this is a bug in dtsim; please report it with the command and input files that trigger it\n";
    return 3;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "dtsim: error: out of memory (are the sizes given with --arg too large?)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "dtsim: internal error: " << e.what() << "\n"
              << "dtsim: this is a bug in dtsim; please report it with the command and input files that trigger it\n";
    return 3;
  }
}
