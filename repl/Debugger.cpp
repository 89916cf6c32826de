// The debugger hooks: conditional breakpoints (--break-if, --break-at, REPL `break`), watches,
// --print-if, and the decision where to stop before each statement (see Debugger.h, Session.h).
#include <algorithm>
#include <map>
#include <sstream>

#include "interp/RunControl.h"
#include "ir/Diag.h"
#include "repl/Session.h"

namespace dtsim {

namespace {

const char* kPrintPseudo = "<print-if>";

bool prints_after(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Assign:
    case StmtKind::Store:
    case StmtKind::Atomic:
    case StmtKind::Print:
    case StmtKind::Assert:
      return true;
    case StmtKind::For:
    case StmtKind::While:
    case StmtKind::If:
    case StmtKind::Return:
      return false;
  }
  return false;
}

}  // namespace

Session::Session(const Module& m, const Bindings& b, const DebugConfig& cfg, std::ostream& out)
    : m_(m), b_(b), cfg_(cfg), out_(out), names_(known_names(m)), py_file_(python_source(m)) {
  DebugMemory* mem = cfg.memory.get();
  if (mem) {
    mem->findings.clear();
    restore_memory();
  }
  // --break-if / --break-at texts become breakpoints once per program: a later launch keeps what
  // the REPL did to them (deleted, disabled, a new condition).
  for (const std::string& c : cfg.break_if)
    if (!mem || !mem->seeded.count("if:" + c)) {
      add_break_if(c, "<break-if>");
      if (mem) mem->seeded.insert("if:" + c);
    }
  for (const std::string& c : cfg.break_at)
    if (!mem || !mem->seeded.count("at:" + c)) {
      add_break_at(c, "", "--break-at");
      if (mem) mem->seeded.insert("at:" + c);
    }
  interactive_ = cfg.stop_at_start || !bps_.empty() || !dormant_.empty();
  if (interactive_) viz_ = std::make_unique<VizRecorder>(std::nullopt, true);
  for (const DebugConfig::PrintIf& p : cfg.print_if) {
    PrintIf pi;
    pi.cond = make_condition(p.cond, kPrintPseudo, names_, py_file_);
    pi.cond.check_types(m_, b_);
    std::vector<std::string> exprs;
    for (const std::string& e : p.exprs)
      for (const std::string& piece : split_top_level(e)) exprs.push_back(piece);
    if (exprs.empty()) throw UserError("--print-if '" + p.cond + "': no expression to print");
    for (const std::string& e : exprs) {
      pi.exprs.push_back(make_debug_expr(e, kPrintPseudo, names_, py_file_));
      pi.exprs.back().check_types(m_, b_);
    }
    if (p.at_line) {
      if (*p.at_line <= 0) throw UserError("--at " + std::to_string(*p.at_line) + ": expected a line number >= 1");
      int resolved = 0;
      // The statement on that line: the last one lowered from it in each kernel (a .dt line
      // may produce several statements; the value is printed once they all ran).
      std::map<const Kernel*, const Stmt*> last;
      std::vector<const Stmt*> on_line = stmts_at_line(m_, "", *p.at_line, &resolved);
      for (const Kernel& k : m_.kernels)
        for (const Stmt* s : k.stmts)
          if (std::find(on_line.begin(), on_line.end(), s) != on_line.end()) last[&k] = s;
      for (const auto& [k, s] : last) pi.at.insert(s);
    }
    prints_.push_back(std::move(pi));
  }
  mode_ = cfg.stop_at_start ? Mode::Step : Mode::Continue;
  steps_left_ = 1;
}

Session::~Session() { save_memory(); }

