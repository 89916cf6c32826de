// `dtsim bench`: times every kernel of a program (and the whole module) on the GPU through
// CudaModuleRunner, or on the interpreter; reports GB/s and dot TFLOP/s against the device's
// ceilings, checks the GPU result against the interpreter on small sizes, and with --vs-triton runs
// the emitted Triton module under triton.testing.do_bench in the same call.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "interp/RunControl.h"
#include "tools/Commands.h"
#include "driver/Driver.h"
#include "driver/Python.h"
#include "driver/Summary.h"
#include "host/Text.h"
#include "tools/Timing.h"
#include "tools/Work.h"
#include "triton/TritonEmitter.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

constexpr int64_t kCheckMaxBytes = int64_t(64) << 20;  // the GPU result is checked up to this much data
constexpr double kCheckMaxFlops = 4e9;                  // ... and this many dot FLOPs

// One timed entry: a kernel, or "<module>" for all kernels in order.
struct Entry {
  std::string name;
  std::array<int64_t, 3> grid{1, 1, 1};
  int threads = 0;
  int registers = 0, register_cap = 0;  // cuda: per thread; the cap given for hoisted bounds checks
  int64_t smem = 0;
  std::vector<double> ms;  // one per timed run
  int64_t bytes = 0;
  bool has_dot = false;
  double flops = 0;
  bool flops_known = true;
  std::string flops_note;
  Scalar dot_dtype = Scalar::F32;
  int64_t instances = 0;
  std::optional<double> flops_static;  // interp: the static count beside the executed one
  std::optional<double> triton_ms;
};

double median(const std::vector<double>& v) { return median_of(v); }


std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt("%.10g", v);
}

// A progress line on stderr, only when it is a terminal.
struct Progress {
  bool on = isatty(2) != 0;
  void show(const std::string& s) {
    if (on) std::cerr << "\r\033[K" << s << std::flush;
  }
  ~Progress() {
    if (on) std::cerr << "\r\033[K" << std::flush;
  }
};

Entry entry_for(const Kernel& k, const Bindings& b) {
  Entry e;
  e.name = k.name;
  KernelWork w = kernel_work(k, b);
  e.bytes = w.bytes();
  e.has_dot = w.has_dot;
  e.flops = w.dot_flops;
  e.flops_known = w.flops_known;
  e.flops_note = w.flops_note;
  e.dot_dtype = w.dot_dtype;
  e.grid = grid_extents(k, b);
  e.instances = e.grid[0] * e.grid[1] * e.grid[2];
  return e;
}

