// What a launch needs besides the module (Driver.h): the --in files (each read once), the input
// buffers checked against the parameters, the memory budget, --buf and --grid specs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "driver/Driver.h"
#include "host/Npy.h"

namespace dtsim {

namespace {

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

}  // namespace

// ---- the --in files ----

const NpyInfo& InputFiles::info(const std::string& file, std::optional<Scalar> want) {
  int key = want ? static_cast<int>(*want) : -1;  // `want` changes how bf16, fp8, i8 and i16 data are read
  auto it = info_.find({file, key});
  if (it == info_.end()) it = info_.emplace(std::make_pair(file, key), read_npy_info(file, want)).first;
  return it->second;
}

Buffer InputFiles::take(const std::string& name, const std::string& file, std::optional<Scalar> want, const NpyPoll& poll) {
  return read_npy(file, name, want, poll);
}

Buffers read_inputs(Program& p, const std::vector<std::pair<std::string, std::string>>& ins,
                    const std::function<void(const std::string&)>& poll) {
  const Module& m = p.module;
  Buffers preset;
  for (const auto& [name, file] : ins) {
    const Param* prm = find_buffer_param(m, name);
    if (!prm) throw UserError("--in " + name + "=" + file + ": the program has no buffer parameter '" + name + "'");
    if (prm->io == BufIO::Out || prm->io == BufIO::Scratch)
      throw UserError("--in " + name + "=" + file + ": '" + name + "' is an " + bufio_name(prm->io) +
                      " buffer; only in/inout buffers take input data");
    if (preset.find(name)) throw UserError("--in " + name + " given twice");
    Shape shape;
    for (const ExprP& e : prm->shape) shape.push_back(eval_param_expr(e, p.bindings).as_int());
    const std::string what = "while reading " + file;  // (a structured binding: clang 14 cannot capture it)
    Buffer buf = p.inputs->take(name, file, prm->dtype, poll ? NpyPoll([&] { poll(what); }) : NpyPoll());
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

const Param* find_buffer_param(const Module& m, const std::string& name) {
  for (const Kernel& k : m.kernels)
    if (const Param* prm = k.find_param(name); prm && prm->kind == ParamKind::Pointer) return prm;
  return nullptr;
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

// ---- flag values ----

BufferDecl parse_buf_spec(const std::string& name, const std::string& spec) {
  std::string what = "--buf " + name + "=" + spec + ": ";
  size_t lb = spec.find('[');
  if (lb == std::string::npos || spec.back() != ']') throw UserError(what + "expected DTYPE[D0, D1, ...], e.g. f32[1000]");
  BufferDecl b;
  b.name = name;
  std::string ty = spec.substr(0, lb);
  if (ty == "u8" || ty == "u16" || ty == "u32" || ty == "u64") {  // unsigned: the signless type of the width
    b.is_unsigned = true;
    ty[0] = 'i';
  }
  auto dt = parse_scalar(ty);
  if (!dt) throw UserError(what + "unknown type '" + spec.substr(0, lb) + "' (expected i1, i8, i16, i32, i64, u8, u16, u32, u64, f8e4m3, f8e5m2, f8e4b15, f8e4b8, f8e5b16, f16, bf16, f32 or f64)");
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

std::vector<std::string> split_exprs(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  auto flush = [&] {
    size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) flush();
    else cur += c;
  }
  flush();
  return out;
}

}  // namespace dtsim
