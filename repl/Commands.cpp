// The debugger REPL: command dispatch (gdb-like names), and the print/info/list/where views.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "host/Buffers.h"
#include "ir/Diag.h"
#include "ir/Printer.h"
#include "repl/Session.h"

namespace dtsim {

namespace {

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  return trim(l);
}

const std::vector<std::string>& command_names() {
  static const std::vector<std::string> names = {
      "break", "condition", "continue", "delete", "disable", "display", "enable", "finish", "help", "info",
      "list",  "next",      "pid",      "print",  "quit",    "restart", "run",    "set",    "step",      "undisplay",
      "viz",   "watch", "where"};
  return names;
}

// Parses "2" / "1,0" / "1, 0, 3" into a pid; nullopt on bad syntax.
std::optional<std::array<int64_t, 3>> parse_pid(const std::string& text) {
  std::array<int64_t, 3> pid{};
  std::stringstream ss(text);
  std::string field;
  int axis = 0;
  while (std::getline(ss, field, ',')) {
    field = trim(field);
    if (axis > 2 || field.empty() || !std::all_of(field.begin(), field.end(), ::isdigit) || field.size() > 12)
      return std::nullopt;
    pid[axis++] = std::stoll(field);
  }
  if (axis == 0) return std::nullopt;
  return pid;
}

// A buffer as a Value, for `info memory` (same storage rules as the interpreter's values).
Value buffer_value(const Buffer& buf) {
  Value v;
  v.type = Type{buf.dtype, false, buf.shape};
  std::vector<size_t> shape(buf.shape.begin(), buf.shape.end());
  auto fill = [&](auto arr) {
    arr.resize(shape);
    for (int64_t i = 0; i < buf.numel(); ++i) arr.data()[i] = static_cast<typename decltype(arr)::value_type>(buf.get(i));
    v.data = std::move(arr);
  };
  switch (buf.dtype) {
    case Scalar::I1: fill(xt::xarray<uint8_t>()); break;
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32: fill(xt::xarray<int32_t>()); break;
    case Scalar::I64: fill(xt::xarray<int64_t>()); break;
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: fill(xt::xarray<float>()); break;
    case Scalar::F64: fill(xt::xarray<double>()); break;
  }
  return v;
}

}  // namespace

// ---- the loop ----

LineReader& Session::reader() {
  if (reader_) return *reader_;
  if (cfg_.input) {
    reader_ = make_stream_reader(*cfg_.input, out_);
  } else if (!isatty(STDIN_FILENO)) {
    reader_ = make_stream_reader(std::cin, out_);
  } else {
    std::string hist = cfg_.history_file;
    if (hist.empty()) {
      if (const char* env = std::getenv("DTSIM_HISTORY")) hist = env;
      else if (const char* home = std::getenv("HOME")) hist = std::string(home) + "/.dtsim_history";
    }
    reader_ = make_line_reader(hist, [this](const std::string& before, const std::string& prefix) { return complete(before, prefix); });
  }
  return *reader_;
}

void Session::repl() {
  for (;;) {
    out_ << std::flush;
    std::optional<std::string> line = reader().read("(dtsim) ");
    if (!line) throw QuitRequest{};  // end of input: like gdb, the session ends
    std::string cmd = trim(*line);
    if (cmd.empty()) cmd = last_command_;  // an empty line repeats the last command
    if (cmd.empty()) continue;
    last_command_ = cmd;
    if (command(cmd)) return;
  }
}

