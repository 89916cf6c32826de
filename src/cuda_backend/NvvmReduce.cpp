// Reductions of the NVVM emitter: the operand in its blocked layout is folded in each thread, then
// across the lanes of a warp with butterfly shuffles, then across warps through one round of shared
// memory. The result is held in the slice layout of the operand's layout (every thread that held a
// part of a reduced line holds the result), so broadcasting it back moves no data.
#include <algorithm>

#include "cuda_backend/KernelEmitter.h"

namespace dtsim::nvvm {

// Shuffles a register value from lane ^ mask (every lane of the warp takes part).
std::string KernelEmitter::shuffle_xor(Scalar vt, const std::string& v, int mask) {
  declare("declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)");
  declare("declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)");
  std::string m = std::to_string(mask);
  auto shfl32 = [&](const std::string& x) { return op("call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 " + x + ", i32 " + m + ", i32 31)"); };
  auto shfl64 = [&](const std::string& x) {
    std::string lo = op("trunc i64 " + x + " to i32");
    std::string hi = op("trunc i64 " + op("lshr i64 " + x + ", 32") + " to i32");
    std::string l2 = op("zext i32 " + shfl32(lo) + " to i64"), h2 = op("zext i32 " + shfl32(hi) + " to i64");
    return op("or i64 " + l2 + ", " + op("shl i64 " + h2 + ", 32"));
  };
  switch (vt) {
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: return op("call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float " + v + ", i32 " + m + ", i32 31)");
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32: return shfl32(v);
    case Scalar::I1: return op("icmp ne i32 " + shfl32(op("zext i1 " + v + " to i32")) + ", 0");
    case Scalar::I64: return shfl64(v);
    case Scalar::F64: return op("bitcast i64 " + shfl64(op("bitcast double " + v + " to i64")) + " to double");
  }
  return v;
}

// One step of a reduction: a and b are partial results (ia, ib their indices for argmax/argmin).
// argmax/argmin take the extremal value, a NaN over any number, and the smaller index on ties, so
// the result does not depend on the order of the steps.
std::string KernelEmitter::combine(RedOp rop, Scalar vt, const std::string& a, const std::string& b, const std::string& ia,
                                   const std::string& ib, std::string* idx) {
  std::string ty = reg_type(vt);
  switch (rop) {
    case RedOp::Sum: return binary_typed(BinOp::Add, vt, a, b);
    case RedOp::Fn: internal_error("NvvmEmitter", "a reduction with a combine function goes through eval_scan");
    case RedOp::Xor: return binary_typed(BinOp::Xor, vt, a, b);
    case RedOp::Or: return binary_typed(BinOp::Or, vt, a, b);
    case RedOp::Max:
    case RedOp::Min: return nan_minmax(rop == RedOp::Max, vt, a, b);
    case RedOp::Argmax:
    case RedOp::Argmin: {
      bool is_max = rop == RedOp::Argmax;
      std::string lower = op("icmp slt i32 " + ib + ", " + ia);
      std::string take_b;
      if (is_float(vt)) {
        std::string an = op("fcmp uno " + ty + " " + a + ", " + a), bn = op("fcmp uno " + ty + " " + b + ", " + b);
        std::string better = op(std::string("fcmp ") + (is_max ? "ogt " : "olt ") + ty + " " + b + ", " + a);
        std::string equal = op("or i1 " + op("fcmp oeq " + ty + " " + b + ", " + a) + ", " + op("and i1 " + an + ", " + bn));
        std::string only_b_nan = op("and i1 " + bn + ", " + op("xor i1 " + an + ", true"));
        take_b = op("or i1 " + op("or i1 " + better + ", " + only_b_nan) + ", " + op("and i1 " + equal + ", " + lower));
      } else {
        const char* c = vt == Scalar::I1 ? (is_max ? "ugt " : "ult ") : (is_max ? "sgt " : "slt ");
        std::string better = op(std::string("icmp ") + c + ty + " " + b + ", " + a);
        std::string equal = op("icmp eq " + ty + " " + b + ", " + a);
        take_b = op("or i1 " + better + ", " + op("and i1 " + equal + ", " + lower));
      }
      *idx = op("select i1 " + take_b + ", i32 " + ib + ", i32 " + ia);
      return op("select i1 " + take_b + ", " + ty + " " + b + ", " + ty + " " + a);
    }
  }
  return a;
}

TV KernelEmitter::eval_reduce(const ExprP& e) {
  const ExprP& ex = e->args[0];
  const Type& xt = ex->type;
  size_t ax = static_cast<size_t>(e->ints[0]);
  Scalar xe = xt.elem, rt = e->type.elem;
  bool arg = e->rop == RedOp::Argmax || e->rop == RedOp::Argmin;
  Scalar vt = arg ? xe : rt;  // type of the running value
  Dist P = reduce_parent(ex);
  Dist S = slice(P, static_cast<int>(ax));
  TV x = eval(ex, P);

  // 1. In each thread: registers that differ only along the axis, folded in index order.
  std::vector<size_t> keep;  // P's register bits that survive in S, in order
  for (size_t i = 0; i < P.reg.size(); ++i)
    if (P.reg[i][ax] == 0) keep.push_back(i);
  int ns = S.nregs();
  std::vector<std::vector<int>> members(static_cast<size_t>(ns));
  for (int r = 0; r < P.nregs(); ++r) {
    int s = 0;
    for (size_t j = 0; j < keep.size(); ++j)
      if (r >> keep[j] & 1) s |= 1 << j;
    members[static_cast<size_t>(s)].push_back(r);
  }
  std::vector<std::string> val(static_cast<size_t>(ns)), idx(static_cast<size_t>(ns));
  // Folds value v (index i) into result register s; the first value starts it.
  auto fold = [&](int s, const std::string& v, const std::string& i, bool first) {
    size_t k = static_cast<size_t>(s);
    if (first) {
      val[k] = v;
      idx[k] = i;
      return;
    }
    std::string ni;
    val[k] = combine(e->rop, vt, val[k], v, idx[k], i, &ni);
    if (arg) idx[k] = ni;
  };
  for (int s = 0; s < ns; ++s) {
    auto& mem = members[static_cast<size_t>(s)];
    std::stable_sort(mem.begin(), mem.end(), [&](int a, int b) { return P.reg_coord(a)[ax] < P.reg_coord(b)[ax]; });
    for (size_t j = 0; j < mem.size(); ++j) {
      fold(s, cast(xe, vt, x.at(mem[j])), arg ? coords(P, mem[j])[ax] : "", j == 0);
    }
  }

  // 2. Across the lanes that hold parts of one line: butterfly shuffles.
  uint32_t ax_lanes = 0;
  for (size_t i = 0; i < P.lane.size(); ++i) {
    if (P.lane[i][ax] == 0) continue;
    ax_lanes |= 1u << i;
    for (int s = 0; s < ns; ++s) {
      std::string ov = shuffle_xor(vt, val[static_cast<size_t>(s)], 1 << i);
      fold(s, ov, arg ? shuffle_xor(Scalar::I32, idx[static_cast<size_t>(s)], 1 << i) : "", false);
    }
  }

  // 3. Across warps: one partial per (result element, warp along the axis) in shared memory.
  std::vector<size_t> wbits;
  for (size_t i = 0; i < P.warp.size(); ++i)
    if (P.warp[i][ax] != 0) wbits.push_back(i);
  if (!wbits.empty()) {
    int64_t nw = int64_t(1) << wbits.size();
    int64_t nres = e->type.is_scalar() ? 1 : e->type.numel();
    Type vtype{vt, false, {}};
    int64_t vbytes = smem_bytes(vtype);
    int64_t off_idx = (nres * nw * vbytes + 15) / 16 * 16;
    use_smem(off_idx + (arg ? nres * nw * 4 : 0));
    std::string wax = "0";
    for (size_t j = 0; j < wbits.size(); ++j) {
      std::string b = op("and i32 " + op("lshr i32 " + warp_id() + ", " + std::to_string(wbits[j])) + ", 1");
      if (j) b = op("shl i32 " + b + ", " + std::to_string(j));
      wax = wax == "0" ? b : op("or i32 " + wax + ", " + b);
    }
    uint32_t lane_mask = ax_lanes | P.replicated_lane_mask();
    uint32_t warp_mask = P.replicated_warp_mask();
    std::string writer = "true";
    if (lane_mask) writer = op("icmp eq i32 " + op("and i32 " + lane_id() + ", " + std::to_string(lane_mask)) + ", 0");
    if (warp_mask) {
      std::string w = op("icmp eq i32 " + op("and i32 " + warp_id() + ", " + std::to_string(warp_mask)) + ", 0");
      writer = writer == "true" ? w : op("and i1 " + writer + ", " + w);
    }
    std::string st = smem_type(vtype);
    Type itype{Scalar::I32, false, {}};
    auto opf = [this](const std::string& r) { return op(r); };
    (void)opf;
    std::vector<std::string> base(static_cast<size_t>(ns));
    for (int s = 0; s < ns; ++s) {
      std::string f = e->type.is_scalar() ? "0" : flat_of(S.shape, coords(S, s));
      base[static_cast<size_t>(s)] = f == "0" ? "0" : op("mul i32 " + f + ", " + std::to_string(nw));
    }
    barrier();
    guarded(writer, [&] {
      for (int s = 0; s < ns; ++s) {
        std::string at = base[static_cast<size_t>(s)] == "0" ? wax : op("add i32 " + base[static_cast<size_t>(s)] + ", " + wax);
        std::string v = val[static_cast<size_t>(s)];
        if (vt == Scalar::I1) v = op("zext i1 " + v + " to i8");
        line("store " + st + " " + v + ", " + st + " addrspace(3)* " + smem_ptr(vtype, 0, at));
        if (arg) line("store i32 " + idx[static_cast<size_t>(s)] + ", i32 addrspace(3)* " + smem_ptr(itype, off_idx, at));
      }
    });
    barrier();
    for (int s = 0; s < ns; ++s) {
      for (int64_t j = 0; j < nw; ++j) {
        std::string b = base[static_cast<size_t>(s)];
        std::string at = b == "0" ? std::to_string(j) : op("add i32 " + b + ", " + std::to_string(j));
        std::string v = op("load " + st + ", " + st + " addrspace(3)* " + smem_ptr(vtype, 0, at));
        if (vt == Scalar::I1) v = op("icmp ne i8 " + v + ", 0");
        fold(s, v, arg ? op("load i32, i32 addrspace(3)* " + smem_ptr(itype, off_idx, at)) : "", j == 0);
      }
    }
  }
  {
    int in_thread = P.nregs() / ns, lanes = 0;
    for (uint32_t m = ax_lanes; m; m >>= 1) lanes += m & 1;
    note(std::string(redop_name(e->rop)) + " over axis " + std::to_string(ax) + ": " + std::to_string(in_thread) + " per thread, " +
         std::to_string(lanes) + " shuffle step(s), " + (wbits.empty() ? std::string("no shared memory") : std::to_string(1 << wbits.size()) + " warps through shared memory") +
         " -> " + (e->type.is_scalar() ? std::string("scalar") : S.str()));
  }
  TV out{e->type, e->type.is_scalar() ? dflt({}) : S, arg ? idx : val};
  return out;
}

}  // namespace dtsim::nvvm

