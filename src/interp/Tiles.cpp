// Tile statements in the execution form: each expression node owns a per-thread result tile that
// is reused across instances and loop trips (the ops write into it instead of allocating), literal and scalar operands are prepared once per launch and evaluated unboxed, and
// aranges are built once per thread. The operations themselves are those of the tile path (Ops.cpp,
// Memory.cpp), called in the same order on the same values, so results and findings are identical.
#include <cstring>

#include "interp/Elem.h"

namespace dtsim::exec {

namespace {

// `scalar pointer + integer tile` (either order): the form whose offsets may be a range.
bool affine_ptr(const TNode& P) {
  const Expr& e = *P.e;
  if (P.s || e.kind != ExprKind::Binary || e.bop != BinOp::Add || P.kids.size() != 2 || !P.kids[0] || !P.kids[1]) return false;
  const Type& a = e.args[0]->type;
  const Type& b = e.args[1]->type;
  const Type& off = a.ptr ? b : a;
  const Type& ptr = a.ptr ? a : b;
  return a.ptr != b.ptr && ptr.is_scalar() && off.is_tile() && (off.elem == Scalar::I32 || off.elem == Scalar::I64);
}

// consecutive() of a tile known to be a wraparound of c + [0, n) (consecutive_expr()): then the
// values are consecutive exactly when the last is the first plus n - 1 (a wrap inside the tile
// makes a drop of 2^32 that no later step undoes).
bool consecutive_ends(const Value& off, int64_t& first) {
  int64_t n = numel(off);
  if (off.type.elem == Scalar::I32) {
    const int32_t* p = data<int32_t>(off);
    first = p[0];
    if (first > INT32_MAX - n) return false;  // as consecutive() decides
    return static_cast<int64_t>(p[n - 1]) == first + (n - 1);
  }
  const int64_t* p = data<int64_t>(off);
  first = p[0];
  return static_cast<uint64_t>(p[n - 1]) == static_cast<uint64_t>(first) + static_cast<uint64_t>(n - 1);
}

// Whether an integer tile holds consecutive values (off[o] == off[0] + o, in i64); its first one.
bool consecutive(const Value& off, int64_t& first) {
  int64_t n = numel(off);
  // OR-reductions of differences, compared in the offsets' own width: these vectorize.
  if (off.type.elem == Scalar::I32) {
    const int32_t* p = data<int32_t>(off);
    first = p[0];
    if (first > INT32_MAX - n) return false;  // the range would pass INT32_MAX: not consecutive in i32
    uint32_t bad = 0, f = static_cast<uint32_t>(p[0]);
    for (int64_t o = 0; o < n; ++o) bad |= static_cast<uint32_t>(p[o]) ^ (f + static_cast<uint32_t>(o));
    return bad == 0;
  }
  const int64_t* p = data<int64_t>(off);
  first = p[0];
  uint64_t bad = 0, f = static_cast<uint64_t>(p[0]);
  for (int64_t o = 0; o < n; ++o) bad |= static_cast<uint64_t>(p[o]) ^ (f + static_cast<uint64_t>(o));
  return bad == 0;
}

struct Tiles {
  Ctx& c;

  // An affine pointer operand, evaluated: the scalar pointer and the offsets (not yet widened).
  struct Affine {
    const Value* ptr;
    const Value* off;
    const TNode* off_node;
  };
  Affine affine(const TNode& P) {
    bool pf = P.e->args[0]->type.ptr;
    const Value& p = eval(*P.kids[pf ? 0 : 1]);
    const Value& off = eval(*P.kids[pf ? 1 : 0]);
    return Affine{&p, &off, P.kids[pf ? 1 : 0]};
  }
  // The consecutive elements the pointer tile would address, or false.
  bool range(const Affine& a, int64_t& base) {
    int64_t first;
    if (!c.fast || !(a.off_node->consec ? consecutive_ends(*a.off, first) : consecutive(*a.off, first))) return false;
    base = wadd<int64_t>(data<int64_t>(*a.ptr)[0], first);
    return true;
  }
  // The pointer tile itself (the tile path's operand conversion and pointer addition).
  const Value& materialize(const TNode& P, const Affine& a) {
    const Value* off = a.off;
    if (off->type.elem != Scalar::I64) {
      convert_into(conv(*a.off_node), *off, Scalar::I64);
      off = &conv(*a.off_node);
    }
    Value& pt = val(P);
    ptr_arith_into(pt, BinOp::Add, *a.ptr, *off, P.e->type, P.e->args[0]->type.ptr);
    return pt;
  }

