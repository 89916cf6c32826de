// Tile-level lowering of the NVVM emitter: layout coordinates, shared-memory exchanges, and every
// expression kind (elementwise ops on register slots, recomputation of index expressions at any
// coordinate, masked loads, reductions and dot through shared memory).
#include <algorithm>
#include <stdexcept>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Printer.h"

namespace dtsim::nvvm {

// ---------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------
std::string KernelEmitter::tmp() { return "%t" + std::to_string(tmp_++); }
std::string KernelEmitter::label(const std::string& hint) { return hint + "." + std::to_string(label_++); }
void KernelEmitter::line(const std::string& s) { body_ << "  " << s << "\n"; }
std::string KernelEmitter::op(const std::string& rhs) {
  std::string n = tmp();
  line(n + " = " + rhs);
  return n;
}
void KernelEmitter::start_block(const std::string& l) {
  body_ << l << ":\n";
  cur_block_ = l;
}
void KernelEmitter::br(const std::string& l) { line("br label %" + l); }
void KernelEmitter::declare(const std::string& d) { decls_.insert(d); }
std::string KernelEmitter::call(const std::string& ret, const std::string& fn, const std::string& args,
                                const std::string& decl_args) {
  declare("declare " + ret + " @" + fn + "(" + decl_args + ")");
  return op("call " + ret + " @" + fn + "(" + args + ")");
}
void KernelEmitter::fail(SourceLoc loc, const std::string& msg) { user_error(loc, "CUDA backend: " + msg); }
void KernelEmitter::note(const std::string& text) {
  int id = cur_stmt_ ? cur_stmt_->id : -1;
  for (auto& [i, t] : info.notes)
    if (i == id && t == text) return;  // a statement emitted twice (pipeline prologue) says it once
  info.notes.emplace_back(id, text);
}

std::string KernelEmitter::trap_if(const std::string& cond) {
  std::string t = label("trap"), j = label("ok");
  line("br i1 " + cond + ", label %" + t + ", label %" + j);
  start_block(t);
  line("call void asm sideeffect \"trap;\", \"\"()");
  br(j);
  start_block(j);
  return j;
}

// ---------------------------------------------------------------------------------------------
// Layout: the thread-dependent part of every coordinate lives in the entry block.
// ---------------------------------------------------------------------------------------------
std::string KernelEmitter::lane_id() {
  auto it = coord_cache_.find("lane");
  if (it != coord_cache_.end()) return it->second;
  prelude_ << "  %lane = and i32 %tid, 31\n";
  return coord_cache_["lane"] = "%lane";
}

std::string KernelEmitter::warp_id() {
  auto it = coord_cache_.find("warp");
  if (it != coord_cache_.end()) return it->second;
  prelude_ << "  %warp = lshr i32 %tid, 5\n";
  return coord_cache_["warp"] = "%warp";
}

namespace {
std::string pre_name(std::map<std::string, std::string>& cache) { return "%L" + std::to_string(cache.size()); }
}  // namespace

std::string KernelEmitter::thread_part(const Dist& d, size_t dim) {
  std::string key = "tp";
  for (auto& c : d.lane) key += "," + std::to_string(c[dim]);
  key += "|";
  for (auto& c : d.warp) key += "," + std::to_string(c[dim]);
  auto it = coord_cache_.find(key);
  if (it != coord_cache_.end()) return it->second;
  std::string acc = "0";
  auto pre = [&](const std::string& rhs) {
    std::string n = pre_name(coord_cache_) + "." + std::to_string(tmp_++);
    prelude_ << "  " << n << " = " << rhs << "\n";
    return n;
  };
  // Runs of consecutive source bits that map to consecutive coordinate bits are one shift-and-mask.
  auto add_bits = [&](const std::string& src, const std::vector<Coord>& bases) {
    size_t i = 0;
    while (i < bases.size()) {
      if (bases[i][dim] == 0) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < bases.size() && bases[j][dim] == bases[j - 1][dim] * 2) ++j;
      std::string x = i ? pre("lshr i32 " + src + ", " + std::to_string(i)) : src;
      x = pre("and i32 " + x + ", " + std::to_string((int64_t(1) << (j - i)) - 1));
      int to = log2_exact(bases[i][dim]);
      if (to) x = pre("shl i32 " + x + ", " + std::to_string(to));
      acc = acc == "0" ? x : pre("or i32 " + acc + ", " + x);
      i = j;
    }
  };
  add_bits(lane_id(), d.lane);
  add_bits(warp_id(), d.warp);
  return coord_cache_[key] = acc;
}

std::vector<std::string> KernelEmitter::coords(const Dist& d, int r) {
  std::vector<std::string> c;
  Coord rc = d.reg_coord(r);
  for (size_t i = 0; i < d.shape.size(); ++i) {
    if (d.shape[i] == 1) {
      c.push_back("0");
      continue;
    }
    std::string tp = thread_part(d, i);
    if (rc[i] == 0) {
      c.push_back(tp);
    } else if (tp == "0") {
      c.push_back(std::to_string(rc[i]));
    } else {
      std::string key = tp + "|" + std::to_string(rc[i]);
      auto it = coord_cache_.find(key);
      if (it == coord_cache_.end()) {
        std::string n = "%L" + std::to_string(coord_cache_.size()) + "." + std::to_string(tmp_++);
        prelude_ << "  " << n << " = or i32 " << tp << ", " << rc[i] << "\n";
        it = coord_cache_.emplace(key, n).first;
      }
      c.push_back(it->second);
    }
  }
  return c;
}

