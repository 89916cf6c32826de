// Loading a `.tile` or `.dt` file into a tile-IR module, and the steps every command shares:
// parameter binding, verification, input buffers.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "frontend/DT.h"
#include "host/Buffers.h"
#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct LoadedProgram {
  std::string path;
  bool is_dt = false;
  std::shared_ptr<DtProgram> dt;  // .dt only: the checked AST (for --ast and --check)
  Module module;                  // the tile IR (for .dt: lowered), not yet verified
  std::set<std::string> size_args;  // .dt: the --arg entries that set dim sizes (already lowered in);
                                    // .py: the --arg entries consumed by the specialization
  bool is_py = false;
  std::vector<std::string> break_at;  // .py: breakpoint_if() calls, as --break-at specs
};

// What a .py (Triton) kernel's launch needs besides --arg/--in: --grid and --buf.
struct PyLaunchFlags {
  std::vector<std::string> grid;
  std::vector<std::pair<std::string, std::string>> bufs;
};

// Reads and parses `path` by its extension (.tile: parse_tile_file; .dt: parse_dt_file + lower_dt;
// .py: lower_triton_file, the buffers typed by the --in files and `py.bufs`, the grid from `py.grid`).
// `kernel` ("" = all) keeps one kernel (.tile: by kernel name; .dt: by output Func name).
// A .dt program is lowered for the sizes of the run: `--arg <dim>_SIZE=N` entries of `args` and the
// shapes of the `--in NAME=FILE` arrays in `ins` (bind_dt_sizes); every command that loads a program
// passes its --arg/--in here, so all of them size a kernel the same way.
// UserError for an unknown extension, an unreadable file, a syntax error, an unknown kernel, or sizes
// that are bad or disagree.
LoadedProgram load_program(const std::string& path, const std::string& kernel, const std::map<std::string, std::string>& args,
                           const std::vector<std::pair<std::string, std::string>>& ins, const PyLaunchFlags& py = {});

// bind_params + verify_module on the program's module (annotated in place). Size arguments already
// lowered into a .dt program (`size_args`) are not bound again.
Bindings bind_and_verify(LoadedProgram& p, const std::map<std::string, std::string>& overrides);

// Reads every `--in NAME=FILE` and checks it against the pointer parameter NAME of the verified
// module ("x.npy: error: shape (10,) does not match parameter 'x' *f32[1000]"). The result is the
// `preset` for make_buffers.
// `poll` (when given) is called with "while reading FILE" every 8 MiB read and may throw WorkStopped.
Buffers read_inputs(const Module& m, const Bindings& b, const std::vector<std::pair<std::string, std::string>>& ins,
                    const std::function<void(const std::string&)>& poll = {});

// The parameter declaring buffer `name` in any kernel, or nullptr.
const Param* find_buffer_param(const Module& m, const std::string& name);

// Refuses sizes whose buffers would not fit: UserError when all buffers together need more than
// half of the machine's physical memory (the interpreter keeps shadow state beside them).
void check_memory_budget(const Module& m, const Bindings& b);

// Writes `text` to `path` as an output (host/Output.h: atomically over a regular file, through a
// character device or FIFO, never replacing a device, FIFO or symlink). UserError when it cannot.
void write_file_atomic(const std::string& path, const std::string& text, const std::string& what = "-o");

}  // namespace dtsim
