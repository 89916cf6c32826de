// Command-line parsing for every `dtsim` subcommand (run, debug, emit, bench, viz, tune, difftest):
// one flag table, one parser, and the commands' --help texts.
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/Driver.h"
#include "interp/Interp.h"
#include "repl/Debugger.h"
#include "tune/Tune.h"

namespace dtsim {

enum class Backend { Interp, Cuda };
enum class EmitWhat { None, Tile, Ast, Nvvm, Ptx, Triton, Layouts, Plan, After };

// Everything the flags of the dtsim commands can say. Defaults are what a bare `dtsim run FILE`
// does (and `dtsim tune FILE` / `dtsim difftest FILE` for their own flags).
struct CliOptions {
  std::string command;  // "run", "debug", "emit", "bench", "viz", "tune" or "difftest"
  std::string file;     // the .tile / .dt / .py program
  bool help = false;

  std::map<std::string, std::string> args;               // --arg NAME=VALUE
  std::vector<std::pair<std::string, std::string>> ins;  // --in NAME=FILE.npy (in flag order)
  std::vector<std::pair<std::string, std::string>> outs; // --out NAME=FILE.npy
  std::vector<std::string> grid;                         // --grid E0[,E1[,E2]] (.py kernels)
  std::string grid_text;                                 // --grid as given (difftest's reproduce line)
  std::vector<std::pair<std::string, std::string>> bufs; // --buf NAME=DTYPE[SHAPE] (.py kernels)
  uint64_t seed = 0;                                     // --seed S: random input data
  std::string kernel;                                    // --kernel NAME ("" = every kernel)

  InterpOptions interp;            // --threads --sanitize --keep-going --order
  Backend backend = Backend::Interp;
  bool check = false;              // --check (.dt only)
  int64_t max_steps = 0;           // --max-steps N: statements per instance (0 = no limit)
  double timeout_s = 0;            // --timeout S: seconds for the run (0 = no limit)

  DebugConfig debug;               // --break-if --print-if --at --break-at; `debug` sets stop_at_start
  bool debugging() const {
    return debug.stop_at_start || !debug.break_if.empty() || !debug.print_if.empty() || !debug.break_at.empty();
  }

  int reps = 0;                    // bench: --reps N (0 = enough for about 100 ms)
  bool json = false;               // bench: --json
  bool vs_triton = false;          // bench: --vs-triton

  EmitWhat emit = EmitWhat::None;  // emit: --tile --ast --nvvm --ptx --triton --layouts --plan --after
  Stage emit_after = Stage::Verify;  // emit --after=STAGE
  std::string output;              // emit: -o OUT ("" = stdout)
  std::optional<std::array<int64_t, 3>> viz_pid;  // viz: --pid P0[,P1[,P2]]
  bool viz_loads = false;          // viz: --loads
  std::string arch;                // --arch: GPU target ("" = the GPU's own when running, sm_90 otherwise)

  // tune
  uint64_t budget = 200;           // --budget N
  bool budget_given = false;
  double time_s = 0;               // --time S
  std::string tune_backend = "cuda";  // --backend=cuda|triton
  std::string csv, plot, cache_dir;   // --csv --plot --cache-dir
  int jobs = 0;                    // --jobs N (0 = the cores, at most 16)
  std::vector<TuneReference> refs; // --ref NAME=MS
  uint64_t shard = 0, shards = 1;  // --shard I/N
  std::string exchange;            // --exchange DIR: shards swap each round's outcomes there
  double exchange_timeout_s = 600; // --exchange-timeout S
  double timed_ms = 25;            // --timed-ms MS: the timed window of each candidate
  bool merge = false;              // --merge A.json B.json ...
  std::vector<std::string> files;  // tune: every file named (--merge: the results)
  std::vector<std::string> gpus;   // --gpus all | 0,1 | cpu,cpu
  bool check_only = false;         // --check-only: time nothing
  bool compile_only = false;       // --compile-only: time nothing, compile beside the checks (CUDA)
  bool tune_overlap = true;        // --no-overlap: time each round before checking the next
  std::string tune_out;            // --out FILE: the JSON result written to FILE
  std::string write_best;          // --write-best FILE.dt: the searched file with the fastest schedule

  // difftest (--seed defaults to 1 there)
  int trials = 10;                 // --trials N
  uint64_t schedule_seed = 0;      // --schedule-seed S
  bool fast_math = false;          // --fast-math
  bool warp_specialize = false;    // --warp-specialize (run, emit, bench, difftest on the CUDA backend)
  int cluster = 0;                 // --cluster 1, --no-cluster -1 (run, emit, bench, difftest; CudaOptions::cluster)
  int persistent = 0;              // --persistent 1, --no-persistent -1 (run, emit, bench, difftest; CudaOptions::persistent)
  int persistent_ctas = 0;         // --persistent-ctas N (run, bench, difftest; CudaOptions::persistent_ctas)
  bool fp_fusion = false;          // --fp-fusion (run, emit, bench on the CUDA backend; never difftest)
  bool approx_div = false;         // --approx-div (run, emit, bench on the CUDA backend; never difftest)
  bool bounds_checks = false;      // --sanitize=bounds|none
  bool oracle_triton = false;      // --oracle=cuda|triton

  // The launch the flags describe, for the compile driver.
  LaunchSpec launch() const;
  Source source() const { return Source{file, std::nullopt, std::nullopt}; }
};

// Parses the words after the subcommand name. Throws UserError for unknown flags, missing or bad
// values, a missing or second file (the message ends in "(see 'dtsim <command> --help')").
CliOptions parse_cli(const std::string& command, const std::vector<std::string>& words);

// The help texts: `dtsim --help` and `dtsim <command> --help`.
std::string main_help();
std::string command_help(const std::string& command);

// The version line printed by `dtsim --version`.
std::string version_line();

}  // namespace dtsim