std::string KernelEmitter::owner(const Dist& d) {
  uint32_t lm = d.replicated_lane_mask(), wm = d.replicated_warp_mask();
  if (lm == 0 && wm == 0) return "true";
  std::string key = "own" + std::to_string(lm) + "/" + std::to_string(wm);
  auto it = coord_cache_.find(key);
  if (it != coord_cache_.end()) return it->second;
  std::string n = "%own" + std::to_string(tmp_++);
  std::string l = lm ? lane_id() : "", w = wm ? warp_id() : "";
  std::string cond;
  if (lm) {
    prelude_ << "  " << n << ".l = and i32 " << l << ", " << lm << "\n  " << n << ".lz = icmp eq i32 " << n << ".l, 0\n";
    cond = n + ".lz";
  }
  if (wm) {
    prelude_ << "  " << n << ".w = and i32 " << w << ", " << wm << "\n  " << n << ".wz = icmp eq i32 " << n << ".w, 0\n";
    if (cond.empty()) {
      cond = n + ".wz";
    } else {
      prelude_ << "  " << n << " = and i1 " << cond << ", " << n << ".wz\n";
      cond = n;
    }
  }
  return coord_cache_[key] = cond;
}

std::string KernelEmitter::flat_of(const Shape& s, const std::vector<std::string>& c) {
  std::string f = "0";
  int shift = 0;
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    const std::string& cd = c[static_cast<size_t>(d)];
    if (s[static_cast<size_t>(d)] != 1 && cd != "0") {
      std::string term = shift ? op("shl i32 " + cd + ", " + std::to_string(shift)) : cd;
      f = f == "0" ? term : op("or i32 " + f + ", " + term);
    }
    shift += log2_exact(s[static_cast<size_t>(d)]);
  }
  return f;
}

std::vector<std::string> KernelEmitter::unflatten(const Shape& s, const std::string& f) {
  std::vector<std::string> c(s.size());
  int shift = 0;
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    int64_t ext = s[static_cast<size_t>(d)];
    if (ext == 1) {
      c[static_cast<size_t>(d)] = "0";
      continue;
    }
    std::string sh = shift ? op("lshr i32 " + f + ", " + std::to_string(shift)) : f;
    c[static_cast<size_t>(d)] = op("and i32 " + sh + ", " + std::to_string(ext - 1));
    shift += log2_exact(ext);
  }
  return c;
}

// Coordinates `c` of an element of a tile of shape `from` -> coordinates in the operand of shape
// `to` that broadcasts to it (numpy rules: aligned at the right, unit dims read index 0).
std::vector<std::string> KernelEmitter::bcast_coords(const Shape& from, const std::vector<std::string>& c, const Shape& to) {
  std::vector<std::string> r;
  size_t off = from.size() - to.size();
  for (size_t i = 0; i < to.size(); ++i) r.push_back(to[i] == 1 ? "0" : c[off + i]);
  return r;
}

std::string KernelEmitter::smem_ptr(const Type& t, int64_t byte_offset, const std::string& index) {
  std::string st = smem_type(t);
  std::string base = op("getelementptr inbounds [0 x i8], [0 x i8] addrspace(3)* @dtsim_smem, i64 0, i64 " + std::to_string(smem_floor_ + byte_offset));
  std::string typed = op("bitcast i8 addrspace(3)* " + base + " to " + st + " addrspace(3)*");
  return op("getelementptr inbounds " + st + ", " + st + " addrspace(3)* " + typed + ", i32 " + index);
}

// One padding element every 32: a warp reading a column of a row-major tile hits 32 banks.
std::string KernelEmitter::smem_index(const std::string& flat) {
  if (flat == "0") return flat;
  return op("add i32 " + flat + ", " + op("lshr i32 " + flat + ", 5"));
}

void KernelEmitter::barrier() {
  if (before_split_)  // plan_specialize admits no statement before the split that needs one
    throw std::logic_error("CUDA backend: a barrier before a warp-specialized loop (kernel " + k_.name + ")");
  if (bar_threads_) {  // the producer warp has left: the consumers' named barrier
    line("call void asm sideeffect \"bar.sync 1, " + std::to_string(bar_threads_) + ";\", \"~{memory}\"()");
    return;
  }
  declare("declare void @llvm.nvvm.barrier0()");
  line("call void @llvm.nvvm.barrier0()");
}

void KernelEmitter::guarded(const std::string& cond, const std::function<void()>& body) {
  if (cond == "true") {
    body();
    return;
  }
  std::string in = label("g"), join = label("gj");
  line("br i1 " + cond + ", label %" + in + ", label %" + join);
  start_block(in);
  auto loads = load_cache_;  // what is loaded inside does not dominate the code after
  ++guard_depth_;
  body();
  --guard_depth_;
  load_cache_ = std::move(loads);
  br(join);
  start_block(join);
}

void KernelEmitter::smem_store_all(const TV& v, int64_t byte_offset) {
  auto opf = [this](const std::string& r) { return op(r); };
  std::string st = smem_type(v.type);
  guarded(owner(v.dist), [&] {
    for (int r = 0; r < v.dist.nregs(); ++r) {
      if (first_copy(v.dist, r) != r) continue;
      std::string p = smem_ptr(v.type, byte_offset, smem_index(flat_of(v.dist.shape, coords(v.dist, r))));
      line("store " + st + " " + to_smem_value(v.type, v.at(r), opf) + ", " + st + " addrspace(3)* " + p);
    }
  });
}

