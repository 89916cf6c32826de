// Command-line parsing and help texts of `dtsim run`, `dtsim debug` and `dtsim emit`.
#include "tools/Args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <climits>
#include <cstdlib>

#include "interp/RunOptions.h"
#include "ir/Diag.h"
#include "difftest/Difftest.h"
#include "tools/Commands.h"

namespace dtsim {

namespace {

// How many values a flag takes, and which commands accept it ("run" also stands for debug).
struct FlagSpec {
  const char* name;
  int values;            // 0, 1 or 2 (--print-if COND EXPRS)
  const char* commands;  // the commands that accept it, separated by spaces
};

const FlagSpec kFlags[] = {
    {"--arg", 1, "run emit bench viz tune difftest"},
    {"--in", 1, "run emit bench viz difftest"},
    {"--out", 1, "run tune"},
    {"--write-best", 1, "tune"},
    {"--seed", 1, "run bench viz tune difftest"},
    {"--threads", 1, "run bench tune"},
    {"--sanitize", 1, "run emit bench difftest"},
    {"--keep-going", 0, "run"},
    {"--equal-stores", 1, "run bench viz"},
    {"--order", 1, "run viz"},
    {"--backend", 1, "run bench tune"},
    {"--check", 0, "run"},
    {"--kernel", 1, "run emit bench viz difftest"},
    {"--break-if", 1, "run"},
    {"--print-if", 2, "run"},
    {"--at", 1, "run"},
    {"--break-at", 1, "run"},
    {"--tile", 0, "emit"},
    {"--ast", 0, "emit"},
    {"--nvvm", 0, "emit"},
    {"--ptx", 0, "emit"},
    {"--triton", 0, "emit"},
    {"--layouts", 0, "emit"},
    {"--plan", 0, "emit"},
    {"--after", 1, "emit"},
    {"-o", 1, "emit viz"},
    {"--reps", 1, "bench"},
    {"--json", 0, "bench tune"},
    {"--vs-triton", 0, "bench"},
    {"--arch", 1, "run emit bench tune difftest"},
    {"--pid", 1, "viz"},
    {"--loads", 0, "viz"},
    {"--grid", 1, "run emit bench viz difftest"},
    {"--buf", 1, "run emit bench viz difftest"},
    {"--max-steps", 1, "run bench viz"},
    {"--timeout", 1, "run bench viz"},
    {"--budget", 1, "tune"},
    {"--time", 1, "tune"},
    {"--csv", 1, "tune"},
    {"--plot", 1, "tune"},
    {"--ref", 1, "tune"},
    {"--jobs", 1, "tune"},
    {"--cache-dir", 1, "tune"},
    {"--shard", 1, "tune"},
    {"--exchange", 1, "tune"},
    {"--exchange-timeout", 1, "tune"},
    {"--timed-ms", 1, "tune"},
    {"--merge", 0, "tune"},
    {"--gpus", 1, "tune"},
    {"--check-only", 0, "tune"},
    {"--compile-only", 0, "tune"},
    {"--no-overlap", 0, "tune"},
    {"--trials", 1, "difftest"},
    {"--schedule-seed", 1, "difftest"},
    {"--fast-math", 0, "difftest"},
    {"--warp-specialize", 0, "run emit bench difftest"},
    {"--no-warp-specialize", 0, "run emit bench difftest"},
    {"--cluster", 0, "run emit bench difftest"},
    {"--no-cluster", 0, "run emit bench difftest"},
    {"--persistent", 0, "run emit bench difftest"},
    {"--no-persistent", 0, "run emit bench difftest"},
    {"--persistent-ctas", 1, "run emit bench difftest"},
    {"--fp-fusion", 0, "run emit bench"},
    {"--approx-div", 0, "run emit bench"},
    {"--oracle", 1, "difftest"},
    {"--help", 0, "run emit bench viz tune difftest"},
    {"-h", 0, "run emit bench viz tune difftest"},
};

bool accepts(const FlagSpec& f, const std::string& command) {
  std::string c = command == "debug" ? "run" : command;
  std::string list = std::string(" ") + f.commands + " ";
  return list.find(" " + c + " ") != std::string::npos;
}

const FlagSpec* find_flag(const std::string& name, const std::string& command) {
  for (const FlagSpec& f : kFlags)
    if (name == f.name && accepts(f, command)) return &f;
  return nullptr;
}

[[noreturn]] void usage_error(const std::string& command, const std::string& msg) {
  throw UserError(msg + " (see 'dtsim " + command + " --help')");
}

// "NAME=VALUE" -> {NAME, VALUE}; both parts non-empty.
std::pair<std::string, std::string> split_assignment(const std::string& command, const std::string& flag,
                                                     const std::string& v) {
  size_t eq = v.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
    usage_error(command, "'" + flag + "' expects NAME=VALUE, got '" + v + "'");
  return {v.substr(0, eq), v.substr(eq + 1)};
}

int64_t parse_int(const std::string& command, const std::string& flag, const std::string& v, int64_t lo,
                  int64_t hi) {
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || x < lo || x > hi)
    usage_error(command, "'" + flag + "' expects an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "], got '" + v + "'");
  return x;
}

// The options shared with `python -m dtsim` and dtsim.config(): one checker (interp/RunOptions.h).
void apply_shared(CliOptions& o, const std::string& flag, const std::string& v) {
  RunSettings s;
  s.sanitize = o.interp.sanitize;
  s.threads = o.interp.threads;
  s.order = o.interp.order;
  s.shuffle_seed = o.interp.shuffle_seed;
  s.equal_stores_conflict = o.interp.equal_stores_conflict;
  s.max_steps = o.max_steps;
  s.timeout_s = o.timeout_s;
  std::string err = set_run_option(s, flag.substr(2), v);
  if (!err.empty()) usage_error(o.command, "'" + flag + "' " + err);
  o.interp.sanitize = s.sanitize;
  o.interp.threads = s.threads;
  o.interp.order = s.order;
  o.interp.shuffle_seed = s.shuffle_seed;
  o.interp.equal_stores_conflict = s.equal_stores_conflict;
  o.max_steps = s.max_steps;
  o.timeout_s = s.timeout_s;
}

void set_emit(CliOptions& o, EmitWhat w) {
  if (o.emit != EmitWhat::None && o.emit != w) usage_error(o.command, "choose one of --tile, --ast, --nvvm, --ptx, --triton, --layouts, --plan, --after");
  o.emit = w;
}

double parse_positive(const std::string& command, const std::string& flag, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x > 0) || !std::isfinite(x)) usage_error(command, "'" + flag + "' expects a positive number, got '" + v + "'");
  return x;
}

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Applies one flag with its values (already collected).
void apply_flag(CliOptions& o, const std::string& name, const std::vector<std::string>& v) {
  const std::string& c = o.command;
  if (name == "--arg") {
    auto [k, val] = split_assignment(c, name, v[0]);
    o.args[k] = val;
  } else if (name == "--in") {
    o.ins.push_back(split_assignment(c, name, v[0]));
  } else if (name == "--grid") {
    if (!o.grid.empty()) usage_error(c, "'--grid' is given twice");
    o.grid_text = v[0];
    o.grid = split_exprs(v[0]);
    if (o.grid.empty() || o.grid.size() > 3) usage_error(c, "'--grid' expects 1 to 3 extents, got '" + v[0] + "'");
  } else if (name == "--buf") {
    o.bufs.push_back(split_assignment(c, name, v[0]));
  } else if (name == "--out" && c == "tune") {
    o.tune_out = v[0];
  } else if (name == "--write-best") {
    o.write_best = v[0];
  } else if (name == "--out") {
    o.outs.push_back(split_assignment(c, name, v[0]));
  } else if (name == "--seed") {
    o.seed = static_cast<uint64_t>(parse_int(c, name, v[0], 0, INT64_MAX));
  } else if (name == "--sanitize" && c == "difftest") {  // the GPU's checks only
    if (v[0] == "bounds") o.bounds_checks = true;
    else if (v[0] == "none") o.bounds_checks = false;
    else usage_error(c, "'--sanitize' expects bounds or none, got '" + v[0] + "'");
  } else if (name == "--threads" || name == "--sanitize" || name == "--max-steps" || name == "--timeout" ||
             name == "--order" || name == "--equal-stores") {
    apply_shared(o, name, v[0]);
  } else if (name == "--keep-going") {
    o.interp.keep_going = true;
  } else if (name == "--backend" && c == "tune") {
    if (v[0] != "cuda" && v[0] != "triton") usage_error(c, "'--backend' expects cuda or triton, got '" + v[0] + "'");
    o.tune_backend = v[0];
  } else if (name == "--backend") {
    if (v[0] == "interp") o.backend = Backend::Interp;
    else if (v[0] == "cuda") o.backend = Backend::Cuda;
    else usage_error(c, "'--backend' expects interp or cuda, got '" + v[0] + "'");
  } else if (name == "--check") {
    o.check = true;
  } else if (name == "--kernel") {
    o.kernel = v[0];
  } else if (name == "--break-if") {
    o.debug.break_if.push_back(v[0]);
  } else if (name == "--print-if") {
    std::vector<std::string> exprs = split_exprs(v[1]);
    if (exprs.empty()) usage_error(c, "'--print-if' expects COND EXPR[,EXPR...], got no expression");
    o.debug.print_if.push_back({v[0], exprs, std::nullopt});
  } else if (name == "--at") {
    if (o.debug.print_if.empty()) usage_error(c, "'--at LINE' must follow a '--print-if'");
    o.debug.print_if.back().at_line = static_cast<int>(parse_int(c, name, v[0], 1, INT_MAX));
  } else if (name == "--break-at") {
    o.debug.break_at.push_back(v[0]);
  } else if (name == "--tile") {
    set_emit(o, EmitWhat::Tile);
  } else if (name == "--ast") {
    set_emit(o, EmitWhat::Ast);
  } else if (name == "--nvvm") {
    set_emit(o, EmitWhat::Nvvm);
  } else if (name == "--ptx") {
    set_emit(o, EmitWhat::Ptx);
  } else if (name == "--triton") {
    set_emit(o, EmitWhat::Triton);
  } else if (name == "--layouts") {
    set_emit(o, EmitWhat::Layouts);
  } else if (name == "--plan") {
    set_emit(o, EmitWhat::Plan);
  } else if (name == "--after") {
    std::optional<Stage> st = stage_named(v[0]);
    if (!st) usage_error(c, "'--after' expects a stage of the pass list (" + stage_list() + "), got '" + v[0] + "'");
    set_emit(o, EmitWhat::After);
    o.emit_after = *st;
  } else if (name == "--arch") {
    if (v[0].rfind("sm_", 0) != 0 || v[0].size() < 5 || !std::isdigit(static_cast<unsigned char>(v[0][3])))
      usage_error(o.command, "'--arch' expects a GPU target such as sm_80, sm_90 or sm_90a, got '" + v[0] + "'");
    o.arch = v[0];
  } else if (name == "--reps") {
    o.reps = static_cast<int>(parse_int(c, name, v[0], 1, 1000000));
  } else if (name == "--json") {
    o.json = true;
  } else if (name == "--vs-triton") {
    o.vs_triton = true;
  } else if (name == "-o") {
    o.output = v[0];
  } else if (name == "--pid") {
    std::array<int64_t, 3> p{0, 0, 0};
    std::string rest = v[0];
    for (int axis = 0;; ++axis) {
      size_t comma = rest.find(',');
      if (axis == 3) usage_error(c, "'--pid' expects P0[,P1[,P2]], got '" + v[0] + "'");
      p[static_cast<size_t>(axis)] = parse_int(c, name, rest.substr(0, comma), 0, INT32_MAX);
      if (comma == std::string::npos) break;
      rest = rest.substr(comma + 1);
    }
    o.viz_pid = p;
  } else if (name == "--loads") {
    o.viz_loads = true;
  } else if (name == "--budget") {
    o.budget = static_cast<uint64_t>(parse_int(c, name, v[0], 1, 100000000));
    o.budget_given = true;
  } else if (name == "--time") {
    o.time_s = parse_positive(c, name, v[0]);
  } else if (name == "--csv") {
    o.csv = v[0];
  } else if (name == "--plot") {
    if (!ends_with(v[0], ".svg")) usage_error(c, "'--plot' expects a file name ending in .svg, got '" + v[0] + "'");
    o.plot = v[0];
  } else if (name == "--ref") {
    auto [k, val] = split_assignment(c, name, v[0]);
    o.refs.push_back({k, parse_positive(c, "--ref " + k, val)});
  } else if (name == "--jobs") {
    o.jobs = static_cast<int>(parse_int(c, name, v[0], 1, 256));
  } else if (name == "--cache-dir") {
    o.cache_dir = v[0];
  } else if (name == "--shard") {
    size_t slash = v[0].find('/');
    if (slash == std::string::npos) usage_error(c, "'--shard' expects I/N (shard I of N, 0 <= I < N), got '" + v[0] + "'");
    o.shards = static_cast<uint64_t>(parse_int(c, "--shard", v[0].substr(slash + 1), 1, 1000000));
    o.shard = static_cast<uint64_t>(parse_int(c, "--shard", v[0].substr(0, slash), 0, static_cast<int64_t>(o.shards) - 1));
  } else if (name == "--exchange") {
    if (v[0].empty()) usage_error(c, "'--exchange' expects a folder, got ''");
    o.exchange = v[0];
  } else if (name == "--exchange-timeout") {
    o.exchange_timeout_s = parse_positive(c, name, v[0]);
  } else if (name == "--timed-ms") {
    o.timed_ms = parse_positive(c, name, v[0]);
  } else if (name == "--merge") {
    o.merge = true;
  } else if (name == "--gpus") {
    if (v[0].empty()) usage_error(c, "'--gpus' expects all or a list such as 0,1 (cpu for a worker that only checks), got ''");
    o.gpus.clear();
    std::string rest = v[0];
    for (;;) {
      size_t comma = rest.find(',');
      std::string g = rest.substr(0, comma);
      bool digits = !g.empty() && g.find_first_not_of("0123456789") == std::string::npos;
      if (!(g == "all" && v[0] == "all") && g != "cpu" && !digits)
        usage_error(c, "'--gpus' expects all or a list of GPU ordinals and cpu, such as 0,1, got '" + v[0] + "'");
      o.gpus.push_back(g);
      if (comma == std::string::npos) break;
      rest = rest.substr(comma + 1);
    }
  } else if (name == "--check-only") {
    o.check_only = true;
  } else if (name == "--compile-only") {
    o.check_only = o.compile_only = true;
  } else if (name == "--no-overlap") {
    o.tune_overlap = false;
  } else if (name == "--trials") {
    o.trials = static_cast<int>(parse_int(c, name, v[0], 1, 1000000000));
  } else if (name == "--schedule-seed") {
    o.schedule_seed = static_cast<uint64_t>(parse_int(c, name, v[0], 0, INT64_MAX));
  } else if (name == "--fast-math") {
    o.fast_math = true;
  } else if (name == "--warp-specialize" || name == "--no-warp-specialize") {
    o.warp_specialize = name == "--warp-specialize" ? 1 : -1;
  } else if (name == "--cluster" || name == "--no-cluster") {
    o.cluster = name == "--cluster" ? 1 : -1;
  } else if (name == "--persistent" || name == "--no-persistent") {
    o.persistent = name == "--persistent" ? 1 : -1;
  } else if (name == "--persistent-ctas") {
    o.persistent_ctas = static_cast<int>(parse_int(c, name, v[0], 1, INT32_MAX));
  } else if (name == "--fp-fusion") {
    o.fp_fusion = true;
  } else if (name == "--approx-div") {
    o.approx_div = true;
  } else if (name == "--oracle") {
    if (v[0] == "cuda") o.oracle_triton = false;
    else if (v[0] == "triton") o.oracle_triton = true;
    else usage_error(c, "'--oracle' expects cuda or triton, got '" + v[0] + "'");
  } else if (name == "--help" || name == "-h") {
    o.help = true;
  }
}

}  // namespace

