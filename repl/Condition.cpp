// Debugger expressions: parsing (positional and expression forms), name checks, lazy per-frame
// verification and evaluation, and the statement-at-line lookup (see Condition.h).
#include "repl/Condition.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <variant>

#include "ir/Diag.h"
#include "ir/TileParser.h"

namespace dtsim {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

namespace {

int pid_axis(const std::string& name) {
  if (name == "pid0" || name == "pid") return 0;
  if (name == "pid1") return 1;
  if (name == "pid2") return 2;
  return -1;
}

void collect_names(const ExprP& e, std::set<std::string>& out) {
  if (!e) return;
  if (e->kind == ExprKind::Var) out.insert(e->name);
  for (const ExprP& a : e->args) collect_names(a, out);
}

const Expr* first_unknown(const ExprP& e, const std::vector<std::string>& names) {
  if (!e) return nullptr;
  if (e->kind == ExprKind::Var && std::find(names.begin(), names.end(), e->name) == names.end()) return e.get();
  for (const ExprP& a : e->args)
    if (const Expr* u = first_unknown(a, names)) return u;
  return nullptr;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// ---- positional form: '=0,>1' ----

bool looks_positional(const std::string& text) {
  std::string t = trim(text);
  if (t.empty()) return true;
  return t[0] == '=' || t[0] == '<' || t[0] == '>' || t[0] == ',' || t.rfind("!=", 0) == 0;
}

// One field "OP INT" starting at column `col0` (0-based) of the registered text.
ExprP parse_positional_field(const std::string& text, size_t begin, size_t end, int axis, int file) {
  size_t i = begin;
  while (i < end && text[i] == ' ') ++i;
  auto err = [&](size_t at, const std::string& msg) -> ExprP {
    user_error(SourceLoc{file, 1, static_cast<int>(at) + 1}, msg);
  };
  static const std::pair<const char*, BinOp> ops[] = {{"==", BinOp::Eq}, {"!=", BinOp::Ne}, {"<=", BinOp::Le},
                                                      {">=", BinOp::Ge}, {"=", BinOp::Eq},  {"<", BinOp::Lt},
                                                      {">", BinOp::Gt}};
  const std::pair<const char*, BinOp>* op = nullptr;
  for (const auto& o : ops)
    if (text.compare(i, std::strlen(o.first), o.first) == 0 && i + std::strlen(o.first) <= end) {
      op = &o;
      break;
    }
  if (!op) return err(i, "expected one of = == != < <= > >= in pid condition (e.g. '=0,>1')");
  size_t op_col = i;
  i += std::strlen(op->first);
  while (i < end && text[i] == ' ') ++i;
  size_t num_begin = i;
  if (i < end && (text[i] == '-' || text[i] == '+')) ++i;
  size_t digits = i;
  while (i < end && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == digits) return err(num_begin, "expected an integer after '" + std::string(op->first) + "'");
  errno = 0;
  long long value = std::strtoll(text.substr(num_begin, i - num_begin).c_str(), nullptr, 10);
  if (errno == ERANGE) return err(num_begin, "integer out of range in pid condition");
  while (i < end && text[i] == ' ') ++i;
  if (i != end) return err(i, "unexpected '" + std::string(1, text[i]) + "' in pid condition");
  SourceLoc loc{file, 1, static_cast<int>(op_col) + 1};
  return make_binary(op->second, make_program_id(axis, loc), make_const_int(value, loc), loc);
}

ExprP parse_positional(const std::string& text, int file) {
  ExprP result;
  size_t begin = 0;
  int axis = 0;
  for (;;) {
    size_t comma = text.find(',', begin);
    size_t end = comma == std::string::npos ? text.size() : comma;
    if (axis > 2) user_error(SourceLoc{file, 1, static_cast<int>(begin)}, "a pid condition has at most 3 fields (pid0, pid1, pid2)");
    if (!trim(text.substr(begin, end - begin)).empty()) {
      ExprP field = parse_positional_field(text, begin, end, axis, file);
      result = result ? make_binary(BinOp::LAnd, result, field, field->loc) : field;
    }
    if (comma == std::string::npos) break;
    begin = comma + 1;
    ++axis;
  }
  return result ? result : make_const_bool(true, SourceLoc{file, 1, 1});
}

// Replaces pid names by ProgramId in a cloned expression; `pid_is_var` keeps `pid` a variable.
void lower_pid_names(const ExprP& e, bool pid_is_var) {
  if (!e) return;
  if (e->kind == ExprKind::Var) {
    int axis = pid_axis(e->name);
    if (axis >= 0 && !(e->name == "pid" && pid_is_var)) {
      e->kind = ExprKind::ProgramId;
      e->axis = axis;
    }
  }
  for (const ExprP& a : e->args) lower_pid_names(a, pid_is_var);
}

std::string normalize_path(std::string p) {
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  return p;
}

}  // namespace

bool is_pid_name(const std::string& name) { return pid_axis(name) >= 0; }

std::vector<std::string> known_names(const Module& m) {
  std::set<std::string> vars;
  for (const Kernel& k : m.kernels) {
    for (const std::string& n : k.slot_names) vars.insert(n);
    for (const Param& p : k.params) vars.insert(p.name);
  }
  std::vector<std::string> names = {"pid0", "pid1", "pid2", "pid"};
  for (const std::string& n : vars)
    if (!is_pid_name(n)) names.push_back(n);
  return names;
}

std::set<std::string> expr_names(const ExprP& e) {
  std::set<std::string> out;
  collect_names(e, out);
  return out;
}

void check_names(const ExprP& e, const std::vector<std::string>& names) {
  if (const Expr* u = first_unknown(e, names))
    user_error(u->loc, "'" + u->name + "' is not defined (names: " + join(names, ", ") + ")");
}

ExprP parse_condition(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names) {
  int file = Sources::add(pseudo_file, text);
  ExprP e = looks_positional(text) ? parse_positional(text, file) : parse_tile_expr(file);
  check_names(e, names);
  return e;
}

ExprP parse_debug_expr(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names) {
  int file = Sources::add(pseudo_file, text);
  ExprP e = parse_tile_expr(file);
  check_names(e, names);
  return e;
}

int python_source(const Module& m) {
  for (const Kernel& k : m.kernels) {
    if (!k.loc.valid()) continue;
    const std::string& name = Sources::name(k.loc.file);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0) return k.loc.file;
  }
  return -1;
}

BoundExpr make_debug_expr(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names,
                          int py_file) {
  if (py_file < 0) return BoundExpr(parse_debug_expr(text, pseudo_file, names), text);
  auto py = std::make_shared<const PyDebugExpr>(text, pseudo_file);
  py->check_names(Sources::name(py_file), Sources::text(py_file), names);
  return BoundExpr(py, text, py_file, names);
}

BoundExpr make_condition(const std::string& text, const std::string& pseudo_file, const std::vector<std::string>& names,
                         int py_file) {
  if (py_file < 0 || looks_positional(text)) return BoundExpr(parse_condition(text, pseudo_file, names), text);
  return make_debug_expr(text, pseudo_file, names, py_file);
}

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  char quote = 0;  // inside a "..." or '...' string (Triton expressions)
  for (char c : text) {
    if (quote ? c == quote : (c == '"' || c == '\'')) quote = quote ? 0 : c;
    if (!quote) {
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (c == ',' && depth == 0) {
        if (!trim(cur).empty()) out.push_back(trim(cur));
        cur.clear();
        continue;
      }
    }
    cur += c;
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

// ---- evaluation ----

std::shared_ptr<const BoundExpr::Instance> BoundExpr::lower_python(const Kernel& k, const Bindings& b,
                                                                   const std::map<std::string, int>& slots) const {
  DebugScope scope = [&](const std::string& n) -> std::optional<DebugBinding> {
    DebugBinding d;
    const Param* p = k.find_param(n);
    auto bound = b.find(n);
    if (p && p->kind == ParamKind::Constexpr && bound != b.end()) {
      d.kind = DebugBinding::Constexpr;
      d.value = bound->second.as_int();
      return d;
    }
    if (auto s = slots.find(n); s != slots.end()) {
      d.kind = DebugBinding::Runtime;
      d.type = k.slot_types[static_cast<size_t>(s->second)];
      return d;
    }
    if (is_pid_name(n)) {
      d.kind = DebugBinding::ProgramId;
      d.axis = pid_axis(n);
      return d;
    }
    return std::nullopt;
  };
  LoweredDebugExpr low = py_->lower(Sources::name(py_file_), Sources::text(py_file_), scope, known_);
  auto lookup = [&](const std::string& n) {
    auto s = slots.find(n);
    return s == slots.end() ? -1 : s->second;
  };
  auto verified = [&](ExprP e) {
    if (e) verify_expr(e, k, b, lookup);
    return e;
  };
  auto inst = std::make_shared<Instance>();
  inst->e = verified(low.ir);
  if (!low.constant.empty()) inst->constant = low.constant;
  for (const std::vector<DebugIndex>& items : low.subscripts) {
    std::vector<Index> out;
    for (const DebugIndex& d : items)
      out.push_back(Index{static_cast<int>(d.kind), verified(d.index), verified(d.lo), verified(d.hi), verified(d.step), d.loc});
    inst->subscripts.push_back(std::move(out));
  }
  return inst;
}

std::vector<std::string> BoundExpr::names_read() const {
  std::vector<std::string> names;
  if (py_) {
    for (const auto& [n, loc] : py_->names()) names.push_back(n);
  } else {
    std::set<std::string> s = expr_names(parsed_);
    names.assign(s.begin(), s.end());
  }
  return names;
}

std::shared_ptr<const BoundExpr::Instance> BoundExpr::instantiate(const Frame& f, std::string* why,
                                                                 const UserError** error) const {
  std::vector<std::string> names = names_read();
  std::map<std::string, int> slots;
  std::vector<int> key;
  bool pid_is_var = false;
  for (const std::string& n : names) {
    int slot = f.lookup(n);
    if (n == "pid") pid_is_var = slot >= 0;
    if (slot >= 0) {
      slots[n] = slot;
      key.push_back(slot);
      continue;
    }
    bool kernel_var = std::find(f.kernel->slot_names.begin(), f.kernel->slot_names.end(), n) != f.kernel->slot_names.end();
    if (!is_pid_name(n) && (kernel_var || !py_)) {
      if (why) *why = "'" + n + "' is not yet assigned";
      return nullptr;
    }
    key.push_back(-1);  // a pid name, or (Triton) a global of the kernel's file
  }
  Key cache_key = std::make_pair(f.kernel, key);
  auto it = cache_.find(cache_key);
  if (it != cache_.end()) {
    if (!it->second && why) *why = errors_.at(cache_key).what();
    if (!it->second && error) *error = &errors_.at(cache_key);
    return it->second;
  }
  std::shared_ptr<const Instance> inst;
  try {
    if (py_) {
      inst = lower_python(*f.kernel, *f.bindings, slots);
    } else {
      ExprP e = clone_expr(parsed_);
      lower_pid_names(e, pid_is_var);
      verify_expr(e, *f.kernel, *f.bindings, [&](const std::string& n) {
        auto s = slots.find(n);
        return s == slots.end() ? -1 : s->second;
      });
      auto tile = std::make_shared<Instance>();
      tile->e = e;
      inst = tile;
    }
  } catch (const UserError& err) {
    errors_.insert_or_assign(cache_key, err);
    if (why) *why = err.what();
    if (error) *error = &errors_.at(cache_key);
  }
  cache_[cache_key] = inst;
  return inst;
}

void BoundExpr::check(const Frame& f) const {
  const UserError* error = nullptr;
  if (!instantiate(f, nullptr, &error) && error) throw *error;
}

std::optional<std::string> BoundExpr::constant(const Frame& f) const {
  std::shared_ptr<const Instance> inst = instantiate(f, nullptr);
  if (!inst || !inst->constant || !inst->subscripts.empty()) return std::nullopt;
  return inst->constant;
}

std::optional<Value> BoundExpr::eval(const Frame& f, std::string* why, std::optional<UserError>* located) const {
  std::shared_ptr<const Instance> inst = instantiate(f, why);
  if (!inst) return std::nullopt;
  if (!inst->e) {
    if (why) *why = "a compile-time value: " + inst->constant.value_or("?");
    return std::nullopt;
  }
  try {
    Value v = f.eval(inst->e);
    if (!v.defined()) {
      if (why) *why = "uninitialized";
      return std::nullopt;
    }
    auto scalar = [&](const ExprP& e) -> std::optional<int64_t> {
      if (!e) return std::nullopt;
      Value x = f.eval(e);
      if (!x.defined()) throw UserError(e->loc, "the index is uninitialized");
      return std::visit([](const auto& arr) { return static_cast<int64_t>(arr.data()[0]); }, x.data);
    };
    for (const std::vector<Index>& sub : inst->subscripts) {
      std::vector<IndexItem> items;
      for (const Index& d : sub) {
        IndexItem it;
        it.kind = static_cast<IndexItem::Kind>(d.kind);
        it.loc = d.loc;
        if (d.kind == IndexItem::Index) it.index = *scalar(d.index);
        it.lo = scalar(d.lo);
        it.hi = scalar(d.hi);
        if (std::optional<int64_t> st = scalar(d.step)) it.step = *st;
        items.push_back(it);
      }
      v = index_value(v, items);
    }
    return v;
  } catch (const RuntimeFault& fault) {
    if (why) *why = fault.what();
  } catch (const UserError& err) {
    if (why) *why = err.what();
    if (located && err.loc.valid()) *located = err;
  }
  return std::nullopt;
}

bool BoundExpr::test(const Frame& f) const {
  std::optional<Value> v = eval(f);
  return v && value_truthy(*v);
}

void BoundExpr::check_types(const Module& m, const Bindings& b) const {
  std::vector<std::string> names = names_read();
  for (const Kernel& k : m.kernels) {
    std::map<std::string, int> slots;
    bool all = true;
    for (const std::string& n : names) {
      auto it = std::find(k.slot_names.begin(), k.slot_names.end(), n);
      if (it != k.slot_names.end()) {
        slots[n] = static_cast<int>(it - k.slot_names.begin());
      } else if (py_) {
        // a name of another kernel: not this one's expression; else a pid name or a global
        if (std::find(known_.begin(), known_.end(), n) != known_.end() && !is_pid_name(n)) all = false;
      } else if (!is_pid_name(n)) {
        all = false;
      }
    }
    if (!all) continue;
    if (py_) {
      lower_python(k, b, slots);
      continue;
    }
    ExprP e = clone_expr(parsed_);
    lower_pid_names(e, slots.count("pid") > 0);
    verify_expr(e, k, b, [&](const std::string& n) {
      auto s = slots.find(n);
      return s == slots.end() ? -1 : s->second;
    });
  }
}

// ---- numpy indexing of a value ----

Value index_value(const Value& v, const std::vector<IndexItem>& items) {
  const Shape& in = v.type.shape;
  int rank = static_cast<int>(in.size());
  int consumed = 0;
  for (const IndexItem& it : items)
    if (it.kind != IndexItem::NewAxis) ++consumed;
  if (consumed > rank)
    throw UserError(items.back().loc, "too many indices for a " + (rank ? "tile of rank " + std::to_string(rank) : std::string("scalar")) +
                                          " (" + std::to_string(consumed) + " given)");
  // Per output axis: the input axis it walks (-1: a new unit axis) and the input positions.
  struct Axis {
    int in_axis;
    std::vector<int64_t> pos;
  };
  std::vector<Axis> out_axes;
  std::vector<int64_t> fixed(static_cast<size_t>(rank), 0);  // input axes held at one index
  int axis = 0;
  auto walk = [&](const IndexItem& it) {
    int64_t n = in[static_cast<size_t>(axis)];
    if (it.kind == IndexItem::Index) {
      int64_t i = it.index < 0 ? it.index + n : it.index;
      if (i < 0 || i >= n)
        throw UserError(it.loc, "index " + std::to_string(it.index) + " is out of bounds for axis " + std::to_string(axis) +
                                    " with size " + std::to_string(n));
      fixed[static_cast<size_t>(axis)] = i;
      ++axis;
      return;
    }
    if (it.step == 0) throw UserError(it.loc, "slice step cannot be zero");
    // Python's slice.indices(n)
    auto clip = [&](std::optional<int64_t> b, int64_t dflt, int64_t lo, int64_t hi) {
      if (!b) return dflt;
      int64_t x = *b < 0 ? *b + n : *b;
      return std::clamp(x, lo, hi);
    };
    int64_t start = it.step > 0 ? clip(it.lo, 0, 0, n) : clip(it.lo, n - 1, -1, n - 1);
    int64_t stop = it.step > 0 ? clip(it.hi, n, 0, n) : clip(it.hi, -1, -1, n - 1);
    // the positions start, start + step, ... before stop, counted first (no overflow for huge steps)
    uint64_t span = it.step > 0 ? (start < stop ? static_cast<uint64_t>(stop - start) : 0)
                                : (start > stop ? static_cast<uint64_t>(start - stop) : 0);
    uint64_t mag = it.step > 0 ? static_cast<uint64_t>(it.step) : 0 - static_cast<uint64_t>(it.step);
    uint64_t count = span ? (span - 1) / mag + 1 : 0;
    Axis a{axis, {}};
    for (uint64_t k = 0; k < count; ++k)
      a.pos.push_back(it.step > 0 ? start + static_cast<int64_t>(k * mag) : start - static_cast<int64_t>(k * mag));
    out_axes.push_back(std::move(a));
    ++axis;
  };
  for (const IndexItem& it : items) {
    if (it.kind == IndexItem::NewAxis) out_axes.push_back(Axis{-1, {0}});
    else walk(it);
  }
  while (axis < rank) walk(IndexItem{IndexItem::Slice, 0, std::nullopt, std::nullopt, 1, SourceLoc{}});
  Shape out_shape;
  for (const Axis& a : out_axes) out_shape.push_back(static_cast<int64_t>(a.pos.size()));
  int64_t count = shape_numel(out_shape);
  std::vector<int64_t> src(static_cast<size_t>(count));
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d) + 1] * in[static_cast<size_t>(d) + 1];
  std::vector<size_t> idx(out_axes.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    std::vector<int64_t> at = fixed;
    for (size_t o = 0; o < out_axes.size(); ++o)
      if (out_axes[o].in_axis >= 0) at[static_cast<size_t>(out_axes[o].in_axis)] = out_axes[o].pos[idx[o]];
    int64_t flat = 0;
    for (int d = 0; d < rank; ++d) flat += at[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
    src[static_cast<size_t>(k)] = flat;
    for (size_t o = out_axes.size(); o-- > 0;) {
      if (++idx[o] < out_axes[o].pos.size()) break;
      idx[o] = 0;
    }
  }
  Value out;
  out.type = v.type.with_shape(out_shape);
  out.buffer = v.buffer;
  std::vector<size_t> xshape(out_shape.begin(), out_shape.end());
  out.data = std::visit(
      [&](const auto& arr) -> TileData {
        std::decay_t<decltype(arr)> r;
        r.resize(xshape);
        for (int64_t k = 0; k < count; ++k) r.data()[k] = arr.data()[src[static_cast<size_t>(k)]];
        return r;
      },
      v.data);
  return out;
}

bool value_truthy(const Value& v) {
  int64_t n = v.type.numel();
  for (int64_t i = 0; i < n; ++i)
    if (v.get(i) != 0) return true;
  return false;
}

bool same_value(const Value& a, const Value& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (!(a.type == b.type) || a.buffer != b.buffer) return false;
  int64_t n = a.type.numel();
  for (int64_t i = 0; i < n; ++i) {
    double x = a.get(i), y = b.get(i);
    if (x != y && !(std::isnan(x) && std::isnan(y))) return false;
  }
  return true;
}

// ---- lines ----

LineSpec parse_line_spec(const std::string& text, const std::string& what) {
  std::string t = trim(text);
  LineSpec spec;
  size_t space = t.find_first_of(" \t");
  std::string where = t.substr(0, space);
  if (space != std::string::npos) {
    std::string rest = trim(t.substr(space));
    if (rest.rfind("if", 0) != 0 || (rest.size() > 2 && rest[2] != ' ' && rest[2] != '(' && rest[2] != '\t'))
      throw UserError(what + " '" + text + "': expected FILE:LINE [if COND]");
    spec.cond = trim(rest.substr(2));
    if (spec.cond.empty()) throw UserError(what + " '" + text + "': missing condition after 'if'");
  }
  size_t colon = where.rfind(':');
  std::string line = colon == std::string::npos ? where : where.substr(colon + 1);
  if (colon != std::string::npos) spec.file = where.substr(0, colon);
  bool digits = !line.empty() && std::all_of(line.begin(), line.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (!digits || line.size() > 9 || std::stoi(line) <= 0)
    throw UserError(what + " '" + text + "': expected FILE:LINE [if COND] with a line number >= 1");
  spec.line = std::stoi(line);
  return spec;
}

bool file_matches(int file_id, const std::string& spec) {
  if (spec.empty()) return true;
  if (file_id < 0) return false;
  std::string name = normalize_path(Sources::name(file_id));
  std::string want = normalize_path(spec);
  if (name == want) return true;
  if (name.size() > want.size() && name.compare(name.size() - want.size(), want.size(), want) == 0 &&
      name[name.size() - want.size() - 1] == '/')
    return true;
  std::error_code ec1, ec2;
  auto a = std::filesystem::weakly_canonical(name, ec1);
  auto b = std::filesystem::weakly_canonical(want, ec2);
  return !ec1 && !ec2 && a == b;
}

std::vector<const Stmt*> stmts_at_line(const Module& m, const std::string& file, int line, int* resolved_line) {
  auto on_line = [&](const SourceLoc& loc, int l) { return loc.valid() && loc.line == l && file_matches(loc.file, file); };
  int best = -1;
  bool any_file = false;
  for (const Kernel& k : m.kernels)
    for (const Stmt* s : k.stmts)
      for (const SourceLoc* loc : {&s->loc, &s->loc2})
        if (loc->valid() && file_matches(loc->file, file)) {
          any_file = true;
          if (loc->line >= line && (best < 0 || loc->line < best)) best = loc->line;
        }
  if (!any_file) throw UserError("no statement of this program is in '" + file + "'");
  if (best < 0) throw UserError("no statement on or after line " + std::to_string(line) + (file.empty() ? "" : " of " + file));
  std::vector<const Stmt*> out;
  for (const Kernel& k : m.kernels)
    for (const Stmt* s : k.stmts)
      if (on_line(s->loc, best) || on_line(s->loc2, best)) out.push_back(s);
  if (resolved_line) *resolved_line = best;
  return out;
}

}  // namespace dtsim
