// The OperandRings pipeline (Plan.h): a `for` loop whose body holds several wgmma dots, the B
// operands of which are tiles loaded in the body and read by nothing else (attention's
//
//   k = load(...); qk = dot(q, trans(k), 0); ... v = load(...); acc = dot(p.to(f16), v, acc * alpha[:, None])
//
// ). Each such tile gets a slot in every one of num_stages shared-memory stages, filled by cp.async
// copies num_stages - 1 iterations ahead (16-byte vectors, masked-off vectors zero-filled, laid out
// as wgmma reads them: trans(k) K-major, v N-major). Iteration i waits for its stage's group, and
// one barrier makes the stage visible to every warpgroup and frees the stage of iteration i - 1
// (whose wgmmas each thread waited for before the barrier); the copies of iteration
// i + num_stages - 1 into that stage are issued right after the first dot's wgmma group is
// committed, so they overlap it. The body's other statements use shared memory above the rings; a
// resident A operand (LoopPlan::resident, attention's q) sits below them.
//
// A tile whose load is a box of a 2-D row-major tensor masked by its extents (tma_operand) is copied
// by TMA instead (plan_ring_tma): thread 0 arrives on the stage's mbarrier with the bytes expected
// and issues the stage's bulk tensor copies (64-column boxes, 128-byte swizzle, box_rows * 128 bytes
// apart, as wgmma_tiles' b_atoms reads them); every thread waits on the mbarrier (the parity of the
// stage's wraps) before the iteration's barrier. The mbarriers sit in 1 KiB above the stages.
#include <algorithm>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Walk.h"

namespace dtsim::nvvm {

namespace {

int64_t align1024(int64_t v) { return (v + 1023) / 1024 * 1024; }

std::string line_of(const Stmt& s) { return s.loc.valid() ? " (line " + std::to_string(s.loc.line) + ")" : std::string(); }

bool is_trans2(const ExprP& e) {
  return e->kind == ExprKind::Trans && e->type.rank() == 2 && e->ints.size() == 2 && e->ints[0] == 1;
}

bool assigned_in(const std::vector<StmtP>& body, const Expr* value) {
  bool found = false;
  for_each_stmt(body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Assign && !s.args.empty() && s.args[0].get() == value) found = true;
  });
  return found;
}

}  // namespace

// The variable a dot reads as B: x in `dot(a, x, c)`, or in `dot(a, trans(x), c)` and `dot(a, xt, c)`
// with xt = trans(x) its one assignment, read nowhere else (then K-major, `view` that assignment).
const Expr* KernelEmitter::ring_b_operand(const Stmt& f, const Expr& dot, bool& kmajor, const Stmt** view) {
  const ExprP& be = dot.args[1];
  kmajor = is_trans2(be);
  *view = nullptr;
  const ExprP* v = kmajor ? &be->args[0] : &be;
  if (!kmajor && be->kind == ExprKind::Var && be->slot >= 0 && plan_.assigns[static_cast<size_t>(be->slot)] == 1 &&
      count_reads(be->slot) == 1) {
    for (auto& st : f.body)
      if (st->kind == StmtKind::Assign && st->slots.size() == 1 && st->slots[0] == be->slot && is_trans2(st->args[0])) {
        kmajor = true;
        *view = st.get();
        v = &st->args[0]->args[0];
      }
  }
  return (*v)->kind == ExprKind::Var ? v->get() : nullptr;
}