// A value in another layout: register renaming when every thread already holds what it needs,
// otherwise through shared memory (every holder stores at the padded flat index, then every thread
// reads what the new layout gives it).
TV KernelEmitter::convert(const TV& v, const Dist& want) {
  if (v.type.is_scalar() || v.dist == want) return TV{v.type, want, v.v};
  if (auto m = rename(v.dist, want)) {
    TV out{v.type, want, {}};
    for (int r : *m) out.v.push_back(v.at(r));
    return out;
  }
  ++info.conversions;
  const Scalar e = v.type.elem;
  const bool plain = !v.type.ptr && (e == Scalar::F16 || e == Scalar::BF16 || e == Scalar::I16 || e == Scalar::F32 || e == Scalar::I32);
  Exchange x = plan_exchange(v.dist, want, plain ? scalar_bytes(e) : 0, sm_version() >= 90);
  if (x.padded) {
    use_smem(smem_padded(v.type.numel()) * smem_bytes(v.type));
    note("convert " + v.dist.str() + " -> " + want.str() + " through shared memory");
    barrier();
    smem_store_all(v, 0);
    barrier();
    return smem_load_all(v.type, want);
  }
  use_smem(x.bytes());
  note("convert " + v.dist.str() + " -> " + want.str() + " through shared memory: " + x.str());
  barrier();
  guarded(owner(v.dist), [&] {
    if (x.stmatrix) {  // four 8x8 blocks an instruction, lane l giving the address of one 16-byte row
      Dist rows = *stmatrix_rows(v.dist);
      for (int g = 0; g < rows.nregs(); ++g) {
        const int r = 8 * g;
        if (first_copy(v.dist, r) != r) continue;
        std::string w[4];
        for (int j = 0; j < 4; ++j) w[j] = pack2(e, v.at(r + 2 * j), v.at(r + 2 * j + 1));
        std::string a = op("add i32 " + smem_addr32() + ", " + exchange_off(x, rows, g));
        line("call void asm sideeffect \"stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};\", \"r,r,r,r,r,~{memory}\"(i32 " + a +
             ", i32 " + w[0] + ", i32 " + w[1] + ", i32 " + w[2] + ", i32 " + w[3] + ")");
      }
      return;
    }
    for (int r = 0; r < v.dist.nregs(); r += x.store_vec) {
      if (first_copy(v.dist, r) != r) continue;
      std::vector<std::string> vals;
      for (int j = 0; j < x.store_vec; ++j) vals.push_back(v.at(r + j));
      std::string p = exchange_ptr(x, v.dist, r, e);
      if (x.store_vec == 1)
        line("store " + mem_type(e) + " " + to_mem(e, vals[0]) + ", " + mem_type(e) + " addrspace(3)* " + p);
      else
        store_vec(e, p, vals, 3);
    }
  });
  barrier();
  TV out{v.type, want, {}};
  for (int r = 0; r < want.nregs(); r += x.load_vec) {
    if (first_copy(want, r) != r) {
      for (int j = 0; j < x.load_vec; ++j) out.v.push_back(out.v[static_cast<size_t>(first_copy(want, r + j))]);
      continue;
    }
    std::string p = exchange_ptr(x, want, r, e);
    if (x.load_vec == 1)
      out.v.push_back(from_mem(e, op("load " + mem_type(e) + ", " + mem_type(e) + " addrspace(3)* " + p)));
    else
      for (auto& val : load_vec(e, p, x.load_vec, 3)) out.v.push_back(val);
  }
  return out;
}

// The address in exchange tile `x` of register r of layout d (a pointer to `e`'s memory type), and
// its byte offset in the tile (exchange_off): the thread's offset (the XOR of its lane and warp bits' offsets, computed once per layout and tile)
// XOR the register's where their bits overlap, plus the rest of the register's (a constant the
// load or store instruction carries).
std::string KernelEmitter::exchange_ptr(const Exchange& x, const Dist& d, int r, Scalar e) {
  std::string off = exchange_off(x, d, r);
  return op("bitcast i8 addrspace(3)* " + smem_gep(off) + " to " + mem_type(e) + " addrspace(3)*");
}

std::string KernelEmitter::exchange_off(const Exchange& x, const Dist& d, int r) {
  auto off_of = [&](const Coord& c) { return x.offset(c); };
  int64_t tmask = 0;
  std::vector<int64_t> toff;  // per thread-id bit (lanes, then warps)
  for (auto& c : d.lane) toff.push_back(off_of(c));
  for (auto& c : d.warp) toff.push_back(off_of(c));
  for (int64_t o : toff) tmask |= o;
  std::string key = "xch" + x.str() + "|" + d.str();
  auto it = coord_cache_.find(key);
  if (it == coord_cache_.end()) {
    std::string acc = "0";
    for (size_t i = 0; i < toff.size(); ++i) {
      if (!toff[i]) continue;
      std::string n = "%X" + std::to_string(tmp_++);
      prelude_ << "  " << n << ".b = lshr i32 %tid, " << i << "\n";
      prelude_ << "  " << n << ".a = and i32 " << n << ".b, 1\n";
      prelude_ << "  " << n << ".m = mul i32 " << n << ".a, " << toff[i] << "\n";
      if (acc == "0") {
        acc = n + ".m";
      } else {
        prelude_ << "  " << n << " = xor i32 " << acc << ", " << n << ".m\n";
        acc = n;
      }
    }
    it = coord_cache_.emplace(key, acc).first;
  }
  int64_t roff = off_of(d.reg_coord(r));
  int64_t over = roff & tmask, rest = roff & ~tmask;
  std::string base = it->second;
  if (over) base = op("xor i32 " + base + ", " + std::to_string(over));
  if (rest) base = op("add i32 " + base + ", " + std::to_string(rest));
  return base;
}