  Value& val(const TNode& n) { return c.tcache[2 * static_cast<size_t>(n.idx)]; }
  Value& conv(const TNode& n) { return c.tcache[2 * static_cast<size_t>(n.idx) + 1]; }

  // operand(): the value of `n` converted to `to`; literals built directly in that type.
  const Value& operand(const TNode& n, Scalar to) {
    if (n.e->kind == ExprKind::Const) {
      write_value(conv(n), Type{to, false, {}}, Sv{const_raw(to, *n.e), -1});
      return conv(n);
    }
    const Value& v = eval(n);
    if (!v.type.ptr && v.type.elem == to) return v;
    Value& cv = conv(n);
    convert_into(cv, v, to);
    return cv;
  }

  const Value& binary(const TNode& n, Value& out) {
    const Expr& e = *n.e;
    const Expr& A = *e.args[0];
    const Expr& B = *e.args[1];
    if (A.type.ptr && B.type.ptr) {
      const Value& a = eval(*n.kids[0]);
      const Value& b = eval(*n.kids[1]);
      ptr_compare_into(out, e.bop, a, b, e.type);
      return out;
    }
    if (A.type.ptr || B.type.ptr) {
      const TNode& P = A.type.ptr ? *n.kids[0] : *n.kids[1];
      const TNode& I = A.type.ptr ? *n.kids[1] : *n.kids[0];
      const Value& p = eval(P);
      const Value& off = operand(I, Scalar::I64);
      ptr_arith_into(out, e.bop, p, off, e.type, A.type.ptr);
      return out;
    }
    Scalar ct = e.type.elem;
    if (binop_is_compare(e.bop)) ct = promote_operands(A, B);
    else if (e.bop == BinOp::LAnd || e.bop == BinOp::LOr) ct = Scalar::I1;
    const Value& a = operand(*n.kids[0], ct);
    const Value& b = operand(*n.kids[1], ct);
    if (!prefix_compare(n, ct, a, b, out)) binary_into(out, e.bop, a, b, e.type, e.loc);
    return out;
  }

  // `offs < s` (or <=, or s > offs, s >= offs) with consecutive integer offsets (consecutive_expr)
  // and a scalar s: a prefix of ones, written as two fills. False (nothing written) otherwise.
  bool prefix_compare(const TNode& n, Scalar ct, const Value& a, const Value& b, Value& out) {
    BinOp op = n.e->bop;
    bool left = (op == BinOp::Lt || op == BinOp::Le) && n.kids[0]->consec && numel(b) == 1;
    bool right = (op == BinOp::Gt || op == BinOp::Ge) && n.kids[1]->consec && numel(a) == 1;
    if (!c.fast || !(left || right) || (ct != Scalar::I32 && ct != Scalar::I64)) return false;
    const Value& t = left ? a : b;
    int64_t first, N = numel(t);
    if (!consecutive_ends(t, first)) return false;
    if (ct == Scalar::I64 && first > INT64_MAX - N) return false;  // t[o] = first + o without wrapping
    const Value& sv = left ? b : a;
    __int128 s = ct == Scalar::I32 ? data<int32_t>(sv)[0] : data<int64_t>(sv)[0];
    __int128 L = s - first + (op == BinOp::Le || op == BinOp::Ge ? 1 : 0);  // lanes o with first + o < s (<= s)
    int64_t ones = L <= 0 ? 0 : L >= N ? N : static_cast<int64_t>(L);
    prep(out, n.e->type);
    uint8_t* p = data<uint8_t>(out);
    std::memset(p, 1, static_cast<size_t>(ones));
    std::memset(p + ones, 0, static_cast<size_t>(N - ones));
    return true;
  }

