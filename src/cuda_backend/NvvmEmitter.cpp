// Tile-level lowering of the NVVM emitter: layout coordinates, shared-memory exchanges, and every
// expression kind (elementwise ops on register slots, recomputation of index expressions at any
// coordinate, masked loads, reductions and dot through shared memory).
#include <algorithm>

#include "cuda_backend/KernelEmitter.h"

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
// Layout: per-slot coordinates live in the entry block (they depend only on the thread id).
// ---------------------------------------------------------------------------------------------
std::string KernelEmitter::tid() { return "%tid"; }

std::string KernelEmitter::flat(const Layout& l, int r) {
  std::string key = "f" + std::to_string(r);
  auto it = coord_cache_.find(key);
  if (it != coord_cache_.end()) return it->second;
  std::string n = r == 0 ? tid() : "%flat" + std::to_string(r);
  if (r != 0) prelude_ << "  " << n << " = add i32 %tid, " << int64_t(r) * l.threads << "\n";
  return coord_cache_[key] = n;
}

std::vector<std::string> KernelEmitter::coords(const Layout& l, int r) {
  std::vector<std::string> c;
  int shift = 0;
  std::vector<int> shifts(l.shape.size());
  for (int d = static_cast<int>(l.shape.size()) - 1; d >= 0; --d) {
    shifts[static_cast<size_t>(d)] = shift;
    shift += log2_exact(l.shape[static_cast<size_t>(d)]);
  }
  for (size_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] == 1) {
      c.push_back("0");
      continue;
    }
    std::string key = "c" + shape_str(l.shape) + "/" + std::to_string(r) + "/" + std::to_string(d);
    auto it = coord_cache_.find(key);
    if (it != coord_cache_.end()) {
      c.push_back(it->second);
      continue;
    }
    std::string f = flat(l, r);
    std::string n = "%c" + std::to_string(coord_cache_.size());
    std::string s = n + ".s";
    prelude_ << "  " << s << " = lshr i32 " << f << ", " << shifts[d] << "\n";
    prelude_ << "  " << n << " = and i32 " << s << ", " << (l.shape[d] - 1) << "\n";
    coord_cache_[key] = n;
    c.push_back(n);
  }
  return c;
}

std::string KernelEmitter::valid(const Layout& l) {
  if (l.full) return "true";
  std::string key = "v" + std::to_string(l.numel);
  auto it = coord_cache_.find(key);
  if (it != coord_cache_.end()) return it->second;
  std::string n = "%valid" + std::to_string(l.numel);
  prelude_ << "  " << n << " = icmp ult i32 %tid, " << l.numel << "\n";
  return coord_cache_[key] = n;
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
  std::string base = op("getelementptr inbounds [0 x i8], [0 x i8] addrspace(3)* @dtsim_smem, i64 0, i64 " + std::to_string(byte_offset));
  std::string typed = op("bitcast i8 addrspace(3)* " + base + " to " + st + " addrspace(3)*");
  return op("getelementptr inbounds " + st + ", " + st + " addrspace(3)* " + typed + ", i32 " + index);
}

void KernelEmitter::barrier() {
  declare("declare void @llvm.nvvm.barrier0()");
  line("call void @llvm.nvvm.barrier0()");
}

namespace {
std::string to_smem_value(KernelEmitter* self, const Type& t, const std::string& v,
                          const std::function<std::string(const std::string&)>& op) {
  (void)self;
  if (t.ptr) return op("ptrtoint " + reg_type(t) + " " + v + " to i64");
  if (t.elem == Scalar::I1) return op("zext i1 " + v + " to i8");
  return v;
}
std::string from_smem_value(const Type& t, const std::string& v, const std::function<std::string(const std::string&)>& op) {
  if (t.ptr) return op("inttoptr i64 " + v + " to " + reg_type(t));
  if (t.elem == Scalar::I1) return op("icmp ne i8 " + v + ", 0");
  return v;
}
}  // namespace

