// Fused elementwise trees of the execution form: a statement's tree of elementwise ops evaluated
// chunk by chunk (each op one typed loop over a chunk in per-thread scratch, only the root writing
// a tile), reductions folding their fused operand chunk by chunk, and the static test that tells
// which slots hold `c + arange`-like offsets. Element semantics are Elem.h's (bin_elem, cmp_elem,
// un_elem, conv_elem, round_to), applied per element as the node-by-node ops apply them, so results
// are bit-identical.
#include "interp/Elem.h"
#include "ir/Verify.h"

namespace dtsim::exec {

namespace {

constexpr int64_t kChunk = 512;
constexpr size_t kMaxLeaves = 16;

template <BinOp OP, class T> void f_arith(const FInstr& I, const void* const* in, const int64_t* st, void* o, int64_t n) {
  SourceLoc loc = I.loc;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t>) {
    if (is_narrow(I.rt)) {
      Scalar rt = I.rt;
      return zip2<T, T>(in[0], st[0], in[1], st[1], o, n, [=](T x, T y) { return round_elem<T>(bin_elem<T>(OP, x, y, loc), rt); });
    }
  }
  zip2<T, T>(in[0], st[0], in[1], st[1], o, n, [=](T x, T y) { return bin_elem<T>(OP, x, y, loc); });
}

template <BinOp OP, class T> void f_cmp(const FInstr&, const void* const* in, const int64_t* st, void* o, int64_t n) {
  zip2<T, uint8_t>(in[0], st[0], in[1], st[1], o, n, [](T x, T y) { return cmp_elem<T>(OP, x, y); });
}

template <UnOp OP, class T> void f_un(const FInstr& I, const void* const* in, const int64_t* st, void* o, int64_t n) {
  if constexpr (std::is_same_v<T, float> && (OP == UnOp::Exp || OP == UnOp::Log)) {
    // VecMath's array loops (built per instruction set), then the narrowing as the loop below does.
    if (st[0]) {
      float* po = static_cast<float*>(o);
      (OP == UnOp::Exp ? exp_f32_array : log_f32_array)(static_cast<const float*>(in[0]), po, n);
      if (is_narrow(I.rt)) {
        Scalar rt = I.rt;
        for (int64_t i = 0; i < n; ++i) po[i] = round_elem<float>(po[i], rt);
      }
      return;
    }
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t>) {
    if (is_narrow(I.rt)) {
      Scalar rt = I.rt;
      return zip1<T, T>(in[0], st[0], o, n, [=](T x) { return round_elem<T>(un_elem<T>(OP, x), rt); });
    }
  }
  zip1<T, T>(in[0], st[0], o, n, [](T x) { return un_elem<T>(OP, x); });
}

template <class S, class D> void f_cvt(const FInstr& I, const void* const* in, const int64_t* st, void* o, int64_t n) {
  if (I.round) {
    Scalar rt = I.rt;
    return zip1<S, D>(in[0], st[0], o, n, [=](S x) { return conv_to<D>(x, rt); });
  }
  zip1<S, D>(in[0], st[0], o, n, [](S x) { return conv_elem<D>(x); });
}

template <class T, bool SC, bool SA, bool SB> void where_loop(const void* c, const void* a, const void* b, void* o, int64_t n) {
  const uint8_t* __restrict pc = static_cast<const uint8_t*>(c);
  const T* __restrict pa = static_cast<const T*>(a);
  const T* __restrict pb = static_cast<const T*>(b);
  T* __restrict po = static_cast<T*>(o);
  for (int64_t i = 0; i < n; ++i) {
    T x = pa[SA ? i : 0], y = pb[SB ? i : 0];
    po[i] = pc[SC ? i : 0] ? x : y;
  }
}
template <class T> void f_where(const FInstr&, const void* const* in, const int64_t* st, void* o, int64_t n) {
  switch ((st[0] ? 4 : 0) | (st[1] ? 2 : 0) | (st[2] ? 1 : 0)) {
    case 0: return where_loop<T, false, false, false>(in[0], in[1], in[2], o, n);
    case 1: return where_loop<T, false, false, true>(in[0], in[1], in[2], o, n);
    case 2: return where_loop<T, false, true, false>(in[0], in[1], in[2], o, n);
    case 3: return where_loop<T, false, true, true>(in[0], in[1], in[2], o, n);
    case 4: return where_loop<T, true, false, false>(in[0], in[1], in[2], o, n);
    case 5: return where_loop<T, true, false, true>(in[0], in[1], in[2], o, n);
    case 6: return where_loop<T, true, true, false>(in[0], in[1], in[2], o, n);
    default: return where_loop<T, true, true, true>(in[0], in[1], in[2], o, n);
  }
}

// ---- the function of each op for a storage type ----

template <class T> FFn binary_fn(BinOp op) {
  switch (op) {
#define DT_FUSE_BIN(e, ...) \
  case BinOp::e: return binop_is_compare(BinOp::e) || BinOp::e == BinOp::LAnd || BinOp::e == BinOp::LOr ? &f_cmp<BinOp::e, T> : &f_arith<BinOp::e, T>;
    DT_FOR_EACH_BINOP(DT_FUSE_BIN)
#undef DT_FUSE_BIN
  }
  return nullptr;
}
template <class T> FFn unary_fn(UnOp op) {
  switch (op) {
#define DT_FUSE_UN(e, ...) \
  case UnOp::e: return &f_un<UnOp::e, T>;
    DT_FOR_EACH_UNOP(DT_FUSE_UN)
#undef DT_FUSE_UN
  }
  return nullptr;
}
template <class S> FFn cvt_from(size_t d) {
  switch (d) {
    case 0: return &f_cvt<S, uint8_t>;
    case 1: return &f_cvt<S, int32_t>;
    case 2: return &f_cvt<S, int64_t>;
    case 3: return &f_cvt<S, float>;
    default: return &f_cvt<S, double>;
  }
}
FFn cvt_fn(size_t s, size_t d) {
  return with_storage(s, [&](auto tag) { return cvt_from<decltype(tag)>(d); });
}

size_t elem_bytes(size_t storage) { return storage == 0 ? 1 : storage == 1 || storage == 3 ? 4 : 8; }

bool int_division(BinOp op) { return op == BinOp::Div || op == BinOp::FloorDiv || op == BinOp::Mod || op == BinOp::Cdiv; }

// The compute type of a non-pointer binary node's operands (Tiles.cpp's binary()).
Scalar binary_ct(const Expr& e) {
  if (binop_is_compare(e.bop)) return promote_operands(*e.args[0], *e.args[1]);
  if (e.bop == BinOp::LAnd || e.bop == BinOp::LOr) return Scalar::I1;
  return e.type.elem;
}

// Whether `n` is an elementwise op the chunk loops evaluate (not whether its operands allow it).
bool elementwise(const TNode& n) {
  const Expr& e = *n.e;
  if (n.s || e.type.ptr || e.type.shape.empty()) return false;
  switch (e.kind) {
    case ExprKind::Unary: return !e.args[0]->type.ptr;
    case ExprKind::Binary: {
      if (e.args[0]->type.ptr || e.args[1]->type.ptr) return false;
      Scalar ct = binary_ct(e);
      return is_float(ct) || !int_division(e.bop);  // integer division can fault: never inlined
    }
    case ExprKind::Where: return true;
    case ExprKind::Cast: return !e.args[0]->type.ptr;
    case ExprKind::Const:
    case ExprKind::Var:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      return false;
  }
  return false;
}

struct Builder {
  Fused& f;
  int64_t R;
  std::vector<uint8_t> busy;  // temporaries in use

