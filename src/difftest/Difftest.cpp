// `dtsim difftest`: runs a .tile/.dt program on the interpreter and on the GPU over seeded random
// inputs, random (non-divisible) sizes and, for .dt, random legal schedules; compares every output
// with per-dtype tolerances, shrinks a failing case and prints the command that reproduces it.
// Without a GPU every case is still lowered, compiled by libNVVM and checked by ptxas.
// --oracle=triton compares the interpreter with the emitted Triton module instead (python3, on the
// GPU, or with TRITON_INTERPRET=1 when Triton is installed but no GPU is), through .npy files.
#include "difftest/Difftest.h"

#include "ir/Analysis.h"
#include "ir/Walk.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif
#include "difftest/Worker.h"
#include "driver/Driver.h"
#include "driver/Python.h"
#include "frontend/DT.h"
#include "host/Buffers.h"
#include "host/Npy.h"
#include "interp/Interp.h"
#include "interp/RunControl.h"
#include "triton/TritonEmitter.h"

namespace dtsim {

namespace {

enum class Oracle { Cuda, Triton };

// The options as the sweep uses them: the flags, with the --arg entries a .py kernel's
// specialization consumed taken out, and the CUDA backend's options.
struct Options : DifftestOptions {
  Oracle oracle = Oracle::Cuda;
#ifdef DTSIM_HAVE_CUDA
  CudaOptions cuda;
#endif
};

// One case: a lowered module with its bindings.
struct Case {
  Module module;
  Bindings bindings;
  std::map<std::string, std::string> overrides;  // what was chosen (for the repro command)
  std::string schedule;                          // .dt: the random schedule
  uint64_t schedule_seed = 0;
  std::shared_ptr<DtProgram> scheduled;          // .dt: the program with its sizes and schedule, until lowered
};


// Scalar integer parameters that size a buffer (they appear in a pointer parameter's shape).
std::vector<std::string> size_params(const Module& m) {
  std::vector<std::string> out;
  auto use = [&](const Expr& e) {
    if (e.kind != ExprKind::Var) return;
    for (const Kernel& k : m.kernels) {
      const Param* p = k.find_param(e.name);
      if (p && p->kind != ParamKind::Pointer && is_int(p->dtype) && std::find(out.begin(), out.end(), e.name) == out.end())
        out.push_back(e.name);
    }
  };
  for (const Kernel& k : m.kernels)
    for (const Param& p : k.params)
      if (p.kind == ParamKind::Pointer)
        for (const ExprP& s : p.shape) for_each_expr(s, use);
  return out;
}

Case make_case(const Options& o, const Module* tile, const std::shared_ptr<DtProgram>& dt, uint64_t trial,
               const std::map<std::string, std::string>* forced) {
  Case c;
  std::mt19937_64 rng(o.seed * 7919 + trial);
  if (dt) {
    c.schedule_seed = o.seed + trial;
    std::map<std::string, int64_t> sizes;
    std::map<std::string, std::string> size_args = forced ? *forced : o.args;  // sizes are bound before lowering
    c.scheduled = trial == 0 && !forced ? dt_with_sizes(*dt, size_args) : with_random_schedule(*dt, c.schedule_seed, &c.schedule, &sizes, size_args);
    if (!forced && trial != 0)
      for (auto& [d, v] : sizes) c.overrides[d + "_SIZE"] = std::to_string(v);
  } else {
    c.module = clone_module(*tile);
    if (!forced && trial != 0) {
      Bindings defaults = bind_params(c.module, o.args);  // the default sizes, to perturb
      for (auto& name : size_params(c.module)) {
        if (o.args.count(name)) continue;
        int64_t d = std::max<int64_t>(2, defaults[name].as_int());
        std::uniform_int_distribution<int64_t> dist(1, d + d / 2);
        c.overrides[name] = std::to_string(dist(rng));
      }
    }
  }
  for (auto& [k, v] : o.args) c.overrides[k] = v;
  if (forced)
    for (auto& [k, v] : *forced) c.overrides[k] = v;
  // The driver's last stages: lower (.dt) and verify.
  Program prog = dt ? compile_scheduled("", std::move(c.scheduled), c.overrides) : compile_module("", std::move(c.module), c.overrides);
  c.module = std::move(prog.module);
  c.bindings = std::move(prog.bindings);
  return c;
}

struct Tol {
  double rtol, atol;
};
Tol tolerance(Scalar s) {
  switch (s) {
    case Scalar::F64: return {1e-9, 1e-12};
    case Scalar::F32: return {1e-4, 1e-5};
    case Scalar::F16: return {1e-2, 1e-3};
    case Scalar::BF16: return {2e-2, 1e-2};
    case Scalar::F8E4M3: return {0.125, 1e-2};  // one rounding step: 2^-4 relative (e4m3), 2^-3 (e5m2)
    case Scalar::F8E5M2:
    case Scalar::F8E5B16: return {0.25, 1e-2};
    case Scalar::F8E4B15:
    case Scalar::F8E4B8: return {0.125, 1e-2};
    case Scalar::I1:
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32:
    case Scalar::I64: return {0, 0};
  }
  return {0, 0};
}


// Compares the reported buffers; "" when they match, else a description of the first mismatch.
std::string compare(const Module& m, const Buffers& ref, const Buffers& gpu, const char* other = "gpu") {
  for (size_t i = 0; i < ref.list.size(); ++i) {
    const Buffer& r = ref.list[i];
    if (r.io != BufIO::Out && r.io != BufIO::InOut) continue;
    const Buffer& g = gpu.list[i];
    Tol t = tolerance(r.dtype);
    double scale = 0, diff2 = 0, ref2 = 0;
    for (int64_t j = 0; j < r.numel(); ++j) scale = std::max(scale, std::fabs(r.get(j)));
    for (int64_t j = 0; j < r.numel(); ++j) {
      double a = g.get(j), b = r.get(j);
      bool bad = std::isnan(a) != std::isnan(b) ||
                 (!std::isnan(b) && std::fabs(a - b) > t.atol * std::max(1.0, scale) + t.rtol * std::fabs(b));
      if (!std::isnan(a) && !std::isnan(b)) {
        diff2 += (a - b) * (a - b);
        ref2 += b * b;
      }
      if (bad) {
        std::ostringstream s;
        s.precision(9);
        s << "mismatch in '" << r.name << "' (" << scalar_name(r.dtype) << shape_str(r.shape) << ") at " << index_text(j, r.shape)
          << " (flat " << j << "): " << other << " " << a << ", interpreter " << b << "\n" << store_site(m, r.name);
        return s.str();
      }
    }
    if (ref2 > 0 && std::sqrt(diff2 / ref2) > std::max(t.rtol, 1e-12)) {
      std::ostringstream s;
      s << "mismatch in '" << r.name << "': relative norm error " << std::sqrt(diff2 / ref2) << " > " << t.rtol << "\n";
      return s.str();
    }
  }
  return "";
}

void poison(Buffers& bs) {
  for (Buffer& b : bs.list)
    if (b.io == BufIO::Out || b.io == BufIO::Scratch) std::memset(b.bytes.data(), 0xFF, b.bytes.size());  // NaN / -1
}

// GpuFault / GpuFinding: the GPU faulted or reported a located failure where the interpreter found
// none; the case is reported with its reproduce line and the sweep goes on.
enum class Outcome { Pass, Skipped, Mismatch, InterpFinding, NoTritonForm, GpuFault, GpuFinding };
using TrialRecord = WorkerRecord;  // outcome: an Outcome

// Where the Triton oracle can run: "gpu", "interpreter" (TRITON_INTERPRET=1), or "" with `why`.
std::string triton_mode(std::string* why) {
  PythonResult r = run_python3({"-c", "import triton, torch; print('gpu' if torch.cuda.is_available() else 'cpu')"});
  int rc = r.status;
  const std::string& outp = r.output;
  if (rc != 0) {
    size_t at = outp.find("No module named");
    *why = at != std::string::npos ? "python3 has " + outp.substr(at, outp.find('\n', at) - at)
                                   : "python3 with triton and torch not found";
    return "";
  }
  return outp.rfind("gpu", 0) == 0 ? "gpu" : "interpreter";
}

// The progress line of a sweep: cases done of all, elapsed, rate.
struct CaseProgress {
  std::string file;
  int total = 0;
  std::atomic<int> done{0};
  static std::string describe(void* self, double elapsed) {
    auto* p = static_cast<CaseProgress*>(self);
    int d = p->done.load();
    char buf[96];
    std::snprintf(buf, sizeof buf, ": case %d/%d (%d%%), %.1f s, %.3g cases/s", std::min(d + 1, p->total), p->total,
                  d * 100 / std::max(1, p->total), elapsed, d / std::max(elapsed, 1e-9));
    return "difftest " + p->file + buf;
  }
};

struct Runner {
  const Options& o;
  bool gpu;
  bool context_lost = false;  // a GPU fault happened: this process's CUDA context is unusable
  std::string last;  // message of the last failure
  std::string triton;  // Triton oracle: "gpu" or "interpreter"
  RunControl* ctl = nullptr;  // Ctrl-C stops the interpreter at an instance boundary