// carried_vars, and the form Triton's loops take after the TTIR reader (yields): `v = init` before
// the loop, `w = v + c` and `v = w` in it, w assigned nowhere else: v advances by c per iteration as
// well, read by the copies as init + m * c (the advance being w's value).
std::map<int, KernelEmitter::Carried> KernelEmitter::ring_carried(const Stmt& f, const std::vector<const Stmt*>& readers) {
  std::map<int, Carried> out = carried_vars(f, readers);
  std::set<int> loop;
  size_t first_after = loop_and_after(f, readers, loop);
  for (size_t j = first_after; j < f.body.size(); ++j) {
    const Stmt& st = *f.body[j];
    if (st.kind != StmtKind::Assign || st.slots.size() != 1 || st.args[0]->kind != ExprKind::Var) continue;
    const int v = st.slots[0], w = st.args[0]->slot;
    const size_t vs = static_cast<size_t>(v), ws = static_cast<size_t>(w);
    if (out.count(v) || w < 0 || plan_.assigns[vs] != 2 || plan_.defs[vs].size() != 2 || plan_.assigns[ws] != 1 || !plan_.single_def[ws])
      continue;
    const ExprP& init = plan_.defs[vs][0];
    const ExprP& adv = plan_.single_def[ws];
    const ExprP* inc = advance_step(adv, v);
    const Type& t = k_.slot_types[vs];
    if (plan_.defs[vs][1].get() != st.args[0].get() || !inc || assigned_in(f.body, init.get()) || !(init->type == adv->type)) continue;
    if (!t.ptr && (is_float(t.elem) || t.elem == Scalar::I1)) continue;  // floats would round differently
    std::set<int> seen;
    if (varies_in(init, loop, seen) || varies_in(*inc, loop, seen) || !recomputable(init) || !recomputable(*inc)) continue;
    out[v].form = CarriedForm{&init, &adv};
  }
  return out;
}

// Called where plan_pipeline found no CpAsyncRing (its reason in `why`, which this extends where
// the body has several dots).
std::optional<PipelinePlan> KernelEmitter::plan_operand_rings(const Stmt& f, std::string& why) {
  int dots = 0;
  std::vector<const Stmt*> dot_stmts;
  for (auto& st : f.body) {
    if (st->kind != StmtKind::Assign) return std::nullopt;  // plan_pipeline said which statement
    for (const ExprP& a : st->args)
      if (a) for_each_expr(a, [&](const Expr& e) { dots += e.kind == ExprKind::Dot; });
    if (st->targets.size() == 1 && st->args[0]->kind == ExprKind::Dot) dot_stmts.push_back(st.get());
  }
  if (dots < 2) return std::nullopt;
  auto fail = [&](const std::string& w) -> std::optional<PipelinePlan> {
    why += "; no operand rings: " + w;
    return std::nullopt;
  };
  if (opt_.arch != "sm_90a") return fail("they need wgmma (sm_90a)");
  if (static_cast<int>(dot_stmts.size()) != dots) return fail("a dot is not the whole value of its assignment");
  for (const Stmt* d : dot_stmts)
    if (!plan_.dot(*d->args[0]).wgmma) return fail("the dot of " + d->targets[0] + line_of(*d) + " is not on wgmma");
  // The candidates: a tile loaded at the top level of the body, assigned and read once in the
  // kernel, that read being a later dot's B operand.
  std::vector<RingOperand> rings;
  std::vector<const Stmt*> loads;
  for (size_t j = 0; j < f.body.size(); ++j) {
    const Stmt& st = *f.body[j];
    if (st.targets.size() != 1 || st.args[0]->kind != ExprKind::Load) continue;
    int slot = st.slots[0];
    if (plan_.assigns[static_cast<size_t>(slot)] != 1 || count_reads(slot) != 1) continue;
    for (size_t d = j + 1; d < f.body.size(); ++d) {
      const Stmt& ds = *f.body[d];
      if (std::find(dot_stmts.begin(), dot_stmts.end(), &ds) == dot_stmts.end()) continue;
      bool kmajor = false;
      const Stmt* view = nullptr;
      const Expr* v = ring_b_operand(f, *ds.args[0], kmajor, &view);
      if (!v || v->slot != slot) continue;
      RingOperand r;
      r.load = &st;
      r.dot = &ds;
      r.view = view;
      r.kmajor = kmajor;
      rings.push_back(r);
      loads.push_back(&st);
    }
  }
  if (rings.size() < 2) return fail(std::to_string(rings.size()) + " dot B operand(s) loaded in the body and read by nothing else (2 needed)");
  int slot = f.slots[0];
  loop_info_[slot] = AxisInfo::scalar(std::min(axis_info(f.args[0]).div, axis_info(f.args[2]).div));
  std::map<int, Carried> carried = ring_carried(f, loads);
  carried_ = carried;
  std::string bad;
  for (const RingOperand& r : rings) {
    std::string w;
    if (!cp_async_ok(*r.load->args[0], w) && bad.empty()) bad = "the load of " + r.load->targets[0] + line_of(*r.load) + " " + w;
  }
  PipelinePlan pp;
  pp.kind = PipelinePlan::Kind::OperandRings;
  pp.stages = k_.num_stages;
  pp.rings = rings;
  if (bad.empty()) plan_ring_tma(pp);
  carried_.clear();
  loop_info_.erase(slot);
  if (!bad.empty()) return fail(bad);
  for (RingOperand& r : pp.rings) {
    const Type& t = r.load->args[0]->type;
    r.offset = pp.stage_bytes;
    r.bytes = align1024(t.numel() * scalar_bytes(t.elem));  // 1024: the 128-byte swizzle's period
    pp.stage_bytes += r.bytes;
  }
  pp.mma = plan_.dot(*dot_stmts[0]->args[0]);
  for (auto& [v, c] : carried) pp.carried[v] = c.form;
  return pp;
}

