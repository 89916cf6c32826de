// `dtsim tune`: the flags, the timer (dtsim's CUDA backend or the emitted Triton: TuneTimers.cpp),
// the file's own schedule timed as the first reference, the search (src/tune/Search.cpp), and what is
// printed and written (src/tune/Report.cpp); --merge reads shard results back, --gpus runs one worker
// process per GPU (src/tune/Workers.cpp) and merges what they write.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "frontend/DtAst.h"
#include "frontend/DtSpace.h"
#include "tools/Commands.h"
#include "driver/Driver.h"
#include "ir/Analysis.h"
#include "host/Output.h"
#include "host/Text.h"
#include "tune/Tune.h"
#include "tools/Work.h"
#include "triton/TritonEmitter.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// The folder of the PTX cache: --cache-dir, else $XDG_CACHE_HOME/dtsim/ptx, else ~/.cache/dtsim/ptx.
std::string ptx_cache_dir(const CliOptions& o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/dtsim/ptx";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/dtsim/ptx";
  return "";
}

// A progress line on stderr, only when it is a terminal: done/total (total 0: a time limit), the
// share done (of the candidates, or of the time), the best so far, the estimated time left.
struct ProgressBar {
  bool on = isatty(2) != 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void show(size_t done, size_t total, double frac, const std::string& what, const std::string& best) {
    if (!on) return;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    frac = std::clamp(frac, 0.0, 1.0);
    int width = 24, fill = static_cast<int>(frac * width);
    std::string bar = "[" + std::string(static_cast<size_t>(fill), '#') + std::string(static_cast<size_t>(width - fill), '.') + "]";
    char eta[32] = "?";
    if (frac > 0) std::snprintf(eta, sizeof eta, "%.0fs", el / frac - el);
    std::cerr << "\r\033[Ktune " << bar << " " << done;
    if (total) std::cerr << "/" << total;
    std::cerr << " " << what << "; best " << best << "; ETA " << eta << std::flush;
  }
  ~ProgressBar() {
    if (on) std::cerr << "\r\033[K" << std::flush;
  }
};

std::string sizes_text(const DtProgram& p) {
  std::string s;
  for (const DtSymbol& sym : p.syms)
    if (sym.kind == DtSymKind::Var || sym.kind == DtSymKind::RVar) s += (s.empty() ? "" : " ") + sym.name + "=" + std::to_string(sym.size);
  return s;
}

}  // namespace

