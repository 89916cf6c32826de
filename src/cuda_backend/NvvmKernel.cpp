// Statement-level lowering of the NVVM emitter (assignments, stores, loops, branches, asserts) and
// the module wrapper (datalayout, declarations, kernel annotations): emit_nvvm / emit_nvvm_module.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Printer.h"

namespace dtsim {
namespace nvvm {

KernelEmitter::KernelEmitter(const Kernel& k, const Bindings& b, const CudaOptions& opt, std::set<std::string>& decls,
                             std::string entry)
    : k_(k), b_(b), opt_(opt), decls_(decls), threads_(k.num_warps * 32) {
  info.entry = std::move(entry);
  info.threads = threads_;
  info.grid_rank = static_cast<int>(std::max<size_t>(1, k.grid.size()));
  if (k.num_warps < 1 || k.num_warps > 32) user_error(k.loc, "CUDA backend: num_warps must be 1-32, got " + std::to_string(k.num_warps));
  reject_unsupported(k.body);
}

// The ops this backend cannot lower yet: a located error before anything is emitted.
void KernelEmitter::reject_unsupported(const std::vector<StmtP>& body) {
  std::function<void(const ExprP&)> expr = [&](const ExprP& e) {
    if (!e) return;

    if (ptx_converts_fp8(e->type.elem) && sm_version() < 89)
      user_error(e->loc, std::string(scalar_name(e->type.elem)) + " values need sm_89 or newer on the CUDA backend (target " +
                             (opt_.arch.empty() ? std::string("sm_90") : opt_.arch) + ")");
    for (const ExprP& a : e->args) expr(a);
  };
  for (const StmtP& s : body) {
    if (s->kind == StmtKind::Atomic) {
      Scalar t = s->args[0]->type.elem;
      bool ok_type = t == Scalar::I8 || t == Scalar::I16 || t == Scalar::I32 || t == Scalar::I64 || t == Scalar::F16 || t == Scalar::BF16 ||
                     t == Scalar::F32 || t == Scalar::F64;
      if (!ok_type)
        user_error(s->loc, std::string(atomicop_name(s->aop)) + " on " + scalar_name(t) +
                               " elements is not supported on the CUDA backend yet (i8, i16, i32, i64, f16, bf16, f32 and f64 are; run it on the interpreter: --backend=interp)");
    }
    for (const ExprP& a : s->args) expr(a);
    reject_unsupported(s->body);
    reject_unsupported(s->orelse);
  }
}

void KernelEmitter::assign(int slot, const TV& v) {
  const auto& vars = slot_vars_[static_cast<size_t>(slot)];
  const Type& t = k_.slot_types[static_cast<size_t>(slot)];
  std::string ty = reg_type(t);
  TV c = t.is_tile() ? convert(v, plan_.layouts[static_cast<size_t>(slot)]) : v;
  for (size_t r = 0; r < vars.size(); ++r) line("store " + ty + " " + c.at(static_cast<int>(r)) + ", " + ty + "* " + vars[r]);
}

void KernelEmitter::emit_block(const std::vector<StmtP>& body) {
  for (auto& s : body) emit_stmt(*s);
  flush_checks();
}

void KernelEmitter::flush_checks() {
  if (deferred_.empty()) return;
  std::vector<PendingCheck> checks;
  checks.swap(deferred_);
  report_checks(checks);
}

// Whether elementwise `e` reads a tile of lower rank than `rank` that is not recomputed (a reduction's
// slice, broadcast to e's shape: attention's l in `acc / l[:, None]`). `depth` > 0: a variable of
// e's rank stands for the last value assigned to it (the DT lowering's `attention_tile =
// l_accumulator.to(f16)` after `l_accumulator = l_accumulator / dvsr[:, None]`), up to depth levels.
bool KernelEmitter::reads_slice(const ExprP& e, size_t rank, int depth) {
  if (depth > 0 && e->kind == ExprKind::Var && e->type.shape.size() == rank && e->slot >= 0 && plan_.single_def[static_cast<size_t>(e->slot)])
    return reads_slice(plan_.single_def[static_cast<size_t>(e->slot)], rank, depth - 1);
  switch (e->kind) {
    case ExprKind::Unary:
    case ExprKind::Cast:
    case ExprKind::Bitcast:
    case ExprKind::Binary:
    case ExprKind::Where:
    case ExprKind::Broadcast:
    case ExprKind::ExpandDims:
      for (const ExprP& a : e->args)
        if (a && reads_slice(a, rank, depth)) return true;
      return false;
    default: return e->type.is_tile() && e->type.shape.size() < rank && !recomputable(e);
  }
}

void KernelEmitter::emit_store(const Stmt& s) {
  auto tma = plan_.tma_stores.find(&s);
  if (tma != plan_.tma_stores.end() && smem_floor_ % 1024 == 0) return emit_tma_store(s, tma->second);
  const ExprP& pe = s.args[0];
  const Type& pt = pe->type;
  // The blocked layout coalesces; a value held in another layout (a reduction's slice) is stored
  // from where it is when the pointers can be computed there.
  Dist d = pt.is_scalar() ? dflt({}) : dflt(pt.shape);
  if (pt.is_tile() && s.args[1]->type.shape == pt.shape && recomputable(pe) && (!s.args[2] || recomputable(s.args[2]))) {
    // ...unless the blocked layout stores wider vectors (a dot accumulator's f16 pairs): then the
    // value is converted once and stored in 16-byte (or 8-byte) vectors. Not where the value also
    // reads a slice of its own layout (`acc / l[:, None]`): in the blocked layout both would move
    // through shared memory, element by element; from the accumulator layout nothing moves and
    // the stores are pairs.
    Dist n = natural(s.args[1]);
    const int wn = n.shape == pt.shape ? vector_width(n, pe, s.args[2], nullptr) : 0;
    if (n.shape == pt.shape &&
        (store_in_place_ || wn >= vector_width(d, pe, s.args[2], nullptr) || (wn >= 2 && reads_slice(s.args[1], pt.shape.size())))) {
      d = n;
    } else if (n.shape == pt.shape && !rename(n, d) && scalar_bytes(pt.elem) == 2 && pt.shape.back() >= 8 &&
               shape_numel(pt.shape) >= int64_t(8) * 32 * k_.num_warps) {
      // A 2-byte value that moves through shared memory anyway: to 8 elements a thread where the
      // pointer allows 16-byte vectors (the blocked default gives 4).
      Dist w8 = blocked(pt.shape, k_.num_warps, 8);
      if (vector_width(w8, pe, s.args[2], nullptr) == 8) d = w8;
    }
  }
  auto p = lazy_fit(pe, d);
  auto v = lazy_fit(s.args[1], d);
  std::function<std::string(int)> m;
  if (s.args[2]) m = lazy_fit(s.args[2], d);
  int n = pt.is_scalar() ? 1 : d.nregs();
  int w = pt.is_scalar() ? 1 : vector_width(d, pe, s.args[2], nullptr);
  if (w > 1) ++info.vector_accesses;
  if (pt.is_tile())
    note("store " + shape_str(pt.shape) + " from " + d.str() + ": " + (w > 1 ? std::to_string(w) + "-element vectors" : std::string("scalar accesses")));
  // Each element is stored once per instance: by thread 0 for a scalar, by the first holder of a tile
  // element.
  std::string own = owner(d);
  BoundsCheck bc, cc;
  if (checking()) bc = begin_bounds(true, pe, pt.is_scalar() ? Shape{} : pt.shape);
  if (conflicts()) cc = begin_conflicts(pe, pt.is_scalar() ? Shape{} : pt.shape);
  for (int r0 = 0; r0 < n; r0 += w) {
    if (first_copy(d, r0) != r0) continue;  // a repeat of an element this thread stores already
    std::vector<std::string> vals;
    for (int j = 0; j < w; ++j) vals.push_back(cast(s.args[1]->type.elem, pt.elem, v(r0 + j)));
    std::string ptr = p(r0);
    std::string cond = s.args[2] ? m(r0) : "true";
    std::string active = cond;
    if (own != "true") cond = cond == "true" ? own : op("and i1 " + cond + ", " + own);
    if (checking()) {
      std::string ok = bounds_lanes(bc, pt.elem, ptr, w, d, r0, active, own);
      cond = cond == "true" ? ok : op("and i1 " + cond + ", " + ok);
    }
    if (conflicts()) conflict_lanes(cc, pt.elem, ptr, w, d, r0, cond, false);
    guarded(cond, [&] {
      if (w == 1)
        store_mem(pt.elem, ptr, vals[0]);
      else
        store_vec(pt.elem, ptr, vals);
    });
  }
  if (checking()) end_bounds(bc);
  if (conflicts()) end_bounds(cc);
}

// The PTX instruction of a 16-bit float atomic: a native add where the target has one (f16 from
// sm_70, bf16 from sm_90), else the 32-bit compare-and-swap of the word holding the element.
std::string KernelEmitter::half_atomic_name(const Stmt& s, Scalar et) const {
  std::string pre = std::string("atom.") + memsem_name(s.sem) + "." + memscope_name(s.scope) + ".global.";
  if (s.aop == AtomicOp::Add && sm_version() >= (et == Scalar::F16 ? 70 : 90)) return pre + "add.noftz." + (et == Scalar::F16 ? "f16" : "bf16");
  return pre + "cas.b32";
}

// One lane's f16/bf16 atomic (the element at `addr`, active where `cond`): its old value as a float
// register (0 where inactive). A native add (half_atomic_name), or a loop of 32-bit compare-and-swap
// on the aligned word holding the element: read the word, compute the element's new value as the
// interpreter does (add rounded as a store of the sum; max/min by the bits of the widened floats;
// xchg; cas where the old value equals cmp), swap the word if no other thread changed it, else
// again with the word it found.
std::string KernelEmitter::atomic_half(const Stmt& s, const std::string& cond, const std::string& addr, const std::string& val,
                                       const std::string& cmpv, const std::function<std::string(const std::string&)>& pred_of) {
  const Scalar et = s.args[0]->type.elem;
  const std::string ins = half_atomic_name(s, et);
  if (ins.find(".add.noftz.") != std::string::npos) {
    std::string text = "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p " + ins + " $0, [$1], $2; }";
    std::string o = op("call i16 asm sideeffect \"" + text + "\", \"=h,l,h,r\"(i64 " + addr + ", i16 " + to_mem(et, val) + ", i32 " + pred_of(cond) + ")");
    return from_mem(et, o);
  }
  // The element's new value from its old one (a float register), as the interpreter computes it.
  auto update = [&](const std::string& oldf) {
    switch (s.aop) {
      case AtomicOp::Add: return round_to(et, op("fadd float " + oldf + ", " + val));
      case AtomicOp::Max:
      case AtomicOp::Min: {
        std::string bv = op("bitcast float " + val + " to i32"), be = op("bitcast float " + oldf + " to i32");
        bool mx = s.aop == AtomicOp::Max;
        std::string pos = op("icmp sge i32 " + bv + ", 0");
        std::string signed_take = op(std::string("icmp ") + (mx ? "sgt" : "slt") + " i32 " + bv + ", " + be);
        std::string unsigned_take = op(std::string("icmp ") + (mx ? "ult" : "ugt") + " i32 " + bv + ", " + be);
        std::string take = op("select i1 " + pos + ", i1 " + signed_take + ", i1 " + unsigned_take);
        return op("select i1 " + take + ", float " + val + ", float " + oldf);
      }
      case AtomicOp::Xchg: return val;
      case AtomicOp::Cas: return op("select i1 " + op("fcmp oeq float " + oldf + ", " + cmpv) + ", float " + val + ", float " + oldf);
      case AtomicOp::UMax:
      case AtomicOp::UMin:
      case AtomicOp::And:
      case AtomicOp::Or:
      case AtomicOp::Xor: internal_error("NvvmEmitter", std::string(atomicop_name(s.aop)) + " on floats");
    }
    return oldf;
  };
  return atomic_in_word(s, cond, addr, "atom16", 2, 65535, "float", literal(et, 0.0, 0, true),
                        [&](const std::string& field) { return from_mem(et, op("trunc i32 " + field + " to i16")); }, update,
                        [&](const std::string& nv) { return op("zext i16 " + to_mem(et, nv) + " to i32"); });
}

// A loop of 32-bit compare-and-swap on the aligned word holding the element at `addr` (active where
// `cond`; `align_mask`: the address bits that place the element in its word, `field_mask` its bits):
// read the word, decode the element (`decode` of the word shifted down), compute its new value
// (`update`), put its bits (`encode`, zero-extended to i32, masked) in place of the old ones, swap
// the word if no other thread changed it, else again with the word found. The old value, or
// `inactive` (of register type `ty`) where cond is false.
std::string KernelEmitter::atomic_in_word(const Stmt& s, const std::string& cond, const std::string& addr, const std::string& name,
                                          int64_t align_mask, int64_t field_mask, const std::string& ty, const std::string& inactive,
                                          const std::function<std::string(const std::string&)>& decode,
                                          const std::function<std::string(const std::string&)>& update,
                                          const std::function<std::string(const std::string&)>& encode) {
  std::string pre = cur_block_, in = label(name), loop = label(name + ".loop"), join = label(name + ".end");
  line(cond == "true" ? "br label %" + in : "br i1 " + cond + ", label %" + in + ", label %" + join);
  start_block(in);
  auto loads = load_cache_;
  std::string waddr = op("and i64 " + addr + ", -4");
  std::string shift = op("shl i32 " + op("trunc i64 " + op("and i64 " + addr + ", " + std::to_string(align_mask)) + " to i32") + ", 3");
  std::string word0 = op("load volatile i32, i32 addrspace(1)* " + op("inttoptr i64 " + waddr + " to i32 addrspace(1)*"));
  br(loop);
  start_block(loop);
  std::string seen = tmp();
  std::string cur = op("phi i32 [" + word0 + ", %" + in + "], [" + seen + ", %" + loop + "]");
  std::string old = decode(op("lshr i32 " + cur + ", " + shift));
  std::string bits = op("shl i32 " + encode(update(old)) + ", " + shift);
  std::string keep = op("and i32 " + cur + ", " + op("xor i32 " + op("shl i32 " + std::to_string(field_mask) + ", " + shift) + ", -1"));
  std::string word = op("or i32 " + keep + ", " + bits);
  std::string text = "atom." + std::string(memsem_name(s.sem)) + "." + memscope_name(s.scope) + ".global.cas.b32 $0, [$1], $2, $3;";
  line(seen + " = call i32 asm sideeffect \"" + text + "\", \"=r,l,r,r\"(i64 " + waddr + ", i32 " + cur + ", i32 " + word + ")");
  line("br i1 " + op("icmp eq i32 " + seen + ", " + cur) + ", label %" + join + ", label %" + loop);
  load_cache_ = std::move(loads);
  start_block(join);
  if (cond == "true") return old;
  return op("phi " + ty + " [" + old + ", %" + loop + "], [" + inactive + ", %" + pre + "]");
}

// One lane's i8/i16 atomic (the element at `addr`, active where `cond`): its old value as an i32
// register (0 where inactive). PTX has no 8- or 16-bit integer atomics, so a loop of 32-bit
// compare-and-swap on the aligned word holding the element: the element's new value computed from
// the word as read, as the interpreter computes it (add wrapping at the element's width; max/min
// signed, umax/umin unsigned, on the sign-extended registers; and/or/xor; xchg; cas where the old
// value equals cmp), the word swapped if no other thread changed it, else again with the word found.
std::string KernelEmitter::atomic_narrow(const Stmt& s, const std::string& cond, const std::string& addr, const std::string& val,
                                         const std::string& cmpv) {
  const Scalar et = s.args[0]->type.elem;
  const std::string mt = mem_type(et);
  const int64_t lane_mask = et == Scalar::I8 ? 0xFF : 0xFFFF;
  auto update = [&](const std::string& old) {
    auto pick = [&](const char* pred) { return op("select i1 " + op(std::string("icmp ") + pred + " i32 " + val + ", " + old) + ", i32 " + val + ", i32 " + old); };
    switch (s.aop) {
      case AtomicOp::Add: return op("add i32 " + old + ", " + val);
      case AtomicOp::Max: return pick("sgt");
      case AtomicOp::Min: return pick("slt");
      case AtomicOp::UMax: return pick("ugt");
      case AtomicOp::UMin: return pick("ult");
      case AtomicOp::And: return op("and i32 " + old + ", " + val);
      case AtomicOp::Or: return op("or i32 " + old + ", " + val);
      case AtomicOp::Xor: return op("xor i32 " + old + ", " + val);
      case AtomicOp::Xchg: return val;
      case AtomicOp::Cas: return op("select i1 " + op("icmp eq i32 " + old + ", " + cmpv) + ", i32 " + val + ", i32 " + old);
    }
    return old;
  };
  return atomic_in_word(s, cond, addr, "atom8", 3, lane_mask, "i32", "0",
                        [&](const std::string& field) { return from_mem(et, op("trunc i32 " + field + " to " + mt)); }, update,
                        [&](const std::string& nv) { return op("and i32 " + nv + ", " + std::to_string(lane_mask)); });
}

// An atomic statement: each element's update is made once per instance, by the first thread holding
// it (the owner, as a store), with PTX `atom` (sem and scope as written); masked-off and non-owner
// lanes issue nothing. The old values, where the statement keeps them, reach every thread holding
// the element: directly when each element has one holder, else through shared memory.
void KernelEmitter::emit_atomic(const Stmt& s) {
  const ExprP& pe = s.args[0];
  const bool cas = s.aop == AtomicOp::Cas;
  const Scalar et = pe->type.elem;
  Shape shape = pe->type.shape;
  for (size_t i = 1; i < 3; ++i)
    if (s.args[i]) shape = broadcast_shapes(shape, s.args[i]->type.shape).value_or(shape);
  Dist d = shape.empty() ? dflt({}) : dflt(shape);
  auto p = lazy_fit(pe, d);
  auto a1 = lazy_fit(s.args[1], d);
  std::function<std::string(int)> a2;
  if (s.args[2]) a2 = lazy_fit(s.args[2], d);
  const int n = shape.empty() ? 1 : d.nregs();
  const std::string own = owner(d);
  const bool wide = et == Scalar::I64 || et == Scalar::F64;
  const bool half = et == Scalar::F16 || et == Scalar::BF16;  // atomic_half
  const bool narrow = et == Scalar::I8 || et == Scalar::I16;  // atomic_narrow
  const std::string ty = reg_type(et);
  const char* reg = et == Scalar::I32 ? "r" : et == Scalar::I64 ? "l" : et == Scalar::F32 ? "f" : "d";
  std::string bits = wide ? "64" : "32";
  // float max/min: integer atomics on the float's bits (see below)
  const bool fminmax = is_float(et) && (s.aop == AtomicOp::Max || s.aop == AtomicOp::Min);
  const Scalar it = wide ? Scalar::I64 : Scalar::I32;
  const std::string ity = reg_type(it);
  const char* ireg = wide ? "l" : "r";
  std::string opname;
  switch (s.aop) {
    case AtomicOp::Add: opname = is_float(et) ? "add.f" + bits : "add.u" + bits; break;
    case AtomicOp::Max: opname = "max.s" + bits; break;
    case AtomicOp::Min: opname = "min.s" + bits; break;
    case AtomicOp::UMax: opname = "max.u" + bits; break;
    case AtomicOp::UMin: opname = "min.u" + bits; break;
    case AtomicOp::And: opname = "and.b" + bits; break;
    case AtomicOp::Or: opname = "or.b" + bits; break;
    case AtomicOp::Xor: opname = "xor.b" + bits; break;
    case AtomicOp::Xchg: opname = "exch.b" + bits; break;
    case AtomicOp::Cas: opname = "cas.b" + bits; break;
  }
  std::string ins = std::string("atom.") + memsem_name(s.sem) + "." + memscope_name(s.scope) + ".global." + opname;
  if (half) ins = half_atomic_name(s, et);
  if (narrow) ins = std::string("atom.") + memsem_name(s.sem) + "." + memscope_name(s.scope) + ".global.cas.b32 (a loop on the 32-bit word)";
  // the predicate is the last operand: $3 (cas: $4)
  std::string asm_text = cas ? "{ .reg .pred p; setp.ne.b32 p, $4, 0; @p " + ins + " $0, [$1], $2, $3; }"
                             : "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p " + ins + " $0, [$1], $2; }";
  std::string cons = std::string("=") + reg + ",l," + reg + (cas ? std::string(",") + reg : "") + ",r";
  note(std::string(atomicop_name(s.aop)) + (shape.empty() ? std::string(" (scalar)") : " " + shape_str(shape) + " from " + d.str()) + ": " + ins);
  BoundsCheck bc, cc;
  if (checking()) bc = begin_bounds(true, pe, shape);
  if (conflicts()) cc = begin_conflicts(pe, shape);
  std::string cmp0;  // a scalar cas's compare value (the lock tracking of conflict checks)
  std::vector<std::string> res(static_cast<size_t>(n));
  bool repeats = false;
  const std::string zero = is_float(et) ? literal(et, 0.0, 0, true) : "0";
  for (int r = 0; r < n; ++r) {
    if (first_copy(d, r) != r) {
      repeats = true;
      continue;
    }
    std::string ptr = p(r);
    std::string cmpv, val;
    if (cas) {
      cmpv = cast(s.args[1]->type.elem, et, a1(r));
      val = cast(s.args[2]->type.elem, et, a2(r));
    } else {
      val = cast(s.args[1]->type.elem, et, a1(r));
    }
    std::string active = !cas && s.args[2] ? a2(r) : "true";
    std::string cond = active;
    if (own != "true") cond = cond == "true" ? own : op("and i1 " + cond + ", " + own);
    if (checking()) {
      std::string okb = bounds_lanes(bc, et, ptr, 1, d, r, active, own);
      cond = cond == "true" ? okb : op("and i1 " + cond + ", " + okb);
    }
    if (conflicts()) conflict_lanes(cc, et, ptr, 1, d, r, cond, true);
    if (cas && r == 0) cmp0 = cmpv;
    std::string addr = op("ptrtoint " + reg_type(Type{et, true, {}}) + " " + ptr + " to i64");
    auto pred_of = [&](const std::string& c) { return c == "true" ? std::string("1") : op("zext i1 " + c + " to i32"); };
    std::string old;
    if (half) {
      old = atomic_half(s, cond, addr, val, cmpv, pred_of);
    } else if (narrow) {
      old = atomic_narrow(s, cond, addr, val, cmpv);
    } else if (fminmax) {
      // On the float's bits: a value with the sign bit clear orders as a signed integer (max.s),
      // one with it set in reverse as an unsigned one (min.u); each lane issues the one its value
      // needs (for min: min.s and max.u), and the old value is the float of what came back.
      std::string bitsv = bitcast(et, it, val);
      std::string pos = op("icmp sge " + ity + " " + bitsv + ", 0");
      std::string neg = op("xor i1 " + pos + ", true");
      auto issue = [&](const std::string& opn, const std::string& c) {
        std::string text = "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p atom." + std::string(memsem_name(s.sem)) + "." + memscope_name(s.scope) +
                           ".global." + opn + " $0, [$1], $2; }";
        return op("call " + ity + " asm sideeffect \"" + text + "\", \"=" + ireg + ",l," + ireg + ",r\"(i64 " + addr + ", " + ity + " " + bitsv +
                  ", i32 " + pred_of(c) + ")");
      };
      std::string cpos = cond == "true" ? pos : op("and i1 " + cond + ", " + pos);
      std::string cneg = cond == "true" ? neg : op("and i1 " + cond + ", " + neg);
      bool mx = s.aop == AtomicOp::Max;
      std::string o1 = issue((mx ? "max.s" : "min.s") + bits, cpos), o2 = issue((mx ? "min.u" : "max.u") + bits, cneg);
      old = bitcast(it, et, op("select i1 " + pos + ", " + ity + " " + o1 + ", " + ity + " " + o2));
    } else {
      std::string operands = "i64 " + addr + ", " + (cas ? ty + " " + cmpv + ", " : std::string()) + ty + " " + val + ", i32 " + pred_of(cond);
      old = op("call " + ty + " asm sideeffect \"" + asm_text + "\", \"" + cons + "\"(" + operands + ")");
    }
    res[static_cast<size_t>(r)] = cond == "true" ? old : op("select i1 " + cond + ", " + ty + " " + old + ", " + ty + " " + zero);
  }
  if (checking()) end_bounds(bc);
  if (conflicts()) end_bounds(cc);
  // Conflict checks skip stores in a critical section: a scalar cas that finds the word at its
  // compare value takes a lock, a scalar xchg gives one back (as the interpreter orders them).
  const bool lock_op = opt_.conflict_checks && shape.empty() && pe->type.is_scalar();
  if (lock_op && s.aop == AtomicOp::Xchg) {
    std::string cur = op("load i32, i32* %dtsim_locks");
    std::string held = op("zext i1 " + op("icmp sgt i32 " + cur + ", 0") + " to i32");
    line("store i32 " + op("sub i32 " + cur + ", " + held) + ", i32* %dtsim_locks");
  }
  if (s.targets.empty()) return;
  if (own != "true" || repeats) {  // several threads hold an element: the owner's old value through shared memory
    TV held{Type{et, false, shape}, d, res};
    use_smem(smem_padded(held.type.numel()) * smem_bytes(held.type));
    barrier();
    smem_store_all(held, 0);
    barrier();
    res = smem_load_all(held.type, d).v;
  } else {
    for (int r = 0; r < n; ++r)
      if (res[static_cast<size_t>(r)].empty()) res[static_cast<size_t>(r)] = res[static_cast<size_t>(first_copy(d, r))];
  }
  if (lock_op && cas) {
    const Scalar bt = half ? Scalar::I16 : it;  // the float's bits, at its own width
    std::string took = is_float(et) ? op("icmp eq " + reg_type(bt) + " " + bitcast(et, bt, res[0]) + ", " + bitcast(et, bt, cmp0))
                                    : op("icmp eq " + ty + " " + res[0] + ", " + cmp0);
    std::string cur = op("load i32, i32* %dtsim_locks");
    line("store i32 " + op("add i32 " + cur + ", " + op("zext i1 " + took + " to i32")) + ", i32* %dtsim_locks");
  }
  assign(s.slots[0], TV{Type{et, false, shape}, d, res});
}

void slots_assigned(const std::vector<StmtP>& body, std::set<int>& out) {
  for (auto& s : body) {
    for (int slot : s->slots) out.insert(slot);
    slots_assigned(s->body, out);
    slots_assigned(s->orelse, out);
  }
}

namespace {
bool leaves_early(const std::vector<StmtP>& body) {
  for (auto& s : body)
    if (s->kind == StmtKind::Return || s->kind == StmtKind::Assert || leaves_early(s->body) || leaves_early(s->orelse)) return true;
  return false;
}
void collect_stores(const std::vector<StmtP>& body, std::vector<const Stmt*>& out) {
  for (auto& s : body) {
    if (s->kind == StmtKind::Store) out.push_back(s.get());
    collect_stores(s->body, out);
    collect_stores(s->orelse, out);
  }
}
}  // namespace

// A load `x = load(p, m, o)` at the top level of a `for` body can be issued one iteration early when
// x is assigned nowhere else, p, m and o are index arithmetic whose only value that changes in the
// loop is the loop variable (tiles defined in the body are recomputed from their definitions), no
// store of the kernel can write its buffer, and no iteration can leave the instance early (return,
// assert): then iteration i + step would load exactly this, and nothing it could observe changes
// in between. Not with --sanitize=bounds, where the order of findings must stay the interpreter's.
std::vector<const Stmt*> KernelEmitter::prefetchable_loads(const Stmt& f) {
  std::vector<const Stmt*> out;
  if (k_.num_stages < 2 || checking() || leaves_early(f.body)) return out;
  std::set<int> in_body;
  slots_assigned(f.body, in_body);
  std::vector<const Stmt*> stores;
  collect_stores(k_.body, stores);
  // Registers: the tiles the body keeps (not index arithmetic, which is recomputed) plus a second set
  // per prefetched tile stay within 160 per thread, so prefetching does not make the loop spill.
  int64_t regs = 0;
  for (int slot : in_body) {
    const Type& t = k_.slot_types[static_cast<size_t>(slot)];
    const ExprP& d = plan_.single_def[static_cast<size_t>(slot)];
    if (t.is_tile() && !(plan_.assigns[static_cast<size_t>(slot)] == 1 && d && recomputable(d)))
      regs += plan_.layouts[static_cast<size_t>(slot)].nregs();
  }
  for (auto& st : f.body) {
    if (st->kind != StmtKind::Assign || st->targets.size() != 1 || st->args[0]->kind != ExprKind::Load) continue;
    const Expr& ld = *st->args[0];
    int slot = st->slots[0];
    if (!ld.type.is_tile() || plan_.assigns[static_cast<size_t>(slot)] != 1) continue;
    bool ok = true;
    std::set<int> deps;
    for (int a = 0; a < 3; ++a) {
      if (!ld.args[a]) continue;
      ok = ok && recomputable(ld.args[a]);
      depends_on(ld.args[a], deps);
    }
    for (int d : deps)
      if (d != f.slots[0] && in_body.count(d) && k_.slot_types[static_cast<size_t>(d)].is_scalar()) ok = false;
    if (!ok) continue;
    bool load_addr = false;
    std::vector<const Param*> load_bufs = buffers_of(ld.args[0], &load_addr);
    for (const Stmt* w : stores) {
      bool store_addr = false;
      for (const Param* p : buffers_of(w->args[0], &store_addr))
        for (const Param* q : load_bufs) ok = ok && p != q;
      ok = ok && !load_addr && !store_addr;  // an address (int_to_ptr) may lie in any buffer
    }
    int64_t r = plan_.layouts[static_cast<size_t>(slot)].nregs();
    if (!ok || regs + r > 160) continue;
    regs += r;
    out.push_back(st.get());
  }
  return out;
}

// With bounds checks, a loop whose accesses can be proven in bounds for all its iterations before it
// starts (loop_in_bounds) is emitted twice: a copy without per-iteration checks, run when the proof
// holds, and the checked copy, run otherwise (which then reports the first failing access, as the
// interpreter does).
void KernelEmitter::emit_for(const Stmt& s) {
  const LoopPlan& lp = plan_.loop(s, unchecked_);
  std::string fast;
  if (lp.hoist) fast = loop_in_bounds(s, *lp.hoist);
  if (fast.empty()) {
    emit_for_loop(s);
    return;
  }
  std::string plain = label("for.inbounds"), checked = label("for.checked"), join = label("for.end");
  line("br i1 " + fast + ", label %" + plain + ", label %" + checked);
  start_block(plain);
  load_cache_.clear();
  // The counters describe the kernel as the checked copy has it (the two copies differ only in checks).
  NvvmKernelInfo counts = info;
  unchecked_ = true;
  emit_for_loop(s);
  unchecked_ = false;
  info.fma_rings = counts.fma_rings, info.conversions = counts.conversions;
  info.vector_accesses = counts.vector_accesses, info.mma_dots = counts.mma_dots;
  info.pipelined_loops = counts.pipelined_loops;
  br(join);
  start_block(checked);
  load_cache_.clear();
  emit_for_loop(s);
  br(join);
  start_block(join);
  load_cache_.clear();
}

void KernelEmitter::emit_for_loop(const Stmt& s) {
  const LoopPlan& lp = plan_.loop(s, unchecked_);
  if (lp.pipeline) {
    switch (lp.pipeline->kind) {
      case PipelinePlan::Kind::CpAsyncRing: emit_pipelined_for(s, *lp.pipeline); return;
      case PipelinePlan::Kind::TmaRing: emit_tma_for(s, *lp.pipeline); return;
      case PipelinePlan::Kind::OperandRings: break;  // below, after its resident A operand
    }
  }
  // The resident A operand: staged below the loop's shared memory, where nothing else writes while
  // the loop runs (every dot's barrier, fence and barrier before its wgmma publish it). Kept for a
  // later loop (LoopPlan::resident_kept), it stays there and the floor stays above it until the
  // loop that reads it last (resident_from, not kept) ends.
  int64_t outer_floor = smem_floor_;
  const std::string& name = lp.resident >= 0 ? k_.slot_names[static_cast<size_t>(lp.resident)] : std::string();
  if (lp.resident >= 0 && lp.resident_from) {
    auto kept = kept_floor_.find(lp.resident);
    if (kept == kept_floor_.end() || !resident_.count(lp.resident)) internal_error("NvvmEmitter", "a kept resident operand was not staged");
    outer_floor = kept->second;
    note(name + ": read by wgmma in the loop where an earlier loop staged it");
  } else if (lp.resident >= 0 && lp.resident_tma) {
    // Copied by the ring's thread 0 (emit_ring_for) in 64-column boxes of M rows.
    const Type& t = lp.resident_var->type;
    use_smem(lp.resident_bytes);
    resident_[lp.resident] = smem_floor_;
    if (t.shape[1] > 64) resident_atoms_[lp.resident] = t.shape[0] * 128;
    smem_floor_ += lp.resident_bytes;
    note(name + ": copied by TMA into shared memory once, read there by wgmma in the loop" + (lp.resident_kept ? " and a later one" : ""));
  } else if (lp.resident >= 0) {
    TV a = eval(lp.resident_var);
    barrier();
    stage_core_matrices(a, "0", false);
    use_smem(lp.resident_bytes);
    resident_[lp.resident] = smem_floor_;
    smem_floor_ += lp.resident_bytes;
    note(name + ": staged into shared memory once, read there by wgmma in the loop" + (lp.resident_kept ? " and a later one" : ""));
  }
  if (lp.pipeline) emit_ring_for(s, *lp.pipeline);
  else emit_plain_for(s, lp);
  if (lp.resident >= 0 && lp.resident_kept) {
    kept_floor_[lp.resident] = outer_floor;
  } else if (lp.resident >= 0) {
    smem_floor_ = outer_floor;
    resident_.erase(lp.resident);
    resident_atoms_.erase(lp.resident);
    kept_floor_.erase(lp.resident);
  }
}

void KernelEmitter::emit_plain_for(const Stmt& s, const LoopPlan& lp) {
  int slot = s.slots[0];
  Scalar t = k_.slot_types[static_cast<size_t>(slot)].elem;
  std::string ty = reg_type(t);
  std::string lo = cast(s.args[0]->type.elem, t, eval_scalar(s.args[0]));
  std::string hi = cast(s.args[1]->type.elem, t, eval_scalar(s.args[1]));
  std::string step = cast(s.args[2]->type.elem, t, eval_scalar(s.args[2]));
  trap_if(op("icmp sle " + ty + " " + step + ", 0"));  // a step <= 0 is a runtime fault
  const std::string& kvar = slot_vars_[static_cast<size_t>(slot)][0];
  loop_info_[slot] = lp.k;
  // Prefetching: the loads of iteration `it` into a second set of registers (when it < hi).
  const std::vector<const Stmt*>& pre = lp.prefetch;
  std::map<const Stmt*, std::vector<std::string>> next;
  auto prefetch = [&](const std::string& it) {
    line("store " + ty + " " + it + ", " + ty + "* " + kvar);
    guarded(op("icmp slt " + ty + " " + it + ", " + hi), [&] {
      for (const Stmt* st : pre) {
        int ls = st->slots[0];
        const Stmt* outer = cur_stmt_;
        cur_stmt_ = st;
        TV v = eval_load_uncached(st->args[0], plan_.layouts[static_cast<size_t>(ls)]);
        cur_stmt_ = outer;
        std::string vt = reg_type(k_.slot_types[static_cast<size_t>(ls)]);
        for (size_t r = 0; r < next[st].size(); ++r) line("store " + vt + " " + v.at(static_cast<int>(r)) + ", " + vt + "* " + next[st][r]);
      }
    });
  };
  if (!pre.empty()) {
    std::string names;
    for (const Stmt* st : pre) {
      int ls = st->slots[0];
      std::string vt = reg_type(k_.slot_types[static_cast<size_t>(ls)]);
      for (int r = 0; r < plan_.layouts[static_cast<size_t>(ls)].nregs(); ++r) {
        std::string v = "%pf" + std::to_string(tmp_++);
        prelude_ << "  " << v << " = alloca " << vt << "\n";
        next[st].push_back(v);
      }
      names += (names.empty() ? "" : ", ") + st->targets[0];
    }
    note("prefetched: " + names + " loaded one iteration ahead into registers");
    prefetch(lo);
  }
  std::string ctr = "%ctr" + std::to_string(tmp_++);
  prelude_ << "  " << ctr << " = alloca " << ty << "\n";
  line("store " + ty + " " + lo + ", " + ty + "* " + ctr);
  std::string head = label("for.head"), body = label("for.body"), exit = label("for.exit");
  br(head);
  start_block(head);
  std::string i = op("load " + ty + ", " + ty + "* " + ctr);
  line("br i1 " + op("icmp slt " + ty + " " + i + ", " + hi) + ", label %" + body + ", label %" + exit);
  start_block(body);
  line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  for (auto& st : s.body) {
    auto it = next.find(st.get());
    if (it == next.end()) {
      emit_stmt(*st);
      continue;
    }
    // The prefetched value becomes the variable's; after the last one, the next iteration's loads
    // are issued, to be in flight while the rest of the body computes.
    int ls = st->slots[0];
    std::string vt = reg_type(k_.slot_types[static_cast<size_t>(ls)]);
    const auto& vars = slot_vars_[static_cast<size_t>(ls)];
    for (size_t r = 0; r < vars.size(); ++r)
      line("store " + vt + " " + op("load " + vt + ", " + vt + "* " + it->second[r]) + ", " + vt + "* " + vars[r]);
    if (st.get() == pre.back()) {
      prefetch(op("add " + ty + " " + i + ", " + step));
      line("store " + ty + " " + i + ", " + ty + "* " + kvar);
    }
  }
  flush_checks();
  loop_info_.erase(slot);
  line("store " + ty + " " + op("add " + ty + " " + i + ", " + step) + ", " + ty + "* " + ctr);
  br(head);
  start_block(exit);
}

void KernelEmitter::emit_if(const Stmt& s) {
  std::string c = to_bool(s.args[0]->type.elem, eval_scalar(s.args[0]));
  std::string then = label("then"), els = label("else"), join = label("endif");
  line("br i1 " + c + ", label %" + then + ", label %" + els);
  start_block(then);
  emit_block(s.body);
  br(join);
  start_block(els);
  emit_block(s.orelse);
  br(join);
  start_block(join);
}

// The condition is a scalar: every thread of the CTA computes the same value, so the loop is
// uniform (as `for` is) and a barrier inside it is reached by all threads or none.
void KernelEmitter::emit_while(const Stmt& s) {
  std::string head = label("while.head"), body = label("while.body"), exit = label("while.exit");
  br(head);
  start_block(head);
  std::string c = to_bool(s.args[0]->type.elem, eval_scalar(s.args[0]));
  line("br i1 " + c + ", label %" + body + ", label %" + exit);
  start_block(body);
  emit_block(s.body);
  br(head);
  start_block(exit);
}

void KernelEmitter::emit_assert(const Stmt& s) {
  if (plan_.true_asserts.count(&s)) return;  // holds for the values compiled for (plan_true_asserts)
  const ExprP& c = s.args[0];
  TV v = eval(c);
  int64_t lanes = c->type.is_scalar() ? 1 : c->type.numel();
  int site = add_site(NvvmKernelInfo::Site::Assert, s.text, lanes, s.loc);
  info.sites[static_cast<size_t>(site)].tile = c->type.shape;
  if (c->type.is_scalar()) {
    // Every thread holds the same condition: no agreement is needed, thread 0 reports lane 0.
    report_uniform(site, op("xor i1 " + v.at(0) + ", true"));
    return;
  }
  // Each element is counted by its first holder (as stores are done).
  CheckAcc a;
  const Dist& d = v.dist;
  std::string own = owner(d);
  for (int r = 0; r < d.nregs(); ++r) {
    if (first_copy(d, r) != r) continue;
    std::string f = op("xor i1 " + v.at(r) + ", true");
    if (own != "true") f = op("and i1 " + f + ", " + own);
    check_lane(a, f, "", flat_of(c->type.shape, coords(d, r)), "");
  }
  report_check(site, a.bad, [&] { return a; });
}

int KernelEmitter::add_site(NvvmKernelInfo::Site::Kind kind, const std::string& text, int64_t lanes, SourceLoc fallback) {
  NvvmKernelInfo::Site st;
  st.kind = kind;
  st.loc = cur_stmt_ && cur_stmt_->loc.valid() ? cur_stmt_->loc : fallback;
  if (cur_stmt_) st.loc2 = cur_stmt_->loc2;
  st.text = text;
  st.lanes = lanes;
  info.sites.push_back(st);
  return static_cast<int>(info.sites.size()) - 1;
}

void KernelEmitter::check_lane(CheckAcc& a, const std::string& fails, const std::string& active, const std::string& lane,
                               const std::string& flat_index, const std::string& other) {
  a.bad = a.bad == "false" ? fails : op("or i1 " + a.bad + ", " + fails);
  a.nbad = op("add i32 " + a.nbad + ", " + op("zext i1 " + fails + " to i32"));
  if (!active.empty()) a.nact = op("add i32 " + a.nact + ", " + op("zext i1 " + active + " to i32"));
  std::string cand = op("select i1 " + fails + ", i32 " + lane + ", i32 2147483647");
  std::string lt = op("icmp slt i32 " + cand + ", " + a.first);
  if (!flat_index.empty()) a.flat = op("select i1 " + lt + ", i64 " + flat_index + ", i64 " + (a.flat.empty() ? "0" : a.flat));
  if (!other.empty()) a.other = op("select i1 " + lt + ", i64 " + other + ", i64 " + (a.other.empty() ? "-1" : a.other));
  a.first = op("select i1 " + lt + ", i32 " + cand + ", i32 " + a.first);
}

// A failing instance leaves with no asynchronous copy or warpgroup MMA of a pipelined loop in flight.
void KernelEmitter::drain_async() {
  if (info.pipelined_loops == 0) return;
  line("call void asm sideeffect \"cp.async.wait_group 0;\", \"~{memory}\"()");
  if (opt_.arch == "sm_90a") line("call void asm sideeffect \"wgmma.wait_group.sync.aligned 0;\", \"~{memory}\"()");
}

void KernelEmitter::report_uniform(int site, const std::string& bad) {
  info.status = true;
  std::string fail_l = label("check.fail"), ok_l = label("check.ok");
  line("br i1 " + bad + ", label %" + fail_l + ", label %" + ok_l);
  start_block(fail_l);
  guarded(op("icmp eq i32 %tid, 0"), [&] { record_status(site, "0", "1", "0", "-1"); });
  drain_async();
  br("exit");
  start_block(ok_l);
}

void KernelEmitter::record_status(int site, const std::string& lane, const std::string& count, const std::string& active,
                                  const std::string& flat, const std::string& other) {
  auto st = [&](int w) { return op("getelementptr i64, i64 addrspace(1)* %p.dtsim_status, i32 " + std::to_string(w)); };
  op("atomicrmw add i64 addrspace(1)* " + st(kDevInstances) + ", i64 1 monotonic");
  // key = 0xFFFFFFFF - linear pid, in the high half of every word: the smallest pid wins each word.
  static const char* ax[] = {"x", "y", "z"};
  std::string id[3], n[3];
  for (int i = 0; i < 3; ++i) {
    id[i] = op("zext i32 " + call("i32", std::string("llvm.nvvm.read.ptx.sreg.ctaid.") + ax[i], "", "") + " to i64");
    n[i] = op("zext i32 " + call("i32", std::string("llvm.nvvm.read.ptx.sreg.nctaid.") + ax[i], "", "") + " to i64");
  }
  std::string lin = op("add i64 " + id[0] + ", " + op("mul i64 " + n[0] + ", " + op("add i64 " + id[1] + ", " + op("mul i64 " + n[1] + ", " + id[2]))));
  std::string key = op("shl i64 " + op("sub i64 4294967295, " + lin) + ", 32");
  auto put = [&](int w, const std::string& v32) {
    std::string v = op("or i64 " + key + ", " + op("zext i32 " + v32 + " to i64"));
    op("atomicrmw umax i64 addrspace(1)* " + st(w) + ", i64 " + v + " monotonic");
  };
  put(kDevSite, std::to_string(site));
  put(kDevLane, lane);
  put(kDevBad, count);
  put(kDevActive, active);
  put(kDevFlatLo, op("trunc i64 " + flat + " to i32"));
  put(kDevFlatHi, op("trunc i64 " + op("lshr i64 " + flat + ", 32") + " to i32"));
  if (!other.empty()) {
    put(kDevOther, op("trunc i64 " + other + " to i32"));
    put(kDevOtherTag, op("trunc i64 " + op("lshr i64 " + other + ", 32") + " to i32"));
  }
}

void KernelEmitter::report_check(int site, const std::string& bad, const std::function<CheckAcc()>& partials) {
  report_checks({PendingCheck{site, bad, partials}});
}

void KernelEmitter::report_checks(const std::vector<PendingCheck>& all) {
  std::vector<PendingCheck> checks;  // accesses through addresses (site -1) are not checked
  for (const PendingCheck& c : all)
    if (c.site >= 0) checks.push_back(c);
  if (checks.empty()) return;
  info.status = true;
  declare("@dtsim_fs = internal addrspace(3) global [4 x i32] undef, align 8");
  declare("declare i32 @llvm.nvvm.barrier0.or(i32)");
  auto any_of = [&](const std::string& bad) {
    std::string any = op("call i32 @llvm.nvvm.barrier0.or(i32 " + op("zext i1 " + bad + " to i32") + ")");
    return op("icmp ne i32 " + any + ", 0");
  };
  std::string bad;
  for (const PendingCheck& c : checks) bad = bad.empty() ? c.bad : op("or i1 " + bad + ", " + c.bad);
  std::string fail_l = label("check.fail"), ok_l = label("check.ok");
  line("br i1 " + any_of(bad) + ", label %" + fail_l + ", label %" + ok_l);
  start_block(fail_l);
  // Some check failed: the first one (in program order) that failed anywhere in the instance reports.
  for (size_t i = 0; i + 1 < checks.size(); ++i) {
    std::string this_l = label("check.this"), next_l = label("check.next");
    line("br i1 " + any_of(checks[i].bad) + ", label %" + this_l + ", label %" + next_l);
    start_block(this_l);
    report_failure(checks[i].site, checks[i].partials);
    start_block(next_l);
  }
  report_failure(checks.back().site, checks.back().partials);
  start_block(ok_l);
}

void KernelEmitter::report_failure(int site, const std::function<CheckAcc()>& partials) {
  CheckAcc acc = partials();
  const std::string& first = acc.first;
  std::string nbad = acc.nbad, nact = acc.nact == "0" ? "0" : acc.nact, flat = acc.flat;
  auto fs = [&](int i) { return op("getelementptr [4 x i32], [4 x i32] addrspace(3)* @dtsim_fs, i32 0, i32 " + std::to_string(i)); };
  std::string t0 = op("icmp eq i32 %tid, 0");
  guarded(t0, [&] {
    line("store i32 2147483647, i32 addrspace(3)* " + fs(0));
    line("store i32 0, i32 addrspace(3)* " + fs(1));
    line("store i32 0, i32 addrspace(3)* " + fs(2));
  });
  barrier();
  op("atomicrmw min i32 addrspace(3)* " + fs(0) + ", i32 " + first + " monotonic");
  op("atomicrmw add i32 addrspace(3)* " + fs(1) + ", i32 " + nbad + " monotonic");
  if (nact != "0") op("atomicrmw add i32 addrspace(3)* " + fs(2) + ", i32 " + nact + " monotonic");
  barrier();
  std::string lane = op("load i32, i32 addrspace(3)* " + fs(0));
  std::string fs64 = op("bitcast i32 addrspace(3)* " + fs(2) + " to i64 addrspace(3)*");
  std::string active = nact != "0" ? op("load i32, i32 addrspace(3)* " + fs(2)) : "0";
  if (!acc.other.empty()) declare("@dtsim_fo = internal addrspace(3) global i64 undef, align 8");
  if (!flat.empty()) {
    // The holder of the first failing lane publishes its buffer index (in words 2-3, after the count)
    // and, for a conflict, the shadow word it found there.
    barrier();
    guarded(op("icmp eq i32 " + first + ", " + lane), [&] {
      line("store i64 " + flat + ", i64 addrspace(3)* " + fs64);
      if (!acc.other.empty()) line("store i64 " + acc.other + ", i64 addrspace(3)* @dtsim_fo");
    });
    barrier();
  }
  guarded(t0, [&] {
    std::string count = op("load i32, i32 addrspace(3)* " + fs(1));
    std::string flat_v = flat.empty() ? "-1" : op("load i64, i64 addrspace(3)* " + fs64);
    std::string other_v = acc.other.empty() ? "" : op("load i64, i64 addrspace(3)* @dtsim_fo");
    record_status(site, lane, count, active, flat_v, other_v);
  });
  drain_async();
  br("exit");
}

void KernelEmitter::emit_stmt(const Stmt& s) {
  const Stmt* outer = cur_stmt_;
  cur_stmt_ = &s;
  // Loads may be reused only within straight-line code with no store in between.
  if (s.kind != StmtKind::Assign) {
    load_cache_.clear();
    flush_checks();
  }
  bool defer = defer_ok_;
  defer_ok_ = s.kind == StmtKind::Assign;
  emit_stmt_body(s);
  defer_ok_ = defer;
  if (s.kind != StmtKind::Assign) load_cache_.clear();
  for (int slot : s.slots)
    for (auto it = load_cache_.begin(); it != load_cache_.end();)
      it = it->second.slots.count(slot) ? load_cache_.erase(it) : std::next(it);
  if (s.kind == StmtKind::Assign && s.targets.size() == 1 && k_.slot_types[static_cast<size_t>(s.slots[0])].is_tile())
    note(s.targets[0] + ": " + plan_.layouts[static_cast<size_t>(s.slots[0])].str());
  cur_stmt_ = outer;
}

void KernelEmitter::emit_stmt_body(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Assign: {
      if (s.targets.size() == 2) {
        auto [i, j] = swizzle(s.args[0]);
        assign(s.slots[0], TV{Type{Scalar::I32, false, {}}, dflt({}), {i}});
        assign(s.slots[1], TV{Type{Scalar::I32, false, {}}, dflt({}), {j}});
        return;
      }
      if (plan_.tma_resident_loads.count(&s)) {  // copied by TMA where its loop stages it
        note(s.targets[0] + ": not loaded here; TMA copies it into shared memory before the loop reading it");
        return;
      }
      // Produced straight in the variable's layout (free for index arithmetic, constants, loads).
      const Type& vt = k_.slot_types[static_cast<size_t>(s.slots[0])];
      assign(s.slots[0], vt.is_tile() ? eval(s.args[0], plan_.layouts[static_cast<size_t>(s.slots[0])]) : eval(s.args[0]));
      return;
    }
    case StmtKind::Store: emit_store(s); return;
    case StmtKind::Atomic: emit_atomic(s); return;
    case StmtKind::For: emit_for(s); return;
    case StmtKind::If: emit_if(s); return;
    case StmtKind::While: emit_while(s); return;
    case StmtKind::Print: return;  // print() is an interpreter feature; the GPU run stays silent
    case StmtKind::Assert: emit_assert(s); return;
    case StmtKind::Return:
      br("exit");
      start_block(label("after.return"));
      return;
  }
}

std::string KernelEmitter::emit() {
  // Variables: one alloca per slot of every variable (libNVVM promotes them to registers).
  if (!planned_) internal_error("NvvmEmitter", "kernel '" + k_.name + "' emitted before it was planned");
  slot_vars_.resize(static_cast<size_t>(k_.num_slots));
  prelude_ << "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n";
  if (opt_.conflict_checks) prelude_ << "  %dtsim_locks = alloca i32\n  store i32 0, i32* %dtsim_locks\n";
  declare("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()");
  for (int s = 0; s < k_.num_slots; ++s) {
    const Type& t = k_.slot_types[static_cast<size_t>(s)];
    int n = t.is_scalar() ? 1 : plan_.layouts[static_cast<size_t>(s)].nregs();
    for (int r = 0; r < n; ++r) {
      std::string v = "%v" + std::to_string(s) + "." + std::to_string(r);
      prelude_ << "  " << v << " = alloca " << reg_type(t) << "\n";
      slot_vars_[static_cast<size_t>(s)].push_back(v);
    }
  }
  // Parameters: buffers and runtime scalars are kernel arguments; constexprs are baked in.
  std::vector<std::string> params, types;
  start_block("body");
  for (const Param& p : k_.params) {
    if (p.slot < 0) continue;
    const Type& t = k_.slot_types[static_cast<size_t>(p.slot)];
    std::string ty = reg_type(t);
    std::string var = slot_vars_[static_cast<size_t>(p.slot)][0];
    std::string arg = "%p." + p.name;
    switch (p.kind) {
      case ParamKind::Pointer:
      case ParamKind::Scalar: {
        bool ptr = p.kind == ParamKind::Pointer;
        std::string at = ptr ? ty : (p.dtype == Scalar::I1 ? "i8" : ty);
        params.push_back(at + " " + arg);
        types.push_back(at);
        {
          NvvmKernelInfo::Arg a;
          a.name = p.name, a.pointer = ptr, a.dtype = p.dtype;
          info.args.push_back(a);
        }
        std::string v = (!ptr && p.dtype == Scalar::I1) ? op("icmp ne i8 " + arg + ", 0") : arg;
        line("store " + ty + " " + v + ", " + ty + "* " + var);
        break;
      }
      case ParamKind::Constexpr: {
        auto it = b_.find(p.name);
        if (it == b_.end()) user_error(p.loc, "no value for constexpr parameter '" + p.name + "'");
        const ScalarValue& sv = it->second;
        line("store " + ty + " " + literal(t.elem, sv.f, sv.i, sv.is_float()) + ", " + ty + "* " + var);
        break;
      }
    }
  }
  // TMA: the tensor maps, 128 bytes each by value (__grid_constant__: see emit_nvvm_module).
  for (size_t i = 0; i < plan_.tma_maps.size(); ++i) {
    const TmaMap& m = plan_.tma_maps[i];
    declare("%dtsim.tmap = type { [16 x i64] }");
    params.push_back("%dtsim.tmap* byval align 64 %tm." + std::to_string(i));
    types.push_back("%dtsim.tmap*");
    NvvmKernelInfo::Arg a;
    a.name = m.buf->name;
    a.pointer = true;
    a.dtype = m.elem;
    a.tensor_map = true;
    a.rows = m.rows.param, a.cols = m.cols.param, a.stride = m.stride.param;
    a.rows_v = m.rows.value, a.cols_v = m.cols.value, a.stride_v = m.stride.value;
    a.box_rows = m.box_rows, a.box_cols = m.box_cols;
    for (const TmaMap::Plane& p : m.planes) a.plane_strides.push_back(p.params), a.plane_strides_v.push_back(p.value);
    info.args.push_back(a);
  }
  before_split_ = info.threads > threads_;  // a producer warp: nothing before its loop may need a barrier
  if (plan_.persistent.on) {
    // The original grid's extents, set at launch; the tile's program ids in allocas.
    for (size_t a = 0; a < std::max<size_t>(1, k_.grid.size()); ++a) {
      tile_grid_.push_back("%p.dtsim_grid" + std::to_string(a));
      tile_pid_.push_back("%tpid" + std::to_string(a));
      prelude_ << "  " << tile_pid_.back() << " = alloca i32\n";
      params.push_back("i32 " + tile_grid_.back());
      types.push_back("i32");
      NvvmKernelInfo::Arg g;
      g.name = "dtsim_grid" + std::to_string(a), g.dtype = Scalar::I32, g.grid_axis = static_cast<int>(a);
      info.args.push_back(g);
    }
    emit_persistent();
    if (info.smem_bytes > max_dynamic_smem(plan_.arch))
      internal_error("NvvmPersistent", "kernel '" + k_.name + "': the persistent grid's ring and epilogue took " + std::to_string(info.smem_bytes) +
                                           " bytes of shared memory, more than the plan's bound (--no-persistent avoids it)");
  } else {
    emit_block(k_.body);
  }
  for (const Param& p : k_.params)  // conflict checks: the shadow words of each buffer written
    if (p.kind == ParamKind::Pointer && shadowed_.count(p.name)) {
      params.push_back("i64 addrspace(1)* %sh." + p.name);
      types.push_back("i64 addrspace(1)*");
      NvvmKernelInfo::Arg a;
      a.name = p.name, a.pointer = true, a.dtype = Scalar::I64, a.shadow = true;
      info.args.push_back(a);
      if (conflict_granules(p.name)) {
        params.push_back("<2 x i64> addrspace(1)* %sg." + p.name);
        types.push_back("<2 x i64> addrspace(1)*");
        a.shadow = false, a.granules = true;
        info.args.push_back(a);
      }
    }
  if (!shadowed_.empty()) {
    params.push_back("i64 %dtsim_epoch");
    types.push_back("i64");
    NvvmKernelInfo::Arg a;
    a.name = "dtsim_epoch", a.dtype = Scalar::I64, a.epoch = true;
    info.args.push_back(a);
  }
  if (info.status) {
    params.push_back("i64 addrspace(1)* %p.dtsim_status");
    types.push_back("i64 addrspace(1)*");
    {
      NvvmKernelInfo::Arg a;
      a.pointer = true, a.status = true;
      info.args.push_back(a);
    }
  }
  br("exit");
  start_block("exit");
  line("ret void");
  std::string sig;
  for (size_t i = 0; i < types.size(); ++i) sig += (i ? ", " : "") + types[i];
  signature = "void (" + sig + ")*";
  std::string out = "define void @" + info.entry + "(";
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i];
  out += ") {\nentry:\n" + prelude_.str() + "  br label %body\n" + body_.str() + "}\n";
  return out;
}

}  // namespace nvvm