// Which rings TMA fills (the loop's variable and carried values in loop_info_ and carried_): those
// whose load is a box of a 2-D row-major tensor masked by exactly its extents (tma_operand, as a B
// operand: 64-column boxes), on sm_90a, where no bounds check reads the copies lane by lane.
void KernelEmitter::plan_ring_tma(PipelinePlan& pp) {
  for (RingOperand& r : pp.rings) {
    if (checking()) {
      r.not_tma = "bounds checks: the copies are checked lane by lane";
      continue;
    }
    TmaMap m;
    std::string w;
    auto o = tma_operand(*r.load, true, m, w);
    if (!o) {
      r.not_tma = "the load " + w;
      continue;
    }
    o->map = plan_.map_for(r.load, m);
    r.tma = static_cast<int>(pp.tma.size());
    pp.tma.push_back(*o);
  }
}

// What the body uses above the rings, at most: the other statements as transient_smem counts them;
// of a dot, its A operand staged (where it is neither resident nor in registers, a bound either
// way) or the conversion of its accumulator or A operand into the dot's layouts.
int64_t KernelEmitter::ring_transient(const Stmt& f, const PipelinePlan& pp) {
  std::set<const Stmt*> skip;
  for (const RingOperand& r : pp.rings) skip.insert(r.load), skip.insert(r.dot), skip.insert(r.view);
  int64_t most = transient_smem(f.body, skip);
  for (const RingOperand& r : pp.rings) {
    const Expr& de = *r.dot->args[0];
    int64_t M = de.type.shape[0], N = de.type.shape[1], K = de.args[0]->type.shape[1];
    most = std::max({most, align1024(M * K * 2), smem_padded(M * N) * 4, smem_padded(M * K) * 4});
  }
  return most;
}

std::vector<std::string> KernelEmitter::wgmma_a_fragments(const MmaPlan& p, const TV& a) {
  // Register j (0..3) of the fragment of 64-row tile r and k16 step ks holds the element pair at
  // row 64r + 8 (j & 1), columns 16 ks + 8 (j >> 1) + {0, 1}, plus the thread's part (lane / 4 rows,
  // 2 (lane % 4) columns, 16 rows per warp): the accumulator layout's own pairs.
  std::map<Coord, int> reg;
  for (int r = 0; r < a.dist.nregs(); ++r) reg.emplace(a.dist.reg_coord(r), r);
  auto find = [&](int64_t row, int64_t col) {
    auto it = reg.find(Coord{row, col});
    if (it == reg.end()) internal_error("NvvmEmitter", "a wgmma A operand is not in the accumulator layout");
    return a.at(it->second);
  };
  std::vector<std::string> out;
  for (int r = 0; r < p.wr; ++r)
    for (int64_t ks = 0; ks < p.K / 16; ++ks)
      for (int j = 0; j < 4; ++j) {
        int64_t row = 64 * r + 8 * (j & 1), col = 16 * ks + 8 * (j >> 1);
        std::string lo = op("zext i16 " + to_mem(a.type.elem, find(row, col)) + " to i32");
        std::string hi = op("zext i16 " + to_mem(a.type.elem, find(row, col + 1)) + " to i32");
        out.push_back(op("or i32 " + lo + ", " + op("shl i32 " + hi + ", 16")));
      }
  return out;
}

