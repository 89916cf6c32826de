// `dtsim viz`: one interpreter run under the access recorder, then the picture (src/viz).
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "driver/Driver.h"
#include "interp/RunControl.h"
#include "host/Output.h"
#include "tools/Commands.h"
#include "viz/Viz.h"

namespace dtsim {

namespace {

// The schedule lines of a .dt program (`f.block(...)`, `f.map(...)`, ...), for the caption.
std::vector<std::string> schedule_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string line;
  static const std::regex sched(R"(^\s*[A-Za-z_]\w*\.[A-Za-z_]\w*\s*\(.*)");
  while (std::getline(in, line)) {
    if (!std::regex_match(line, sched) || line.find(".compile") != std::string::npos) continue;
    size_t b = line.find_first_not_of(" \t");
    out.push_back(line.substr(b));
  }
  return out;
}

std::string order_words(const InterpOptions& o) {
  switch (o.order) {
    case Order::Sequential: return "sequential (pid0 fastest)";
    case Order::Reverse: return "reverse";
    case Order::Shuffle: return "shuffled (seed " + std::to_string(o.shuffle_seed) + ")";
  }
  return "";
}

}  // namespace

int viz_command(const CliOptions& o, std::ostream& out, std::ostream& err) {
  Program p = compile(o.source(), o.launch());
  const Bindings& b = p.bindings;
  check_memory_budget(p.module, b);
  Buffers preset = read_inputs(p, o.ins);
  Buffers bufs = make_buffers(p.module, b, o.seed, preset);

  if (o.viz_pid) {
    bool fits = false;
    std::string grids;
    for (const Kernel& k : p.module.kernels) {
      auto g = launch_grid(k, b);
      const auto& q = *o.viz_pid;
      fits = fits || (q[0] < g[0] && q[1] < g[1] && q[2] < g[2]);
      grids += (grids.empty() ? "" : ", ") + k.name + " (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " +
               std::to_string(g[2]) + ")";
    }
    if (!fits) {
      const auto& q = *o.viz_pid;
      throw UserError("--pid " + std::to_string(q[0]) + "," + std::to_string(q[1]) + "," + std::to_string(q[2]) +
                      " is outside the grid of every kernel: " + grids);
    }
  }

  if (!o.output.empty()) check_output_target(o.output, "-o");  // before the run, not after it
  VizRecorder rec(o.viz_pid);
  InterpOptions opt = o.interp;
  opt.threads = 1;
  opt.keep_going = true;
  opt.sanitize = Sanitize::All;
  opt.hooks = &rec;
  std::ostringstream prints;
  opt.out = &prints;  // print() output is not part of the picture
  RunControl ctl;
  ctl.max_steps = o.max_steps;
  ctl.timeout_s = o.timeout_s;
  opt.control = &ctl;
  RunReport report;
  {
    SigintGuard sigint;
    ProgressLine progress(&ProgressLine::describe_run, &ctl);
    report = run_module(p.module, b, bufs, opt);
  }
  if (ctl.interrupted) {  // Ctrl-C: no picture
    err << ctl.interrupted_line() << "\n";
    return interrupted_exit_code();
  }
  // A run stopped by --max-steps or --timeout draws no picture: the first such stop, as run reports it.
  for (const Finding& f : report.findings)
    if (f.message.find("(--max-steps)") != std::string::npos || f.message.find("(--timeout)") != std::string::npos) {
      err << f.message << (f.message.empty() || f.message.back() != '\n' ? "\n" : "");
      return 1;
    }

  VizOptions vo;
  vo.html = o.output.size() > 5 && o.output.compare(o.output.size() - 5, 5, ".html") == 0;
  vo.loads = o.viz_loads;
  vo.pid = o.viz_pid;
  vo.file = o.file;
  vo.order = order_words(o.interp);
  if (p.is_dt()) vo.schedule = schedule_lines(o.file);
  std::string picture = render_viz(rec, bufs, vo);

  if (o.output.empty()) {
    out << picture;
  } else {
    write_output_file(o.output, "-o", picture);
    err << "viz: wrote " << o.output << " (" << picture.size() << " bytes";
    if (report.findings_count) err << "; " << report.findings_count << " sanitizer finding" << (report.findings_count == 1 ? "" : "s") << " drawn";
    err << ")\n";
  }
  return 0;
}

}  // namespace dtsim
