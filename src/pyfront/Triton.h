// The Triton frontend: `@triton.jit` Python kernels -> tile IR (docs/triton.md).
//
// The file is parsed as Python (the kernel subset), and the launched kernel is specialized by
// partial evaluation: constexpr parameters, module constants, `if` on constexprs, tl.static_range
// and calls of other @triton.jit functions are resolved at compile time (helpers are inlined);
// runtime `for range`/`if` become IR control flow. Every IR node carries its .py location.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace dtsim {

// A pointer argument of the launch: the buffer's element type and shape (from an --in .npy file or
// a --buf NAME=DTYPE[SHAPE] declaration).
struct TritonBuffer {
  std::string name;
  Scalar dtype = Scalar::F32;
  Shape shape;
  bool has_data = false;  // given with --in (keeps its data; a stored-to one is inout)
  bool is_unsigned = false;  // tl.uint8 ... tl.uint64 elements (dtype: the signless type of their width)
};

struct TritonLaunch {
  std::string kernel;                        // "" = the one @triton.jit function no other calls
  std::map<std::string, std::string> args;   // --arg NAME=VALUE: scalars and constexprs
  std::vector<TritonBuffer> buffers;
  std::vector<std::string> grid;             // --grid items (expressions over the parameters)
  // Source texts to use instead of reading the files (path -> text): the Python package passes the
  // kernel file as it was when the kernel was decorated, as Triton snapshots the source then.
  std::map<std::string, std::string> sources;
  // Folders where `import a.b` / `from a.b import f` look for a/b.py or a/b/__init__.py after the
  // importing file's own folder (sys.path as the Python package gives it). Relative imports
  // (`from .util import f`, `from .. import g`) are resolved from the importing file's package.
  std::vector<std::string> module_roots;
  // Module-level names bound by host code that the reader cannot run (`exp = pick_exp()` choosing a
  // libdevice function by the Triton version): the Python package, which ran it, says what each holds,
  // by the module file's real path and name; "tl.NAME" is Triton's function NAME, "py:VALUE" a
  // number or bool (`tl.constexpr(not os.getenv(...))`). Consulted only for a module constant whose
  // value is a call.
  std::map<std::string, std::map<std::string, std::string>> host_values;
  // tl.multiple_of / max_contiguous / max_constancy become asserts that they hold (ir/Hints.h): the
  // interpreter with the sanitizer on; off, a hint is the value itself.
  bool hint_checks = false;
};

struct TritonProgram {
  Module module;                    // one kernel, not yet verified
  std::set<std::string> used_args;  // the --arg entries consumed by the lowering
  std::vector<std::string> break_at;  // breakpoint_if(): "FILE:LINE if COND" for the debugger
  // The kernel divides with tl.div_rn / tl.fdiv(ieee_rounding=True) (Triton's tt.precise_divf): as
  // Triton's GPU build of such a kernel, its f32 `/` are IEEE too on the CUDA backend.
  bool precise_div = false;
};

// Parses `path` (and sibling modules it imports kernels from) and lowers the launched kernel.
// UserError (file:line:col, source line, caret) for syntax errors, unsupported constructs
// ("tl.atomic_add is not supported yet"), missing arguments and type errors found while lowering.
TritonProgram lower_triton_file(const std::string& path, const TritonLaunch& launch);

// The @triton.jit functions of a file that no other function of the file calls (entry points).
std::vector<std::string> triton_entry_points(const std::string& path);

}  // namespace dtsim
