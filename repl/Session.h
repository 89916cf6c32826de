// The debugger's state machine (private to repl/): breakpoints, watches, displays, conditional
// prints, the resume mode after each REPL command, and the REPL itself. Debugger.cpp holds the
// hooks and stop logic; Commands.cpp the REPL commands and the info/list/where views.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "repl/Condition.h"
#include "repl/Debugger.h"
#include "repl/LineReader.h"
#include "viz/Viz.h"

namespace dtsim {

struct Breakpoint {
  enum Kind { Cond, Line, Watch } kind = Cond;
  int id = 0;
  std::string text;                 // as the user wrote it
  BoundExpr expr;                   // Cond: the condition; Line: optional condition; Watch: watched
  std::set<const Stmt*> stmts;      // Line: the statements on that line
  std::string where;                // Line: "file:line"
  int64_t hits = 0;
  bool enabled = true;              // `disable N` / `enable N`
  int64_t stopped_instance = -1;    // Cond: the instance it last stopped in (stops once per instance)
  std::optional<Value> last;        // Watch: the value at the previous check
};

struct PrintIf {
  BoundExpr cond;
  std::vector<BoundExpr> exprs;
  std::set<const Stmt*> at;  // empty: at the end of each instance
  bool pending = false;      // the statement at `at` ran; print at the next hook
};

struct Display {
  int id = 0;
  BoundExpr expr;
  std::optional<BoundExpr> mask;
};

class Session : public DebugHooks {
 public:
  Session(const Module& m, const Bindings& b, const DebugConfig& cfg, std::ostream& out);
  ~Session() override;

  void on_launch(const Kernel& k, int kernel_index, const std::array<int64_t, 3>& grid,
                 const InstanceOrder& order) override;
  void on_instance_begin(Frame& f) override;
  void before_stmt(Frame& f, const Stmt& s) override;
  void after_loop_iteration(Frame& f, const Stmt& loop) override;
  void on_instance_end(Frame& f) override;
  void on_finding(Frame& f, const Stmt& s, const Finding& finding) override;
  bool handles_interrupt() const override { return interactive_; }  // Ctrl-C returns to the prompt

 private:
  enum class Mode { Continue, Step, Next, Finish, UntilPid };

  // ---- setup (Debugger.cpp) ----
  // `id` 0 = the next number; else the number it had in an earlier launch (DebugMemory).
  void add_break_if(const std::string& text, const std::string& pseudo, int id = 0);
  void add_break_at(const std::string& text, const std::string& default_file, const std::string& what, int id = 0);
  int add_watch(const std::string& text, int id = 0);
  void restore_memory();  // the breakpoints and displays of earlier launches (cfg_.memory)
  void save_memory();     // ... and back
  std::vector<std::string> names() const { return names_; }

  // ---- run-time (Debugger.cpp) ----
  void flush_prints(Frame& f, const Stmt* next);
  void emit_print(const PrintIf& p, Frame& f);
  std::string stop_reason(Frame& f, const Stmt& s);
  void check_watches(Frame& f, std::string& reason);
  void stop(Frame& f, const Stmt* s, const std::string& reason);

  // ---- REPL (Commands.cpp) ----
  void repl();
  bool command(const std::string& line);  // true: resume the run
  void show_location() const;
  void show_displays();
  void cmd_print(const std::string& arg, bool add_display, bool summary = false);
  void cmd_break(const std::string& arg);
  void cmd_delete(const std::string& arg);
  void cmd_enable(const std::string& arg, bool on);
  void cmd_condition(const std::string& arg);
  void cmd_set(const std::string& arg);
  Breakpoint* find_bp(const std::string& arg, const std::string& usage);
  void cmd_info(const std::string& arg);
  bool cmd_pid(const std::string& arg);
  void cmd_list() const;
  void cmd_where() const;
  void cmd_help() const;
  void cmd_viz(const std::string& arg);
  void info_breakpoints() const;
  void info_locals() const;
  void info_pids() const;
  void info_memory() const;
  Completions complete(const std::string& before, const std::string& prefix) const;
  LineReader& reader();

 public:
  // ---- shared formatting ----
  std::string pid_str(const std::array<int64_t, 3>& pid) const;
  std::string instance_str(const Frame& f) const;  // "pid [1] (instance 2 of 3, order sequential)"
  std::string order_name() const;
  int64_t order_position(const std::array<int64_t, 3>& pid) const;  // -1 when not in the grid

 private:
  const Module& m_;
  const Bindings& b_;
  DebugConfig cfg_;
  std::ostream& out_;
  std::vector<std::string> names_;
  int py_file_ = -1;  // python_source(m_): expressions are Triton expressions of this file
  std::unique_ptr<LineReader> reader_;
  bool interactive_ = false;
  std::unique_ptr<VizRecorder> viz_;  // interactive sessions: the running instance's accesses (`viz`)

  std::vector<Breakpoint> bps_;
  std::vector<DebugMemory::Bp> dormant_;  // kept from earlier launches, not applicable to this one
  std::vector<DebugMemory::Disp> dormant_displays_;
  std::vector<PrintIf> prints_;
  std::vector<Display> displays_;
  int next_bp_id_ = 1;
  int next_display_id_ = 1;

  // the launch
  const Kernel* kernel_ = nullptr;
  int kernel_index_ = 0;
  std::array<int64_t, 3> grid_{};
  InstanceOrder order_;
  bool launched_ = false;

  // the instance and the point where the run stands
  Frame* frame_ = nullptr;
  const Stmt* stmt_ = nullptr;       // null: at the end of the instance
  const Stmt* prev_stmt_ = nullptr;  // previous statement run in this instance
  int64_t instance_seq_ = 0;         // increases with every instance of the run
  int64_t last_shown_instance_ = -1;

  // how to resume
  Mode mode_ = Mode::Continue;
  int64_t steps_left_ = 0;
  size_t next_depth_ = 0;
  int64_t mode_instance_ = -1;
  std::array<int64_t, 3> target_pid_{};
  std::string last_command_;
};

}  // namespace dtsim
