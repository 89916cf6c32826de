// Binding the sizes of one run before lowering: `--arg <dim>_SIZE=N`, the shapes of `--in` arrays,
// and the declared defaults, with dims tied by permuted or repeated accesses sharing one size. Two
// sources that disagree are one error naming both.
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <algorithm>
#include <functional>

#include "frontend/DtAst.h"

namespace dtsim {

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// Where a dim's size came from.
struct SizeSource {
  int64_t value = 0;
  std::string dim;   // the dim it was given for
  std::string what;  // "--arg k_SIZE=100", "--in A=a.npy (shape (100, 250))"
  std::string via;   // " through A[x, k]" (an input), "" otherwise
  SourceLoc loc;     // the access or declaration it points at (may be invalid)
};

class SizeBinder {
 public:
  explicit SizeBinder(DtProgram& p) : p_(p), root_(dt_size_classes(p)) {}

  void from_args(const std::map<std::string, std::string>& args, std::set<std::string>& used) {
    for (const auto& [name, text] : args) {
      const DtSymbol* d = p_.find(name);
      if (d && (d->kind == DtSymKind::Var || d->kind == DtSymKind::RVar))
        throw UserError("--arg " + name + "=" + text + ": '" + name + "' is a dim; give its size as --arg " + name + "_SIZE=" + text);
      if (name.size() <= 5 || name.compare(name.size() - 5, 5, "_SIZE") != 0) continue;
      std::string dim = name.substr(0, name.size() - 5);
      d = p_.find(dim);
      if (!d || (d->kind != DtSymKind::Var && d->kind != DtSymKind::RVar)) continue;
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno == ERANGE || v < 1 || v > INT32_MAX)
        throw UserError("--arg " + name + "=" + text + ": a size must be an integer in [1, " + std::to_string(INT32_MAX) + "]");
      set(dim, {v, dim, "--arg " + name + "=" + text, "", {}});
      used.insert(name);
    }
  }

  void from_input(const DtInputShape& in) {
    const DtSymbol* s = p_.find(in.name);
    if (!s || s->kind != DtSymKind::In || s->dims.empty()) return;  // not an input that is read: reported with the data
    std::string what = "--in " + in.name + "=" + in.file + " (shape " + shape_text(in.shape) + ")";
    if (in.shape.size() != s->dims.size())
      user_error(s->dims_loc, what + " has " + std::to_string(in.shape.size()) + (in.shape.size() == 1 ? " dim" : " dims") + ", but " + in.name + " is indexed " + in.name + "[" +
                                  join(s->dims) + "] (" + std::to_string(s->dims.size()) + " dims)");
    for (size_t i = 0; i < in.shape.size(); ++i) {
      if (in.shape[i] < 1 || in.shape[i] > INT32_MAX)
        user_error(s->dims_loc, what + ": dim " + std::to_string(i) + " of " + in.name + "[" + join(s->dims) + "] must be in [1, " +
                                    std::to_string(INT32_MAX) + "]");
      set(s->dims[i], {in.shape[i], s->dims[i], what, " through " + in.name + "[" + join(s->dims) + "]", s->dims_loc});
    }
  }

  // Dims no source fixed: the declared default of their class (declared sizes must agree), and the
  // sizes written into the program.
  void finish() {
    std::map<std::string, SizeSource> declared;
    for (const DtSymbol& s : p_.syms) {
      if ((s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar) || !s.has_default) continue;
      std::string r = find(s.name);
      SizeSource src{s.size, s.name, std::string("`") + dt_sym_kind_name(s.kind) + " " + s.name + " = " + std::to_string(s.size) + "` (line " +
                                                 std::to_string(s.loc.line) + ")", "", s.loc};
      auto it = declared.find(r);
      if (it == declared.end()) declared[r] = src;
      else if (it->second.value != s.size) conflict(it->second, src);
    }
    for (DtSymbol& s : p_.syms) {
      if (s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar) continue;
      std::string r = find(s.name);
      if (auto it = given_.find(r); it != given_.end()) s.size = it->second.value;
      else if (auto dt = declared.find(r); dt != declared.end()) s.size = dt->second.value;
    }
  }

 private:
  DtProgram& p_;
  std::map<std::string, std::string> root_;  // dim -> its class
  std::map<std::string, SizeSource> given_;  // class -> the first source that sized it

