// `dtsim tune`: searches the schedule space of a .dt program (DtSpace.h): enumerates it when it is
// small, else samples it at random and then refines around the best; checks every candidate on the
// interpreter at small sizes against the schedule-free reference (as `run --check`), times the
// survivors on the GPU with `dtsim bench`'s protocol through dtsim's CUDA backend or the emitted
// Triton (the timers: TuneTimers.cpp), and reports the best schedule, CSV/JSON of every candidate and
// an SVG of sorted times (TuneReport.cpp).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "frontend/DtAst.h"
#include "frontend/DtSpace.h"
#include "tools/Commands.h"
#include "driver/Driver.h"
#include "host/Output.h"
#include "ir/Walk.h"
#include "tools/Summary.h"
#include "tools/Tune.h"
#include "tools/Work.h"
#include "triton/TritonEmitter.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

constexpr uint64_t kExhaustiveUnderTime = 100000;  // with --time: enumerate spaces up to this size
constexpr double kCheckMaxIterations = double(1 << 22);  // product of the check sizes of all dims
constexpr size_t kRound = 32;                       // candidates checked, then timed, per round
constexpr int64_t kMaxTileElements = 32768;         // schedules with a larger tile are pruned
constexpr int64_t kMaxPerThread = 256;              // ... or with more elements of a tile per thread
constexpr uint64_t kMaxDrawsPerBudget = 20;         // sampled: draws per unit of budget at most

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

// ---------------------------------------------------------------------------------------------
// Checking a candidate on the interpreter at small sizes
// ---------------------------------------------------------------------------------------------

class Checker {
 public:
  Checker(const DtProgram& base, const DtScheduleSpace& space, const std::map<std::string, std::string>& scalars, uint64_t seed, int threads)
      : base_(base), space_(space), scalars_(scalars), seed_(seed), threads_(threads), root_(dt_size_classes(base)) {}

  // "" when candidate `index` matches the reference at small sizes, else why not. Thread-safe.
  std::string check(uint64_t index) {
    std::map<std::string, std::string> args = small_sizes(index);
    auto q = space_.apply_to(*dt_with_sizes(base_, args), index);
    Program prog = compile_scheduled("", q, scalars_);
    Module& m = prog.module;
    const Bindings& b = prog.bindings;
    Buffers bufs = make_buffers(m, b, seed_);
    std::map<std::string, std::vector<double>> inputs;
    for (const Buffer& buf : bufs.list)
      if (buf.io == BufIO::In || buf.io == BufIO::InOut) inputs[buf.name] = buffer_values(buf);
    InterpOptions io;
    io.sanitize = Sanitize::All;
    io.threads = threads_;
    RunReport rep;
    try {
      rep = run_module(m, b, bufs, io);
    } catch (const RuntimeFault& e) {
      return "runtime fault: " + tune_reason(e.what());
    }
    if (!rep.ok()) return "sanitizer: " + (rep.findings.empty() ? std::string("finding") : tune_reason(rep.findings[0].message));
    std::string key;
    for (auto& [k, v] : args) key += k + "=" + v + " ";
    std::shared_ptr<const std::map<std::string, std::vector<double>>> ref;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = refs_.find(key); it != refs_.end()) ref = it->second;
    }
    if (!ref) {  // computed outside the lock; two threads may both compute one, the same
      ref = std::make_shared<const std::map<std::string, std::vector<double>>>(eval_dt_reference(*q, b, inputs));
      std::lock_guard<std::mutex> lock(mu_);
      refs_.emplace(key, ref);
    }
    for (const auto& [name, values] : *ref) {
      const Buffer* got = bufs.find(name);
      if (!got) return "no output '" + name + "'";
      double err = max_rel_err(*got, values), tol = check_tolerance(got->dtype);
      if (!(err <= tol)) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "wrong result: %s max rel err %.3g > tol %g", name.c_str(), err, tol);
        return msg;
      }
    }
    return "";
  }

 private:
  // Per class of tied dims: past the largest extent the schedule covers (a partial block, a partial
  // group of a split), at most the run's size, at least 3; shrunk while all dims together would
  // exceed kCheckMaxIterations points.
  std::map<std::string, std::string> small_sizes(uint64_t index) {
    std::map<std::string, int64_t> cov = space_.coverage(index), want;
    for (const DtSymbol& s : base_.syms) {
      if (s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar) continue;
      int64_t e = cov.count(s.name) ? cov[s.name] : 1;
      int64_t n = std::min(s.size, std::max<int64_t>(3, e + e / 2 + 1));
      int64_t& w = want[root_.at(s.name)];
      w = std::max(w, n);
    }
    for (;;) {
      double prod = 1;
      auto big = want.begin();
      for (auto it = want.begin(); it != want.end(); ++it) {
        prod *= static_cast<double>(it->second);
        if (it->second > big->second) big = it;
      }
      if (prod <= kCheckMaxIterations || big->second <= 3) break;
      big->second = std::max<int64_t>(3, big->second / 2 + 1);
    }
    std::map<std::string, std::string> args;
    for (const DtSymbol& s : base_.syms)
      if (s.kind == DtSymKind::Var || s.kind == DtSymKind::RVar) args[s.name + "_SIZE"] = std::to_string(want[root_.at(s.name)]);
    return args;
  }

  const DtProgram& base_;
  const DtScheduleSpace& space_;
  std::map<std::string, std::string> scalars_;
  uint64_t seed_;
  int threads_;
  std::map<std::string, std::string> root_;
  std::mutex mu_;  // guards refs_ (candidates are checked on several threads)
  std::map<std::string, std::shared_ptr<const std::map<std::string, std::vector<double>>>> refs_;
};