std::string tune_help() {
  return R"(usage: dtsim tune FILE.dt [flags]
       dtsim tune --merge A.json B.json ... [--json] [--csv F] [--plot F.svg]

Searches the schedule space of FILE.dt (docs/tune.md): fusion choices (fuse_at levels, or
materializing an intermediate), block and tile sizes (powers of two; blocks up to 4096, tiles 16 to
1024, or to 16384 for a row a kernel reduces), map orders and splits (factors 4 and 8), num_warps (1..32) and num_stages (1..4 for kernels
with rdot, 1 or 3 for the others); schedules with a tile over 32768 elements, or over 256 elements of a tile
per thread, are pruned. The whole space is enumerated when it holds at most --budget schedules; otherwise
the file's own schedule and the seeds (schedules the backends run well) come first, then draws at random
until half the budget is spent, then refinement around the fastest so far. Every candidate
is lowered at the requested sizes (illegal ones are counted by reason), checked on the interpreter at
small sizes against the schedule-free reference (as run --check; the sanitizer on), and the ones that
pass are timed on the GPU with dtsim bench's protocol in a shorter window (--timed-ms). Without a GPU
the timing is skipped (exit 0).

  --arg NAME=VALUE    sizes (--arg x_SIZE=128) and scalars, as for run (repeatable)
  --budget N          schedules to check and time (default 200); pruned and illegal draws are
                      counted but use no budget
  --time S            search for S seconds instead (enumerates spaces of up to 100000 schedules)
  --backend=cuda|triton  time through dtsim's CUDA backend (default) or the emitted Triton module
                      (triton.testing.do_bench in one python3 call per round of 32)
  --seed S            seed of the sampling and of the input data (default 0)
  --shard I/N         search shard I of N (0 <= I < N): the draws at positions p with p mod N == I
                      of the same sequence; the N shards together are the whole search
  --exchange DIR      the shards, running at the same time, swap each round's outcomes through the
                      folder DIR (one empty folder per search, shared by all shards): together they
                      make the unsharded search (same candidates, same best), refining around the
                      global fastest, and check and time each round's draws from one queue (a
                      draw to whichever shard claims it first); without it each shard refines
                      around its own
  --exchange-timeout S  a shard waiting for the others' reports gives up after S seconds in which
                      none arrived (default 600)
  --timed-ms MS       timed runs of each candidate: about MS milliseconds of them, at least 10
                      (a kernel slower than MS/10: 3 or MS worth) (default 25; dtsim bench: 100)
  --out FILE          also write the JSON result to FILE (what --merge reads)
  --write-best F.dt   write the searched file with its schedule calls replaced by the fastest
                      timed schedule's, under a "# dtsim tune:" comment with the sizes, device,
                      date and times (F.dt may be the file itself; also after --merge and --gpus)
  --merge             the files named are JSON results of shards of one search: report them as one
  --gpus all|LIST     one timing worker process per GPU (0,1: ordinals; 0,0: two on GPU 0; cpu: a
                      worker that only checks), each searching one shard, exchanging each round's
                      outcomes (the unsharded search, faster) and timing each round's
                      candidates from one queue; their results merged
  --check-only        lower and check the candidates, time none
  --compile-only      as --check-only, and compile every candidate lowered legally as a CUDA
                      search does beside its check (NVVM IR, libNVVM, ptxas into the cache; no GPU
                      needed): what the compiles cost, measured without a GPU
  --no-overlap        time each round before checking the next (by default the GPU times a round
                      while the next is checked; the same search either way)
  --csv FILE          every candidate: index,status,phase,ms,gbps,tflops,reason,schedule
  --json              print one JSON object (summary and every candidate) instead of the text report
  --plot FILE.svg     the timed candidates' times, sorted, with a line per reference
  --ref NAME=MS       a reference time to draw and compare with (e.g. --ref torch=0.41; repeatable)
  --arch sm_XX        GPU target (default: the GPU's own)
  --jobs N            candidates lowered and checked at once (default: the cores, at most 16; with
                      --gpus, the cores shared out among the workers, at most 16 each); timing
                      stays one at a time
  --threads N         interpreter threads of each check (default 1)
  --cache-dir DIR     compiled PTX cache (default $XDG_CACHE_HOME/dtsim/ptx or ~/.cache/dtsim/ptx)
exit status: 0 done (timed or timing skipped); 2 bad usage or input.
)";
}

int tune_command(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  return tune_command_with_timer(words, nullptr, out, err);
}

namespace {

// --write-best FILE.dt: the searched file with the fastest schedule, checked by compiling it at the
// searched sizes before it is written.
std::string best_source(const CliOptions& o, const TuneResult& r) {
  std::optional<std::string> text = read_whole_file(r.file);
  if (!text) throw UserError("--write-best: cannot read the searched file '" + r.file + "'");
  LaunchSpec spec;
  std::istringstream sizes(r.sizes);
  for (std::string kv; sizes >> kv;) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) spec.args[kv.substr(0, eq) + "_SIZE"] = kv.substr(eq + 1);
  }
  Program p = compile(Source{r.file, FileKind::Dt, *text}, spec);
  std::vector<SourceLoc> calls;
  for (const DtSchedCall& c : p.dt->calls) calls.push_back(c.loc);
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string best = tune_best_source(*text, calls, r, date);
  try {
    (void)compile(Source{o.write_best, FileKind::Dt, best}, spec);
  } catch (const UserError& e) {
    throw UserError(std::string("--write-best: the rewritten file does not compile (nothing written): ") + e.what());
  }
  return best;
}

// Files first (each written whole or not at all), then the report.
void write_results(const CliOptions& o, const TuneResult& r, std::ostream& out, std::ostream& err) {
  std::string best = o.write_best.empty() ? "" : best_source(o, r);  // its errors come before any file is written
  std::string svg = o.plot.empty() ? "" : (r.best() ? tune_svg(r) : "");
  std::string json = tune_json(r);
  if (!o.csv.empty()) write_output_file(o.csv, "--csv", tune_csv(r));
  if (!svg.empty()) write_output_file(o.plot, "--plot", svg);
  if (!o.tune_out.empty()) write_output_file(o.tune_out, "--out", json);
  if (!best.empty()) write_output_file(o.write_best, "--write-best", best);
  if (o.json) out << json;
  else out << tune_text(r);
  if (!o.plot.empty() && svg.empty()) err << "note: --plot: no schedule was timed (timing " << r.timing << "), so no plot was written\n";
}