CliOptions parse_cli(const std::string& command, const std::vector<std::string>& words) {
  CliOptions o;
  o.command = command;
  o.debug.stop_at_start = command == "debug";
  if (command == "bench") o.backend = Backend::Cuda;
  if (command == "difftest") o.seed = 1;
  bool time_given = false, equal_stores_given = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    bool is_flag = w.size() > 1 && w[0] == '-';
    if (!is_flag) {
      if (command == "tune") o.files.push_back(w);  // --merge takes several
      if (!o.file.empty() && command != "tune") usage_error(command, "unexpected argument '" + w + "' (the file is '" + o.file + "')");
      if (o.file.empty()) o.file = w;
      continue;
    }
    size_t eq = w.rfind("--", 0) == 0 ? w.find('=') : std::string::npos;
    std::string name = eq == std::string::npos ? w : w.substr(0, eq);
    const FlagSpec* f = find_flag(name, command);
    if (!f) usage_error(command, "unknown flag '" + name + "'");
    std::vector<std::string> values;
    if (eq != std::string::npos) {
      if (f->values == 0) usage_error(command, "flag '" + name + "' takes no value");
      values.push_back(w.substr(eq + 1));
    }
    while (static_cast<int>(values.size()) < f->values) {
      if (i + 1 >= words.size()) usage_error(command, "missing value for '" + name + "'");
      values.push_back(words[++i]);
    }
    apply_flag(o, name, values);
    time_given = time_given || name == "--time";
    equal_stores_given = equal_stores_given || name == "--equal-stores";
  }
  if (o.help) return o;
  // DTSIM_EQUAL_STORES=warn|conflict: the default of --equal-stores where the command takes it
  if (const char* env = std::getenv("DTSIM_EQUAL_STORES"); env && *env && !equal_stores_given && find_flag("--equal-stores", command)) {
    RunSettings s;
    std::string err = set_run_option(s, "equal-stores", env);
    if (!err.empty()) usage_error(command, std::string("DTSIM_EQUAL_STORES=") + env + ": " + err);
    o.interp.equal_stores_conflict = s.equal_stores_conflict;
  }
  if (command == "tune" && o.budget_given && time_given) usage_error(command, "give --budget N or --time S, not both");
  if (command == "tune" && !o.merge && o.files.size() > 1)
    usage_error(command, "unexpected argument '" + o.files[1] + "' (the file is '" + o.file + "'; --merge takes several)");
  if (command == "tune" && o.merge && !o.gpus.empty()) usage_error(command, "--merge reads results; drop --gpus");
  if (command == "tune" && o.merge && o.shards > 1) usage_error(command, "--merge reads results; drop --shard");
  if (command == "tune" && !o.gpus.empty() && o.shards > 1) usage_error(command, "--gpus spreads the shards itself; drop --shard");
  if (command == "tune" && !o.gpus.empty() && !o.exchange.empty()) usage_error(command, "--gpus makes its own exchange folder; drop --exchange");
  if (command == "tune" && o.merge && !o.exchange.empty()) usage_error(command, "--merge reads results; drop --exchange");
  if (o.file.empty()) usage_error(command, "no input file");
  if (command == "bench" && o.vs_triton && o.backend != Backend::Cuda)
    usage_error(command, "--vs-triton compares with dtsim's CUDA backend; drop --backend=interp");
  if (command == "viz" && !o.output.empty()) {
    auto ends = [&](const std::string& suf) {
      return o.output.size() > suf.size() && o.output.compare(o.output.size() - suf.size(), suf.size(), suf) == 0;
    };
    if (!ends(".svg") && !ends(".html")) usage_error(command, "'-o' expects a file name ending in .svg or .html, got '" + o.output + "'");
  }
  if (command == "viz" && o.viz_pid && o.viz_loads) usage_error(command, "--pid draws every buffer the instance touches; drop --loads");
  if (command == "emit" && o.emit == EmitWhat::None)
    usage_error(command, "say what to emit: --tile, --ast, --nvvm, --ptx, --triton, --layouts, --plan or --after=STAGE");
  return o;
}