int64_t max_dynamic_smem(const std::string& arch) {
  int cc = 0;
  if (arch.rfind("sm_", 0) == 0) cc = std::atoi(arch.c_str() + 3);
  if (cc >= 90) return 232448;
  if (cc == 80) return 166912;
  if (cc >= 86) return 101376;
  return 49152;
}

// Shared memory of one SM, what its CTAs share, each also holding 1 KiB reserved by the system: the
// largest dynamic size plus that KiB (before sm_80 less than the SM has: fewer CTAs counted).
static int64_t smem_per_sm(const std::string& arch) { return max_dynamic_smem(arch) + 1024; }

NvvmModule emit_nvvm_module(const Module& m, const Bindings& b, const CudaOptions& opt) {
  NvvmModule out;
  std::set<std::string> decls;
  std::string funcs, annotations;
  std::vector<std::string> names;
  int md = 0;
  std::string md_list;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel& k = m.kernels[i];
    std::string entry = k.name;
    if (std::count(names.begin(), names.end(), entry)) entry += "_" + std::to_string(i);
    names.push_back(entry);
    // Shared memory: the dynamic buffer plus, where the status buffer is used, 1 KiB of static
    // variables (the dynamic buffer starts 1024-aligned). The plan decides whether the FMA rings fit
    // (SmemPlan); a kernel that still needs more than the limit is an error.
    std::string arch = opt.arch.empty() ? "sm_90" : opt.arch;
    auto ke = std::make_unique<nvvm::KernelEmitter>(k, b, opt, decls, entry);
    ke->plan();
    std::string text = ke->emit();
    int64_t limit = max_dynamic_smem(arch) - (ke->info.status ? 1024 : 0);
    if (ke->info.smem_bytes > limit)
      user_error(k.loc, "CUDA backend: kernel '" + k.name + "' needs " + std::to_string(ke->info.smem_bytes) +
                            " bytes of shared memory for its layout conversions, reductions and dot operands (at most " +
                            std::to_string(limit) + " on " + arch + "); use smaller tiles");
    funcs += text + "\n";
    // A loop emitted twice for hoisted bounds checks makes the kernel allocate registers for its
    // checked copy too, which can cost the unchecked copy CTAs per SM (an f16 matmul: 124 registers
    // unchecked, 157 with the checked copy: 2 -> 1 CTA). The count that keeps the CTAs that shared
    // memory and threads allow; the runner caps the kernel at it where the unchecked kernel fits.
    if (opt.bounds_checks && ke->info.hoisted_loops > 0) {
      int64_t per_sm = ke->info.smem_bytes > 0 ? smem_per_sm(arch) / (ke->info.smem_bytes + 1024 + (ke->info.status ? 1024 : 0)) : 32;
      int64_t ctas = std::min<int64_t>({per_sm, 2048 / ke->info.threads, 32});
      int64_t cap = ctas > 0 ? 65536 / (ctas * ke->info.threads) / 8 * 8 : 0;
      if (cap >= 128 && cap < 255) ke->info.occupancy_registers = static_cast<int>(cap);
    }
    std::vector<const char*> attrs = {"kernel", "maxntidx"};
    auto cap = opt.max_registers.find(entry);
    if (cap != opt.max_registers.end()) attrs.push_back("maxnreg");
    for (const char* a : attrs) {
      int v = std::string(a) == "kernel" ? 1 : std::string(a) == "maxntidx" ? ke->info.threads : cap->second;
      annotations += "!" + std::to_string(md) + " = !{" + ke->signature + " @" + entry + ", !\"" + a + "\", i32 " + std::to_string(v) + "}\n";
      md_list += (md ? ", !" : "!") + std::to_string(md);
      ++md;
    }
    // Tensor maps are __grid_constant__ (read where the launch put them, their address taken by the
    // TMA copies): the 1-based indices of those parameters.
    std::string grid_constant;
    for (size_t a = 0; a < ke->info.args.size(); ++a)
      if (ke->info.args[a].tensor_map) grid_constant += (grid_constant.empty() ? "i32 " : ", i32 ") + std::to_string(a + 1);
    if (!grid_constant.empty()) {
      annotations += "!" + std::to_string(md) + " = !{" + ke->signature + " @" + entry + ", !\"grid_constant\", !" + std::to_string(md + 1) + "}\n";
      annotations += "!" + std::to_string(md + 1) + " = !{" + grid_constant + "}\n";
      md_list += (md ? ", !" : "!") + std::to_string(md);
      md += 2;
    }
    out.kernels.push_back(ke->info);
  }
  std::string ir;
  ir += "; NVVM IR generated by dtsim from " + m.file + "\n";
  ir += "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n";
  ir += "target triple = \"nvptx64-nvidia-cuda\"\n\n";
  ir += "@dtsim_smem = external addrspace(3) global [0 x i8], align 1024\n\n";
  for (auto& d : decls) ir += d + "\n";
  ir += "\n" + funcs;
  ir += "!nvvm.annotations = !{" + md_list + "}\n" + annotations;
  ir += "!nvvmir.version = !{!" + std::to_string(md) + "}\n!" + std::to_string(md) + " = !{i32 2, i32 0}\n";
  out.ir = std::move(ir);
  return out;
}