  bool inlinable(const TNode& k) { return elementwise(k) && k.e->type.numel() == R && fusable(k); }
  // Whether every operand of `n` is an inlinable op or a leaf of R or 1 elements.
  bool fusable(const TNode& n) {
    for (const TNode* k : n.kids) {
      if (!k) return false;
      if (elementwise(*k) && k->e->type.numel() == R && fusable(*k)) continue;
      int64_t kn = k->e->type.numel();
      if (kn != R && kn != 1) return false;
    }
    return true;
  }
  int temp(const std::array<int, 3>& ins, int nin) {
    for (size_t t = 0;; ++t) {
      if (t == busy.size()) busy.push_back(0);
      bool used = busy[t];
      for (int i = 0; i < nin; ++i) used |= ins[static_cast<size_t>(i)] == -1 - static_cast<int>(t);
      if (!used) {
        busy[t] = 1;
        return static_cast<int>(t);
      }
    }
  }
  int emit(FFn fn, std::array<int, 3> ins, int nin, Scalar rt, bool round, SourceLoc loc) {
    FInstr I;
    I.fn = fn;
    I.in = ins;
    I.nin = nin;
    I.rt = rt;
    I.round = round;
    I.loc = loc;
    I.out = temp(ins, nin);
    for (int i = 0; i < nin; ++i)
      if (ins[static_cast<size_t>(i)] < 0) busy[static_cast<size_t>(-1 - ins[static_cast<size_t>(i)])] = 0;
    f.code.push_back(I);
    return -1 - I.out;
  }
  int leaf(const TNode& k, Scalar ct, bool conv) {
    f.leaves.push_back(FLeaf{&k, ct, conv});
    return static_cast<int>(f.leaves.size() - 1);
  }
  // The operand `k` converted to `ct` (Tiles.cpp's operand()).
  int operand(const TNode& k, Scalar ct) {
    if (!inlinable(k)) return leaf(k, ct, true);
    int r = compile(k);
    const Type& t = k.e->type;
    if (t.elem == ct) return r;
    return emit(cvt_fn(storage_of(t.elem, false), storage_of(ct, false)), {r, 0, 0}, 1, ct, is_narrow(ct), k.e->loc);
  }
  // The value of `k` as it is.
  int value(const TNode& k) {
    if (!inlinable(k)) return leaf(k, k.e->type.elem, false);
    return compile(k);
  }
  int compile(const TNode& n) {
    const Expr& e = *n.e;
    switch (e.kind) {
      case ExprKind::Unary: {
        int x = operand(*n.kids[0], e.type.elem);
        return emit(with_storage(storage_of(e.type.elem, false), [&](auto tag) { return unary_fn<decltype(tag)>(e.uop); }), {x, 0, 0}, 1, e.type.elem,
                    false, e.loc);
      }
      case ExprKind::Binary: {
        Scalar ct = binary_ct(e);
        int a = operand(*n.kids[0], ct);
        int b = operand(*n.kids[1], ct);
        return emit(with_storage(storage_of(ct, false), [&](auto tag) { return binary_fn<decltype(tag)>(e.bop); }), {a, b, 0}, 2, e.type.elem, false, e.loc);
      }
      case ExprKind::Where: {
        int c = value(*n.kids[0]);
        int a = operand(*n.kids[1], e.type.elem);
        int b = operand(*n.kids[2], e.type.elem);
        return emit(with_storage(storage_of(e.type.elem, false), [&](auto tag) -> FFn { return &f_where<decltype(tag)>; }), {c, a, b}, 3, e.type.elem,
                    false, e.loc);
      }
      case ExprKind::Cast: {
        const Type& from = e.args[0]->type;
        int x = value(*n.kids[0]);
        if (from.elem == e.dtype) return x;
        return emit(cvt_fn(storage_of(from.elem, false), storage_of(e.dtype, false)), {x, 0, 0}, 1, e.dtype, is_narrow(e.dtype), e.loc);
      }
      case ExprKind::Const:
      case ExprKind::Var:
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
      case ExprKind::Arange:
      case ExprKind::Full:
      case ExprKind::ExpandDims:
      case ExprKind::Reshape:
      case ExprKind::Trans:
      case ExprKind::Broadcast:
      case ExprKind::Load:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Bitcast:
      case ExprKind::CombineArg:
      case ExprKind::Swizzle2d:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt:
      case ExprKind::Machine:
      case ExprKind::Gather:
      case ExprKind::Histogram:
        break;
    }
    internal_error("Interp", "fusing a node that is not elementwise");
  }
};

}  // namespace

