// The Triton frontend's entry: the launched kernel's parameters (pointers typed by the launch's
// buffers, scalars typed as Triton types them, constexprs bound), its grid and launch options, the
// lowering of its body, and the public entry points (Triton.h).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <functional>

#include "ir/TileParser.h"
#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

}  // namespace

Val parse_arg_value(const std::string& text, const std::string& name) {
  if (text == "True" || text == "true") return Val::of_bool(true);
  if (text == "False" || text == "false") return Val::of_bool(false);
  if (text == "None") return Val::none();
  if (text.size() >= 2 && (text[0] == '\'' || text[0] == '"') && text.back() == text[0]) return Val::of_str(text.substr(1, text.size() - 2));
  for (const char* p : {"tl.", "triton.language."})
    if (text.rfind(p, 0) == 0) {
      static const std::map<std::string, Scalar> dt = {{"float16", Scalar::F16}, {"bfloat16", Scalar::BF16}, {"float32", Scalar::F32},
                                                       {"float64", Scalar::F64}, {"int32", Scalar::I32},   {"int64", Scalar::I64},
                                                       {"int1", Scalar::I1},     {"int8", Scalar::I8},      {"int16", Scalar::I16},
                                                       {"float8e4nv", Scalar::F8E4M3}, {"float8e5", Scalar::F8E5M2},
                                                       {"float8e4b15", Scalar::F8E4B15}, {"float8e4b8", Scalar::F8E4B8},
                                                       {"float8e5b16", Scalar::F8E5B16}};
      static const std::map<std::string, Scalar> udt = {{"uint8", Scalar::I8}, {"uint16", Scalar::I16}, {"uint32", Scalar::I32}, {"uint64", Scalar::I64}};
      if (auto u = udt.find(text.substr(std::string(p).size())); u != udt.end()) return Val::of_udtype(u->second);
      auto it = dt.find(text.substr(std::string(p).size()));
      if (it == dt.end()) throw UserError("--arg " + name + "=" + text + ": unknown dtype");
      return Val::of_dtype(it->second);
    }
  errno = 0;
  char* end = nullptr;
  long long i = std::strtoll(text.c_str(), &end, 0);
  if (!text.empty() && *end == '\0' && errno == 0) return Val::of_int(i);
  if (!text.empty() && *end == '\0' && errno == ERANGE) {  // an integer literal beyond int64
    bool neg = text[0] == '-';
    throw UserError("--arg " + name + "=" + text + ": the integer does not fit in int64" +
                    (neg ? std::string("") : std::string(" (Triton passes integers up to 2**64 - 1 as uint64, which dtsim does not support)")));
  }
  errno = 0;
  double d = std::strtod(text.c_str(), &end);
  if (!text.empty() && *end == '\0') return Val::of_float(d);
  // Something that starts like a number but is not one (2**63, 1e, 0x): values are not evaluated.
  size_t at = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (at < text.size() && (std::isdigit(static_cast<unsigned char>(text[at])) || text[at] == '.'))
    throw UserError("--arg " + name + "=" + text + ": not a number (an --arg value is an integer, a float, True/False/None, " +
                    "a dtype such as tl.float16, or a word; expressions are not evaluated)");
  return Val::of_str(text);  // a bare word: a string constexpr (ACTIVATION=leaky_relu)
}

