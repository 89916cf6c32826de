// The `dtsim` executable: subcommand dispatch and the top-level error handling (exit status 2 for
// the user's mistakes, 1 for runtime faults, 3 for bugs in dtsim; never a crash).
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "ir/Diag.h"
#include "tools/Args.h"
#include "tools/Commands.h"
#ifdef DTSIM_HAVE_CUDA
#include "difftest/Difftest.h"
#endif

using namespace dtsim;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_help(const std::string& w) { return w == "--help" || w == "-h"; }

// A message that already names its file ("x.npy: error: ...") is printed as it is.
std::string render_user_error(const UserError& e) {
  if (e.loc.valid()) return e.render();
  std::string msg = e.what();
  size_t at = msg.find(": error: ");
  if (at != std::string::npos && msg.find(' ') > at) return msg + "\n";
  return e.render();
}

int difftest(const std::vector<std::string>& rest) {
#ifdef DTSIM_HAVE_CUDA
  return difftest_command(rest, std::cout, std::cerr);
#else
  for (const std::string& w : rest)
    if (is_help(w)) {
      std::cout << "usage: dtsim difftest FILE [--trials N] [--seed S] ...\n"
                   "(this dtsim was built without the CUDA backend, so difftest is unavailable)\n";
      return 0;
    }
  throw UserError("this dtsim was built without the CUDA backend (difftest)");
#endif
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
  } else if (first[0] == '-' || ends_with(first, ".tile") || ends_with(first, ".dt") || ends_with(first, ".py")) {
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