// Completion by context: the command at the start of the line; after `info` its subcommands, after
// `help` the commands, after `delete`/`disable`/`enable`/`condition` breakpoint numbers, after
// `undisplay` display numbers, after `break` the FILE: of the program's sources, then FILE:LINE of
// their statement lines (and `if`); after the commands that take an expression (print, display,
// watch, break ... if, condition N) the names an expression may use (the instance's assigned
// variables once it runs) and, in Triton expressions, after `tl.` the tl functions and dtypes the
// lowering knows and after `x.` the tensor attributes and methods; nothing after the others.
// No space follows tl.NAME, `tl.` or `FILE:` (more of the expression or line number comes next).
Completions Session::complete(const std::string& before, const std::string& prefix) const {
  std::vector<std::string> words;
  {
    std::stringstream ss(before);
    std::string w;
    while (ss >> w) words.push_back(w);
  }
  std::vector<std::string> pool;
  auto names = [&] {
    size_t dot = prefix.rfind('.');
    if (py_file_ >= 0 && dot != std::string::npos) {  // tl.ma -> tl.max, tl.maximum; x.su -> x.sum
      std::string head = prefix.substr(0, dot + 1);
      if (head == "tl." || head == "triton.language.") {
        for (const std::string& n : triton_tl_names()) pool.push_back(head + n);
      } else if (kernel_ && std::find(kernel_->slot_names.begin(), kernel_->slot_names.end(), prefix.substr(0, dot)) !=
                                kernel_->slot_names.end()) {
        for (const char* m : {"T", "argmax", "argmin", "broadcast_to", "cast", "dtype", "expand_dims", "max", "min", "numel",
                              "permute", "reshape", "shape", "sum", "to", "trans", "view"})
          pool.push_back(head + m);
      }
      return;
    }
    if (kernel_) {
      for (const std::string& n : kernel_->slot_names)
        if (!frame_ || frame_->lookup(n) >= 0) pool.push_back(n);
      for (const Param& p : kernel_->params) pool.push_back(p.name);
    }
    for (const char* n : {"pid0", "pid1", "pid2"}) pool.push_back(n);
    if (py_file_ >= 0) pool.push_back("tl.");
  };
  auto bp_ids = [&] {
    for (const Breakpoint& bp : bps_) pool.push_back(std::to_string(bp.id));
    for (const DebugMemory::Bp& d : dormant_) pool.push_back(std::to_string(d.id));
  };
  auto file_lines = [&] {  // FILE: for each source file of the program; FILE:LINE once FILE: is typed
    size_t colon = prefix.rfind(':');
    for (const Kernel& k : m_.kernels)
      for (const Stmt* st : k.stmts)
        for (const SourceLoc* loc : {&st->loc, &st->loc2}) {
          if (!loc->valid()) continue;
          const std::string& file = Sources::name(loc->file);
          if (colon == std::string::npos) pool.push_back(file + ":");
          else if (file_matches(loc->file, prefix.substr(0, colon))) pool.push_back(prefix.substr(0, colon + 1) + std::to_string(loc->line));
        }
  };
  if (words.empty()) {
    pool = command_names();
  } else {
    const std::string& c = words[0];
    size_t n = words.size();
    if ((c == "info" || c == "i") && n == 1) {
      for (const char* w : {"breakpoints", "display", "locals", "memory", "pids"}) pool.push_back(w);
    } else if ((c == "help" || c == "h") && n == 1) {
      pool = command_names();
    } else if (c == "delete" || c == "d" || c == "disable" || c == "enable" || (c == "condition" && n == 1)) {
      bp_ids();
    } else if (c == "set" && n == 1) {
      for (const char* w : {"edgeitems", "linewidth", "precision", "threshold"}) pool.push_back(w);
    } else if (c == "undisplay" && n == 1) {
      for (const Display& d : displays_) pool.push_back(std::to_string(d.id));
    } else if (c == "print" || c == "p" || c == "print/s" || c == "p/s" || c == "display" || c == "watch" || c == "condition") {
      names();
    } else if (c == "break" || c == "b") {
      if (n == 1) {
        pool.push_back("if");
        file_lines();
      } else if (std::find(words.begin(), words.end(), "if") != words.end()) {
        names();
      } else if (n == 2) {
        pool.push_back("if");
      }
    }
  }
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  Completions out;
  for (const std::string& c : pool)
    if (c.rfind(prefix, 0) == 0) out.words.push_back(c);
  // tl.max goes on with `(`, tl. and FILE: with more of the same word
  out.no_space = !out.words.empty() && std::all_of(out.words.begin(), out.words.end(), [](const std::string& w) {
    return w.back() == '.' || w.back() == ':' || w.rfind("tl.", 0) == 0 || w.rfind("triton.language.", 0) == 0;
  });
  return out;
}

