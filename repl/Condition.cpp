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

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  bool in_string = false;
  for (char c : text) {
    if (c == '"') in_string = !in_string;
    if (!in_string) {
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

ExprP BoundExpr::instantiate(const Frame& f, std::string* why) const {
  std::set<std::string> names = expr_names(parsed_);
  std::map<std::string, int> slots;
  std::vector<int> key;
  bool pid_is_var = false;
  for (const std::string& n : names) {
    int slot = f.lookup(n);
    if (n == "pid") pid_is_var = slot >= 0;
    if (is_pid_name(n) && !(n == "pid" && pid_is_var)) {
      key.push_back(-1);
      continue;
    }
    if (slot < 0) {
      if (why) *why = "'" + n + "' is not yet assigned";
      return nullptr;
    }
    slots[n] = slot;
    key.push_back(slot);
  }
  auto cache_key = std::make_pair(f.kernel, key);
  auto it = cache_.find(cache_key);
  if (it != cache_.end()) {
    if (!it->second && why) *why = errors_[cache_key];
    return it->second;
  }
  ExprP e = clone_expr(parsed_);
  lower_pid_names(e, pid_is_var);
  try {
    verify_expr(e, *f.kernel, *f.bindings, [&](const std::string& n) {
      auto s = slots.find(n);
      return s == slots.end() ? -1 : s->second;
    });
  } catch (const UserError& err) {
    errors_[cache_key] = err.what();
    if (why) *why = err.what();
    e = nullptr;
  }
  cache_[cache_key] = e;
  return e;
}

std::optional<Value> BoundExpr::eval(const Frame& f, std::string* why) const {
  ExprP e = instantiate(f, why);
  if (!e) return std::nullopt;
  try {
    Value v = f.eval(e);
    if (!v.defined()) {
      if (why) *why = "uninitialized";
      return std::nullopt;
    }
    return v;
  } catch (const RuntimeFault& fault) {
    if (why) *why = fault.what();
  } catch (const UserError& err) {
    if (why) *why = err.what();
  }
  return std::nullopt;
}

bool BoundExpr::test(const Frame& f) const {
  std::optional<Value> v = eval(f);
  return v && value_truthy(*v);
}

void BoundExpr::check_types(const Module& m, const Bindings& b) const {
  std::set<std::string> names = expr_names(parsed_);
  for (const Kernel& k : m.kernels) {
    std::map<std::string, int> slots;
    bool all = true;
    for (const std::string& n : names) {
      auto it = std::find(k.slot_names.begin(), k.slot_names.end(), n);
      if (it != k.slot_names.end()) {
        slots[n] = static_cast<int>(it - k.slot_names.begin());
      } else if (!is_pid_name(n)) {
        all = false;
      }
    }
    if (!all) continue;
    ExprP e = clone_expr(parsed_);
    lower_pid_names(e, slots.count("pid") > 0);
    verify_expr(e, k, b, [&](const std::string& n) {
      auto s = slots.find(n);
      return s == slots.end() ? -1 : s->second;
    });
  }
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