std::string read_text_file(const std::string& path) {
  if (std::optional<std::string> text = read_whole_file(path)) return *text;
  throw UserError("cannot open '" + path + "'");
}

// `dtsim tune --merge A.json B.json ...`
int merge_command(const CliOptions& o, std::ostream& out, std::ostream& err) {
  std::vector<TuneResult> parts;
  for (const std::string& f : o.files) parts.push_back(tune_result_from_json(read_text_file(f), f));
  std::string note;
  TuneResult r = merge_tune_results(parts, &note);
  r.references.insert(r.references.end(), o.refs.begin(), o.refs.end());
  if (!o.json) out << "tune " << r.file << " [" << r.sizes << "]: " << r.space << " schedules in the space; merged " << parts.size() << " result(s)\n";
  if (!note.empty()) err << "note: " << note << "\n";
  write_results(o, r, out, err);
  return 0;
}

// The words of a worker: the command's own, without what the parent does itself (--gpus, --json,
// --csv, --plot, --out, --write-best, --jobs; --exchange is refused with --gpus).
std::vector<std::string> worker_words(const std::vector<std::string>& words) {
  std::vector<std::string> w;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& x = words[i];
    bool with_value = x == "--gpus" || x == "--csv" || x == "--plot" || x == "--out" || x == "--jobs" || x == "--write-best";
    bool joined = x.rfind("--gpus=", 0) == 0 || x.rfind("--csv=", 0) == 0 || x.rfind("--plot=", 0) == 0 ||
                  x.rfind("--out=", 0) == 0 || x.rfind("--jobs=", 0) == 0 || x.rfind("--write-best=", 0) == 0;
    if (with_value) ++i;
    else if (!joined && x != "--json") w.push_back(x);
  }
  return w;
}