// Runs one command; true when the run should resume.
bool Session::command(const std::string& line) {
  size_t sp = line.find_first_of(" \t");
  std::string word = line.substr(0, sp);
  std::string arg = sp == std::string::npos ? "" : trim(line.substr(sp));
  auto count = [&]() -> int64_t {
    if (arg.empty()) return 1;
    if (!std::all_of(arg.begin(), arg.end(), ::isdigit) || arg.size() > 9) return -1;
    return std::max<int64_t>(1, std::stoll(arg));
  };
  try {
    if (word == "step" || word == "s" || word == "next" || word == "n") {
      int64_t n = count();
      if (n < 0) {
        out_ << "usage: " << word << " [COUNT]\n";
        return false;
      }
      bool next = word[0] == 'n' && stmt_;
      mode_ = next ? Mode::Next : Mode::Step;
      steps_left_ = n;
      next_depth_ = frame_ && stmt_ ? frame_->loop_stack.size() : 0;
      mode_instance_ = instance_seq_;
      return true;
    }
    if (word == "continue" || word == "c") {
      mode_ = Mode::Continue;
      return true;
    }
    if (word == "finish" || word == "fin") {
      if (!stmt_) {
        out_ << "already at the end of " << (frame_ ? instance_str(*frame_) : "the instance") << "\n";
        return false;
      }
      mode_ = Mode::Finish;
      mode_instance_ = instance_seq_;
      return true;
    }
    if (word == "pid") return cmd_pid(arg);
    if (word == "print" || word == "p" || word == "print/s" || word == "p/s") {
      cmd_print(arg, false, word.back() == 's' && word.size() > 2);
      return false;
    }
    if (word == "display") {
      if (arg.empty()) show_displays();
      else cmd_print(arg, true);
      return false;
    }
    if (word == "undisplay") {
      size_t before = displays_.size();
      if (arg.empty()) displays_.clear();
      else displays_.erase(std::remove_if(displays_.begin(), displays_.end(),
                                          [&](const Display& d) { return std::to_string(d.id) == arg; }),
                           displays_.end());
      if (before == displays_.size()) out_ << "no display " << arg << "\n";
      return false;
    }
    if (word == "watch") {
      if (arg.empty()) {
        out_ << "usage: watch EXPR\n";
        return false;
      }
      int id = add_watch(arg);
      const Breakpoint& bp = bps_.back();
      std::string head = "Watchpoint " + std::to_string(id) + ": " + arg + " = ";
      out_ << head << (bp.last ? format_value(*bp.last, nullptr, static_cast<int>(head.size())) : "<undefined>") << "\n";
      return false;
    }
    if (word == "break" || word == "b") {
      cmd_break(arg);
      return false;
    }
    if (word == "delete" || word == "d") {
      cmd_delete(arg);
      return false;
    }
    if (word == "disable" || word == "enable") {
      cmd_enable(arg, word == "enable");
      return false;
    }
    if (word == "condition") {
      cmd_condition(arg);
      return false;
    }
    if (word == "set") {
      cmd_set(arg);
      return false;
    }
    if (word == "info" || word == "i") {
      cmd_info(arg);
      return false;
    }
    if (word == "list" || word == "l") {
      cmd_list();
      return false;
    }
    if (word == "where" || word == "bt" || word == "backtrace") {
      cmd_where();
      return false;
    }
    if (word == "viz") {
      cmd_viz(arg);
      return false;
    }
    if (word == "run" || word == "r" || word == "restart") {
      out_ << "restarting the run\n";
      throw RestartRequest{};
    }
    if (word == "quit" || word == "q" || word == "exit") throw QuitRequest{};
    if (word == "help" || word == "h" || word == "?") {
      cmd_help();
      return false;
    }
    out_ << "unknown command '" << word << "' (try 'help')\n";
  } catch (const UserError& e) {
    out_ << e.render();
  }
  return false;
}

// ---- views ----

void Session::show_location() const {
  if (!stmt_) {
    out_ << "at the end of " << (frame_ ? instance_str(*frame_) : std::string("the instance"));
    int64_t next = frame_ ? frame_->order_index + 1 : 0;
    if (next < static_cast<int64_t>(order_.size()))
      out_ << "; next: pid " << pid_str(order_[next]) << "\n";
    else
      out_ << "; it is the last instance of kernel " << kernel_->name << "\n";
    return;
  }
  const SourceLoc& loc = stmt_->loc;
  std::string printed = first_line(print_stmt(*stmt_));
  if (loc.valid()) {
    std::string src = trim(Sources::line(loc.file, loc.line));
    out_ << "=> " << Sources::name(loc.file) << ":" << loc.line << "  " << src << "\n";
    if (stmt_->loc2.valid() && !(stmt_->loc2.line == loc.line && stmt_->loc2.file == loc.file))
      out_ << "   schedule " << Sources::name(stmt_->loc2.file) << ":" << stmt_->loc2.line << "  "
           << trim(Sources::line(stmt_->loc2.file, stmt_->loc2.line)) << "\n";
    bool tile_file = Sources::name(loc.file).size() >= 5 &&
                     Sources::name(loc.file).compare(Sources::name(loc.file).size() - 5, 5, ".tile") == 0;
    if (!tile_file || stmt_->loc2.valid()) out_ << "   tile: " << printed << "\n";
  } else {
    out_ << "=> " << printed << "\n";
  }
}

