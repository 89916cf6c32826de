// `dtsim emit`: prints one stage of the pipeline — the DT syntax tree, the tile IR, NVVM IR, PTX, the
// program as a Triton Python module, or the program after any stage of the driver's pass list.
#include <iostream>

#include "driver/Driver.h"
#include "host/Output.h"
#include "ir/Printer.h"
#include "tools/Commands.h"
#include "triton/TritonEmitter.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

std::string emit_text(const CliOptions& o) {
  LaunchSpec spec = o.launch();
  switch (o.emit) {
    case EmitWhat::After: return dump_program(compile(o.source(), spec, o.emit_after));
    case EmitWhat::Ast: {
      if (std::optional<FileKind> kind = file_kind_of(o.file); kind != FileKind::Dt) {
        // The file's own errors first: a .tile file parsed, a .py kernel lowered.
        compile(o.source(), spec, kind == FileKind::Tile ? Stage::Parse : Stage::Lower);
        throw UserError("--ast needs a .dt file (a .tile file is its own IR: use --tile)");
      }
      Program p = compile(o.source(), spec, Stage::Lower);
      return print_dt_ast(*p.dt);
    }
    case EmitWhat::Tile: {
      Program p = compile(o.source(), spec, Stage::Lower);
      Program checked = p.clone();
      compile_more(checked, spec);  // report errors rather than print an invalid program
      return print_module(p.module);
    }
    case EmitWhat::Nvvm:
    case EmitWhat::Ptx: {
#ifdef DTSIM_HAVE_CUDA
      Program p = compile(o.source(), spec);
      CudaOptions opt;
      opt.warp_specialize = o.warp_specialize;
      opt.cluster = o.cluster;
      opt.persistent = o.persistent;
      opt.fp_fusion = o.fp_fusion;
      opt.approx_div = o.approx_div;
      opt.arch = o.arch;
      opt.bounds_checks = o.interp.sanitize == Sanitize::Bounds || o.interp.sanitize == Sanitize::Conflicts;  // as bench: unchecked unless asked
      opt.conflict_checks = o.interp.sanitize == Sanitize::Conflicts;
      std::string ir = emit_nvvm(p.module, p.bindings, opt);
      return o.emit == EmitWhat::Nvvm ? ir : compile_ptx(ir, opt);
#else
      throw UserError("this dtsim was built without the CUDA backend (emit --nvvm/--ptx)");
#endif
    }
    case EmitWhat::Layouts:
    case EmitWhat::Plan: {
#ifdef DTSIM_HAVE_CUDA
      Program p = compile(o.source(), spec);
      CudaOptions opt;
      opt.warp_specialize = o.warp_specialize;
      opt.cluster = o.cluster;
      opt.persistent = o.persistent;
      opt.fp_fusion = o.fp_fusion;
      opt.approx_div = o.approx_div;
      opt.arch = o.arch;
      opt.bounds_checks = o.interp.sanitize == Sanitize::Bounds || o.interp.sanitize == Sanitize::Conflicts;
      opt.conflict_checks = o.interp.sanitize == Sanitize::Conflicts;
      return o.emit == EmitWhat::Layouts ? emit_layouts(p.module, p.bindings, opt) : emit_plan(p.module, p.bindings, opt);
#else
      throw UserError("this dtsim was built without the CUDA backend (emit --layouts/--plan)");
#endif
    }
    case EmitWhat::Triton: {
      Program p = compile(o.source(), spec);
      return emit_triton(p.module, p.bindings, {o.file, version_line(), o.warp_specialize, o.persistent, o.persistent_ctas});
    }
    case EmitWhat::None: break;
  }
  throw UserError("say what to emit: --tile, --ast, --nvvm, --ptx or --triton (see 'dtsim emit --help')");
}

}  // namespace

int emit_command(const CliOptions& o, std::ostream& out) {
  std::string text = emit_text(o);
  if (o.output.empty()) out << text;
  else write_output_file(o.output, "-o", text);
  return 0;
}

}  // namespace dtsim