// ---------------------------------------------------------------------------------------------
// The search
// ---------------------------------------------------------------------------------------------

// A candidate that passed the check, waiting to be timed.
struct Pending {
  size_t cand;  // index into result.candidates
  Module module;
  Bindings bindings;
  std::string triton;
};

class Search {
 public:
  Search(const CliOptions& o, Program& p, const DtScheduleSpace& space, TuneTimer* timer, TuneResult& r)
      : o_(o), p_(p), space_(space), timer_(timer), r_(r), rng_(o.seed * 0x9E3779B97F4A7C15ull + 1),
        checker_(*p.dt, space, scalars(o, p), o.seed, o.interp.threads) {}

  // Exhaustive: every schedule. Sampled with --budget: draws until `budget` candidates were lowered
  // legally (checked, then timed); pruned and illegal draws are counted but use no budget, up to
  // kMaxDrawsPerBudget draws per unit of budget. With --time: until the time is up.
  void run() {
    auto start = start_ = std::chrono::steady_clock::now();
    bool by_time = o_.time_s > 0;
    uint64_t n = space_.size();
    exhaustive_ = by_time ? n <= kExhaustiveUnderTime : n <= o_.budget;
    r_.mode = exhaustive_ ? "exhaustive" : "sampled";
    goal_ = exhaustive_ ? n : (by_time ? 0 : o_.budget);
    uint64_t max_draws = exhaustive_ ? n : std::min<uint64_t>(n, by_time ? n : o_.budget * kMaxDrawsPerBudget);
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    for (;;) {
      uint64_t left = exhaustive_ ? n - seen_.size() : by_time ? kRound : o_.budget - legal_;
      if (left == 0 || seen_.size() >= max_draws || (by_time && elapsed() >= o_.time_s)) break;
      double progress = by_time ? elapsed() / o_.time_s : static_cast<double>(done()) / static_cast<double>(goal_);
      std::vector<std::pair<uint64_t, std::string>> round = next_round(std::min<uint64_t>({kRound, left, max_draws - seen_.size()}), progress);
      if (round.empty()) break;
      double t0 = elapsed();
      std::vector<Pending> pending = evaluate_round(round, [&] { return by_time && elapsed() >= o_.time_s; });
      double t1 = elapsed();
      time_round(pending);
      r_.check_seconds += t1 - t0;
      r_.timing_seconds += elapsed() - t1;
    }
    r_.seconds = elapsed();
    if (timer_) r_.compile_wait_seconds = timer_->compile_wait_seconds();
  }

 private:
  static std::map<std::string, std::string> scalars(const CliOptions& o, const Program& p) {
    std::map<std::string, std::string> s;
    for (const auto& [k, v] : o.args)
      if (!p.size_args.count(k)) s[k] = v;
    return s;
  }