void Session::restore_memory() {
  DebugMemory& mem = *cfg_.memory;
  next_bp_id_ = mem.next_bp_id;
  next_display_id_ = mem.next_display_id;
  for (const DebugMemory::Bp& spec : mem.bps) {
    try {
      switch (static_cast<Breakpoint::Kind>(spec.kind)) {
        case Breakpoint::Cond:
          add_break_if(spec.text, "<break-if>", spec.id);
          break;
        case Breakpoint::Line: {
          // Only where this launch has a statement on exactly that line (another kernel of the
          // file would otherwise take the next line that has one).
          LineSpec ls = parse_line_spec(spec.text, "break");
          int resolved = 0;
          stmts_at_line(m_, ls.file, ls.line, &resolved);
          if (resolved != ls.line) throw UserError("not in this launch");
          add_break_at(spec.text + (spec.cond.empty() ? "" : " if " + spec.cond), "", "break", spec.id);
          break;
        }
        case Breakpoint::Watch:
          add_watch(spec.text, spec.id);
          break;
      }
      bps_.back().enabled = spec.enabled;
      bps_.back().hits = spec.hits;
    } catch (const UserError&) {
      dormant_.push_back(spec);  // names or lines of another kernel: kept for the launches it fits
    }
  }
  for (const DebugMemory::Disp& d : mem.displays) {
    Display disp;
    disp.id = d.id;
    try {
      disp.expr = make_debug_expr(d.expr, "<display>", names_, py_file_);
      if (!d.mask.empty()) disp.mask = make_debug_expr(d.mask, "<display>", names_, py_file_);
      displays_.push_back(std::move(disp));
    } catch (const UserError&) {
      dormant_displays_.push_back(d);
    }
  }
}

void Session::save_memory() {
  if (!cfg_.memory) return;
  DebugMemory& mem = *cfg_.memory;
  mem.bps = dormant_;
  for (const Breakpoint& bp : bps_) {
    DebugMemory::Bp spec;
    spec.id = bp.id;
    spec.kind = bp.kind;
    spec.text = bp.kind == Breakpoint::Line ? bp.where : bp.text;
    if (bp.kind == Breakpoint::Line && bp.expr.valid()) spec.cond = bp.expr.text();
    spec.enabled = bp.enabled;
    spec.hits = bp.hits;
    mem.bps.push_back(spec);
  }
  std::sort(mem.bps.begin(), mem.bps.end(), [](const DebugMemory::Bp& a, const DebugMemory::Bp& b) { return a.id < b.id; });
  mem.displays = dormant_displays_;
  for (const Display& d : displays_) mem.displays.push_back({d.id, d.expr.text(), d.mask ? d.mask->text() : ""});
  std::sort(mem.displays.begin(), mem.displays.end(),
            [](const DebugMemory::Disp& a, const DebugMemory::Disp& b) { return a.id < b.id; });
  mem.next_bp_id = next_bp_id_;
  mem.next_display_id = next_display_id_;
}

void Session::add_break_if(const std::string& text, const std::string& pseudo, int id) {
  Breakpoint bp;
  bp.kind = Breakpoint::Cond;
  bp.text = text;
  bp.expr = make_condition(text, pseudo, names_, py_file_);
  bp.expr.check_types(m_, b_);
  bp.id = id ? id : next_bp_id_++;
  bps_.push_back(std::move(bp));
}

void Session::add_break_at(const std::string& text, const std::string& default_file, const std::string& what, int id) {
  LineSpec spec = parse_line_spec(text, what);
  Breakpoint bp;
  bp.kind = Breakpoint::Line;
  bp.text = text;
  std::string file = spec.file.empty() ? default_file : spec.file;
  int resolved = 0;
  for (const Stmt* s : stmts_at_line(m_, file, spec.line, &resolved)) bp.stmts.insert(s);
  const Stmt* first = *bp.stmts.begin();
  int file_id = first->loc.line == resolved ? first->loc.file : first->loc2.file;
  bp.where = Sources::name(file_id) + ":" + std::to_string(resolved);
  if (!spec.cond.empty()) {
    bp.expr = make_condition(spec.cond, "<break-at>", names_, py_file_);
    bp.expr.check_types(m_, b_);
  }
  bp.id = id ? id : next_bp_id_++;
  if (resolved != spec.line)
    out_ << "Breakpoint " << bp.id << " at " << bp.where << " (no statement on line " << spec.line << ")\n";
  bps_.push_back(std::move(bp));
}

int Session::add_watch(const std::string& text, int id) {
  Breakpoint bp;
  bp.kind = Breakpoint::Watch;
  bp.text = text;
  bp.expr = make_debug_expr(text, "<watch>", names_, py_file_);
  bp.expr.check_types(m_, b_);
  if (frame_)
    if (std::optional<std::string> c = bp.expr.constant(*frame_); c && !bp.expr.eval(*frame_))
      throw UserError("'" + text + "' is a compile-time value (" + *c + "): it never changes; watch a value of the instance");
  if (frame_) bp.last = bp.expr.eval(*frame_);
  bp.id = id ? id : next_bp_id_++;
  bps_.push_back(std::move(bp));
  return bps_.back().id;
}