LaunchSpec CliOptions::launch() const {
  LaunchSpec s;
  s.kernel = kernel;
  s.args = args;
  s.ins = ins;
  s.grid = grid;
  s.bufs = bufs;
  // the sanitizer checks the compiler hints of a .py kernel where the interpreter runs it
  const bool interp_run = (command == "run" || command == "debug") && backend == Backend::Interp;
  s.hint_checks = interp_run && interp.sanitize != Sanitize::None;
  // and, asked for with DTSIM_UNDEFINED_LANES=1, that no lane a Triton load leaves undefined reaches a
  // use that matters (--sanitize=all; docs/triton.md "Undefined lanes of masked loads" says why opt-in)
  const char* undef_env = std::getenv("DTSIM_UNDEFINED_LANES");
  s.undefined_lanes = interp_run && interp.sanitize == Sanitize::All && undef_env && std::string(undef_env) == "1";
  // a .py kernel's helper modules: after the file's own folder, PYTHONPATH's folders, as Python
  if (const char* pp = std::getenv("PYTHONPATH")) {
    std::string all = pp;
    for (size_t b = 0; b <= all.size();) {
      size_t e = std::min(all.find(':', b), all.size());
      if (e > b) s.module_roots.push_back(all.substr(b, e - b));
      b = e + 1;
    }
  }
  return s;
}