  std::string find(const std::string& d) const { return root_.at(d); }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }

  void set(const std::string& dim, const SizeSource& src) {
    std::string r = find(dim);
    auto it = given_.find(r);
    if (it == given_.end()) given_[r] = src;
    else if (it->second.value != src.value) conflict(it->second, src);
  }

  // The ties on a shortest path from dim `a` to dim `b` (empty when they are the same dim).
  std::vector<const DtSizeTie*> ties_between(const std::string& a, const std::string& b) const {
    std::map<std::string, std::pair<std::string, const DtSizeTie*>> came;  // dim -> (previous dim, tie)
    std::vector<std::string> todo{a};
    came[a] = {"", nullptr};
    for (size_t i = 0; i < todo.size() && !came.count(b); ++i)
      for (const DtSizeTie& t : p_.ties)
        for (auto [from, to] : {std::pair{t.own, t.other}, std::pair{t.other, t.own}})
          if (from == todo[i] && !came.count(to)) {
            came[to] = {from, &t};
            todo.push_back(to);
          }
    std::vector<const DtSizeTie*> path;
    for (std::string d = b; came.count(d) && came[d].second; d = came[d].first) path.insert(path.begin(), came[d].second);
    return path;
  }

  [[noreturn]] void conflict(const SizeSource& first, const SizeSource& second) {
    std::string msg = "conflicting sizes for " + (first.dim == second.dim ? first.dim : first.dim + " and " + second.dim) + ": ";
    if (first.what == second.what)  // one array for two dims that must be equal
      msg += second.what + " gives " + first.dim + " = " + std::to_string(first.value) + " and " + second.dim + " = " + std::to_string(second.value) +
             second.via;
    else
      msg += second.what + " gives " + second.dim + " = " + std::to_string(second.value) + second.via + ", but " + first.what + " gives " +
             first.dim + " = " + std::to_string(first.value) + first.via;
    SourceLoc loc = second.loc.valid() ? second.loc : first.loc;
    std::vector<const DtSizeTie*> path = ties_between(first.dim, second.dim);
    for (size_t i = 0; i < path.size(); ++i) {
      const DtSizeTie* t = path[i];
      msg += std::string(i ? ", and " : "; they must be equal because ") + t->access + " (line " + std::to_string(t->loc.line) + ") reads " +
             t->tensor + "'s dim " + std::to_string(t->pos) + " (" + t->own + ") with " + t->other;
    }
    if (!path.empty() && (!loc.valid() || first.what == second.what)) loc = path[0]->loc;
    if (!loc.valid()) loc = p_.sym(second.dim).loc;
    user_error(loc, msg);
  }
};

}  // namespace

std::map<std::string, std::string> dt_size_classes(const DtProgram& p) {
  std::map<std::string, std::string> parent;
  for (const DtSymbol& s : p.syms)
    if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) parent[s.name] = s.name;
  auto find = [&](std::string d) {
    while (parent.at(d) != d) d = parent.at(d);
    return d;
  };
  for (const DtSizeTie& t : p.ties) {
    std::string a = find(t.own), b = find(t.other);
    if (a != b) parent[std::max(a, b, [&](const std::string& x, const std::string& y) { return p.sym_index.at(x) < p.sym_index.at(y); })] =
        std::min(a, b, [&](const std::string& x, const std::string& y) { return p.sym_index.at(x) < p.sym_index.at(y); });
  }
  std::map<std::string, std::string> out;
  for (auto& [d, r] : parent) out[d] = find(d);
  return out;
}

std::set<std::string> bind_dt_sizes(DtProgram& p, const std::map<std::string, std::string>& args, const std::vector<DtInputShape>& inputs) {
  SizeBinder b(p);
  std::set<std::string> used;
  b.from_args(args, used);
  for (const DtInputShape& in : inputs) b.from_input(in);
  b.finish();
  return used;
}

std::shared_ptr<DtProgram> dt_with_sizes(const DtProgram& p, const std::map<std::string, std::string>& args) {
  auto q = std::make_shared<DtProgram>(p);
  (void)bind_dt_sizes(*q, args);
  return q;
}

std::optional<Scalar> dt_input_dtype(const DtProgram& p, const std::string& name) {
  const DtSymbol* s = p.find(name);
  if (!s || s->kind != DtSymKind::In) return std::nullopt;
  return s->dtype;
}

}  // namespace dtsim