// ---- hooks ----

void Session::on_launch(const Kernel& k, int kernel_index, const std::array<int64_t, 3>& grid,
                        const InstanceOrder& order) {
  if (kernel_index == 0 && launched_) {  // a new run (restart): back to the initial resume mode
    mode_ = cfg_.stop_at_start ? Mode::Step : Mode::Continue;
    steps_left_ = 1;
    instance_seq_ = 0;
    last_shown_instance_ = -1;
    for (Breakpoint& bp : bps_) bp.stopped_instance = -1;
  }
  launched_ = true;
  kernel_ = &k;
  kernel_index_ = kernel_index;
  grid_ = grid;
  order_ = order;
  if (viz_) viz_->on_launch(k, kernel_index, grid, order);
}

void Session::on_instance_begin(Frame& f) {
  if (viz_) viz_->on_instance_begin(f);
  ++instance_seq_;
  frame_ = &f;
  stmt_ = nullptr;
  prev_stmt_ = nullptr;
  for (PrintIf& p : prints_) p.pending = false;
  for (Breakpoint& bp : bps_)
    if (bp.kind == Breakpoint::Watch) bp.last = bp.expr.eval(f);
}

void Session::before_stmt(Frame& f, const Stmt& s) {
  frame_ = &f;
  flush_prints(f, &s);
  std::string reason = stop_reason(f, s);
  if (interactive_ && take_sigint()) reason = reason.empty() || reason == "step" ? "Interrupted (Ctrl-C)" : "Interrupted (Ctrl-C)\n" + reason;
  stmt_ = &s;
  if (!reason.empty()) stop(f, &s, reason);
  prev_stmt_ = &s;
  for (PrintIf& p : prints_) {
    if (!p.at.count(&s)) continue;
    if (prints_after(s)) {
      p.pending = true;
    } else if (p.cond.test(f)) {
      emit_print(p, f);
    }
  }
  if (viz_) viz_->before_stmt(f, s);  // after any stop: `viz` shows the accesses made so far
}

void Session::after_loop_iteration(Frame& f, const Stmt& loop) {
  frame_ = &f;
  flush_prints(f, nullptr);
  if (viz_) viz_->after_loop_iteration(f, loop);
}

void Session::on_instance_end(Frame& f) {
  frame_ = &f;
  flush_prints(f, nullptr);
  for (PrintIf& p : prints_)
    if (p.at.empty() && p.cond.test(f)) emit_print(p, f);
  stmt_ = nullptr;
  std::string reason;
  check_watches(f, reason);
  if (mode_ == Mode::Finish && mode_instance_ == instance_seq_) reason = "finished " + instance_str(f);
  if (!reason.empty()) stop(f, nullptr, reason);
  frame_ = nullptr;
}

void Session::on_finding(Frame& f, const Stmt& s, const Finding& finding) {
  if (viz_) viz_->on_finding(f, s, finding);
  if (cfg_.memory) cfg_.memory->findings.push_back(finding);
  frame_ = &f;
  flush_prints(f, nullptr);
  if (!interactive_) return;
  stmt_ = &s;
  std::string msg = finding.message;
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  stop(f, &s, "sanitizer finding in " + instance_str(f) + ":\n" + msg);
}

// ---- conditional prints ----

void Session::flush_prints(Frame& f, const Stmt* next) {
  for (PrintIf& p : prints_) {
    if (!p.pending || (next && p.at.count(next))) continue;  // statements of one line print once
    p.pending = false;
    if (p.cond.test(f)) emit_print(p, f);
  }
}

void Session::emit_print(const PrintIf& p, Frame& f) {
  std::string line = "pid " + pid_str(f.pid) + " |";
  for (size_t i = 0; i < p.exprs.size(); ++i) {
    std::string why;
    std::optional<Value> v = p.exprs[i].eval(f, &why);
    line += (i ? ", " : " ") + p.exprs[i].text() + " = ";
    size_t nl = line.rfind('\n');
    int col = static_cast<int>(line.size() - (nl == std::string::npos ? 0 : nl + 1));
    std::optional<std::string> c = p.exprs[i].constant(f);  // a Python value (x.shape)
    line += c ? *c : v ? format_value(*v, nullptr, col) : "<" + why + ">";
  }
  out_ << line << "\n";
}

