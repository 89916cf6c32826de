// The Triton frontend's modules: reading a .py file (and the sibling modules it imports from) into
// its functions, constants and imports, and resolving global names.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "ir/TileParser.h"
#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

}  // namespace

// ---- modules ----

const ModuleInfo& Lowerer::load_module(const std::string& path) {
  std::string key = std::filesystem::weakly_canonical(path).string();
  auto it = modules_.find(key);
  if (it != modules_.end()) return *it->second;
  auto m = std::make_unique<ModuleInfo>();
  auto snap = launch_.sources.find(path);
  if (snap == launch_.sources.end()) snap = launch_.sources.find(key);
  int file = is_prelude_path(path)             ? Sources::add(path, prelude_text())
             : snap != launch_.sources.end() ? Sources::add(path, snap->second)
                                             : Sources::load(path);
  m->ast = parse_python(file);
  m->dir = std::filesystem::path(path).parent_path().string();
  m->name = path;
  m->package = std::filesystem::path(path).filename() == "__init__.py";
  // a statement of the module; `cond`: inside a module-level if / try part, where a name keeps the first
  // binding a part gives it
  std::function<void(const NodeP&, bool)> take = [&](const NodeP& s, bool cond) {
    auto bound = [&](const std::string& n) { return cond && (m->funcs.count(n) || m->consts.count(n) || m->imports.count(n)); };
    switch (s->kind) {
      case NK::Other:
        if (s->text == "conditional")
          for (const NodeP& k : s->body) take(k, true);
        break;
      case NK::FunctionDef: {
        if (bound(s->text)) break;
        m->funcs[s->text] = s.get();
        bool jit = false;
        for (const NodeP& d : s->kids) {
          const Node* n = d->kind == NK::Call ? d->kids[0].get() : d.get();
          if ((n->kind == NK::Attr || n->kind == NK::Name) && n->text == "jit") jit = true;
        }
        if (jit) m->jit.insert(s->text);
        else m->consts.erase(s->text);
        break;
      }
      case NK::Assign:
        if (s->kids.size() == 2 && s->kids[0]->kind == NK::Name && !bound(s->kids[0]->text)) m->consts[s->kids[0]->text] = s.get();
        break;
      case NK::AnnAssign:
        if (s->kids[0]->kind == NK::Name && s->kids[2] && !bound(s->kids[0]->text)) m->consts[s->kids[0]->text] = s.get();
        break;
      case NK::Import:
        for (const auto& [mod, alias] : s->names) {
          Val v;
          v.k = VK::Module;
          if (mod == "triton.language.extra.libdevice" || mod == "triton.language.extra.cuda.libdevice") {
            v.text = alias == mod ? "triton" : "triton.language.math";  // `import ... as libdevice`
          } else if (mod == "triton" || mod == "triton.language" || mod == "triton.language.math") {
            v.text = alias == mod && mod != "triton" ? "triton" : mod;  // `import triton.language` binds `triton`
          } else {
            v.k = VK::Host;  // resolved on use: a module of the kernel's folder, its package or sys.path
            // `import a.b` binds `a` (the package; a.b is reached as its attribute), `import a.b as c` binds a.b
            v.text = alias == mod ? mod.substr(0, mod.find('.')) : mod;
          }
          if (!bound(alias.substr(0, alias.find('.')))) m->imports[alias.substr(0, alias.find('.'))] = v;
        }
        break;
      case NK::ImportFrom:
        for (const auto& [name, alias] : s->names) {
          Val v;
          if (name == "*") {  // from M import *: M's names are looked up when this module lacks one
            if (s->text.rfind("triton", 0) != 0) m->star.push_back(s->text);
            continue;
          }
          if (s->text == "triton" && name == "language") {
            v.k = VK::Module;
            v.text = "triton.language";
          } else if ((s->text == "triton.language" && (name == "math" || name == "libdevice")) ||
                     ((s->text == "triton.language.extra" || s->text == "triton.language.extra.cuda") && name == "libdevice")) {
            v.k = VK::Module;
            v.text = "triton.language.math";
          } else if ((s->text == "triton.language.extra" || s->text == "triton.language.extra.cuda") && (name == "globaltimer" || name == "smid")) {
            v = Val::builtin("tl." + name);
          } else if (s->text == "triton") {
            v = Val::builtin("triton." + name);
          } else if (s->text == "triton.language" || s->text == "triton.language.math" || s->text == "triton.language.extra.libdevice" ||
                     s->text == "triton.language.extra.cuda.libdevice") {
            v = Val::builtin("tl." + name);
          } else {
            v.k = VK::Host;  // resolved on use: a sibling module's function or constant
            v.text = s->text + ":" + name;
          }
          if (!bound(alias)) m->imports[alias] = v;
        }
        break;
      default: break;
    }
  };
  for (const NodeP& s : m->ast.body) take(s, false);
  const ModuleInfo& ref = *m;
  modules_[key] = std::move(m);
  return ref;
}

