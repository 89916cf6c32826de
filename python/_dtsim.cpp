// The Python binding `_dtsim` (python/dtsim/ wraps it): compiles a @triton.jit kernel of a .py file for
// one launch signature (the compile driver, src/driver; kept by the caller as a `Compiled` kernel) and
// runs it on the interpreter over the caller's arrays, bound through the buffer protocol without
// copies: the interpreter reads and writes the arrays' memory, in place as Triton does. Findings come
// back as dicts (python/dtsim raises KernelError); bad input raises _dtsim.CompileError with the
// frontend's located message. With backend "cuda" the same launch runs on the CUDA backend (the
// arrays copied to the GPU and back); without a usable GPU it raises _dtsim.BackendError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "driver/Driver.h"
#include "driver/Findings.h"
#include "interp/Interp.h"
#include "host/Interrupt.h"
#include "host/Output.h"
#include "interp/RunControl.h"
#include "interp/RunOptions.h"
#include "ir/Printer.h"
#include "ir/Verify.h"
#include "ir/Walk.h"
#include "repl/Debugger.h"
#include "viz/Viz.h"

namespace py = pybind11;

namespace dtsim {

namespace {

#ifdef DTSIM_HAVE_CUDA
// A kernel loaded on the GPU for one set of runtime scalar values and one bounds-check mode, and
// whose buffers it is bound to: `bound_by` is the CudaLauncher that uploaded them last (nullptr: a
// launch through run(), which binds them again every time).
struct CudaEntry {
  std::unique_ptr<CudaModuleRunner> runner;
  const void* bound_by = nullptr;
};
#endif

// A kernel lowered and verified for one launch signature (buffer types and shapes, constexprs,
// scalar types, grid). Runtime scalar values are re-bound per launch.
struct Compiled {
  Program program;  // the driver's result: the module and what the frontend kept (breakpoint_if calls)
  std::string tile_ir;
  // On the CUDA backend, a multiply and an add may be contracted into fma.rn (CudaOptions::fp_fusion):
  // the launched Triton kernel's enable_fp_fusion (Triton's default: on). The interpreter never fuses.
  bool fp_fusion = false;
  // On the CUDA backend, f32 division as Triton compiles `/` (div.full.f32, CudaOptions::approx_div):
  // kernels read through Triton's frontend whose TTIR has no tt.precise_divf (div_rn).
  bool approx_div = false;
  // On the CUDA backend, the schedule options a flag of `dtsim run` would set (CudaOptions: 1 asked,
  // -1 refused, 0 the kernel's own option; persistent_ctas 0: as many as fit): compile_file's.
  int warp_specialize = 0, cluster = 0, persistent = 0, persistent_ctas = 0;
  // compile_file's --arg values less those the frontend consumed (.dt sizes): a launch's scalars.
  std::map<std::string, std::string> launch_args;
  // The interpreter's state kept from one launch to the next (RunMemory: execution form, frame tiles,
  // conflict maps), used by one launch at a time (another thread's launch meanwhile runs without it).
  std::mutex memory_mu;
  RunMemory memory;
#ifdef DTSIM_HAVE_CUDA
  // The kernel loaded on the GPU, per runtime scalar values and bounds-check mode (a runner binds
  // them when it is made); a few are kept, so that repeated launches skip NVVM and the PTX load.
  std::mutex cuda_mu;
  std::map<std::pair<std::map<std::string, std::string>, int>, std::shared_ptr<CudaEntry>> cuda;
#endif
};

#ifdef DTSIM_HAVE_CUDA
// The runner of `c` for these scalar values and this sanitize mode, made (NVVM, PTX load) when
// there is none. The caller holds c.cuda_mu.
std::shared_ptr<CudaEntry> cuda_entry(Compiled& c, const Bindings& b, const std::map<std::string, std::string>& scalars, Sanitize san) {
  auto key = std::make_pair(scalars, static_cast<int>(san));
  auto it = c.cuda.find(key);
  if (it != c.cuda.end()) return it->second;
  if (c.cuda.size() >= 8) c.cuda.clear();  // frees their device memory (once no launcher holds them)
  CudaOptions opt;
  opt.bounds_checks = san != Sanitize::None;
  opt.conflict_checks = san == Sanitize::All || san == Sanitize::Conflicts;
  opt.fp_fusion = c.fp_fusion;
  opt.approx_div = c.approx_div;
  opt.warp_specialize = c.warp_specialize;
  opt.cluster = c.cluster;
  opt.persistent = c.persistent;
  opt.persistent_ctas = c.persistent_ctas;
  std::cerr << unchecked_address_note(c.program.module, opt);  // once per compiled launch
  auto e = std::make_shared<CudaEntry>();
  e->runner = std::make_unique<CudaModuleRunner>(c.program.module, b, opt);
  c.cuda.emplace(key, e);
  return e;
}

// After a fault a runner is unusable: it leaves the cache.
void drop_cuda_entry(Compiled& c, const std::shared_ptr<CudaEntry>& e) {
  for (auto it = c.cuda.begin(); it != c.cuda.end(); ++it)
    if (it->second == e) {
      c.cuda.erase(it);
      return;
    }
}
#endif

// The CUDA backend cannot be used (no driver, no GPU, or a build without the backend).
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* kind_name(Finding::Kind k) {
  switch (k) {
    case Finding::OutOfBounds: return "out-of-bounds";
    case Finding::Uninitialized: return "uninitialized-read";
    case Finding::WriteWrite: return "write-write-conflict";
    case Finding::ReadWrite: return "read-write-conflict";
    case Finding::AssertFailed: return "assert-failed";
    case Finding::Fault: return "fault";
  }
  return "fault";
}

Scalar dtype_of(const std::string& name, const std::string& buf) {
  auto dt = parse_scalar(name);
  if (!dt) throw UserError("buffer '" + buf + "': element type '" + name + "' is not supported (i1, i8, i16, i32, i64, f8e4m3, f8e5m2, f8e4b15, f8e4b8, f8e5b16, f16, bf16, f32, f64)");
  return *dt;
}

std::shared_ptr<Compiled> compile_py(const std::string& path, const std::string& kernel, const std::map<std::string, std::string>& args,
                                     const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>& buffers,
                                     const std::vector<std::string>& grid, const std::map<std::string, std::string>& sources,
                                     bool fp_fusion, bool hint_checks, bool undefined_lanes,
                                     const std::vector<std::string>& module_roots,
                                     const std::map<std::string, std::map<std::string, std::string>>& host_values) {
  LaunchSpec spec;
  spec.module_roots = module_roots;
  spec.host_values = host_values;
  spec.kernel = kernel;
  spec.args = args;
  spec.grid = grid;
  spec.sources = sources;
  spec.hint_checks = hint_checks;
  spec.undefined_lanes = undefined_lanes;
  for (const auto& [name, dtype, shape] : buffers) {
    bool u = dtype == "u8" || dtype == "u16" || dtype == "u32" || dtype == "u64";  // unsigned: the signless type of the width
    spec.buffers.push_back(BufferDecl{name, dtype_of(u ? "i" + dtype.substr(1) : dtype, name), shape, u});
  }
  auto c = std::make_shared<Compiled>();
  c->program = compile(Source{path, FileKind::Py, std::nullopt}, spec);
  c->tile_ir = print_module(c->program.module);
  c->fp_fusion = fp_fusion;
  // f32 division as Triton compiles the kernel: `/` is div.full.f32 on the GPU unless the kernel
  // divides with tl.div_rn (tt.precise_divf), as the TTIR reader's launches get it, so the two readers agree.
  c->approx_div = !c->program.precise_div;
  return c;
}

// A kernel as the installed Triton's frontend lowered it (TTIR text), for one launch: the runtime
// parameters' names in order, each pointer's buffer, the grid.
std::shared_ptr<Compiled> compile_ttir(const std::string& text, const std::string& name, const std::string& kernel,
                                       const std::vector<std::string>& arg_names,
                                       const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>& buffers,
                                       const std::vector<int64_t>& grid, int num_warps, int num_stages, bool debug,
                                       bool fp_fusion, const std::map<std::string, int64_t>& starts, bool hint_checks,
                                       bool undefined_lanes, const std::set<std::string>& nan_padded) {
  LaunchSpec spec;
  TtirLaunch& launch = spec.ttir;
  launch.nan_padded = nan_padded;
  launch.kernel = kernel;
  launch.arg_names = arg_names;
  launch.grid = grid;
  launch.num_warps = num_warps;
  launch.num_stages = num_stages;
  launch.debug = debug;
  spec.hint_checks = hint_checks;
  spec.undefined_lanes = undefined_lanes;
  for (const auto& [bname, dtype, shape] : buffers) {
    auto st = starts.find(bname);
    launch.buffers.push_back(TtirBuffer{bname, dtype_of(dtype, bname), shape, st == starts.end() ? 0 : st->second});
  }
  auto c = std::make_shared<Compiled>();
  c->program = compile(Source{name, FileKind::Ttir, text}, spec);
  c->tile_ir = print_module(c->program.module);
  c->fp_fusion = fp_fusion;
  c->approx_div = text.find("tt.precise_divf") == std::string::npos;
  return c;
}

// A .tile or .dt file compiled for launches at these --arg values (sizes, constexprs, scalars), with
// `schedule`: the CUDA backend's schedule options as `dtsim run`'s flags set them (warp_specialize,
// cluster, persistent: 1 asked, -1 refused; persistent_ctas: N). Its launches take launch_args (these
// values less the .dt sizes lowered in) as their scalars and its buffers() as device arrays.
std::shared_ptr<Compiled> compile_file(const std::string& path, const std::map<std::string, std::string>& args,
                                       const std::string& kernel, const std::map<std::string, int>& schedule,
                                       bool fp_fusion, bool approx_div) {
  FileKind kind = kind_for_path(path);
  if (kind != FileKind::Tile && kind != FileKind::Dt)
    throw UserError(path + ": error: compile_file takes a .tile or .dt file (a .py kernel launches through @triton.jit)");
  LaunchSpec spec;
  spec.kernel = kernel;
  spec.args = args;
  auto c = std::make_shared<Compiled>();
  c->program = compile(Source{path, kind, std::nullopt}, spec);
  c->tile_ir = print_module(c->program.module);
  c->fp_fusion = fp_fusion;
  c->approx_div = approx_div;
  for (const auto& [name, v] : args)
    if (!c->program.size_args.count(name)) c->launch_args[name] = v;
  for (const auto& [name, v] : schedule) {
    bool flag = name == "warp_specialize" || name == "cluster" || name == "persistent";
    if (flag && (v < -1 || v > 1)) throw py::value_error("schedule option " + name + ": 1 (asked), -1 (refused) or 0");
    if (name == "warp_specialize") c->warp_specialize = v;
    else if (name == "cluster") c->cluster = v;
    else if (name == "persistent") c->persistent = v;
    else if (name == "persistent_ctas" && v >= 0) c->persistent_ctas = v;
    else throw py::value_error("schedule option " + name + ": not one of warp_specialize, cluster, persistent, persistent_ctas (>= 0)");
  }
  return c;
}

// The buffers a launch of `c` at these values uses: (name, dtype, shape, io) of every pointer
// parameter of its kernels, in the order the module first names them.
std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, std::string>> buffers_of(
    const Compiled& c, const std::map<std::string, std::string>& scalars) {
  const Module& m = c.program.module;
  Bindings b = bind_params(m, scalars);
  std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, std::string>> out;
  std::set<std::string> seen;
  for (const Kernel& k : m.kernels)
    for (const Param& p : k.params) {
      if (p.kind != ParamKind::Pointer || !seen.insert(p.name).second) continue;
      std::vector<int64_t> shape;
      for (const ExprP& e : p.shape) shape.push_back(eval_param_expr(e, b).as_int());
      out.emplace_back(p.name, scalar_name(p.dtype), shape, bufio_name(p.io));
    }
  return out;
}

// The launch options, checked by the checker `dtsim run`'s flags use (interp/RunOptions.h), so that
// dtsim.config() and `python -m dtsim` accept what the CLI accepts. Raises ValueError.
RunSettings run_settings(const std::map<std::string, std::string>& options) {
  RunSettings s;
  for (const auto& [name, value] : options) {
    std::string err = set_run_option(s, name, value);
    if (!err.empty()) throw py::value_error(name + " " + err);
  }
  return s;
}

py::dict finding_dict(const Finding& f) {
  py::dict d;
  d["kind"] = kind_name(f.kind);
  d["message"] = f.message;
  d["file"] = f.loc.valid() ? Sources::name(f.loc.file) : std::string();
  d["line"] = f.loc.line;
  d["pid"] = py::make_tuple(f.pid[0], f.pid[1], f.pid[2]);
  d["buffer"] = f.buffer;
  d["index"] = f.flat_index;
  d["lanes"] = f.lanes;
  return d;
}

// A launch on the CUDA backend over `bufs` (views of the caller's arrays): uploaded, the kernel run,
// every stored-to buffer downloaded into the arrays, as `dtsim run --backend=cuda` does; the buffers
// in `on_device` are the caller's GPU memory, bound by address (no copies). Unless `san` is None,
// accesses are bounds-checked on the GPU (all, conflicts: and conflicts checked) and a failure comes
// back as a finding.
py::dict run_cuda(Compiled& c, const Bindings& b, const std::map<std::string, std::string>& scalars, Buffers& bufs, Sanitize san,
                  const std::map<std::string, uint64_t>& on_device) {
#ifdef DTSIM_HAVE_CUDA
  std::string why;
  if (!cuda_available(&why))
    throw BackendError(why + ": dtsim.config(backend='cuda') needs a CUDA driver and a GPU (backend='interp' runs on the CPU)");
  std::vector<CudaFinding> found;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(c.cuda_mu);
    std::shared_ptr<CudaEntry> e;
    try {
      e = cuda_entry(c, b, scalars, san);
      CudaModuleRunner& r = *e->runner;
      e->bound_by = nullptr;
      r.upload(bufs, nullptr, on_device);
      for (size_t i = 0; i < r.kernel_count() && found.empty(); ++i) {
        r.launch(i);
        r.synchronize("kernel '" + r.kernel_name(i) + "'");
        found = r.check_status(i, bufs);
      }
      r.download(bufs);
    } catch (...) {
      if (e) drop_cuda_entry(c, e);  // a runner is unusable after a fault
      throw;
    }
  }
  py::list findings;
  for (const CudaFinding& cf : found) findings.append(finding_dict(finding_of(cf)));
  py::dict out;
  out["instances"] = -1;  // the GPU does not count them
  out["findings"] = findings;
  out["findings_count"] = static_cast<int64_t>(found.size());
  return out;
#else
  (void)c, (void)b, (void)scalars, (void)bufs, (void)san, (void)on_device;
  throw BackendError("this dtsim was built without the CUDA backend: dtsim.config(backend='cuda') is not available");
#endif
}

using DeviceArrays = std::vector<std::tuple<std::string, uint64_t, std::string, std::vector<int64_t>>>;

// The pointer parameter `name` of a module's kernels (the first kernel that takes it); UserError when
// none does.
const Param* buffer_param(const Module& m, const std::string& name) {
  for (const Kernel& k : m.kernels)
    if (const Param* p = k.find_param(name); p && p->kind == ParamKind::Pointer) return p;
  throw UserError((m.kernels.size() == 1 ? "kernel '" + m.kernels.at(0).name + "'" : std::string("the module")) +
                  " has no pointer parameter '" + name + "'");
}

// The caller's GPU memory (name, device address, dtype, shape) as buffers of `preset` without host
// memory; returns the addresses by name (CudaModuleRunner::upload's `on_device`).
std::map<std::string, uint64_t> bind_device_arrays(const Module& m, const Bindings& b, const DeviceArrays& device_arrays, Buffers& preset) {
  std::map<std::string, uint64_t> on_device;
  for (const auto& [name, ptr, dtype, shape] : device_arrays) {
    const Param* prm = buffer_param(m, name);
    Buffer buf;
    buf.dtype = dtype_of(dtype, name);
    for (const ExprP& e : prm->shape) buf.shape.push_back(eval_param_expr(e, b).as_int());
    if (shape_numel(shape) != buf.numel() || buf.dtype != prm->dtype)
      throw UserError("buffer '" + name + "' does not match the compiled kernel's parameter (" + scalar_name(prm->dtype) + ")");
    preset.list.push_back(Buffer::view(name, buf.dtype, buf.shape, prm->io, nullptr));
    on_device[name] = ptr;
  }
  return on_device;
}

#ifdef DTSIM_HAVE_CUDA
// Repeated launches of one compiled kernel whose every buffer is the caller's GPU memory (python/dtsim
// makes one per launch signature and scalar values): the runner, the buffers and the order of the
// addresses are kept, so a launch only binds the addresses (when they changed, another launcher or
// run() used the runner in between, or another thread launches) and launches every kernel on the caller's stream. It synchronizes
// only where a kernel can report (a status buffer: asserts, bounds checks; conflict shadow words);
// otherwise it returns at once, and a fault of the kernel surfaces at the next synchronize of the
// caller (torch.cuda.synchronize) or at the next launch here, which then names it.
struct CudaLauncher {
  std::shared_ptr<Compiled> c;
  std::shared_ptr<CudaEntry> entry;
  std::map<std::string, std::string> scalars;
  Sanitize san = Sanitize::None;
  Bindings b;
  Buffers bufs;
  std::vector<std::string> names;  // of the addresses launch() takes, in order
  std::map<std::string, uint64_t> on_device;
  std::vector<uint64_t> last;
  std::thread::id last_thread;  // upload() makes the context current on the launching thread