std::string version_line() { return "dtsim 0.1.0"; }

std::string main_help() {
  return R"(dtsim: run, debug and compile block-level GPU kernels (.tile IR, Decoupled-Triton .dt files and
@triton.jit kernels in .py files)

usage:
  dtsim run FILE.tile|FILE.dt|FILE.py [flags]   run every program instance on the CPU interpreter
                                          (.py: a @triton.jit kernel; see docs/triton.md)
  dtsim debug FILE [flags]                run under the debugger, stopped before the first statement
  dtsim emit --tile|--ast|--nvvm|--ptx|--triton|--layouts|--plan FILE [--arg NAME=VALUE]... [--kernel NAME] [-o OUT]
  dtsim emit --after=STAGE FILE ...       the program after a stage of the pass list
                                          (parse, check, bind-sizes, schedule, lower, verify)
  dtsim bench FILE [--backend=cuda|interp] [--reps N] [--json] [--vs-triton] ...   time kernels
  dtsim tune FILE.dt [--arg v_SIZE=N] [--budget N | --time S] [--backend=cuda|triton] [--csv F] [--json] [--plot F.svg]
                [--shard I/N [--exchange DIR] --out F.json | --gpus all|0,1]   search the schedule space of a .dt file
  dtsim tune --merge A.json B.json ...            one report from the results of shards
  dtsim viz FILE [--arg NAME=VALUE]... [--pid P0[,P1[,P2]]] [-o OUT.svg|OUT.html]   draw who stores what
  dtsim difftest FILE [--trials N] [--seed S] ...   interpreter vs GPU on random sizes and inputs
  dtsim FILE [flags]                      same as 'dtsim run FILE [flags]'
  dtsim --version

