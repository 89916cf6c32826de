// The frontend table (Frontends.h). A new frontend is a row of kFrontends: its kind (Driver.h
// FileKind), its name and file extension, the functions of the stages its language has (each says
// why when it has none), and what its program looks like before it is lowered (for dumps).
#include "driver/Frontends.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "frontend/DtAst.h"
#include "host/Npy.h"
#include "ir/Printer.h"
#include "ir/TileParser.h"
#include "pyfront/Triton.h"

namespace dtsim {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void require_readable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open '" + path + "': " + std::strerror(errno));
}

// ---- .tile: the file is tile IR with its schedule written in ----

// Keeps only kernel `name` of a .tile module.
void select_kernel(Module& m, const std::string& name) {
  std::string names;
  for (Kernel& k : m.kernels) {
    if (k.name == name) {
      Kernel keep = std::move(k);
      m.kernels.clear();
      m.kernels.push_back(std::move(keep));
      return;
    }
    names += (names.empty() ? "" : ", ") + k.name;
  }
  throw UserError("no kernel named '" + name + "' in " + m.file + " (kernels: " + names + ")");
}

void tile_parse(Program& p, const LaunchSpec& spec) {
  require_readable(p.path);
  p.module = parse_tile_file(p.path);
  if (!spec.kernel.empty()) select_kernel(p.module, spec.kernel);
}

void tile_bind_sizes(Program& p, const LaunchSpec& spec) { bind_parameters(p, spec); }

// ---- .dt: parsed, checked, sized for the run, scheduled, lowered (docs/dt-language.md) ----

void dt_parse(Program& p, const LaunchSpec&) {
  if (p.text) {  // a text given in place of the file (tune --write-best checks what it will write)
    p.dt = parse_dt_syntax(Sources::add(p.path, *p.text));
    return;
  }
  require_readable(p.path);
  p.dt = parse_dt_syntax(Sources::load(p.path));
}

void dt_check(Program& p, const LaunchSpec&) { dt_check_semantics(*p.dt); }

// The sizes of the run: `--arg <dim>_SIZE=N` and the shapes of the --in arrays of the program's
// input tensors (others are reported when the data is read).
void dt_bind_sizes(Program& p, const LaunchSpec& spec) {
  std::vector<DtInputShape> shapes;
  for (const auto& [name, file] : spec.ins) {
    std::optional<Scalar> dtype = dt_input_dtype(*p.dt, name);
    if (!dtype) continue;
    shapes.push_back({name, file, p.inputs->info(file, dtype).shape});
  }
  p.size_args = bind_dt_sizes(*p.dt, spec.args, shapes);
}

void dt_schedule(Program& p, const LaunchSpec&) { dt_apply_schedule(*p.dt); }

// The run's kernels, lowered once. With --kernel and several kernels in the file, every kernel is
// lowered first, for the legality checks that need a loop nest: an illegal schedule anywhere in the
// file is reported, as parse_dt reports it.
void dt_lower(Program& p, const LaunchSpec& spec) {
  if (!spec.kernel.empty() && p.dt->kernels.size() > 1) (void)lower_dt(*p.dt);
  p.module = lower_dt(*p.dt, spec.kernel);
}

// The syntax tree; once scheduled, each kernel's resolved schedule.
std::string dt_dump(const Program& p) {
  std::string out = print_dt_ast(*p.dt);
  if (!p.done || *p.done < Stage::Schedule) return out;
  for (const std::string& k : p.dt->kernels) {
    const DtSchedule& s = p.dt->sym(k).sched;
    out += "Kernel " + k + ":";
    if (!s.block.empty()) {
      out += " block(";
      for (size_t i = 0; i < s.block.size(); ++i) out += (i ? ", " : "") + s.block[i].first + ":" + std::to_string(s.block[i].second);
      out += ")";
    }
    if (!s.tensorize.empty()) {
      out += " tensorize(";
      bool first = true;
      for (const auto& [dim, ext] : s.tensorize) {
        out += (first ? "" : ", ") + dim + ":" + std::to_string(ext.first);
        first = false;
      }
      out += ")";
    }
    out += " num_warps=" + std::to_string(s.num_warps) + " num_stages=" + std::to_string(s.num_stages);
    if (s.warp_specialize) out += " warp_specialize";
    if (s.persistent) out += s.persistent_ctas > 0 ? " persistent(" + std::to_string(s.persistent_ctas) + ")" : std::string(" persistent");
    if (s.cluster != 1) out += " cluster(" + std::to_string(s.cluster) + ")";
    out += "\n";
  }
  for (const DtSymbol& f : p.dt->syms)
    if (f.kind == DtSymKind::Func && !f.sched.fuse_into.empty())
      out += "Fused " + f.name + " into " + f.sched.fuse_into + " at " + f.sched.fuse_level + "\n";
  return out;
}