  py::object launch(const std::vector<uint64_t>& ptrs, uint64_t stream) {
    if (ptrs.size() != names.size())
      throw UserError("a launch of kernel '" + c->program.module.kernels.at(0).name + "' with " + std::to_string(ptrs.size()) +
                      " addresses, where " + std::to_string(names.size()) + " are bound");
    std::vector<CudaFinding> found;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(c->cuda_mu);
      if (!entry) entry = cuda_entry(*c, b, scalars, san);  // the runner after a fault is a new one
      CudaModuleRunner& r = *entry->runner;
      try {
        if (entry->bound_by != this || ptrs != last || std::this_thread::get_id() != last_thread) {
          for (size_t i = 0; i < names.size(); ++i) on_device[names[i]] = ptrs[i];
          r.upload(bufs, nullptr, on_device);
          entry->bound_by = this;
          last = ptrs;
          last_thread = std::this_thread::get_id();
        }
        for (size_t i = 0; i < r.kernel_count() && found.empty(); ++i) {
          try {
            r.launch(i, reinterpret_cast<void*>(stream));
          } catch (const UserError&) {
            // A fault of an earlier launch is sticky: the launch fails with it. The synchronize names
            // it (and makes the context usable again); any other launch failure stands as it is.
            r.synchronize("a kernel launched earlier (before kernel '" + r.kernel_name(i) + "')");
            throw;
          }
          if (r.reports(i)) {
            r.synchronize("kernel '" + r.kernel_name(i) + "'");
            found = r.check_status(i, bufs);
          }
        }
      } catch (...) {
        drop_cuda_entry(*c, entry);
        entry.reset();
        throw;
      }
    }
    if (found.empty()) return py::none();
    py::list findings;
    for (const CudaFinding& cf : found) findings.append(finding_dict(finding_of(cf)));
    py::dict out;
    out["instances"] = -1;
    out["findings"] = findings;
    out["findings_count"] = static_cast<int64_t>(found.size());
    return out;
  }
};
#endif