'dtsim COMMAND --help' lists the flags of a command.
exit status: 0 ok; 1 a sanitizer finding, runtime fault or failed --check; 2 bad usage or bad input;
130 interrupted (Ctrl-C).
Python scripts that launch Triton kernels: python -m dtsim script.py (docs/python.md).
)";
}

std::string command_help(const std::string& command) {
  if (command == "tune") return tune_help();
  if (command == "difftest") return difftest_help();
  if (command == "bench")
    return R"(usage: dtsim bench FILE.tile|FILE.dt [flags]

Times every kernel of FILE (and, for files with several kernels, the whole module) on the GPU or on
the interpreter, on the same seeded random inputs as 'dtsim run'.

  --backend=cuda|interp  where to run (default cuda). cuda: compiled once, warmed up, each launch
                         timed with CUDA events after writing a buffer of twice the L2 size (so no
                         launch finds its data in L2); median/min/max; GB/s (every buffer a kernel
                         loads counted once, every buffer it stores counted once) against the measured
                         device-to-device copy bandwidth; TFLOP/s of dot (2*M*N*K per dot executed)
                         against a per-architecture peak table. The first launch is checked against
                         the interpreter when all buffers together are at most 64 MiB and the dots
                         at most 4 GFLOP; otherwise the check is skipped with a note.
                         interp: whole-launch wall time and program instances per second.
  --reps N               timed launches (default: enough for about 100 ms; at least 5 on the GPU)
  --json                 one JSON object per line for each kernel (and "<module>") instead of text
  --fp-fusion            let libNVVM contract a multiply and an add into fma.rn, as Triton does by
                         default (enable_fp_fusion; the check against the interpreter keeps its tolerance)
  --approx-div           f32 division as Triton compiles `/`: div.full.f32 (within 2 ulp) instead of
                         IEEE division (the check against the interpreter keeps its tolerance)
  --vs-triton            also emit the program as Triton (emit --triton), time it with
                         triton.testing.do_bench in one python3 call, and print both with their ratio
  --arg NAME=VALUE       set a scalar or constexpr parameter (repeatable)
  --kernel NAME          only this kernel (.tile: kernel name; .dt: output Func name)
  --seed S               seed of the random input data (default 0)
  --threads N            interpreter threads (interp backend; the GPU check uses all cores)
  --sanitize=none|bounds|conflicts|all  interpreter checks while timing (interp backend; default all);
                         with --backend=cuda, bounds times the bounds-checked kernels, conflicts the
                         conflict-checked ones (default unchecked)
  --equal-stores=warn|conflict  interp backend: two instances' plain stores of bit-identical values to
                         one element are a warning (default) or a write-write conflict
                         (default from DTSIM_EQUAL_STORES)
  --max-steps N          interp backend: stop a program instance that runs more than N statements
  --timeout S            interp backend: stop after S seconds of interpreter runs (a located error)
Ctrl-C during interpreter runs stops at the next instance boundary and says where (exit 130).
Without a CUDA driver or GPU, --backend=cuda prints 'SKIPPED: <why>' and exits 0.
exit status: 0 ok (or skipped); 1 the GPU result differs from the interpreter; 2 bad usage or input.
)";
  if (command == "viz")
    return R"(usage: dtsim viz FILE.tile|FILE.dt [flags]

