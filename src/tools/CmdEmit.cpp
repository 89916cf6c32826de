// `dtsim emit`: prints one stage of the pipeline — the DT syntax tree, the tile IR, NVVM IR, PTX, or
// the program as a Triton Python module.
#include <iostream>

#include "ir/Printer.h"
#include "tools/Commands.h"
#include "tools/Program.h"
#include "triton/TritonEmitter.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

std::string emit_text(const CliOptions& o) {
  switch (o.emit) {
    case EmitWhat::Ast: {
      LoadedProgram p = load_program(o.file, o.kernel, o.args, o.ins, PyLaunchFlags{o.grid, o.bufs});
      if (!p.is_dt) throw UserError("--ast needs a .dt file (a .tile file is its own IR: use --tile)");
      return print_dt_ast(*p.dt);
    }
    case EmitWhat::Tile: {
      LoadedProgram p = load_program(o.file, o.kernel, o.args, o.ins, PyLaunchFlags{o.grid, o.bufs});
      LoadedProgram checked = p;
      checked.module = clone_module(p.module);
      bind_and_verify(checked, o.args);  // report errors rather than print an invalid program
      return print_module(p.module);
    }
    case EmitWhat::Nvvm:
    case EmitWhat::Ptx: {
#ifdef DTSIM_HAVE_CUDA
      LoadedProgram p = load_program(o.file, o.kernel, o.args, o.ins, PyLaunchFlags{o.grid, o.bufs});
      Bindings b = bind_and_verify(p, o.args);
      CudaOptions opt;
      opt.arch = o.arch;
      opt.bounds_checks = o.interp.sanitize == Sanitize::Bounds;  // as bench: unchecked unless asked
      std::string ir = emit_nvvm(p.module, b, opt);
      return o.emit == EmitWhat::Nvvm ? ir : compile_ptx(ir, opt);
#else
      throw UserError("this dtsim was built without the CUDA backend (emit --nvvm/--ptx)");
#endif
    }
    case EmitWhat::Layouts: {
#ifdef DTSIM_HAVE_CUDA
      LoadedProgram p = load_program(o.file, o.kernel, o.args, o.ins, PyLaunchFlags{o.grid, o.bufs});
      Bindings b = bind_and_verify(p, o.args);
      CudaOptions opt;
      opt.arch = o.arch;
      opt.bounds_checks = o.interp.sanitize == Sanitize::Bounds;
      return emit_layouts(p.module, b, opt);
#else
      throw UserError("this dtsim was built without the CUDA backend (emit --layouts)");
#endif
    }
    case EmitWhat::Triton: {
      LoadedProgram p = load_program(o.file, o.kernel, o.args, o.ins, PyLaunchFlags{o.grid, o.bufs});
      Bindings b = bind_and_verify(p, o.args);
      return emit_triton(p.module, b, {o.file, version_line()});
    }
    case EmitWhat::None: break;
  }
  throw UserError("say what to emit: --tile, --ast, --nvvm, --ptx or --triton (see 'dtsim emit --help')");
}

}  // namespace

int emit_command(const CliOptions& o, std::ostream& out) {
  std::string text = emit_text(o);
  if (o.output.empty()) out << text;
  else write_file_atomic(o.output, text);
  return 0;
}

}  // namespace dtsim
