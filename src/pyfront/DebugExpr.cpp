// Debugger expressions in Triton syntax: parsing, the names they read, and their lowering through
// the kernel lowering (Lowerer) in a frame holding the instance's variables (see DebugExpr.h).
#include "pyfront/DebugExpr.h"

#include <algorithm>

#include "pyfront/Lower.h"

namespace dtsim {

using namespace py;

namespace {

void collect_names(const Node& n, std::vector<std::pair<std::string, SourceLoc>>& out) {
  if (n.kind == NK::Name) {
    for (const auto& [name, loc] : out)
      if (name == n.text) return;
    out.push_back({n.text, n.loc});
    return;
  }
  for (const NodeP& k : n.kids)
    if (k) collect_names(*k, out);
}

// A subscript the lowering cannot express (Triton subscripts are ':' and None only): one with a
// number, a bounded slice or any other index.
bool indexes_values(const Node& sub) {
  for (size_t i = 1; i < sub.kids.size(); ++i) {
    const Node& it = *sub.kids[i];
    if (it.kind == NK::NoneLit || it.kind == NK::Ellipsis) continue;
    if (it.kind == NK::Slice && !it.kids[0] && !it.kids[1] && !it.kids[2]) continue;
    return true;
  }
  return false;
}

// A Python value as the debugger prints it: Python's repr, dtypes as tl.float32.
std::string debugger_repr(const Val& v) {
  switch (v.k) {
    case VK::DType: {
      if (v.t.ptr) return "tl.pointer_type(" + debugger_repr(Val::of_dtype(v.dt)) + ")";
      switch (v.dt) {  // Triton's names (every element type: a new one fails to compile here)
        case Scalar::I1: return "tl.int1";
        case Scalar::I8: return "tl.int8";
        case Scalar::I16: return "tl.int16";
        case Scalar::I32: return "tl.int32";
        case Scalar::I64: return "tl.int64";
        case Scalar::F8E4M3: return "tl.float8e4nv";
        case Scalar::F8E5M2: return "tl.float8e5";
        case Scalar::F8E4B15: return "tl.float8e4b15";
        case Scalar::F8E4B8: return "tl.float8e4b8";
        case Scalar::F8E5B16: return "tl.float8e5b16";
        case Scalar::F16: return "tl.float16";
        case Scalar::BF16: return "tl.bfloat16";
        case Scalar::F32: return "tl.float32";
        case Scalar::F64: return "tl.float64";
      }
      return py_repr(v);
    }
    case VK::Str: return "'" + v.text + "'";
    case VK::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < v.items.size(); ++i) s += (i ? ", " : "") + debugger_repr(v.items[i]);
      return s + (v.items.size() == 1 ? ",)" : ")");
    }
    default: return py_repr(v);
  }
}

bool holds_tensor(const Val& v) {
  if (v.k == VK::Tensor || v.k == VK::Pair) return true;
  for (const Val& x : v.items)
    if (holds_tensor(x)) return true;
  return false;
}

// A subscript bound or index: a compile-time int or a runtime integer scalar, as an IR expression.
ExprP index_expr(Lowerer& L, const Node& n) {
  Val v = L.eval(n);
  if (v.k == VK::Int || v.k == VK::Bool) return L.ir(Val::of_int(v.i), n.loc);
  if (v.k == VK::Tensor && v.t.is_scalar() && !v.t.ptr && !is_float(v.t.elem)) return L.ir(v, n.loc);
  user_error(n.loc, "an index must be an integer, got " + py_type_name(v));
}

[[noreturn]] void not_defined(const std::string& name, SourceLoc loc, const std::vector<std::string>& known) {
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  user_error(loc, "'" + name + "' is not defined (names: " + list + ")");
}

}  // namespace

PyDebugExpr::PyDebugExpr(const std::string& text, const std::string& pseudo_file) {
  int file = Sources::add(pseudo_file, text);
  try {
    node_ = parse_python_expr(file);
  } catch (const UserError&) {
    // the .tile condition operators, as written before for .tile kernels: name the Python ones
    for (const char* op : {"&&", "||"})
      if (size_t at = text.find(op); at != std::string::npos && text.find('\n') == std::string::npos)
        user_error(SourceLoc{file, 1, static_cast<int>(at) + 1},
                   std::string("'") + op + "' is not Python: write '" + (op[0] == '&' ? "and" : "or") + "' (or '" + op[0] +
                       "' on tensors)");
    throw;
  }
  collect_names(*node_, names_);
}