Runs FILE on the interpreter (sanitizer on, continuing past findings) and draws, per buffer a kernel
stores, a grid of its elements coloured by the program instance that stored each one: the colour ramp
and the number on each block give the instance's position in the run order; pid labels where there is
room. 2-D buffers are grids, 1-D buffers a strip; large buffers are drawn in cells of several elements
(at most 64x64 cells). Out-of-bounds lanes are drawn past the buffer's edge, conflicting elements
hatched, uninitialized reads outlined. 3-D grids: one panel per pid2 value.

  -o OUT.svg|OUT.html  write the picture there (atomically; default: SVG on standard output). HTML:
                       the SVG with a tooltip per cell (element, value after the run, pid, run order)
  --pid P0[,P1[,P2]]   draw one instance's footprint instead: elements it loaded and stored,
                       out-of-bounds lanes, and each access's tile shape and masked-off lane count
  --loads              also draw the buffers that are only loaded (coloured by the first loader)
  --arg NAME=VALUE     set a scalar or constexpr parameter (repeatable)
  --in NAME=FILE.npy   input data (default: seeded random data)
  --seed S             seed of the random input data (default 0)
  --kernel NAME        only this kernel (.tile: kernel name; .dt: output Func name)
  --order=sequential|reverse|shuffle:SEED   instance order of the run (default sequential)
  --equal-stores=warn|conflict  two instances' stores of bit-identical values to one element: a
                       warning (default; DTSIM_EQUAL_STORES sets it) or a write-write conflict
  --max-steps N        stop a program instance that runs more than N statements (a located error)
  --timeout S          stop the run after S seconds (a located error)