// `dtsim tune FILE --gpus LIST`: one worker process per entry, each searching one shard.
int gpus_command(const CliOptions& o, const std::vector<std::string>& words, const Program& p, std::ostream& out, std::ostream& err) {
  std::vector<std::string> gpus = o.gpus;
  std::string visible = std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "";
  if (gpus.size() == 1 && gpus[0] == "all") {
    std::string why = "this dtsim was built without the CUDA backend";
    int n = 0;
#ifdef DTSIM_HAVE_CUDA
    n = cuda_device_count(&why);
#endif
    if (n <= 0)
      throw UserError("--gpus all: " + why + " (--gpus cpu,cpu runs workers that only check, on the CPU)");
    gpus.clear();
    std::vector<std::string> listed;  // the ordinals the driver sees map to CUDA_VISIBLE_DEVICES' entries
    for (size_t at = 0; !visible.empty() && at != std::string::npos;) {
      size_t comma = visible.find(',', at);
      listed.push_back(visible.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      at = comma == std::string::npos ? comma : comma + 1;
    }
    for (int i = 0; i < n; ++i) gpus.push_back(static_cast<size_t>(i) < listed.size() ? listed[static_cast<size_t>(i)] : std::to_string(i));
  }
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) throw UserError("--gpus: cannot find this program's path (/proc/self/exe)");
  exe[len] = 0;
  char tmpl[] = "/tmp/dtsim-tune-XXXXXX";
  if (!mkdtemp(tmpl)) throw UserError("--gpus: cannot make a temporary folder in /tmp");
  std::filesystem::path dir = tmpl;
  struct RemoveDir {  // the workers' results and logs go with the folder, whatever happens
    std::filesystem::path p;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  } remove_dir{dir};
  size_t n = gpus.size();
  // The machine's cores shared out among the workers, then at most 16 each (as one search's default).
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int jobs = o.jobs ? o.jobs : std::clamp(cores / static_cast<int>(n), 1, 16);
  std::string exchange = (dir / "exchange").string();
  std::vector<TuneWorker> ws(n);
  std::string names;
  for (size_t i = 0; i < n; ++i) {
    TuneWorker& w = ws[i];
    bool cpu = gpus[i] == "cpu";
    w.label = cpu ? "cpu" : "GPU " + gpus[i];
    names += (i ? ", " : "") + w.label;
    w.argv = {exe, "tune"};
    for (const std::string& x : worker_words(words)) w.argv.push_back(x);
    w.argv.insert(w.argv.end(), {"--shard", std::to_string(i) + "/" + std::to_string(n), "--out", (dir / (std::to_string(i) + ".json")).string(),
                                 "--jobs", std::to_string(jobs), "--exchange", exchange});
    if (cpu) w.argv.push_back("--check-only");
    else w.env.push_back("CUDA_VISIBLE_DEVICES=" + gpus[i]);
    w.log = (dir / (std::to_string(i) + ".log")).string();
  }
  if (isatty(2)) std::cerr << "tune: " << n << " worker(s) searching (" << names << ")..." << std::flush;
  auto t0 = std::chrono::steady_clock::now();
  run_tune_workers(ws);
  if (isatty(2)) std::cerr << "\r\033[K" << std::flush;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<TuneResult> parts;
  std::string failure;
  // The worker that failed first (run_tune_workers stopped the others) tells why.
  for (size_t i = 0; i < n; ++i)
    if (ws[i].status != 0 && !ws[i].stopped) {
      std::string log = read_text_file(ws[i].log), last;
      std::istringstream lines(log);
      for (std::string l; std::getline(lines, l);)
        if (!l.empty()) last = l;
      throw UserError("--gpus: the worker on " + ws[i].label + " failed (" +
                      (ws[i].status >= 0 ? "exit " + std::to_string(ws[i].status) : std::string("killed by a signal")) + "): " +
                      (last.empty() ? "(no output)" : last));
    }
  for (size_t i = 0; i < n && failure.empty(); ++i) {
    std::string path = (dir / (std::to_string(i) + ".json")).string();
    parts.push_back(tune_result_from_json(read_text_file(path), path));
    // A worker given a GPU that could not time would make a search that looks spread but timed nothing.
    if (gpus[i] != "cpu" && !o.check_only && parts.back().timing != "done")
      failure = "--gpus: the worker on " + ws[i].label + " could not time: " + parts.back().timing.substr(parts.back().timing.find(':') + 2);
  }
  if (!failure.empty()) throw UserError(failure);
  std::string note;
  TuneResult r = merge_tune_results(parts, &note);  // the workers had the --ref values: they are among the references
  r.seconds = wall;
  if (!o.json) out << "tune " << o.file << " [" << sizes_text(*p.dt) << "]: " << n << " worker(s) (" << names << "), shard i/" << n << " each\n";
  if (!note.empty()) err << "note: " << note << "\n";
  write_results(o, r, out, err);
  return 0;
}

}  // namespace

