// `dtsim run` / `dtsim debug`: one run of a program on the interpreter (optionally under the
// debugger) or on the GPU, then findings, summary, --check and --out files.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "driver/Driver.h"
#include "driver/Findings.h"
#include "host/Interrupt.h"
#include "host/Npy.h"
#include "host/Output.h"
#include "interp/RunControl.h"
#include "tools/Commands.h"
#include "driver/Summary.h"
#ifdef DTSIM_HAVE_CUDA
#include "cuda_backend/Cuda.h"
#endif

namespace dtsim {

namespace {

// Whether any kernel of the module has a print() statement (not executed by the CUDA backend).
bool has_print(const Module& m) {
  for (const Kernel& k : m.kernels)
    for (const Stmt* s : k.stmts)
      if (s->kind == StmtKind::Print) return true;
  return false;
}

// Every --out NAME must name a buffer of the program, and every --out file must be writable (its
// directory exists; not a directory, block device or dangling symlink; not the file of another
// --out), so that a long run does not end in a failed write. Checked before the run.
OutputSet check_outputs(const Module& m, const CliOptions& o) {
  OutputSet set;
  for (const auto& [name, file] : o.outs) {
    if (!find_buffer_param(m, name))
      throw UserError("--out " + name + "=" + file + ": the program has no buffer parameter '" + name + "'");
    set.add(file, "--out " + name);
  }
  return set;
}

// Where a stop outside the interpreter's run (filling inputs, writing outputs) is noticed: a signal
// or --timeout (counted from the start of the command, as the run counts it) throws WorkStopped.
struct PhasePoll {
  double timeout_s = 0;
  std::chrono::steady_clock::time_point t0;
  void operator()(const std::string& what) const {
    if (stop_signal_pending()) throw WorkStopped{false, what};
    if (timeout_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s)
      throw WorkStopped{true, what};
  }
};

// Runs the module once on fresh buffers. Under the debugger a `run`/`restart` in the REPL starts
// over with new buffers; `quit` returns false (stop quietly).
// `interrupted` is set to the message when Ctrl-C stopped the run.
bool run_once(const Program& p, const Bindings& b, const CliOptions& o, const Buffers& preset,
              DebugHooks* hooks, Buffers& bufs, RunReport& report, std::string& interrupted, const PhasePoll& poll) {
  for (;;) {
    bufs = make_buffers(p.module, b, o.seed, preset, [&](const std::string& name) { poll("while filling buffer '" + name + "' (before the run)"); });
    if (o.backend == Backend::Cuda) {
#ifdef DTSIM_HAVE_CUDA
      CudaOptions opt;
      opt.warp_specialize = o.warp_specialize;
      opt.cluster = o.cluster;
      opt.persistent = o.persistent;
      opt.persistent_ctas = o.persistent_ctas;
      opt.fp_fusion = o.fp_fusion;
      opt.approx_div = o.approx_div;
      opt.arch = o.arch;
      opt.bounds_checks = o.interp.sanitize != Sanitize::None;
      opt.conflict_checks = o.interp.sanitize == Sanitize::All || o.interp.sanitize == Sanitize::Conflicts;
      std::vector<CudaFinding> found = run_module_cuda(p.module, b, bufs, opt);
      std::cerr << unchecked_address_note(p.module, opt);
      for (const CudaFinding& cf : found) {
        report.findings.push_back(finding_of(cf));
        ++report.findings_count;
      }
      return true;
#else
      throw UserError("this dtsim was built without the CUDA backend (--backend=cuda)");
#endif
    }
    InterpOptions opt = o.interp;
    opt.hooks = hooks;
    if (hooks) opt.threads = 1;
    RunControl ctl;
    ctl.max_steps = o.max_steps;
    ctl.timeout_s = o.timeout_s;
    ctl.t0 = poll.t0;  // --timeout bounds the whole command: filling, the run, writing
    opt.control = &ctl;
    try {
      // The progress line would garble the debugger's prompt and prints; it runs without hooks only.
      std::optional<ProgressLine> progress;
      if (!hooks) progress.emplace(&ProgressLine::describe_run, &ctl);
      report = run_module(p.module, b, bufs, opt);
      progress.reset();
      if (ctl.interrupted) interrupted = ctl.interrupted_line();
      return true;
    } catch (const RestartRequest&) {
      continue;
    } catch (const QuitRequest&) {
      return false;
    }
  }
}

void print_findings(const RunReport& r, std::ostream& err) {
  for (const Finding& f : r.warnings) {  // (stores of equal values, accesses past a view's end)
    err << f.message;
    if (!f.message.empty() && f.message.back() != '\n') err << "\n";
  }
  for (const Finding& f : r.findings) {
    err << f.message;
    if (!f.message.empty() && f.message.back() != '\n') err << "\n";
  }
  int64_t hidden = r.findings_count - static_cast<int64_t>(r.findings.size());
  if (hidden > 0) err << "... and " << hidden << " more finding" << (hidden == 1 ? "" : "s") << " not shown\n";
}

// --check: every output Func of the DT program against the schedule-free reference, evaluated on
// the same inputs. Returns true when every output is within its dtype's tolerance.
bool check_against_reference(const Program& p, const Bindings& b, const CliOptions& o,
                             const std::map<std::string, std::vector<double>>& inputs, const Buffers& bufs,
                             std::ostream& out) {
  auto ref = eval_dt_reference(*p.dt, b, inputs, o.kernel);
  bool all = true;
  for (const auto& [name, values] : ref) {
    const Buffer* got = bufs.find(name);
    if (!got) internal_error("dtsim run --check", "the reference has an output '" + name + "' the lowered program lacks");
    bool pass = false;
    out << check_line(name, max_rel_err(*got, values), check_tolerance(got->dtype), &pass) << "\n";
    all = all && pass;
  }
  return all;
}

}  // namespace

int run_command(const CliOptions& o, std::ostream& out, std::ostream& err) {
  PhasePoll poll{o.timeout_s, std::chrono::steady_clock::now()};
  LaunchSpec spec = o.launch();
  Program p = compile(o.source(), spec, Stage::Lower);
  if (o.check && !p.is_dt()) throw UserError("--check needs a .dt file (it compares with the DT reference)");
  DebugConfig dbg = o.debug;
  if (o.backend != Backend::Cuda) dbg.break_at.insert(dbg.break_at.end(), p.break_at.begin(), p.break_at.end());
  bool debugging = o.debugging() || !dbg.break_at.empty();
  if (o.backend == Backend::Cuda && o.debugging())
    throw UserError("the debugger runs on the interpreter; drop --backend=cuda");
  compile_more(p, spec);
  const Bindings& b = p.bindings;
  OutputSet outputs = check_outputs(p.module, o);
  check_memory_budget(p.module, b);
  // From here on a signal (or --timeout) stops whichever phase is running, and leaves no output
  // or temporary file behind.
  SigintGuard sigint;
  try {
    Buffers preset = read_inputs(p, o.ins, poll);

    std::unique_ptr<DebugHooks> hooks;
    if (debugging) hooks = make_debugger(p.module, b, dbg, out);

    Buffers bufs;
    RunReport report;
    std::string interrupted;
    if (!run_once(p, b, o, preset, hooks.get(), bufs, report, interrupted, poll)) return 0;
    if (!interrupted.empty()) {
      print_findings(report, err);
      err << interrupted << "\n";
      return interrupted_exit_code();
    }

    std::map<std::string, std::vector<double>> inputs;
    if (o.check) {
      // The reference gets the inputs as they were before the run (inout buffers change).
      Buffers before = make_buffers(p.module, b, o.seed, preset, [&](const std::string& name) { poll("while filling buffer '" + name + "' for --check"); });
      for (const Buffer& buf : before.list)
        if (buf.io == BufIO::In || buf.io == BufIO::InOut) inputs[buf.name] = buffer_values(buf);
    }

    print_findings(report, err);
    out << outputs_summary(bufs);
    if (o.backend == Backend::Cuda) {
      out << (o.interp.sanitize != Sanitize::None ? "backend: cuda (bounds-checked)\n" : "backend: cuda (no bounds checks)\n");
      if (has_print(p.module)) err << "note: print() statements run only in the interpreter; the GPU run skipped them\n";
    }
    else out << sanitizer_line(o.interp.sanitize, report) << "\n";
    out.flush();
    if (!report.ok()) return 1;

    bool pass = !o.check || check_against_reference(p, b, o, inputs, bufs, out);
    // Every output or none: all written to temporary files, then renamed over their targets.
    std::vector<OutputContent> contents;
    for (const auto& [name, file] : o.outs) contents.push_back(npy_content(*bufs.find(name)));
    std::string writing;
    for (const auto& [name, file] : o.outs) writing += (writing.empty() ? "" : ", ") + file;
    outputs.write(contents, [&] { poll("while writing " + writing); });
    return pass ? 0 : 1;
  } catch (const WorkStopped& ws) {
    out.flush();
    if (ws.timeout) {
      char t[32];
      std::snprintf(t, sizeof t, "%g", o.timeout_s);
      err << "error: run stopped after " << t << " s (--timeout) " << ws.what << "; no output file written\n";
      return 1;
    }
    err << "interrupted: " << ws.what << "; no output file written\n";
    return interrupted_exit_code();
  }
}

}  // namespace dtsim