Kernel Lowerer::entry_kernel(const ModuleInfo& m, const Node& fn, TritonProgram& out) {
  Kernel k;
  k.name = fn.text;
  k.loc = fn.loc;
  Frame f;
  f.mod = &m;
  f.kernel = true;
  f.name = fn.text;
  blocks_.push_back(Block{&k.body, {}, false});
  f.depth = blocks_.size();
  std::map<std::string, const TritonBuffer*> bufs;
  for (const TritonBuffer& b : launch_.buffers) bufs[b.name] = &b;
  std::set<std::string> params;
  for (const Param& p : fn.params) {
    if (p.star) user_error(p.loc, "*args and **kwargs parameters are not supported in a @triton.jit function");
    params.insert(p.name);
    auto arg = launch_.args.find(p.name);
    // The value given with --arg, else the default; `missing`: the error without either.
    auto given_or_default = [&](const std::string& missing) {
      Val v;
      if (arg != launch_.args.end()) {
        v = parse_arg_value(arg->second, p.name);
        out.used_args.insert(p.name);
      } else if (p.def) {
        frames_.push_back(Frame{&m, {}, {}, false, {}, false, blocks_.size(), "<defaults>", false, {}});
        v = eval(*p.def);
        frames_.pop_back();
      } else {
        user_error(p.loc, missing);
      }
      return v;
    };
    if (is_constexpr_annotation(p.annotation.get())) {
      Val v = given_or_default("constexpr parameter " + q(p.name) + " has no value: give --arg " + p.name + "=VALUE");
      f.vars[p.name] = v;
      if (v.k == VK::Int || v.k == VK::Bool) {  // kept as a constexpr parameter (grid expressions may use it)
        dtsim::Param ip;
        ip.name = p.name;
        ip.kind = ParamKind::Constexpr;
        ip.dtype = v.i < INT32_MIN || v.i > INT32_MAX ? Scalar::I64 : Scalar::I32;
        ip.init = make_const_int(v.i, p.loc);
        ip.loc = p.loc;
        k.params.push_back(ip);
        blocks_.back().declared[p.name] = Type{ip.dtype, false, {}};
      }
      continue;
    }
    if (auto b = bufs.find(p.name); b != bufs.end()) {
      if (arg != launch_.args.end()) user_error(p.loc, "parameter " + q(p.name) + " is given both as a buffer and with --arg");
      dtsim::Param ip;
      ip.name = p.name;
      ip.kind = ParamKind::Pointer;
      ip.dtype = b->second->dtype;
      for (int64_t d : b->second->shape) ip.shape.push_back(make_const_int(d, p.loc));
      ip.loc = p.loc;
      k.params.push_back(ip);
      Type t{ip.dtype, true, {}};
      blocks_.back().declared[p.name] = t;
      if (b->second->is_unsigned) uns_vars_.insert(p.name);  // a pointer to tl.uint8 ... tl.uint64 data
      ExprP ref = make_var(p.name, p.loc);
      ref->type = t;
      Val v = tensor(ref, {p.name});
      f.vars[p.name] = v;
      continue;
    }
    Val v;
    std::optional<Scalar> annotated;
    bool annotated_unsigned = false;
    if (p.annotation) {
      frames_.push_back(Frame{&m, {}, {}, false, {}, false, blocks_.size(), "<annotation>", false, {}});
      Val a = eval(*p.annotation);
      frames_.pop_back();
      if (a.k == VK::DType && !a.t.ptr) annotated = a.dt, annotated_unsigned = a.uns;
    }
    v = given_or_default("parameter " + q(p.name) + " has no value: give --in " + p.name + "=FILE.npy or --buf " + p.name +
                         "=f32[N] for a pointer, --arg " + p.name + "=VALUE for a scalar");
    if (v.k == VK::None) {  // None: a compile-time None (Triton specializes it away)
      f.vars[p.name] = v;
      continue;
    }
    if (!v.number()) user_error(p.loc, "parameter " + q(p.name) + " gets " + py_type_name(v) + "; only constexpr parameters take that");
    dtsim::Param ip;
    ip.name = p.name;
    ip.kind = ParamKind::Scalar;
    ip.loc = p.loc;
    if (v.k == VK::Float) {
      ip.dtype = annotated.value_or(Scalar::F32);
      ip.init = make_const_float(v.f, p.loc);
    } else if (v.k == VK::Bool) {
      ip.dtype = annotated.value_or(Scalar::I1);
      ip.init = make_const_bool(v.i != 0, p.loc);
    } else {
      ip.dtype = annotated.value_or(v.i < INT32_MIN || v.i > INT32_MAX ? Scalar::I64 : Scalar::I32);
      ip.init = make_const_int(v.i, p.loc);
    }
    if (is_float(ip.dtype) && ip.init->kind == ExprKind::Const && !ip.init->is_float) ip.init = make_const_float(static_cast<double>(v.i), p.loc);
    if (!is_float(ip.dtype) && ip.init->is_float) user_error(p.loc, "parameter " + q(p.name) + " is " + scalar_name(ip.dtype) + " but gets a float");
    k.params.push_back(ip);
    Type t{ip.dtype, false, {}};
    blocks_.back().declared[p.name] = t;
    ExprP ref = make_var(p.name, p.loc);
    ref->type = t;
    if (annotated_unsigned && is_int(ip.dtype)) uns_vars_.insert(p.name);  // x: tl.uint32 (its bits as Triton's launcher passes them)
    f.vars[p.name] = tensor(ref);
  }
  for (const TritonBuffer& b : launch_.buffers)
    if (!params.count(b.name)) throw UserError("kernel '" + k.name + "' has no parameter '" + b.name + "' (given with --in/--buf)");
  // Launch options of Triton (kernel[grid](..., num_warps=8, num_stages=3)): --arg num_warps=N.
  bool stages_given = false;
  for (const char* opt : {"num_warps", "num_stages"}) {
    auto it = launch_.args.find(opt);
    if (it == launch_.args.end() || params.count(opt)) continue;
    Val v = parse_arg_value(it->second, opt);
    // num_stages=0, as Triton takes it: no software pipelining, one stage
    const bool stages = std::string(opt) == "num_stages";
    if (v.k != VK::Int || v.i < (stages ? 0 : 1) || v.i > 1024)
      throw UserError(std::string("--arg ") + opt + "=" + it->second + (stages ? ": expected an integer >= 0" : ": expected a positive integer"));
    (stages ? k.num_stages : k.num_warps) = static_cast<int>(stages ? std::max<int64_t>(v.i, 1) : v.i);
    stages_given = stages_given || stages;
    out.used_args.insert(opt);
  }
  frames_.push_back(std::move(f));
  exec_block(fn.body);
  frames_.pop_back();
  blocks_.pop_back();
  if (!stages_given && range_stages_ > 0) k.num_stages = static_cast<int>(std::min<int64_t>(range_stages_, 16));
  k.warp_specialize = range_warp_specialize_;
  for (dtsim::Param& p : k.params)
    if (p.kind == ParamKind::Pointer) {
      bool has_data = bufs.at(p.name)->has_data;
      if (!stored.count(p.name)) p.io = BufIO::In;
      else p.io = (has_data || loaded.count(p.name)) ? BufIO::InOut : BufIO::Out;
    }
  // The grid: --grid expressions over the parameters.
  if (launch_.grid.empty()) throw UserError("a .py kernel needs a launch grid: give --grid N[,N[,N]] (expressions of the parameters, e.g. --grid 'cdiv(n, BLOCK)')");
  for (size_t i = 0; i < launch_.grid.size(); ++i) {
    int gid = Sources::add("<--grid " + std::to_string(i) + ">", launch_.grid[i]);
    k.grid.push_back(parse_tile_expr(gid));
  }
  if (k.grid.size() > 3) throw UserError("--grid takes 1 to 3 extents, got " + std::to_string(k.grid.size()));
  return k;
}