Entry module_entry(const std::vector<Entry>& ks) {
  Entry m;
  m.name = "<module>";
  for (const Entry& k : ks) {
    m.bytes += k.bytes;
    m.has_dot = m.has_dot || k.has_dot;
    m.flops += k.flops;
    m.flops_known = m.flops_known && k.flops_known;
    if (m.flops_note.empty()) m.flops_note = k.flops_note;
    if (k.has_dot) m.dot_dtype = k.dot_dtype;
    m.instances += k.instances;
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Interpreter backend
// ---------------------------------------------------------------------------------------------

// Counts the dot FLOPs the interpreter executes (statement by statement, as it runs them).
struct DotCounter : DebugHooks {
  double flops = 0;
  void before_stmt(Frame&, const Stmt& s) override {
    for (const ExprP& a : s.args)
      if (a) flops += dot_flops_in(*a);
  }
};

// Ctrl-C during an interpreter bench: the run stopped at an instance boundary (RunControl says where).
struct BenchInterrupted {};

// Runs m once; a Ctrl-C (opt.control) ends the bench.
RunReport run_or_stop(const Module& m, const Bindings& b, Buffers& bufs, const InterpOptions& opt) {
  RunReport rep = run_module(m, b, bufs, opt);
  if (opt.control && opt.control->interrupted) throw BenchInterrupted{};
  return rep;
}

// Wall-clock milliseconds of runs of `m` on copies of `start`, until about 100 ms (or `reps`).
std::vector<double> time_interp(const Module& m, const Bindings& b, const Buffers& start, const InterpOptions& opt,
                                int reps, Progress& progress, const std::string& label) {
  std::vector<double> ms;
  double total = 0;
  for (int r = 0; reps ? r < reps : (r < 1 || (total < 100 && r < 1000)); ++r) {
    progress.show("bench " + label + ": interpreter run " + std::to_string(r + 1));
    Buffers bufs = start;
    auto t0 = std::chrono::steady_clock::now();
    RunReport rep = run_or_stop(m, b, bufs, opt);
    double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!rep.ok()) {
      if (!rep.findings.empty()) std::cerr << rep.findings[0].message;
      throw RuntimeFault(SourceLoc{}, "the interpreter reports " + std::to_string(rep.findings_count) +
                                          " finding(s) in " + label + "; bench times runs without findings");
    }
    ms.push_back(t);
    total += t;
  }
  return ms;
}

// `o.interp.control` carries --max-steps, --timeout and Ctrl-C into every run.
std::vector<Entry> bench_interp(const Program& p, const Bindings& b, const CliOptions& o) {
  Progress progress;
  const Module& m = p.module;
  Buffers state = make_buffers(m, b, o.seed);
  std::vector<Entry> out;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    Entry e = entry_for(m.kernels[i], b);
    Module one = single_kernel(m, i, b);
    if (e.has_dot) {  // one extra run, single-threaded, counting the dots it executes
      DotCounter counter;
      InterpOptions copt = o.interp;
      copt.sanitize = Sanitize::None;
      copt.hooks = &counter;
      Buffers tmp = state;
      progress.show("bench " + e.name + ": counting dots");
      run_or_stop(one, b, tmp, copt);
      if (e.flops_known) e.flops_static = e.flops;
      e.flops = counter.flops;
      e.flops_known = true;
    }
    e.ms = time_interp(one, b, state, o.interp, o.reps, progress, e.name);
    Buffers next = state;  // the next kernel sees what this one stored
    InterpOptions q = o.interp;
    q.sanitize = Sanitize::None;
    run_or_stop(one, b, next, q);
    for (const std::string& w : kernel_work(m.kernels[i], b, 0).writes)
      if (Buffer* buf = next.find(w)) buf->defined = true;
    state = std::move(next);
    out.push_back(std::move(e));
  }
  if (m.kernels.size() > 1) {
    Entry all = module_entry(out);
    all.ms = time_interp(m, b, make_buffers(m, b, o.seed), o.interp, o.reps, progress, "<module>");
    out.push_back(std::move(all));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Text and JSON
// ---------------------------------------------------------------------------------------------

#ifdef DTSIM_HAVE_CUDA  // the GPU report's
std::string human_bytes(double b) {
  if (b >= 1e9) return fmt("%.3g GB", b / 1e9);
  if (b >= 1e6) return fmt("%.3g MB", b / 1e6);
  if (b >= 1e3) return fmt("%.3g kB", b / 1e3);
  return fmt("%.0f B", b);
}
#endif

std::string human_flops(double f) {
  if (f >= 1e12) return fmt("%.3g TFLOP", f / 1e12);
  if (f >= 1e9) return fmt("%.3g GFLOP", f / 1e9);
  if (f >= 1e6) return fmt("%.3g MFLOP", f / 1e6);
  return fmt("%.0f FLOP", f);
}

std::string time_line(const Entry& e) {
  auto [mn, mx] = std::minmax_element(e.ms.begin(), e.ms.end());
  const char* f = median(e.ms) < 0.1 ? "%.4f" : "%.3f";
  return "  time      median " + fmt(f, median(e.ms)) + " ms   min " + fmt(f, *mn) + " ms   max " + fmt(f, *mx) + " ms  (" +
         std::to_string(e.ms.size()) + " runs)\n";
}

void print_interp(const std::vector<Entry>& es, const CliOptions& o, std::ostream& out) {
  const char* san = sanitize_name(o.interp.sanitize);
  if (!o.json) out << "bench " << o.file << ": interpreter, " << o.interp.threads << " thread(s), sanitizer " << san << "\n";
  for (const Entry& e : es) {
    double med = median(e.ms);
    double ips = med > 0 ? static_cast<double>(e.instances) / (med * 1e-3) : 0;
    if (o.json) {
      auto [mn, mx] = std::minmax_element(e.ms.begin(), e.ms.end());
      out << "{\"file\": " << json_str(o.file) << ", \"kernel\": " << json_str(e.name) << ", \"backend\": \"interp\", \"threads\": "
          << o.interp.threads << ", \"sanitize\": \"" << san << "\", \"instances\": " << e.instances << ", \"reps\": " << e.ms.size()
          << ", \"median_ms\": " << json_num(med) << ", \"min_ms\": " << json_num(*mn) << ", \"max_ms\": " << json_num(*mx)
          << ", \"instances_per_s\": " << json_num(ips) << ", \"bytes\": " << e.bytes << ", \"flops\": "
          << (e.has_dot ? json_num(e.flops) : "0") << ", \"flops_static\": "
          << (e.flops_static ? json_num(*e.flops_static) : e.has_dot ? "null" : "0") << "}\n";
      continue;
    }
    out << e.name << ": " << e.instances << " program instances\n" << time_line(e);
    out << "  rate      " << fmt("%.4g", ips) << " instances/s";
    if (med > 0) out << ", " << fmt("%.3g", static_cast<double>(e.bytes) / (med * 1e-3) / 1e9) << " GB/s of buffer data";
    if (e.has_dot && med > 0) out << ", " << fmt("%.3g", e.flops / (med * 1e-3) / 1e9) << " GFLOP/s of dot (" << human_flops(e.flops) << ")";
    out << "\n";
  }
}

#ifdef DTSIM_HAVE_CUDA  // --vs-triton compares with the CUDA backend's times
// ---------------------------------------------------------------------------------------------
// --vs-triton: the emitted module under do_bench, one python3 call
// ---------------------------------------------------------------------------------------------

struct TritonTimes {
  bool ok = false;
  std::string why;                     // when !ok
  std::map<std::string, double> ms;    // kernel (or "<module>") -> median ms
};

TritonTimes triton_times(const Program& p, const Bindings& b, const CliOptions& o, Progress& progress) {
  TritonTimes t;
  TritonModuleRun run;
  run.prefix = "dtsim-triton";
  run.files = {{"module.py", emit_triton(p.module, b, {o.file, version_line(), o.warp_specialize, o.persistent, o.persistent_ctas})}};
  run.args = {"--bench", "--seed", std::to_string(o.seed)};
  progress.show("bench: timing the Triton version (python3, do_bench)");
  PythonResult py = run_triton_module(run);
  if (!py.started && py.error != "cannot start python3") {
    t.why = py.error;
    return t;
  }
  const std::string& output = py.output;
  int status = py.status;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream w(line);
    std::string tag, name;
    double ms = 0;
    if (w >> tag >> name >> ms && tag == "bench") t.ms[name] = ms;
  }
  if (status == 0 && !t.ms.empty()) {
    t.ok = true;
    return t;
  }
  // The reason, from the last line python3 printed ("No module named 'triton'", "no GPU for Triton").
  std::string last;
  std::istringstream again(output);
  while (std::getline(again, line))
    if (!line.empty()) last = line;
  t.why = last.empty() ? "python3 not found or failed" : last;
  return t;
}

// ---------------------------------------------------------------------------------------------
// CUDA backend
// ---------------------------------------------------------------------------------------------

// Peak dot throughput: FLOP per clock per SM by architecture and input type, from NVIDIA's
// published per-SM rates (dense tensor cores for f16/bf16 and f64, FMA units for f32: dtsim's f32
// dot uses no tf32). Peak = rate x SMs x the SM clock the driver reports.
struct PeakRow {
  int major, minor;
  double f16, f32, f64;
};
constexpr PeakRow kPeakTable[] = {
    {8, 0, 2048, 128, 128},   // A100
    {8, 6, 1024, 256, 4},     // A10, A40 (f16 with f32 accumulation)
    {8, 9, 1024, 256, 4},     // L4, L40
    {9, 0, 4096, 256, 256},   // H100, H200
    {10, 0, 8192, 256, 128},  // B200
};

struct Peak {
  double tflops = 0;
  std::string how;
};

std::optional<Peak> peak_for(const CudaDeviceInfo& d, Scalar t) {
  for (const PeakRow& r : kPeakTable) {
    if (r.major != d.cc_major || r.minor != d.cc_minor) continue;
    double rate = t == Scalar::F16 || t == Scalar::BF16 ? r.f16 : t == Scalar::F64 ? r.f64 : r.f32;
    Peak p;
    p.tflops = rate * d.sm_count * static_cast<double>(d.clock_khz) * 1e3 / 1e12;
    p.how = "table: sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor) + " " + scalar_name(t) + " dot " +
            fmt("%.0f", rate) + " FLOP/clk/SM x " + std::to_string(d.sm_count) + " SMs x " +
            fmt("%.0f", static_cast<double>(d.clock_khz) / 1e3) + " MHz";
    return p;
  }
  return std::nullopt;
}

// Runs the timing protocol (Timing.h) on one entry.
std::vector<double> time_cuda(CudaModuleRunner& r, size_t k, int reps, Progress& progress, const std::string& label) {
  return time_cuda_runs(r, k, reps, [&](const std::string& s) { progress.show("bench " + label + ": " + s); });
}

// The first run of every kernel, checked against the interpreter when the sizes are small.
// Returns "pass", "fail" or "skipped" and a note.
std::pair<std::string, std::string> check_first_run(const Program& p, const Bindings& b, const CliOptions& o,
                                                    CudaModuleRunner& r, const Buffers& inputs, double flops, Progress& progress) {
  int64_t total = 0;
  for (const Buffer& buf : inputs.list) total += static_cast<int64_t>(buf.bytes.size());
  for (size_t i = 0; i < r.kernel_count(); ++i) {
    r.launch(i);
    r.synchronize("kernel '" + r.kernel_name(i) + "'");
  }
  if (total > kCheckMaxBytes)
    return {"skipped", "buffers total " + fmt("%.0f", static_cast<double>(total) / (1 << 20)) +
                           " MiB > 64 MiB (check smaller sizes with dtsim difftest)"};
  if (flops > kCheckMaxFlops)
    return {"skipped", "dots total " + human_flops(flops) + " > 4 GFLOP (check smaller sizes with dtsim difftest)"};
  progress.show("bench: checking the first run against the interpreter");
  Buffers gpu = inputs;
  r.download(gpu);
  Buffers ref = inputs;
  InterpOptions io;
  io.sanitize = Sanitize::None;
  io.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run_module(p.module, b, ref, io);
  std::string worst;
  double worst_err = 0;
  bool pass = true;
  for (size_t i = 0; i < ref.list.size(); ++i) {
    const Buffer& rb = ref.list[i];
    if (rb.io != BufIO::Out && rb.io != BufIO::InOut) continue;
    double err = max_rel_err(gpu.list[i], buffer_values(rb));
    bool ok = false;
    std::string line = check_line(rb.name, err, check_tolerance(rb.dtype), &ok);
    if (!ok || err >= worst_err) {
      worst_err = err;
      worst = line;
    }
    pass = pass && ok;
  }
  return {pass ? "pass" : "fail", worst.empty() ? "no outputs" : worst};
}

int bench_cuda(const Program& p, const Bindings& b, const CliOptions& o, std::ostream& out) {
  std::string why;
  if (!cuda_available(&why)) {
    out << "SKIPPED: " << why << "\n";
    return 0;
  }
  Progress progress;
  const Module& m = p.module;
  CudaDeviceInfo dev = cuda_device_info();
  CudaOptions opt;
  opt.warp_specialize = o.warp_specialize;
  opt.cluster = o.cluster;
  opt.persistent = o.persistent;
  opt.persistent_ctas = o.persistent_ctas;
  opt.fp_fusion = o.fp_fusion;
  opt.approx_div = o.approx_div;
  opt.arch = o.arch;
  // timing runs unchecked unless asked
  opt.bounds_checks = o.interp.sanitize == Sanitize::Bounds || o.interp.sanitize == Sanitize::Conflicts;
  opt.conflict_checks = o.interp.sanitize == Sanitize::Conflicts;
  std::string arch = resolve_cuda_arch(opt);  // the target compiled for (sm_90a on an H100/H200)
  progress.show("bench: preparing inputs");
  Buffers inputs = make_buffers(m, b, o.seed);
  progress.show("bench: compiling");
  CudaModuleRunner r(m, b, opt);
  r.upload(inputs);
  std::vector<Entry> es;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    Entry e = entry_for(m.kernels[i], b);
    e.threads = r.threads(i);
    e.registers = r.registers(i);
    e.register_cap = r.register_cap(i);
    e.smem = r.smem_bytes(i);
    es.push_back(std::move(e));
  }
  if (es.size() > 1) es.push_back(module_entry(es));
  double total_flops = 0;
  for (size_t i = 0; i < m.kernels.size(); ++i) total_flops += es[i].flops;
  auto [check, check_note] = check_first_run(p, b, o, r, inputs, total_flops, progress);
  progress.show("bench: measuring the copy bandwidth");
  double copy = cuda_copy_bandwidth_gbs();
  for (size_t i = 0; i < es.size(); ++i) {
    size_t k = i < m.kernels.size() ? i : CudaModuleRunner::kAllKernels;
    es[i].ms = time_cuda(r, k, o.reps, progress, es[i].name);
  }
  TritonTimes tri;
  if (o.vs_triton) {
    tri = triton_times(p, b, o, progress);
    for (Entry& e : es)
      if (tri.ok && tri.ms.count(e.name)) e.triton_ms = tri.ms[e.name];
  }

  if (!o.json) {
    out << "bench " << o.file << " on " << dev.name << " (" << arch << ", " << dev.sm_count << " SMs, "
        << dev.l2_bytes / (1 << 20) << " MiB L2), backend cuda\n";
    out << "copy bandwidth " << fmt("%.0f", copy) << " GB/s (device-to-device copy, read + write, measured now)\n";
  }
  for (const Entry& e : es) {
    double med = median(e.ms);
    double gbs = med > 0 ? static_cast<double>(e.bytes) / (med * 1e-3) / 1e9 : 0;
    double tflops = e.has_dot && e.flops_known && med > 0 ? e.flops / (med * 1e-3) / 1e12 : NAN;
    std::optional<Peak> peak = e.has_dot ? peak_for(dev, e.dot_dtype) : std::nullopt;
    if (o.json) {
      auto [mn, mx] = std::minmax_element(e.ms.begin(), e.ms.end());
      out << "{\"file\": " << json_str(o.file) << ", \"kernel\": " << json_str(e.name) << ", \"backend\": \"cuda\", \"device\": "
          << json_str(dev.name) << ", \"arch\": \"" << arch << "\", \"grid\": [" << e.grid[0] << ", " << e.grid[1] << ", "
          << e.grid[2] << "], \"threads\": " << e.threads << ", \"registers\": " << e.registers
          << ", \"register_cap\": " << e.register_cap << ", \"smem_bytes\": " << e.smem << ", \"reps\": " << e.ms.size() << ", \"median_ms\": " << json_num(med)
          << ", \"min_ms\": " << json_num(*mn) << ", \"max_ms\": " << json_num(*mx) << ", \"bytes\": " << e.bytes
          << ", \"gbps\": " << json_num(gbs) << ", \"copy_gbps\": " << json_num(copy)
          << ", \"bw_fraction\": " << json_num(copy > 0 ? gbs / copy : NAN)
          << ", \"flops\": " << (e.has_dot ? (e.flops_known ? json_num(e.flops) : "null") : "0")
          << ", \"tflops\": " << json_num(tflops) << ", \"peak_tflops\": " << (peak ? json_num(peak->tflops) : "null")
          << ", \"peak_fraction\": " << (peak ? json_num(tflops / peak->tflops) : "null") << ", \"check\": \"" << check
          << "\", \"check_note\": " << json_str(check_note);
      if (o.vs_triton) {
        out << ", \"triton_ms\": " << (e.triton_ms ? json_num(*e.triton_ms) : "null") << ", \"dtsim_over_triton\": "
            << (e.triton_ms ? json_num(med / *e.triton_ms) : "null");
        if (!tri.ok) out << ", \"triton_skipped\": " << json_str(tri.why);
      }
      out << "}\n";
      continue;
    }
    out << e.name << ": grid [" << e.grid[0] << ", " << e.grid[1] << ", " << e.grid[2] << "]";
    if (e.threads) out << " x " << e.threads << " threads";
    out << ", L2 flushed before each run\n" << time_line(e);
    if (e.registers) {
      out << "  resources " << e.registers << " registers a thread, " << e.smem << " bytes of shared memory";
      if (e.register_cap) out << " (registers capped at " << e.register_cap << " so the copy of hoisted bounds checks keeps the unchecked kernel's CTAs per SM)";
      out << "\n";
    }
    out << "  memory    " << human_bytes(static_cast<double>(e.bytes)) << " moved: " << fmt("%.4g", gbs) << " GB/s = "
        << fmt("%.1f", copy > 0 ? 100 * gbs / copy : 0) << "% of the copy bandwidth\n";
    if (e.has_dot) {
      if (!e.flops_known) out << "  dot       FLOPs unknown (" << e.flops_note << ")\n";
      else {
        out << "  dot       " << human_flops(e.flops) << ": " << fmt("%.4g", tflops) << " TFLOP/s";
        if (peak) out << " = " << fmt("%.1f", 100 * tflops / peak->tflops) << "% of peak " << fmt("%.0f", peak->tflops) << " TFLOP/s (" << peak->how << ")";
        else out << " (no peak table entry for " << arch << ")";
        out << "\n";
      }
    }
    if (o.vs_triton) {
      if (e.triton_ms) out << "  triton    median " << fmt(*e.triton_ms < 0.1 ? "%.4f" : "%.3f", *e.triton_ms) << " ms (do_bench): dtsim/Triton time " << fmt("%.2f", med / *e.triton_ms) << "x\n";
      else if (!tri.ok) out << "  triton    SKIPPED (" << tri.why << ")\n";
    }
  }
  if (!o.json) out << "check: " << (check == "pass" ? "first run matches the interpreter: " : check == "fail" ? "FAIL: " : "skipped: ") << check_note << "\n";
  return check == "fail" ? 1 : 0;
}
#endif

}  // namespace

int bench_command(const CliOptions& o, std::ostream& out, std::ostream& err) {
  Program p = compile(o.source(), o.launch());
  const Bindings& b = p.bindings;
  check_memory_budget(p.module, b);
  if (o.backend == Backend::Interp) {
    RunControl ctl;
    ctl.max_steps = o.max_steps;
    ctl.timeout_s = o.timeout_s;
    CliOptions oc = o;
    oc.interp.control = &ctl;
    SigintGuard sigint;
    try {
      print_interp(bench_interp(p, b, oc), oc, out);
    } catch (const BenchInterrupted&) {
      err << ctl.interrupted_line() << "\n";
      return interrupted_exit_code();
    }
    return 0;
  }
#ifdef DTSIM_HAVE_CUDA
  return bench_cuda(p, b, o, out);
#else
  out << "SKIPPED: this dtsim was built without the CUDA backend\n";
  return 0;
#endif
}

}  // namespace dtsim