// A CudaLauncher for `c` with these scalar values and device arrays, or None when a buffer of the run
// is not among the device arrays (host memory to copy: run() does that launch).
py::object cuda_launcher(const std::shared_ptr<Compiled>& c, const std::map<std::string, std::string>& scalars,
                         const DeviceArrays& device_arrays, const std::string& sanitize) {
#ifdef DTSIM_HAVE_CUDA
  std::string why;
  if (!cuda_available(&why))
    throw BackendError(why + ": dtsim.config(backend='cuda') needs a CUDA driver and a GPU (backend='interp' runs on the CPU)");
  auto l = std::make_shared<CudaLauncher>();
  const Module& m = c->program.module;
  l->c = c;
  l->scalars = scalars;
  l->b = bind_params(m, scalars);
  RunSettings settings = run_settings({{"sanitize", sanitize}});
  InterpOptions opt;
  settings.apply(opt);
  l->san = opt.sanitize;
  Buffers preset;
  l->on_device = bind_device_arrays(m, l->b, device_arrays, preset);
  l->bufs = make_buffers(m, l->b, 0, std::move(preset));
  for (const Buffer& buf : l->bufs.list)
    if (!l->on_device.count(buf.name)) return py::none();
  for (const auto& d : device_arrays) l->names.push_back(std::get<0>(d));
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(c->cuda_mu);
    l->entry = cuda_entry(*c, l->b, scalars, l->san);
  }
  return py::cast(l);
