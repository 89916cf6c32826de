// The compile driver: one pass list from a source file (or text) to a verified tile-IR module, the
// same for every command (run, debug, emit, bench, viz, tune, difftest) and the Python module.
//
//   parse -> check -> bind-sizes -> schedule -> lower -> verify
//
// Each frontend (.tile, .dt, .py, TTIR text) is one row of the table in Frontends.cpp, chosen by the
// file's extension (or named by Source::kind); a row gives the functions of the stages its language
// has. A stage a language does not have leaves the program as it is (its dump says so). `verify`
// is common to every row: the parameters bound (bind_params) and the module verified.
// Floors: the driver sits below src/tools, python/ and src/difftest, above the frontends and the
// executors.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "frontend/DT.h"
#include "host/Buffers.h"
#include "host/Npy.h"
#include "ir/IR.h"
#include "ir/Verify.h"
#include "ttir/Ttir.h"

namespace dtsim {

// The pass list, in order.
enum class Stage { Parse, Check, BindSizes, Schedule, Lower, Verify };
inline constexpr Stage kStages[] = {Stage::Parse, Stage::Check, Stage::BindSizes, Stage::Schedule, Stage::Lower, Stage::Verify};
// "parse", "check", "bind-sizes", "schedule", "lower", "verify".
const char* stage_name(Stage s);
// The stage named `name`, or nullopt.
std::optional<Stage> stage_named(const std::string& name);
// "parse, check, bind-sizes, schedule, lower, verify" (for usage messages).
std::string stage_list();

// The languages the driver compiles (one row each in the frontend table).
enum class FileKind { Tile, Dt, Py, Ttir };

// What to compile: a file (its extension picks the frontend) or a text with its kind.
struct Source {
  std::string path;                 // the file, or the name messages give the text
  std::optional<FileKind> kind;     // set: this frontend whatever the extension (TTIR text)
  std::optional<std::string> text;  // set: compile this text instead of reading `path` (TTIR, .dt)
};

// A pointer argument typed without a data file (.py: --buf, the Python module's arrays).
struct BufferDecl {
  std::string name;
  Scalar dtype = Scalar::F32;
  Shape shape;
  bool is_unsigned = false;  // u8..u64 (.py: tl.uint8 ... tl.uint64 data, stored as i8..i64)
};

// What one launch fixes, as the flags of every command give it.
struct LaunchSpec {
  std::string kernel;                                    // --kernel ("" = every kernel / the entry)
  std::map<std::string, std::string> args;               // --arg NAME=VALUE: sizes, constexprs, scalars
  std::vector<std::pair<std::string, std::string>> ins;  // --in NAME=FILE.npy (.dt: sizes; .py: types)
  std::vector<std::string> grid;                         // --grid items (.py)
  std::vector<std::pair<std::string, std::string>> bufs; // --buf NAME=DTYPE[SHAPE] (.py)
  std::vector<BufferDecl> buffers;                       // pointer arguments typed directly (.py, TTIR)
  std::map<std::string, std::string> sources;            // .py: path -> text to use instead of the file
  // .py: where absolute imports of helper modules are looked for after the kernel file's own folder
  // (the Python package passes sys.path; the command line, PYTHONPATH)
  std::vector<std::string> module_roots;
  // .py: module-level names the Python package computed by running host code (`exp = pick_exp()`),
  // by the module file's real path: what each holds ("tl.NAME": a Triton function, "py:VALUE": a number)
  std::map<std::string, std::map<std::string, std::string>> host_values;
  TtirLaunch ttir;                                       // TTIR: arg_names, grid, num_warps, ... (kernel, buffers above)
  bool hint_checks = false;                              // .py, TTIR: tl.multiple_of ... checked (ir/Hints.h)
  // Triton loads' undefined lanes tracked to where they matter (ir/Undefined.h): asked for with
  // DTSIM_UNDEFINED_LANES=1, the interpreter with the sanitizer at `all`. Only .py and TTIR kernels
  // have such loads; others are left as they are.
  bool undefined_lanes = false;
};

// The .npy files of a run's --in flags: the frontends (.dt sizes, .py types) read each file's header
// once; the data is read once, by the run's input buffer (read_inputs), a piece at a time so that a
// signal or --timeout stops the read of a huge file.
class InputFiles {
 public:
  // The dtype and shape of `file`; `want` only decides how a bf16 file is read (host/Npy.h).
  const NpyInfo& info(const std::string& file, std::optional<Scalar> want);
  // The array of `file` for buffer `name`, read now; `poll` as read_npy's.
  Buffer take(const std::string& name, const std::string& file, std::optional<Scalar> want, const NpyPoll& poll = {});