TV KernelEmitter::each_element(const Type& t, const Dist& d, const std::function<std::string(int)>& value) {
  TV out{t, d, {}};
  for (int r = 0; r < d.nregs(); ++r) {
    int f = first_copy(d, r);
    out.v.push_back(f != r ? out.v[static_cast<size_t>(f)] : value(r));
  }
  return out;
}

TV KernelEmitter::smem_load_all(const Type& t, const Dist& d) {
  auto opf = [this](const std::string& r) { return op(r); };
  std::string st = smem_type(t);
  return each_element(t, d, [&](int r) {
    std::string p = smem_ptr(t, 0, smem_index(flat_of(d.shape, coords(d, r))));
    return from_smem_value(t, op("load " + st + ", " + st + " addrspace(3)* " + p), opf);
  });
}

// A reduction folds its operand where it already is (a dot's accumulator, say) when that layout
// holds each element once per thread; otherwise in the blocked layout.
Dist KernelEmitter::reduce_parent(const ExprP& x) {
  Dist n = natural(x);
  for (int r = 0; r < n.nregs(); ++r)
    if (first_copy(n, r) != r) return dflt(x->type.shape);
  return n;
}

// The layout a value is best produced in: reductions give slices of their operand's layout,
// elementwise ops keep a slice operand's layout, variables keep theirs, everything else is blocked.
Dist KernelEmitter::natural(const ExprP& e) {
  const Type& t = e->type;
  if (t.is_scalar()) return dflt({});
  Dist d = dflt(t.shape);
  switch (e->kind) {
    case ExprKind::Reduce: return slice(reduce_parent(e->args[0]), static_cast<int>(e->ints[0]));
    case ExprKind::Dot: {
      const MmaPlan& p = plan_.dot(*e);
      return p.ok ? accumulator(p) : fma_accumulator(p.M, p.N, k_.num_warps);
    }
    case ExprKind::Var: return e->slot >= 0 && !plan_.layouts.empty() ? plan_.layouts[static_cast<size_t>(e->slot)] : d;
    case ExprKind::Unary:
    case ExprKind::Cast:
    case ExprKind::Bitcast:
    case ExprKind::Binary:
    case ExprKind::Where:
      for (auto& a : e->args) {
        if (!a || a->type.shape != t.shape || recomputable(a)) continue;
        Dist n = natural(a);
        if (!(n == d)) return n;
      }
      return d;
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Load: {
      // 2-byte elements of a tile with at least 8 per thread: 8 per thread along the last dimension
      // where the pointer and the mask allow 16-byte vectors (the blocked default gives 4, 8-byte
      // vectors), as Triton's global loads, and are index arithmetic computed in any layout (a
      // pointer tile held in a variable would be moved between layouts instead).
      const ExprP* lm = e->args.size() > 1 && e->args[1] ? &e->args[1] : nullptr;
      if (scalar_bytes(t.elem) == 2 && t.shape.back() >= 8 && shape_numel(t.shape) >= int64_t(8) * 32 * k_.num_warps &&
          recomputable(e->args[0], true) && (!lm || recomputable(*lm, true))) {
        Dist w = blocked(t.shape, k_.num_warps, 8);
        if (vector_width(w, e->args[0], e->args.size() > 1 ? e->args[1] : nullptr, nullptr) == 8) return w;
      }
      return d;
    }
    case ExprKind::Broadcast:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: return d;
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------
bool KernelEmitter::stable_scalar(int slot) const {
  return slot >= 0 && static_cast<size_t>(slot) < plan_.assigns.size() && plan_.assigns[static_cast<size_t>(slot)] <= 1;
}

// Whether `e` is a pure function of its coordinates that can be evaluated at any element without
// moving data: index arithmetic on arange/full/program ids and scalars that are never reassigned.
bool KernelEmitter::recomputable(const ExprP& e, bool any_scalar) {
  if (any_scalar && e->type.is_scalar()) return true;
  switch (e->kind) {
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange: return true;
    case ExprKind::Var: {
      if (carried_.count(e->slot)) return true;
      if (e->type.is_scalar() && e->slot >= 0 && plan_.prefix_scalar[static_cast<size_t>(e->slot)]) return true;
      if (!stable_scalar(e->slot)) return false;
      if (e->type.is_scalar()) return true;
      const ExprP& d = plan_.single_def[static_cast<size_t>(e->slot)];
      return d && recomputable(d, any_scalar);
    }
    case ExprKind::Full: return recomputable(e->args.back(), any_scalar);
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Where:
    case ExprKind::Cast:
    case ExprKind::Bitcast:
      for (auto& a : e->args)
        if (a && !recomputable(a, any_scalar)) return false;
      return true;
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast: return recomputable(e->args[0], any_scalar);
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:  // a reading is taken once
    case ExprKind::Gather:
    case ExprKind::Histogram: return false;
  }
  return false;
}

std::string KernelEmitter::eval_scalar(const ExprP& e) {
  TV v = eval(e);
  return v.v[0];
}

// The value of recomputable `e` at coordinates `c` (of e's shape).
std::string KernelEmitter::at(const ExprP& e, const std::vector<std::string>& c) {
  if (e->type.is_scalar()) return eval_scalar(e);
  const Shape& s = e->type.shape;
  switch (e->kind) {
    case ExprKind::Var:
      if (carried_.count(e->slot)) return carried_at(e, c);
      return at(plan_.single_def[static_cast<size_t>(e->slot)], c);
    case ExprKind::Arange: return op("add i32 " + c[0] + ", " + std::to_string(e->ints[0]));
    case ExprKind::Full: return cast(e->args.back()->type.elem, e->dtype, eval_scalar(e->args.back()));
    case ExprKind::Unary: return unary(*e, at(e->args[0], c));
    case ExprKind::Binary: {
      std::string a = at(e->args[0], bcast_coords(s, c, e->args[0]->type.shape));
      std::string b = at(e->args[1], bcast_coords(s, c, e->args[1]->type.shape));
      return binary(*e, a, b);
    }
    case ExprKind::Where: {
      std::string cc = always_true(e->args[0]) ? "true" : at(e->args[0], bcast_coords(s, c, e->args[0]->type.shape));
      std::string a = at(e->args[1], bcast_coords(s, c, e->args[1]->type.shape));
      std::string b = at(e->args[2], bcast_coords(s, c, e->args[2]->type.shape));
      return where(*e, cc, a, b);
    }
    case ExprKind::Cast: return cast(e->args[0]->type.elem, e->dtype, at(e->args[0], c));
    case ExprKind::Bitcast: return bitcast(e->args[0]->type.elem, e->dtype, at(e->args[0], c));
    case ExprKind::ExpandDims: {
      std::vector<std::string> cx = c;
      cx.erase(cx.begin() + e->ints[0]);
      return at(e->args[0], cx);
    }
    case ExprKind::Reshape: return at(e->args[0], unflatten(e->args[0]->type.shape, flat_of(s, c)));
    case ExprKind::Trans: {
      std::vector<std::string> in(c.size());
      for (size_t i = 0; i < e->ints.size(); ++i) in[static_cast<size_t>(e->ints[i])] = c[i];
      return at(e->args[0], in);
    }
    case ExprKind::Broadcast: return at(e->args[0], bcast_coords(s, c, e->args[0]->type.shape));
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: break;
  }
  internal_error("NvvmEmitter", std::string("cannot recompute ") + expr_kind_name(e->kind));
}

// `e` broadcast to a consumer laid out as `d` (scalars stay scalars).
TV KernelEmitter::fit(const ExprP& e, const Dist& d) {
  if (e->type.is_scalar()) return eval(e, dflt({}));
  if (e->type.shape == d.shape) return eval(e, d);
  TV x = eval(e, need_broadcast(d, e->type.shape));
  return TV{e->type.with_shape(d.shape), d, x.v};
}

std::function<std::string(int)> KernelEmitter::lazy_fit(const ExprP& e, const Dist& d) {
  if (e->type.is_tile() && recomputable(e)) {
    return [this, e, d](int r) { return at(e, bcast_coords(d.shape, coords(d, r), e->type.shape)); };
  }
  TV v = fit(e, d);
  return [v](int r) { return v.at(r); };
}

TV KernelEmitter::eval(const ExprP& e, const Dist& din) {
  const Type& t = e->type;
  Dist d = t.is_scalar() ? dflt({}) : din;
  auto per_reg = [&](const std::function<std::string(int)>& f) {
    TV out{t, d, {}};
    int n = t.is_scalar() ? 1 : d.nregs();
    for (int r = 0; r < n; ++r) {
      int c = first_copy(d, r);
      out.v.push_back(c != r ? out.v[static_cast<size_t>(c)] : f(r));
    }
    return out;
  };
  if (t.is_tile() && e->kind != ExprKind::Var && recomputable(e)) return per_reg([&](int r) { return at(e, coords(d, r)); });
  switch (e->kind) {
    case ExprKind::Const: return TV{t, d, {constant(t.elem, e->fval, e->ival, e->is_float)}};
    case ExprKind::Var: {
      if (carried_.count(e->slot)) {
        if (t.is_scalar()) return TV{t, d, {carried_at(e, {})}};
        return per_reg([&](int r) { return carried_at(e, coords(d, r)); });
      }
      const auto& vars = slot_vars_[static_cast<size_t>(e->slot)];
      std::string ty = reg_type(t);
      if (t.is_scalar()) return TV{t, d, {op("load " + ty + ", " + ty + "* " + vars[0])}};
      const Dist& vd = plan_.layouts[static_cast<size_t>(e->slot)];
      if (auto m = rename(vd, d)) {  // load only the registers the layout asks for
        TV out{t, d, {}};
        std::map<int, std::string> loaded;
        for (int r : *m) {
          auto it = loaded.find(r);
          if (it == loaded.end()) it = loaded.emplace(r, op("load " + ty + ", " + ty + "* " + vars[static_cast<size_t>(r)])).first;
          out.v.push_back(it->second);
        }
        return out;
      }
      TV v{t, vd, {}};
      for (auto& a : vars) v.v.push_back(op("load " + ty + ", " + ty + "* " + a));
      return convert(v, d);
    }
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms: {
      // A persistent kernel's tile: its program ids, and the original grid.
      const size_t a = static_cast<size_t>(e->axis);
      if (e->kind == ExprKind::ProgramId && a < tile_pid_.size()) return TV{t, d, {op("load i32, i32* " + tile_pid_[a])}};
      if (e->kind == ExprKind::NumPrograms && a < tile_grid_.size()) return TV{t, d, {tile_grid_[a]}};
      if (!tile_pid_.empty()) return TV{t, d, {e->kind == ExprKind::ProgramId ? "0" : "1"}};  // an axis the grid does not have
      static const char* ax[] = {"x", "y", "z"};
      std::string fn = std::string("llvm.nvvm.read.ptx.sreg.") + (e->kind == ExprKind::ProgramId ? "ctaid." : "nctaid.") + ax[e->axis];
      return TV{t, d, {call("i32", fn, "", "")}};
    }
    case ExprKind::Arange: return per_reg([&](int r) { return at(e, coords(d, r)); });
    case ExprKind::Full: {
      std::string v = cast(e->args.back()->type.elem, e->dtype, eval_scalar(e->args.back()));
      return per_reg([&](int) { return v; });
    }
    case ExprKind::Unary: {
      TV x = eval(e->args[0], d);
      return per_reg([&](int r) { return unary(*e, x.at(r)); });
    }
    case ExprKind::Binary: {
      TV a = fit(e->args[0], d), b = fit(e->args[1], d);
      return per_reg([&](int r) { return binary(*e, a.at(r), b.at(r)); });
    }
    case ExprKind::Where: {
      TV a = fit(e->args[1], d), b = fit(e->args[2], d);
      if (always_true(e->args[0])) return per_reg([&](int r) { return where(*e, "true", a.at(r), b.at(r)); });  // a true mask (plan_true_masks)
      TV c = fit(e->args[0], d);
      return per_reg([&](int r) { return where(*e, c.at(r), a.at(r), b.at(r)); });
    }
    case ExprKind::Cast: {
      // A narrowing cast of a value held in another layout (a dot's accumulator stored as f16):
      // cast where the value is, then move the narrower elements.
      const ExprP& a = e->args[0];
      if (t.is_tile() && a->type.shape == t.shape && !a->type.ptr && scalar_bytes(e->dtype) < scalar_bytes(a->type.elem) && !recomputable(a)) {
        Dist n = natural(a);
        if (!(n == d) && !rename(n, d)) {
          TV x = eval(a, n);
          TV c{t, n, {}};
          for (int r = 0; r < n.nregs(); ++r) {
            int f = first_copy(n, r);
            c.v.push_back(f != r ? c.v[static_cast<size_t>(f)] : cast(a->type.elem, e->dtype, x.at(r)));
          }
          return convert(c, d);
        }
      }
      TV x = eval(e->args[0], d);
      return per_reg([&](int r) { return cast(e->args[0]->type.elem, e->dtype, x.at(r)); });
    }
    case ExprKind::Bitcast: {
      TV x = eval(e->args[0], d);
      return per_reg([&](int r) { return bitcast(e->args[0]->type.elem, e->dtype, x.at(r)); });
    }
    // Shape changes read the operand in the layout they imply: no data moves unless the operand's
    // own layout differs from that.
    case ExprKind::ExpandDims: return TV{t, d, eval(e->args[0], need_expand_dims(d, static_cast<int>(e->ints[0]))).v};
    case ExprKind::Reshape: return TV{t, d, eval(e->args[0], need_reshape(d, e->args[0]->type.shape)).v};
    case ExprKind::Trans: return TV{t, d, eval(e->args[0], need_trans(d, e->ints)).v};
    case ExprKind::Broadcast: return fit(e->args[0], d);
    case ExprKind::Load: return eval_load(e, d);
    case ExprKind::Dot: return convert(eval_dot(e), d);
    case ExprKind::Reduce: return e->fn || !e->fns.empty() ? eval_scan(e, d) : convert(eval_reduce(e), d);
    case ExprKind::Scan: return eval_scan(e, d);
    case ExprKind::CombineArg:
      if (static_cast<size_t>(e->axis) >= combine_regs_.size() || combine_regs_[static_cast<size_t>(e->axis)].empty())
        internal_error("NvvmEmitter", "a combine argument outside its function");
      return TV{t, d, {combine_regs_[static_cast<size_t>(e->axis)]}};
    case ExprKind::Swizzle2d: internal_error("NvvmEmitter", "swizzle2d() outside a two-target assignment");
    case ExprKind::IntToPtr: {  // the i64 values are device addresses
      TV x = eval(e->args[0], d);
      return per_reg([&](int r) { return op("inttoptr i64 " + x.at(r) + " to " + reg_type(t)); });
    }
    case ExprKind::PtrToInt: {
      TV x = eval(e->args[0], d);
      return per_reg([&](int r) { return op("ptrtoint " + reg_type(e->args[0]->type) + " " + x.at(r) + " to i64"); });
    }
    case ExprKind::Machine: {  // the special register, read as inline PTX does (never merged or moved)
      const MachineReg r = static_cast<MachineReg>(e->axis);
      const bool wide = machine_reg_type(r) == Scalar::I64;
      return TV{t, d, {op(std::string("call ") + (wide ? "i64" : "i32") + " asm sideeffect \"mov." + (wide ? "u64" : "u32") + " $0, %" +
                          machine_reg_name(r) + ";\", \"=" + (wide ? "l" : "r") + "\"()")}};
    }
    case ExprKind::Gather: return eval_gather(e, d);
    case ExprKind::Histogram: return eval_histogram(e, d);
  }
  internal_error("NvvmEmitter", std::string("cannot lower ") + expr_kind_name(e->kind));
}

// tl.gather: the source tile goes to shared memory (each element once, at its padded flat index);
// each thread then reads, for each of its elements, the source element its index selects (clamped
// to the axis: the readers' assert reports an index outside it).
TV KernelEmitter::eval_gather(const ExprP& e, const Dist& d) {
  const ExprP& src = e->args[0];
  const Type& st = src->type;
  const int axis = static_cast<int>(e->ints[0]);
  const int64_t n = st.shape[static_cast<size_t>(axis)];
  const Type& it = e->args[1]->type;
  TV idx = fit(e->args[1], d);
  TV sv = eval(src, natural(src));
  use_smem(smem_padded(st.numel()) * smem_bytes(st));
  note("gather of " + st.str() + " along axis " + std::to_string(axis) + " through shared memory");
  barrier();
  smem_store_all(sv, 0);
  barrier();
  auto opf = [this](const std::string& r) { return op(r); };
  const std::string sty = smem_type(st), ity = reg_type(it);
  return each_element(e->type, d, [&](int r) {
    std::string k = idx.at(r);
    std::string lo = op("icmp slt " + ity + " " + k + ", 0");
    std::string hi = op("icmp sgt " + ity + " " + k + ", " + std::to_string(n - 1));
    k = op("select i1 " + lo + ", " + ity + " 0, " + ity + " " + k);
    k = op("select i1 " + hi + ", " + ity + " " + std::to_string(n - 1) + ", " + ity + " " + k);
    if (ity == "i64") k = op("trunc i64 " + k + " to i32");
    std::vector<std::string> c = coords(d, r);
    c[static_cast<size_t>(axis)] = k;
    std::string p = smem_ptr(st, 0, smem_index(flat_of(st.shape, c)));
    return from_smem_value(st, op("load " + sty + ", " + sty + " addrspace(3)* " + p), opf);
  });
}

// tl.histogram: one i32 counter per bin in shared memory, zeroed by the holders of the result's
// elements; after a barrier each thread adds 1 (atom.shared.add) to the counter of each of its lanes
// whose value lies in [0, bins) (one unsigned comparison of the sign-extended value) and whose mask
// is on; after another barrier each thread reads its elements of the result.
TV KernelEmitter::eval_histogram(const ExprP& e, const Dist& d) {
  const ExprP& xe = e->args[0];
  const bool masked = e->args.size() > 2 && e->args[2];
  const int64_t bins = e->ints[0];
  const Type ct{Scalar::I32, false, {bins}};  // the counters
  TV x = eval(xe, natural(xe));
  TV m;
  if (masked) m = fit(e->args[2], x.dist);
  use_smem(bins * 4);
  note("histogram of " + xe->type.str() + " into " + std::to_string(bins) + " bins through shared-memory atomics");
  barrier();
  guarded(owner(d), [&] {
    for (int r = 0; r < d.nregs(); ++r) {
      if (first_copy(d, r) != r) continue;
      line("store i32 0, i32 addrspace(3)* " + smem_ptr(ct, 0, coords(d, r)[0]));
    }
  });
  barrier();
  const std::string xty = reg_type(xe->type);
  guarded(owner(x.dist), [&] {
    for (int r = 0; r < x.dist.nregs(); ++r) {
      if (first_copy(x.dist, r) != r) continue;
      const std::string v = x.at(r);
      std::string ok = op("icmp ult " + xty + " " + v + ", " + std::to_string(bins));
      if (masked) ok = op("and i1 " + ok + ", " + m.at(r));
      guarded(ok, [&] {
        const std::string i = xty == "i64" ? op("trunc i64 " + v + " to i32") : v;
        op("atomicrmw add i32 addrspace(3)* " + smem_ptr(ct, 0, i) + ", i32 1 monotonic");
      });
    }
  });
  barrier();
  return each_element(e->type, d, [&](int r) { return op("load i32, i32 addrspace(3)* " + smem_ptr(ct, 0, coords(d, r)[0])); });
}

// Global accesses through `ptr` laid out as d come in vectors of the returned width when d gives a
// thread that many consecutive elements of the last dimension, the pointers are consecutive and
// aligned to the vector's size, and the mask is uniform over each vector.
int KernelEmitter::vector_width(const Dist& d, const ExprP& ptr, const ExprP& mask, const ExprP& /*other*/) {
  if (d.shape.empty() || ptr->type.is_scalar() || ptr->type.shape.back() != d.shape.back()) return 1;
  int run = vector_run(d);
  if (run == 1) return 1;
  int bytes = scalar_bytes(ptr->type.elem);
  AxisInfo pa = axis_info(ptr);
  int64_t w = std::min<int64_t>({run, pa.contig, std::max(1, 16 / bytes)});
  while (w > 1 && pa.div % (w * bytes) != 0) w /= 2;
  if (mask && mask->type.is_tile()) {
    int64_t c = mask->type.shape.back() == 1 ? AxisInfo::kMax : axis_info(mask).cst;
    w = std::min(w, c);
  }
  return static_cast<int>(std::max<int64_t>(1, w));
}

// Masked gather: lanes whose mask is false never touch memory and take `other`.
void KernelEmitter::depends_on(const ExprP& e, std::set<int>& slots) {
  if (!e) return;
  if (e->kind == ExprKind::Var && e->slot >= 0 && slots.insert(e->slot).second) {
    const ExprP& def = plan_.single_def[static_cast<size_t>(e->slot)];
    if (def) depends_on(def, slots);
  }
  for (auto& a : e->args) depends_on(a, slots);
}

TV KernelEmitter::eval_load(const ExprP& e, const Dist& d) {
  std::string key = print_expr(e) + " @ " + (e->type.is_scalar() ? std::string("scalar") : d.str());
  auto hit = load_cache_.find(key);
  if (hit != load_cache_.end()) {
    note("the same load as an earlier statement: registers reused");
    return hit->second.value;
  }
  TV v = eval_load_uncached(e, d);
  CachedLoad c{v, {}};
  depends_on(e, c.slots);
  load_cache_.emplace(key, std::move(c));
  return v;
}

TV KernelEmitter::eval_load_uncached(const ExprP& e, const Dist& d) {
  const Type& t = e->type;
  auto p = lazy_fit(e->args[0], d);
  std::function<std::string(int)> m, o;
  if (e->args[1]) m = lazy_fit(e->args[1], d);
  if (e->args[2]) o = lazy_fit(e->args[2], d);
  std::string ty = reg_type(t.elem);
  TV out{t, t.is_scalar() ? dflt({}) : d, {}};
  int n = t.is_scalar() ? 1 : d.nregs();
  int w = t.is_scalar() ? 1 : vector_width(d, e->args[0], e->args[1], e->args[2]);
  if (w > 1) ++info.vector_accesses;
  if (t.is_tile()) note("load " + shape_str(t.shape) + ": " + (w > 1 ? std::to_string(w) + "-element vectors" : std::string("scalar accesses")));
  out.v.resize(static_cast<size_t>(n));
  BoundsCheck bc;
  std::string counted;  // each element's lanes are counted by one thread
  if (checking()) {
    bc = begin_bounds(false, e->args[0], t.is_scalar() ? Shape{} : t.shape);
    counted = t.is_scalar() ? op("icmp eq i32 %tid, 0") : owner(d);
  }
  for (int r0 = 0; r0 < n; r0 += w) {
    int c = first_copy(d, r0);
    if (c != r0) {
      for (int j = 0; j < w; ++j) out.v[static_cast<size_t>(r0 + j)] = out.v[static_cast<size_t>(c + j)];
      continue;
    }
    std::string cond = e->args[1] ? m(r0) : "true";
    std::string ptr = p(r0);
    if (checking()) {
      std::string ok = bounds_lanes(bc, t.elem, ptr, w, d, r0, cond, counted);
      cond = cond == "true" ? ok : op("and i1 " + cond + ", " + ok);
    }
    auto load = [&] { return w == 1 ? std::vector<std::string>{load_mem(t.elem, ptr)} : load_vec(t.elem, ptr, w); };
    if (cond == "true") {
      auto v = load();
      for (int j = 0; j < w; ++j) out.v[static_cast<size_t>(r0 + j)] = v[static_cast<size_t>(j)];
      continue;
    }
    std::vector<std::string> other;
    for (int j = 0; j < w; ++j)
      other.push_back(e->args[2] ? cast(e->args[2]->type.elem, t.elem, o(r0 + j)) : literal(t.elem, 0, 0, false));
    std::string pre = cur_block_, ld = label("ld"), join = label("ldj");
    line("br i1 " + cond + ", label %" + ld + ", label %" + join);
    start_block(ld);
    auto x = load();
    std::string ld_end = cur_block_;
    br(join);
    start_block(join);
    for (int j = 0; j < w; ++j)
      out.v[static_cast<size_t>(r0 + j)] =
          op("phi " + ty + " [ " + x[static_cast<size_t>(j)] + ", %" + ld_end + " ], [ " + other[static_cast<size_t>(j)] + ", %" + pre + " ]");
  }
  if (checking()) {
    if (defer_ok_ && guard_depth_ == 0) deferred_.push_back(pending(bc));
    else end_bounds(bc);
  }
  return out;
}

// swizzle2d (scalars, i32): the grouped ordering of Triton's tl.swizzle2d.
std::pair<std::string, std::string> KernelEmitter::swizzle(const ExprP& e) {
  std::vector<std::string> a;
  for (auto& x : e->args) a.push_back(cast(x->type.elem, Scalar::I32, eval_scalar(x)));
  auto B = [&](BinOp o, const std::string& x, const std::string& y) { return binary_typed(o, Scalar::I32, x, y); };
  std::string ij = B(BinOp::Add, B(BinOp::Mul, a[0], a[3]), a[1]);
  std::string sgj = B(BinOp::Mul, a[4], a[3]);
  std::string gid = B(BinOp::FloorDiv, ij, sgj);
  std::string off_i = B(BinOp::Mul, gid, a[4]);
  std::string sg = B(BinOp::Min, B(BinOp::Sub, a[2], off_i), a[4]);
  std::string ij2 = B(BinOp::Mod, ij, sgj);
  return {B(BinOp::Add, off_i, B(BinOp::Mod, ij2, sg)), B(BinOp::FloorDiv, ij2, sg)};
}

}  // namespace dtsim::nvvm