#else
  (void)c, (void)scalars, (void)device_arrays, (void)sanitize;
  throw BackendError("this dtsim was built without the CUDA backend: dtsim.config(backend='cuda') is not available");
#endif
}

// The debugger's state across the launches of this process's script (breakpoints, displays, what
// `delete`/`disable`/`condition` did): one script per process.
std::shared_ptr<DebugMemory>& debug_memory() {
  static std::shared_ptr<DebugMemory> mem = std::make_shared<DebugMemory>();
  return mem;
}

// One launch over the arrays (name, buffer-protocol object, dtype name): each array is bound without a
// copy (a Buffer::view of its memory, kept alive by `infos` for the run), so the interpreter reads and
// writes the caller's memory in place and a run stopped by a finding leaves what it wrote up to there.
// Python hands over C-contiguous, aligned, native-byte-order arrays (python/dtsim converts the others).
// The GIL is released while the kernel runs; Ctrl-C (SIGINT, caught by a SigintGuard for the run)
// stops it within a few thousand statements, also inside a loop of one instance, and raises
// KeyboardInterrupt naming where it stopped; under the debugger's REPL it returns to the prompt.
// Returns {"instances": N, "findings": [...], "findings_count": N, "quit": bool} ("quit": the REPL's
// quit or end of input ended the run; "findings" are then those the session saw).
py::dict run(Compiled& c, const std::map<std::string, std::string>& scalars,
             const std::vector<std::tuple<std::string, py::buffer, std::string>>& arrays, const std::string& sanitize,
             int threads, const std::string& order, bool keep_going, const std::vector<std::string>& break_if,
             const std::vector<std::string>& break_at,
             const std::vector<std::tuple<std::string, std::vector<std::string>, int>>& print_if, const std::string& backend,
             const std::vector<std::tuple<std::string, uint64_t, std::string, std::vector<int64_t>>>& device_arrays,
             int64_t max_steps, double timeout, int launch, const std::vector<std::string>& host_stack,
             const std::string& viz, const std::vector<std::tuple<std::string, py::buffer, std::string>>& memory,
             const std::map<std::string, int64_t>& slack, const std::string& equal_stores) {
  const Module& m = c.program.module;
  Bindings b = bind_params(m, scalars);
  std::map<std::string, std::string> options{{"sanitize", sanitize}, {"threads", std::to_string(threads)}, {"order", order},
                                             {"backend", backend}, {"equal_stores", equal_stores}};
  if (max_steps) options["max_steps"] = std::to_string(max_steps);
  if (timeout) options["timeout"] = std::to_string(timeout);
  RunSettings settings = run_settings(options);
  InterpOptions opt;
  settings.apply(opt);
  opt.keep_going = keep_going;
  bool cuda = settings.backend == "cuda";
  if (cuda && (!break_if.empty() || !break_at.empty() || !print_if.empty() || !c.program.break_at.empty()))
    throw UserError("the debugger (break_if, break_at, print_if, breakpoint_if) runs on the interpreter; use backend='interp'");
  if (!viz.empty() && cuda) throw UserError("viz draws an interpreter run; use backend='interp'");
  if (!viz.empty()) check_output_target(viz, "viz");  // before the run, not after it
  Buffers preset;
  std::vector<py::buffer_info> infos;
  for (const auto& [name, obj, dtype] : arrays) {
    const Param* prm = buffer_param(m, name);
    py::buffer_info info = obj.request(prm->io != BufIO::In);
    Buffer buf;  // only its type and shape: the run's buffer is a view of the array's memory
    buf.dtype = dtype_of(dtype, name);
    for (const ExprP& e : prm->shape) buf.shape.push_back(eval_param_expr(e, b).as_int());
    size_t bytes = buf.size_bytes();
    if (static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize) != bytes || buf.dtype != prm->dtype)
      throw UserError("buffer '" + name + "' does not match the compiled kernel's parameter (" + scalar_name(prm->dtype) + ")");
    if (bytes && reinterpret_cast<uintptr_t>(info.ptr) % static_cast<uintptr_t>(scalar_bytes(buf.dtype)))
      throw UserError("buffer '" + name + "': the array's data is not aligned to its element size");
    py::ssize_t step = info.itemsize;
    for (size_t d = info.shape.size(); d-- > 0; step *= info.shape[d])
      if (info.shape[d] > 1 && info.strides[d] != step) throw UserError("buffer '" + name + "': the array is not C-contiguous");
    preset.list.push_back(Buffer::view(name, buf.dtype, buf.shape, prm->io, info.ptr));
    if (auto it = slack.find(name); it != slack.end() && it->second > 0 && !cuda) preset.list.back().slack = it->second;
    infos.push_back(std::move(info));
  }
  // GPU memory (backend "cuda"): a buffer without host memory, bound to the device address.
  if (!cuda && !device_arrays.empty())
    throw UserError("argument '" + std::get<0>(device_arrays[0]) + "' is GPU memory; the interpreter needs host arrays");
  std::map<std::string, uint64_t> on_device = bind_device_arrays(m, b, device_arrays, preset);
  if (cuda && !memory.empty()) throw UserError("memory reached through int_to_ptr runs on the interpreter; use backend='interp'");
  if (cuda) {
    Buffers bufs = make_buffers(m, b, 0, std::move(preset));
    return run_cuda(c, b, scalars, bufs, opt.sanitize, on_device);
  }
  DebugConfig dbg;
  dbg.break_if = break_if;
  dbg.break_at = break_at;
  dbg.break_at.insert(dbg.break_at.end(), c.program.break_at.begin(), c.program.break_at.end());
  for (const auto& [cond, exprs, at] : print_if) {
    if (exprs.empty()) throw UserError("print_if '" + cond + "' has no expression to print");
    dbg.print_if.push_back({cond, exprs, at > 0 ? std::optional<int>(at) : std::nullopt});
  }
  dbg.memory = debug_memory();
  dbg.host_stack = host_stack;
  dbg.launch = launch;
  std::unique_ptr<DebugHooks> hooks;
  if (!dbg.break_if.empty() || !dbg.break_at.empty() || !dbg.print_if.empty() || !dbg.memory->bps.empty()) {
    if (!viz.empty())
      throw UserError("viz cannot be combined with break_if, break_at, print_if or breakpoint_if (the REPL's viz command draws "
                      "the running instance's footprint)");
    hooks = make_debugger(m, b, dbg, std::cout);
    opt.hooks = hooks.get();
    opt.threads = 1;
  }
  // viz: every load and store recorded (one thread), the picture written after the run, findings or not.
  std::optional<VizRecorder> recorder;
  if (!viz.empty()) {
    recorder.emplace(std::nullopt);
    opt.hooks = &*recorder;
    opt.threads = 1;
  }
  RunControl ctl;
  ctl.max_steps = settings.max_steps;
  ctl.timeout_s = settings.timeout_s;
  opt.control = &ctl;
  Buffers bufs = make_buffers(m, b, 0, std::move(preset));
  // Memory the kernel reaches only through addresses (int_to_ptr): buffers beside the parameters',
  // found by the Python package (1-D views of whole storages), with their data as it is.
  for (const auto& [name, obj, dtype] : memory) {
    py::buffer_info info = obj.request(true);
    Scalar dt = dtype_of(dtype, name);
    if (info.itemsize != scalar_bytes(dt) || info.ndim != 1 || (info.shape[0] > 1 && info.strides[0] != info.itemsize))
      throw UserError("memory '" + name + "': a 1-D contiguous array of " + scalar_name(dt) + " is expected");
    bufs.list.push_back(Buffer::view(name, dt, {static_cast<int64_t>(info.shape[0])}, BufIO::InOut, info.ptr));
    bufs.list.back().defined = true;
    infos.push_back(std::move(info));
  }
  RunReport report;
  bool quit = false;
  int signal_taken = 0;
  std::unique_lock<std::mutex> memory_lock(c.memory_mu, std::try_to_lock);
  if (memory_lock.owns_lock()) opt.memory = &c.memory;
  {
    py::gil_scoped_release release;
    SigintGuard sigint;  // Python's handler would only set a flag that nothing reads during the run
    ctl.start();
    bool again = true;
    while (again) {
      again = false;
      try {
        report = run_module(m, b, bufs, opt);
      } catch (const RestartRequest&) {
        again = true;
      } catch (const QuitRequest&) {
        quit = true;
      }
    }
    std::cout.flush();
    if (ctl.interrupted) signal_taken = pending_signal();
  }
  if (ctl.interrupted && signal_taken && signal_taken != SIGINT) {
    // SIGTERM or SIGHUP: delivered again now that the program's own handlers are back (the default
    // ends the process, as it would have without the run).
    ::raise(signal_taken);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  if (ctl.interrupted) {
    std::string line = ctl.interrupted_line();
    size_t cut = line.find("; no output file written");
    if (cut != std::string::npos) line.erase(cut);
    PyErr_SetString(PyExc_KeyboardInterrupt, line.c_str());
    throw py::error_already_set();
  }
  if (recorder) {
    VizOptions vo;
    vo.html = viz.size() > 5 && viz.compare(viz.size() - 5, 5, ".html") == 0;
    const Kernel& k = m.kernels.at(0);
    vo.file = k.loc.valid() ? Sources::name(k.loc.file) : "";
    vo.order = order;
    std::string picture = render_viz(*recorder, bufs, vo);
    std::string why;
    if (!write_viz_file(viz, picture, &why)) throw UserError(why);
    std::cerr << "viz: wrote " << viz << " (" << picture.size() << " bytes";
    if (report.findings_count)
      std::cerr << "; " << report.findings_count << " sanitizer finding" << (report.findings_count == 1 ? "" : "s") << " drawn";
    std::cerr << ")\n";
  }
  py::list findings;
  const std::vector<Finding>& found = quit ? dbg.memory->findings : report.findings;
  for (const Finding& f : found) findings.append(finding_dict(f));
  py::dict out;
  out["instances"] = report.instances;
  out["findings"] = findings;
  out["findings_count"] = quit ? static_cast<int64_t>(found.size()) : report.findings_count;
  out["quit"] = quit;
  py::list warnings;
  for (const Finding& f : report.warnings) warnings.append(finding_dict(f));
  out["warnings"] = warnings;
  return out;
}

}  // namespace

}  // namespace dtsim