void Session::show_displays() {
  if (!frame_) return;
  for (const Display& d : displays_) {
    std::string why;
    std::optional<Value> v = d.expr.eval(*frame_, &why);
    std::optional<Value> mask = d.mask ? d.mask->eval(*frame_) : std::nullopt;
    std::string head = std::to_string(d.id) + ": " + d.expr.text() + " = ";
    out_ << head;
    if (std::optional<std::string> c = d.expr.constant(*frame_))
      out_ << *c << "\n";
    else if (v)
      out_ << format_value(*v, mask && mask->type.shape == v->type.shape ? &*mask : nullptr, static_cast<int>(head.size())) << "\n";
    else
      out_ << "<" << why << ">\n";
  }
}

// `print EXPR[, mask=MASK]`: the value with its type; lanes where MASK is false shown as "--"; a
// compile-time Python value (Triton expressions: x.shape, x.dtype) as Python prints it.
// `print/s`: the one-line summary (min, max, mean) instead of the values.
// Triton expressions: `print a, b` prints a and b, one after the other (each its own display).
void Session::cmd_print(const std::string& arg, bool add_display, bool summary) {
  std::vector<std::string> parts = split_top_level(arg);
  if (py_file_ >= 0 && parts.size() >= 2 && parts.back().rfind("mask=", 0) != 0) {
    for (const std::string& p : parts) cmd_print(p, add_display, summary);
    return;
  }
  if (parts.empty() || parts.size() > 2 || (parts.size() == 2 && parts[1].rfind("mask=", 0) != 0)) {
    out_ << "usage: " << (add_display ? "display" : "print") << " EXPR[, mask=MASK]\n";
    return;
  }
  Display d;
  d.expr = make_debug_expr(parts[0], add_display ? "<display>" : "<print>", names_, py_file_);
  if (parts.size() == 2) {
    std::string m = trim(parts[1].substr(5));
    d.mask = make_debug_expr(m, add_display ? "<display>" : "<print>", names_, py_file_);
  }
  if (add_display) {
    d.id = next_display_id_++;
    displays_.push_back(d);
  }
  if (!frame_) {
    out_ << "no program instance is running\n";
    return;
  }
  d.expr.check(*frame_);  // an expression that does not lower or type-check: its error, with a caret
  if (std::optional<std::string> c = d.expr.constant(*frame_)) {  // a Python value (x.shape, tl.float16)
    out_ << (add_display ? std::to_string(d.id) + ": " : "") << parts[0] << " = " << *c << "\n";
    return;
  }
  std::string why;
  std::optional<UserError> located;
  std::optional<Value> v = d.expr.eval(*frame_, &why, &located);
  if (located) throw *located;  // x[99]: the caret under the index
  if (!v) {
    out_ << parts[0] << ": " << why << "\n";
    return;
  }
  if (d.mask) d.mask->check(*frame_);
  std::optional<Value> mask = d.mask ? d.mask->eval(*frame_, &why) : std::nullopt;
  if (d.mask && !mask) out_ << "(mask not shown: " << why << ")\n";
  if (mask && !(mask->type.shape == v->type.shape)) {
    out_ << "(mask not shown: its shape " << shape_str(mask->type.shape) << " differs from "
         << shape_str(v->type.shape) << ")\n";
    mask.reset();
  }
  if (summary) {
    out_ << parts[0] << ": " << format_summary(*v, mask ? &*mask : nullptr) << "\n";
    return;
  }
  std::string head = add_display ? std::to_string(d.id) + ": " + parts[0] + " = " : parts[0] + ": " + v->type.str() + " = ";
  out_ << head << format_value(*v, mask ? &*mask : nullptr, static_cast<int>(head.size())) << "\n";
}

void Session::cmd_break(const std::string& arg) {
  if (arg.empty()) {
    out_ << "usage: break [FILE:]LINE [if COND]  |  break if COND\n";
    return;
  }
  if (arg.rfind("if ", 0) == 0 || arg.rfind("if(", 0) == 0) {
    add_break_if(trim(arg.substr(2)), "<break>");
    out_ << "Breakpoint " << bps_.back().id << " (" << bps_.back().text << ")\n";
    return;
  }
  std::string file = stmt_ && stmt_->loc.valid() ? Sources::name(stmt_->loc.file) : "";
  add_break_at(arg, file, "break");
  out_ << "Breakpoint " << bps_.back().id << " at " << bps_.back().where << "\n";
}