  // The next candidates: in order (exhaustive); else the point nearest the file's own schedule first,
  // at random for the first half of the search or while nothing is timed, then the unseen
  // neighbours of the best timed ones, topped up at random.
  std::vector<std::pair<uint64_t, std::string>> next_round(uint64_t want, double progress) {
    std::vector<std::pair<uint64_t, std::string>> out;
    if (!exhaustive_ && !own_drawn_) {
      own_drawn_ = true;
      int64_t own = space_.own_schedule();
      if (own >= 0 && want > 0 && seen_.insert(static_cast<uint64_t>(own)).second) out.push_back({static_cast<uint64_t>(own), "own"});
    }
    if (exhaustive_) {
      while (out.size() < want && next_ < space_.size()) {
        uint64_t i = next_++;
        if (seen_.insert(i).second) out.push_back({i, "enumerated"});
      }
      return out;
    }
    if (progress >= 0.5 && r_.best()) {
      std::vector<const TuneCandidate*> timed;
      for (const TuneCandidate& c : r_.candidates)
        if (c.ms) timed.push_back(&c);
      std::sort(timed.begin(), timed.end(), [](auto* a, auto* b) { return *a->ms < *b->ms; });
      for (size_t t = 0; t < timed.size() && t < 4 && out.size() < want; ++t)
        for (uint64_t nb : space_.neighbours(timed[t]->index)) {
          if (out.size() >= want) break;
          if (seen_.insert(nb).second) out.push_back({nb, "refined"});
        }
    }
    for (int tries = 0; out.size() < want && tries < 1000; ++tries) {
      uint64_t i = random_point();
      if (seen_.insert(i).second) out.push_back({i, "random"});
    }
    return out;
  }

  // Uniform over fusion configurations, then uniform within the configuration.
  uint64_t random_point() {
    size_t configs = space_.configs();
    size_t c = std::uniform_int_distribution<size_t>(0, configs - 1)(rng_);
    if (config_start_.empty()) {
      // the first index of each configuration, found by bisection over point().config
      for (size_t k = 0; k < configs; ++k) {
        uint64_t lo = 0, hi = space_.size() - 1;
        while (lo < hi) {
          uint64_t mid = lo + (hi - lo) / 2;
          if (space_.point(mid).config < k) lo = mid + 1;
          else hi = mid;
        }
        config_start_.push_back(lo);
      }
      config_start_.push_back(space_.size());
    }
    uint64_t lo = config_start_[c], hi = config_start_[c + 1] - 1;
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }

  // One candidate drawn, lowered, checked (not yet timed). Safe to run on several threads at once.
  struct Outcome {
    bool done = false;
    TuneCandidate c;
    bool lowered = false;  // lowered legally at the requested sizes (uses budget)
    Pending pend;
  };

  Outcome evaluate(uint64_t index, const std::string& phase) {
    Outcome out;
    out.done = true;
    TuneCandidate& c = out.c;
    c.index = index;
    c.phase = phase;
    Pending& pend = out.pend;
    int64_t tile = space_.largest_tile(index);
    if (tile > kMaxTileElements) {
      try {
        (void)space_.apply(index, &c.schedule);  // for the schedule text
      } catch (const UserError&) {
      }
      c.status = "pruned";
      c.reason = "a tile of more than " + std::to_string(kMaxTileElements) + " elements";
      return out;
    }
    try {
      auto q = space_.apply(index, &c.schedule);
      Program prog = compile_scheduled(p_.path, q, scalars(o_, p_));
      pend.module = std::move(prog.module);
      pend.bindings = std::move(prog.bindings);
    } catch (const UserError& e) {
      c.status = "illegal";
      c.reason = tune_reason(e.what());
      return out;
    }
    // A tile spread over few threads is thousands of registers per thread: it spills, and compiling
    // its unrolled code takes minutes. Not worth timing.
    if (per_thread(pend.module) > kMaxPerThread) {
      c.status = "pruned";
      c.reason = "more than " + std::to_string(kMaxPerThread) + " elements of a tile per thread";
      return out;
    }
    if (o_.tune_backend == "triton") {
      try {
        pend.triton = emit_triton(pend.module, pend.bindings, {p_.path, version_line()});
      } catch (const UserError& e) {
        c.status = "no-triton-form";
        c.reason = tune_reason(e.what());
        return out;
      }
    }
    out.lowered = true;
    try {
      std::string why = checker_.check(index);
      c.status = why.empty() ? "checked" : "check-failed";
      c.reason = why;
    } catch (const UserError& e) {
      c.status = "illegal";
      c.reason = "at the check sizes: " + tune_reason(e.what());
    }
    return out;
  }

  // The most elements of one tile value any thread of the module holds (the tile over its CTA's threads).
  static int64_t per_thread(const Module& m) {
    int64_t most = 0;
    for (const Kernel& k : m.kernels) {
      int64_t threads = int64_t(32) * std::max(1, k.num_warps);
      for_each_expr(k, [&](const Expr& e) {
        if (e.type.is_tile()) most = std::max(most, e.type.numel() / threads);
      });
    }
    return most;
  }