  // The emitted Triton module on `in` (every buffer passed as an .npy file); outputs into `got`.
  bool run_triton(const Case& c, const Buffers& in, Buffers& got) {
    TritonModuleRun run;
    run.prefix = "dtsim-difftest";
    run.files = {{"module.py", emit_triton(c.module, c.bindings, {o.file, "dtsim", o.warp_specialize, o.persistent, o.persistent_ctas})}};
    if (triton == "interpreter") run.env = {"TRITON_INTERPRET=1"};
    run.prepare = [&](const std::filesystem::path& dir, std::vector<std::string>& args) {
      for (const Buffer& b : in.list) {
        std::string f = (dir / ("in_" + b.name + ".npy")).string();
        write_npy(f, b);
        args.insert(args.end(), {"--in", b.name + "=" + f});
        if (b.io == BufIO::Out || b.io == BufIO::InOut) args.insert(args.end(), {"--out", b.name + "=" + (dir / ("out_" + b.name + ".npy")).string()});
      }
    };
    bool ok = true;
    run.collect = [&](const std::filesystem::path& dir, const PythonResult& r) {
      if (r.status != 0) {
        last = "the Triton module failed (exit " + std::to_string(r.status) + "):\n" +
               (r.output.size() > 3000 ? "..." + r.output.substr(r.output.size() - 3000) : r.output);
        ok = false;
        return;
      }
      got = in;
      for (Buffer& b : got.list) {
        if (b.io != BufIO::Out && b.io != BufIO::InOut) continue;
        Buffer out = read_npy((dir / ("out_" + b.name + ".npy")).string(), b.name, b.dtype);
        if (out.bytes.size() != b.bytes.size()) {
          last = "the Triton module wrote '" + b.name + "' with another size";
          ok = false;
          return;
        }
        b.bytes = out.bytes;
      }
    };
    PythonResult r = run_triton_module(run);
    if (!r.started && r.error != "cannot start python3") throw UserError("cannot create a temporary directory under /tmp");
    return ok;
  }