void Session::cmd_delete(const std::string& arg) {
  if (arg.empty()) {
    out_ << "deleted " << bps_.size() + dormant_.size() << " breakpoint(s)\n";
    bps_.clear();
    dormant_.clear();
    return;
  }
  auto it = std::find_if(bps_.begin(), bps_.end(), [&](const Breakpoint& b) { return std::to_string(b.id) == arg; });
  auto dit = std::find_if(dormant_.begin(), dormant_.end(), [&](const DebugMemory::Bp& b) { return std::to_string(b.id) == arg; });
  if (it != bps_.end()) bps_.erase(it);
  else if (dit != dormant_.end()) dormant_.erase(dit);
  else out_ << "no breakpoint number " << arg << "\n";
}

Breakpoint* Session::find_bp(const std::string& arg, const std::string& usage) {
  std::string num = arg.substr(0, arg.find_first_of(" \t"));
  if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit)) {
    out_ << "usage: " << usage << "\n";
    return nullptr;
  }
  for (Breakpoint& bp : bps_)
    if (std::to_string(bp.id) == num) return &bp;
  for (const DebugMemory::Bp& d : dormant_)
    if (std::to_string(d.id) == num) {
      out_ << "breakpoint " << num << " does not apply to this launch (kernel " << (kernel_ ? kernel_->name : "?") << ")\n";
      return nullptr;
    }
  out_ << "no breakpoint number " << num << "\n";
  return nullptr;
}

// `disable [N...]` / `enable [N...]`: a disabled breakpoint or watchpoint stays listed and does not
// stop the run (all of them without N).
void Session::cmd_enable(const std::string& arg, bool on) {
  if (arg.empty()) {
    for (Breakpoint& bp : bps_) bp.enabled = on;
    for (DebugMemory::Bp& d : dormant_) d.enabled = on;
    out_ << (on ? "enabled " : "disabled ") << bps_.size() + dormant_.size() << " breakpoint(s)\n";
    return;
  }
  std::stringstream ss(arg);
  std::string num;
  while (ss >> num) {
    bool found = false;
    for (Breakpoint& bp : bps_)
      if (std::to_string(bp.id) == num) bp.enabled = on, found = true;
    for (DebugMemory::Bp& d : dormant_)
      if (std::to_string(d.id) == num) d.enabled = on, found = true;
    if (!found) out_ << "no breakpoint number " << num << "\n";
  }
}

// `set precision|linewidth|threshold|edgeitems N`: how values print, as numpy's np.set_printoptions
// (process-wide); `set` alone shows the settings.
void Session::cmd_set(const std::string& arg) {
  PrintOptions& po = print_options();
  std::stringstream ss(arg);
  std::string name, value, extra;
  ss >> name >> value >> extra;
  if (name.empty()) {
    out_ << "precision " << po.precision << ", linewidth " << po.linewidth << ", threshold " << po.threshold << ", edgeitems "
         << po.edgeitems << "\n";
    return;
  }
  struct Opt {
    const char* name;
    int64_t lo, hi;
  };
  static const Opt opts[] = {{"precision", 0, 17}, {"linewidth", 10, 100000}, {"threshold", 0, INT64_MAX / 2}, {"edgeitems", 1, 1000}};
  for (const Opt& o : opts) {
    if (name != o.name) continue;
    bool digits = !value.empty() && value.size() <= 18 && std::all_of(value.begin(), value.end(), ::isdigit);
    int64_t x = digits ? std::stoll(value) : -1;
    if (!digits || !extra.empty() || x < o.lo || x > o.hi) {
      out_ << "usage: set " << o.name << " N  (N in [" << o.lo << ", " << o.hi << "])\n";
      return;
    }
    if (name == "precision") po.precision = static_cast<int>(x);
    else if (name == "linewidth") po.linewidth = static_cast<int>(x);
    else if (name == "threshold") po.threshold = x;
    else po.edgeitems = static_cast<int>(x);
    return;
  }
  out_ << "usage: set precision|linewidth|threshold|edgeitems N (as numpy's np.set_printoptions)\n";
}

