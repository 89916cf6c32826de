// The timers of `dtsim tune` (Tune.h): dtsim's CUDA backend with `dtsim bench`'s protocol and the
// PTX cache, and the emitted Triton modules timed with triton.testing.do_bench in one python3 call.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "host/Buffers.h"
#include "tools/Timing.h"
#include "driver/Python.h"
#include "tune/Tune.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

#ifdef DTSIM_HAVE_CUDA
// dtsim's CUDA backend, with bench's protocol (Timing.h) in a shorter window; PTX through the cache.
class CudaTimer : public TuneTimer {
 public:
  CudaTimer(std::string arch, std::string cache, uint64_t seed, double timed_ms) : seed_(seed), timed_ms_(timed_ms) {
    opt_.arch = std::move(arch);
    opt_.ptx_cache_dir = std::move(cache);
  }
  std::string name() const override { return "dtsim's CUDA backend"; }
  bool available(std::string* why) override { return cuda_available(why); }
  // PTX and cubin into the cache, so that the workers of time() find them there (without a cache
  // there is nowhere to keep them: nothing is done).
  void prepare(const TuneJob& j) override {
    if (opt_.ptx_cache_dir.empty()) return;
    try {
      CudaOptions o = opt_;
      if (o.arch.empty()) o.arch = arch();
      precompile_cuda_module(*j.module, *j.bindings, o);
    } catch (...) {  // time() compiles again and reports the error
    }
  }
  std::string device() override {
    CudaDeviceInfo d = cuda_device_info();
    return d.name + " (" + resolve_cuda_arch(opt_) + ")";
  }
  // Worker threads take jobs, compile them (PTX and, where ptxas is found, cubin:
  // precompile_cuda_module) and load them (the module runner: NVVM emission, module load, register
  // caps), while the GPU times the jobs before; the GPU times them in the order they are ready. A
  // job is taken only while fewer than ahead() are taken and not yet timed: enough to keep the GPU
  // busy, few enough that the jobs not taken stay in the queue for other GPUs.
  void time(const TuneJobSource& next, const std::function<void(TuneJob&)>& done) override {
    if (opt_.arch.empty()) opt_.arch = arch();
    struct Ready {
      TuneJob* job = nullptr;
      std::unique_ptr<CudaModuleRunner> runner;  // null: made on the GPU's thread (which reports the error)
      uint64_t generation = 0;                   // faults_ when it was made
    };
    std::mutex mu, take_mu;
    std::condition_variable cv;
    std::deque<Ready> ready;
    size_t in_hand = 0;   // taken, not yet timed
    bool drained = false;  // the source handed out nullptr
    std::exception_ptr failure;
    size_t nw = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
    size_t working = nw;
    auto work = [&] {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return drained || failure || in_hand < ahead(nw); });
          if (drained || failure) break;
          ++in_hand;
        }
        TuneJob* j = nullptr;
        try {
          std::lock_guard<std::mutex> take(take_mu);
          j = next();
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failure) failure = std::current_exception();
          --in_hand;
          break;
        }
        if (!j) {
          std::lock_guard<std::mutex> lock(mu);
          drained = true;
          --in_hand;
          break;
        }
        Ready rd;
        rd.job = j;
        rd.generation = faults_;
        auto t0 = std::chrono::steady_clock::now();
        try {
          if (j->compiled.valid()) j->compiled.wait();  // the search's compile ahead: then a cache hit
          precompile_cuda_module(*j->module, *j->bindings, opt_);
          rd.runner = std::make_unique<CudaModuleRunner>(*j->module, *j->bindings, opt_);
        } catch (...) {  // the GPU's thread makes it again and reports the error
          rd.runner.reset();
        }
        std::lock_guard<std::mutex> lock(mu);
        prep_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++prepped_;
        ready.push_back(std::move(rd));
        cv.notify_all();
      }
      std::lock_guard<std::mutex> lock(mu);
      --working;
      cv.notify_all();
    };
    std::vector<std::thread> workers;
    for (size_t t = 0; t < nw; ++t) workers.emplace_back(work);
    for (;;) {
      Ready rd;
      {
        auto t0 = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !ready.empty() || working == 0 || failure; });
        if (ready.empty() || failure) break;
        waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rd = std::move(ready.front());
        ready.pop_front();
      }
      TuneJob& j = *rd.job;
      auto t0 = std::chrono::steady_clock::now();
      try {
        if (!rd.runner || rd.generation != faults_) rd.runner = std::make_unique<CudaModuleRunner>(*j.module, *j.bindings, opt_);
        CudaModuleRunner& r = *rd.runner;
        const Buffers& bufs = inputs(*j.module, *j.bindings);
        r.upload(bufs, &pool_);
        for (size_t k = 0; k < r.kernel_count(); ++k) r.launch(k);
        r.synchronize("the first run");
        size_t which = r.kernel_count() == 1 ? 0 : CudaModuleRunner::kAllKernels;
        // A GPU that idled (the first candidate, a wait between rounds) warms up as bench's protocol
        // does; one that timed a candidate a moment ago is warm.
        TimingWindow w;
        double idle = last_end_ ? std::chrono::duration<double>(t0 - *last_end_).count() : 1e9;
        w.warm_ms = idle > 0.5 ? 25.0 : std::min(25.0, timed_ms_ / 4);
        w.timed_ms = timed_ms_;
        w.min_reps = 10;
        w.estimate_runs = 1;  // after the untimed first run; a slow kernel's estimate is its first timed run
        w.slow_reps = 3;
        w.by_wall = true;
        j.ms = median_of(time_cuda_runs(r, which, 0, {}, w));
      } catch (const std::exception& e) {
        j.error = tune_reason(e.what());
        ++faults_;  // a fault recreates the context: runners made before it are made again
      }
      rd.runner.reset();
      last_end_ = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(mu);
        gpu_seconds_ += std::chrono::duration<double>(*last_end_ - t0).count();
        ++timed_;
        --in_hand;
        cv.notify_all();
      }
      done(j);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      drained = true;
      cv.notify_all();
    }
    for (std::thread& t : workers) t.join();
    // jobs made ready after a failure are not timed; the failure ends the search
    if (failure) std::rethrow_exception(failure);
  }
  double compile_wait_seconds() const override { return waited_; }

 private:
  // The buffers of a module: its in/inout buffers' seeded random data made once per name, type and
  // shape (candidates of all fusion configurations share them), the others zero; the whole set kept
  // for the last few sets of buffers seen (fusion configurations differ in their scratch buffers), so
  // that a candidate costs no host copy of large inputs.
  const Buffers& inputs(const Module& m, const Bindings& b) {
    std::string sig;
    for (const Kernel& k : m.kernels)
      for (const Param& p : k.params)
        if (p.kind == ParamKind::Pointer) {
          sig += p.name + ":" + scalar_name(p.dtype) + ":" + bufio_name(p.io);
          for (const ExprP& e : p.shape) sig += "," + std::to_string(eval_param_expr(e, b).as_int());
          sig += ";";
        }
    for (auto& [key, bufs] : sets_)
      if (key == sig) return bufs;
    if (sets_.size() >= 4) sets_.erase(sets_.begin());
    sets_.emplace_back(sig, fresh(m, b));
    return sets_.back().second;
  }

  Buffers fresh(const Module& m, const Bindings& b) {
    Buffers preset;
    for (const Kernel& k : m.kernels)
      for (const Param& p : k.params) {
        if (p.kind != ParamKind::Pointer || (p.io != BufIO::In && p.io != BufIO::InOut) || preset.find(p.name)) continue;
        Buffer buf;
        buf.name = p.name;
        buf.dtype = p.dtype;
        std::string key = p.name + ":" + scalar_name(p.dtype);
        for (const ExprP& e : p.shape) {
          buf.shape.push_back(eval_param_expr(e, b).as_int());
          key += "," + std::to_string(buf.shape.back());
        }
        auto it = made_.find(key);
        if (it == made_.end()) {
          fill_random(buf, seed_);
          it = made_.emplace(key, std::move(buf)).first;
        }
        preset.list.push_back(it->second);
      }
    return make_buffers(m, b, seed_, preset);
  }
  // Jobs taken ahead of the GPU: 1 + the compile-and-load seconds of a job over its GPU seconds
  // (measured so far), so that the workers keep the GPU fed; 3 before any is measured; at least 2,
  // at most the workers.
  size_t ahead(size_t workers) const {
    if (!prepped_ || !timed_) return std::min<size_t>(3, workers);
    double prep = prep_seconds_ / static_cast<double>(prepped_), gpu = gpu_seconds_ / static_cast<double>(timed_);
    double want = 1 + std::ceil(prep / std::max(gpu, 1e-3));
    return static_cast<size_t>(std::clamp(want, 2.0, static_cast<double>(std::max<size_t>(workers, 2))));
  }

  // The target, resolved once (prepare() runs on several threads before time() does).
  std::string arch() {
    std::call_once(arch_once_, [&] { arch_ = resolve_cuda_arch(opt_); });
    return arch_;
  }

  CudaOptions opt_;
  std::once_flag arch_once_;
  std::string arch_;
  uint64_t seed_;
  double timed_ms_;
  double waited_ = 0;
  double prep_seconds_ = 0, gpu_seconds_ = 0;  // compiling and loading, timing: all jobs so far
  size_t prepped_ = 0, timed_ = 0;
  std::atomic<uint64_t> faults_{0};
  std::optional<std::chrono::steady_clock::time_point> last_end_;  // when the GPU last finished a job
  CudaDevicePool pool_;  // inputs uploaded once for all candidates, one L2 flush buffer
  std::map<std::string, Buffer> made_;
  std::vector<std::pair<std::string, Buffers>> sets_;
};
#endif