const Fused* fuse_tree(std::deque<Fused>& store, const TNode& n, bool one_op) {
  const Expr& e = *n.e;
  bool reduce = e.kind == ExprKind::Reduce && n.kids.size() == 1 && n.kids[0] && n.kids[0]->e->type.shape.size() == 1 &&
                (e.rop == RedOp::Sum || e.rop == RedOp::Max || e.rop == RedOp::Min);
  const TNode& root = reduce ? *n.kids[0] : n;
  if (!elementwise(root)) return nullptr;
  Fused f;
  Builder b{f, root.e->type.numel(), {}};
  if (!b.fusable(root)) return nullptr;
  int r = b.compile(root);
  if (r >= 0 || f.code.empty() || (!reduce && !one_op && f.code.size() < 2) || f.leaves.size() > kMaxLeaves) return nullptr;
  f.numel = b.R;
  f.storage = storage_of(root.e->type.elem, false);
  f.ntemps = static_cast<int>(b.busy.size());
  f.reduce = reduce;
  f.rop = e.rop;
  if (!reduce) f.code.back().out = -1;  // the last op writes the result tile
  store.push_back(std::move(f));
  return &store.back();
}

namespace {
// Sum/max/min of one chunk into the accumulator, in element order (reduce_into's order; float sums
// do not come here: they take tree_fold's order over the whole tile, run_chunks).
template <class T> void fold(RedOp op, const T* p, int64_t n, bool first, Raw& acc) {
  if (op == RedOp::Sum) {
    using A = std::conditional_t<std::is_same_v<T, uint8_t>, int32_t, T>;
    A s = first ? A(0) : rget<A>(acc);
    for (int64_t k = 0; k < n; ++k) s = wadd<A>(s, static_cast<A>(p[k]));
    acc = rmake<A>(s);
    return;
  }
  T m = first ? p[0] : rget<T>(acc);
  for (int64_t k = first ? 1 : 0; k < n; ++k) m = op == RedOp::Max ? fmax_nan(m, p[k]) : fmin_nan(m, p[k]);
  acc = rmake<T>(m);
}

// The chunk loops of `f` over its first `len` elements: the root's chunks written to `op` (not for
// a reduction), a reduction's result folded into `acc`.
void run_chunks(const Fused& f, const Value* const* lv, const void* const* raw, char* op, int64_t len, Raw& acc) {
  thread_local std::vector<uint64_t> scratch;
  size_t words = static_cast<size_t>(kChunk) * static_cast<size_t>(std::max(f.ntemps, 1));
  if (scratch.size() < words) scratch.resize(words);
  auto temp = [&](int t) { return reinterpret_cast<char*>(scratch.data() + static_cast<size_t>(t) * kChunk); };
  std::array<const char*, kMaxLeaves> lp{};
  std::array<int64_t, kMaxLeaves> ls{};
  std::array<size_t, kMaxLeaves> lb{};
  for (size_t i = 0; i < f.leaves.size(); ++i) {
    if (raw && raw[i]) {  // a load left in its buffer: the elements of the leaf's own type
      const Type& t = f.leaves[i].n->e->type;
      lb[i] = elem_bytes(storage_of(t.elem, t.ptr));
      ls[i] = t.numel() == 1 && f.numel != 1 ? 0 : 1;
      lp[i] = static_cast<const char*>(raw[i]);
      continue;
    }
    const Value& v = *lv[i];
    lb[i] = elem_bytes(storage_of(v.type.elem, v.type.ptr));
    ls[i] = numel(v) == 1 && f.numel != 1 ? 0 : 1;
    lp[i] = static_cast<const char*>(std::visit([](const auto& a) -> const void* { return a.data(); }, v.data));
  }
  size_t ob = elem_bytes(f.storage);
  // a float sum: the root's values of the whole tile, summed at the end in reduce_into's order
  // (tree_fold)
  const bool tree = f.reduce && f.rop == RedOp::Sum && (f.storage == 3 || f.storage == 4);
  thread_local std::vector<double> tvals;
  if (tree && tvals.size() < static_cast<size_t>(len)) tvals.resize(static_cast<size_t>(len));
  const void* in[3];
  int64_t st[3];
  const int64_t total = len;
  for (int64_t o0 = 0; o0 < total; o0 += kChunk) {
    int64_t len = std::min(kChunk, total - o0);
    for (size_t ci = 0; ci < f.code.size(); ++ci) {
      const FInstr& I = f.code[ci];
      for (int k = 0; k < I.nin; ++k) {
        int r = I.in[static_cast<size_t>(k)];
        if (r >= 0) {
          size_t u = static_cast<size_t>(r);
          in[k] = lp[u] + (ls[u] ? static_cast<size_t>(o0) * lb[u] : 0);
          st[k] = ls[u];
        } else {
          in[k] = temp(-1 - r);
          st[k] = 1;
        }
      }
      I.fn(I, in, st, I.out >= 0 ? static_cast<void*>(temp(I.out)) : static_cast<void*>(op + static_cast<size_t>(o0) * ob), len);
    }
    if (tree) {
      const char* p = temp(f.code.back().out);
      std::memcpy(reinterpret_cast<char*>(tvals.data()) + static_cast<size_t>(o0) * ob, p, static_cast<size_t>(len) * ob);
    } else if (f.reduce) {
      const char* p = temp(f.code.back().out);
      with_storage(f.storage, [&](auto tag) {
        using T = decltype(tag);
        fold<T>(f.rop, reinterpret_cast<const T*>(p), len, o0 == 0, acc);
        return 0;
      });
    }
  }
  if (tree) {
    if (f.storage == 3) {
      float* v = reinterpret_cast<float*>(tvals.data());
      if (total) tree_fold(v, total, 1);
      acc = rmake<float>(total ? v[0] : 0.0f);
    } else {
      if (total) tree_fold(tvals.data(), total, 1);
      acc = rmake<double>(total ? tvals[0] : 0.0);
    }
  }
}
}  // namespace