Ctrl-C stops the run at the next instance boundary, says where, writes no picture (exit 130).
exit status: 0 picture written (findings are drawn, not failures); 2 bad usage or input.
)";
  if (command == "emit")
    return R"(usage: dtsim emit --tile|--ast|--nvvm|--ptx|--triton|--layouts|--plan|--after=STAGE FILE [--arg NAME=VALUE]... [--kernel NAME] [-o OUT]

  --tile              the tile IR (for a .dt file: the IR it lowers to)
  --ast               the checked DT syntax tree (.dt files only)
  --nvvm              NVVM IR for the CUDA backend (constexpr parameters baked in)
  --ptx               PTX compiled by libNVVM
  --triton            a Python module: one @triton.jit function per kernel, launch(), and a main that
                      runs it on dtsim's seeded inputs or .npy files (python3 OUT.py --help)
  --layouts           the CUDA backend's decisions per statement: each tile's layout, vector widths of
                      loads and stores, how reductions and dots run, conversions, pipelined loops
  --plan              the CUDA backend's plan, decided before emission: tile variables' layouts, each
                      dot's engine, each loop's hoisted checks, pipeline or prefetch, pointer axis
                      info, shared-memory allocations and the fallback where they would not fit
  --after=STAGE       the program after one stage of the compile driver's pass list: parse, check,
                      bind-sizes, schedule, lower, verify (docs/architecture.md). Before a .dt file
                      is lowered: its syntax tree (with its sizes; once scheduled, each kernel's
                      schedule); then the tile IR ('# bound:' the parameters' values once bound). A
                      stage the file's language has not got is named in a '# ' line
  --arch sm_XX        GPU target of --nvvm/--ptx/--layouts/--plan (default sm_90; sm_90a enables wgmma)
  --warp-specialize, --no-warp-specialize
                      sm_90a: give a TMA ring that allows it a producer warp, or none (default: as the
                      kernel's schedule options ask; docs/cuda-backend.md)
  --cluster, --no-cluster
                      sm_90a: 2-CTA clusters multicasting a TMA ring's shared operand, or none (default:
                      as the kernel asks)
  --persistent, --no-persistent
                      sm_90a: a persistent grid for a TMA-ring dot kernel, or none (default: as the kernel
                      asks, else none)
  --persistent-ctas N at most N CTAs (--triton: NUM_SMS = N) for a persistent kernel
                      (--[no-]warp-specialize, --[no-]persistent and --persistent-ctas set --triton's
                      module's schedule too: docs/triton.md)
  --fp-fusion         let libNVVM contract a multiply and an add into fma.rn (Triton's enable_fp_fusion)
  --approx-div        f32 division as div.full.f32, as Triton compiles `/` (IEEE division otherwise)
  --sanitize=bounds   --nvvm/--ptx/--layouts/--plan with the bounds checks of `run --backend=cuda` compiled in
  --sanitize=conflicts  ... and the conflict checks (granule and element words, claimed per launch) too
  --arg NAME=VALUE    set a scalar or constexpr parameter (repeatable; .dt: x_SIZE=N lowers for that size)
  --kernel NAME       only this kernel (.tile: kernel name; .dt: output Func name; .py: the kernel)
  --grid, --buf, --in (.py kernels) the launch grid and the pointer arguments' types and shapes, as for run
  -o OUT              write to OUT (atomically) instead of standard output
)";
  std::string head = command == "debug"
                         ? "usage: dtsim debug FILE.tile|FILE.dt|FILE.py [flags]\n\n"
                           "Runs like 'dtsim run' under the debugger and stops before the first statement;\n"
                           "type 'help' at the (dtsim) prompt for the commands.\n\n"
                         : "usage: dtsim run FILE.tile|FILE.dt|FILE.py [flags]\n\n"
                           "Runs every kernel of FILE on the CPU interpreter (default sizes, seeded random inputs)\n"
                           "and prints, per out/inout buffer, its shape, a checksum and its first values.\n\n";
  return head + R"(inputs and outputs:
  --arg NAME=VALUE          set a scalar or constexpr parameter, e.g. --arg n=1000 --arg BLOCK=256
                            (.dt: --arg x_SIZE=N sets dim x's size; the kernel is lowered for it)
  --in NAME=FILE.npy        input data for buffer NAME (shape and dtype must match the parameter;
                            .dt: its shape sets the sizes of the dims that index NAME)
  --out NAME=FILE.npy       write buffer NAME after the run (only when the run had no finding)
  --seed S                  seed of the random input data (default 0)
  --kernel NAME             run only this kernel (.tile: kernel name; .dt: output Func name;
                            .py: the @triton.jit function to launch)
.py (Triton) kernels:
  --grid E0[,E1[,E2]]       the launch grid; expressions of the parameters, e.g. 'cdiv(n, BLOCK)'
  --buf NAME=DTYPE[SHAPE]   a pointer argument without input file, e.g. --buf z_ptr=f32[1000]
                            (--in NAME=FILE.npy gives the type and shape from the file)
execution:
  --threads N               run program instances on N threads (results are identical)
  --sanitize=none|bounds|conflicts|all  checks: out-of-bounds; conflicts: + conflicting instances; all: + uninitialized
                            reads (default all); with --backend=cuda, bounds checks every access on the GPU,
                            conflicts and all also conflicting instances (stores), none nothing; on the
                            interpreter any but none also checks a .py kernel's tl.multiple_of /
                            max_contiguous / max_constancy hints (docs/triton.md "Compiler hints"); all with
                            DTSIM_UNDEFINED_LANES=1 in the environment also reports where the lanes a .py
                            tl.load without other leaves undefined reach a store, an address or a branch
                            (docs/triton.md "Undefined lanes of masked loads")
  --keep-going              report every finding instead of stopping at the first
  --equal-stores=warn|conflict   two instances' plain stores of bit-identical values to one element
                            (a forgotten program id stores every block from every instance): a
                            warning (default) or a write-write conflict as for different values;
                            the default is DTSIM_EQUAL_STORES from the environment (docs/triton.md
                            "Stores of equal values")
  --order=sequential|reverse|shuffle:SEED   order of program instances (finds order dependence)
  --max-steps N             stop a program instance that runs more than N statements (each loop
                            trip runs its body's statements again); the message names the loop
  --timeout S               stop the run after S seconds (checked every few thousand statements)
  --backend=interp|cuda     run on the interpreter (default) or on the GPU
  --warp-specialize, --no-warp-specialize
                            (cuda, sm_90a) a producer warp for TMA rings that allow one, or none (default:
                            as the kernel's schedule options ask; docs/cuda-backend.md)
  --cluster, --no-cluster   (cuda, sm_90a) 2-CTA clusters multicasting a TMA ring's shared operand, or none
                            (default: as the kernel asks)
  --persistent, --no-persistent
                            (cuda, sm_90a) a persistent grid for a TMA-ring dot kernel, or none (default:
                            as the kernel asks, else none)
  --persistent-ctas N       (cuda) launch a persistent kernel with at most N CTAs (each then walks more
                            tiles; wins over the kernel's persistent(N))
  --fp-fusion               (cuda) contract a multiply and an add into fma.rn as Triton does by default
  --approx-div              (cuda) f32 division as div.full.f32, as Triton compiles `/`
                            (results then differ from the interpreter's by that rounding)
  --check                   (.dt) compare every output with the schedule-free reference:
                            max rel err = |got - ref| / max(|ref|, 1); tolerance f32 1e-4, f16 1e-2, bf16 5e-2
debugging:
  --break-if COND           stop in the REPL when COND holds at the start of an instance, e.g. 'pid0>1'
                            (positional form: '=0,>1' means pid0 == 0 && pid1 > 1)
  --print-if COND EXPR[,EXPR...]   print the expressions in every instance where COND holds
  --at LINE                 (after --print-if) print at the statement on LINE instead of the instance end
  --break-at FILE:LINE[ if COND]   stop in the REPL before the statement on LINE
long runs: a progress line goes to stderr when it is a terminal and the run takes over a second;
Ctrl-C stops at the next program instance, says where, writes no --out file and exits 130
(under the debugger it returns to the (dtsim) prompt; a second Ctrl-C ends dtsim at once).
exit status: 0 ok; 1 a finding, runtime fault or failed --check; 2 bad usage or bad input;
130 interrupted.
)";
}

}  // namespace dtsim