// The driver that times emitted Triton modules in one python3 process: each module is imported,
// given inputs made on the device and timed by the module's own bench() (do_bench, median).
constexpr const char* kTritonDriver = R"PY(import importlib.util, sys
seed = int(sys.argv[1])
for pos, path in enumerate(sys.argv[2:]):
    try:
        spec = importlib.util.spec_from_file_location(f"dtsim_tune_{pos}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        params = mod.bind({})
        bufs = mod.make_buffers(params, seed, "cuda", None, exact=False)
        times = dict(mod.bench(bufs, params, "cuda"))
        ms = times.get("<module>", next(iter(times.values())))
        print(f"tune {pos} {ms:.6f}", flush=True)
        del bufs
    except Exception as e:
        msg = (str(e).strip().splitlines() or [""])[-1]
        print(f"tune {pos} error {type(e).__name__}: {msg}", flush=True)
)PY";

// The emitted Triton modules, timed with triton.testing.do_bench in one python3 call per round.
class TritonTimer : public TuneTimer {
 public:
  explicit TritonTimer(uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "the emitted Triton (do_bench)"; }
  bool available(std::string* why) override {
    std::string last;
    PythonResult r = run_python3({"-c", "import torch, triton, sys; ok = torch.cuda.is_available(); "
                                        "print(torch.cuda.get_device_name(0) if ok else 'no GPU for Triton (torch.cuda.is_available() is False)'); "
                                        "sys.exit(0 if ok else 3)"},
                                 {}, [&](const std::string& l) {
                                   if (!l.empty()) last = l;
                                 });
    if (r.status == 0) {
      device_ = last;
      return true;
    }
    if (why) *why = last.empty() ? "python3 not found" : last;
    return false;
  }
  std::string device() override { return device_; }
  // The whole round at once: one python3 call times every job.
  bool takes_one_at_a_time() const override { return false; }
  void time(const TuneJobSource& next, const std::function<void(TuneJob&)>& done_job) override {
    std::vector<TuneJob*> taken;
    while (TuneJob* j = next()) taken.push_back(j);
    if (taken.empty()) return;
    std::vector<TuneJob> jobs;
    for (TuneJob* j : taken) jobs.push_back(*j);
    auto done = [&](size_t i) {
      taken[i]->ms = jobs[i].ms;
      taken[i]->error = jobs[i].error;
      done_job(*taken[i]);
    };
    TritonModuleRun run;
    run.prefix = "dtsim-tune";
    run.files.push_back({"driver.py", kTritonDriver});
    for (size_t i = 0; i < jobs.size(); ++i) run.files.push_back({"c" + std::to_string(i) + ".py", jobs[i].triton});
    run.args = {std::to_string(seed_)};
    run.prepare = [&](const std::filesystem::path& dir, std::vector<std::string>& args) {
      for (size_t i = 0; i < jobs.size(); ++i) args.push_back((dir / ("c" + std::to_string(i) + ".py")).string());
    };
    std::vector<bool> seen(jobs.size(), false);
    std::string last;
    run.line = [&](const std::string& l) {
      std::istringstream w(l);
      std::string tag, rest;
      size_t pos = 0;
      if (!(w >> tag >> pos) || tag != "tune" || pos >= jobs.size() || seen[pos]) {
        if (!l.empty()) last = l;
        return;
      }
      std::getline(w, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (rest.rfind("error ", 0) == 0) jobs[pos].error = rest.substr(6);
      else jobs[pos].ms = std::strtod(rest.c_str(), nullptr);
      seen[pos] = true;
      done(pos);
    };
    PythonResult r = run_triton_module(run);
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (seen[i]) continue;
      if (!r.started && r.error != "cannot start python3") jobs[i].error = r.error;
      else jobs[i].error = "python3 stopped before timing it: " + (last.empty() ? std::string("no output") : last);
      done(i);
    }
  }

 private:
  uint64_t seed_;
  std::string device_;
};

}  // namespace

std::unique_ptr<TuneTimer> make_cuda_timer(const std::string& arch, const std::string& ptx_cache_dir, uint64_t seed, double timed_ms) {
#ifdef DTSIM_HAVE_CUDA
  return std::make_unique<CudaTimer>(arch, ptx_cache_dir, seed, timed_ms);
#else
  (void)arch, (void)ptx_cache_dir, (void)seed, (void)timed_ms;
  return nullptr;
#endif
}

std::unique_ptr<TuneTimer> make_triton_timer(uint64_t seed) { return std::make_unique<TritonTimer>(seed); }

}  // namespace dtsim
