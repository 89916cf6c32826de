// libFuzzer target: the Triton frontend (the @triton.jit Python subset): parsing, partial evaluation
// and lowering of each entry point, verification and printing of what the lowering produced, then
// the interpreter on it when it is small (as fuzz_interp: at most 64 instances, 4096 elements per
// buffer and tile, 2000 statements per instance). The frontend reads files (and sibling modules),
// so each input is written to a scratch directory. The launch binds what a user would: a parameter
// without a default whose name reads like a pointer (x_ptr, X, out, ...) to an f32[64] buffer, other
// parameters without a default to 16, over a grid of 2. UserError and runtime findings are answers;
// a crash, a sanitizer report or any other escaping exception is a finding.
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "fuzz/FuzzUtil.h"
#include "ir/Printer.h"
#include "ir/Verify.h"
#include "pyfront/Lower.h"
#include "pyfront/Triton.h"

using namespace dtsim;

namespace {

const std::string& scratch_file() {
  static const std::string path = [] {
    std::string dir = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) + "/dtsim_fuzz_py_XXXXXX";
    if (!mkdtemp(dir.data())) std::abort();
    return dir + "/kernel.py";
  }();
  return path;
}

bool pointer_like(const std::string& n) {
  if (n.size() >= 3 && n.compare(n.size() - 3, 3, "ptr") == 0) return true;
  if (!n.empty() && std::isupper(static_cast<unsigned char>(n[0]))) return true;
  for (const char* w : {"x", "y", "z", "a", "b", "c", "out", "inp", "input", "output", "src", "dst"})
    if (n == w) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_file();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  int mark = Sources::add("<mark>", "");  // every source registered from here on is dropped at the end
  try {
    py::PyModule mod = py::parse_python(Sources::load(path));
    for (const std::string& kernel : triton_entry_points(path)) {
      TritonLaunch launch;
      launch.kernel = kernel;
      launch.grid = {"2"};
      for (const py::NodeP& s : mod.body) {
        if (s->kind != py::NK::FunctionDef || s->text != kernel) continue;
        for (const py::Param& p : s->params) {
          if (p.def || p.star) continue;
          if (!py::is_constexpr_annotation(p.annotation.get()) && pointer_like(p.name))
            launch.buffers.push_back(TritonBuffer{p.name, Scalar::F32, {64}, true});
          else
            launch.args[p.name] = "16";
        }
      }
      try {
        TritonProgram prog = lower_triton_file(path, launch);
        std::map<std::string, std::string> rest;
        for (const auto& [k, v] : launch.args)
          if (!prog.used_args.count(k)) rest[k] = v;
        Bindings b = bind_params(prog.module, rest);
        verify_module(prog.module, b);
        std::string printed = print_module(prog.module);
        if (!fuzz::small_enough(prog.module, b)) continue;
        Buffers bufs;
        fuzz::run_small(prog.module, b, true, bufs);
      } catch (const UserError&) {
      }
    }
  } catch (const UserError&) {
  }
  Sources::drop_from(mark);
  return 0;
}
