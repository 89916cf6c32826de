// Tile statements in the execution form: each expression node owns a per-thread result tile that
// is reused across instances and loop trips (the ops write into it instead of allocating), literal and scalar operands are prepared once per launch and evaluated unboxed, and
// aranges are built once per thread. The operations themselves are those of the tile path (Ops.cpp,
// Memory.cpp), called in the same order on the same values, so results and findings are identical.
#include <algorithm>
#include <cstring>
#include <functional>

#include "interp/Elem.h"

namespace dtsim::exec {

namespace {

// `pointer + integers` (either order) with both operands evaluated as nodes: the integer operand's
// type (null otherwise).
const Type* ptr_plus_ints(const TNode& P) {
  const Expr& e = *P.e;
  if (P.s || e.kind != ExprKind::Binary || e.bop != BinOp::Add || P.kids.size() != 2 || !P.kids[0] || !P.kids[1]) return nullptr;
  const Type& a = e.args[0]->type;
  const Type& b = e.args[1]->type;
  const Type& off = a.ptr ? b : a;
  return a.ptr != b.ptr && (off.elem == Scalar::I32 || off.elem == Scalar::I64) ? &off : nullptr;
}

// `scalar pointer + integer tile` (either order): the form whose offsets may be a range.
bool affine_ptr(const TNode& P) {
  const Type* off = ptr_plus_ints(P);
  const Expr& e = *P.e;
  return off && off->is_tile() && (e.args[0]->type.ptr ? e.args[0] : e.args[1])->type.is_scalar();
}

// `X + Y` with X of shape [R, 1] and Y of shape [1, C] (or Y first), one a pointer tile and the
// other integers: a pointer tile that a RowPtr holds exactly.
bool outer_ptr(const TNode& P) {
  const Expr& e = *P.e;
  if (!ptr_plus_ints(P) || e.type.shape.size() != 2) return false;
  const Type& a = e.args[0]->type;
  const Type& b = e.args[1]->type;
  const int64_t R = e.type.shape[0], C = e.type.shape[1];
  const Shape col{R, 1}, row{1, C};
  return (a.shape == col && b.shape == row) || (a.shape == row && b.shape == col);
}

// Whether the [R, 1] operand of an outer pointer is its first.
bool rows_first(const Expr& e);

// `scalar pointer + (X + Y)` (either order) with X of shape [R, 1] and Y of shape [1, C] (or Y
// first) i64 or i32 integers, with no load in the pointer: a pointer tile that a RowPtr holds
// (rows: the pointer + X, columns: Y; the i64 additions wrap, so their order does not change the
// elements). With i32 offsets only when no X[i] + Y[j] wraps (Tiles::fill() says).
bool nested_outer(const TNode& P) {
  const Expr& e = *P.e;
  if (!affine_ptr(P) || P.loads || e.type.shape.size() != 2) return false;
  const TNode* O = P.kids[e.args[0]->type.ptr ? 1 : 0];
  if (!O || O->s || O->loads || O->e->kind != ExprKind::Binary || O->e->bop != BinOp::Add ||
      (O->e->type.elem != Scalar::I64 && O->e->type.elem != Scalar::I32) ||
      !(O->e->type.shape == e.type.shape) || O->kids.size() != 2 || !O->kids[0] || !O->kids[1])
    return false;
  const Type& a = O->e->args[0]->type;
  const Type& b = O->e->args[1]->type;
  if (a.ptr || b.ptr) return false;
  const Shape col{e.type.shape[0], 1}, row{1, e.type.shape[1]};
  return (a.shape == col && b.shape == row) || (a.shape == row && b.shape == col);
}

// A nested_outer() pointer with i32 offsets: held as rows plus columns only where no sum wraps.
bool outer32(const TNode& P) { return P.outer && P.affine && P.e->args[P.e->args[0]->type.ptr ? 1 : 0]->type.elem == Scalar::I32; }

bool has_load(const Expr& e) {
  if (e.kind == ExprKind::Load) return true;
  for (const ExprP& a : e.args)
    if (a && has_load(*a)) return true;
  return false;
}

// Whether the [R, 1] operand of an outer pointer is its first.
bool rows_first(const Expr& e) { return e.args[0]->type.shape == Shape{e.type.shape[0], 1}; }

// `p + s`, `s + p` or `p - s` with p a variable of slot `slot` and s a scalar integer.
bool step_of(const TNode& n, int slot) {
  const Expr& e = *n.e;
  if (n.s || e.kind != ExprKind::Binary || (e.bop != BinOp::Add && e.bop != BinOp::Sub) || n.kids.size() != 2 || !n.kids[0] || !n.kids[1]) return false;
  auto is_p = [&](const Expr& x) { return x.kind == ExprKind::Var && x.slot == slot; };
  auto is_s = [](const Expr& x) { return !x.type.ptr && x.type.shape.empty() && (x.type.elem == Scalar::I32 || x.type.elem == Scalar::I64); };
  const Expr& A = *e.args[0];
  const Expr& B = *e.args[1];
  return (is_p(A) && is_s(B)) || (e.bop == BinOp::Add && is_s(A) && is_p(B));
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

  // An affine pointer operand, evaluated: the scalar pointer and the offsets (not yet widened), or,
  // when the offsets are known to be wrap(first + o) in their type (iota()), only their first one
  // (off null until materialize() makes them).
  struct Affine {
    const Value* ptr;
    const Value* off;
    const TNode* off_node;
    int64_t n;      // lanes
    int64_t first;  // off null: the first offset
  };
  Affine affine(const TNode& P) {
    bool pf = P.e->args[0]->type.ptr;
    const Value& p = eval(*P.kids[pf ? 0 : 1]);
    const TNode& O = *P.kids[pf ? 1 : 0];
    Affine a{&p, nullptr, &O, O.numel, 0};
    if (!(O.consec && iota(O, O.e->type.elem, a.first))) a.off = &eval(O);
    return a;
  }
  // The consecutive elements the pointer tile would address, or false.
  bool range(const Affine& a, int64_t& base) {
    int64_t first = a.first;
    if (!c.fast) return false;
    if (!a.off) {
      if (a.off_node->e->type.elem == Scalar::I32 && first > INT32_MAX - a.n) return false;  // as consecutive_ends() decides
    } else if (!(a.off_node->consec ? consecutive_ends(*a.off, first) : consecutive(*a.off, first))) {
      return false;
    }
    base = wadd<int64_t>(data<int64_t>(*a.ptr)[0], first);
    return true;
  }
  // The pointer tile itself (the tile path's operand conversion and pointer addition).
  const Value& materialize(const TNode& P, Affine& a) {
    if (!a.off) a.off = &eval(*a.off_node);
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
    int64_t ones;
    if (prefix_of(n, ones)) {
      prep(out, e.type);
      uint8_t* p = data<uint8_t>(out);
      std::memset(p, 1, static_cast<size_t>(ones));
      std::memset(p + ones, 0, static_cast<size_t>(numel(out) - ones));
      return out;
    }
    const Value& a = operand(*n.kids[0], ct);
    const Value& b = operand(*n.kids[1], ct);
    binary_into(out, e.bop, a, b, e.type, e.loc);
    return out;
  }

  // The scalar integer operand `n` converted to `ct` (I32 or I64), as an i64.
  int64_t int_operand(const TNode& n, Scalar ct) {
    if (n.e->kind == ExprKind::Const || n.s) {  // unboxed, converted as operand() converts
      Raw r = n.e->kind == ExprKind::Const ? const_raw(ct, *n.e) : convert_raw(run_node(c, n.s).r, n.s->t, ct);
      return ct == Scalar::I32 ? r.i32 : r.i64;
    }
    const Value& v = operand(n, ct);
    return ct == Scalar::I32 ? data<int32_t>(v)[0] : data<int64_t>(v)[0];
  }
  // Whether the value of the 1-d integer node `n`, converted to `to` (I32 or I64), is wrap(first + o)
  // in `to`, told without making it: an arange, a lazy slot, +/- scalars and i32/i64 casts of such.
  // Scalar operands are evaluated in the tile path's order. False for any other form, and for a
  // widening of a tile that wraps inside it (its i64 elements are then no such sequence); the
  // caller then evaluates `n` as usual (so nothing with a load in it is tried: a scalar load's
  // finding must be reported once). Not under the debugger.
  bool iota(const TNode& n, Scalar to, int64_t& first) {
    const Expr& e = *n.e;
    const Scalar t = e.type.elem;
    if (!c.views || n.s || n.loads || e.type.ptr || e.type.shape.size() != 1 || (t != Scalar::I32 && t != Scalar::I64) ||
        (to != Scalar::I32 && to != Scalar::I64))
      return false;
    auto wrap = [t](int64_t x) { return t == Scalar::I32 ? static_cast<int64_t>(static_cast<int32_t>(x)) : x; };
    int64_t f = 0;
    switch (e.kind) {
      case ExprKind::Arange: f = e.ints[0]; break;
      case ExprKind::Var: {
        const int64_t* l = lazy_of(c, e.slot);
        if (!l) return false;
        f = *l;
        break;
      }
      case ExprKind::Cast:
        if (!iota(*n.kids[0], t, f)) return false;
        break;
      case ExprKind::Binary: {
        if ((e.bop != BinOp::Add && e.bop != BinOp::Sub) || !n.kids[0] || !n.kids[1]) return false;
        const Type& A = e.args[0]->type;
        const Type& B = e.args[1]->type;
        if (e.bop == BinOp::Add && A.shape.empty() && !B.shape.empty()) {  // s + tile
          int64_t s = int_operand(*n.kids[0], t);
          if (!iota(*n.kids[1], t, f)) return false;
          f = wrap(wadd<int64_t>(s, f));
        } else if (!A.shape.empty() && B.shape.empty()) {  // tile +/- s
          if (!iota(*n.kids[0], t, f)) return false;
          int64_t s = int_operand(*n.kids[1], t);
          f = wrap(e.bop == BinOp::Add ? wadd<int64_t>(f, s) : wsub<int64_t>(f, s));
        } else {
          return false;
        }
        break;
      }
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
    if (t == to) {
      first = f;
    } else if (to == Scalar::I64) {  // sign-extended: the same sequence unless it wraps inside the tile
      if (f > INT32_MAX - (n.numel - 1)) return false;
      first = f;
    } else {
      first = static_cast<int32_t>(static_cast<uint64_t>(f));
    }
    return true;
  }

  // `offs < s` (or <=, or s > offs, s >= offs) with consecutive integer offsets (consecutive_expr)
  // and a scalar s: a prefix of `ones` ones, the rest zeros. Its operands are evaluated as binary()
  // evaluates them (the offsets through iota() when they have that form). False when it is not one
  // (the caller then evaluates the comparison as usual; nothing with a load in it is tried).
  bool prefix_of(const TNode& n, int64_t& ones) {
    const Expr& e = *n.e;
    BinOp op = e.bop;
    if (!c.fast || n.loads || e.kind != ExprKind::Binary || !binop_is_compare(op) || e.args[0]->type.ptr || e.args[1]->type.ptr) return false;
    bool left = (op == BinOp::Lt || op == BinOp::Le) && n.kids[0]->consec && n.kids[1]->numel == 1;
    bool right = (op == BinOp::Gt || op == BinOp::Ge) && n.kids[1]->consec && n.kids[0]->numel == 1;
    Scalar ct = promote_operands(*e.args[0], *e.args[1]);
    if (!(left || right) || (ct != Scalar::I32 && ct != Scalar::I64)) return false;
    const TNode& T = left ? *n.kids[0] : *n.kids[1];
    const TNode& S = left ? *n.kids[1] : *n.kids[0];
    const int64_t N = T.numel;
    int64_t first, s;
    auto tile_first = [&] {
      if (iota(T, ct, first)) return ct == Scalar::I64 || first <= INT32_MAX - N;  // as consecutive_ends() decides
      return consecutive_ends(operand(T, ct), first);
    };
    if (left) {
      if (!tile_first()) return false;
      s = int_operand(S, ct);
    } else {
      s = int_operand(S, ct);
      if (!tile_first()) return false;
    }
    if (ct == Scalar::I64 && first > INT64_MAX - N) return false;  // t[o] = first + o without wrapping
    __int128 L = static_cast<__int128>(s) - first + (op == BinOp::Le || op == BinOp::Ge ? 1 : 0);  // lanes o with first + o < s (<= s)
    ones = L <= 0 ? 0 : L >= N ? N : static_cast<int64_t>(L);
    return true;
  }

  // The leading ones of the i1 node `n` (a 1-d mask, or one with unit axes added by expand_dims or
  // reshape) when it is all ones or all zeros: its length or 0; -1 otherwise. A lazy slot or a
  // prefix comparison is told without making it; any other form is evaluated (nothing with a load
  // in it is tried). Not under the debugger.
  int64_t ones_or_none(const TNode& n) {
    const Expr& e = *n.e;
    if (!c.views || n.loads || e.type.ptr || e.type.elem != Scalar::I1) return -1;
    if ((e.kind == ExprKind::ExpandDims || e.kind == ExprKind::Reshape) && n.kids.size() == 1 && n.kids[0] && n.kids[0]->numel == n.numel)
      return ones_or_none(*n.kids[0]);
    int64_t v = -1;
    if (e.kind == ExprKind::Var) {
      if (const int64_t* l = lazy_of(c, e.slot)) v = *l;
    } else if (e.kind == ExprKind::Binary && !n.s && !n.fused && e.type.shape.size() == 1) {
      if (!prefix_of(n, v)) v = -1;
    }
    if (v < 0) {
      const Value& x = eval(n);
      const uint8_t* p = data<uint8_t>(x);
      const size_t N = static_cast<size_t>(numel(x));
      if (!std::memchr(p, 0, N)) v = n.numel;
      else if (std::count(p, p + N, uint8_t{0}) == static_cast<std::ptrdiff_t>(N)) v = 0;
    }
    return v == 0 || v == n.numel ? v : -1;
  }
  // `X & Y` (or `and`) of an i1 column [R, 1] and row [1, C], the mask of a 2-d tile, when both are
  // all ones (then the mask is R * C leading ones) or one is all zeros (0): the mask held as that
  // prefix (a lazy slot) instead of an R x C tile of bytes. False otherwise (the caller then
  // evaluates it: the operands hold no load, so evaluating them again reports nothing).
  bool outer_prefix(const TNode& n, int64_t& ones) {
    const Expr& e = *n.e;
    if (!c.views || n.loads || e.kind != ExprKind::Binary || (e.bop != BinOp::And && e.bop != BinOp::LAnd) || n.kids.size() < 2 || !n.kids[0] ||
        !n.kids[1] || e.type.elem != Scalar::I1 || e.type.shape.size() != 2)
      return false;
    const Shape& a = e.args[0]->type.shape;
    const Shape& b = e.args[1]->type.shape;
    const int64_t R = e.type.shape[0], C = e.type.shape[1];
    if (!(a == Shape{R, 1} && b == Shape{1, C}) && !(a == Shape{1, C} && b == Shape{R, 1})) return false;
    const int64_t x = ones_or_none(*n.kids[0]);
    if (x < 0) return false;
    const int64_t y = ones_or_none(*n.kids[1]);
    if (y < 0) return false;
    ones = x == 0 || y == 0 ? 0 : R * C;
    return true;
  }
  // The mask operand `M` of a load, store or atomic through a RowPtr: null when it is absent or a
  // lazy slot of all ones (every lane active, as no mask), else its tile.
  const Value* rows_mask(const TNode* M) {
    if (!M) return nullptr;
    if (c.views && M->e->kind == ExprKind::Var)
      if (const int64_t* l = lazy_of(c, M->e->slot); l && *l == M->numel) return nullptr;
    return &eval(*M);
  }

  // The mask of a load or store of `total` lanes: its tile, or, when it is known to be a prefix of
  // ones without making it (a lazy slot, a prefix comparison), that prefix's length (v null until
  // mask_value() makes it).
  struct MaskArg {
    const TNode* node = nullptr;
    const Value* v = nullptr;
    int64_t prefix = -1;
  };
  MaskArg mask_arg(const TNode* k, int64_t total) {
    MaskArg m;
    m.node = k;
    if (!k) return m;
    const Type& t = k->e->type;
    if (c.views && !t.ptr && t.elem == Scalar::I1 && k->numel == total) {
      if (k->e->kind == ExprKind::Var) {  // (a lazy i1 slot of any rank: a prefix of its flat lanes)
        if (const int64_t* l = lazy_of(c, k->e->slot)) {
          m.prefix = *l;
          return m;
        }
      } else if (t.shape.size() == 1 && !k->s && !k->fused && prefix_of(*k, m.prefix)) {
        return m;
      }
    }
    m.v = &eval(*k);
    return m;
  }
  const Value* mask_value(MaskArg& m) {
    if (m.node && !m.v) m.v = &eval(*m.node);
    return m.v;
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
    MaskArg m = mask_arg(n.kids[1], n.numel);
    const Value* o = n.kids[2] ? &operand(*n.kids[2], e.type.elem) : nullptr;
    int64_t base;
    if (range(a, base)) {
      if (w)
        if (const void* p = load_range_view(c, e, a.ptr->buffer, base, m.v, o, m.prefix)) {
          w->p = p;
          w->buffer = a.ptr->buffer;
          return nullptr;
        }
      if (load_range(out, c, e, a.ptr->buffer, base, m.v, o, m.prefix)) return &out;
    }
    const Value& pt = materialize(*n.kids[0], a);
    load_into(out, c, e, pt, mask_value(m), o);
    return &out;
  }

  // The value of store statement `s` (node `v`): a literal is stored as the pointer's element type.
  const Value& stored_value(const Stmt& s, const TNode& v) {
    const Expr& ve = *s.args[1];
    if (ve.kind != ExprKind::Const) return eval(v);
    Value& cv = val(v);
    write_value(cv, Type{s.args[0]->type.elem, false, {}}, Sv{const_raw(s.args[0]->type.elem, ve), -1});
    return cv;
  }

  // The outer pointer `P` into `r`: its operands evaluated as binary() evaluates them (the pointer,
  // then the offsets as i64), then its rows and columns.
  // False (nested form with i32 offsets only) when some X[i] + Y[j] wraps in i32: the caller then
  // takes the tile path (evaluating the pointer's operands again: they hold no load).
  bool fill(RowPtr& r, const TNode& P) {
    const Expr& e = *P.e;
    const bool pf = e.args[0]->type.ptr;
    const Value& p = eval(*P.kids[pf ? 0 : 1]);
    if (P.affine) {  // nested_outer(): `p + (X + Y)`, rows p + X and columns Y
      const TNode& O = *P.kids[pf ? 1 : 0];
      const Value& x = operand(*O.kids[0], Scalar::I64);
      const Value& y = operand(*O.kids[1], Scalar::I64);
      const bool xr = rows_first(*O.e);
      const Value& rv = xr ? x : y;
      const Value& cv = xr ? y : x;
      const int64_t p0 = data<int64_t>(p)[0];
      const int64_t* rd = data<int64_t>(rv);
      if (O.e->type.elem == Scalar::I32) {  // the i32 values' sums, in i64: any outside i32 wraps
        const int64_t* cd = data<int64_t>(cv);
        const auto [rlo, rhi] = std::minmax_element(rd, rd + numel(rv));
        const auto [clo, chi] = std::minmax_element(cd, cd + numel(cv));
        if (*rlo + *clo < INT32_MIN || *rhi + *chi > INT32_MAX) return false;
      }
      r.rows.resize(static_cast<size_t>(numel(rv)));
      for (size_t i = 0; i < r.rows.size(); ++i) r.rows[i] = wadd(p0, rd[i]);
      r.cols.assign(data<int64_t>(cv), data<int64_t>(cv) + numel(cv));
      r.buffer = p.buffer;
      r.set_consec();
      return true;
    }
    const Value& off = operand(*P.kids[pf ? 1 : 0], Scalar::I64);
    const bool rows_are_p = rows_first(e) == pf;
    const Value& rv = rows_are_p ? p : off;
    const Value& cv = rows_are_p ? off : p;
    r.rows.assign(data<int64_t>(rv), data<int64_t>(rv) + numel(rv));
    r.cols.assign(data<int64_t>(cv), data<int64_t>(cv) + numel(cv));
    r.buffer = p.buffer;
    r.set_consec();
    return true;
  }
  // The RowPtr of the pointer operand `P` of a load or store (filled when P is an outer pointer).
  // Null when fill() finds i32 offsets that wrap.
  RowPtr* rowptr(const TNode& P) {
    RowPtr& r = c.rps[static_cast<size_t>(P.rp)];
    if (P.e->kind != ExprKind::Var && !fill(r, P)) return nullptr;
    return &r;
  }
  // The load `n` through a RowPtr: row ranges, else through the pointer tile made from it.
  const Value& rowptr_load(const TNode& n) {
    const Expr& e = *n.e;
    Value& out = val(n);
    const TNode& P = *n.kids[0];
    const RowPtr* rp = rowptr(P);
    if (!rp) return *affine_load(n);
    const RowPtr& r = *rp;
    const TNode* M = n.kids[1];
    const Value* m = nullptr;
    OuterMask om;
    if (M && outer_mask(*M, r)) {  // `X & Y` of a column and a row: their values, not the tile
      om.rows = data<uint8_t>(eval(*M->kids[0]));
      om.cols = data<uint8_t>(eval(*M->kids[1]));
    } else {
      m = rows_mask(M);
    }
    const Value* o = n.kids[2] ? &operand(*n.kids[2], e.type.elem) : nullptr;
    if (load_rowptr(out, c, e, r, m, o, om.rows ? &om : nullptr)) return out;
    // the mask made for the pointer tile's path: a lazy one, or an outer one (its operands evaluated
    // again: they hold no load, so nothing reports twice)
    if (M && !m) m = &eval(*M);
    Value& pt = val(P);
    r.make(pt, P.e->type);
    load_into(out, c, e, pt, m, o);
    return out;
  }
  // Whether mask node `M` is `X & Y` (or `and`) of i1 operands shaped [R, 1] and [1, C] for a
  // RowPtr of R rows and C columns (the operands' values are then the mask's rows and columns), with
  // no load in it (the tile path evaluates it again).
  bool outer_mask(const TNode& M, const RowPtr& r) {
    const Expr& e = *M.e;
    if (!c.views || M.s || M.fused || M.loads || e.kind != ExprKind::Binary || (e.bop != BinOp::And && e.bop != BinOp::LAnd) || !M.kids[0] || !M.kids[1])
      return false;
    const Type& a = e.args[0]->type;
    const Type& b = e.args[1]->type;
    const int64_t R = static_cast<int64_t>(r.rows.size()), C = static_cast<int64_t>(r.cols.size());
    return !a.ptr && !b.ptr && a.elem == Scalar::I1 && b.elem == Scalar::I1 && a.shape == Shape{R, 1} && b.shape == Shape{1, C} &&
           e.type.shape == Shape{R, C};
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
          where_ptr_into(out, cond, a, b, e.type);
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
        if (&x != &out) {  // the elements copied into this node's tile
          prep(out, e.type);
          with_storage(storage_of(x.type.elem, x.type.ptr), [&](auto tag) {
            using T = decltype(tag);
            std::copy_n(data<T>(x), numel(x), data<T>(out));
            return 0;
          });
          out.buffer = x.buffer;
          return out;
        }
        XShape xs(e.type.shape.size());
        for (size_t i = 0; i < e.type.shape.size(); ++i) xs[i] = static_cast<size_t>(e.type.shape[i]);
        std::visit([&](auto& a) { a.reshape(xs); }, out.data);
        out.type = e.type;
        return out;
      }
      case ExprKind::Trans: {
        const Value& x = eval(*n.kids[0]);
        out = trans_op(x, e.ints);
        return out;
      }
      case ExprKind::Broadcast: {
        const Value& x = eval(*n.kids[0]);
        out = broadcast_op(x, e.type.shape);
        return out;
      }
      case ExprKind::Load: {
        if (n.kids[0]->rp >= 0 && c.rps) return rowptr_load(n);  // before affine: a nested_outer() pointer is both
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
        dot_into(out, a, b, acc, e.type, e.tf32);
        return out;
      }
      case ExprKind::Reduce: {
        if (!e.fns.empty()) {
          std::vector<Value> xs;
          for (const auto& k : n.kids) xs.push_back(eval(*k));
          out = combine_n_op(c, e, xs);
          return out;
        }
        const Value& x = eval(*n.kids[0]);
        if (e.fn) out = combine_op(c, e, x);
        else reduce_into(out, e.rop, x, static_cast<int>(e.ints[0]), e.type);
        return out;
      }
      case ExprKind::Scan:
        if (!e.fns.empty()) {
          std::vector<Value> xs;
          for (const auto& k : n.kids) xs.push_back(eval(*k));
          out = combine_n_op(c, e, xs);
          return out;
        }
        out = e.fn ? combine_op(c, e, eval(*n.kids[0])) : scan_op(e.sop, eval(*n.kids[0]), static_cast<int>(e.ints[0]), e.reverse, e.type);
        return out;
      case ExprKind::Bitcast:
        out = bitcast_op(eval(*n.kids[0]), e.dtype);
        return out;
      case ExprKind::IntToPtr:
        out = int_to_ptr_op(c, e, eval(*n.kids[0]));
        return out;
      case ExprKind::PtrToInt:
        out = ptr_to_int_op(c, eval(*n.kids[0]));
        return out;
      case ExprKind::Const:
      case ExprKind::ProgramId:
      case ExprKind::NumPrograms:
      case ExprKind::CombineArg:
      case ExprKind::Swizzle2d:
      case ExprKind::Machine:
      case ExprKind::Gather:
      case ExprKind::Histogram: break;
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
  const RowPtr* rp = t[0]->rp >= 0 && c.rps ? T.rowptr(*t[0]) : nullptr;
  if (rp) {  // through a RowPtr: row ranges, else through the pointer tile made from it
    const RowPtr& r = *rp;
    const Value* v = &T.stored_value(s, *t[1]);
    const Value* m = T.rows_mask(t[2]);
    if (store_rowptr(c, r, *v, m)) return;
    if (t[2] && !m) m = &T.eval(*t[2]);  // the lazy mask made for the pointer tile's path
    Value& pt = T.val(*t[0]);
    r.make(pt, t[0]->e->type);
    store_op(c, pt, *v, m);
    return;
  }
  bool aff = t[0]->affine;
  Tiles::Affine a{};
  const Value* p = nullptr;
  if (aff) a = T.affine(*t[0]);
  else p = &T.eval(*t[0]);
  const Expr& ve = *s.args[1];
  if (aff && t[1]->direct && c.fast && t[1]->direct->numel == a.n) {
    // The value's operands, then the mask (the order of the tile path); the tree itself cannot
    // fault, so it runs last: straight into the buffer when the store is a range, else into its tile.
    const Fused& f = *t[1]->direct;
    std::array<const Value*, 16> lv;
    std::array<const void*, 16> raw;
    T.leaves(f, lv.data(), raw.data(), a.ptr->buffer);  // a view of the stored buffer is copied first
    Tiles::MaskArg m = T.mask_arg(t[2], a.n);
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
    if (rg && store_range_direct(c, a.ptr->buffer, base, a.n, ve.type.elem, m.v, produce, &run, m.prefix)) return;
    Value& v = T.val(*t[1]);
    run_fused(f, lv.data(), v, ve.type, raw.data());
    if (rg && store_range(c, a.ptr->buffer, base, a.n, v, m.v, m.prefix)) return;
    const Value& pt = T.materialize(*t[0], a);
    store_op(c, pt, v, T.mask_value(m));
    return;
  }
  const Value* v = &T.stored_value(s, *t[1]);
  if (aff) {
    Tiles::MaskArg m = T.mask_arg(t[2], a.n);
    int64_t base;
    if (T.range(a, base) && store_range(c, a.ptr->buffer, base, a.n, *v, m.v, m.prefix)) return;
    p = &T.materialize(*t[0], a);
    store_op(c, *p, *v, T.mask_value(m));
    return;
  }
  const Value* m = t[2] ? &T.eval(*t[2]) : nullptr;
  store_op(c, *p, *v, m);
}

Value atomic_tnode(Ctx& c, const Stmt& s, const std::array<const TNode*, 3>& t) {
  Tiles T{c};
  const RowPtr* r = T.rowptr(*t[0]);
  const Value* p = r ? nullptr : &T.eval(*t[0]);  // i32 offsets that wrap: the pointer tile
  const Value& a1 = T.eval(*t[1]);
  // (through a RowPtr, a lazy mask of all ones is no mask; the atomics' mask is their third operand)
  const Value* a2 = r && s.aop != AtomicOp::Cas ? T.rows_mask(t[2]) : t[2] ? &T.eval(*t[2]) : nullptr;
  return r ? atomic_rowptr(c, s, *r, t[0]->e->type, a1, a2) : atomic_op(c, s, *p, a1, a2);
}

void assign_tnode(Ctx& c, int slot, const TNode& n) {
  if (c.rps) {
    const int rp = c.sp->slot_rp[static_cast<size_t>(slot)];
    if (rp >= 0) {  // a RowPtr slot (row_slots(): assigned only outer pointers and steps)
      Tiles T{c};
      RowPtr& r = c.rps[static_cast<size_t>(rp)];
      if (n.outer) {
        T.fill(r, n);
      } else {  // p +/- s: the rows moved by s
        const TNode& s = *n.kids[n.e->args[0]->type.ptr ? 1 : 0];
        r.add(n.e->bop, T.int_operand(s, Scalar::I64));
      }
      c.invalidate(slot);
      return;
    }
  }
  if (c.views) {  // consecutive offsets and prefix masks held as their first element / length
    const Type& st = c.f->kernel->slot_types[static_cast<size_t>(slot)];
    int64_t v;
    if (n.consec && st == n.e->type && Tiles{c}.iota(n, st.elem, v)) {
      write_lazy(c, slot, st, v);
      return;
    }
    if (n.e->kind == ExprKind::Binary && !n.fused && st == n.e->type && st.elem == Scalar::I1 && st.shape.size() == 1 && Tiles{c}.prefix_of(n, v)) {
      write_lazy(c, slot, st, v);
      return;
    }
    if (st == n.e->type && st.elem == Scalar::I1 && st.shape.size() == 2 && Tiles{c}.outer_prefix(n, v)) {
      write_lazy(c, slot, st, v);
      return;
    }
  }
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
  n->numel = e.type.numel();
  n->loads = has_load(e);
  if (e.kind != ExprKind::Var && scalar_form(e)) {
    n->s = compile_scalar(e);
    return n;
  }
  if (e.kind == ExprKind::Var) {
    n->consec = consecutive_expr(e, consec);
    return n;
  }
  size_t nk = e.args.size();
  // Shape operands of Full / Reshape / Broadcast and a permutation's order are resolved constants (Expr::ints), not evaluated.
  if (e.kind == ExprKind::Reshape || e.kind == ExprKind::Broadcast || e.kind == ExprKind::Trans) nk = 1;
  n->kids.assign(e.args.size(), nullptr);
  for (size_t i = 0; i < nk; ++i)
    if (e.args[i] && (e.kind != ExprKind::Full || i + 1 == e.args.size())) n->kids[i] = tile(*e.args[i]);
  n->fused = fuse_tree(fused, *n);
  n->affine = affine_ptr(*n);
  n->outer = outer_ptr(*n) || nested_outer(*n);
  if (e.kind == ExprKind::Load && n->kids[0]->outer) tnodes[static_cast<size_t>(n->kids[0]->idx)].rp = nrp++;
  n->consec = consecutive_expr(e, consec);
  return n;
}

void RowPtr::set_consec() {
  uint64_t c0 = static_cast<uint64_t>(cols[0]), bad = 0;
  for (size_t j = 0; j < cols.size(); ++j) bad |= static_cast<uint64_t>(cols[j]) ^ (c0 + j);
  consec = bad == 0;
  bases.resize(rows.size());
  if (consec)
    for (size_t i = 0; i < rows.size(); ++i) bases[i] = wadd(rows[i], cols[0]);
}

void RowPtr::add(BinOp op, int64_t s) {
  for (int64_t& r : rows) r = op == BinOp::Sub ? wsub(r, s) : wadd(r, s);
  if (consec)
    for (size_t i = 0; i < rows.size(); ++i) bases[i] = wadd(rows[i], cols[0]);
}

void RowPtr::make(Value& out, const Type& t) const {
  prep(out, t);
  out.buffer = buffer;
  int64_t* d = data<int64_t>(out);
  const size_t C = cols.size();
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < C; ++j) d[i * C + j] = wadd(rows[i], cols[j]);
}

namespace {
// Reads of slot `slot` in the tile nodes under `n` that a RowPtr serves: the pointer of a load.
int rowptr_reads(const TNode* n, int slot) {
  if (!n) return 0;
  int r = 0;
  if (n->e->kind == ExprKind::Load && n->kids[0] && n->kids[0]->e->kind == ExprKind::Var && n->kids[0]->e->slot == slot) ++r;
  for (const TNode* k : n->kids) r += rowptr_reads(k, slot);
  return r;
}
int expr_reads(const Expr* e, int slot) {
  if (!e) return 0;
  int r = e->kind == ExprKind::Var && e->slot == slot ? 1 : 0;
  for (const ExprP& a : e->args) r += expr_reads(a.get(), slot);
  return r;
}
}  // namespace

void ScalarProgram::row_slots(const Kernel& k) {
  const size_t ns = k.slot_types.size();
  slot_rp.assign(ns, -1);
  for (size_t u = 0; u < ns; ++u) {
    const Type& t = k.slot_types[u];
    if (!t.ptr || t.shape.size() != 2) continue;
    const int sl = static_cast<int>(u);
    // The first statement that mentions the slot, in execution order, must be an outer assignment
    // to it in the top-level block; every read and assignment is then one of the served forms.
    const Stmt* first = nullptr;
    std::function<void(const std::vector<StmtP>&)> find = [&](const std::vector<StmtP>& body) {
      for (const StmtP& s : body) {
        if (first) return;
        bool named = false;
        for (const ExprP& a : s->args) named |= expr_reads(a.get(), sl) > 0;
        for (int x : s->slots) named |= x == sl;
        if (named) {
          first = s.get();
          return;
        }
        find(s->body);
        find(s->orelse);
      }
    };
    find(k.body);
    if (!first || first->kind != StmtKind::Assign) continue;
    bool top = false;
    for (const StmtP& s : k.body) top |= s.get() == first;
    const TNode* fr = troots[static_cast<size_t>(first->id)][0];
    if (!top || !fr || !fr->outer || outer32(*fr) || !(fr->e->type == t)) continue;
    bool ok = true;
    for (const Stmt* s : k.stmts) {
      int all = 0, served = 0;
      for (const ExprP& a : s->args) all += expr_reads(a.get(), sl);
      bool assigns = false;
      for (int x : s->slots) assigns |= x == sl;
      const auto& tr = troots[static_cast<size_t>(s->id)];
      if (assigns) {
        const TNode* r = s->kind == StmtKind::Assign && s->targets.size() == 1 ? tr[0] : nullptr;
        if (!r || !(r->e->type == t) || !((r->outer && !outer32(*r)) || step_of(*r, sl))) ok = false;
        else served = rowptr_reads(r, sl) + (r->outer ? 0 : 1);
      } else if (s->kind == StmtKind::Assign && tr[0]) {
        served = rowptr_reads(tr[0], sl);
      } else if (s->kind == StmtKind::Store && tr[0]) {
        served = (tr[0]->e->kind == ExprKind::Var && tr[0]->e->slot == sl ? 1 : 0) + rowptr_reads(tr[0], sl) + rowptr_reads(tr[1], sl) +
                 rowptr_reads(tr[2], sl);
      }
      if (served != all) ok = false;
    }
    if (ok) slot_rp[u] = nrp++;
  }
  // The variables of those slots share the slot's RowPtr.
  for (TNode& n : tnodes)
    if (n.e->kind == ExprKind::Var && n.e->slot >= 0 && slot_rp[static_cast<size_t>(n.e->slot)] >= 0) n.rp = slot_rp[static_cast<size_t>(n.e->slot)];
}

}  // namespace dtsim::exec
