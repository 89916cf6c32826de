// The schedule search of `dtsim tune` (Tune.h, docs/tune.md): enumerates the space when it is small,
// else draws the point nearest the file's own schedule, the space's seeds, then at random, and refines
// around the fastest once half the budget is spent; lowers every candidate at the requested sizes,
// checks it on the interpreter at small sizes against the schedule-free reference (as `run --check`),
// and times the survivors through the TuneTimer in rounds, each on a thread of its own while the next
// round is drawn and checked (the same search as one round after the other). A shard (--shard I/N) takes every N-th
// draw of the same sequence; with --exchange the shards swap each round's outcomes (Exchange.h) and
// together make the unsharded search.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "driver/Driver.h"
#include "driver/Summary.h"
#include "frontend/DtAst.h"
#include "frontend/DtSpace.h"
#include "interp/Interp.h"
#include "ir/Walk.h"
#include "triton/TritonEmitter.h"
#include "tune/Exchange.h"
#include "tune/Tune.h"

namespace dtsim {

namespace {

constexpr uint64_t kExhaustiveUnderTime = 100000;  // with --time: enumerate spaces up to this size
constexpr double kCheckMaxIterations = double(1 << 22);  // product of the check sizes of all dims
constexpr size_t kRound = 32;                       // candidates checked, then timed, per round
constexpr int64_t kMaxTileElements = 32768;         // schedules with a larger tile are pruned
constexpr int64_t kMaxPerThread = 256;              // ... or with more elements of a tile per thread
constexpr uint64_t kMaxDrawsPerBudget = 20;         // sampled: draws per unit of budget at most

// ---------------------------------------------------------------------------------------------
// Checking a candidate on the interpreter at small sizes
// ---------------------------------------------------------------------------------------------

class Checker {
 public:
  Checker(const DtProgram& base, const DtScheduleSpace& space, const std::map<std::string, std::string>& scalars, uint64_t seed, int threads)
      : base_(base), space_(space), scalars_(scalars), seed_(seed), threads_(threads), root_(dt_size_classes(base)) {}