void KernelEmitter::emit_ring_for(const Stmt& f, const PipelinePlan& pp) {
  const int S = pp.stages;
  const int64_t stage = pp.stage_bytes;
  const LoopBounds lb = loop_bounds(f);
  const std::string &ty = lb.ty, &kvar = lb.kvar, &hi = lb.hi, &step = lb.step;
  std::map<int, Carried> carried = ring_carried_of(pp, lb);
  use_smem(pp.ring_bytes());
  ++info.pipelined_loops;
  const bool tma = !pp.tma.empty();
  bool cp = false;
  int64_t tx = 0;  // the bytes TMA copies into a stage
  for (const RingOperand& r : pp.rings) {
    const Type& t = r.load->args[0]->type;
    if (r.tma < 0) cp = true;
    else tx += t.numel() * scalar_bytes(t.elem);
  }
  if (tma) ++info.tma_loops;
  const int64_t ring_floor = smem_floor_;
  {
    const Stmt* outer = cur_stmt_;
    cur_stmt_ = &f;
    std::string by_tma, by_cp;
    for (const RingOperand& r : pp.rings) {
      std::string& l = r.tma >= 0 ? by_tma : by_cp;
      l += (l.empty() ? "" : ", ") + r.load->targets[0];
    }
    std::string how = (by_tma.empty() ? "" : "TMA copies of " + by_tma + " (one mbarrier per stage)") + (by_tma.empty() || by_cp.empty() ? "" : ", ") +
                      (by_cp.empty() ? "" : "cp.async of " + by_cp);
    note("pipelined: " + std::to_string(S) + " stages, " + how + ", " + std::to_string(S - 1) +
         " iteration(s) ahead, issued while the first dot runs" + carried_note(carried, f));
    cur_stmt_ = outer;
  }
  // The full mbarrier of stage `st` (i32 shared address), above the stages; smem_floor_ is the rings'.
  auto bar = [&](const std::string& st) {
    return op("add i32 " + smem_addr32() + ", " + op("add i32 " + op("mul i32 " + st + ", 8") + ", " + std::to_string(S * stage)));
  };
  std::string leader = tma ? op("icmp eq i32 %tid, 0") : std::string();
  // A resident A operand copied by TMA (LoopPlan::resident_tma): its mbarrier 256 bytes into the
  // ring's mbarrier KiB; copied before the ring's first copies, waited for after them.
  const LoopPlan& lp = plan_.loop(f, unchecked_);
  const TmaOperand* res = tma && lp.resident_tma ? &*lp.resident_tma : nullptr;
  if (lp.resident_tma && !res) internal_error("NvvmEmitter", "a resident operand copied by TMA in a ring without mbarriers");
  auto res_bar = [&] { return op("add i32 " + smem_addr32() + ", " + std::to_string(S * stage + 256)); };
  // An empty tensor has no map (the host leaves it zero): its operand is zero-filled instead, as the
  // load's mask would have it.
  const std::string res_nonempty = res ? tma_nonempty(*res) : std::string();
  if (tma) {
    // Thread 0 initializes the mbarriers once every thread is done with what the memory held.
    barrier();
    guarded(leader, [&] {
      for (int s = 0; s < S; ++s)
        line("call void asm sideeffect \"mbarrier.init.shared::cta.b64 [$0], 1;\", \"r,~{memory}\"(i32 " + bar(std::to_string(s)) + ")");
      if (res) line("call void asm sideeffect \"mbarrier.init.shared::cta.b64 [$0], 1;\", \"r,~{memory}\"(i32 " + res_bar() + ")");
      line("call void asm sideeffect \"fence.mbarrier_init.release.cluster;\", \"~{memory}\"()");
    });
    if (res)
      guarded(res_nonempty == "true" ? leader : op("and i1 " + leader + ", " + res_nonempty), [&] {
        const Type& t = res->load->args[0]->type;
        std::string b = res_bar();
        line("call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
        line("call void asm sideeffect \"mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;\", \"r,r,~{memory}\"(i32 " + b + ", i32 " +
             std::to_string(t.numel() * scalar_bytes(t.elem)) + ")");
        tma_copy(*res, op("add i32 " + smem_base32() + ", " + std::to_string(resident_.at(lp.resident))), b);
      });
  }
  // The copies of iteration `it` into stage `st` (the rings' floor, whatever the current one).
  auto issue = [&](const std::string& it, const std::string& st, bool as_barrier) {
    int64_t floor = smem_floor_;
    smem_floor_ = ring_floor;
    line("store " + ty + " " + it + ", " + ty + "* " + kvar);
    carried_ = carried;
    std::string more = op("icmp slt " + ty + " " + it + ", " + hi);
    std::string off = op("mul i32 " + st + ", " + std::to_string(stage));
    const Stmt* outer = cur_stmt_;
    std::vector<std::string> offs;
    for (const RingOperand& r : pp.rings) offs.push_back(r.offset ? op("add i32 " + off + ", " + std::to_string(r.offset)) : off);
    if (checking()) {
      // Every tile is checked before any is copied, with one barrier; findings are located at the
      // load statements (the first in program order wins). (No TMA: plan_ring_tma.)
      std::vector<BoundsCheck> checks;
      std::vector<std::function<void()>> copies;
      for (size_t j = 0; j < pp.rings.size(); ++j) {
        cur_stmt_ = pp.rings[j].load;
        copies.push_back(cp_async_tile(*pp.rings[j].load->args[0], offs[j], 0, !pp.rings[j].kmajor, &checks));
      }
      cur_stmt_ = outer;
      std::vector<PendingCheck> pend;
      for (BoundsCheck& bc : checks) {
        bc.bad = op("and i1 " + bc.bad + ", " + more);
        pend.push_back(pending(bc));
      }
      report_checks(pend);
      guarded(more, [&] {
        for (auto& c : copies) c();
      });
    } else {
      if (as_barrier) barrier();
      if (cp)
        guarded(more, [&] {
          for (size_t j = 0; j < pp.rings.size(); ++j) {
            if (pp.rings[j].tma >= 0) continue;
            cur_stmt_ = pp.rings[j].load;
            cp_async_tile(*pp.rings[j].load->args[0], offs[j], 0, !pp.rings[j].kmajor);
          }
          cur_stmt_ = outer;
        });
      if (tma)
        guarded(op("and i1 " + leader + ", " + more), [&] {
          std::string b = bar(st);
          line("call void asm sideeffect \"mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;\", \"r,r,~{memory}\"(i32 " + b + ", i32 " +
               std::to_string(tx) + ")");
          for (size_t j = 0; j < pp.rings.size(); ++j)
            if (pp.rings[j].tma >= 0) tma_copy(pp.tma[static_cast<size_t>(pp.rings[j].tma)], op("add i32 " + smem_addr32() + ", " + offs[j]), b);
        });
    }
    carried_.clear();
    if (cp) line("call void asm sideeffect \"cp.async.commit_group;\", \"~{memory}\"()");
    smem_floor_ = floor;
  };
  // The parity of the stages' current phase: flips each time the stage counter wraps to 0.
  std::string phv;
  if (tma) {
    phv = "%ringph" + std::to_string(tmp_++);
    prelude_ << "  " << phv << " = alloca i32\n";
    line("store i32 0, i32* " + phv);
  }
  // The resident operand's copy is waited for once the ring's first copies are issued (all in flight).
  bool res_wait = res != nullptr;
  auto wait_res = [&] {
    if (!res_wait) return;
    res_wait = false;
    if (res_nonempty == "true") return tma_wait(res_bar(), "0");
    guarded(res_nonempty, [&] { tma_wait(res_bar(), "0"); });
    guarded(op("xor i1 " + res_nonempty + ", true"), [&] {  // zeros, 16 bytes a store, published by the loop's first barrier
      const Type& t = res->load->args[0]->type;
      const int64_t chunks = t.numel() * scalar_bytes(t.elem) / 16;
      std::string base = op("add i32 " + smem_base32() + ", " + std::to_string(resident_.at(lp.resident)));
      for (int64_t c = 0; c < chunks; c += threads_) {
        std::string i = op("add i32 %tid, " + std::to_string(c));
        guarded(op("icmp ult i32 " + i + ", " + std::to_string(chunks)), [&] {
          line("call void asm sideeffect \"st.shared.v4.b32 [$0], {$1, $1, $1, $1};\", \"r,r,~{memory}\"(i32 " +
               op("add i32 " + base + ", " + op("mul i32 " + i + ", 16")) + ", i32 0)");
        });
      }
      line("call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
    });
  };
  if (S < 2) wait_res();
  auto first_issue = [&](const std::string& it, const std::string& st, bool as_barrier) {
    issue(it, st, as_barrier);
    if (st == std::to_string(S - 2)) wait_res();
  };
  const RingHead rh = ring_head(lb, S, "ring", first_issue, cp);
  const std::string &ctr = rh.ctr, &sc = rh.sc, &head = rh.head, &exit = rh.exit, &i = rh.i, &cur = rh.cur;
  std::string phase = tma ? op("load i32, i32* " + phv) : std::string();
  if (tma) tma_wait(bar(cur), phase);  // every thread waits for the stage's TMA copies
  if (cp) line("call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
  barrier();
  line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  std::string off = op("add i32 " + op("mul i32 " + cur + ", " + std::to_string(stage)) + ", " + std::to_string(ring_floor));
  for (const RingOperand& r : pp.rings) {
    std::string at = r.offset ? op("add i32 " + off + ", " + std::to_string(r.offset)) : off;
    const int64_t atoms = r.tma >= 0 ? r.load->args[0]->type.shape[0] * 128 : 0;
    ring_[r.load->slots[0]] = RingTile{at, r.kmajor, atoms};
    if (r.view) ring_[r.view->slots[0]] = RingTile{at, r.kmajor, atoms};  // the dot reads the view's variable
  }
  // Iteration i + S - 1 goes into the stage iteration i - 1 used.
  std::string ahead = op("add " + ty + " " + i + ", " + op("mul " + ty + " " + step + ", " + std::to_string(S - 1)));
  std::string nst = stage_before(cur, S);
  in_flight_ = [&, ahead, nst, i] {
    issue(ahead, nst, false);
    line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  };
  std::set<const Stmt*> skip;
  for (const RingOperand& r : pp.rings) skip.insert(r.load), skip.insert(r.view);
  smem_floor_ = ring_floor + pp.ring_bytes();
  for (auto& st : f.body)
    if (!skip.count(st.get())) emit_stmt(*st);
  smem_floor_ = ring_floor;
  if (in_flight_) {  // no dot took it (not reached: the body's dots run on wgmma)
    std::function<void()> work = std::move(in_flight_);
    in_flight_ = nullptr;
    work();
  }
  ring_.clear();
  flush_checks();
  std::string next = op("urem i32 " + op("add i32 " + cur + ", 1") + ", " + std::to_string(S));
  line("store i32 " + next + ", i32* " + sc);
  if (tma) line("store i32 " + op("xor i32 " + phase + ", " + op("zext i1 " + op("icmp eq i32 " + next + ", 0") + " to i32")) + ", i32* " + phv);
  line("store " + ty + " " + op("add " + ty + " " + i + ", " + step) + ", " + ty + "* " + ctr);
  br(head);
  start_block(exit);
  loop_info_.erase(f.slots[0]);
  if (cp) line("call void asm sideeffect \"cp.async.wait_group 0;\", \"~{memory}\"()");
  barrier();
  if (tma) {  // every copy issued was waited for; the mbarriers are invalidated before the memory is reused
    guarded(leader, [&] {
      for (int s = 0; s < S; ++s) line("call void asm sideeffect \"mbarrier.inval.shared::cta.b64 [$0];\", \"r,~{memory}\"(i32 " + bar(std::to_string(s)) + ")");
      if (res) line("call void asm sideeffect \"mbarrier.inval.shared::cta.b64 [$0];\", \"r,~{memory}\"(i32 " + res_bar() + ")");
    });
    barrier();
  }
}

}  // namespace dtsim::nvvm
