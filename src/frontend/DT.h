// The Decoupled-Triton (DT) frontend: `.dt` source -> AST -> tile IR, and the schedule-free
// reference evaluator. The language is documented in docs/dt-language.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct DtProgram;  // the checked AST of one .dt file (frontend-private layout)

// Parses and checks a registered source text / a file. Throws UserError (file:line:col + caret).
std::shared_ptr<DtProgram> parse_dt(int file_id);
std::shared_ptr<DtProgram> parse_dt_file(const std::string& path);

// The steps of parse_dt, which the compile driver (src/driver) runs as passes of their own so that a
// run lowers once, at its sizes: parse_dt_syntax (the parser only), dt_check_semantics (names, ranks,
// reductions, element types, tied dims; the declared default sizes bound), dt_apply_schedule
// (frontend/DtAst.h: the schedule calls resolved, UserError for an illegal one). parse_dt runs all
// three and lowers once at the default sizes for the legality checks that need the loop nest.
std::shared_ptr<DtProgram> parse_dt_syntax(int file_id);
void dt_check_semantics(DtProgram& p);

// Prints the AST (`dtsim emit --ast`).
std::string print_dt_ast(const DtProgram& p);

// Lowers every kernel of the file (each `compile()`/`compile_to_kernel()`) to one tile-IR Module:
// materialized producers first, then the kernel itself, buffers shared by name. The kernels are
// specialized to the sizes in p's dims (bind_dt_sizes sets a run's sizes; otherwise the declared
// defaults), which also become the defaults of the constexpr parameters `<dim>_SIZE`; inputs are `in` pointer
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

// The shape of an input array given for a run (`--in NAME=FILE`): `name` is the In tensor.
struct DtInputShape {
  std::string name, file;
  std::vector<int64_t> shape;
};

// Binds the sizes of one run before lowering (docs/dt-language.md, "Sizes"): `--arg <dim>_SIZE=N`
// entries of `args` and the shapes of `inputs` (each fixes the dims that index its In tensor) set
// the dims they name; every other dim keeps its current size (the declared default, in a program
// fresh from parse_dt). Dims tied by a permuted or repeated
// access share one size. Writes the sizes into p's Var/RVar symbols and returns the names of the
// `args` entries it used. UserError (located at the access or declaration concerned) for a bad size,
// a rank mismatch, or two sources that disagree (the message names both).
std::set<std::string> bind_dt_sizes(DtProgram& p, const std::map<std::string, std::string>& args,
                                    const std::vector<DtInputShape>& inputs = {});

// A copy of `p` with the sizes in `args` bound (bind_dt_sizes).
std::shared_ptr<DtProgram> dt_with_sizes(const DtProgram& p, const std::map<std::string, std::string>& args);

// The element type of input tensor `name` of `p`; nullopt when `name` is not an In tensor.
std::optional<Scalar> dt_input_dtype(const DtProgram& p, const std::string& name);

// A copy of the program whose kernels get a random *legal* schedule (block / tensorize / map /
// fuse_at / num_warps choices), and random sizes in `sizes_out` (dim name -> extent, often not
// divisible by the blocks). Sizes given in `args` (`<dim>_SIZE` -> N, as for bind_dt_sizes) are
// kept; the others are drawn. `description` receives the schedule as .dt text (for failure reports).
std::shared_ptr<DtProgram> with_random_schedule(const DtProgram& p, uint64_t seed, std::string* description,
                                                std::map<std::string, int64_t>* sizes_out,
                                                const std::map<std::string, std::string>& args = {});

}  // namespace dtsim