  // "" when candidate `index` matches the reference at small sizes, else why not. Thread-safe.
  std::string check(uint64_t index, int threads) {
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
    io.threads = std::max(threads_, threads);
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

  // The points of candidate `index`'s check (the product of its check sizes): what its check costs,
  // roughly (the round takes the costliest first).
  double points(uint64_t index) {
    double p = 1;
    for (const auto& [name, size] : small_sizes(index)) p *= std::stod(size);
    return p;
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
  std::shared_future<void> compiled;  // the compile ahead for the timer (valid once started)
};

// One draw of the search: the schedule's index, its phase and its position in the draw sequence
// (shards take the positions that are theirs).
struct Draw {
  uint64_t index;
  std::string phase;
  uint64_t pos;
};

using ShowFn = std::function<void(size_t, size_t, double, const std::string&, const std::string&)>;

class Search {
 public:
  Search(const TuneSearch& s, TuneResult& r, const ShowFn& show)
      : o_(s.options), p_(*s.program), space_(*s.space), timer_(s.timer), compiler_(s.timer ? s.timer : s.compiler), r_(r), show_(show),
        rng_(s.options.seed * 0x9E3779B97F4A7C15ull + 1), checker_(*s.program->dt, *s.space, s.options.scalars, s.options.seed, s.options.threads) {}

  // Exhaustive: every schedule (of the shard: index mod N == I). Sampled with --budget: draws until
  // `budget` candidates were lowered legally (checked, then timed); pruned and illegal draws are
  // counted but use no budget, up to kMaxDrawsPerBudget draws per unit of budget. With --time: until
  // the time is up.
  //
  // Shards (--shard I/N): every shard draws the same sequence (the seed decides it) and takes the
  // draws at positions p with p mod N == I.
  //
  // With --exchange, the shards draw the rounds of the unsharded search (kRound draws each), check
  // its draws and then time those that passed from one queue each (a draw goes to the shard that
  // claims it first: Exchange.h), and swap the outcomes through the folder twice: after the check
  // (status, lowered) and after the timing (times): every shard knows every outcome, so all count the budget, refine around the global
  // fastest and (with --time) stop after the same round, as the unsharded search does; their union
  // is the unsharded search.
  //
  // Without it, with a budget, each also lowers the others' draws (cheap: no check, no timing) so
  // that all shards count the budget alike and stop where the whole search stops. Their union is
  // then the whole search, as long as no draw depends on a time. Refinement does: once a sharded
  // search with a timer refines, it refines around its own fastest with its share of the budget
  // left, every draw its own.
  //
  // Round k is timed while round k+1 is drawn and checked; round k's times reach the search after
  // round k+1's check, with or without overlap (o_.overlap), so the draws never depend on how long
  // the timing took.
  void run() {
    start_ = std::chrono::steady_clock::now();
    if (!o_.exchange.empty()) {
      exchange_.emplace(o_.exchange, o_.shard, o_.shards, identity(), o_.exchange_timeout_s);
      exchange_->start();
    }
    try {
      search();
    } catch (const std::exception& e) {
      if (exchange_) exchange_->fail(e.what());
      throw;
    }
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

  void search() {
    bool by_time = o_.time_s > 0;
    uint64_t n = space_.size();
    exhaustive_ = by_time ? n <= kExhaustiveUnderTime : n <= o_.budget;
    r_.mode = exhaustive_ ? "exhaustive" : "sampled";
    if (exhaustive_) goal_ = exchange_ ? n : n / o_.shards + (o_.shard < n % o_.shards ? 1 : 0);
    else goal_ = by_time ? 0 : o_.budget;
    uint64_t max_draws = exhaustive_ ? n : std::min<uint64_t>(n, by_time ? n : o_.budget * kMaxDrawsPerBudget);
    uint64_t width = exchange_ ? 1 : o_.shards;  // a round: kRound draws per shard, or the unsharded round
    for (;;) {
      // exchanging shards decide on the latest time any of them reported, so that they stop together
      double now = exchange_ ? shared_elapsed_ : elapsed();
      uint64_t left = exhaustive_ ? n - next_ : by_time ? kRound * width : goal_ - legal_;
      if (left == 0 || (!exhaustive_ && seen_.size() >= max_draws) || (by_time && now >= o_.time_s)) break;
      double progress = by_time ? now / o_.time_s : static_cast<double>(legal_) / static_cast<double>(o_.budget);
      // A round is drawn and checked while the GPU times the round before it; that round's times are
      // not known yet. A round that does not refine depends on the checks alone. A refining round
      // draws around the fastest of the rounds before the one on the GPU; only when none of those
      // was timed (the first rounds) does it wait for the times of every earlier round. Whether a
      // round refines is itself decided from the checks.
      bool refine = !exhaustive_ && (timer_ || exchange_) && progress >= 0.5 && any_passed_check();
      if (refine && flight_ && !any_timed()) {
        std::unique_ptr<Flight> f = std::move(flight_);
        join_timing(*f);
        apply_times(*f);
      }
      if (!exhaustive_ && !local_ && !exchange_ && o_.shards > 1 && refine && r_.best()) {
        // Refinement is this shard's own from here: its share of the budget left.
        local_ = true;
        if (!by_time) {
          uint64_t rest = o_.budget - legal_;
          goal_ = legal_ + rest / o_.shards + (o_.shard < rest % o_.shards ? 1 : 0);
          continue;
        }
      }
      update_shown();
      uint64_t round_size = local_ ? kRound : kRound * width;
      std::vector<Draw> round = next_round(std::min<uint64_t>({round_size, left, exhaustive_ ? left : max_draws - seen_.size()}), refine);
      if (round.empty()) break;
      double t0 = elapsed();
      std::vector<Slot> slots;
      std::vector<Pending> pending = evaluate_round(round, [&] { return by_time && elapsed() >= o_.time_s; }, slots);
      double t1 = elapsed();
      r_.check_seconds += t1 - t0;
      check_spans_.push_back({t0, t1});
      if (exchange_) swap_checks(round, slots);
      update_shown();
      // one round on the GPU at a time: the previous one ends (its times become known) before this one starts
      std::unique_ptr<Flight> previous = std::move(flight_);
      if (previous) join_timing(*previous);
      flight_ = start_timing(std::move(pending), round, slots);
      if (previous) apply_times(*previous);
      ++r_.rounds;
    }
    if (flight_) {
      std::unique_ptr<Flight> last = std::move(flight_);
      join_timing(*last);
      apply_times(*last);
    }
    for (const std::shared_future<void>& c : compiles_) c.wait();  // --compile-only: its compiles are the search's
    r_.seconds = elapsed();
    if (timer_) {
      r_.compile_wait_seconds = timer_->compile_wait_seconds();
      r_.gpu_timed = {timed_here_};
    }
  }

  // A draw this shard evaluates: exchanging, one it claimed at the check; else its position's share.
  bool mine(uint64_t pos) const {
    if (exchange_) return checked_here_.count(pos) > 0;
    return local_ || pos % o_.shards == o_.shard;
  }

  // What the shards of one search must agree on (an exchange report of another search is an error).
  std::string identity() const {
    char t[32];
    std::snprintf(t, sizeof t, "%g", o_.time_s);
    return "space=" + std::to_string(space_.size()) + " seed=" + std::to_string(o_.seed) + " budget=" + std::to_string(o_.time_s > 0 ? 0 : o_.budget) +
           " time=" + t + " backend=" + o_.backend;
  }

  // The candidates the draws build on: every shard's when exchanging, else this shard's.
  const std::vector<TuneCandidate>& known() const { return exchange_ ? all_ : r_.candidates; }
  bool any_timed() const {
    const std::vector<TuneCandidate>& k = known();
    return std::any_of(k.begin(), k.end(), [](const TuneCandidate& c) { return c.ms.has_value(); });
  }
  // Whether a known candidate passed the check (to be timed, timed, or failed on the GPU): known
  // when the round is checked, before it is timed.
  bool any_passed_check() const {
    const std::vector<TuneCandidate>& k = known();
    return std::any_of(k.begin(), k.end(), [](const TuneCandidate& c) { return c.status == "checked" || c.status == "timed" || c.status == "gpu-failed"; });
  }

  // The next candidates: in order (exhaustive: the shard's indices); else the point nearest the
  // file's own schedule first, then the space's seeds (schedules the backends are known to run
  // well), at random for the first half of the search or while nothing passed the check, then
  // (`refine`: every earlier round timed) the unseen neighbours of the best timed ones, topped up at
  // random.
  std::vector<Draw> next_round(uint64_t want, bool refine) {
    std::vector<Draw> out;
    if (exhaustive_) {
      while (out.size() < want && next_ < space_.size()) {
        uint64_t i = next_++;
        if ((exchange_ || i % o_.shards == o_.shard) && seen_.insert(i).second) out.push_back({i, "enumerated", i});
      }
      return out;
    }
    auto add = [&](uint64_t i, const char* phase) {
      if (out.size() < want && seen_.insert(i).second) out.push_back({i, phase, pos_++});
    };
    if (!own_drawn_) {
      own_drawn_ = true;
      int64_t own = space_.own_schedule();
      if (own >= 0) add(static_cast<uint64_t>(own), "own");
      seeds_ = space_.seeds();
      // at most a quarter of a budget (the rest explores); with --time, all
      if (o_.time_s <= 0) seeds_.resize(std::min<size_t>(seeds_.size(), std::max<uint64_t>(1, o_.budget / 4)));
    }
    while (next_seed_ < seeds_.size() && out.size() < want) add(seeds_[next_seed_++], "seeded");
    if (refine && any_timed()) {
      std::vector<const TuneCandidate*> timed;
      for (const TuneCandidate& c : known())
        if (c.ms) timed.push_back(&c);
      std::sort(timed.begin(), timed.end(), [](auto* a, auto* b) { return *a->ms < *b->ms; });
      for (size_t t = 0; t < timed.size() && t < 4 && out.size() < want; ++t)
        for (uint64_t nb : space_.neighbours(timed[t]->index)) add(nb, "refined");
    }
    for (int tries = 0; out.size() < want && tries < 1000; ++tries) add(random_point(), "random");
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
    bool foreign = false;  // another shard's draw: lowered only, to count the budget
    TuneCandidate c;
    bool lowered = false;  // lowered legally at the requested sizes (uses budget)
    Pending pend;
  };

  // Lowers a draw at the requested sizes. `check`: false for another shard's draw (lowered to count
  // the budget, then dropped).
  Outcome lower(const Draw& d, bool check) {
    Stages clock(*this, &TuneResult::lower_seconds);
    Outcome out;
    out.done = true;
    out.foreign = !check;
    TuneCandidate& c = out.c;
    c.index = d.index;
    c.phase = d.phase;
    c.draw = d.pos;
    Pending& pend = out.pend;
    int64_t tile = space_.largest_tile(d.index);
    if (tile > kMaxTileElements) {
      try {
        if (check) (void)space_.apply(d.index, &c.schedule);  // for the schedule text
      } catch (const UserError&) {
      }
      c.status = "pruned";
      c.reason = "a tile of more than " + std::to_string(kMaxTileElements) + " elements";
      return out;
    }
    try {
      auto q = space_.apply(d.index, &c.schedule);
      Program prog = compile_scheduled(p_.path, q, o_.scalars);
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
    if (o_.backend == "triton") {
      try {
        pend.triton = emit_triton(pend.module, pend.bindings, {p_.path, o_.version});
      } catch (const UserError& e) {
        c.status = "no-triton-form";
        c.reason = tune_reason(e.what());
        return out;
      }
    }
    out.lowered = true;
    return out;
  }

  // Checks a draw that lower() lowered legally, with `threads` interpreter threads (the verdict is
  // the same for any number: the interpreter's threads are bit-identical to one). Safe to run on
  // several threads at once.
  void check(Outcome& out, const Draw& d, int threads) {
    TuneCandidate& c = out.c;
    Pending& pend = out.pend;
    // The compile for the timer (what it needs if the candidate passes) starts beside the check, on
    // a thread of its own with its own copy of the module, and is not waited for here: it goes on
    // while the rest of the round and the next round are checked, and the timer waits for it
    // (TuneJob::compiled) only when it gets to the candidate. One that then fails the check was
    // compiled for nothing (its PTX stays in the cache).
    if (compiler_) {
      auto held = std::make_shared<const std::pair<Module, Bindings>>(pend.module, pend.bindings);
      pend.compiled = std::async(std::launch::async, [this, held, triton = pend.triton] {
                        auto t0 = std::chrono::steady_clock::now();
                        TuneJob j;
                        j.module = &held->first;
                        j.bindings = &held->second;
                        j.triton = triton;
                        compiler_->prepare(j);
                        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                        std::lock_guard<std::mutex> lock(stage_mu_);
                        r_.compile_seconds += s;
                      }).share();
      std::lock_guard<std::mutex> lock(stage_mu_);
      compiles_.push_back(pend.compiled);
    }
    Stages clock(*this, &TuneResult::interp_seconds);
    try {
      std::string why = checker_.check(d.index, threads);
      c.status = why.empty() ? "checked" : "check-failed";
      c.reason = why;
    } catch (const UserError& e) {
      c.status = "illegal";
      c.reason = "at the check sizes: " + tune_reason(e.what());
    }
    clock.to(nullptr);
  }

  // The thread-seconds of lower()'s and check()'s stages (TuneResult::lower_seconds, interp_seconds,
  // compile_seconds): the running stage's time is added when the next starts and at the end.
  class Stages {
   public:
    Stages(Search& s, double TuneResult::*stage) : s_(s), t_(std::chrono::steady_clock::now()), stage_(stage) {}
    ~Stages() { to(nullptr); }
    Stages(const Stages&) = delete;
    Stages& operator=(const Stages&) = delete;
    // nullptr: stop the clock
    void to(double TuneResult::*next) {
      if (!stage_) return;
      auto t = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(s_.stage_mu_);
        s_.r_.*stage_ += std::chrono::duration<double>(t - t_).count();
      }
      t_ = t;
      stage_ = next;
    }

   private:
    Search& s_;
    std::chrono::steady_clock::time_point t_;
    double TuneResult::*stage_;
  };

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

  // What became of one draw of a round, for the exchange.
  struct Slot {
    bool done = false, lowered = false;
    size_t cand = SIZE_MAX;  // its index in r_.candidates (this shard's draws that were done)
  };

  // Evaluates a round on o_.jobs threads; records the outcomes in draw order (so that a seed gives
  // the same result whatever the number of threads) and returns the ones to time. With --time, the
  // draws not started when the time is up are given back; another shard's draws are not lowered
  // with --time (no budget to count) or --exchange (the exchange tells what they came to).
  //
  // Exchanging, the shards check a round from one queue: a shard's threads take its share (p mod N
  // == I) first, then the others' from the round's last draw back, each claimed first through the
  // folder; a draw another shard claimed is that shard's (it reports it).
  std::vector<Pending> evaluate_round(const std::vector<Draw>& round, const std::function<bool()>& time_up, std::vector<Slot>& slots) {
    std::vector<Outcome> outs(round.size());
    std::vector<char> claimed(round.size(), 0);
    std::vector<size_t> order;
    for (size_t i = 0; i < round.size(); ++i)
      if (!exchange_ || round[i].pos % o_.shards == o_.shard) order.push_back(i);
    bool by_time = o_.time_s > 0;
    if (exchange_)
      for (size_t i = round.size(); i-- > 0;)
        if (round[i].pos % o_.shards != o_.shard) order.push_back(i);
    std::atomic<size_t> next{0}, finished{0};
    std::exception_ptr failure;
    std::mutex mu;
    auto work = [&] {
      for (size_t k; (k = next++) < order.size();) {
        size_t i = order[k];
        bool own = true;
        if (exchange_) {
          if (time_up()) continue;  // given back, unless another shard checks it
          try {
            own = exchange_->claim(r_.rounds, round[i].pos, ExchangeKind::Checks);
          } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!failure) failure = std::current_exception();
            continue;
          }
          if (!own) {
            outs[i].done = outs[i].foreign = true;
            continue;
          }
          claimed[i] = 1;
        } else {
          own = mine(round[i].pos);
          if (!own && by_time) {
            outs[i].done = outs[i].foreign = true;
            continue;
          }
          if (time_up()) continue;
        }
        try {
          outs[i] = lower(round[i], own);
          // exchanging, a claimed draw is checked at once, so that a shard claims no faster than it
          // checks (one that is slower leaves more of the round to the others)
          if (exchange_ && outs[i].lowered) check(outs[i], round[i], 1);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failure) failure = std::current_exception();
        }
        if (!own || (!exchange_ && outs[i].lowered)) continue;
        ++finished;
        std::lock_guard<std::mutex> lock(mu);
        show("checking", finished);
      }
    };
    int jobs = std::max(1, o_.jobs ? o_.jobs : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u)));
    auto run_on = [&](size_t count, const std::function<void()>& fn) {
      size_t n = std::min<size_t>(static_cast<size_t>(jobs), count);
      std::vector<std::thread> threads;
      for (size_t t = 1; t < n; ++t) threads.emplace_back(fn);
      fn();
      for (std::thread& t : threads) t.join();
    };
    // First every draw is lowered (milliseconds each), then the ones lowered legally are checked
    // (seconds each): the costliest checks first (the most check points), so that a round does not
    // end waiting on a long check started last, and with the round's threads shared out among them
    // (a round of 2 checks on 16 threads: 8 interpreter threads each); the outcomes are recorded in
    // draw order all the same. With --time, checks are taken in draw order (those not started when
    // the time is up are given back). Exchanging, each draw is claimed, lowered and checked in turn
    // (above).
    run_on(order.size(), work);
    if (failure) std::rethrow_exception(failure);
    std::vector<size_t> checks;
    for (size_t i : order)
      if (!exchange_ && outs[i].done && !outs[i].foreign && outs[i].lowered) checks.push_back(i);
    if (!by_time) {
      std::vector<double> cost(round.size(), 0);
      for (size_t i : checks) cost[i] = checker_.points(round[i].index);
      std::stable_sort(checks.begin(), checks.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
    }
    int per_check = std::max(1, jobs / static_cast<int>(std::max<size_t>(1, checks.size())));
    std::atomic<size_t> next_check{0};
    run_on(checks.size(), [&] {
      for (size_t k; (k = next_check++) < checks.size();) {
        size_t i = checks[k];
        if (time_up()) {  // given back
          outs[i] = Outcome{};
          continue;
        }
        try {
          check(outs[i], round[i], per_check);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failure) failure = std::current_exception();
        }
        ++finished;
        std::lock_guard<std::mutex> lock(mu);
        show("checking", finished);
      }
    });
    if (failure) std::rethrow_exception(failure);
    for (size_t i = 0; i < round.size(); ++i)
      if (claimed[i]) checked_here_.insert(round[i].pos);
    std::vector<Pending> pending;
    slots.assign(outs.size(), Slot{});
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].done) {
        seen_.erase(round[i].index);
        continue;
      }
      slots[i].done = true;
      slots[i].lowered = outs[i].lowered;
      if (outs[i].lowered) ++legal_;
      if (outs[i].foreign) continue;
      slots[i].cand = r_.candidates.size();
      r_.candidates.push_back(outs[i].c);
      if (outs[i].c.status == "checked" && timer_) {
        outs[i].pend.cand = r_.candidates.size() - 1;
        pending.push_back(std::move(outs[i].pend));
      }
    }
    return pending;
  }

  // One candidate of a round's queue: a draw that passed the check, to be timed by this shard's GPU
  // (its own draw, or, exchanging, any shard's that this shard claims first).
  struct QueueItem {
    uint64_t pos = 0, index = 0;
    bool own = false;
    size_t cand = SIZE_MAX;            // own: its index in r_.candidates
    Pending* pend = nullptr;           // own: its lowered module
    std::unique_ptr<Pending> lowered;  // another shard's: lowered here once claimed
    TuneJob job;
  };

  // A round on the GPU: its candidates to time, timed on a thread of its own (with overlap) while
  // the search draws and checks the next round; the times reach the candidates only in apply_times,
  // at the same point of the search with or without overlap.
  struct Flight {
    uint64_t round = 0;                // its number
    std::vector<Draw> draws;           // the round's draws and what became of them (for the exchange)
    std::vector<Slot> slots;
    std::vector<Pending> pending;
    std::vector<QueueItem> items;      // in the order this shard takes them
    bool shared = false;               // the shards' GPUs take the items from one queue (claims)
    std::mutex mu;                     // guards next and timed (the timer's threads take items)
    size_t next = 0;                   // the next item to try
    std::vector<size_t> timed;         // the items this shard's GPU timed (or failed to)
    std::thread thread;
    std::exception_ptr failure;        // what the timer threw
    double start = 0, end = 0;         // seconds since the search began
    ~Flight() {
      if (thread.joinable()) thread.join();
    }
  };

  // The queue of a round: its checked draws. Alone (or with a timer that takes a round at once),
  // this shard's own, in draw order. Exchanging, every shard's: its own in draw order first, then
  // the others' from the last draw back (where their owners get to last); each claimed through the
  // folder before it is timed, so every draw is timed once, by whichever GPU is free first.
  std::unique_ptr<Flight> start_timing(std::vector<Pending> pending, const std::vector<Draw>& round, const std::vector<Slot>& slots) {
    auto f = std::make_unique<Flight>();
    f->round = r_.rounds;
    f->draws = round;
    f->slots = slots;
    f->pending = std::move(pending);
    if (!timer_) return f;
    f->shared = exchange_ && timer_->takes_one_at_a_time();
    std::map<size_t, Pending*> by_cand;
    for (Pending& p : f->pending) by_cand[p.cand] = &p;
    std::vector<QueueItem> others;
    for (size_t i = 0; i < round.size(); ++i) {
      QueueItem it;
      it.pos = round[i].pos;
      it.index = round[i].index;
      it.own = mine(round[i].pos);
      if (it.own) {
        auto p = by_cand.find(slots[i].cand);
        if (slots[i].cand == SIZE_MAX || p == by_cand.end()) continue;  // not to be timed
        it.cand = slots[i].cand;
        it.pend = p->second;
        f->items.push_back(std::move(it));
      } else if (f->shared) {
        auto at = all_at_.find(round[i].pos);
        if (at == all_at_.end() || all_[at->second].status != "checked") continue;
        others.push_back(std::move(it));
      }
    }
    for (auto o = others.rbegin(); o != others.rend(); ++o) f->items.push_back(std::move(*o));
    for (size_t k = 0; k < f->items.size(); ++k) f->items[k].job.id = k;
    if (f->items.empty()) return f;
    Flight* fp = f.get();
    auto work = [this, fp] {
      fp->start = elapsed();
      try {
        timer_->time([this, fp] { return take(*fp); },
                     [this, fp](TuneJob& j) {
                       {
                         std::lock_guard<std::mutex> lock(fp->mu);
                         fp->timed.push_back(j.id);
                       }
                       if (j.ms) note_time(*j.ms);
                       show("timing");
                     });
      } catch (...) {
        fp->failure = std::current_exception();
      }
      fp->end = elapsed();
    };
    if (o_.overlap) f->thread = std::thread(work);
    else work();
    return f;
  }

  // The next item of the round for this shard's GPU (nullptr: none left): claimed first when the
  // queue is shared; another shard's draw is lowered here (as its owner lowered it: the same module).
  TuneJob* take(Flight& f) {
    std::lock_guard<std::mutex> lock(f.mu);
    while (f.next < f.items.size()) {
      QueueItem& it = f.items[f.next++];
      if (f.shared && !exchange_->claim(f.round, it.pos, ExchangeKind::Times)) continue;
      if (!it.own) {
        try {
          it.lowered = std::make_unique<Pending>(lower(it.index));
        } catch (const UserError& e) {
          it.job.error = "lowering it again for this GPU: " + tune_reason(e.what());
          f.timed.push_back(it.job.id);
          continue;
        }
        it.pend = it.lowered.get();
      }
      it.job.module = &it.pend->module;
      it.job.bindings = &it.pend->bindings;
      it.job.triton = it.pend->triton;
      it.job.compiled = it.pend->compiled;
      return &it.job;
    }
    return nullptr;
  }

  // Schedule `index` lowered at the requested sizes (and emitted for Triton), as lower() does.
  Pending lower(uint64_t index) const {
    Pending p;
    std::string text;
    auto q = space_.apply(index, &text);
    Program prog = compile_scheduled(p_.path, q, o_.scalars);
    p.module = std::move(prog.module);
    p.bindings = std::move(prog.bindings);
    if (o_.backend == "triton") p.triton = emit_triton(p.module, p.bindings, {p_.path, o_.version});
    return p;
  }

  // Waits for the round's timing to end (rethrows what the timer threw); counts its seconds and
  // those it overlapped the checks.
  void join_timing(Flight& f) {
    if (f.thread.joinable()) f.thread.join();
    if (f.failure) std::rethrow_exception(f.failure);
    if (f.timed.empty()) return;
    r_.timing_seconds += f.end - f.start;
    for (const auto& [a, b] : check_spans_) r_.overlap_seconds += std::max(0.0, std::min(b, f.end) - std::max(a, f.start));
  }

  // The round's times become known to the search (and, exchanging, every shard's times of it).
  void apply_times(Flight& f) {
    timed_here_ += f.timed.size();
    for (size_t k : f.timed) {
      const QueueItem& it = f.items[k];
      if (it.own) set_time(r_.candidates[it.cand], it.job);
    }
    if (exchange_) swap_times(f);
    update_shown();
  }

  static void set_time(TuneCandidate& c, const TuneJob& j) {
    if (j.ms) {
      c.status = "timed";
      c.ms = j.ms;
      c.reason.clear();
    } else {
      c.status = "gpu-failed";
      c.ms.reset();
      c.reason = j.error;
    }
  }

  // This shard's report of its draws of a round: what each came to so far.
  ExchangeRound report(const std::vector<Draw>& round, const std::vector<Slot>& slots) const {
    ExchangeRound rep;
    rep.elapsed = elapsed();
    for (size_t i = 0; i < round.size(); ++i) {
      if (!mine(round[i].pos)) continue;
      ExchangedDraw d;
      d.pos = round[i].pos;
      d.index = round[i].index;
      d.done = slots[i].done;
      d.lowered = slots[i].lowered;
      if (slots[i].cand != SIZE_MAX) {
        d.status = r_.candidates[slots[i].cand].status;
        d.ms = r_.candidates[slots[i].cand].ms;
      }
      rep.draws.push_back(std::move(d));
    }
    return rep;
  }

  // The other shards' reports of a swap, by position; shared_elapsed_ follows the latest.
  std::map<uint64_t, const ExchangedDraw*> theirs(const std::vector<ExchangeRound>& all) {
    std::map<uint64_t, const ExchangedDraw*> out;
    for (uint64_t s = 0; s < all.size(); ++s) {
      shared_elapsed_ = std::max(shared_elapsed_, all[s].elapsed);
      if (s == o_.shard) continue;
      for (const ExchangedDraw& d : all[s].draws) out[d.pos] = &d;
    }
    return out;
  }

  // The first swap of a round, once it is checked: every draw's outcome at the check (status,
  // lowered) is recorded in all_, in draw order, as the unsharded search records its candidates.
  void swap_checks(const std::vector<Draw>& round, const std::vector<Slot>& slots) {
    std::vector<ExchangeRound> all = exchange_->swap(r_.rounds, report(round, slots), ExchangeKind::Checks);
    std::map<uint64_t, const ExchangedDraw*> by_pos = theirs(all);
    for (size_t i = 0; i < round.size(); ++i) {
      const Draw& w = round[i];
      if (mine(w.pos)) {
        if (slots[i].cand != SIZE_MAX) {
          all_at_[w.pos] = all_.size();
          all_.push_back(r_.candidates[slots[i].cand]);
        }
        continue;
      }
      const ExchangedDraw* dp = reported(by_pos, w, r_.rounds);
      if (!dp || !dp->done) {  // no shard checked it before its time was up
        seen_.erase(w.index);
        continue;
      }
      const ExchangedDraw& d = *dp;
      seen_.insert(w.index);  // this shard's time was up first: the draw stays drawn
      if (d.lowered) ++legal_;
      TuneCandidate c;
      c.index = w.index;
      c.phase = w.phase;
      c.draw = w.pos;
      c.status = d.status;
      c.ms = d.ms;
      all_at_[w.pos] = all_.size();
      all_.push_back(std::move(c));
    }
  }

  // The second swap of a round, once it is timed: every draw's time (or GPU failure), from the
  // shard whose GPU timed it; the draws this shard checked and another timed get theirs too.
  void swap_times(const Flight& f) {
    ExchangeRound rep;
    rep.elapsed = elapsed();
    for (size_t k : f.timed) {
      const QueueItem& it = f.items[k];
      ExchangedDraw d;
      d.pos = it.pos;
      d.index = it.index;
      d.done = d.lowered = true;
      d.status = it.job.ms ? "timed" : "gpu-failed";
      d.ms = it.job.ms;
      if (!it.job.ms) d.reason = it.job.error;
      rep.draws.push_back(std::move(d));
    }
    std::vector<ExchangeRound> all = exchange_->swap(f.round, rep, ExchangeKind::Times);
    std::map<uint64_t, const ExchangedDraw*> by_pos;
    for (uint64_t s = 0; s < all.size(); ++s) {
      shared_elapsed_ = std::max(shared_elapsed_, all[s].elapsed);
      for (const ExchangedDraw& d : all[s].draws)
        if (!by_pos.emplace(d.pos, &d).second)
          throw UserError("--exchange " + o_.exchange + ": draw " + std::to_string(d.pos) + " of round " + std::to_string(f.round) +
                          " was timed by two shards (a claim file was removed?)");
    }
    for (size_t i = 0; i < f.draws.size(); ++i) {
      const Draw& w = f.draws[i];
      auto at = all_at_.find(w.pos);
      if (at == all_at_.end()) continue;  // given back when the time was up
      TuneCandidate& c = all_[at->second];
      if (c.status != "checked") continue;
      auto it = by_pos.find(w.pos);
      if (it == by_pos.end()) continue;  // no shard times (no GPU): it stays checked
      const ExchangedDraw& d = *it->second;
      if (d.index != w.index)
        throw UserError("--exchange " + o_.exchange + ": a shard timed schedule " + std::to_string(d.index) + " at draw " + std::to_string(w.pos) +
                        " where this shard drew " + std::to_string(w.index) + ": the shards do not search the same program (file, sizes, dtsim)");
      TuneJob j;
      j.ms = d.ms;
      j.error = d.reason;
      if (d.status != "timed") j.ms.reset();
      set_time(c, j);
      if (mine(w.pos) && f.slots[i].cand != SIZE_MAX) set_time(r_.candidates[f.slots[i].cand], j);
    }
  }

  // Another shard's report of draw `w` (nullptr: none checked it, which only a time limit explains);
  // a UserError when it is missing with a budget or names another schedule.
  const ExchangedDraw* reported(const std::map<uint64_t, const ExchangedDraw*>& by_pos, const Draw& w, uint64_t round) const {
    auto it = by_pos.find(w.pos);
    if (it == by_pos.end()) {
      if (o_.time_s > 0) return nullptr;
      throw UserError("--exchange " + o_.exchange + ": no shard reported draw " + std::to_string(w.pos) + " of round " + std::to_string(round) +
                      " (a check claim file was removed?)");
    }
    const ExchangedDraw& d = *it->second;
    if (d.index != w.index)
      throw UserError("--exchange " + o_.exchange + ": a shard drew schedule " + std::to_string(d.index) + " at draw " + std::to_string(w.pos) +
                      " where this shard drew " + std::to_string(w.index) + ": the shards do not search the same program (file, sizes, dtsim)");
    return &d;
  }

  // Progress counts what the goal counts: the shard's draws (exhaustive) or the legal ones (sampled).
  uint64_t done() const { return exhaustive_ ? (exchange_ ? all_.size() : r_.candidates.size()) : legal_; }

  // What the progress display shows, copied from the search's state by the search's thread (the
  // timing thread shows progress too, and reads only this copy).
  void update_shown() {
    std::lock_guard<std::mutex> lock(show_mu_);
    shown_done_ = done();
    shown_drawn_ = r_.candidates.size();
    shown_goal_ = goal_;
    if (const TuneCandidate* b = r_.best()) shown_best_ = shown_best_ ? std::min(*shown_best_, *b->ms) : *b->ms;
  }
  void note_time(double ms) {
    std::lock_guard<std::mutex> lock(show_mu_);
    shown_best_ = shown_best_ ? std::min(*shown_best_, ms) : ms;
  }

  // `extra`: candidates of the round being checked that finished (not yet recorded). Thread-safe.
  void show(const std::string& what, size_t extra = 0) {
    if (!show_) return;
    std::lock_guard<std::mutex> lock(show_mu_);
    char best[64] = "-";
    if (shown_best_) std::snprintf(best, sizeof best, "%.4g ms", *shown_best_);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    uint64_t goal = shown_goal_;
    size_t d = std::min<size_t>(shown_done_ + extra, goal ? goal : SIZE_MAX);
    std::string label = what + (exhaustive_ ? "" : " (" + std::to_string(shown_drawn_ + extra) + " drawn)");
    if (o_.time_s > 0) show_(d, 0, el / o_.time_s, label, best);
    else show_(d, goal, goal ? static_cast<double>(d) / static_cast<double>(goal) : 1.0, label, best);
  }

  const TuneOptions& o_;
  const Program& p_;
  const DtScheduleSpace& space_;
  TuneTimer* timer_;
  TuneTimer* compiler_;  // prepare()s what passed the check: the timer, or --compile-only's
  TuneResult& r_;
  std::mutex stage_mu_;  // guards r_'s stage seconds (added on the checking threads) and compiles_
  // Every compile ahead started (check()), waited for before the search reports (and, through the
  // futures' shared state, before the search is destroyed).
  std::vector<std::shared_future<void>> compiles_;
  ShowFn show_;
  std::mt19937_64 rng_;
  Checker checker_;
  bool exhaustive_ = false;
  bool own_drawn_ = false;  // the point nearest the file's schedule was drawn (and the seeds listed)
  bool local_ = false;      // a shard refining around its own fastest: every draw its own
  std::optional<TuneExchange> exchange_;  // --exchange: the shards swap each round's outcomes
  std::vector<TuneCandidate> all_;        // with exchange_: every shard's candidates, in draw order
  double shared_elapsed_ = 0;             // with exchange_: the latest time any shard reported
  uint64_t timed_here_ = 0;  // candidates this shard's GPU timed (or failed to), any shard's
  uint64_t goal_ = 0, legal_ = 0;  // legal_: candidates lowered at the requested sizes (every shard's, until local_)
  uint64_t next_ = 0;       // exhaustive: the next index
  uint64_t pos_ = 0;        // sampled: the next draw's position
  std::vector<uint64_t> seeds_;
  size_t next_seed_ = 0;
  std::set<uint64_t> seen_;
  std::vector<uint64_t> config_start_;
  std::chrono::steady_clock::time_point start_;
  std::map<uint64_t, size_t> all_at_;                 // with exchange_: a draw's position in all_
  std::set<uint64_t> checked_here_;                   // with exchange_: the draws (positions) this shard claimed and checked
  std::vector<std::pair<double, double>> check_spans_;  // when each round was checked (seconds)
  std::mutex show_mu_;                                // guards the shown_ copy
  uint64_t shown_done_ = 0, shown_drawn_ = 0, shown_goal_ = 0;
  std::optional<double> shown_best_;
  std::unique_ptr<Flight> flight_;  // the round the GPU times (last member: joined first)
};

}  // namespace

void TuneTimer::time_all(std::vector<TuneJob>& jobs, const std::function<void(size_t)>& done) {
  std::mutex mu;
  size_t next = 0;
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].id = i;
  time(
      [&]() -> TuneJob* {
        std::lock_guard<std::mutex> lock(mu);
        return next < jobs.size() ? &jobs[next++] : nullptr;
      },
      [&](TuneJob& j) { done(j.id); });
}

void run_tune_search(const TuneSearch& s, TuneResult& r,
                     const std::function<void(size_t, size_t, double, const std::string&, const std::string&)>& show) {
  Search(s, r, show).run();
}

}  // namespace dtsim
