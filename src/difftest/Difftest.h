// The differential tester: interpreter vs GPU on random inputs, sizes and (for .dt) schedules.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dtsim {

// `dtsim difftest FILE [--trials N] [--seed S] [--arch sm_XX] ...`: `args` are the words after
// "difftest". Returns the process exit code (0: no mismatch; 1: mismatch; 2: bad usage/input).
// Without a GPU every case is still lowered, compiled and checked by ptxas, and the GPU comparison
// is reported as skipped.
int difftest_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace dtsim