  // Evaluates a round on o_.jobs threads; records the outcomes in draw order (so that a seed gives
  // the same result whatever the number of threads) and returns the ones to time. With --time, the
  // draws not started when the time is up are given back.
  std::vector<Pending> evaluate_round(const std::vector<std::pair<uint64_t, std::string>>& round, const std::function<bool()>& time_up) {
    std::vector<Outcome> outs(round.size());
    std::atomic<size_t> next{0}, finished{0};
    std::exception_ptr failure;
    std::mutex mu;
    auto work = [&] {
      for (size_t i; (i = next++) < round.size();) {
        if (time_up()) continue;
        try {
          outs[i] = evaluate(round[i].first, round[i].second);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failure) failure = std::current_exception();
        }
        ++finished;
        std::lock_guard<std::mutex> lock(mu);
        show("checking", finished);
      }
    };
    int jobs = o_.jobs ? o_.jobs : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    size_t n = std::min<size_t>(static_cast<size_t>(std::max(1, jobs)), round.size());
    std::vector<std::thread> threads;
    for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);
    std::vector<Pending> pending;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].done) {
        seen_.erase(round[i].first);
        continue;
      }
      r_.candidates.push_back(outs[i].c);
      if (outs[i].lowered) ++legal_;
      if (outs[i].c.status == "checked" && timer_) {
        outs[i].pend.cand = r_.candidates.size() - 1;
        pending.push_back(std::move(outs[i].pend));
      }
    }
    return pending;
  }

  void time_round(std::vector<Pending>& pending) {
    if (!timer_ || pending.empty()) return;
    std::vector<TuneJob> jobs(pending.size());
    for (size_t i = 0; i < pending.size(); ++i) {
      jobs[i].id = pending[i].cand;
      jobs[i].module = &pending[i].module;
      jobs[i].bindings = &pending[i].bindings;
      jobs[i].triton = pending[i].triton;
    }
    timer_->time(jobs, [&](size_t i) {
      TuneCandidate& c = r_.candidates[jobs[i].id];
      if (jobs[i].ms) {
        c.status = "timed";
        c.ms = jobs[i].ms;
      } else {
        c.status = "gpu-failed";
        c.reason = jobs[i].error;
      }
      show("timing");
    });
  }

  // Progress counts what the goal counts: every draw (exhaustive) or the legal ones (sampled).
  uint64_t done() const { return exhaustive_ ? r_.candidates.size() : legal_; }

  // `extra`: candidates of the round being evaluated that finished (not yet recorded).
  void show(const std::string& what, size_t extra = 0) {
    const TuneCandidate* b = r_.best();
    char best[64] = "-";
    if (b) std::snprintf(best, sizeof best, "%.4g ms", *b->ms);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    size_t d = std::min<size_t>(done() + extra, goal_ ? goal_ : SIZE_MAX);
    std::string label = what + (exhaustive_ ? "" : " (" + std::to_string(r_.candidates.size() + extra) + " drawn)");
    if (o_.time_s > 0) bar_.show(d, 0, el / o_.time_s, label, best);
    else bar_.show(d, goal_, static_cast<double>(d) / static_cast<double>(goal_), label, best);
  }

  const CliOptions& o_;
  Program& p_;
  const DtScheduleSpace& space_;
  TuneTimer* timer_;
  TuneResult& r_;
  std::mt19937_64 rng_;
  Checker checker_;
  bool exhaustive_ = false;
  bool own_drawn_ = false;  // the point nearest the file's schedule was drawn
  uint64_t goal_ = 0, legal_ = 0;  // legal_: candidates lowered at the requested sizes
  uint64_t next_ = 0;
  std::set<uint64_t> seen_;
  std::vector<uint64_t> config_start_;
  ProgressBar bar_;
  std::chrono::steady_clock::time_point start_;
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