TritonProgram Lowerer::run(const std::string& path) {
  const ModuleInfo& m = load_module(path);
  entry_file_ = m.ast.file;
  std::string name = launch_.kernel;
  if (name.empty()) {
    std::vector<std::string> entries = triton_entry_points(path);
    if (entries.size() != 1) {
      std::string list;
      for (const auto& e : entries) list += (list.empty() ? "" : ", ") + e;
      if (entries.empty()) throw UserError(path + ": no @triton.jit function found");
      throw UserError(path + ": several kernels (" + list + "): choose one with --kernel NAME");
    }
    name = entries[0];
  }
  if (!m.jit.count(name)) {
    std::string list;
    for (const auto& e : m.jit) list += (list.empty() ? "" : ", ") + e;
    throw UserError("no @triton.jit function named '" + name + "' in " + path + " (functions: " + list + ")");
  }
  TritonProgram out;
  out.module.file = path;
  const Node& fn = *m.funcs.at(name);
  if (!fn.deferred_error.empty()) throw UserError(fn.deferred_loc, fn.deferred_error);
  out.module.kernels.push_back(entry_kernel(m, fn, out));
  out.break_at = break_at;
  out.precise_div = precise_div;
  return out;
}

// ---- public entry points ----

// The names every call in a function calls (plain names and attributes).
void calls_in(const Node& n, std::set<std::string>& out) {
  if (n.kind == NK::Call && n.kids[0]) {
    const Node& c = *n.kids[0];
    if (c.kind == NK::Name || c.kind == NK::Attr) out.insert(c.text);
  }
  for (const NodeP& k : n.kids)
    if (k) calls_in(*k, out);
  for (const NodeP& k : n.body) calls_in(*k, out);
  for (const NodeP& k : n.orelse) calls_in(*k, out);
}

}  // namespace dtsim::py

namespace dtsim {

std::vector<std::string> triton_entry_points(const std::string& path) {
  TritonLaunch none;
  py::Lowerer l(none);
  const py::ModuleInfo& m = l.load_module(path);
  std::set<std::string> called;
  for (const std::string& f : m.jit) py::calls_in(*m.funcs.at(f), called);
  std::vector<std::string> out;
  for (const py::NodeP& s : m.ast.body)
    if (s->kind == py::NK::FunctionDef && m.jit.count(s->text) && !called.count(s->text)) out.push_back(s->text);
  return out;
}

TritonProgram lower_triton_file(const std::string& path, const TritonLaunch& launch) {
  py::Lowerer l(launch);
  return l.run(path);
}

}  // namespace dtsim