// The module `name` as imported by `from`: a relative name (".util", "..", ".") from `from`'s package
// (one folder up per dot after the first); an absolute one from `from`'s own folder, then each of the
// launch's module roots (sys.path). "a.b" is a/b.py or the package a/b/__init__.py.
const ModuleInfo* Lowerer::sibling(const ModuleInfo& from, const std::string& name) {
  namespace fs = std::filesystem;
  size_t dots = std::min(name.find_first_not_of('.'), name.size());
  std::string rel = name.substr(dots);
  std::replace(rel.begin(), rel.end(), '.', '/');
  fs::path here = from.dir.empty() ? fs::path(".") : fs::path(from.dir);
  std::vector<fs::path> bases;
  if (dots > 0) {
    fs::path b = fs::weakly_canonical(fs::absolute(here));
    for (size_t i = 1; i < dots; ++i) b = b.parent_path();
    bases.push_back(b);
  } else {
    bases.push_back(here);
    for (const std::string& r : launch_.module_roots) bases.push_back(r.empty() ? fs::path(".") : fs::path(r));
  }
  std::error_code ec;
  for (const fs::path& b : bases) {
    for (const fs::path& p : {rel.empty() ? fs::path() : b / (rel + ".py"), (rel.empty() ? b : b / rel) / "__init__.py"}) {
      if (!p.empty() && fs::is_regular_file(p, ec)) return &load_module(p.string());
    }
  }
  return nullptr;
}

// A module constant bound by a call (`exp = get_tl_exp()`, host code choosing a function): what the
// Python package found it holds (TritonLaunch::host_values), or None where it did not say (the call
// is evaluated here, and a host function's call is an error).
Val Lowerer::host_value(const ModuleInfo& m, const std::string& name, const Node& value) {
  if (value.kind != NK::Call || launch_.host_values.empty()) return Val::none();
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(std::filesystem::path(m.name), ec).string();
  auto f = launch_.host_values.find(ec ? m.name : real);
  if (f == launch_.host_values.end()) return Val::none();
  auto it = f->second.find(name);
  if (it == f->second.end()) return Val::none();
  const std::string& h = it->second;
  if (h.rfind("tl.", 0) == 0) return Val::builtin(h);
  if (h.rfind("py:", 0) == 0) {  // a number host code computed (`tl.constexpr(not os.getenv(...))`)
    std::string t = h.substr(3);
    if (t == "True" || t == "False") return Val::of_bool(t == "True");
    char* end = nullptr;
    errno = 0;
    long long i = std::strtoll(t.c_str(), &end, 10);
    if (end && *end == '\0' && errno == 0) return Val::of_int(i);
    double d = std::strtod(t.c_str(), &end);
    if (end && *end == '\0') return Val::of_float(d);
  }
  return Val::none();
}