// `condition N [COND]`: a new condition for breakpoint N (none without COND).
void Session::cmd_condition(const std::string& arg) {
  Breakpoint* bp = find_bp(arg, "condition N [COND]");
  if (!bp) return;
  size_t sp = arg.find_first_of(" \t");
  std::string cond = sp == std::string::npos ? "" : trim(arg.substr(sp));
  switch (bp->kind) {
    case Breakpoint::Watch:
      out_ << "watchpoint " << bp->id << " has no condition (it stops when '" << bp->text << "' changes)\n";
      return;
    case Breakpoint::Cond:
      if (cond.empty()) {
        out_ << "breakpoint " << bp->id << " is a condition; use 'delete " << bp->id << "' to remove it\n";
        return;
      }
      bp->expr = make_condition(cond, "<condition>", names_, py_file_);
      bp->expr.check_types(m_, b_);
      bp->text = cond;
      bp->stopped_instance = -1;
      break;
    case Breakpoint::Line:
      if (cond.empty()) {
        bp->expr = BoundExpr();
        out_ << "Breakpoint " << bp->id << " is now unconditional\n";
        return;
      }
      bp->expr = make_condition(cond, "<condition>", names_, py_file_);
      bp->expr.check_types(m_, b_);
      break;
  }
  out_ << "Breakpoint " << bp->id << " if " << cond << "\n";
}

void Session::cmd_info(const std::string& arg) {
  if (arg == "breakpoints" || arg == "break" || arg == "b" || arg == "watchpoints") return info_breakpoints();
  if (arg == "locals" || arg == "l") return info_locals();
  if (arg == "pids" || arg == "pid") return info_pids();
  if (arg == "memory" || arg == "mem" || arg == "m") return info_memory();
  if (arg == "display") {
    for (const Display& d : displays_) out_ << d.id << ": " << d.expr.text() << "\n";
    return;
  }
  out_ << "usage: info breakpoints|locals|pids|memory|display\n";
}

void Session::info_breakpoints() const {
  if (bps_.empty() && dormant_.empty()) {
    out_ << "no breakpoints or watchpoints\n";
    return;
  }
  std::vector<std::pair<int, std::string>> lines;
  for (const Breakpoint& bp : bps_) {
    std::string l = std::to_string(bp.id) + "  ";
    switch (bp.kind) {
      case Breakpoint::Cond: l += "break if " + bp.text; break;
      case Breakpoint::Line: l += "break at " + bp.where + (bp.expr.valid() ? " if " + bp.expr.text() : ""); break;
      case Breakpoint::Watch: l += "watch " + bp.text; break;
    }
    l += "  (hit " + std::to_string(bp.hits) + (bp.hits == 1 ? " time)" : " times)");
    if (!bp.enabled) l += " [disabled]";
    lines.emplace_back(bp.id, l);
  }
  for (const DebugMemory::Bp& d : dormant_) {
    std::string l = std::to_string(d.id) + "  ";
    switch (static_cast<Breakpoint::Kind>(d.kind)) {
      case Breakpoint::Cond: l += "break if " + d.text; break;
      case Breakpoint::Line: l += "break at " + d.text + (d.cond.empty() ? "" : " if " + d.cond); break;
      case Breakpoint::Watch: l += "watch " + d.text; break;
    }
    l += "  (hit " + std::to_string(d.hits) + (d.hits == 1 ? " time)" : " times)") + (d.enabled ? "" : " [disabled]") +
         " [not in this launch]";
    lines.emplace_back(d.id, l);
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& [id, l] : lines) out_ << l << "\n";
}

void Session::info_locals() const {
  if (!frame_) {
    out_ << "no program instance is running\n";
    return;
  }
  std::vector<std::string> seen;
  for (const std::string& n : frame_->kernel->slot_names) {
    if (std::find(seen.begin(), seen.end(), n) != seen.end() || frame_->kernel->find_param(n)) continue;
    seen.push_back(n);
    int slot = frame_->lookup(n);
    if (slot < 0 || !frame_->slots[slot].defined()) {
      out_ << n << " = <not yet assigned>\n";
      continue;
    }
    const Value& v = frame_->slots[slot];
    std::string shown = format_one_line(v);
    if (shown.rfind(v.type.str() + " ", 0) == 0) out_ << n << ": " << shown << "\n";  // a summary names the type
    else out_ << n << ": " << v.type.str() << " = " << shown << "\n";
  }
  std::string params;
  for (const Param& p : frame_->kernel->params) {
    if (p.kind == ParamKind::Pointer) continue;
    auto it = b_.find(p.name);
    if (it != b_.end()) params += (params.empty() ? "" : ", ") + p.name + " = " + it->second.str();
  }
  if (!params.empty()) out_ << "params: " << params << "\n";
}