void run_fused_to(const Fused& f, const Value* const* lv, void* dst, int64_t len, const void* const* raw) {
  Raw acc;
  acc.i64 = 0;
  run_chunks(f, lv, raw, static_cast<char*>(dst), len, acc);
}

void run_fused(const Fused& f, const Value* const* lv, Value& out, const Type& rt, const void* const* raw) {
  char* op = nullptr;
  if (!f.reduce) {
    prep(out, rt);
    op = static_cast<char*>(std::visit([](auto& a) -> void* { return a.data(); }, out.data));
  }
  Raw acc;
  acc.i64 = 0;
  run_chunks(f, lv, raw, op, f.numel, acc);
  if (f.reduce) {
    prep(out, rt);
    with_storage(storage_of(rt.elem, false), [&](auto tag) {
      using T = decltype(tag);
      data<T>(out)[0] = rget<T>(acc);
      return 0;
    });
  }
}

// ---- consecutive offsets, statically ----

bool consecutive_expr(const Expr& e, const std::vector<uint8_t>& slots) {
  auto int_type = [](const Type& t) { return !t.ptr && (t.elem == Scalar::I32 || t.elem == Scalar::I64); };
  if (!int_type(e.type) || e.type.shape.size() != 1) return false;
  switch (e.kind) {
    case ExprKind::Arange: return true;
    case ExprKind::Var: return e.slot >= 0 && static_cast<size_t>(e.slot) < slots.size() && slots[static_cast<size_t>(e.slot)];
    case ExprKind::Binary: {
      const Expr& A = *e.args[0];
      const Expr& B = *e.args[1];
      if (e.bop == BinOp::Add) {
        if (int_type(A.type) && A.type.shape.empty()) return int_type(B.type) && consecutive_expr(B, slots);
        if (int_type(B.type) && B.type.shape.empty()) return int_type(A.type) && consecutive_expr(A, slots);
        return false;
      }
      if (e.bop == BinOp::Sub) return int_type(B.type) && B.type.shape.empty() && consecutive_expr(A, slots);
      return false;
    }
    case ExprKind::Cast: return int_type(e.args[0]->type) && consecutive_expr(*e.args[0], slots);
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Full:
    case ExprKind::Unary:
    case ExprKind::Where:
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::Bitcast:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      return false;
  }
  return false;
}

std::vector<uint8_t> consecutive_slots(const Kernel& k) {
  std::vector<uint8_t> slots(k.slot_types.size(), 0);
  std::vector<uint8_t> assigned(slots.size(), 0);
  for (const Stmt* s : k.stmts)
    if (s->kind == StmtKind::Assign)
      for (int sl : s->slots)
        if (sl >= 0 && static_cast<size_t>(sl) < slots.size()) assigned[static_cast<size_t>(sl)] = 1;
  // Greatest fixed point: assume every assigned slot qualifies, drop those with an assignment that
  // does not, until nothing changes.
  slots = assigned;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Stmt* s : k.stmts) {
      if (s->kind != StmtKind::Assign) continue;
      bool ok = s->slots.size() == 1 && consecutive_expr(*s->args[0], slots);
      for (int sl : s->slots)
        if (!ok && sl >= 0 && static_cast<size_t>(sl) < slots.size() && slots[static_cast<size_t>(sl)]) slots[static_cast<size_t>(sl)] = 0, changed = true;
    }
  }
  return slots;
}

}  // namespace dtsim::exec