 private:
  std::map<std::pair<std::string, int>, NpyInfo> info_;  // (file, wanted type or -1) -> header
};

// A program on its way down the pass list, and the result of compile().
struct Program {
  std::string path;
  FileKind kind = FileKind::Tile;
  std::optional<std::string> text;    // the source text when it was given rather than read from `path`
  std::optional<Stage> done;          // the last stage run (nullopt: none yet)
  std::shared_ptr<DtProgram> dt;      // .dt: the syntax tree (checked, sized, scheduled as the stages go)
  Module module;                      // the tile IR (from `lower` on for .dt; from `parse` for .tile)
  Bindings bindings;                  // the parameters' values (bind-sizes for .tile, verify for all)
  bool bound = false;                 // `bindings` holds the module's parameters
  std::set<std::string> size_args;    // --arg entries consumed before verify (.dt sizes, .py specialization)
  std::vector<std::string> break_at;  // .py: breakpoint_if() calls, as --break-at specs
  bool precise_div = false;           // .py: the kernel uses tl.div_rn (TritonProgram::precise_div)
  std::shared_ptr<InputFiles> inputs = std::make_shared<InputFiles>();  // the --in files read so far

  bool is_dt() const { return kind == FileKind::Dt; }
  bool is_py() const { return kind == FileKind::Py; }
  // A copy whose module can be changed without touching this one's (clone_module).
  Program clone() const;
};

// Runs the pass list on `src` up to and including `last`. UserError (located where the frontend
// knows the place) for an unknown extension, an unreadable file, a syntax error, an unknown kernel,
// sizes that are bad or disagree, an illegal schedule, a program the verifier rejects.
Program compile(const Source& src, const LaunchSpec& spec, Stage last = Stage::Verify);
// Runs the stages after p.done up to and including `last` (nothing when p is already there).
void compile_more(Program& p, const LaunchSpec& spec, Stage last = Stage::Verify);

// A .dt program whose sizes and schedule were chosen elsewhere (tune's candidates, difftest's random
// schedules): the `lower` and `verify` stages on it, `args` binding the remaining parameters.
Program compile_scheduled(const std::string& path, std::shared_ptr<DtProgram> scheduled, const std::map<std::string, std::string>& args);
// A module already in tile IR (difftest's cases at other sizes): `verify` with `args`.
Program compile_module(const std::string& path, Module m, const std::map<std::string, std::string>& args);

// Kernel `i` of a verified module as a module of its own, verified with the same bindings (bench
// times the kernels of a module one by one).
Module single_kernel(const Module& m, size_t i, const Bindings& b);

// The program as it stands after stage p.done (`dtsim emit --after=STAGE`): the syntax tree before a
// .dt file is lowered (with its sizes, and its kernels once scheduled), else the tile IR (with the
// bound parameters once bound). A stage the language has not got is named in a leading `#` line.
std::string dump_program(const Program& p);

// The frontend of `path` by its extension: "tile", "dt", "py"; nullopt for another extension.
std::optional<FileKind> file_kind_of(const std::string& path);
// The same; UserError "cannot tell the language of ..." for another extension.
FileKind kind_for_path(const std::string& path);
// The extensions the table knows, for messages: ".tile, .dt or .py".
std::string known_extensions();

// ---- the launch: input data, limits ----

// Reads every `--in NAME=FILE` (through p.inputs: a file the frontend read is not read again) and
// checks it against the pointer parameter NAME of the verified module ("x.npy: error: shape (10,)
// does not match parameter 'x' *f32[1000]"). The result is the `preset` for make_buffers.
// `poll` (when given) is called with "while reading FILE" every 8 MiB read and may throw WorkStopped.
Buffers read_inputs(Program& p, const std::vector<std::pair<std::string, std::string>>& ins,
                    const std::function<void(const std::string&)>& poll = {});

// The parameter declaring buffer `name` in any kernel, or nullptr.
const Param* find_buffer_param(const Module& m, const std::string& name);

// Refuses sizes whose buffers would not fit: UserError when all buffers together need more than
// half of the machine's physical memory (the interpreter keeps shadow state beside them).
void check_memory_budget(const Module& m, const Bindings& b);

// "f32[1000]" / "f16[64, 32]" (--buf NAME=SPEC). UserError naming the flag for a bad spec.
BufferDecl parse_buf_spec(const std::string& name, const std::string& spec);

// Splits "a, cdiv(n, B), c" at commas outside parentheses and brackets; trims each piece (--grid,
// --print-if's expressions).
std::vector<std::string> split_exprs(const std::string& text);

}  // namespace dtsim
