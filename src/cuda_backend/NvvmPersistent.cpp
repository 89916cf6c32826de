// Persistent grids (PersistentPlan, sm_90a): a kernel whose dot loop is a TMA ring at its top level
// is launched with at most as many CTAs as fit on the GPU at once; each CTA walks the original
// program ids of tiles t = ctaid.x, ctaid.x + nctaid.x, ... (t in the original launch's linear order,
// axis 0 fastest), program_id(a) reading t's coordinate on axis a and num_programs(a) the original
// grid's extent (kernel arguments set at launch). The ring gets a producer warp (plan_specialize's
// conditions) that walks the same tiles: per tile it computes the statements before the loop and
// issues every copy of the tile's loop, its stage and round counters continuing from tile to tile,
// so that the next tile's first stages fill while the consumers still run this tile's epilogue. The
// consumers walk the tiles too: the statements before the loop, the ring's iterations (waiting for
// full stages, releasing each stage once its wgmma group completed, the last one after the loop's
// final wait), then the statements after the loop, whose shared memory lies above the ring (or,
// where that would not fit beside the ring, whose tile stores go from the layout their values are
// held in, moving nothing through shared memory).
#include <algorithm>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Verify.h"
#include "ir/Walk.h"

namespace dtsim::nvvm {

namespace {

// Whether a statement after the loop may run in a persistent kernel's tile loop: a plain assignment,
// store or atomic (control flow of its own, a `return`, would leave the tile loop).
bool epilogue_stmt(const Stmt& s) { return s.kind == StmtKind::Assign || s.kind == StmtKind::Store || s.kind == StmtKind::Atomic; }

}  // namespace

bool KernelEmitter::stores_in_place(const Stmt& s) {
  if (s.kind != StmtKind::Store) return false;
  const ExprP& pe = s.args[0];
  return pe->type.is_tile() && s.args[1]->type.shape == pe->type.shape && recomputable(pe) && (!s.args[2] || recomputable(s.args[2]));
}

// transient_smem's bound for the statements after a persistent kernel's loop. A tile store from
// where its value is held (`direct`, stores_in_place) moves nothing; otherwise a narrowing cast of a
// tile held in another layout (a dot's accumulator stored as f16) moves the narrow 2- or 4-byte
// elements through an unpadded exchange tile (convert, plan_exchange): numel x bytes instead of the
// padded f32 tile transient_smem counts. Emission checks what it used (emit()).
int64_t KernelEmitter::epilogue_smem(const std::vector<StmtP>& after, bool direct) {
  int64_t most = 0;
  std::vector<StmtP> rest;
  for (const StmtP& s : after) {
    if (direct && stores_in_place(*s)) continue;
    const ExprP* v = s->kind == StmtKind::Store ? &s->args[1] : nullptr;
    const bool narrow = v && stores_in_place(*s) && (*v)->kind == ExprKind::Cast && (*v)->args[0]->kind == ExprKind::Var &&
                        !(*v)->args[0]->type.ptr && scalar_bytes((*v)->dtype) < scalar_bytes((*v)->args[0]->type.elem) &&
                        (scalar_bytes((*v)->dtype) == 2 || scalar_bytes((*v)->dtype) == 4);
    if (narrow) most = std::max(most, (*v)->type.numel() * scalar_bytes((*v)->dtype));
    else rest.push_back(s);
  }
  return std::max(most, transient_smem(rest, {}));
}

// Planning stage `persistent` (after `loops`): see PersistentPlan (Plan.h).
void KernelEmitter::plan_persistent() {
  PersistentPlan& P = plan_.persistent;
  P = PersistentPlan{};
  const ScheduleAsk& ask = plan_.asks.persistent;
  P.asked = !ask.by.empty();
  auto no = [&](const std::string& why) { P.why = why; };
  if (!ask.on && P.asked) return no(ask.by);
  if (!ask.on) return no("not asked for (--persistent, the kernel's persistent): slower than the plain ring on an H100, bench/NOTES.md 46");
  if (plan_.arch != "sm_90a") return no("the target is not sm_90a (no TMA ring)");
  if (opt_.bounds_checks) return no("bounds checks (a hoisted loop is emitted twice, under a test)");
  // The kernel's TMA-ring loop at its top level; nothing after it but assignments, stores, atomics.
  const Stmt* f = nullptr;
  for (const StmtP& s : k_.body) {
    if (f) {
      if (!epilogue_stmt(*s)) return no("a statement after the loop is not an assignment, store or atomic (line " + std::to_string(s->loc.line) + ")");
      continue;
    }
    if (s->kind != StmtKind::For) continue;
    auto it = plan_.loops.find({s.get(), false});
    if (it != plan_.loops.end() && it->second.pipeline && it->second.pipeline->kind == PipelinePlan::Kind::TmaRing) f = s.get();
  }
  if (!f) return no("no TMA-ring dot loop at the kernel's top level");
  PipelinePlan& pp = *plan_.loops.at({f, false}).pipeline;
  for (const auto& [key, lp] : plan_.loops)
    if (lp.loop != f && lp.pipeline) return no("another loop of the kernel is pipelined");
  if (pp.cluster_axis >= 0)
    return no(std::string("the ring runs in clusters of two CTAs (") +
              (plan_.asks.cluster.who == ScheduleAsk::Who::Kernel ? "the kernel's cluster(2)" : "--cluster") + ")");
  if (!plan_.tma_resident_loads.empty() || !plan_.tma_stores.empty())
    return no("a resident operand copied by TMA or a store by TMA (attention's q and o) is not carried across tiles");
  // The grid's tiles for the values the kernel is compiled for (0: not known here; the launch errs).
  P.tiles = 1;
  try {
    for (int64_t g : grid_extents(k_, b_)) P.tiles *= g;
  } catch (const UserError&) {
    P.tiles = 0;
  }
  // The statements after the loop.
  std::vector<StmtP> after;
  bool past = false;
  for (const StmtP& s : k_.body) {
    if (past) after.push_back(s);
    past = past || s.get() == f;
  }
  // The epilogue above the ring: through the exchange tile where both fit, else stored from where
  // its values are held, else with fewer stages.
  const int64_t limit = max_dynamic_smem(plan_.arch);
  const int stages = pp.stages;
  P.epilogue_bytes = epilogue_smem(after, false);
  if (pp.ring_bytes() + P.epilogue_bytes > limit && pp.ring_bytes() + epilogue_smem(after, true) <= limit) {
    P.direct_stores = true;
    P.epilogue_bytes = epilogue_smem(after, true);
  }
  while (pp.stages > 2 && pp.ring_bytes() + P.epilogue_bytes > limit) --pp.stages;
  if (pp.ring_bytes() + P.epilogue_bytes > limit) {
    pp.stages = stages;
    return no("a ring of 2 stages and the epilogue's " + std::to_string(P.epilogue_bytes) + " bytes of shared memory do not fit together");
  }
  std::string blocker = specialize_blocker(*f, pp);
  if (!blocker.empty()) {
    pp.stages = stages;
    return no("no producer warp: " + blocker);
  }
  if (pp.stages != stages) P.stages_from = stages;
  pp.specialized = true;
  pp.not_specialized.clear();
  P.on = true;
  P.loop = f;
  P.why = ask.by;
}

void KernelEmitter::tile_loop(const std::function<void()>& body) {
  static const char* ax[] = {"x", "y", "z"};
  const size_t rank = std::max<size_t>(1, k_.grid.size());
  std::string t = "%tile" + std::to_string(tmp_++);
  prelude_ << "  " << t << " = alloca i64\n";
  auto sreg = [&](const std::string& r) {
    std::string fn = "llvm.nvvm.read.ptx.sreg." + r;
    return op("zext i32 " + call("i32", fn, "", "") + " to i64");
  };
  line("store i64 " + sreg(std::string("ctaid.") + ax[0]) + ", i64* " + t);
  std::string total = "1";
  std::vector<std::string> g;
  for (size_t a = 0; a < rank; ++a) {
    g.push_back(op("zext i32 " + tile_grid_[a] + " to i64"));
    total = total == "1" ? g.back() : op("mul i64 " + total + ", " + g.back());
  }
  std::string head = label("tile.head"), bl = label("tile.body"), exit = label("tile.exit");
  br(head);
  start_block(head);
  load_cache_.clear();
  std::string cur = op("load i64, i64* " + t);
  line("br i1 " + op("icmp slt i64 " + cur + ", " + total) + ", label %" + bl + ", label %" + exit);
  start_block(bl);
  std::string rest = cur;
  for (size_t a = 0; a < rank; ++a) {
    std::string id = a + 1 < rank ? op("urem i64 " + rest + ", " + g[a]) : rest;
    if (a + 1 < rank) rest = op("udiv i64 " + rest + ", " + g[a]);
    line("store i32 " + op("trunc i64 " + id + " to i32") + ", i32* " + tile_pid_[a]);
  }
  body();
  load_cache_.clear();
  line("store i64 " + op("add i64 " + cur + ", " + sreg(std::string("nctaid.") + ax[0])) + ", i64* " + t);
  br(head);
  start_block(exit);
}

// The kernel's body as a persistent grid (plan_persistent): the split into the producer warp and
// the consumers comes first; each walks this CTA's tiles.
void KernelEmitter::emit_persistent() {
  const PersistentPlan& P = plan_.persistent;
  const Stmt& f = *P.loop;
  const PipelinePlan& pp = *plan_.loop(f, false).pipeline;
  const int S = pp.stages;
  std::vector<const Stmt*> before, after;
  bool past = false;
  for (const StmtP& s : k_.body) {
    if (s.get() == &f) past = true;
    else (past ? after : before).push_back(s.get());
  }
  info.persistent = true;
  ++info.specialized_loops;
  std::string leader = tma_begin(f, pp);
  const Stmt* outer = cur_stmt_;
  cur_stmt_ = &f;
  note(std::string("persistent grid: CTAs walk the tiles; the producer warp fills the ring across tiles, ") +
       (P.direct_stores ? "the epilogue stored from where its values are held" : "the epilogue's shared memory above it"));
  cur_stmt_ = outer;
  before_split_ = false;
  tma_init(pp, leader);
  std::string prod = label("ws.producer"), cons = label("ws.consumer");
  line("br i1 " + op("icmp sge i32 %tid, " + std::to_string(threads_)) + ", label %" + prod + ", label %" + cons);
  // The producer: its first thread issues every tile's copies (no barrier may be met on the way).
  start_block(prod);
  guarded(op("icmp eq i32 %tid, " + std::to_string(threads_)), [&] {
    RingCounters rc = ring_counters("w", true);
    tile_loop([&] {
      before_split_ = true;
      for (const Stmt* s : before) emit_stmt(*s);
      const LoopBounds lb = loop_bounds(f);
      tma_loop(lb, S, "w", true, [&](const std::string& it, const std::string& st, const std::string& round) {
        tma_wait_empty(pp, st, round);
        line("store " + lb.ty + " " + it + ", " + lb.ty + "* " + lb.kvar);
        tma_issue(pp, st);
      }, &rc);
      loop_info_.erase(f.slots[0]);
      before_split_ = false;
    });
  });
  br("exit");
  // The consumers.
  start_block(cons);
  bar_threads_ = threads_;
  RingCounters cc = ring_counters("p", false);
  tile_loop([&] {
    for (const Stmt* s : before) emit_stmt(*s);
    const LoopBounds lb = loop_bounds(f);
    const std::string &ty = lb.ty, &lo = lb.lo, &hi = lb.hi;
    // A loop that runs zero times skips the pipeline (wgmma's accumulators: see emit_pipelined_for).
    std::string run = label("tma.run"), done = label("tma.done");
    line("br i1 " + op("icmp slt " + ty + " " + lo + ", " + hi) + ", label %" + run + ", label %" + done);
    start_block(run);
    std::string lane0 = op("icmp eq i32 " + op("and i32 %tid, 31") + ", 0");
    tma_loop(lb, S, "p", false, [&](const std::string& i, const std::string& cur, const std::string& phase) {
      tma_wait(tma_bar(pp, cur, false), phase);
      line("store " + ty + " " + i + ", " + ty + "* " + lb.kvar);
      tma_body(f, pp, cur);
      // The previous iteration's group has completed: its stage is released, once per warp.
      guarded(op("and i1 " + op("icmp sgt " + ty + " " + i + ", " + lo) + ", " + lane0), [&] { tma_free(pp, stage_before(cur, S)); });
    }, &cc);
    tma_drain(f, pp);
    // Every group has completed: the last iteration's stage (the one before the counter's) is released.
    guarded(lane0, [&] { tma_free(pp, stage_before(op("load i32, i32* " + cc.stage), S)); });
    br(done);
    start_block(done);
    load_cache_.clear();
    const int64_t floor = smem_floor_;
    smem_floor_ = floor + pp.ring_bytes();
    store_in_place_ = P.direct_stores;
    for (const Stmt* s : after) emit_stmt(*s);
    store_in_place_ = false;
    smem_floor_ = floor;
  });
  tma_release(pp, leader);
}

}  // namespace dtsim::nvvm
