// The Decoupled-Triton (DT) frontend: `.dt` source -> AST -> tile IR, and the schedule-free
// reference evaluator. The language is documented in docs/dt-language.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct DtProgram;  // the checked AST of one .dt file (frontend-private layout)

// Parses and checks a registered source text / a file. Throws UserError (file:line:col + caret).
std::shared_ptr<DtProgram> parse_dt(int file_id);
std::shared_ptr<DtProgram> parse_dt_file(const std::string& path);

// Prints the AST (`dtsim emit --ast`).
std::string print_dt_ast(const DtProgram& p);

// Lowers every kernel of the file (each `compile()`/`compile_to_kernel()`) to one tile-IR Module:
// materialized producers first, then the kernel itself, buffers shared by name. Dimension sizes
// become constexpr parameters `<dim>_SIZE` with the example's default sizes; inputs are `in` pointer
// params, outputs `out`, materialized intermediates `scratch`. `kernel` selects one kernel by its
// output Func name ("" = all, in file order). Statements carry the .dt locations (loc: algorithm line,
// loc2: schedule line).
Module lower_dt(const DtProgram& p, const std::string& kernel = "");

// The schedule-free oracle: evaluates the algorithm with naive loops in f64 on the inputs in
// `inputs` (name -> row-major f64 data) with sizes/scalars from `b`; returns every output Func's
// values (name -> row-major f64 data).
std::map<std::string, std::vector<double>> eval_dt_reference(const DtProgram& p, const Bindings& b,
                                                             const std::map<std::string, std::vector<double>>& inputs,
                                                             const std::string& kernel = "");

// A copy of the program whose kernels get a random *legal* schedule (block / tensorize / map /
// fuse_at / num_warps choices), and random sizes in `sizes_out` (dim name -> extent, often not
// divisible by the blocks). `description` receives the schedule as .dt text (for failure reports).
std::shared_ptr<DtProgram> with_random_schedule(const DtProgram& p, uint64_t seed, std::string* description,
                                                std::map<std::string, int64_t>* sizes_out);

}  // namespace dtsim