  // A fused elementwise tree: its leaves in evaluation order, then the chunk loops.
  const Value& fused(const TNode& n, Value& out) {
    const Fused& f = *n.fused;
    std::array<const Value*, 16> lv;
    std::array<const void*, 16> raw;
    leaves(f, lv.data(), raw.data());
    run_fused(f, lv.data(), out, n.e->type, raw.data());
    return out;
  }
  // The leaves of a fused tree, evaluated in order; raw[i]: a variable's load left in its buffer
  // (Ctx::views), else null. A view into buffer `keep_out` is copied into its slot first.
  void leaves(const Fused& f, const Value** lv, const void** raw, int keep_out = -1) {
    for (size_t i = 0; i < f.leaves.size(); ++i) {
      const FLeaf& L = f.leaves[i];
      raw[i] = nullptr;
      if (c.views && L.n->e->kind == ExprKind::Var) {
        int sl = L.n->e->slot;
        Ctx::View& w = c.views[static_cast<size_t>(sl)];
        if (w.p && w.buffer != keep_out) {
          raw[i] = w.p;
          lv[i] = nullptr;
          continue;
        }
        if (w.p) unview(sl);
      }
      lv[i] = L.conv ? &operand(*L.n, L.ct) : &eval(*L.n);
    }
  }
  // The slot of a load left in its buffer made an ordinary tile (the buffer still holds the
  // elements the load read).
  void unview(int sl) {
    Ctx::View& w = c.views[static_cast<size_t>(sl)];
    Value& dst = c.f->slots[static_cast<size_t>(sl)];
    prep(dst, c.f->kernel->slot_types[static_cast<size_t>(sl)]);
    std::visit([&](auto& a) { std::memcpy(static_cast<void*>(a.data()), w.p, a.size() * sizeof(a.data()[0])); }, dst.data);
    w.p = nullptr;
  }
  // The load `n` through an affine pointer: a range copy when the pointer is one range, else lane by
  // lane, into val(n). With `w` (a slot that may keep the load in the buffer, assign_tnode): when the
  // whole tile would be copied unconverted from one range, `w` names the range instead and the
  // result is null; otherwise `w` is cleared.
  const Value* affine_load(const TNode& n, Ctx::View* w = nullptr) {
    const Expr& e = *n.e;
    Value& out = val(n);
    if (w) w->p = nullptr;
    Affine a = affine(*n.kids[0]);
    const Value* m = n.kids[1] ? &eval(*n.kids[1]) : nullptr;
    const Value* o = n.kids[2] ? &operand(*n.kids[2], e.type.elem) : nullptr;
    int64_t base;
    if (range(a, base)) {
      if (w)
        if (const void* p = load_range_view(c, e, a.ptr->buffer, base, m, o)) {
          w->p = p;
          w->buffer = a.ptr->buffer;
          return nullptr;
        }
      if (load_range(out, c, e, a.ptr->buffer, base, m, o)) return &out;
    }
    load_into(out, c, e, materialize(*n.kids[0], a), m, o);
    return &out;
  }