// Moves a tile between threads: every thread writes its slots at their flat index, then reads, for
// each slot of the destination layout, the element `src_flat(destination coordinates)`.
TV KernelEmitter::exchange(const TV& src, const Shape& dst,
                           const std::function<std::string(const std::vector<std::string>&)>& src_flat) {
  auto opf = [this](const std::string& r) { return op(r); };
  Layout ls(src.type.shape, threads_), ld(dst, threads_);
  int64_t bytes = ls.numel * smem_bytes(src.type);
  info.smem_bytes = std::max(info.smem_bytes, bytes);
  std::string st = smem_type(src.type);
  barrier();
  std::string ok = valid(ls);
  std::string after;
  if (ok != "true") {
    std::string w = label("xw");
    after = label("xj");
    line("br i1 " + ok + ", label %" + w + ", label %" + after);
    start_block(w);
  }
  for (int r = 0; r < ls.slots; ++r) {
    std::string p = smem_ptr(src.type, 0, flat(ls, r));
    line("store " + st + " " + to_smem_value(this, src.type, src.at(r), opf) + ", " + st + " addrspace(3)* " + p);
  }
  if (!after.empty()) {
    br(after);
    start_block(after);
  }
  barrier();
  TV out{src.type.with_shape(dst), {}};
  for (int r = 0; r < ld.slots; ++r) {
    std::string f = src_flat(coords(ld, r));
    std::string p = smem_ptr(src.type, 0, f);
    std::string v = op("load " + st + ", " + st + " addrspace(3)* " + p);
    out.v.push_back(from_smem_value(src.type, v, opf));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------
bool KernelEmitter::stable_scalar(int slot) const {
  return slot >= 0 && static_cast<size_t>(slot) < assign_count_.size() && assign_count_[static_cast<size_t>(slot)] <= 1;
}

// Whether `e` is a pure function of its coordinates that can be evaluated at any element without
// moving data: index arithmetic on arange/full/program ids and scalars that are never reassigned.
bool KernelEmitter::recomputable(const ExprP& e) {
  switch (e->kind) {
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange: return true;
    case ExprKind::Var: {
      if (!stable_scalar(e->slot)) return false;
      if (e->type.is_scalar()) return true;
      const ExprP& d = single_def_[static_cast<size_t>(e->slot)];
      return d && recomputable(d);
    }
    case ExprKind::Full: return recomputable(e->args.back());
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Where:
    case ExprKind::Cast:
      for (auto& a : e->args)
        if (a && !recomputable(a)) return false;
      return true;
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast: return recomputable(e->args[0]);
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Swizzle2d: return false;
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
    case ExprKind::Var: return at(single_def_[static_cast<size_t>(e->slot)], c);
    case ExprKind::Arange: return op("add i32 " + c[0] + ", " + std::to_string(e->ints[0]));
    case ExprKind::Full: return cast(e->args.back()->type.elem, e->dtype, eval_scalar(e->args.back()));
    case ExprKind::Unary: return unary(*e, at(e->args[0], c));
    case ExprKind::Binary: {
      std::string a = at(e->args[0], bcast_coords(s, c, e->args[0]->type.shape));
      std::string b = at(e->args[1], bcast_coords(s, c, e->args[1]->type.shape));
      return binary(*e, a, b);
    }
    case ExprKind::Where: {
      std::string cc = at(e->args[0], bcast_coords(s, c, e->args[0]->type.shape));
      std::string a = at(e->args[1], bcast_coords(s, c, e->args[1]->type.shape));
      std::string b = at(e->args[2], bcast_coords(s, c, e->args[2]->type.shape));
      return where(*e, cc, a, b);
    }
    case ExprKind::Cast: return cast(e->args[0]->type.elem, e->dtype, at(e->args[0], c));
    case ExprKind::ExpandDims: {
      std::vector<std::string> cx = c;
      cx.erase(cx.begin() + e->ints[0]);
      return at(e->args[0], cx);
    }
    case ExprKind::Reshape: return at(e->args[0], unflatten(e->args[0]->type.shape, flat_of(s, c)));
    case ExprKind::Trans: return at(e->args[0], {c[1], c[0]});
    case ExprKind::Broadcast: return at(e->args[0], bcast_coords(s, c, e->args[0]->type.shape));
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Swizzle2d: break;
  }
  internal_error("NvvmEmitter", std::string("cannot recompute ") + expr_kind_name(e->kind));
}

// `e` laid out as a tile of shape `dst` it broadcasts to (scalars stay scalars).
TV KernelEmitter::fit(const ExprP& e, const Shape& dst) {
  if (e->type.is_scalar() || e->type.shape == dst) return eval(e);
  Layout ld(dst, threads_);
  TV out{e->type.with_shape(dst), {}};
  if (recomputable(e)) {
    for (int r = 0; r < ld.slots; ++r) out.v.push_back(at(e, bcast_coords(dst, coords(ld, r), e->type.shape)));
    return out;
  }
  TV x = eval(e);
  Shape src = e->type.shape;
  return exchange(x, dst, [&](const std::vector<std::string>& c) { return flat_of(src, bcast_coords(dst, c, src)); });
}

std::function<std::string(int)> KernelEmitter::lazy_fit(const ExprP& e, const Shape& dst) {
  if (e->type.is_tile() && recomputable(e)) {
    Layout ld(dst, threads_);
    return [this, e, ld, dst](int r) { return at(e, bcast_coords(dst, coords(ld, r), e->type.shape)); };
  }
  TV v = fit(e, dst);
  return [v](int r) { return v.at(r); };
}

TV KernelEmitter::eval(const ExprP& e) {
  const Type& t = e->type;
  Layout l(t.shape, threads_);
  auto per_slot = [&](const std::function<std::string(int)>& f) {
    TV out{t, {}};
    for (int r = 0; r < (t.is_scalar() ? 1 : l.slots); ++r) out.v.push_back(f(r));
    return out;
  };
  if (t.is_tile() && e->kind != ExprKind::Var && recomputable(e))
    return per_slot([&](int r) { return at(e, coords(l, r)); });
  switch (e->kind) {
    case ExprKind::Const: return TV{t, {constant(t.elem, e->fval, e->ival, e->is_float)}};
    case ExprKind::Var: {
      const auto& vars = slot_vars_[static_cast<size_t>(e->slot)];
      std::string ty = reg_type(t);
      return per_slot([&](int r) { return op("load " + ty + ", " + ty + "* " + vars[static_cast<size_t>(r)]); });
    }
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms: {
      static const char* ax[] = {"x", "y", "z"};
      std::string fn = std::string("llvm.nvvm.read.ptx.sreg.") + (e->kind == ExprKind::ProgramId ? "ctaid." : "nctaid.") + ax[e->axis];
      return TV{t, {call("i32", fn, "", "")}};
    }
    case ExprKind::Arange:
    case ExprKind::Full: return per_slot([&](int r) { return at(e, coords(l, r)); });
    case ExprKind::Unary: {
      TV x = eval(e->args[0]);
      return per_slot([&](int r) { return unary(*e, x.at(r)); });
    }
    case ExprKind::Binary: {
      TV a = fit(e->args[0], t.shape), b = fit(e->args[1], t.shape);
      return per_slot([&](int r) { return binary(*e, a.at(r), b.at(r)); });
    }
    case ExprKind::Where: {
      TV c = fit(e->args[0], t.shape), a = fit(e->args[1], t.shape), b = fit(e->args[2], t.shape);
      return per_slot([&](int r) { return where(*e, c.at(r), a.at(r), b.at(r)); });
    }
    case ExprKind::Cast: {
      TV x = eval(e->args[0]);
      return per_slot([&](int r) { return cast(e->args[0]->type.elem, e->dtype, x.at(r)); });
    }
    case ExprKind::ExpandDims:
    case ExprKind::Reshape: {  // the row-major flat order, hence the layout, is unchanged
      TV x = eval(e->args[0]);
      return per_slot([&](int r) { return x.at(r); });
    }
    case ExprKind::Trans: {
      TV x = eval(e->args[0]);
      Shape xs = e->args[0]->type.shape;
      return exchange(x, t.shape, [&](const std::vector<std::string>& c) { return flat_of(xs, {c[1], c[0]}); });
    }
    case ExprKind::Broadcast: return fit(e->args[0], t.shape);
    case ExprKind::Load: return eval_load(e);
    case ExprKind::Dot: return eval_dot(e);
    case ExprKind::Reduce: return eval_reduce(e);
    case ExprKind::Swizzle2d: break;
  }
  internal_error("NvvmEmitter", "swizzle2d() outside a two-target assignment");
}

// Masked gather: lanes whose mask is false (or that hold no element) never touch memory.
TV KernelEmitter::eval_load(const ExprP& e) {
  const Type& t = e->type;
  Layout l(t.shape, threads_);
  auto p = lazy_fit(e->args[0], t.shape);
  std::function<std::string(int)> m, o;
  if (e->args[1]) m = lazy_fit(e->args[1], t.shape);
  if (e->args[2]) o = lazy_fit(e->args[2], t.shape);
  std::string ty = reg_type(t.elem);
  TV out{t, {}};
  int n = t.is_scalar() ? 1 : l.slots;
  for (int r = 0; r < n; ++r) {
    std::string cond = e->args[1] ? m(r) : "true";
    std::string v = t.is_scalar() ? "true" : valid(l);
    if (v != "true") cond = cond == "true" ? v : op("and i1 " + cond + ", " + v);
    if (cond == "true") {
      out.v.push_back(load_mem(t.elem, p(r)));
      continue;
    }
    std::string other = e->args[2] ? cast(e->args[2]->type.elem, t.elem, o(r)) : literal(t.elem, 0, 0, false);
    std::string ptr = p(r);
    std::string pre = cur_block_, ld = label("ld"), join = label("ldj");
    line("br i1 " + cond + ", label %" + ld + ", label %" + join);
    start_block(ld);
    std::string x = load_mem(t.elem, ptr);
    std::string ld_end = cur_block_;
    br(join);
    start_block(join);
    out.v.push_back(op("phi " + ty + " [ " + x + ", %" + ld_end + " ], [ " + other + ", %" + pre + " ]"));
  }
  return out;
}

namespace {
int64_t align16(int64_t v) { return (v + 15) / 16 * 16; }
}  // namespace

// dot(a, b, acc): both operands staged in shared memory; every thread accumulates its output
// elements over K (products and sums in f32, f64 for f64 inputs).
TV KernelEmitter::eval_dot(const ExprP& e) {
  const ExprP& ea = e->args[0];
  const ExprP& eb = e->args[1];
  int64_t M = ea->type.shape[0], K = ea->type.shape[1], N = eb->type.shape[1];
  TV a = eval(ea), b = eval(eb);
  Scalar rt = e->type.elem;
  std::string ty = reg_type(rt), st = smem_type(ea->type);
  int64_t off_b = align16(M * K * smem_bytes(ea->type));
  info.smem_bytes = std::max(info.smem_bytes, off_b + K * N * smem_bytes(eb->type));
  Layout la(ea->type.shape, threads_), lb(eb->type.shape, threads_), lo(e->type.shape, threads_);
  barrier();
  auto stage = [&](const TV& v, const Layout& l, int64_t off) {
    std::string ok = valid(l), after;
    if (ok != "true") {
      std::string w = label("dw");
      after = label("dj");
      line("br i1 " + ok + ", label %" + w + ", label %" + after);
      start_block(w);
    }
    for (int r = 0; r < l.slots; ++r)
      line("store " + st + " " + v.at(r) + ", " + st + " addrspace(3)* " + smem_ptr(ea->type, off, flat(l, r)));
    if (!after.empty()) {
      br(after);
      start_block(after);
    }
  };
  stage(a, la, 0);
  stage(b, lb, off_b);
  barrier();
  TV acc;
  if (e->args[2]) acc = fit(e->args[2], e->type.shape);
  std::vector<std::string> accs;
  for (int r = 0; r < lo.slots; ++r) {
    std::string v = "%dacc" + std::to_string(tmp_++);
    prelude_ << "  " << v << " = alloca " << ty << "\n";
    line("store " + ty + " " + (e->args[2] ? acc.at(r) : literal(rt, 0, 0, false)) + ", " + ty + "* " + v);
    accs.push_back(v);
  }
  std::string kc = "%dk" + std::to_string(tmp_++);
  prelude_ << "  " << kc << " = alloca i32\n";
  line("store i32 0, i32* " + kc);
  std::string head = label("dot.head"), body = label("dot.body"), exit = label("dot.exit");
  br(head);
  start_block(head);
  std::string k = op("load i32, i32* " + kc);
  std::string more = op("icmp slt i32 " + k + ", " + std::to_string(K));
  line("br i1 " + more + ", label %" + body + ", label %" + exit);
  start_block(body);
  for (int r = 0; r < lo.slots; ++r) {
    auto c = coords(lo, r);
    std::string ia = op("add i32 " + op("mul i32 " + c[0] + ", " + std::to_string(K)) + ", " + k);
    std::string ib = op("add i32 " + op("mul i32 " + k + ", " + std::to_string(N)) + ", " + c[1]);
    std::string av = op("load " + st + ", " + st + " addrspace(3)* " + smem_ptr(ea->type, 0, ia));
    std::string bv = op("load " + st + ", " + st + " addrspace(3)* " + smem_ptr(ea->type, off_b, ib));
    std::string prod = op("fmul " + ty + " " + av + ", " + bv);
    std::string cur = op("load " + ty + ", " + ty + "* " + accs[static_cast<size_t>(r)]);
    line("store " + ty + " " + op("fadd " + ty + " " + cur + ", " + prod) + ", " + ty + "* " + accs[static_cast<size_t>(r)]);
  }
  line("store i32 " + op("add i32 " + k + ", 1") + ", i32* " + kc);
  br(head);
  start_block(exit);
  TV out{e->type, {}};
  for (auto& v : accs) out.v.push_back(op("load " + ty + ", " + ty + "* " + v));
  return out;
}

// Reductions: the operand is staged in shared memory and every thread folds, for each of its output
// elements, the reduced axis in index order (a scalar result is computed by every thread).
TV KernelEmitter::eval_reduce(const ExprP& e) {
  const ExprP& ex = e->args[0];
  const Type& xt = ex->type;
  int ax = static_cast<int>(e->ints[0]);
  int64_t A = xt.shape[static_cast<size_t>(ax)];
  Scalar xe = xt.elem, rt = e->type.elem;
  bool arg = e->rop == RedOp::Argmax || e->rop == RedOp::Argmin;
  bool is_max = e->rop == RedOp::Max || e->rop == RedOp::Argmax;
  Scalar vt = arg ? xe : rt;  // type of the running value
  std::string vty = reg_type(vt);
  TV x = eval(ex);
  Layout lx(xt.shape, threads_), lo(e->type.shape, threads_);
  info.smem_bytes = std::max(info.smem_bytes, lx.numel * smem_bytes(xt));
  std::string st = smem_type(xt);
  auto opf = [this](const std::string& r) { return op(r); };
  barrier();
  {
    std::string ok = valid(lx), after;
    if (ok != "true") {
      std::string w = label("rw");
      after = label("rj");
      line("br i1 " + ok + ", label %" + w + ", label %" + after);
      start_block(w);
    }
    for (int r = 0; r < lx.slots; ++r)
      line("store " + st + " " + to_smem_value(this, xt, x.at(r), opf) + ", " + st + " addrspace(3)* " + smem_ptr(xt, 0, flat(lx, r)));
    if (!after.empty()) {
      br(after);
      start_block(after);
    }
  }
  barrier();
  int n = e->type.is_scalar() ? 1 : lo.slots;
  auto element = [&](int r, const std::string& i) {
    std::vector<std::string> c = e->type.is_scalar() ? std::vector<std::string>{} : coords(lo, r);
    c.insert(c.begin() + ax, i);
    std::string v = op("load " + st + ", " + st + " addrspace(3)* " + smem_ptr(xt, 0, flat_of(xt.shape, c)));
    return from_smem_value(xt, v, opf);
  };
  std::vector<std::string> vals, idxs;
  for (int r = 0; r < n; ++r) {
    std::string v = "%racc" + std::to_string(tmp_++), ix = "%ridx" + std::to_string(tmp_++);
    prelude_ << "  " << v << " = alloca " << vty << "\n  " << ix << " = alloca i32\n";
    std::string init = e->rop == RedOp::Sum ? literal(rt, 0, 0, false) : cast(xe, vt, element(r, "0"));
    line("store " + vty + " " + init + ", " + vty + "* " + v);
    line("store i32 0, i32* " + ix);
    vals.push_back(v);
    idxs.push_back(ix);
  }
  std::string ic = "%ri" + std::to_string(tmp_++);
  prelude_ << "  " << ic << " = alloca i32\n";
  line(std::string("store i32 ") + (e->rop == RedOp::Sum ? "0" : "1") + ", i32* " + ic);
  std::string head = label("red.head"), body = label("red.body"), exit = label("red.exit");
  br(head);
  start_block(head);
  std::string i = op("load i32, i32* " + ic);
  line("br i1 " + op("icmp slt i32 " + i + ", " + std::to_string(A)) + ", label %" + body + ", label %" + exit);
  start_block(body);
  for (int r = 0; r < n; ++r) {
    std::string v = cast(xe, vt, element(r, i));
    std::string cur = op("load " + vty + ", " + vty + "* " + vals[static_cast<size_t>(r)]);
    std::string next;
    switch (e->rop) {
      case RedOp::Sum: next = binary_typed(BinOp::Add, rt, cur, v); break;
      case RedOp::Max:
      case RedOp::Min: next = nan_minmax(is_max, vt, cur, v); break;
      case RedOp::Argmax:
      case RedOp::Argmin: {
        std::string better;
        if (is_float(vt)) {
          better = op(std::string("fcmp ") + (is_max ? "ogt " : "olt ") + vty + " " + v + ", " + cur);
          std::string vnan = op("fcmp uno " + vty + " " + v + ", " + v);
          std::string cnan = op("fcmp uno " + vty + " " + cur + ", " + cur);
          std::string cok = op("xor i1 " + cnan + ", true");
          better = op("or i1 " + better + ", " + op("and i1 " + vnan + ", " + cok));
        } else {
          const char* c = vt == Scalar::I1 ? (is_max ? "ugt " : "ult ") : (is_max ? "sgt " : "slt ");
          better = op(std::string("icmp ") + c + vty + " " + v + ", " + cur);
        }
        next = op("select i1 " + better + ", " + vty + " " + v + ", " + vty + " " + cur);
        std::string ci = op("load i32, i32* " + idxs[static_cast<size_t>(r)]);
        line("store i32 " + op("select i1 " + better + ", i32 " + i + ", i32 " + ci) + ", i32* " + idxs[static_cast<size_t>(r)]);
        break;
      }
    }
    line("store " + vty + " " + next + ", " + vty + "* " + vals[static_cast<size_t>(r)]);
  }
  line("store i32 " + op("add i32 " + i + ", 1") + ", i32* " + ic);
  br(head);
  start_block(exit);
  TV out{e->type, {}};
  for (int r = 0; r < n; ++r)
    out.v.push_back(arg ? op("load i32, i32* " + idxs[static_cast<size_t>(r)])
                        : op("load " + vty + ", " + vty + "* " + vals[static_cast<size_t>(r)]));
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
