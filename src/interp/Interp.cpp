// The interpreter's driver: launches each kernel of a module over its grid, in the requested
// instance order, sequentially or with OpenMP over instances, and collects the sanitizer findings.
//
// Parallel mode: every instance runs on its own Frame; buffers are shared. The sanitizer's shadow
// state is updated with atomics (Memory.cpp), so conflicts are detected in parallel too; which of
// two conflicting instances is reported first may then vary. Prints are buffered per instance and
// written in instance order after the launch. Debug hooks force one thread.
#include <omp.h>

#include <cstdio>
#include <exception>
#include <map>
#include <iostream>

#include "interp/Elem.h"
#include "ir/Analysis.h"
#include "ir/Walk.h"
#include "interp/RunControl.h"

namespace dtsim {

using namespace exec;

std::array<int64_t, 3> launch_grid(const Kernel& k, const Bindings& b) {
  std::array<int64_t, 3> g = grid_extents(k, b);
  int64_t total = 1;
  for (int64_t x : g) {  // each factor and partial product <= INT32_MAX: no step can overflow
    if (x > INT32_MAX || total * x > INT32_MAX) user_error(k.loc, "kernel '" + k.name + "' has more than 2^31 program instances");
    total *= x;
  }
  return g;
}

namespace {
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

InstanceOrder::InstanceOrder(const std::array<int64_t, 3>& grid, Order o, uint64_t seed)
    : grid_(grid), n_(grid[0] * grid[1] * grid[2]), order_(o) {
  if (o != Order::Shuffle) return;
  int bits = 0;
  while ((int64_t(1) << bits) < n_) ++bits;
  half_ = std::max(1, (bits + 1) / 2);
  uint64_t s = seed ^ 0x6a09e667f3bcc909ull;
  for (uint64_t& k : keys_) k = mix64(s += 0x9e3779b97f4a7c15ull);
}

uint64_t InstanceOrder::permute(uint64_t x) const {
  const uint64_t mask = (uint64_t(1) << half_) - 1;
  uint64_t l = x >> half_, r = x & mask;
  for (uint64_t k : keys_) {
    uint64_t t = l ^ (mix64(r ^ k) & mask);
    l = r;
    r = t;
  }
  return (l << half_) | r;
}

uint64_t InstanceOrder::unpermute(uint64_t x) const {
  const uint64_t mask = (uint64_t(1) << half_) - 1;
  uint64_t l = x >> half_, r = x & mask;
  for (size_t i = keys_.size(); i-- > 0;) {
    uint64_t t = r ^ (mix64(l ^ keys_[i]) & mask);
    r = l;
    l = t;
  }
  return (l << half_) | r;
}

int64_t InstanceOrder::linear_at(int64_t i) const {
  switch (order_) {
    case Order::Sequential: return i;
    case Order::Reverse: return n_ - 1 - i;
    case Order::Shuffle: {
      // Cycle walking: the permutation of [0, 2^(2*half)) restricted to [0, n) (the domain is less
      // than 4n, so a few steps on average).
      uint64_t x = static_cast<uint64_t>(i);
      do x = permute(x);
      while (x >= static_cast<uint64_t>(n_));
      return static_cast<int64_t>(x);
    }
  }
  return i;
}

std::array<int64_t, 3> InstanceOrder::operator[](int64_t i) const {
  int64_t lin = linear_at(i);
  return {lin % grid_[0], (lin / grid_[0]) % grid_[1], lin / (grid_[0] * grid_[1])};
}

int64_t InstanceOrder::position(const std::array<int64_t, 3>& pid) const {
  for (size_t a = 0; a < 3; ++a)
    if (pid[a] < 0 || pid[a] >= grid_[a]) return -1;
  int64_t lin = pid[0] + grid_[0] * (pid[1] + grid_[1] * pid[2]);
  switch (order_) {
    case Order::Sequential: return lin;
    case Order::Reverse: return n_ - 1 - lin;
    case Order::Shuffle: {
      uint64_t x = static_cast<uint64_t>(lin);
      do x = unpermute(x);
      while (x >= static_cast<uint64_t>(n_));
      return static_cast<int64_t>(x);
    }
  }
  return lin;
}

std::string InstanceOrder::name() const {
  if (n_ <= 1) return "sequential";
  switch (order_) {
    case Order::Sequential: return "sequential";
    case Order::Reverse: return "reverse";
    case Order::Shuffle: return "shuffled";
  }
  return "sequential";
}

namespace {

// The buffers a kernel's accesses may conflict in, and those it may load from (ir/Analysis.h's
// pointer provenance), as bitmasks of buffer indices. Only buffers that a plain store may write,
// or an atomic may update while a load may read them, need per-element conflict tracking: an
// element no instance stores cannot conflict, and atomics do not conflict with one another, so a
// buffer that only atomics touch needs none. Only those also loaded need their readers tracked.
uint64_t stored_buffers(const Kernel& k, const std::vector<int>& param_buffer, uint64_t& loaded) {
  loaded = ~uint64_t(0);
  if (param_buffer.size() > 64) return ~uint64_t(0);
  for (int bi : param_buffer)
    if (bi >= 64) return ~uint64_t(0);
  BufferAccess a = buffer_access(k);
  auto mask = [&](const ParamSet& s) {
    uint64_t m = 0;
    for (size_t i : s.list())
      if (i < param_buffer.size() && param_buffer[i] >= 0) m |= uint64_t(1) << param_buffer[i];
    return m;
  };
  loaded = mask(a.loaded);
  return mask(a.stored) | (mask(a.atomic) & loaded);
}

// The buffers (bitmask) that some kernel of `m` may read: load from, or update with an atomic (an
// atomic reads the element it updates); all of them when there are more than 64.
uint64_t module_reads(const Module& m, const Buffers& bufs) {
  if (bufs.list.size() > 64) return ~uint64_t(0);
  uint64_t all = 0;
  for (const Kernel& k : m.kernels) {
    for (size_t i : buffer_access(k).reads().list()) {
      if (i >= k.params.size() || k.params[i].kind != ParamKind::Pointer) continue;
      int bi = bufs.index(k.params[i].name);
      if (bi >= 0) all |= uint64_t(1) << bi;
    }
  }
  return all;
}

Frame frame_template(const Kernel& k, int ki, const std::array<int64_t, 3>& grid, Buffers& bufs, const Bindings& b, std::vector<int>& param_buffer) {
  Frame f;
  f.kernel = &k;
  f.kernel_index = ki;
  f.grid = grid;
  f.buffers = &bufs;
  f.bindings = &b;
  f.slots.resize(static_cast<size_t>(k.num_slots));
  for (const Param& p : k.params) {
    int bi = -1;
    Value& v = f.slots[static_cast<size_t>(p.slot)];
    if (p.kind == ParamKind::Pointer) {
      bi = bufs.index(p.name);
      if (bi < 0) throw UserError(p.loc, "no buffer for pointer parameter '" + p.name + "'");
      v = alloc(Type{p.dtype, true, {}});
      data<int64_t>(v)[0] = 0;
      v.buffer = bi;
    } else {
      auto it = b.find(p.name);
      if (it == b.end()) throw UserError(p.loc, "parameter '" + p.name + "' has no value");
      v = scalar_value(p.dtype, it->second.f, it->second.i, it->second.dtype_is_float());
    }
    param_buffer.push_back(bi);
  }
  return f;
}

bool has_print(const Kernel& k) {
  for (const Stmt* s : k.stmts)
    if (s->kind == StmtKind::Print) return true;
  return false;
}

}  // namespace

// Per-thread unboxed registers of the frame's slots (fast mode).
struct Regs {
  std::vector<Sv> regs;
  std::vector<uint8_t> valid;
  std::vector<const Type*> types;
  std::vector<Value> tiles;  // per-thread tiles of the tile-form nodes
  std::vector<Ctx::View> views;  // per slot: loads left in their buffers
  std::vector<RowPtr> rps;       // pointer tiles held as rows plus columns
  int64_t steps = 0, next_poll = 0;  // statements run by this thread; when to look at the clock next
  Regs(size_t n, const ScalarProgram* sp)
      : regs(n), valid(n, 0), types(n, nullptr), tiles(sp ? 2 * sp->tnodes.size() : 0), views(n), rps(sp ? static_cast<size_t>(sp->nrp) : 0) {}
};

struct RunMemory::Impl {
  const Module* module = nullptr;
  bool fast = true;
  struct Kept {
    std::shared_ptr<const ScalarProgram> sp;  // fast mode: the kernel's execution form
    std::vector<Value> slots;                 // the one-thread frame's slots (parameters are bound per launch)
    std::unique_ptr<Regs> regs;               // and its registers, tiles and row pointers
  };
  std::vector<Kept> kernels;          // by kernel index
  std::vector<ConflictMap> conflicts;  // by buffer index: the maps' storage between runs
};

RunMemory::RunMemory() : impl(std::make_unique<Impl>()) {}
RunMemory::~RunMemory() = default;

namespace {

// Runs one program instance to completion (or to a finding that stops the run).

void run_instance(RunState& rs, Frame& f, Regs& regs, int64_t order_index, const std::array<int64_t, 3>& pid, std::string* print_buf) {
  const Kernel& k = *f.kernel;
  DebugHooks* hooks = rs.opt->hooks;
  f.pid = pid;
  f.linear_pid = pid[0] + f.grid[0] * (pid[1] + f.grid[1] * pid[2]);
  f.order_index = order_index;
  f.loop_stack.clear();
  if (hooks) {
    std::vector<bool> is_param(f.slots.size(), false);
    for (const Param& p : k.params) is_param[static_cast<size_t>(p.slot)] = true;
    for (size_t i = 0; i < f.slots.size(); ++i)
      if (!is_param[i]) f.slots[i] = Value{};
    hooks->on_instance_begin(f);
  }
  Ctx c;
  c.rs = &rs;
  c.f = &f;
  c.print_buf = print_buf;
  c.me = static_cast<int32_t>(f.linear_pid);
  c.fast = rs.opt->fast;
  c.sp = rs.sp.get();
  c.hooks = hooks;
  if (c.sp) {
    c.regs = regs.regs.data();
    c.rvalid = regs.valid.data();
    c.rtype = regs.types.data();
    c.flush_all();  // the previous instance's last scalars, as the tile path leaves them in the frame
    std::fill(regs.valid.begin(), regs.valid.end(), uint8_t(0));
    c.tcache = regs.tiles.data();
    if (!hooks) {  // under the debugger every load is copied into its slot, every pointer tile made
      c.views = regs.views.data();
      c.rps = regs.rps.data();
    }
  }
  if (rs.opt->control) {
    c.steps = c.step_base = regs.steps;
    c.step_check = first_step_check(c, regs.next_poll);
  }
  struct SaveSteps {  // the thread's count survives the instance however it ends
    Ctx& c;
    Regs& r;
    ~SaveSteps() {
      if (c.step_check == INT64_MAX) return;
      r.steps = c.steps;
      if (c.step_check > r.next_poll) r.next_poll = c.step_check;
    }
  } save{c, regs};
  try {
    exec_block(c, k.body);
  } catch (StopRun&) {
    return;
  } catch (RuntimeFault& rf) {
    Finding fd;
    fd.kind = Finding::Fault;
    fd.loc = rf.loc.valid() ? rf.loc : (c.stmt ? c.stmt->loc : SourceLoc{});
    fd.pid = pid;
    fd.message = format_diag(fd.loc, "error", rf.what()) +
                 (c.stmt && c.stmt->loc2.valid() ? format_diag(c.stmt->loc2, "note", "from this schedule line") : "") + "  pid " + pid_str(c, pid) + "\n";
    try {
      report_finding(c, std::move(fd));
    } catch (StopRun&) {
      return;
    }
  }
  if (hooks) hooks->on_instance_end(f);
}

void launch(RunState& rs, const Kernel& k, int ki) {
  const InterpOptions& opt = *rs.opt;
  std::array<int64_t, 3> grid = launch_grid(k, *rs.bindings);
  const InstanceOrder order(grid, opt.order, opt.shuffle_seed);
  if (opt.hooks) opt.hooks->on_launch(k, ki, grid, order);
  rs.kernel = &k;
  rs.grid = grid;
  RunMemory::Impl::Kept* kept = opt.memory ? &opt.memory->impl->kernels.at(static_cast<size_t>(ki)) : nullptr;
  if (kept && opt.fast && kept->sp) rs.sp = kept->sp;
  else rs.sp = opt.fast ? std::make_shared<const ScalarProgram>(k) : nullptr;
  if (kept) kept->sp = rs.sp;
  std::vector<int> param_buffer;
  Frame tmpl = frame_template(k, ki, grid, *rs.buffers, *rs.bindings, param_buffer);
  uint64_t loaded = 0;
  uint64_t stored = tracks_conflicts(opt.sanitize) ? stored_buffers(k, param_buffer, loaded) : 0;
  if (tracks_conflicts(opt.sanitize) && any_expr(k.body, [](const Expr& e) { return e.kind == ExprKind::IntToPtr; })) {
    // Addresses reach every buffer, those bound to no parameter too: all are tracked.
    stored = loaded = ~uint64_t(0);
  }
  rs.sync.words.clear();
  for (size_t bi = 0; bi < rs.conflicts.size(); ++bi) {
    bool track = bi < 64 ? ((stored >> bi) & 1) : stored == ~uint64_t(0);
    bool readers = bi < 64 ? ((loaded >> bi) & 1) : true;
    if (track) rs.conflicts[bi].reset(rs.buffers->list[bi].numel(), readers);
    else rs.conflicts[bi] = ConflictMap{};
  }
  rs.binfo.assign(rs.buffers->list.size(), {});
  for (size_t bi = 0; bi < rs.binfo.size(); ++bi) {
    Buffer& B = rs.buffers->list[bi];
    RunState::BufInfo& in = rs.binfo[bi];
    in.data = B.data();
    in.numel = B.numel();
    in.dtype = B.dtype;
    if (tracks_conflicts(opt.sanitize)) {
      if (!rs.init[bi].empty()) in.init = rs.init[bi].data();
      if (rs.conflicts[bi].tracked) in.cm = &rs.conflicts[bi];
    }
    rs.conflicts[bi].init = in.init;
  }
  const int64_t total = order.size();
  int threads = opt.hooks ? 1 : std::max(1, opt.threads);
  rs.parallel = !(threads == 1 || total == 1);
  RunControl* ctl = opt.control;
  if (ctl) ctl->begin_launch(k.name, total);
  // A stop request (or Ctrl-C, SIGTERM) ends the run before the next instance; under a debugger
  // that handles Ctrl-C itself, Ctrl-C goes to the debugger instead. Inside an instance, step_poll
  // stops it the same way (RunControl.cpp).
  auto interrupted = [&](int64_t i) {
    if (!ctl) return false;
    bool sig = stop_signal_pending(opt.hooks && opt.hooks->handles_interrupt());
    if (!sig && !ctl->stop_requested()) return false;
    std::lock_guard<std::mutex> lock(rs.mu);
    if (!ctl->interrupted) {
      ctl->interrupted = true;
      ctl->stopped_inside = false;
      ctl->stopped_kernel = k.name;
      ctl->stopped_pid = order[i];
      ctl->stopped_rank = k.grid.size();
      ctl->stopped_done = ctl->done.load();
      ctl->stopped_total = total;
    }
    rs.stop = true;
    return true;
  };
  // --timeout between instances, every 1024 of them (instances poll the clock inside only as their
  // statements add up; a kernel with an empty body has none).
  auto timed_out = [&](int64_t i) {
    if (!ctl || ctl->timeout_s <= 0 || (i & 1023) != 0 || !ctl->past_deadline()) return false;
    Finding fd;
    fd.kind = Finding::Fault;
    fd.loc = k.loc;
    fd.pid = order[i];
    char t[32];
    std::snprintf(t, sizeof t, "%g", ctl->timeout_s);
    fd.message = format_diag(k.loc, "error", "run stopped after " + std::string(t) + " s (--timeout) before pid " + pid_text(fd.pid, k.grid.size()) +
                                                 " of kernel '" + k.name + "'");
    std::lock_guard<std::mutex> lock(rs.mu);
    if (!rs.stop) {
      rs.report->findings_count++;
      if (rs.report->findings.size() < 20) rs.report->findings.push_back(std::move(fd));
    }
    rs.stop = true;
    return true;
  };
  if (threads == 1 || total == 1) {
    Frame f = tmpl;
    // The slots and registers of the previous run's frame, when kept (not under debug hooks: they
    // see every slot undefined until assigned); the parameters' slots are this launch's.
    const bool keep = kept && !opt.hooks;
    std::unique_ptr<Regs> own;
    if (keep && kept->regs && kept->slots.size() == f.slots.size()) {
      for (const Param& p : k.params) kept->slots[static_cast<size_t>(p.slot)] = std::move(f.slots[static_cast<size_t>(p.slot)]);
      f.slots.swap(kept->slots);
      own = std::move(kept->regs);
      own->steps = own->next_poll = 0;
    } else {
      own = std::make_unique<Regs>(f.slots.size(), rs.sp.get());
    }
    struct GiveBack {  // the frame's storage back to the memory however the launch ends
      Frame& f;
      std::unique_ptr<Regs>& regs;
      RunMemory::Impl::Kept* kept;
      ~GiveBack() {
        if (!kept) return;
        kept->slots.swap(f.slots);
        kept->regs = std::move(regs);
      }
    } give_back{f, own, keep ? kept : nullptr};
    Regs& regs = *own;
    for (int64_t i = 0; i < total && !rs.stop; ++i) {
      if (interrupted(i) || timed_out(i)) break;
      run_instance(rs, f, regs, i, order[i], nullptr);
      rs.report->instances++;
      if (ctl) ctl->done.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  // Instances go to threads in chunks of up to 4 adjacent positions of the order (fewer hand-outs
  // for small instances), down to 1 when the grid is small next to the thread count (a few
  // instances doing all the work must not share a chunk). Positions are handed out from a counter,
  // so that a stop ends every thread at once, whatever the grid size. Prints are kept per chunk and
  // written in order as soon as every chunk before them is done (memory bounded by the chunks in
  // flight, not the grid).
  const int64_t chunk = std::clamp<int64_t>(total / (int64_t(threads) * 16), 1, 4);
  const bool prints = has_print(k);
  std::ostream& pout = opt.out ? *opt.out : std::cout;
  std::mutex print_mu;
  std::map<int64_t, std::string> print_ready;  // chunk start -> its prints (chunks done out of order)
  int64_t print_next = 0;                      // the first chunk not written yet
  std::atomic<int64_t> next{0};
  std::exception_ptr err;
  std::mutex err_mu;
  int64_t ran = 0;
#pragma omp parallel num_threads(threads) reduction(+ : ran)
  {
    Frame f = tmpl;
    Regs regs(f.slots.size(), rs.sp.get());
    std::string pbuf;
    for (;;) {
      if (rs.stop) break;
      int64_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
      if (lo >= total) break;
      int64_t hi = std::min(total, lo + chunk);
      for (int64_t i = lo; i < hi; ++i) {
        if (rs.stop || interrupted(i) || timed_out(i)) break;
        try {
          run_instance(rs, f, regs, i, order[i], prints ? &pbuf : nullptr);
          ++ran;
          if (ctl) ctl->done.fetch_add(1, std::memory_order_relaxed);
        } catch (...) {
          std::lock_guard<std::mutex> lock(err_mu);
          if (!err) err = std::current_exception();
          rs.stop = true;
          break;
        }
      }
      if (prints) {
        std::lock_guard<std::mutex> lock(print_mu);
        print_ready[lo] = std::move(pbuf);
        pbuf.clear();
        for (auto it = print_ready.begin(); it != print_ready.end() && it->first == print_next; it = print_ready.erase(it)) {
          pout << it->second;
          print_next += chunk;
        }
      }
    }
  }
  rs.report->instances += ran;
  if (prints) {
    for (const auto& [lo, text] : print_ready) pout << text;  // after a stop: what the chunks begun printed
    pout.flush();
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace

RunReport run_module(const Module& m, const Bindings& b, Buffers& buffers, const InterpOptions& opt) {
  RunReport rep;
  RunState rs;
  rs.buffers = &buffers;
  rs.bindings = &b;
  rs.opt = &opt;
  rs.report = &rep;
  RunMemory::Impl* mem = opt.memory ? opt.memory->impl.get() : nullptr;
  if (mem && (mem->module != &m || mem->fast != opt.fast || mem->kernels.size() != m.kernels.size())) {
    *mem = RunMemory::Impl{};
    mem->module = &m;
    mem->fast = opt.fast;
    mem->kernels.resize(m.kernels.size());
  }
  rs.init.resize(buffers.list.size());
  if (mem) rs.conflicts.swap(mem->conflicts);
  rs.conflicts.resize(buffers.list.size());
  struct GiveBack {  // the maps' storage back to the memory however the run ends
    RunState& rs;
    RunMemory::Impl* mem;
    ~GiveBack() {
      if (mem) mem->conflicts.swap(rs.conflicts);
    }
  } give_back{rs, mem};
  if (opt.sanitize == Sanitize::All) {
    // Shadow "written" bytes only where a load or an atomic may read them: undefined buffers some
    // kernel loads or updates atomically.
    uint64_t read = module_reads(m, buffers);
    for (size_t i = 0; i < buffers.list.size(); ++i)
      if (!buffers.list[i].defined && (i >= 64 || ((read >> i) & 1))) rs.init[i].assign(static_cast<size_t>(buffers.list[i].numel()), 0);
  }
  for (size_t ki = 0; ki < m.kernels.size() && !rs.stop; ++ki) {
    launch(rs, m.kernels[ki], static_cast<int>(ki));
    for (ConflictMap& cm : rs.conflicts)
      if (cm.tracked) cm.flush_init();
  }
  return rep;
}

}  // namespace dtsim