namespace dtsim::nvvm {

// The loops of a scan in shared memory: for (line = tid; line < lines; line += threads) { accs =
// first(flat of the line's element 0); for (k = 1; k < n; ++k) accs = step(accs, flat of element
// k) }, a line being the n elements `inner` apart along the scanned axis (from the last when
// `reverse`), one alloca per accumulator of `types`. step stores what the scan leaves in shared memory.
void KernelEmitter::scan_lines(int64_t n, int64_t inner, int64_t lines, bool reverse, const std::vector<Scalar>& types,
                               const std::function<std::vector<std::string>(const std::string&)>& first,
                               const std::function<std::vector<std::string>(const std::vector<std::string>&, const std::string&)>& step) {
  std::string lvar = "%scan.line" + std::to_string(tmp_++), kvar = "%scan.k" + std::to_string(tmp_++);
  std::vector<std::string> avar;
  prelude_ << "  " << lvar << " = alloca i32\n  " << kvar << " = alloca i32\n";
  for (Scalar t : types) {
    avar.push_back("%scan.acc" + std::to_string(tmp_++));
    prelude_ << "  " << avar.back() << " = alloca " << reg_type(t) << "\n";
  }
  std::string lhead = label("scan.line"), lbody = label("scan.linebody"), khead = label("scan.k"), kbody = label("scan.kbody"),
              kdone = label("scan.kdone"), ldone = label("scan.done");
  line("store i32 %tid, i32* " + lvar);
  br(lhead);
  start_block(lhead);
  std::string l = op("load i32, i32* " + lvar);
  line("br i1 " + op("icmp slt i32 " + l + ", " + std::to_string(lines)) + ", label %" + lbody + ", label %" + ldone);
  start_block(lbody);
  std::string inn = std::to_string(inner);
  std::string base = op("add i32 " + op("mul i32 " + op("sdiv i32 " + l + ", " + inn) + ", " + std::to_string(n * inner)) + ", " +
                        op("srem i32 " + l + ", " + inn));
  auto at_k = [&](const std::string& k) {  // the flat index of the k-th element of the line, in scan order
    std::string pos = reverse ? op("sub i32 " + std::to_string(n - 1) + ", " + k) : k;
    return op("add i32 " + base + ", " + op("mul i32 " + pos + ", " + inn));
  };
  auto keep = [&](const std::vector<std::string>& vs) {
    for (size_t i = 0; i < types.size(); ++i) line("store " + reg_type(types[i]) + " " + vs[i] + ", " + reg_type(types[i]) + "* " + avar[i]);
  };
  keep(first(at_k("0")));
  line("store i32 1, i32* " + kvar);
  br(khead);
  start_block(khead);
  std::string k = op("load i32, i32* " + kvar);
  line("br i1 " + op("icmp slt i32 " + k + ", " + std::to_string(n)) + ", label %" + kbody + ", label %" + kdone);
  start_block(kbody);
  std::string fk = at_k(k);
  std::vector<std::string> accs;
  for (size_t i = 0; i < types.size(); ++i) accs.push_back(op("load " + reg_type(types[i]) + ", " + reg_type(types[i]) + "* " + avar[i]));
  keep(step(accs, fk));
  line("store i32 " + op("add i32 " + k + ", 1") + ", i32* " + kvar);
  br(khead);
  start_block(kdone);
  line("store i32 " + op("add i32 " + l + ", " + std::to_string(threads_)) + ", i32* " + lvar);
  br(lhead);
  start_block(ldone);
}

// The flat index of the last element of line l2 (a scan of n elements `inner` apart): a reduction's
// result element l2 (row-major over the other axes).
std::string KernelEmitter::scan_line_last(const std::string& l2, int64_t n, int64_t inner) {
  std::string inn = std::to_string(inner);
  std::string b2 = op("add i32 " + op("mul i32 " + op("sdiv i32 " + l2 + ", " + inn) + ", " + std::to_string(n * inner)) + ", " +
                      op("srem i32 " + l2 + ", " + inn));
  return op("add i32 " + b2 + ", " + std::to_string((n - 1) * inner));
}

// The value of e in layout d, register by register: value(r) for the first copy of each element,
// the copies sharing it.
TV KernelEmitter::scan_results(const ExprP& e, const Dist& d, const std::function<std::string(int)>& value) {
  TV out{e->type, d, {}};
  const int nr = e->type.is_scalar() ? 1 : d.nregs();
  for (int r = 0; r < nr; ++r) {
    int f = e->type.is_scalar() ? r : first_copy(d, r);
    out.v.push_back(f != r ? out.v[static_cast<size_t>(f)] : value(r));
  }
  return out;
}

// A scan: the operand in shared memory (its padded flat layout), each line along the axis scanned in
// place by one thread (lines spread over the CTA's threads, a loop over the axis's elements), then
// every thread reads its elements back in layout d. The steps are the interpreter's, in its order
// (IR.h: f16/bf16 round after every step); a combine function is emitted inline per step. A
// reduction with a combine function is the same scan, each result the last element of its line.
TV KernelEmitter::eval_scan(const ExprP& e, const Dist& d) {
  if (!e->fns.empty()) return eval_scan_n(e, d);
  const ExprP& x = e->args[0];
  const Shape& s = x->type.shape;
  const bool reduce = e->kind == ExprKind::Reduce;
  const Scalar t = x->type.elem == Scalar::I1 && !reduce ? Scalar::I32 : reduce ? x->type.elem : e->type.elem;
  const Type vt{t, false, s};
  const int ax = static_cast<int>(e->ints[0]);
  int64_t n = s[static_cast<size_t>(ax)], inner = 1;
  for (size_t i = static_cast<size_t>(ax) + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t lines = shape_numel(s) / n;
  Dist bd = dflt(s);
  TV xv = eval(x, bd);
  for (auto& r : xv.v) r = cast(x->type.elem, t, r);
  xv.type = vt;
  auto opf = [this](const std::string& r) { return op(r); };
  use_smem(smem_padded(shape_numel(s)) * smem_bytes(vt));
  note(std::string(reduce ? redop_name(e->rop) : scanop_name(e->sop)) + " " + shape_str(s) + " along axis " + std::to_string(ax) + ": " +
       std::to_string(lines) + " line(s) scanned in shared memory, one thread each");
  barrier();
  smem_store_all(xv, 0);
  barrier();
  const std::string st = smem_type(vt);
  const Type et{t, false, {}};
  auto slot = [&](const std::string& flat) { return smem_ptr(et, 0, smem_index(flat)); };
  auto ld = [&](const std::string& flat) { return from_smem_value(et, op("load " + st + ", " + st + " addrspace(3)* " + slot(flat)), opf); };
  auto call_fn = [&](const std::string& acc, const std::string& v) {  // the combine function, inline
    combine_regs_ = {acc, v};
    std::string r = cast(e->fn->type.elem, t, eval(e->fn, dflt({})).v.at(0));
    combine_regs_.clear();
    return r;
  };
  auto step = [&](const std::string& acc, const std::string& v) -> std::string {
    if (reduce) return call_fn(acc, v);
    switch (e->sop) {
      case ScanOp::Sum: return binary_typed(BinOp::Add, t, acc, v);
      case ScanOp::Prod: return binary_typed(BinOp::Mul, t, acc, v);
      case ScanOp::Max: return nan_minmax(true, t, acc, v);
      case ScanOp::Min: return nan_minmax(false, t, acc, v);
      case ScanOp::Fn: return call_fn(acc, v);
    }
    return acc;
  };
  scan_lines(n, inner, lines, e->reverse, std::vector<Scalar>{t}, [&](const std::string& f0) { return std::vector<std::string>{ld(f0)}; },
             [&](const std::vector<std::string>& accs, const std::string& fk) {
               std::string acc = step(accs[0], ld(fk));
               line("store " + st + " " + to_smem_value(et, acc, opf) + ", " + st + " addrspace(3)* " + slot(fk));
               return std::vector<std::string>{acc};
             });
  barrier();
  if (!reduce) return smem_load_all(vt, d);
  return scan_results(e, d, [&](int r) {
    return ld(scan_line_last(e->type.is_scalar() ? std::string("0") : flat_of(e->type.shape, coords(d, r)), n, inner));
  });
}

// A reduce / associative_scan of several operands (Expr::fns; component e->part is the value): as
// eval_scan, each operand in shared memory (one region after another), each line folded by one
// thread with N accumulators, every step computing all N components of the combine function from
// the values so far and the next elements; the component's elements are read back in layout d.
TV KernelEmitter::eval_scan_n(const ExprP& e, const Dist& d) {
  const size_t N = e->args.size();
  const Shape& s = e->args[0]->type.shape;
  const bool reduce = e->kind == ExprKind::Reduce;
  const int ax = static_cast<int>(e->ints[0]);
  int64_t n = s[static_cast<size_t>(ax)], inner = 1;
  for (size_t i = static_cast<size_t>(ax) + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t lines = shape_numel(s) / n;
  const Dist bd = dflt(s);
  auto opf = [this](const std::string& r) { return op(r); };
  // operand i at byte offset off[i] of the shared buffer (its padded flat layout)
  std::vector<int64_t> off;
  std::vector<Type> ets;
  std::vector<Scalar> types;
  int64_t bytes = 0;
  for (size_t i = 0; i < N; ++i) {
    const Type vt{e->args[i]->type.elem, false, s};
    bytes = (bytes + 7) / 8 * 8;
    off.push_back(bytes);
    bytes += smem_padded(shape_numel(s)) * smem_bytes(vt);
    ets.push_back(Type{vt.elem, false, {}});
    types.push_back(vt.elem);
  }
  use_smem(bytes);
  note(std::string(reduce ? "reduce" : "associative_scan") + " of " + std::to_string(N) + " operands " + shape_str(s) + " along axis " +
       std::to_string(ax) + ": " + std::to_string(lines) + " line(s) scanned in shared memory, one thread each");
  std::vector<TV> xs;
  for (size_t i = 0; i < N; ++i) xs.push_back(eval(e->args[i], bd));
  barrier();
  for (size_t i = 0; i < N; ++i) smem_store_all(xs[i], off[i]);
  barrier();
  auto slot = [&](size_t i, const std::string& flat) { return smem_ptr(ets[i], off[i], smem_index(flat)); };
  auto ld = [&](size_t i, const std::string& flat) {
    std::string st = smem_type(ets[i]);
    return from_smem_value(ets[i], op("load " + st + ", " + st + " addrspace(3)* " + slot(i, flat)), opf);
  };
  auto st_ = [&](size_t i, const std::string& flat, const std::string& v) {
    std::string st = smem_type(ets[i]);
    line("store " + st + " " + to_smem_value(ets[i], v, opf) + ", " + st + " addrspace(3)* " + slot(i, flat));
  };
  scan_lines(
      n, inner, lines, e->reverse, types,
      [&](const std::string& f0) {
        std::vector<std::string> firsts;
        for (size_t i = 0; i < N; ++i) firsts.push_back(ld(i, f0));
        return firsts;
      },
      [&](const std::vector<std::string>& accs, const std::string& fk) {
        std::vector<std::string> regs = accs;
        for (size_t i = 0; i < N; ++i) regs.push_back(ld(i, fk));
        std::vector<std::string> saved = combine_regs_;
        combine_regs_ = regs;
        std::vector<std::string> next;
        for (size_t i = 0; i < N; ++i) next.push_back(cast(e->fns[i]->type.elem, ets[i].elem, eval(e->fns[i], dflt({})).v.at(0)));
        combine_regs_ = saved;
        for (size_t i = 0; i < N; ++i) st_(i, fk, next[i]);
        return next;
      });
  barrier();
  const size_t part = static_cast<size_t>(e->part);
  return scan_results(e, d, [&](int r) {
    std::string flat = !reduce ? flat_of(s, coords(d, r))
                               : scan_line_last(e->type.is_scalar() ? std::string("0") : flat_of(e->type.shape, coords(d, r)), n, inner);
    return ld(part, flat);
  });
}

}  // namespace dtsim::nvvm