LoweredDebugExpr PyDebugExpr::lower(const std::string& kernel_file, const std::string& kernel_text,
                                    const DebugScope& scope, const std::vector<std::string>& known) const {
  TritonLaunch launch;
  launch.sources[kernel_file] = kernel_text;
  Lowerer L(launch);
  L.debugger = true;
  ModuleInfo fallback;  // a kernel file the reader cannot load again: tl and triton only
  const ModuleInfo* mod = &fallback;
  try {
    mod = &L.load_module(kernel_file);
  } catch (const UserError&) {
  }
  std::map<std::string, Val> vars;
  for (const auto& [name, loc] : names_) {
    std::optional<DebugBinding> b = scope(name);
    if (!b) continue;
    switch (b->kind) {
      case DebugBinding::Runtime: {
        ExprP ref = make_var(name, loc);
        ref->type = b->type;
        Val v = L.tensor(ref, b->type.ptr ? std::set<std::string>{name} : std::set<std::string>{});
        v.var = name;
        vars[name] = v;
        break;
      }
      case DebugBinding::Constexpr: vars[name] = Val::of_int(b->value); break;
      case DebugBinding::ProgramId: vars[name] = L.tensor(make_program_id(b->axis, loc)); break;
    }
  }
  for (const char* n : {"tl", "triton"})
    if (!vars.count(n) && !Lowerer::defines(*mod, n)) {
      Val m;
      m.k = VK::Module;
      m.text = std::string(n) == "tl" ? "triton.language" : "triton";
      vars[n] = m;
    }
  for (const auto& [name, loc] : names_)
    if (!vars.count(name) && !Lowerer::defines(*mod, name)) not_defined(name, loc, known);
  std::vector<StmtP> emitted;
  L.enter_debug_frame(*mod, vars, &emitted);

  // Subscripts at the end that index with values are applied to the evaluated tile (host side).
  std::vector<const Node*> chain;
  const Node* base = node_.get();
  while (base->kind == NK::Subscript) {
    chain.push_back(base);
    base = base->kids[0].get();
  }
  size_t host = 0;
  for (size_t i = 0; i < chain.size(); ++i)
    if (indexes_values(*chain[i])) host = i + 1;
  const Node* top = host ? chain[host - 1]->kids[0].get() : node_.get();

  LoweredDebugExpr out;
  Val v = L.eval(*top);
  if (host && v.compile_time()) {  // x.shape[0], a tuple constant: Python's own indexing
    host = 0;
    v = L.eval(*node_);
  }
  if (v.k == VK::Pair) user_error(start_loc(*top), "tl.swizzle2d() returns two values: print them one at a time");
  if (v.k == VK::Tensor || v.number()) {
    out.ir = L.ir(v, start_loc(*top));
    if (v.number()) out.constant = debugger_repr(v);
  } else {
    if (holds_tensor(v)) user_error(start_loc(*top), "a tuple of tensors: print its items one at a time (print a, b)");
    out.constant = debugger_repr(v);
  }
  for (size_t i = host; i-- > 0;) {
    const Node& sub = *chain[i];
    if (!out.ir || v.number()) user_error(sub.loc, "cannot index " + py_type_name(v));
    std::vector<DebugIndex> items;
    for (size_t k = 1; k < sub.kids.size(); ++k) {
      const Node& it = *sub.kids[k];
      DebugIndex d;
      d.loc = it.loc;
      if (it.kind == NK::NoneLit) {
        d.kind = DebugIndex::NewAxis;
      } else if (it.kind == NK::Ellipsis) {
        user_error(it.loc, "'...' is not supported in a debugger subscript");
      } else if (it.kind == NK::Slice) {
        d.kind = DebugIndex::Slice;
        if (it.kids[0]) d.lo = index_expr(L, *it.kids[0]);
        if (it.kids[1]) d.hi = index_expr(L, *it.kids[1]);
        if (it.kids[2]) d.step = index_expr(L, *it.kids[2]);
      } else {
        d.index = index_expr(L, it);
      }
      items.push_back(std::move(d));
    }
    out.subscripts.push_back(std::move(items));
  }
  if (!emitted.empty())
    user_error(emitted.front()->loc, "this expression runs a statement (a store, print or assert): the debugger evaluates "
                                     "expressions only");
  return out;
}

void PyDebugExpr::check_names(const std::string& kernel_file, const std::string& kernel_text,
                              const std::vector<std::string>& known) const {
  TritonLaunch launch;
  launch.sources[kernel_file] = kernel_text;
  Lowerer L(launch);
  ModuleInfo fallback;
  const ModuleInfo* mod = &fallback;
  try {
    mod = &L.load_module(kernel_file);
  } catch (const UserError&) {
  }
  for (const auto& [name, loc] : names_) {
    bool ok = name == "tl" || name == "triton" || std::find(known.begin(), known.end(), name) != known.end() ||
              Lowerer::defines(*mod, name);
    if (!ok) not_defined(name, loc, known);
  }
}

std::vector<std::string> triton_tl_names() { return tl_names(); }

}  // namespace dtsim

namespace dtsim::py {

void Lowerer::enter_debug_frame(const ModuleInfo& m, std::map<std::string, Val> vars, std::vector<StmtP>* out) {
  blocks_.push_back(Block{out, {}, false});
  for (const auto& [name, v] : vars)
    if (v.k == VK::Tensor && !v.var.empty()) blocks_.back().declared[name] = v.t;
  Frame f;
  f.mod = &m;
  f.vars = std::move(vars);
  f.kernel = true;
  f.name = "<debugger>";
  f.depth = blocks_.size();
  frames_.push_back(std::move(f));
}

}  // namespace dtsim::py
