// Running python3: the one helper through which an emitted Triton module runs (dtsim bench
// --vs-triton, tune --backend=triton, difftest --oracle=triton), and the shell quoting it uses.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dtsim {

// `s` as one word for /bin/sh: in single quotes, each ' written as '\''.
std::string shell_quote(const std::string& s);

// What one python3 process did.
struct PythonResult {
  bool started = false;  // false: no temporary folder or no process (`error` says which)
  int status = -1;       // its exit status; -1 when it could not start or was killed by a signal
  std::string output;    // stdout and stderr together
  std::string error;     // when !started
};

// Runs `python3 ARGS...` (each argument quoted), with `env` ("NAME=VALUE") set for it; `line` (when
// given) gets each line of its output as it comes.
PythonResult run_python3(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                         const std::function<void(const std::string&)>& line = {});

// Emitted Triton modules run through python3 in a fresh folder /tmp/<prefix>-XXXXXX, removed with
// everything in it afterwards.
struct TritonModuleRun {
  std::string prefix;                                      // "dtsim-triton": names the folder
  std::vector<std::pair<std::string, std::string>> files;  // written into the folder: name, text; the first is run
  std::vector<std::string> args;                           // the script's arguments
  std::vector<std::string> env;                            // NAME=VALUE for python3 (TRITON_INTERPRET=1)
  // Called with the folder before python3 starts: writes more files (input data) and adds arguments.
  std::function<void(const std::filesystem::path&, std::vector<std::string>&)> prepare;
  std::function<void(const std::string&)> line;             // each output line as it comes
  // Reads what python3 wrote (given how it ended), before the folder goes.
  std::function<void(const std::filesystem::path&, const PythonResult&)> collect;
};
PythonResult run_triton_module(const TritonModuleRun& run);

}  // namespace dtsim