PYBIND11_MODULE(_dtsim, m) {
  using namespace dtsim;
  m.doc() = "dtsim's C++ core: the Triton frontend and the interpreter (use the dtsim package)";
  static py::exception<UserError> compile_error(m, "CompileError");
  static py::exception<BackendError> backend_error(m, "BackendError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UserError& e) {
      std::string msg = e.render();
      if (!msg.empty() && msg.back() == '\n') msg.pop_back();
      compile_error(msg.c_str());
    } catch (const BackendError& e) {
      backend_error(e.what());
    }
  });
  py::class_<Compiled, std::shared_ptr<Compiled>>(m, "Compiled")
      .def_property_readonly("tile_ir", [](const Compiled& c) { return c.tile_ir; })
      .def_property_readonly("fp_fusion", [](const Compiled& c) { return c.fp_fusion; })
      .def_property_readonly("approx_div", [](const Compiled& c) { return c.approx_div; })
      .def_property_readonly("kernel", [](const Compiled& c) { return c.program.module.kernels.at(0).name; })
      .def_property_readonly("has_breakpoints", [](const Compiled& c) { return !c.program.break_at.empty(); })
      .def_property_readonly("makes_pointers",  // int_to_ptr: addresses the launch passes need their memory found
                             [](const Compiled& c) {
                               for (const Kernel& k : c.program.module.kernels)
                                 if (any_expr(k.body, [](const Expr& e) { return e.kind == ExprKind::IntToPtr; })) return true;
                               return false;
                             })
      .def_property_readonly("launch_args", [](const Compiled& c) { return c.launch_args; },
                             "compile_file's --arg values less those lowered into the program (.dt sizes): the "
                             "scalars its launches and buffers() take.")
      .def("buffers", &buffers_of, py::arg("scalars") = std::map<std::string, std::string>{},
           "(name, dtype, shape, io) of every buffer a launch at these scalar values uses.")
      .def_property_readonly("outputs", [](const Compiled& c) {
        std::vector<std::string> out;
        for (const Param& p : c.program.module.kernels.at(0).params)
          if (p.kind == ParamKind::Pointer && p.io != BufIO::In) out.push_back(p.name);
        return out;
      });
  m.def("compile", &compile_py, py::arg("path"), py::arg("kernel"), py::arg("args"), py::arg("buffers"), py::arg("grid"),
        py::arg("sources") = std::map<std::string, std::string>{}, py::arg("fp_fusion") = false, py::arg("hint_checks") = false,
        py::arg("undefined_lanes") = false, py::arg("module_roots") = std::vector<std::string>{},
        py::arg("host_values") = std::map<std::string, std::map<std::string, std::string>>{},
        "Lowers and verifies kernel `kernel` of `path` for one launch signature (`module_roots`: folders where "
        "imports of helper modules are looked for after the kernel file's own, as sys.path; `sources`: path -> text to use "
        "instead of the file, the source as it was when the kernel was decorated; `fp_fusion`: on the CUDA "
        "backend, let a multiply and an add contract into fma.rn, as Triton's enable_fp_fusion; `hint_checks`: "
        "tl.multiple_of / max_contiguous / max_constancy become asserts that they hold; `undefined_lanes`: "
        "lanes a tl.load without `other` leaves undefined are checked where they matter; `host_values`: module file -> "
        "name -> \"tl.NAME\" for module-level names host code bound to a Triton function).");
  m.def("compile_file", &compile_file, py::arg("path"), py::arg("args") = std::map<std::string, std::string>{},
        py::arg("kernel") = std::string(), py::arg("schedule") = std::map<std::string, int>{},
        py::arg("fp_fusion") = false, py::arg("approx_div") = false,
        "Compiles a .tile or .dt file at these --arg values (`schedule`: the CUDA backend's warp_specialize, "
        "cluster, persistent (1 asked, -1 refused) and persistent_ctas; `fp_fusion`, `approx_div`: as "
        "`dtsim run`'s --fp-fusion and --approx-div), for cuda_launcher over device arrays shaped as "
        "buffers(args) says, or run().");
  m.def("compile_ttir", &compile_ttir, py::arg("text"), py::arg("name"), py::arg("kernel"), py::arg("arg_names"),
        py::arg("buffers"), py::arg("grid"), py::arg("num_warps") = 4, py::arg("num_stages") = 3, py::arg("debug") = false,
        py::arg("fp_fusion") = false, py::arg("starts") = std::map<std::string, int64_t>{}, py::arg("hint_checks") = false,
        py::arg("undefined_lanes") = false, py::arg("nan_padded") = std::set<std::string>{},
        "Lowers and verifies a kernel given as TTIR (from the installed Triton's frontend) for one launch "
        "(`fp_fusion`: on the CUDA backend, let a multiply and an add contract into fma.rn, the launch's "
        "enable_fp_fusion; `starts`: pointer argument -> the element of its buffer it addresses, for "
        "views with negative strides; `hint_checks`: the tt.divisibility / contiguity / constancy hints become "
        "asserts that they hold; `undefined_lanes`: lanes a tt.load without `other` leaves undefined are "
        "checked where they matter).");
  m.def("run", &run, py::arg("compiled"), py::arg("scalars"), py::arg("arrays"), py::arg("sanitize") = "all",
        py::arg("threads") = 1, py::arg("order") = "sequential", py::arg("keep_going") = false,
        py::arg("break_if") = std::vector<std::string>{}, py::arg("break_at") = std::vector<std::string>{},
        py::arg("print_if") = std::vector<std::tuple<std::string, std::vector<std::string>, int>>{},
        py::arg("backend") = "interp",
        py::arg("device_arrays") = std::vector<std::tuple<std::string, uint64_t, std::string, std::vector<int64_t>>>{},
        py::arg("max_steps") = 0, py::arg("timeout") = 0.0, py::arg("launch") = 0,
        py::arg("host_stack") = std::vector<std::string>{}, py::arg("viz") = std::string(),
        py::arg("memory") = std::vector<std::tuple<std::string, py::buffer, std::string>>{},
        py::arg("slack") = std::map<std::string, int64_t>{}, py::arg("equal_stores") = "warn",
        "Runs a compiled kernel on the interpreter (or the CUDA backend) over the given arrays, in place; `viz`: write the "
        "picture of the run (as `dtsim viz`) to this .svg/.html file; `memory`: (name, 1-D array, dtype) buffers the "
        "kernel reaches only through addresses (int_to_ptr); `slack`: array name -> elements of memory past its end "
        "that the caller's storage still holds (the interpreter runs accesses there and reports them in \"warnings\"); "
        "`equal_stores`: 'warn' or 'conflict', what two instances' stores of bit-identical values to one element are.");