std::string emit_nvvm(const Module& m, const Bindings& b, const CudaOptions& opt) { return emit_nvvm_module(m, b, opt).ir; }

namespace {
void layout_lines(const std::vector<StmtP>& body, int depth, const NvvmKernelInfo& ki, std::string& out) {
  std::string pad(static_cast<size_t>(2 * depth), ' ');
  for (auto& s : body) {
    std::string text = print_stmt(*s, 0);
    text = text.substr(0, text.find('\n'));
    if (!text.empty() && text.back() == '{') text.pop_back();
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += pad + text + "\n";
    for (auto& [id, t] : ki.notes)
      if (id == s->id) out += pad + "    # " + t + "\n";
    layout_lines(s->body, depth + 1, ki, out);
    if (!s->orelse.empty()) {
      out += pad + "else\n";
      layout_lines(s->orelse, depth + 1, ki, out);
    }
  }
}
}  // namespace

std::string emit_plan(const Module& m, const Bindings& b, const CudaOptions& opt) {
  std::string out;
  std::set<std::string> decls;
  for (const Kernel& k : m.kernels) {
    nvvm::KernelEmitter ke(k, b, opt, decls, k.name);
    ke.plan();
    out += ke.kernel_plan().print(k);
  }
  return out;
}

std::string emit_layouts(const Module& m, const Bindings& b, const CudaOptions& opt) {
  NvvmModule nm = emit_nvvm_module(m, b, opt);
  std::string out;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel& k = m.kernels[i];
    const NvvmKernelInfo& ki = nm.kernels[i];
    out += "kernel " + k.name + ": " + std::to_string(k.num_warps) + " warps, " + std::to_string(ki.smem_bytes) +
           " bytes of shared memory, target " + (opt.arch.empty() ? std::string("sm_90") : opt.arch) + "\n";
    layout_lines(k.body, 1, ki, out);
  }
  return out;
}

}  // namespace dtsim