Val Lowerer::global(const ModuleInfo& m, const std::string& name, SourceLoc loc, bool in_body) {
  if (m.jit.count(name)) {
    Val v;
    v.k = VK::Func;
    v.fn = m.funcs.at(name);
    if (!v.fn->deferred_error.empty()) throw UserError(v.fn->deferred_loc, v.fn->deferred_error);
    v.mod = &m;
    return v;
  }
  if (auto it = m.consts.find(name); it != m.consts.end()) {
    if (!m.cache.count(name)) {
      if (m.evaluating.count(name)) user_error(loc, "module constant " + q(name) + " refers to itself");
      m.evaluating.insert(name);
      const Node& s = *it->second;
      const Node& value = s.kind == NK::Assign ? *s.kids[1] : *s.kids[2];
      frames_.push_back(Frame{&m, {}, {}, false, {}, false, blocks_.size(), "<module>", false, {}});
      Val v;
      try {
        v = host_value(m, name, value);
        if (v.k == VK::None) v = eval(value);
        bool plain = v.k == VK::None || v.k == VK::Int || v.k == VK::Float || v.k == VK::Bool || v.k == VK::Str || v.k == VK::Tuple;
        if (plain && !(value.kind == NK::Call && eval(*value.kids[0]).k == VK::Constexpr)) m.plain.insert(name);
      } catch (...) {
        frames_.pop_back();
        m.evaluating.erase(name);
        throw;
      }
      frames_.pop_back();
      m.evaluating.erase(name);
      if (!v.compile_time()) user_error(value.loc, "module-level " + q(name) + " must be a compile-time constant");
      m.cache[name] = v;
    }
    if (in_body && m.plain.count(name))
      user_error(loc, "global " + q(name) + " is a plain Python value: a @triton.jit function can read only module-level " +
                          "values made with tl.constexpr(...) (write " + name + " = tl.constexpr(...)), dtypes and @triton.jit functions");
    return m.cache.at(name);
  }
  if (m.funcs.count(name)) {
    Val v;
    v.k = VK::Host;
    v.text = name;
    return v;
  }
  if (auto it = m.imports.find(name); it != m.imports.end()) {
    Val v = it->second;
    if (v.k == VK::Host && v.text.find(':') != std::string::npos) {
      std::string mod = v.text.substr(0, v.text.find(':')), item = v.text.substr(v.text.find(':') + 1);
      if (const ModuleInfo* sm = sibling(m, mod)) return global(*sm, item, loc, in_body);
      v.text = item;
    } else if (v.k == VK::Host) {
      if (const ModuleInfo* sm = sibling(m, v.text)) {
        v.k = VK::Module;
        v.mod = sm;
      }
    }
    return v;
  }
  for (const std::string& s : m.star)  // from M import *
    if (const ModuleInfo* sm = sibling(m, s); sm && sm != &m && !python_builtin(name) && defines(*sm, name))
      return global(*sm, name, loc, in_body);
  if (m.package) {  // a package's submodule: `from pkg import util`, `pkg.util.f`
    if (const ModuleInfo* sm = sibling(m, "." + name)) {
      Val v;
      v.k = VK::Module;
      v.text = name;
      v.mod = sm;
      return v;
    }
  }
  if (python_builtin(name)) return Val::builtin(name);
  user_error(loc, "name " + q(name) + " is not defined");
}

bool Lowerer::python_builtin(const std::string& name) {
  static const std::set<std::string> builtins = {"range", "min", "max", "len", "int", "float", "bool", "abs", "print",
                                                 "isinstance", "tuple", "list", "str", "round", "pow", "divmod",
                                                 "breakpoint_if", "print_if", "breakpoint"};
  return builtins.count(name) > 0;
}

bool Lowerer::defines(const ModuleInfo& m, const std::string& name) {
  return m.jit.count(name) || m.consts.count(name) || m.funcs.count(name) || m.imports.count(name) || python_builtin(name);
}

Val Lowerer::lookup(const std::string& name, SourceLoc loc) {
  Frame& f = frames_.back();
  if (auto it = f.vars.find(name); it != f.vars.end()) return it->second;
  return global(*f.mod, name, loc, f.name.empty() || f.name[0] != '<');
}

}  // namespace dtsim::py
