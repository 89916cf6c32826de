// The timers of `dtsim tune` (Tune.h): dtsim's CUDA backend with `dtsim bench`'s protocol and the
// PTX cache, and the emitted Triton modules timed with triton.testing.do_bench in one python3 call.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
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
// dtsim's CUDA backend, with bench's protocol (Timing.h); PTX through the cache.
class CudaTimer : public TuneTimer {
 public:
  CudaTimer(std::string arch, std::string cache, uint64_t seed) : seed_(seed) {
    opt_.arch = std::move(arch);
    opt_.ptx_cache_dir = std::move(cache);
  }
  std::string name() const override { return "dtsim's CUDA backend"; }
  bool available(std::string* why) override { return cuda_available(why); }
  std::string device() override {
    CudaDeviceInfo d = cuda_device_info();
    return d.name + " (" + resolve_cuda_arch(opt_) + ")";
  }
  // Jobs are compiled (PTX and, where ptxas is found, cubin: precompile_cuda_module) on worker
  // threads, and the GPU times them in the order they are ready.
  void time(std::vector<TuneJob>& jobs, const std::function<void(size_t)>& done) override {
    if (opt_.arch.empty()) opt_.arch = resolve_cuda_arch(opt_);
    std::mutex mu;
    std::condition_variable cv;
    std::deque<size_t> ready;
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < jobs.size();) {
        try {
          precompile_cuda_module(*jobs[i].module, *jobs[i].bindings, opt_);
        } catch (...) {  // the runner below compiles again and reports the error
        }
        {
          std::lock_guard<std::mutex> lock(mu);
          ready.push_back(i);
        }
        cv.notify_one();
      }
    };
    size_t nw = std::min<size_t>(jobs.size(), std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    std::vector<std::thread> workers;
    for (size_t t = 0; t < nw; ++t) workers.emplace_back(work);
    for (size_t n = 0; n < jobs.size(); ++n) {
      size_t i = 0;
      {
        auto t0 = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !ready.empty(); });
        waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        i = ready.front();
        ready.pop_front();
      }
      TuneJob& j = jobs[i];
      try {
        const Buffers& bufs = inputs(*j.module, *j.bindings);
        CudaModuleRunner r(*j.module, *j.bindings, opt_);
        r.upload(bufs, &pool_);
        for (size_t k = 0; k < r.kernel_count(); ++k) r.launch(k);
        r.synchronize("the first run");
        size_t which = r.kernel_count() == 1 ? 0 : CudaModuleRunner::kAllKernels;
        j.ms = median_of(time_cuda_runs(r, which, 0));
      } catch (const std::exception& e) {
        j.error = tune_reason(e.what());
      }
      done(i);
    }
    for (std::thread& t : workers) t.join();
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
  CudaOptions opt_;
  uint64_t seed_;
  double waited_ = 0;
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
  void time(std::vector<TuneJob>& jobs, const std::function<void(size_t)>& done) override {
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
      if (!(w >> tag >> pos) || tag != "tune" || pos >= jobs.size()) {
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
    if (!r.started && r.error != "cannot start python3") {
      for (TuneJob& j : jobs) j.error = r.error;
      return;
    }
    for (size_t i = 0; i < jobs.size(); ++i)
      if (!seen[i]) jobs[i].error = "python3 stopped before timing it: " + (last.empty() ? std::string("no output") : last);
  }

 private:
  uint64_t seed_;
  std::string device_;
};

}  // namespace

std::unique_ptr<TuneTimer> make_cuda_timer(const std::string& arch, const std::string& ptx_cache_dir, uint64_t seed) {
#ifdef DTSIM_HAVE_CUDA
  return std::make_unique<CudaTimer>(arch, ptx_cache_dir, seed);
#else
  (void)arch, (void)ptx_cache_dir, (void)seed;
  return nullptr;
#endif
}

std::unique_ptr<TuneTimer> make_triton_timer(uint64_t seed) { return std::make_unique<TritonTimer>(seed); }

}  // namespace dtsim