// ---- stopping ----

std::string Session::stop_reason(Frame& f, const Stmt& s) {
  std::string reason;
  switch (mode_) {
    case Mode::Continue:
      break;
    case Mode::Step:
      if (--steps_left_ <= 0) reason = "step";
      break;
    case Mode::Next:
      if (mode_instance_ != instance_seq_ || f.loop_stack.size() <= next_depth_)
        if (--steps_left_ <= 0) reason = "step";
      break;
    case Mode::Finish:
      break;
    case Mode::UntilPid:
      if (f.pid == target_pid_ && f.kernel == kernel_) reason = "reached " + instance_str(f);
      break;
  }
  check_watches(f, reason);
  for (Breakpoint& bp : bps_) {
    if (!bp.enabled) continue;
    bool hit = false;
    switch (bp.kind) {
      case Breakpoint::Cond:
        hit = bp.stopped_instance != instance_seq_ && bp.expr.test(f);
        if (hit) bp.stopped_instance = instance_seq_;
        break;
      case Breakpoint::Line:
        hit = bp.stmts.count(&s) && !(prev_stmt_ && bp.stmts.count(prev_stmt_)) &&
              (!bp.expr.valid() || bp.expr.test(f));
        break;
      case Breakpoint::Watch:
        break;
    }
    if (!hit) continue;
    ++bp.hits;
    std::string what = bp.kind == Breakpoint::Cond ? "Breakpoint " + std::to_string(bp.id) + " (" + bp.text + ")"
                                                   : "Breakpoint " + std::to_string(bp.id) + " at " + bp.where +
                                                         (bp.expr.valid() ? " if " + bp.expr.text() : "");
    reason = reason.empty() || reason == "step" ? what : reason + "\n" + what;
  }
  return reason;
}

void Session::check_watches(Frame& f, std::string& reason) {
  for (Breakpoint& bp : bps_) {
    if (bp.kind != Breakpoint::Watch || !bp.enabled) continue;
    std::optional<Value> now = bp.expr.eval(f);
    bool changed = now.has_value() != bp.last.has_value() || (now && !same_value(*now, *bp.last));
    if (changed) {
      ++bp.hits;
      std::string msg = "Watchpoint " + std::to_string(bp.id) + ": " + bp.text + "\nOld value = " +
                        (bp.last ? format_value(*bp.last, nullptr, 12) : "<undefined>") +
                        "\nNew value = " + (now ? format_value(*now, nullptr, 12) : "<undefined>");
      reason = reason.empty() || reason == "step" ? msg : reason + "\n" + msg;
    }
    bp.last = std::move(now);
  }
}

void Session::stop(Frame& f, const Stmt* s, const std::string& reason) {
  frame_ = &f;
  stmt_ = s;
  if (reason != "step") out_ << reason << "\n";
  if (last_shown_instance_ != instance_seq_) {
    out_ << "kernel " << f.kernel->name << ", " << instance_str(f) << "\n";
    last_shown_instance_ = instance_seq_;
  }
  show_location();
  show_displays();
  mode_ = Mode::Continue;
  repl();
  take_sigint();  // a Ctrl-C typed at the prompt does not stop the next statement
}

// ---- formatting ----

std::string Session::pid_str(const std::array<int64_t, 3>& pid) const {
  size_t dims = kernel_ ? std::max<size_t>(1, kernel_->grid.size()) : 1;
  std::string s = "[";
  for (size_t i = 0; i < dims && i < 3; ++i) s += (i ? ", " : "") + std::to_string(pid[i]);
  return s + "]";
}

std::string Session::order_name() const { return order_.name(); }

int64_t Session::order_position(const std::array<int64_t, 3>& pid) const { return order_.position(pid); }

std::string Session::instance_str(const Frame& f) const {
  return "pid " + pid_str(f.pid) + " (instance " + std::to_string(f.order_index + 1) + " of " +
         std::to_string(order_.size()) + ", order " + order_name() + ")";
}

std::unique_ptr<DebugHooks> make_debugger(const Module& m, const Bindings& b, const DebugConfig& cfg, std::ostream& out) {
  return std::make_unique<Session>(m, b, cfg, out);
}

}  // namespace dtsim
