// Loading programs, binding and verifying them, and reading --in files for the dtsim commands.
#include "tools/Program.h"

#include "host/Output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <unistd.h>

#include "host/Npy.h"
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

std::string numpy_shape(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + (s.size() == 1 ? ",)" : ")");
}

// The parameter's buffer type as written in the source: "*f32[1000]".
std::string param_type_str(const Param& p, const Shape& shape) {
  return std::string("*") + scalar_name(p.dtype) + shape_str(shape);
}

// The shapes of the --in arrays given for the DT program's input tensors (others are reported when
// the data is read).
std::vector<DtInputShape> input_shapes(const DtProgram& dt, const std::vector<std::pair<std::string, std::string>>& ins) {
  std::vector<DtInputShape> out;
  for (const auto& [name, file] : ins) {
    std::optional<Scalar> dtype = dt_input_dtype(dt, name);
    if (!dtype) continue;
    NpyInfo b = read_npy_info(file, dtype);  // the header only: the data is read once, by read_inputs
    out.push_back({name, file, b.shape});
  }
  return out;
}

// "f32[1000]" / "f16[64, 32]" (--buf).
TritonBuffer parse_buf_spec(const std::string& name, const std::string& spec) {
  std::string what = "--buf " + name + "=" + spec + ": ";
  size_t lb = spec.find('[');
  if (lb == std::string::npos || spec.back() != ']') throw UserError(what + "expected DTYPE[D0, D1, ...], e.g. f32[1000]");
  TritonBuffer b;
  b.name = name;
  auto dt = parse_scalar(spec.substr(0, lb));
  if (!dt) throw UserError(what + "unknown type '" + spec.substr(0, lb) + "' (expected i1, i32, i64, f16, bf16, f32 or f64)");
  b.dtype = *dt;
  std::string dims = spec.substr(lb + 1, spec.size() - lb - 2);
  size_t p = 0;
  while (p <= dims.size()) {
    size_t c = dims.find(',', p);
    if (c == std::string::npos) c = dims.size();
    std::string d = dims.substr(p, c - p);
    d.erase(0, d.find_first_not_of(' '));
    d.erase(d.find_last_not_of(' ') + 1);
    char* end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v <= 0) throw UserError(what + "extents must be positive integers");
    b.shape.push_back(v);
    p = c + 1;
  }
  return b;
}

}  // namespace

LoadedProgram load_program(const std::string& path, const std::string& kernel, const std::map<std::string, std::string>& args,
                           const std::vector<std::pair<std::string, std::string>>& ins, const PyLaunchFlags& py) {
  LoadedProgram p;
  p.path = path;
  if (ends_with(path, ".tile")) {
    require_readable(path);
    p.module = parse_tile_file(path);
    if (!kernel.empty()) select_kernel(p.module, kernel);
  } else if (ends_with(path, ".dt")) {
    require_readable(path);
    p.is_dt = true;
    p.dt = parse_dt_file(path);
    p.size_args = bind_dt_sizes(*p.dt, args, input_shapes(*p.dt, ins));
    p.module = lower_dt(*p.dt, kernel);
  } else if (ends_with(path, ".py")) {
    require_readable(path);
    p.is_py = true;
    TritonLaunch launch;
    launch.kernel = kernel;
    launch.args = args;
    launch.grid = py.grid;
    std::set<std::string> named;
    for (const auto& [name, file] : ins) {
      if (!named.insert(name).second) throw UserError("--in " + name + " given twice");
      NpyInfo b = read_npy_info(file);  // the header only: the data is read once, by read_inputs
      launch.buffers.push_back(TritonBuffer{name, b.dtype, b.shape, true});
    }
    for (const auto& [name, spec] : py.bufs) {
      if (!named.insert(name).second) throw UserError("--buf " + name + ": '" + name + "' already has a type (from --in or --buf)");
      launch.buffers.push_back(parse_buf_spec(name, spec));
    }
    TritonProgram tp = lower_triton_file(path, launch);
    p.module = std::move(tp.module);
    p.size_args = tp.used_args;
    p.break_at = tp.break_at;
  } else {
    throw UserError("cannot tell the language of '" + path + "': expected a .tile, .dt or .py file");
  }
  if (p.module.file.empty()) p.module.file = path;
  return p;
}

Bindings bind_and_verify(LoadedProgram& p, const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> rest;
  for (const auto& [k, v] : overrides)
    if (!p.size_args.count(k)) rest[k] = v;
  Bindings b = bind_params(p.module, rest);
  verify_module(p.module, b);
  return b;
}

const Param* find_buffer_param(const Module& m, const std::string& name) {
  for (const Kernel& k : m.kernels)
    if (const Param* prm = k.find_param(name); prm && prm->kind == ParamKind::Pointer) return prm;
  return nullptr;
}

Buffers read_inputs(const Module& m, const Bindings& b, const std::vector<std::pair<std::string, std::string>>& ins,
                    const std::function<void(const std::string&)>& poll) {
  Buffers preset;
  for (const auto& [name, file] : ins) {
    const Param* prm = find_buffer_param(m, name);
    if (!prm) throw UserError("--in " + name + "=" + file + ": the program has no buffer parameter '" + name + "'");
    if (prm->io == BufIO::Out || prm->io == BufIO::Scratch)
      throw UserError("--in " + name + "=" + file + ": '" + name + "' is an " + bufio_name(prm->io) +
                      " buffer; only in/inout buffers take input data");
    if (preset.find(name)) throw UserError("--in " + name + " given twice");
    Shape shape;
    for (const ExprP& e : prm->shape) shape.push_back(eval_param_expr(e, b).as_int());
    Buffer buf = read_npy(file, name, prm->dtype, poll ? NpyPoll([&] { poll("while reading " + file); }) : NpyPoll());
    if (buf.shape != shape || buf.dtype != prm->dtype) {
      std::string what = buf.shape != shape ? "shape " + numpy_shape(buf.shape) : std::string("dtype ") + scalar_name(buf.dtype);
      throw UserError(file + ": error: " + what + " does not match parameter '" + name + "' " +
                      param_type_str(*prm, shape));
    }
    buf.io = prm->io;
    preset.list.push_back(std::move(buf));
  }
  return preset;
}

void check_memory_budget(const Module& m, const Bindings& b) {
  double total = 0;
  std::set<std::string> seen;
  std::string biggest;
  double biggest_bytes = 0;
  for (const Kernel& k : m.kernels)
    for (const Param& prm : k.params) {
      if (prm.kind != ParamKind::Pointer || !seen.insert(prm.name).second) continue;
      double bytes = scalar_bytes(prm.dtype);
      for (const ExprP& e : prm.shape) bytes *= static_cast<double>(eval_param_expr(e, b).as_int());
      total += bytes;
      if (bytes > biggest_bytes) {
        biggest_bytes = bytes;
        biggest = prm.name;
      }
    }
  double phys = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (phys > 0 && total > phys / 2) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "the buffers need %.1f GiB (largest: '%s', %.1f GiB), more than half of this machine's %.1f GiB of memory",
                  total / (1 << 30), biggest.c_str(), biggest_bytes / (1 << 30), phys / (1 << 30));
    throw UserError(msg);
  }
}

void write_file_atomic(const std::string& path, const std::string& text, const std::string& what) { write_output_file(path, what, text); }

}  // namespace dtsim