  Outcome run(const Case& c, uint64_t trial) {
    if (o.oracle == Oracle::Cuda) {
#ifdef DTSIM_HAVE_CUDA
      // Always lower, compile and (without a GPU) validate the PTX.
      std::string ptx = compile_ptx(emit_nvvm(c.module, c.bindings, o.cuda), o.cuda);
      if (!gpu) {
        PtxasResult r = run_ptxas(ptx, o.cuda.arch, false);
        if (r.available && !r.ok) throw UserError(SourceLoc{}, "ptxas rejected the generated PTX:\n" + r.log);
      }
#endif
    } else {
      try {
        emit_triton(c.module, c.bindings);
      } catch (const UserError& e) {  // e.g. a random schedule's dot below Triton's 16 x 16 x 16
        last = e.what();
        return Outcome::NoTritonForm;
      }
    }
    Buffers in = make_buffers(c.module, c.bindings, o.seed * 131 + trial);
    poison(in);  // both executors start from the same poison: elements neither writes compare equal
    Buffers ref = in;
    InterpOptions io;
    io.keep_going = true;
    io.control = ctl;
    std::ostringstream sink;
    io.out = &sink;
    RunReport rep;
    try {
      rep = run_module(c.module, c.bindings, ref, io);
    } catch (const RuntimeFault& e) {  // e.g. a range() step <= 0: a finding of this case
      last = "the interpreter reports a fault at these sizes:\n" + e.render();
      return Outcome::InterpFinding;
    }
    if (!rep.ok()) {
      last = "the interpreter reports " + std::to_string(rep.findings_count) + " finding(s) at these sizes:\n" +
             (rep.findings.empty() ? "" : rep.findings[0].message);
      return Outcome::InterpFinding;
    }
    if (!gpu) return Outcome::Skipped;
    Buffers dev = in;
    if (o.oracle == Oracle::Triton) {
      if (!run_triton(c, in, dev)) return Outcome::Mismatch;
    } else {
#ifdef DTSIM_HAVE_CUDA
      try {
        auto found = run_module_cuda(c.module, c.bindings, dev, o.cuda);
        if (!found.empty()) {
          last = found[0].message;
          return Outcome::GpuFinding;
        }
      } catch (const CudaFault& e) {
        context_lost = true;
        last = e.what();
        return Outcome::GpuFault;
      } catch (const UserError& e) {  // the GPU refused the case (e.g. a launch over a device limit)
        last = std::string("the GPU run failed: ") + e.what();
        return Outcome::GpuFault;
      }
#endif
    }
    last = compare(c.module, ref, dev, o.oracle == Oracle::Triton ? "triton" : "gpu");
    return last.empty() ? Outcome::Pass : Outcome::Mismatch;
  }

