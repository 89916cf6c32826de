// The differential tester: interpreter vs GPU (or vs the emitted Triton module) on random inputs,
// sizes and (for .dt) schedules.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dtsim {

struct Module;

// What `dtsim difftest FILE [flags]` asks for (tools/Args.cpp parses the flags).
struct DifftestOptions {
  std::string file;
  bool oracle_triton = false;  // --oracle=triton (default cuda)
  int trials = 10;
  uint64_t seed = 1;
  uint64_t schedule_seed = 0;  // --schedule-seed: replay one .dt schedule
  std::string arch;            // --arch (CUDA oracle)
  bool fast_math = false;      // --fast-math (CUDA oracle)
  bool warp_specialize = false;  // --warp-specialize (CUDA oracle)
  int cluster = 0;               // --cluster 1, --no-cluster -1 (CUDA oracle)
  int persistent = 0;            // --persistent 1, --no-persistent -1 (CUDA oracle)
  int persistent_ctas = 0;       // --persistent-ctas N (CUDA oracle)
  bool bounds_checks = false;  // --sanitize=bounds (CUDA oracle)
  std::map<std::string, std::string> args;  // fixed --arg overrides (no size perturbation when given)
  // .py (Triton) kernels: the launched kernel, its grid and pointer arguments (sizes fixed by them)
  std::string kernel;
  std::string grid;                 // --grid as given (the reproduce line)
  std::vector<std::string> grid_items;
  std::vector<std::pair<std::string, std::string>> ins, bufs;
};

// Runs the sweep. Returns the process exit code (0: no mismatch; 1: mismatch or findings; 2: bad
// input). Without a GPU every case is still lowered, compiled and checked by ptxas, and the GPU
// comparison is reported as skipped. In a build without the CUDA backend only --oracle=triton is
// available (UserError for the CUDA oracle).
int difftest_command(const DifftestOptions& o, std::ostream& out, std::ostream& err);

// The note under a mismatch in buffer `buf` of verified module `m`: "FILE:L:C: note: 'buf' is
// stored here" at the first store that may write it (pointer provenance), or "" when none does.
std::string store_site(const Module& m, const std::string& buf);

// `dtsim difftest --help`.
std::string difftest_help();

}  // namespace dtsim