// ---- .py: a @triton.jit kernel, specialized for the launch by the partial evaluator ----

void py_lower(Program& p, const LaunchSpec& spec) {
  if (!spec.sources.count(p.path)) require_readable(p.path);
  TritonLaunch launch;
  launch.kernel = spec.kernel;
  launch.args = spec.args;
  launch.grid = spec.grid;
  launch.sources = spec.sources;
  launch.module_roots = spec.module_roots;
  launch.host_values = spec.host_values;
  launch.hint_checks = spec.hint_checks;
  std::set<std::string> named;
  for (const auto& [name, file] : spec.ins) {
    if (!named.insert(name).second) throw UserError("--in " + name + " given twice");
    const NpyInfo& b = p.inputs->info(file, std::nullopt);
    launch.buffers.push_back(TritonBuffer{name, b.dtype, b.shape, true});
  }
  for (const auto& [name, text] : spec.bufs) {
    if (!named.insert(name).second) throw UserError("--buf " + name + ": '" + name + "' already has a type (from --in or --buf)");
    BufferDecl d = parse_buf_spec(name, text);
    launch.buffers.push_back(TritonBuffer{d.name, d.dtype, d.shape, false, d.is_unsigned});
  }
  for (const BufferDecl& d : spec.buffers) launch.buffers.push_back(TritonBuffer{d.name, d.dtype, d.shape, true, d.is_unsigned});
  TritonProgram tp = lower_triton_file(p.path, launch);
  p.module = std::move(tp.module);
  p.size_args = tp.used_args;
  p.break_at = tp.break_at;
  p.precise_div = tp.precise_div;
}

// Before lowering there is only the file: its kernels (the @triton.jit functions no other calls).
std::string py_dump(const Program& p) {
  std::string out = "# " + p.path + ": @triton.jit kernels (entry points):";
  for (const std::string& k : triton_entry_points(p.path)) out += " " + k;
  return out + "\n";
}

// ---- TTIR: the text the installed Triton's frontend made (the Python module's compile_ttir) ----

void ttir_lower(Program& p, const LaunchSpec& spec) {
  TtirLaunch launch = spec.ttir;
  launch.hint_checks = spec.hint_checks;
  p.module = lower_ttir(p.text ? *p.text : std::string(), p.path, launch);
}

std::string ttir_dump(const Program&) { return ""; }

constexpr const char* kPyOneStep = "the partial evaluator parses, checks, specializes and lowers the launched kernel in one step, at 'lower'";
constexpr const char* kTtirOneStep = "TTIR text is parsed and lowered in one step, at 'lower'";

const Frontend kFrontends[] = {
    {FileKind::Tile, "tile", ".tile",
     {{tile_parse, ""},
      {nullptr, "the verifier checks a .tile module, at 'verify'"},
      {tile_bind_sizes, ""},
      {nullptr, "a .tile file has its schedule written into it"},
      {nullptr, "a .tile file is tile IR already"},
      {}},
     nullptr},
    {FileKind::Dt, "dt", ".dt",
     {{dt_parse, ""}, {dt_check, ""}, {dt_bind_sizes, ""}, {dt_schedule, ""}, {dt_lower, ""}, {}},
     dt_dump},
    {FileKind::Py, "py", ".py",
     {{nullptr, kPyOneStep}, {nullptr, kPyOneStep}, {nullptr, kPyOneStep}, {nullptr, "a Triton kernel has its schedule written into it"},
      {py_lower, ""}, {}},
     py_dump},
    {FileKind::Ttir, "ttir", "",
     {{nullptr, kTtirOneStep}, {nullptr, kTtirOneStep}, {nullptr, kTtirOneStep}, {nullptr, "TTIR has its schedule written into it"},
      {ttir_lower, ""}, {}},
     ttir_dump},
};

}  // namespace

const Frontend& frontend(FileKind kind) {
  for (const Frontend& f : kFrontends)
    if (f.kind == kind) return f;
  internal_error("driver", "no frontend for this file kind");
}

std::optional<FileKind> file_kind_of(const std::string& path) {
  for (const Frontend& f : kFrontends)
    if (*f.extension && ends_with(path, f.extension)) return f.kind;
  return std::nullopt;
}

std::string known_extensions() {
  std::vector<std::string> exts;
  for (const Frontend& f : kFrontends)
    if (*f.extension) exts.push_back(f.extension);
  std::string out;
  for (size_t i = 0; i < exts.size(); ++i) out += (i == 0 ? "" : i + 1 == exts.size() ? " or " : ", ") + exts[i];
  return out;
}

FileKind kind_for_path(const std::string& path) {
  if (auto k = file_kind_of(path)) return *k;
  throw UserError("cannot tell the language of '" + path + "': expected a " + known_extensions() + " file");
}

}  // namespace dtsim