  // A case the interpreter reports a finding for, run on the GPU too: a sweep must survive it. Says
  // what the GPU did (a located finding, a fault after which the context was recreated, nothing).
  std::string gpu_side(const Case& c, uint64_t trial) {
#ifndef DTSIM_HAVE_CUDA
    (void)c, (void)trial;
    return "";
#else
    Buffers dev = make_buffers(c.module, c.bindings, o.seed * 131 + trial);
    poison(dev);
    try {
      auto found = run_module_cuda(c.module, c.bindings, dev, o.cuda);
      if (!found.empty()) return "on the GPU: located" + std::string(o.cuda.bounds_checks ? " (--sanitize=bounds)" : "") + ":\n" + found[0].message;
      return std::string("on the GPU: no fault") + (o.cuda.bounds_checks ? "\n" : " (accesses unchecked; --sanitize=bounds checks them)\n");
    } catch (const CudaFault& e) {
      context_lost = true;
      return std::string("on the GPU: ") + e.what() + "\n";
    }
#endif
  }
};

std::string describe(const Case& c) {
  std::string s;
  for (auto& [k, v] : c.overrides) s += " " + k + "=" + v;
  return s.empty() ? " (default sizes)" : s;
}

std::string repro(const Options& o, const Case& c) {
  std::string s = "dtsim difftest " + o.file + " --trials 1";
  if (o.oracle == Oracle::Triton) s += " --oracle=triton";
  if (o.bounds_checks) s += " --sanitize=bounds";
  if (o.warp_specialize) s += o.warp_specialize > 0 ? " --warp-specialize" : " --no-warp-specialize";
  if (o.cluster) s += o.cluster > 0 ? " --cluster" : " --no-cluster";
  if (o.persistent) s += o.persistent > 0 ? " --persistent" : " --no-persistent";
  if (o.persistent_ctas) s += " --persistent-ctas " + std::to_string(o.persistent_ctas);
  if (c.schedule_seed) s += " --schedule-seed " + std::to_string(c.schedule_seed);
  for (auto& [k, v] : c.overrides) s += " --arg " + k + "=" + v;
  if (!o.kernel.empty()) s += " --kernel " + o.kernel;
  if (!o.grid.empty()) s += " --grid '" + o.grid + "'";
  for (auto& [k, v] : o.ins) s += " --in " + k + "=" + v;
  for (auto& [k, v] : o.bufs) s += " --buf " + k + "=" + v;
  return s;
}

}  // namespace

std::string difftest_help() {
  return "dtsim difftest: differential test: interpreter vs GPU\n"
         "usage: dtsim difftest FILE.tile|FILE.dt|FILE.py [--trials N] [--seed S] [--arch sm_XX] [--fast-math] [--sanitize=none|bounds] [--arg NAME=VALUE]... [--oracle=cuda|triton]\n"
         "  --sanitize=bounds check every GPU access against its buffer (default none: GPU faults are still survived)\n"
         "  --oracle=cuda     compare the interpreter with dtsim's CUDA backend (default; needs a dtsim built with it)\n"
         "  --kernel NAME --grid E0[,E1[,E2]] --in NAME=FILE.npy --buf NAME=DTYPE[SHAPE]   a .py (Triton) kernel's launch,\n"
         "                    as for dtsim run: sizes are those of the buffers; each trial draws new input data\n"
         "  --oracle=triton   compare the interpreter with the emitted Triton module (python3; on the GPU, or with\n"
         "                    TRITON_INTERPRET=1 when Triton is installed but no GPU is; otherwise SKIPPED)\n"
#ifndef DTSIM_HAVE_CUDA
         "(this dtsim was built without the CUDA backend: only --oracle=triton is available)\n"
#endif
      ;
}

int difftest_command(const DifftestOptions& flags, std::ostream& out, std::ostream& err) {
  Options o;
  static_cast<DifftestOptions&>(o) = flags;
  o.oracle = flags.oracle_triton ? Oracle::Triton : Oracle::Cuda;
  uint64_t schedule_seed = flags.schedule_seed;
#ifdef DTSIM_HAVE_CUDA
  o.cuda.arch = flags.arch;
  o.cuda.fast_math = flags.fast_math;
  o.cuda.warp_specialize = flags.warp_specialize;
  o.cuda.cluster = flags.cluster;
  o.cuda.persistent = flags.persistent;
  o.cuda.persistent_ctas = flags.persistent_ctas;
  o.cuda.bounds_checks = flags.bounds_checks;
#else
  if (o.oracle == Oracle::Cuda)
    throw UserError("this dtsim was built without the CUDA backend: difftest --oracle=cuda is not available "
                    "(--oracle=triton compares the interpreter with the emitted Triton module)");
#endif

  std::string why, triton;
  bool gpu = false;
  if (o.oracle == Oracle::Triton) gpu = !(triton = triton_mode(&why)).empty();
  try {
    // The driver's stages up to the point where the cases differ: a .dt file parsed, checked,
    // scheduled and lowered once at its default sizes (its legality); a .tile file parsed; a .py
    // kernel lowered for the launch the flags describe (the --arg entries it consumed leave o.args).
    Module tile;
    std::shared_ptr<DtProgram> dt;
    Source src{o.file, std::nullopt, std::nullopt};
    FileKind kind = kind_for_path(o.file);
    if (kind == FileKind::Dt) {
      dt = compile(src, LaunchSpec{}, Stage::Lower).dt;
    } else if (kind == FileKind::Py) {
      LaunchSpec spec;
      spec.kernel = o.kernel;
      spec.args = o.args;
      spec.grid = o.grid_items;
      spec.ins = o.ins;
      spec.bufs = o.bufs;
      Program p = compile(src, spec, Stage::Lower);
      for (const std::string& used : p.size_args) o.args.erase(used);
      tile = std::move(p.module);
    } else {
      tile = compile(src, LaunchSpec{}, Stage::Parse).module;
    }
    auto case_for = [&](int t) {
      uint64_t trial = schedule_seed ? schedule_seed - o.seed : static_cast<uint64_t>(t);
      bool fixed = !o.args.empty() && !dt;
      Case c = make_case(o, &tile, dt, fixed ? 0 : trial, nullptr);
      if (schedule_seed && dt) c = make_case(o, &tile, dt, trial, &o.args);
      return std::make_pair(c, trial);
    };
    auto head_of = [&](int t, const Case& c) { return "case " + std::to_string(t + 1) + "/" + std::to_string(o.trials) + describe(c); };
    // One trial, run and reported: its outcome and the text to print (a mismatch also shrinks).
    auto run_trial = [&](Runner& run, int t) {
      TrialRecord rec;
      rec.trial = t;
      auto [c, trial] = case_for(t);
      Outcome r = run.run(c, trial);
      rec.outcome = static_cast<int>(r);
      std::ostringstream txt;
      std::string head = head_of(t, c);
      if (r == Outcome::Pass || r == Outcome::Skipped) return rec;
      if (r == Outcome::NoTritonForm) {
        rec.text = run.last;
        return rec;
      }
      if (r == Outcome::GpuFault || r == Outcome::GpuFinding) {
        txt << head << ": " << (r == Outcome::GpuFault ? "GPU FAULT" : "GPU FINDING (the interpreter has none)") << "\n" << run.last;
        if (!run.last.empty() && run.last.back() != '\n') txt << "\n";
        if (!c.schedule.empty()) txt << "schedule:\n" << c.schedule << "\n";
        txt << "reproduce: " << repro(o, c) << "\n";
      } else if (r == Outcome::InterpFinding) {
        // Reported, run on the GPU as well (it must survive the case), and the sweep goes on.
        txt << head << ": INTERPRETER FINDING\n" << run.last;
        if (!run.last.empty() && run.last.back() != '\n') txt << "\n";
        if (run.gpu && o.oracle == Oracle::Cuda) txt << run.gpu_side(c, trial);
        if (!c.schedule.empty()) txt << "schedule:\n" << c.schedule << "\n";
        txt << "reproduce: " << repro(o, c) << "\n";
      } else {
        txt << head << ": MISMATCH\n" << run.last << "\n";
        if (!c.schedule.empty()) txt << "schedule:\n" << c.schedule << "\n";
        // Shrink: halve each chosen size while the case still fails the same way.
        Case best = c;
        for (bool progress = true; progress && !run.context_lost;) {
          progress = false;
          for (auto& [k, v] : best.overrides) {
            int64_t n = 0;
            try { n = std::stoll(v); } catch (const std::exception&) { continue; }
            if (n <= 1) continue;
            auto trial_over = best.overrides;
            trial_over[k] = std::to_string(n / 2);
            try {
              Case smaller = make_case(o, &tile, dt, trial, &trial_over);
              if (dt) smaller.schedule_seed = best.schedule_seed;
              if (run.run(smaller, trial) == r) {
                best = smaller;
                progress = true;
                break;
              }
            } catch (const UserError&) {
            }
          }
        }
        txt << "smallest failing case:" << describe(best) << "\nreproduce: " << repro(o, best) << "\n";
        rec.end_code = 1;
      }
      rec.text = txt.str();
      return rec;
    };

    int passed = 0, skipped = 0, no_form = 0, gpu_failed = 0, interp_failed = 0;
    std::string no_form_why;
    // Ctrl-C: the trial that was running is not counted; the sweep ends and says where it was.
    SigintGuard sigint;
    CaseProgress cp{o.file, o.trials};
    ProgressLine progress(&CaseProgress::describe, &cp);
    int interrupted_at = -1;
    auto interrupted = [&]() {
      out.flush();
      err << "interrupted: difftest " << o.file << " at case " << interrupted_at + 1 << "/" << o.trials << ": "
          << passed + skipped + no_form + gpu_failed + interp_failed << " case(s) done (" << passed << " passed, "
          << skipped << " compiled only)\n";
      return 130;
    };
    // Counts one trial's record and prints its text; true when the sweep ends here (a mismatch).
    auto tally = [&](const TrialRecord& rec) {
      if (sigint_pending()) {
        interrupted_at = rec.trial;
        return true;
      }
      cp.done = rec.trial + 1;
      switch (static_cast<Outcome>(rec.outcome)) {
        case Outcome::Pass: ++passed; break;
        case Outcome::Skipped: ++skipped; break;
        case Outcome::NoTritonForm:
          ++no_form;
          if (no_form_why.empty()) no_form_why = rec.text;
          return false;
        case Outcome::GpuFault:
        case Outcome::GpuFinding: ++gpu_failed; break;
        case Outcome::InterpFinding: ++interp_failed; break;
        case Outcome::Mismatch: break;
      }
      out << rec.text;
      return rec.end_code >= 0;
    };

    if (o.oracle == Oracle::Triton) {
#ifdef DTSIM_HAVE_CUDA
      o.cuda.arch = resolve_cuda_arch(o.cuda);
#endif
      RunControl ctl;
      Runner run{o, gpu, false, "", triton, &ctl};
      for (int t = 0; t < o.trials; ++t) {
        TrialRecord rec;
        try {
          rec = run_trial(run, t);
        } catch (const std::exception&) {  // python3 got the Ctrl-C too
          if (!sigint_pending()) throw;
          rec.trial = t;
        }
        if (tally(rec)) return interrupted_at >= 0 ? interrupted() : rec.end_code;
      }
    } else {
#ifdef DTSIM_HAVE_CUDA
      // The GPU is used only by worker processes: a fault that CUDA makes sticky (a trap, an illegal
      // address) ends the worker, not the sweep. The next trial starts in a fresh worker.
      WorkerSweep sweep = run_in_workers(o.trials, [&](int from, WorkerChannel& ch) {
        std::string w_why;
        bool w_gpu = cuda_available(&w_why);
        o.cuda.arch = resolve_cuda_arch(o.cuda);
        ch.hello(w_gpu, w_why);
        RunControl ctl;
        Runner run{o, w_gpu, false, "", "", &ctl};
        for (int t = from; t < o.trials; ++t) {
          TrialRecord rec;
          try {
            rec = run_trial(run, t);
          } catch (const std::exception&) {  // ptxas got the Ctrl-C too
            if (!sigint_pending()) throw;
            rec.trial = t;
          }
          ch.record(rec);
          if (rec.end_code >= 0 || run.context_lost || sigint_pending()) return;
        }
      }, [&](const TrialRecord& rec) { return tally(rec); },
         [&](int t, const std::string& how) {
        auto [c, trial] = case_for(t);
        TrialRecord rec;
        rec.trial = t;
        rec.outcome = static_cast<int>(Outcome::GpuFault);
        rec.text = head_of(t, c) + ": GPU FAULT\nthe process running this case " + how + "\n" +
                   (c.schedule.empty() ? "" : "schedule:\n" + c.schedule + "\n") + "reproduce: " + repro(o, c) + "\n";
        return rec;
      }, [] { return sigint_pending(); });
      if (sweep.stopped_at >= 0 && interrupted_at < 0) interrupted_at = sweep.stopped_at;
      if (interrupted_at >= 0) return interrupted();
      if (sweep.error_code >= 0) {
        err << sweep.error;
        return sweep.error_code;
      }
      if (sweep.end_code >= 0) return sweep.end_code;
      gpu = sweep.gpu;
      why = sweep.why;
#endif
    }
    std::string no_form_note = no_form ? "; " + std::to_string(no_form) + " case(s) with no Triton form not run (" + no_form_why + ")" : "";
    if (interp_failed) {
      out << "difftest " << o.file << ": " << interp_failed << "/" << o.trials << " case(s) with interpreter findings (above)";
      if (gpu_failed) out << ", " << gpu_failed << " failed on the GPU only";
      out << "; " << passed << " passed" << (skipped ? ", " + std::to_string(skipped) + " compiled only (GPU comparison SKIPPED: " + why + ")" : "") << "\n";
      return 1;
    }
    if (no_form == o.trials) {
      out << "difftest " << o.file << ": no case has a Triton form" << no_form_note << "\n";
      return 2;
    }
    if (!gpu && o.oracle == Oracle::Triton) {
      out << "difftest " << o.file << ": " << o.trials - no_form << " case(s) emitted as Triton and run on the interpreter; Triton comparison SKIPPED (" << why << ")" << no_form_note << "\n";
      return 0;
    }
    if (!gpu) {
      out << "difftest " << o.file << ": " << o.trials << " case(s) lowered, compiled and ptxas-checked; GPU comparison SKIPPED (" << why << ")\n";
      return 0;
    }
    if (o.oracle == Oracle::Triton) {
      out << "difftest " << o.file << ": " << passed << "/" << o.trials - no_form << " case(s) passed (interpreter == Triton"
          << (triton == "gpu" ? " on the GPU" : ", TRITON_INTERPRET=1") << ")" << no_form_note << "\n";
      return 0;
    }
    out << "difftest " << o.file << ": " << passed << "/" << o.trials << " case(s) passed (interpreter == GPU)";
    if (gpu_failed) out << "; " << gpu_failed << " case(s) failed on the GPU only (above)";
    out << "\n";
    return gpu_failed ? 1 : 0;
  } catch (const UserError& e) {
    err << e.render();
    return 2;
  } catch (const RuntimeFault& e) {
    err << e.render();
    return 1;
  }
}

// Where a buffer is stored: the first store (in statement order) whose pointer may point into it
// (ir/Analysis.h's provenance, so `c_ptrs = c + ...; store(c_ptrs, ...)` counts).
std::string store_site(const Module& m, const std::string& buf) {
  for (const Kernel& k : m.kernels) {
    const Param* p = k.find_param(buf);
    if (!p || p->kind != ParamKind::Pointer) continue;
    size_t index = static_cast<size_t>(p - k.params.data());
    PointerProvenance prov(k);
    const Stmt* site = nullptr;
    for_each_stmt(k, [&](const Stmt& s) {
      if (!site && s.kind == StmtKind::Store && prov.sources(*s.args[0]).has(index)) site = &s;
    });
    if (site) return format_diag(site->loc, "note", "'" + buf + "' is stored here");
  }
  return "";
}

}  // namespace dtsim