void Session::info_pids() const {
  if (!kernel_) {
    out_ << "no kernel is running\n";
    return;
  }
  out_ << "kernel " << kernel_->name << " (" << kernel_index_ + 1 << " of " << m_.kernels.size() << "), grid "
       << pid_str(grid_) << ", " << order_.size() << " instances, order " << order_name() << "\n";
  int64_t cur = frame_ ? frame_->order_index : -1;
  if (frame_) out_ << "current: " << instance_str(*frame_) << (stmt_ ? "" : ", finished") << "\n";
  if (cur + 1 < static_cast<int64_t>(order_.size())) out_ << "next: pid " << pid_str(order_[cur + 1]) << "\n";
  int64_t n = static_cast<int64_t>(order_.size());
  int64_t lo = std::max<int64_t>(0, cur - 4), hi = std::min<int64_t>(n, std::max<int64_t>(cur, 0) + 6);
  out_ << "run order:" << (lo > 0 ? " ..." : "");
  for (int64_t i = lo; i < hi; ++i) out_ << (i == cur ? " *" : " ") << pid_str(order_[i]);
  out_ << (hi < n ? " ...\n" : "\n");
}

void Session::info_memory() const {
  if (!frame_ || !frame_->buffers) {
    out_ << "no program instance is running\n";
    return;
  }
  for (const Buffer& buf : frame_->buffers->list) {
    Type t{buf.dtype, false, buf.shape};
    std::string shown = format_one_line(buffer_value(buf));
    if (shown.rfind(t.str() + " ", 0) == 0) shown = shown.substr(t.str().size() + 1);  // a summary names the type
    else shown = "= " + shown;
    out_ << buf.name << ": " << t.str() << " " << bufio_name(buf.io) << " " << shown << "\n";
  }
}

bool Session::cmd_pid(const std::string& arg) {
  std::optional<std::array<int64_t, 3>> pid = parse_pid(arg);
  if (!pid) {
    out_ << "usage: pid P0[,P1[,P2]]  (e.g. 'pid 2', 'pid 1,0')\n";
    return false;
  }
  for (int a = 0; a < 3; ++a)
    if ((*pid)[a] >= grid_[a]) {
      out_ << "pid " << pid_str(*pid) << " is outside the grid " << pid_str(grid_) << "\n";
      return false;
    }
  int64_t pos = order_position(*pid);
  int64_t cur = frame_ ? frame_->order_index : -1;
  if (pos <= cur && kernel_index_ + 1 >= static_cast<int>(m_.kernels.size())) {
    out_ << "pid " << pid_str(*pid) << " already ran (instance " << pos + 1 << " of " << order_.size() << ", order "
         << order_name() << "); use 'restart' to run again\n";
    return false;
  }
  mode_ = Mode::UntilPid;
  target_pid_ = *pid;
  if (pos > cur)
    out_ << "running until pid " << pid_str(*pid) << " (instance " << pos + 1 << " of " << order_.size() << ", order "
         << order_name() << ")\n";
  else
    out_ << "pid " << pid_str(*pid) << " already ran in this kernel; running until it runs in the next kernel\n";
  return true;
}

void Session::cmd_list() const {
  if (!stmt_) {
    show_location();
    return;
  }
  const SourceLoc& loc = stmt_->loc;
  if (loc.valid()) {
    for (int l = std::max(1, loc.line - 3); l <= loc.line + 3; ++l) {
      std::string text = Sources::line(loc.file, l);
      if (text.empty() && l > loc.line) break;
      out_ << (l == loc.line ? "=> " : "   ") << l << "  " << text << "\n";
    }
    if (stmt_->loc2.valid())
      out_ << "schedule " << Sources::name(stmt_->loc2.file) << ":" << stmt_->loc2.line << "  "
           << trim(Sources::line(stmt_->loc2.file, stmt_->loc2.line)) << "\n";
  }
  out_ << "tile statements:\n";
  const std::vector<Stmt*>& all = frame_->kernel->stmts;
  int id = stmt_->id;
  for (int i = std::max(0, id - 2); i < std::min<int>(static_cast<int>(all.size()), id + 3); ++i)
    out_ << (i == id ? "=> " : "   ") << first_line(print_stmt(*all[i])) << "\n";
}