#ifdef DTSIM_HAVE_CUDA
  py::class_<CudaLauncher, std::shared_ptr<CudaLauncher>>(m, "CudaLauncher")
      .def("launch", &CudaLauncher::launch, py::arg("ptrs"), py::arg("stream") = 0,
           "Launches the kernel with the buffers at these device addresses (in the order of cuda_launcher's "
           "device_arrays) on `stream` (a CUstream; 0: the legacy default stream). None, or the result dict "
           "of run() when a check found something.");
#endif
  m.def("cuda_launcher", &cuda_launcher, py::arg("compiled"), py::arg("scalars"), py::arg("device_arrays"),
        py::arg("sanitize") = "all",
        "A CudaLauncher for repeated launches of `compiled` on the GPU with these scalar values over device "
        "arrays (name, address, dtype, shape), or None when the run has buffers outside them.");
  m.def(
      "check_option",
      [](const std::string& name, const std::string& value) {
        RunSettings s;
        return set_run_option(s, name, value);
      },
      py::arg("name"), py::arg("value"),
      "'' when VALUE is valid for run option NAME (sanitize, threads, order, keep_going, equal_stores, max_steps, timeout, "
      "backend), else what is wrong with it; the check `dtsim run`'s flags use.");
  m.def(
      "set_print_options",
      [](int precision, int linewidth, int64_t threshold, int edgeitems) {
        PrintOptions& po = print_options();
        po.precision = std::clamp(precision, 0, 17);
        po.linewidth = std::max(linewidth, 10);
        po.threshold = std::max<int64_t>(threshold, 0);
        po.edgeitems = std::max(edgeitems, 1);
      },
      py::arg("precision"), py::arg("linewidth"), py::arg("threshold"), py::arg("edgeitems"),
      "How values print (print(), print_if, the REPL): numpy's np.set_printoptions settings.");
  m.def(
      "debugger_active", []() { return !debug_memory()->bps.empty(); },
      "True when breakpoints of earlier launches are kept (the next launch may stop).");
  m.def(
      "reset_debugger", []() { debug_memory() = std::make_shared<DebugMemory>(); },
      "Forgets the debugger's breakpoints and displays kept across launches.");
  m.def(
      "cuda_available",
      []() {
#ifdef DTSIM_HAVE_CUDA
        std::string why;
        bool ok = cuda_available(&why);
        return py::make_tuple(ok, why);
#else
        return py::make_tuple(false, std::string("this dtsim was built without the CUDA backend"));
#endif
      },
      "(True, '') when the CUDA backend can launch kernels, else (False, why).");
}