int tune_command_with_timer(const std::vector<std::string>& words, TuneTimer* given, std::ostream& out, std::ostream& err) {
  CliOptions o = parse_cli("tune", words);
  if (o.help) {
    out << tune_help();
    return 0;
  }
  if (o.merge) return merge_command(o, out, err);
  if (ends_with(o.file, ".tile"))
    throw UserError(o.file + ": error: a .tile kernel has its schedule written into it, so there is nothing to search; "
                    "dtsim tune searches the schedules of .dt files");
  LaunchSpec spec;
  spec.args = o.args;
  Program p = compile(o.source(), spec);
  const Bindings& base_b = p.bindings;
  check_memory_budget(p.module, base_b);
  DtScheduleSpace space(*p.dt);
  if (space.size() <= 1) {
    SourceLoc loc{p.dt->file_id, 1, 1};
    for (const DtSchedCall& c : p.dt->calls)
      if (c.prim == "compile" || c.prim == "compile_to_kernel") loc = c.loc;
    throw UserError(loc, "the schedule space of " + o.file + " has a single schedule: nothing to search");
  }
  if (!o.gpus.empty()) return gpus_command(o, words, p, out, err);

  TuneResult r;
  r.file = o.file;
  r.sizes = sizes_text(*p.dt);
  r.space = space.size();
  r.configs = space.configs();
  r.backend = o.tune_backend == "triton" ? "the emitted Triton" : "dtsim's CUDA backend";
  r.seed = o.seed;
  r.budget = o.time_s > 0 ? 0 : o.budget;
  r.time_s = o.time_s;
  r.shard = o.shard;
  r.shards = o.shards;
  // GB/s counts the program's own data: each input read once and each output written once, whatever
  // the schedule (the file's may materialize an intermediate and re-read an input, a candidate may
  // fuse it), so that every candidate's figure is on one footing.
  std::map<std::string, int64_t> reads, writes;
  for (const Kernel& k : p.module.kernels) {
    for (const BufferUse& u : kernel_buffers(k, base_b)) {
      if (k.params[u.param].io == BufIO::Scratch) continue;
      if (u.read) reads[u.name] = u.bytes;
      if (u.written) writes[u.name] = u.bytes;
    }
    KernelWork w = kernel_work(k, base_b);
    if (w.has_dot && w.flops_known) r.flops += w.dot_flops;
  }
  for (const auto& [name, bytes] : reads) r.bytes += bytes;
  for (const auto& [name, bytes] : writes) r.bytes += bytes;
  r.references = o.refs;

  std::unique_ptr<TuneTimer> owned;
  TuneTimer* timer = given;
  std::string why;
  std::unique_ptr<TuneTimer> compiler;  // --compile-only: the CUDA timer's prepare(), never its time()
  if (o.compile_only) {
    if (o.tune_backend == "triton") throw UserError("--compile-only compiles through dtsim's CUDA backend: it takes no --backend=triton");
    timer = nullptr;
    why = "--compile-only";
    compiler = make_cuda_timer(o.arch, ptx_cache_dir(o), o.seed, o.timed_ms);
    if (!compiler) throw UserError("--compile-only: this dtsim was built without the CUDA backend");
  } else if (o.check_only) {
    timer = nullptr;
    why = "--check-only";
  } else if (given) {
  } else if (o.tune_backend == "triton") {
    timer = (owned = make_triton_timer(o.seed)).get();
  } else {
    timer = (owned = make_cuda_timer(o.arch, ptx_cache_dir(o), o.seed, o.timed_ms)).get();
    if (!timer) why = "this dtsim was built without the CUDA backend";
  }
  if (timer && !timer->available(&why)) timer = nullptr;
  if (!timer && !o.write_best.empty())  // said before searching, not after
    throw UserError("--write-best needs timed schedules, and timing is skipped here: " + why);
  if (timer) r.device = timer->device();
  else r.timing = "skipped: " + why;

  if (!o.json) {
    out << "tune " << o.file << " [" << r.sizes << "]: " << r.space << " schedules in the space, " << space.describe();
    if (o.shards > 1) out << "shard " << o.shard << "/" << o.shards << " of the search\n";
    out << (timer ? "timing through " + timer->name() + " on " + r.device : "timing skipped: " + why) << "\n";
    out.flush();
  }

  // The file's own schedule, timed the same way, is the first reference.
  if (timer) {
    std::vector<TuneJob> own(1);
    own[0].module = &p.module;
    own[0].bindings = &base_b;
    try {
      if (o.tune_backend == "triton") own[0].triton = emit_triton(p.module, base_b, {p.path, version_line()});
      timer->time_all(own, [](size_t) {});
    } catch (const UserError& e) {
      own[0].error = tune_reason(e.what());
    }
    if (own[0].ms) r.references.insert(r.references.begin(), TuneReference{"file's schedule", *own[0].ms});
    else if (!o.json) err << "note: the file's own schedule could not be timed: " << own[0].error << "\n";
  }

  TuneSearch search;
  search.program = &p;
  search.space = &space;
  search.timer = timer;
  search.compiler = compiler.get();
  TuneOptions& to = search.options;
  to.budget = o.budget;
  to.time_s = o.time_s;
  to.seed = o.seed;
  to.jobs = o.jobs;
  to.threads = o.interp.threads;
  to.backend = o.tune_backend;
  to.version = version_line();
  to.shard = o.shard;
  to.shards = o.shards;
  to.exchange = o.exchange;
  to.exchange_timeout_s = o.exchange_timeout_s;
  to.overlap = o.tune_overlap;
  for (const auto& [k, v] : o.args)
    if (!p.size_args.count(k)) to.scalars[k] = v;
  {
    ProgressBar bar;
    run_tune_search(search, r, [&](size_t done, size_t total, double frac, const std::string& what, const std::string& best) {
      bar.show(done, total, frac, what, best);
    });
  }
  r.worker_seconds = r.seconds;
#ifdef DTSIM_HAVE_CUDA
  PtxCacheStats st = ptx_cache_stats();
  r.ptx_cache_hits = st.hits;
  r.ptx_cache_misses = st.misses;
#endif
  write_results(o, r, out, err);
  return 0;
}

}  // namespace dtsim