void Session::cmd_where() const {
  if (!frame_) {
    out_ << "no program instance is running\n";
    return;
  }
  // The host program's frames (a Python script's call stack down to the launch), outermost first,
  // then the kernel's frame: the innermost is last, as in pdb.
  for (size_t i = 0; i < cfg_.host_stack.size(); ++i)
    out_ << "  " << cfg_.host_stack[i]
         << (i + 1 == cfg_.host_stack.size() && cfg_.launch > 0 ? "  (launch " + std::to_string(cfg_.launch) + ")" : "") << "\n";
  out_ << "kernel " << frame_->kernel->name << " (" << frame_->kernel_index + 1 << " of " << m_.kernels.size()
       << "), " << instance_str(*frame_) << "\n";
  if (stmt_)
    out_ << "  at " << format_loc(stmt_->loc) << ": " << first_line(print_stmt(*stmt_)) << "\n";
  else
    out_ << "  at the end of the instance\n";
  for (auto it = frame_->loop_stack.rbegin(); it != frame_->loop_stack.rend(); ++it) {
    const Stmt* loop = *it;
    if (loop->targets.empty()) {  // a while loop: no loop variable
      out_ << "  in while loop  (" << format_loc(loop->loc) << ": " << first_line(print_stmt(*loop)) << ")\n";
      continue;
    }
    std::string value = "<not started>";
    if (!loop->slots.empty() && loop->slots[0] >= 0 && loop->slots[0] < static_cast<int>(frame_->slots.size()) &&
        frame_->slots[loop->slots[0]].defined())
      value = format_value(frame_->slots[loop->slots[0]]);
    out_ << "  in loop " << loop->targets[0] << " = " << value << "  (" << format_loc(loop->loc) << ": "
         << first_line(print_stmt(*loop)) << ")\n";
  }
}

void Session::cmd_viz(const std::string& arg) {
  if (!viz_ || !frame_ || viz_->launches.empty() || !frame_->buffers) {
    out_ << "viz: no program instance is running\n";
    return;
  }
  std::string path = arg.empty() ? "footprint.svg" : arg;
  auto ends = [&](const std::string& suf) {
    return path.size() > suf.size() && path.compare(path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (!ends(".svg") && !ends(".html")) {
    out_ << "viz: the file name must end in .svg or .html, got '" << path << "'\n";
    return;
  }
  VizOptions o;
  o.html = ends(".html");
  o.pid = frame_->pid;
  o.file = m_.file;
  o.order = order_name();
  o.launch = static_cast<int>(viz_->launches.size()) - 1;
  std::string why;
  if (!write_viz_file(path, render_viz(*viz_, *frame_->buffers, o), &why)) {
    out_ << "viz: " << why << "\n";
    return;
  }
  out_ << "wrote the footprint of " << instance_str(*frame_) << " so far to " << path << "\n";
}

void Session::cmd_help() const {
  out_ << "commands (short forms in parentheses):\n"
          "  step (s) [N]          run one statement (N statements)\n"
          "  next (n) [N]          run one statement, a whole loop when at a `for`\n"
          "  continue (c)          run to the next breakpoint hit, across instances\n"
          "  finish                run to the end of this program instance\n"
          "  pid P0[,P1[,P2]]      run until that program instance starts\n"
          "  print (p) EXPR[, mask=M]  show a value (tiles: type, values; lanes where M is false as --)\n"
          "  print/s (p/s) EXPR[, mask=M]  one line: type, min, max, mean (of the lanes where M is true)\n"
          "  display EXPR          show EXPR at every stop; undisplay [N] removes it\n"
          "  watch EXPR            stop when the value of EXPR changes\n"
          "  break (b) [FILE:]LINE [if COND] | break if COND\n"
          "  delete (d) [N]        delete breakpoint N (all without N)\n"
          "  disable [N...] | enable [N...]   stop using / use again breakpoint N (all without N)\n"
          "  condition N [COND]    a new condition for breakpoint N (none without COND)\n"
          "  set precision|linewidth|threshold|edgeitems N   how values print (numpy's printoptions)\n"
          "  info breakpoints|locals|pids|memory|display\n"
          "  list (l)              source and tile statements around this point\n"
          "  where (bt)            host call site and launch, kernel, instance, statement and loop variables\n"
          "  viz [FILE]            draw this instance's footprint so far (FILE.svg|.html; default footprint.svg)\n"
          "  run | restart         run again from the start\n"
          "  quit (q)              end the program (Ctrl-D too)\n"
          "an empty line repeats the last command. Names in EXPR/COND: pid0 pid1 pid2 (pid = pid0), the\n"
          "kernel's variables and parameters; COND also takes the positional form '=0,>1'. For a kernel\n"
          "read from .py, EXPR/COND are Triton expressions: tl.max(x, axis=0), x.sum(0), x.shape, x[3].\n";
}

}  // namespace dtsim