  const Value& eval(const TNode& n) {
    const Expr& e = *n.e;
    Value& out = val(n);
    if (n.s) {
      write_value(out, e.type, run_node(c, n.s));
      return out;
    }
    if (n.fused) return fused(n, out);
    switch (e.kind) {
      case ExprKind::Var: {
        c.flush(e.slot);
        const Value& v = c.f->slots[static_cast<size_t>(e.slot)];
        if (!v.defined()) throw RuntimeFault(e.loc, "'" + e.name + "' is used before it is assigned");
        return v;
      }
      case ExprKind::Arange:
        // Only this node writes its tile, so once built it stays built.
        if (!(out.defined() && out.type == e.type)) out = arange_op(e.ints[0], e.ints[1]);
        return out;
      case ExprKind::Full: {
        const Value& v = operand(*n.kids.back(), e.type.elem);
        full_into(out, v, e.type);
        return out;
      }
      case ExprKind::Unary: {
        const Value& x = operand(*n.kids[0], e.type.elem);
        unary_into(out, e.uop, x, e.type);
        return out;
      }
      case ExprKind::Binary: return binary(n, out);
      case ExprKind::Where: {
        const Value& cond = eval(*n.kids[0]);
        if (e.type.ptr) {
          const Value& a = eval(*n.kids[1]);
          const Value& b = eval(*n.kids[2]);
          if (a.buffer != b.buffer) {
            const Buffers* bs = c.f->buffers;
            throw RuntimeFault(e.loc, "where() selects between pointers into two buffers ('" + bs->list[static_cast<size_t>(a.buffer)].name +
                                          "' and '" + bs->list[static_cast<size_t>(b.buffer)].name + "'); the interpreter needs one buffer per pointer tile");
          }
          where_into(out, cond, a, b, e.type);
          out.buffer = a.buffer;
          return out;
        }
        const Value& a = operand(*n.kids[1], e.type.elem);
        const Value& b = operand(*n.kids[2], e.type.elem);
        where_into(out, cond, a, b, e.type);
        return out;
      }
      case ExprKind::Cast: {
        const Value& x = eval(*n.kids[0]);
        convert_into(out, x, e.dtype);
        return out;
      }
      case ExprKind::ExpandDims:
      case ExprKind::Reshape: {
        const Value& x = eval(*n.kids[0]);
        if (&x != &out) out = x;
        XShape xs(e.type.shape.size());
        for (size_t i = 0; i < e.type.shape.size(); ++i) xs[i] = static_cast<size_t>(e.type.shape[i]);
        std::visit([&](auto& a) { a.reshape(xs); }, out.data);
        out.type = e.type;
        return out;
      }
      case ExprKind::Trans: {
        const Value& x = eval(*n.kids[0]);
        out = trans_op(x);
        return out;
      }
      case ExprKind::Broadcast: {
        const Value& x = eval(*n.kids[0]);
        out = broadcast_op(x, e.type.shape);
        return out;
      }
      case ExprKind::Load: {
        if (n.kids[0]->affine) return *affine_load(n);
        const Value& p = eval(*n.kids[0]);
        const Value* m = n.kids[1] ? &eval(*n.kids[1]) : nullptr;
        const Value* o = n.kids[2] ? &operand(*n.kids[2], e.type.elem) : nullptr;
        load_into(out, c, e, p, m, o);
        return out;
      }
      case ExprKind::Dot: {
        const Value& a = eval(*n.kids[0]);
        const Value& b = eval(*n.kids[1]);
        const Value* acc = n.kids[2] ? &eval(*n.kids[2]) : nullptr;
        out = dot_op(a, b, acc, e.type, e.tf32);
        return out;
      }
      case ExprKind::Reduce: {
        const Value& x = eval(*n.kids[0]);
        reduce_into(out, e.rop, x, static_cast<int>(e.ints[0]), e.type);
        return out;
      }
      case ExprKind::Const:
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
      case ExprKind::Swizzle2d: break;
    }
    // Scalars outside the scalar form: the tile path.
    Value t;
    const Value& r = eval_expr(c, e, t);
    if (&r == &t) out = std::move(t);
    else out = r;
    return out;
  }
};

}  // namespace

const Value& eval_tnode(Ctx& c, const TNode& n) { return Tiles{c}.eval(n); }

void store_tnode(Ctx& c, const Stmt& s, const std::array<const TNode*, 3>& t) {
  Tiles T{c};
  bool aff = t[0]->affine;
  Tiles::Affine a{};
  const Value* p = nullptr;
  if (aff) a = T.affine(*t[0]);
  else p = &T.eval(*t[0]);
  const Expr& ve = *s.args[1];
  if (aff && t[1]->direct && c.fast && t[1]->direct->numel == numel(*a.off)) {
    // The value's operands, then the mask (the order of the tile path); the tree itself cannot
    // fault, so it runs last: straight into the buffer when the store is a range, else into its tile.
    const Fused& f = *t[1]->direct;
    std::array<const Value*, 16> lv;
    std::array<const void*, 16> raw;
    T.leaves(f, lv.data(), raw.data(), a.ptr->buffer);  // a view of the stored buffer is copied first
    const Value* m = t[2] ? &T.eval(*t[2]) : nullptr;
    int64_t base;
    struct Run {
      const Fused* f;
      const Value* const* lv;
      const void* const* raw;
    } run{&f, lv.data(), raw.data()};
    auto produce = [](void* ctx, void* dst, int64_t len) {
      const Run& r = *static_cast<const Run*>(ctx);
      run_fused_to(*r.f, r.lv, dst, len, r.raw);
    };
    bool rg = T.range(a, base);
    if (rg && store_range_direct(c, a.ptr->buffer, base, numel(*a.off), ve.type.elem, m, produce, &run)) return;
    Value& v = T.val(*t[1]);
    run_fused(f, lv.data(), v, ve.type, raw.data());
    if (rg && store_range(c, a.ptr->buffer, base, numel(*a.off), v, m)) return;
    store_op(c, T.materialize(*t[0], a), v, m);
    return;
  }
  const Value* v;
  if (ve.kind == ExprKind::Const) {  // a literal is stored as the pointer's element type
    Value& cv = c.tcache[2 * static_cast<size_t>(t[1]->idx)];
    write_value(cv, Type{s.args[0]->type.elem, false, {}}, Sv{const_raw(s.args[0]->type.elem, ve), -1});
    v = &cv;
  } else {
    v = &T.eval(*t[1]);
  }
  const Value* m = t[2] ? &T.eval(*t[2]) : nullptr;
  if (aff) {
    int64_t base;
    if (T.range(a, base) && store_range(c, a.ptr->buffer, base, numel(*a.off), *v, m)) return;
    p = &T.materialize(*t[0], a);
  }
  store_op(c, *p, *v, m);
}

void assign_tnode(Ctx& c, int slot, const TNode& n) {
  const Value* vp;
  if (c.views && c.sp->view_slot[static_cast<size_t>(slot)]) {
    vp = Tiles{c}.affine_load(n, &c.views[static_cast<size_t>(slot)]);
    if (!vp) {
      c.invalidate(slot);
      return;
    }
  } else {
    vp = &Tiles{c}.eval(n);
  }
  const Value& v = *vp;
  c.invalidate(slot);
  Value& dst = c.f->slots[static_cast<size_t>(slot)];
  if (&v == &dst) return;
  // The node's own tile, when large, trades storage with the slot instead of being copied (an
  // arange keeps its tile: it is built once).
  bool swap = &v == &c.tcache[2 * static_cast<size_t>(n.idx)] && n.e->kind != ExprKind::Arange && numel(v) >= 256;
  if (dst.defined() && dst.type == v.type) {  // same type: keep the slot's Value, move the elements
    with_storage(storage_of(v.type.elem, v.type.ptr), [&](auto tag) {
      using T = decltype(tag);
      if (swap) std::get<Arr<T>>(dst.data).storage().swap(std::get<Arr<T>>(const_cast<Value&>(v).data).storage());
      else std::copy_n(data<T>(v), numel(v), data<T>(dst));
      return 0;
    });
    dst.buffer = v.buffer;
    return;
  }
  dst = v;
}

const TNode* ScalarProgram::tile(const Expr& e) {
  tnodes.emplace_back();
  TNode* n = &tnodes.back();
  n->e = &e;
  n->idx = static_cast<int>(tnodes.size() - 1);
  if (e.kind != ExprKind::Var && scalar_form(e)) {
    n->s = compile_scalar(e);
    return n;
  }
  if (e.kind == ExprKind::Var) {
    n->consec = consecutive_expr(e, consec);
    return n;
  }
  size_t nk = e.args.size();
  // Shape operands of Full / Reshape / Broadcast are resolved constants (Expr::ints), not evaluated.
  if (e.kind == ExprKind::Reshape || e.kind == ExprKind::Broadcast) nk = 1;
  n->kids.assign(e.args.size(), nullptr);
  for (size_t i = 0; i < nk; ++i)
    if (e.args[i] && (e.kind != ExprKind::Full || i + 1 == e.args.size())) n->kids[i] = tile(*e.args[i]);
  n->fused = fuse_tree(fused, *n);
  n->affine = affine_ptr(*n);
  n->consec = consecutive_expr(e, consec);
  return n;
}

}  // namespace dtsim::exec