Searches the schedule space of FILE.dt (docs/tune.md): fusion choices (fuse_at levels, or
materializing an intermediate), block and tile sizes (powers of two; blocks up to 4096, tiles 16 to
1024), map orders and splits (factors 4 and 8), num_warps (1..16) and num_stages (1..4 for kernels
with rdot, 1 or 3 for the others); schedules with a tile over 32768 elements, or over 256 elements of a tile
per thread, are pruned. The whole space is enumerated when it holds at most --budget schedules; otherwise
half the budget is drawn at random and the rest refines around the fastest so far. Every candidate
is lowered at the requested sizes (illegal ones are counted by reason), checked on the interpreter at
small sizes against the schedule-free reference (as run --check; the sanitizer on), and the ones that
pass are timed on the GPU with dtsim bench's protocol. Without a GPU the timing is skipped (exit 0).

  --arg NAME=VALUE    sizes (--arg x_SIZE=128) and scalars, as for run (repeatable)
  --budget N          schedules to check and time (default 200); pruned and illegal draws are
                      counted but use no budget
  --time S            search for S seconds instead (enumerates spaces of up to 100000 schedules)
  --backend=cuda|triton  time through dtsim's CUDA backend (default) or the emitted Triton module
                      (triton.testing.do_bench in one python3 call per round of 32)
  --seed S            seed of the sampling and of the input data (default 0)
  --csv FILE          every candidate: index,status,phase,ms,gbps,tflops,reason,schedule
  --json              print one JSON object (summary and every candidate) instead of the text report
  --plot FILE.svg     the timed candidates' times, sorted, with a line per reference
  --ref NAME=MS       a reference time to draw and compare with (e.g. --ref torch=0.41; repeatable)
  --arch sm_XX        GPU target (default: the GPU's own)
  --jobs N            candidates lowered and checked at once (default: the cores, at most 16);
                      timing stays one at a time
  --threads N         interpreter threads of each check (default 1)
  --cache-dir DIR     compiled PTX cache (default $XDG_CACHE_HOME/dtsim/ptx or ~/.cache/dtsim/ptx)
exit status: 0 done (timed or timing skipped); 2 bad usage or input.
)";
}

int tune_command(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  return tune_command_with_timer(words, nullptr, out, err);
}

int tune_command_with_timer(const std::vector<std::string>& words, TuneTimer* given, std::ostream& out, std::ostream& err) {
  CliOptions o = parse_cli("tune", words);
  if (o.help) {
    out << tune_help();
    return 0;
  }
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

  TuneResult r;
  r.file = o.file;
  r.sizes = sizes_text(*p.dt);
  r.space = space.size();
  r.configs = space.configs();
  r.backend = o.tune_backend == "triton" ? "the emitted Triton" : "dtsim's CUDA backend";
  for (const Kernel& k : p.module.kernels) {
    KernelWork w = kernel_work(k, base_b);
    r.bytes += w.bytes();
    if (w.has_dot && w.flops_known) r.flops += w.dot_flops;
  }
  r.references = o.refs;

  std::unique_ptr<TuneTimer> owned;
  TuneTimer* timer = given;
  std::string why;
  if (given) {
  } else if (o.tune_backend == "triton") {
    timer = (owned = make_triton_timer(o.seed)).get();
  } else {
    timer = (owned = make_cuda_timer(o.arch, ptx_cache_dir(o), o.seed)).get();
    if (!timer) why = "this dtsim was built without the CUDA backend";
  }
  if (timer && !timer->available(&why)) timer = nullptr;
  if (timer) r.device = timer->device();
  else r.timing = "skipped: " + why;

  if (!o.json) {
    out << "tune " << o.file << " [" << r.sizes << "]: " << r.space << " schedules in the space, " << space.describe();
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
      timer->time(own, [](size_t) {});
    } catch (const UserError& e) {
      own[0].error = tune_reason(e.what());
    }
    if (own[0].ms) r.references.insert(r.references.begin(), TuneReference{"file's schedule", *own[0].ms});
    else if (!o.json) err << "note: the file's own schedule could not be timed: " << own[0].error << "\n";
  }

  Search(o, p, space, timer, r).run();
#ifdef DTSIM_HAVE_CUDA
  PtxCacheStats st = ptx_cache_stats();
  r.ptx_cache_hits = st.hits;
  r.ptx_cache_misses = st.misses;
#endif

  // Files first (each written whole or not at all), then the report.
  std::string svg = o.plot.empty() ? "" : (r.best() ? tune_svg(r) : "");
  if (!o.csv.empty()) write_output_file(o.csv, "--csv", tune_csv(r));
  if (!svg.empty()) write_output_file(o.plot, "--plot", svg);
  if (o.json) out << tune_json(r);
  else out << tune_text(r);
  if (!o.plot.empty() && svg.empty()) err << "note: --plot: no schedule was timed (timing " << r.timing << "), so no plot was written\n";
  return 0;
}

}  // namespace dtsim
