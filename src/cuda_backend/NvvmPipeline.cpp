// Software pipelining of a K loop that feeds dot on the tensor cores: the loop
//
//   for k in range(lo, hi, step) {  ...  x = load(px, mx); y = load(py, my); acc = dot(x, y, acc)  ... }
//
// where x and y are read by nothing but the dot, their pointers and masks are index arithmetic on
// k and values fixed before the loop, and `other` is 0, is lowered with a ring of num_stages shared
// memory buffers: cp.async copies the operands of iteration i + num_stages - 1 straight from global
// to shared memory (16-byte vectors, masked-off vectors zero-filled) while iteration i computes from
// its buffer (ldmatrix + mma.sync, wgmma, or for f32 operands the FMA dot's reads);
// cp.async.wait_group and a barrier make a buffer ready. The ring sits at the bottom of the shared
// buffer while the loop runs; the body's other statements use shared memory above it.
//
// Pointers advanced by the loop (Triton's `a_ptrs += BK` after the dot) are read by the copies as
// init + ((k - lo) / step) * c, their value at the copied iteration: the loop still advances them
// for whatever reads them after it.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Walk.h"

namespace dtsim::nvvm {

namespace {

void count_expr(const ExprP& e, int slot, int& n) {
  if (!e) return;
  if (e->kind == ExprKind::Var && e->slot == slot) ++n;
  for (auto& a : e->args) count_expr(a, slot, n);
}

void count_stmts(const std::vector<StmtP>& body, int slot, int& n) {
  for (auto& s : body) {
    for (auto& a : s->args) count_expr(a, slot, n);
    count_stmts(s->body, slot, n);
    count_stmts(s->orelse, slot, n);
  }
}

bool is_zero_const(const ExprP& e) {
  if (!e) return true;
  if (e->kind == ExprKind::Cast) return is_zero_const(e->args[0]);
  return e->kind == ExprKind::Const && (e->is_float ? e->fval == 0.0 && !std::signbit(e->fval) : e->ival == 0);
}

int64_t align1024(int64_t v) { return (v + 1023) / 1024 * 1024; }

}  // namespace

int KernelEmitter::count_reads(int slot) const {
  int n = 0;
  count_stmts(k_.body, slot, n);
  return n;
}

bool KernelEmitter::cp_async_ok(const Expr& ld, std::string& why) {
  const Type& t = ld.type;
  if (t.rank() != 2 || (t.elem != Scalar::F16 && t.elem != Scalar::BF16 && t.elem != Scalar::F32)) {
    why = "is not a 2-D f16, bf16 or f32 tile";
    return false;
  }
  if (!recomputable(ld.args[0]) || (ld.args[1] && !recomputable(ld.args[1]))) {
    why = "has a pointer or mask that is not index arithmetic on the loop variable and values fixed before the loop";
    return false;
  }
  if (!is_zero_const(ld.args[2])) {
    why = "has an `other` that is not 0";
    return false;
  }
  int vec = 16 / scalar_bytes(t.elem);
  Dist d = blocked(t.shape, k_.num_warps, vec);
  if (t.shape[1] % vec || vector_width(d, ld.args[0], ld.args[1], nullptr) != vec) {
    why = "is not read in 16-byte vectors (see its pointer's axis info)";
    return false;
  }
  return true;
}

namespace {
// For core-matrix tiles: the first three lane bits walk rows, so the eight 16-byte writes of a phase
// land in the eight rows of one core matrix (distinct banks); a warp still reads whole 32-byte
// sectors of eight rows.
Dist copy_layout(const Shape& s, int num_warps) {
  Dist d;
  d.shape = s;
  std::vector<Coord> bits;
  int rb = log2_exact(s[0]), cb = log2_exact(s[1]);
  d.reg = {{0, 1}, {0, 2}, {0, 4}};
  for (int i = 0; i < std::min(3, rb); ++i) bits.push_back({int64_t(1) << i, 0});
  for (int i = 3; i < cb; ++i) bits.push_back({0, int64_t(1) << i});
  for (int i = 3; i < rb; ++i) bits.push_back({int64_t(1) << i, 0});
  size_t k = 0;
  for (int i = 0; i < 5; ++i) d.lane.push_back(k < bits.size() ? bits[k++] : Coord{0, 0});
  for (int w = 1; w < num_warps; w *= 2) d.warp.push_back(k < bits.size() ? bits[k++] : Coord{0, 0});
  while (k < bits.size()) d.reg.push_back(bits[k++]);
  return d;
}
}  // namespace

std::function<void()> KernelEmitter::cp_async_tile(const Expr& ld, const std::string& off, int64_t row, bool b_operand,
                                                   std::vector<BoundsCheck>* checks) {
  const Type& t = ld.type;
  const int vec = 16 / scalar_bytes(t.elem), shift = log2_exact(scalar_bytes(t.elem));
  // Rows (padded or swizzled): a phase's eight 16-byte writes cover one row's chunks, in distinct
  // banks; unswizzled core matrices: eight rows of one core matrix.
  bool rows = row || wgmma_swizzled(t.shape, b_operand);
  Dist d = rows ? blocked(t.shape, k_.num_warps, vec) : copy_layout(t.shape, k_.num_warps);
  auto p = lazy_fit(ld.args[0], d);
  std::function<std::string(int)> m;
  if (ld.args[1]) m = lazy_fit(ld.args[1], d);
  if (checking()) {
    // Checked before any copy is issued: an instance with a lane out of bounds leaves without copying.
    BoundsCheck bc = begin_bounds(false, ld.args[0], t.shape);
    std::string own = owner(d);
    for (int r0 = 0; r0 < d.nregs(); r0 += vec)
      if (first_copy(d, r0) == r0) bounds_lanes(bc, t.elem, p(r0), vec, d, r0, ld.args[1] ? m(r0) : "true", own);
    if (checks) checks->push_back(bc);
    else end_bounds(bc);
  }
  auto copies = [this, &ld, off, row, b_operand, d, p, m, vec, shift] {
    const Type& t = ld.type;
    std::string base = op("add i32 " + smem_addr32() + ", " + off);
    guarded(owner(d), [&] {
      for (int r0 = 0; r0 < d.nregs(); r0 += vec) {
        if (first_copy(d, r0) != r0) continue;
        auto c = coords(d, r0);
        std::string byte;
        if (row)
          byte = op("shl i32 " + op("add i32 " + op("mul i32 " + c[0] + ", " + std::to_string(row)) + ", " + c[1]) + ", " + std::to_string(shift));
        else
          byte = wgmma_offset(c[0], c[1], t.shape, b_operand);
        std::string dst = op("add i32 " + base + ", " + byte);
        std::string src = p(r0);
        std::string ty = mem_type(t.elem) + " addrspace(1)*";
        if (!ld.args[1]) {
          line("call void asm sideeffect \"cp.async.cg.shared.global [$0], [$1], 16;\", \"r,l,~{memory}\"(i32 " + dst + ", " + ty + " " + src + ")");
          continue;
        }
        std::string n = op("select i1 " + m(r0) + ", i32 16, i32 0");  // 0: nothing read, 16 zero bytes written
        line("call void asm sideeffect \"cp.async.cg.shared.global [$0], [$1], 16, $2;\", \"r,l,r,~{memory}\"(i32 " + dst + ", " + ty + " " +
             src + ", i32 " + n + ")");
      }
    });
  };
  if (checks) return copies;  // issued by the caller once every check passed
  copies();
  return nullptr;
}

// Whether e reads a slot of `loop` (directly or through the single definitions of the variables it
// reads): such a value may change from one iteration to the next.
bool KernelEmitter::varies_in(const ExprP& e, const std::set<int>& loop, std::set<int>& seen) {
  if (!e) return false;
  if (e->kind == ExprKind::Var) {
    if (loop.count(e->slot)) return true;
    const ExprP& d = plan_.single_def[static_cast<size_t>(e->slot)];
    return seen.insert(e->slot).second && d && varies_in(d, loop, seen);
  }
  for (auto& a : e->args)
    if (varies_in(a, loop, seen)) return true;
  return false;
}

// The slots loop f assigns (its variable included) into `loop`; returns the index of the first
// statement of f's body after every statement of `readers`.
size_t KernelEmitter::loop_and_after(const Stmt& f, const std::vector<const Stmt*>& readers, std::set<int>& loop) {
  loop.insert(f.slots[0]);
  slots_assigned(f.body, loop);
  size_t first_after = 0;
  for (size_t j = 0; j < f.body.size(); ++j)
    if (std::find(readers.begin(), readers.end(), f.body[j].get()) != readers.end()) first_after = j + 1;
  return first_after;
}

// The integer and pointer variables that loop f advances by a loop-invariant step (`v = v + c` at the
// top level of its body, after every statement of `readers`) from a value set before it, both
// recomputable: the copies may read them at any iteration.
std::map<int, KernelEmitter::Carried> KernelEmitter::carried_vars(const Stmt& f, const std::vector<const Stmt*>& readers) {
  std::map<int, Carried> out;
  std::set<int> loop;
  size_t first_after = loop_and_after(f, readers, loop);
  for (size_t j = first_after; j < f.body.size(); ++j) {
    const Stmt& st = *f.body[j];
    auto form = loop_advance(f, st);
    if (!form) continue;
    int v = st.slots[0];
    const Type& t = k_.slot_types[static_cast<size_t>(v)];
    if (!t.ptr && (is_float(t.elem) || t.elem == Scalar::I1)) continue;  // floats would round differently
    const ExprP& inc = *advance_step(*form->advance, v);
    std::set<int> seen;
    if (varies_in(*form->init, loop, seen) || varies_in(inc, loop, seen) || !recomputable(*form->init) || !recomputable(inc)) continue;
    out[v].form = *form;
  }
  return out;
}

std::string KernelEmitter::carried_at(const ExprP& v, const std::vector<std::string>& c) {
  const Carried& cv = carried_.at(v->slot);
  const Type& t = v->type;
  const ExprP& init = *cv.form.init;
  const ExprP& adv = *cv.form.advance;
  const ExprP& inc = *advance_step(adv, v->slot);
  std::string base = t.is_scalar() ? eval_scalar(init) : at(init, c);
  std::string step = inc->type.is_scalar() ? eval_scalar(inc) : at(inc, bcast_coords(t.shape, c, inc->type.shape));
  std::string kty = reg_type(cv.kt);
  std::string k = op("load " + kty + ", " + kty + "* " + cv.kvar);
  std::string m = cv.lo == "0" && cv.step == "1" ? k : op("sdiv " + kty + " " + op("sub " + kty + " " + k + ", " + cv.lo) + ", " + cv.step);
  if (t.ptr) {  // m advances of sext(c) elements each, in 64 bits as the loop does them
    std::string n = op("mul i64 " + cast(inc->type.elem, Scalar::I64, step) + ", " + cast(cv.kt, Scalar::I64, m));
    std::string mt = mem_type(t.elem);
    return op("getelementptr " + mt + ", " + mt + " addrspace(1)* " + base + ", i64 " + n);
  }
  std::string n = binary_typed(BinOp::Mul, inc->type.elem, step, cast(cv.kt, inc->type.elem, m));  // wraps as m additions do
  bool self_first = adv->args[0]->kind == ExprKind::Var && adv->args[0]->slot == v->slot;
  return self_first ? binary(*adv, base, n) : binary(*adv, n, base);
}

// The start of a ring's loop (cp.async rings, operand rings): `issue` copies the first S - 1
// iterations (the loop variable's value, the stage, whether it is the first copy), then the loop
// over i in [lo, hi) with a stage counter opens; in its body block, the copies of the current stage
// `cur` are waited for (cp.async.wait_group S - 2, unless no copy is a cp.async). Labels `prefix`.head/.body/.exit.
KernelEmitter::RingHead KernelEmitter::ring_head(const LoopBounds& b, int S, const std::string& prefix,
                                                 const std::function<void(const std::string&, const std::string&, bool)>& issue,
                                                 bool cp_async) {
  const std::string &ty = b.ty, &lo = b.lo, &step = b.step;
  for (int s = 0; s < S - 1; ++s) {
    std::string it = s ? op("add " + ty + " " + lo + ", " + op("mul " + ty + " " + step + ", " + std::to_string(s))) : lo;
    issue(it, std::to_string(s), s == 0);  // first: the buffers may hold another statement's data
  }
  RingHead h;
  h.ctr = "%pctr" + std::to_string(tmp_++), h.sc = "%pst" + std::to_string(tmp_++);
  prelude_ << "  " << h.ctr << " = alloca " << ty << "\n  " << h.sc << " = alloca i32\n";
  line("store " + ty + " " + lo + ", " + ty + "* " + h.ctr);
  line("store i32 0, i32* " + h.sc);
  h.head = label(prefix + ".head");
  std::string body = label(prefix + ".body");
  h.exit = label(prefix + ".exit");
  br(h.head);
  start_block(h.head);
  h.i = op("load " + ty + ", " + ty + "* " + h.ctr);
  line("br i1 " + op("icmp slt " + ty + " " + h.i + ", " + b.hi) + ", label %" + body + ", label %" + h.exit);
  start_block(body);
  h.cur = op("load i32, i32* " + h.sc);
  if (cp_async) line("call void asm sideeffect \"cp.async.wait_group " + std::to_string(S - 2) + ";\", \"~{memory}\"()");
  return h;
}

// The bounds of a pipelined `for` loop (the cp.async and TMA rings, the operand rings): its
// variable's register type and alloca, lo, hi and step in that type (a step <= 0 traps); the loop
// variable's axis information recorded for the body.
// The variables a ring's copies read as init + m * c (PipelinePlan::carried), m counted from the
// loop's lo by its step.
std::map<int, KernelEmitter::Carried> KernelEmitter::ring_carried_of(const PipelinePlan& pp, const LoopBounds& lb) {
  std::map<int, Carried> carried;
  for (auto& [v, form] : pp.carried) carried[v] = Carried{form, lb.kvar, lb.lo, lb.step, lb.t};
  return carried;
}

// "; a, b computed from k" for a pipelined loop's note ("" when it carries nothing).
std::string KernelEmitter::carried_note(const std::map<int, Carried>& carried, const Stmt& f) {
  std::string from_k;
  for (auto& [v, c] : carried) from_k += (from_k.empty() ? "" : ", ") + k_.slot_names[static_cast<size_t>(v)];
  return from_k.empty() ? "" : "; " + from_k + " computed from " + f.targets[0];
}

KernelEmitter::LoopBounds KernelEmitter::loop_bounds(const Stmt& f) {
  LoopBounds b;
  int slot = f.slots[0];
  loop_info_[slot] = plan_.loop(f, unchecked_).k;
  b.t = k_.slot_types[static_cast<size_t>(slot)].elem;
  b.ty = reg_type(b.t);
  b.kvar = slot_vars_[static_cast<size_t>(slot)][0];
  b.lo = cast(f.args[0]->type.elem, b.t, eval_scalar(f.args[0]));
  b.hi = cast(f.args[1]->type.elem, b.t, eval_scalar(f.args[1]));
  b.step = cast(f.args[2]->type.elem, b.t, eval_scalar(f.args[2]));
  trap_if(op("icmp sle " + b.ty + " " + b.step + ", 0"));
  return b;
}

// Whether loop f is software-pipelined (the stage `loops` of planning), with what: see
// docs/cuda-backend.md. Called with the loop variables of the enclosing loops in loop_info_.
std::optional<PipelinePlan> KernelEmitter::plan_pipeline(const Stmt& f, std::string& why) {
  int S = k_.num_stages;
  if (S < 2) {
    why = "num_stages " + std::to_string(S);
    return std::nullopt;
  }
  if (sm_version() < 80) {
    why = "no cp.async below sm_80";
    return std::nullopt;
  }
  auto at = [](const Stmt& s) { return s.loc.valid() ? " (line " + std::to_string(s.loc.line) + ")" : std::string(); };
  // The dot: acc = dot(x, y, acc) at the top level of the body, x and y loaded there before it.
  const Stmt* dot = nullptr;
  const Stmt* lx = nullptr;
  const Stmt* ly = nullptr;
  int dots = 0;
  std::string dot_why;  // why the first dot of the body is not of that form
  for (auto& st : f.body) {
    switch (st->kind) {
      case StmtKind::Assign: break;
      case StmtKind::Store:
      case StmtKind::Atomic:
      case StmtKind::For:
      case StmtKind::While:
      case StmtKind::If:
      case StmtKind::Print:
      case StmtKind::Assert:
      case StmtKind::Return:  // keep the plain loop where prefetching could change meaning
        why = "the body has a " + std::string(stmt_kind_name(st->kind)) + " statement" + at(*st);
        return std::nullopt;
    }
    if (st->targets.size() != 1) continue;
    const ExprP& v = st->args[0];
    for_each_expr(v, [&](const Expr& e) { dots += e.kind == ExprKind::Dot; });
    if (v->kind != ExprKind::Dot || dot) continue;
    const ExprP& acc = v->args[2];
    auto fail = [&](const std::string& w) {
      if (dot_why.empty()) dot_why = "the dot of " + st->targets[0] + at(*st) + " " + w;
    };
    if (!acc || acc->kind != ExprKind::Var || acc->slot != st->slots[0]) {
      fail("does not accumulate into its own target");
      continue;
    }
    if (v->args[0]->kind != ExprKind::Var || v->args[1]->kind != ExprKind::Var) {
      fail("has an operand that is not a variable");
      continue;
    }
    for (auto& d : f.body) {
      if (d.get() == st.get()) break;
      if (d->kind != StmtKind::Assign || d->targets.size() != 1 || d->args[0]->kind != ExprKind::Load) continue;
      if (d->slots[0] == v->args[0]->slot) lx = d.get();
      if (d->slots[0] == v->args[1]->slot) ly = d.get();
    }
    dot = st.get();
  }
  if (!dot) {
    why = dots == 0 ? "no dot in the body" : dots == 1 ? dot_why : std::to_string(dots) + " dots in the body, none of the form acc = dot(x, y, acc); " + dot_why;
    return std::nullopt;
  }
  if (!lx || !ly || lx == ly) {
    why = "the operands of the dot of " + dot->targets[0] + at(*dot) + " are not two tiles loaded in the body before it";
    return std::nullopt;
  }
  const Expr& de = *dot->args[0];
  const MmaPlan& p = plan_.dot(de);
  // Without tensor cores: the FMA dot reads f32 operands (both of one type, the verifier says) from
  // the ring (tf32 rounding happens when operands are staged, so a tf32 dot keeps the plain loop).
  bool fma = !p.ok;
  if (p.ok && p.in == Scalar::I8) {  // the ring holds 16-bit rows for ldmatrix: the i8 dot stages its own operands
    why = "the dot of " + dot->targets[0] + at(*dot) + " is an i8 dot on the tensor cores (not pipelined yet)";
    return std::nullopt;
  }
  if (fma && (!plan_.smem.fma_rings || de.args[0]->type.elem != Scalar::F32 || de.tf32)) {
    why = !plan_.smem.fma_rings ? "the FMA rings do not fit (see the shared memory below)"
                                : "the dot runs on the FMA units with " + std::string(de.tf32 ? "tf32 rounding" : "operands that are not f32");
    return std::nullopt;
  }
  int64_t M = de.args[0]->type.shape[0], K = de.args[0]->type.shape[1], N = de.args[1]->type.shape[1];
  int slot = f.slots[0];
  loop_info_[slot] = AxisInfo::scalar(std::min(axis_info(f.args[0]).div, axis_info(f.args[2]).div));
  std::map<int, Carried> carried = carried_vars(f, {lx, ly});
  carried_ = carried;
  for (const Stmt* l : {lx, ly}) {
    std::string w;
    if (plan_.assigns[static_cast<size_t>(l->slots[0])] != 1 || count_reads(l->slots[0]) != 1) w = "is read or assigned elsewhere";
    else cp_async_ok(*l->args[0], w);
    if (!w.empty()) {
      why = "the load of " + l->targets[0] + at(*l) + " " + w;
      loop_info_.erase(slot);
      carried_.clear();
      return std::nullopt;
    }
  }
  carried_.clear();
  // Row lengths in shared memory: ldmatrix rows are padded by 16 bytes, wgmma reads (swizzled) core
  // matrices (0), the FMA dot reads A in rows of fma_lda(K) and B as it is.
  int64_t a_row = fma ? fma_lda(K) : p.wgmma ? 0 : K + 8, b_row = fma ? N : p.wgmma ? 0 : N + 8;
  int64_t eb = scalar_bytes(de.args[0]->type.elem);
  // Buffers start at multiples of 1024 bytes (the 128-byte swizzle repeats every 1024).
  int64_t a_bytes = align1024(M * (a_row ? a_row : K) * eb), stage = a_bytes + align1024(K * (b_row ? b_row : N) * eb);
  if (fma) {
    // The FMA ring holds at most 112 KiB (fewer stages than asked where a stage is large), and no
    // more stages than the loop has iterations when that is known.
    S = static_cast<int>(std::min<int64_t>(S, 114688 / stage));
    if (f.args[0]->kind == ExprKind::Const && f.args[1]->kind == ExprKind::Const && f.args[2]->kind == ExprKind::Const &&
        f.args[2]->ival > 0)
      S = static_cast<int>(std::min<int64_t>(S, std::max<int64_t>(1, (f.args[1]->ival - f.args[0]->ival + f.args[2]->ival - 1) / f.args[2]->ival)));
    if (S < 2) {
      why = "the FMA ring would hold fewer than 2 stages";
      loop_info_.erase(slot);
      return std::nullopt;
    }
  }
  loop_info_.erase(slot);
  PipelinePlan pp;
  pp.stages = S;
  pp.fma = fma;
  pp.mma = p;
  pp.lx = lx, pp.ly = ly, pp.dot = dot;
  pp.a_row = a_row, pp.b_row = b_row;
  pp.a_bytes = a_bytes, pp.stage_bytes = stage;
  for (auto& [v, c] : carried) pp.carried[v] = c.form;
  return pp;
}
// Emits loop f as planned by plan_pipeline.
void KernelEmitter::emit_pipelined_for(const Stmt& f, const PipelinePlan& pp) {
  const int S = pp.stages;
  const bool fma = pp.fma;
  const MmaPlan& p = pp.mma;
  const Stmt* lx = pp.lx;
  const Stmt* ly = pp.ly;
  const Stmt* dot = pp.dot;
  const Expr& de = *dot->args[0];
  const int64_t M = de.args[0]->type.shape[0], K = de.args[0]->type.shape[1], N = de.args[1]->type.shape[1];
  const int64_t a_row = pp.a_row, b_row = pp.b_row, a_bytes = pp.a_bytes, stage = pp.stage_bytes;
  const LoopBounds lb = loop_bounds(f);
  const std::string &ty = lb.ty, &kvar = lb.kvar, &lo = lb.lo, &hi = lb.hi, &step = lb.step;
  std::map<int, Carried> carried = ring_carried_of(pp, lb);
  use_smem(S * stage);
  if (fma) ++info.fma_rings;
  ++info.pipelined_loops;
  {
    const Stmt* outer = cur_stmt_;
    cur_stmt_ = &f;
    note("pipelined: " + std::to_string(S) + " shared buffers, cp.async of " + lx->targets[0] + " and " + ly->targets[0] +
         " " + std::to_string(S - 1) + " iteration(s) ahead" + carried_note(carried, f));
    cur_stmt_ = dot;
    note((fma ? "dot: FMA units, " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) : describe(p)) +
         ", operands from the cp.async buffers");
    cur_stmt_ = outer;
  }
  // Copies of iteration `it` into buffer `st`. With `as_barrier`, the call also stands for a barrier
  // of the loop: with bounds checks, the checks' barrier is that barrier (they are computed for every
  // iteration, failing only where the iteration runs), so checking costs no extra barrier.
  auto issue = [&](const std::string& it, const std::string& st, bool as_barrier) {
    line("store " + ty + " " + it + ", " + ty + "* " + kvar);
    carried_ = carried;
    std::string more = op("icmp slt " + ty + " " + it + ", " + hi);
    std::string off = op("mul i32 " + st + ", " + std::to_string(stage));
    std::string off_y = op("add i32 " + off + ", " + std::to_string(a_bytes));
    const Stmt* outer = cur_stmt_;
    if (checking()) {
      // Both tiles are checked before either is copied, with one barrier; findings are located at
      // the load statements (the first in program order wins).
      std::vector<BoundsCheck> checks;
      cur_stmt_ = lx;
      auto copy_x = cp_async_tile(*lx->args[0], off, a_row, false, &checks);
      cur_stmt_ = ly;
      auto copy_y = cp_async_tile(*ly->args[0], off_y, b_row, true, &checks);
      cur_stmt_ = outer;
      for (BoundsCheck& bc : checks) bc.bad = op("and i1 " + bc.bad + ", " + more);
      report_checks({pending(checks[0]), pending(checks[1])});
      guarded(more, [&] {
        copy_x();
        copy_y();
      });
    } else {
      if (as_barrier) barrier();
      guarded(more, [&] {
        cur_stmt_ = lx;
        cp_async_tile(*lx->args[0], off, a_row);
        cur_stmt_ = ly;
        cp_async_tile(*ly->args[0], off_y, b_row, true);
        cur_stmt_ = outer;
      });
    }
    carried_.clear();
    line("call void asm sideeffect \"cp.async.commit_group;\", \"~{memory}\"()");
  };
  // With wgmma, a loop that runs zero times skips the pipeline: its accumulator registers are then
  // never set between a wgmma and the wait that ends it (ptxas would serialize the wgmmas).
  std::string done;
  if (p.wgmma) {
    std::string run = label("pipe.run");
    done = label("pipe.done");
    line("br i1 " + op("icmp slt " + ty + " " + lo + ", " + hi) + ", label %" + run + ", label %" + done);
    start_block(run);
  }
  const RingHead rh = ring_head(lb, S, "pipe", issue);
  const std::string &ctr = rh.ctr, &sc = rh.sc, &head = rh.head, &exit = rh.exit, &i = rh.i, &cur = rh.cur;
  if (p.wgmma) line("call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
  // Prefetch iteration i + S - 1 into the buffer iteration i - 1 used: with mma.sync every thread is
  // past it after this barrier (the issue's); with wgmma, after this iteration's group is issued and
  // the previous one has completed in every warpgroup (one group stays in flight across the barrier).
  std::string ahead = op("add " + ty + " " + i + ", " + op("mul " + ty + " " + step + ", " + std::to_string(S - 1)));
  std::string nst = stage_before(cur, S);
  if (p.wgmma) barrier();
  else issue(ahead, nst, true);
  line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  std::string off = op("mul i32 " + cur + ", " + std::to_string(stage));
  int64_t ring_floor = smem_floor_;
  for (auto& st : f.body) {
    if (st.get() == lx || st.get() == ly) continue;
    if (st.get() != dot) {
      smem_floor_ = ring_floor + align1024(S * stage);
      emit_stmt(*st);
      smem_floor_ = ring_floor;
      continue;
    }
    std::string boff = op("add i32 " + off + ", " + std::to_string(a_bytes));
    if (fma) {
      Dist D = fma_accumulator(M, N, k_.num_warps);
      TV acc = fit(de.args[2], D);
      std::string a_at = op("lshr i32 " + off + ", 2"), b_at = op("lshr i32 " + boff + ", 2");
      assign(dot->slots[0], TV{de.type, D, fma_tiles(D, K, Scalar::F32, a_at, a_row, b_at, acc.v)});
      continue;
    }
    TV acc = eval(de.args[2]);
    TV r = p.wgmma ? wgmma_tiles(p, off, boff, acc, 1) : mma_tiles(p, off, boff, acc);
    ++info.mma_dots;
    assign(dot->slots[0], TV{de.type, r.dist, r.v});
  }
  flush_checks();
  if (p.wgmma) {
    issue(ahead, nst, true);
    line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  }
  line("store i32 " + op("urem i32 " + op("add i32 " + cur + ", 1") + ", " + std::to_string(S)) + ", i32* " + sc);
  line("store " + ty + " " + op("add " + ty + " " + i + ", " + step) + ", " + ty + "* " + ctr);
  br(head);
  start_block(exit);
  loop_info_.erase(f.slots[0]);
  if (p.wgmma) {  // the last group
    int as = dot->slots[0];
    TV acc = eval(de.args[2]);
    assign(as, TV{de.type, acc.dist, wgmma_wait(acc.v, 0)});
  }
  line("call void asm sideeffect \"cp.async.wait_group 0;\", \"~{memory}\"()");
  barrier();
  if (p.wgmma) {
    br(done);
    start_block(done);
  }
}

}  // namespace dtsim::nvvm
