// Block pointers (tl.make_block_ptr, tl.advance, and tl.load / tl.store of them with boundary_check
// and padding_option) and tensor descriptors made in a kernel (tl.make_tensor_descriptor and its
// load / store) on dtsim's own .py reader. Both are compile-time values (Val of kind Block) holding
// their parts: the base pointer, the extents, the strides and (a block pointer) the offsets; an
// access becomes the pointer tile base + sum over axes of (offset + arange) * stride, masked where
// the access checks bounds, and goes through tl.load / tl.store like any pointer tile (so the
// sanitizer, unsigned elements and the executors see nothing new). Triton's types: extents and
// strides i64 (a descriptor's extents i32), offsets i32.
//
// A name holding a block pointer that a loop or branch rebinds (`p = tl.advance(p, (0, BK))`) keeps
// each part in an IR variable of its own (frame names NAME.base, NAME.shape0, ..., NAME.off0), so the
// loop carries the parts as it carries any scalar.
#include <algorithm>
#include <cmath>
#include <string>

#include "ir/Diag.h"
#include "ir/Verify.h"
#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

bool is_descriptor(const Val& v) { return v.k == VK::Block && v.text == "tensor_descriptor"; }
int rank_of(const Val& v) { return static_cast<int>(v.t.shape.size()); }

// The name of part k of a block value of rank r: base, shape0.., stride0.., off0.. .
std::string part_name(size_t k, int r) {
  size_t rr = static_cast<size_t>(r);
  if (k == 0) return "base";
  if (k <= rr) return "shape" + std::to_string(k - 1);
  if (k <= 2 * rr) return "stride" + std::to_string(k - 1 - rr);
  return "off" + std::to_string(k - 1 - 2 * rr);
}

// The integer type Triton gives part k (none for the base).
Scalar part_type(const Val& b, size_t k) {
  size_t r = static_cast<size_t>(rank_of(b));
  if (k >= 1 && k <= r) return is_descriptor(b) ? Scalar::I32 : Scalar::I64;
  if (k <= 2 * r) return Scalar::I64;
  return Scalar::I32;
}

}  // namespace

// A part given to make_block_ptr / advance / make_tensor_descriptor: a compile-time int stays one;
// a scalar integer tensor is converted to `to` and, unless it is a variable already, held in one
// (an access reads it twice: the pointer and the mask).
static Val block_part(Lowerer& L, const Val& v, Scalar to, const std::string& what, SourceLoc loc) {
  if (v.k == VK::Int || v.k == VK::Bool) return Val::of_int(v.i);
  if (v.k != VK::Tensor || !v.t.is_scalar() || v.t.ptr || !is_int(v.t.elem))
    user_error(loc, what + " must be integers (compile-time ints or scalar integer tensors), got " + py_type_name(v));
  ExprP e = L.ir(v, loc);
  if (e->type.elem != to) e = typed(make_cast(e, to, loc));
  if (e->kind == ExprKind::Var || e->kind == ExprKind::Const) return L.tensor(e);
  return L.materialize(L.tensor(e), "block_" + what.substr(0, what.find(' ')), loc);
}

// A part as an i64 IR expression.
static ExprP part_i64(Lowerer& L, const Val& v, SourceLoc loc) {
  ExprP e = L.ir(v, loc);
  if (e->type.elem != Scalar::I64) e = typed(make_cast(e, Scalar::I64, loc));
  return e;
}

// A tuple (or list) argument of `n` items (n < 0: any), as Vals.
static std::vector<Val> items_of(const Val& v, int n, const std::string& what, SourceLoc loc) {
  std::vector<Val> out = v.k == VK::Tuple ? v.items : std::vector<Val>{v};
  if (n >= 0 && static_cast<int>(out.size()) != n)
    user_error(loc, what + " needs " + std::to_string(n) + " entries (one per axis), got " + std::to_string(out.size()));
  return out;
}

// The pointer tile of an access to block value `b` at offsets `offs` (one per axis) and, where
// `check` names axes, the mask of the lanes inside [0, extent) on those axes.
static std::pair<Val, ExprP> block_access(Lowerer& L, const Val& b, const std::vector<Val>& offs, const std::vector<int>& check,
                                          SourceLoc loc) {
  const int r = rank_of(b);
  const Shape& block = b.t.shape;
  auto to_block = [&](ExprP e) {  // broadcast to the block's shape (fresh extent nodes per use)
    if (e->type.shape == block) return e;
    std::vector<ExprP> dims;
    for (int64_t d : block) dims.push_back(typed(make_const_int(d, loc)));
    return typed(make_broadcast(e, dims, loc));
  };
  ExprP off_sum, mask;
  for (int a = 0; a < r; ++a) {
    const size_t ua = static_cast<size_t>(a);
    auto idx = [&] {  // offset + arange(0, block[a]) in i64, laid along axis a
      ExprP ar = typed(make_cast(arange_along(block[ua], a, r, loc), Scalar::I64, loc));
      return typed(make_binary(BinOp::Add, part_i64(L, offs[ua], loc), ar, loc));
    };
    const Val& stride = b.items[1 + static_cast<size_t>(r) + ua];
    ExprP term = idx();
    if (!(stride.k == VK::Int && stride.i == 1)) term = typed(make_binary(BinOp::Mul, term, part_i64(L, stride, loc), loc));
    off_sum = off_sum ? typed(make_binary(BinOp::Add, off_sum, term, loc)) : term;
    if (std::find(check.begin(), check.end(), a) == check.end()) continue;
    ExprP i = idx();
    ExprP lo = typed(make_binary(BinOp::Ge, i, typed(make_cast(typed(make_const_int(0, loc)), Scalar::I64, loc)), loc));
    ExprP hi = typed(make_binary(BinOp::Lt, clone_expr(i), part_i64(L, b.items[1 + ua], loc), loc));
    ExprP in = typed(make_binary(BinOp::And, lo, hi, loc));
    mask = mask ? typed(make_binary(BinOp::And, mask, in, loc)) : in;
  }
  ExprP p = typed(make_binary(BinOp::Add, to_block(L.ir(b.items[0], loc)), to_block(off_sum), loc));
  if (mask) mask = to_block(mask);
  Val pv = L.tensor(p, b.bufs);
  pv.uns = b.uns;
  return {pv, mask};
}

// boundary_check=(0, 1): the axes, each once and within the rank.
static std::vector<int> checked_axes(const Val* bc, int rank, const std::string& fname, SourceLoc loc) {
  std::vector<int> out;
  if (!bc) return out;
  for (const Val& x : items_of(*bc, -1, fname + "() boundary_check", loc)) {
    if (x.k != VK::Int) user_error(loc, fname + "() boundary_check must be compile-time axis numbers, got " + py_type_name(x));
    if (x.i < 0 || x.i >= rank) user_error(loc, fname + "() boundary_check axis " + std::to_string(x.i) + " of a rank-" + std::to_string(rank) + " block");
    if (std::find(out.begin(), out.end(), static_cast<int>(x.i)) != out.end())
      user_error(loc, fname + "() boundary_check names axis " + std::to_string(x.i) + " twice");
    out.push_back(static_cast<int>(x.i));
  }
  return out;
}

// padding_option "" / "zero" / "nan": the value of the lanes outside (nullptr: Triton leaves them undefined).
static const Val* padding_value(const std::string& pad, const Val& b, Val& store, const std::string& fname, SourceLoc loc) {
  if (pad.empty()) return nullptr;
  if (pad == "zero") {
    store = Val::of_int(0);
    return &store;
  }
  if (pad == "nan") {
    if (!is_float(b.t.elem)) user_error(loc, fname + "(): padding_option=\"nan\" needs floating-point elements, the block holds " + std::string(scalar_name(b.t.elem)));
    store = Val::of_float(std::nan(""));
    return &store;
  }
  user_error(loc, fname + "(): padding_option must be \"\", \"zero\" or \"nan\", got '" + pad + "'");
}

// tl.load / tl.store of a pointer tile through the ordinary builtins.
static Val plain_access(Lowerer& L, bool store, const Val& ptr, const ExprP& mask, const Val* other, const Val* value,
                        const CallArgs& from) {
  CallArgs c;
  c.fname = store ? "tl.store" : "tl.load";
  c.loc = from.loc;
  auto add = [&](const Val& v) {
    c.pos.push_back(v);
    c.pos_loc.push_back(from.loc);
  };
  add(ptr);
  if (value) add(*value);
  add(mask ? L.tensor(mask) : Val::none());
  if (!store) add(other ? *other : Val::none());
  return L.call_builtin(c.fname, c);
}

bool Lowerer::call_block(const std::string& name, CallArgs& a, Val& out) {
  const bool first_block = !a.pos.empty() && a.pos[0].k == VK::Block;
  const Val* p0 = nullptr;
  if (!first_block)
    for (const auto& kw : a.kw)
      if ((kw.first == "pointer" || kw.first == "desc") && kw.second.k == VK::Block) p0 = &kw.second;
  if (first_block) p0 = &a.pos[0];
  SourceLoc loc = a.loc;
  if (name == "tl.make_block_ptr" || name == "tl.make_tensor_descriptor") {
    const bool desc = name == "tl.make_tensor_descriptor";
    const Val* base = a.get(0, "base");
    if (!base) user_error(loc, name + "() missing argument 'base'");
    if (base->k != VK::Tensor || !base->t.ptr || !base->t.is_scalar())
      user_error(a.loc_of(0, "base"), name + "() base must be a scalar pointer, got " + py_type_name(*base));
    const Val* shape = a.get(1, "shape");
    const Val* strides = a.get(2, "strides");
    const Val* offsets = desc ? nullptr : a.get(3, "offsets");
    const Val* block = a.get(desc ? 3 : 4, "block_shape");
    const Val* order = desc ? nullptr : a.get(5, "order");
    const Val* pad = desc ? a.get(4, "padding_option") : nullptr;
    if (!shape || !strides || !block || (!desc && (!offsets || !order)))
      user_error(loc, name + "() needs base, shape, strides, " + std::string(desc ? "" : "offsets, ") + "block_shape" + (desc ? "" : " and order"));
    a.done();
    std::vector<Val> bs = items_of(*block, -1, name + "() block_shape", a.loc_of(desc ? 3 : 4, "block_shape"));
    const int r = static_cast<int>(bs.size());
    if (r < 1 || r > (desc ? 5 : kMaxRank)) user_error(loc, name + "(): a block of " + std::to_string(r) + " axes");
    Val b;
    b.k = VK::Block;
    b.text = desc ? "tensor_descriptor" : "block_ptr";
    b.t = Type{base->t.elem, true, {}};
    b.uns = base->uns;
    b.bufs = base->bufs;
    for (const Val& x : bs) {
      if (x.k != VK::Int || x.i < 1) user_error(a.loc_of(desc ? 3 : 4, "block_shape"), name + "() block_shape must be positive compile-time ints, got " + py_repr(x));
      b.t.shape.push_back(x.i);
    }
    if (static_cast<int64_t>(shape_numel(b.t.shape)) > kMaxTileElems)
      user_error(loc, name + "(): a block of " + shape_str(b.t.shape) + " passes 2^20 elements");
    b.items.push_back(*base);
    std::vector<Val> sh = items_of(*shape, r, name + "() shape", a.loc_of(1, "shape"));
    std::vector<Val> st = items_of(*strides, r, name + "() strides", a.loc_of(2, "strides"));
    for (const Val& x : sh) b.items.push_back(block_part(*this, x, desc ? Scalar::I32 : Scalar::I64, "shape entries", a.loc_of(1, "shape")));
    for (const Val& x : st) b.items.push_back(block_part(*this, x, Scalar::I64, "strides entries", a.loc_of(2, "strides")));
    if (desc) {
      const Val& last = b.items.back();
      if (!(last.k == VK::Int && last.i == 1))
        user_error(a.loc_of(2, "strides"), "tl.make_tensor_descriptor(): the last stride must be the compile-time 1, got " + py_repr(last));
      std::string p = pad && pad->k != VK::None ? (pad->k == VK::Str ? pad->text : "?") : "zero";
      if (p != "zero" && p != "nan") user_error(a.loc_of(4, "padding_option"), "tl.make_tensor_descriptor(): padding_option must be \"zero\" or \"nan\", got " + py_repr(*pad));
      if (p == "nan" && !is_float(b.t.elem)) user_error(a.loc_of(4, "padding_option"), "tl.make_tensor_descriptor(): padding_option=\"nan\" needs floating-point elements");
      b.i = p == "nan";
    } else {
      for (const Val& x : items_of(*offsets, r, name + "() offsets", a.loc_of(3, "offsets")))
        b.items.push_back(block_part(*this, x, Scalar::I32, "offsets entries", a.loc_of(3, "offsets")));
      std::vector<Val> ord = items_of(*order, r, name + "() order", a.loc_of(5, "order"));
      for (const Val& x : ord)
        if (x.k != VK::Int || x.i < 0 || x.i >= r) user_error(a.loc_of(5, "order"), name + "() order must be a permutation of the axes, got " + py_repr(*order));
    }
    out = b;
    return true;
  }
  if (name == "tl.advance") {
    if (!p0 || is_descriptor(*p0)) {
      const Val* v = a.get(0, "base");
      user_error(a.loc_of(0, "base"), "tl.advance() needs a block pointer (tl.make_block_ptr), got " + (v ? py_type_name(*v) : std::string("nothing")));
    }
    Val b = *a.get(0, "base");
    const Val* offs = a.get(1, "offsets");
    if (!offs) user_error(loc, "tl.advance() missing argument 'offsets'");
    a.done();
    const int r = rank_of(b);
    std::vector<Val> d = items_of(*offs, r, "tl.advance() offsets", a.loc_of(1, "offsets"));
    for (int x = 0; x < r; ++x) {
      Val& o = b.items[1 + 2 * static_cast<size_t>(r) + static_cast<size_t>(x)];
      Val step = block_part(*this, d[static_cast<size_t>(x)], Scalar::I32, "tl.advance() offsets", a.loc_of(1, "offsets"));
      if (o.k == VK::Int && step.k == VK::Int) {
        o = Val::of_int(o.i + step.i);
      } else {
        ExprP e = typed(make_binary(BinOp::Add, ir(o, loc), ir(step, loc), loc));
        if (e->type.elem != Scalar::I32) e = typed(make_cast(e, Scalar::I32, loc));
        o = tensor(e);
      }
    }
    out = b;
    return true;
  }
  if (!p0) {
    if (name == "tl.load_tensor_descriptor" || name == "tl.store_tensor_descriptor")
      user_error(loc, name + "() needs a tensor descriptor (tl.make_tensor_descriptor)");
    return false;
  }
  const Val b = *p0;
  if (name == "tl.load" || name == "tl.store") {
    const bool store = name == "tl.store";
    if (is_descriptor(b)) user_error(loc, name + "() of a tensor descriptor: use desc." + (store ? "store(offsets, value)" : "load(offsets)"));
    a.get(0, "pointer");
    const Val* value = store ? a.get(1, "value") : nullptr;
    if (store && !value) user_error(loc, "tl.store() missing argument 'value'");
    const size_t mi = store ? 2 : 1;
    const Val* mask = a.get(mi, "mask");
    if (mask && mask->k != VK::None) user_error(a.loc_of(mi, "mask"), name + "() of a block pointer takes no mask (use boundary_check)");
    const Val* other = store ? nullptr : a.get(2, "other");
    if (other && other->k != VK::None) user_error(a.loc_of(2, "other"), "tl.load() of a block pointer takes no other (use padding_option)");
    const Val* bc = a.get(3, "boundary_check");
    const Val* pad = store ? nullptr : a.get(4, "padding_option");
    a.get(1000, "cache_modifier");
    a.get(1000, "eviction_policy");
    if (!store) a.get(1000, "volatile");
    a.done();
    const int r = rank_of(b);
    std::vector<int> check = checked_axes(bc && bc->k != VK::None ? bc : nullptr, r, name, a.loc_of(3, "boundary_check"));
    std::vector<Val> offs(b.items.begin() + 1 + 2 * r, b.items.end());
    auto [ptr, m] = block_access(*this, b, offs, check, loc);
    if (store) {
      Val v = *value;
      if (v.k == VK::Tensor && v.t.shape != b.t.shape) {
        if (!broadcast_shapes(v.t.shape, b.t.shape) || *broadcast_shapes(v.t.shape, b.t.shape) != b.t.shape)
          user_error(a.loc_of(1, "value"), "tl.store(): a value of " + py_type_name(v) + " into a block of " + shape_str(b.t.shape));
      }
      out = plain_access(*this, true, ptr, m, nullptr, &v, a);
      return true;
    }
    std::string p = pad && pad->k != VK::None ? (pad->k == VK::Str ? pad->text : "?") : "";
    Val hold;
    const Val* oth = m ? padding_value(p, b, hold, name, a.loc_of(4, "padding_option")) : nullptr;
    out = plain_access(*this, false, ptr, m, oth, nullptr, a);
    return true;
  }
  if (name == "tl.load_tensor_descriptor" || name == "tl.store_tensor_descriptor") {
    const bool store = name == "tl.store_tensor_descriptor";
    if (!is_descriptor(b)) user_error(loc, name + "() needs a tensor descriptor, got a block pointer");
    a.get(0, "desc");
    const Val* offs = a.get(1, "offsets");
    const Val* value = store ? a.get(2, "value") : nullptr;
    if (!offs || (store && !value)) user_error(loc, std::string(store ? "desc.store() needs offsets and a value" : "desc.load() needs offsets"));
    a.get(1000, "cache_modifier");
    a.get(1000, "eviction_policy");
    a.done();
    const int r = rank_of(b);
    std::vector<Val> o;
    for (const Val& x : items_of(*offs, r, "the descriptor's offsets", a.loc_of(1, "offsets")))
      o.push_back(block_part(*this, x, Scalar::I32, "offsets entries", a.loc_of(1, "offsets")));
    std::vector<int> all;
    for (int x = 0; x < r; ++x) all.push_back(x);
    auto [ptr, m] = block_access(*this, b, o, all, loc);
    if (store) {
      Val v = *value;
      if (v.k != VK::Tensor || v.t.shape != b.t.shape)
        user_error(a.loc_of(2, "value"), "desc.store(): the value must be a tensor of the block's shape " + shape_str(b.t.shape) + ", got " + py_type_name(v));
      out = plain_access(*this, true, ptr, m, nullptr, &v, a);
      return true;
    }
    Val hold = b.i ? Val::of_float(std::nan("")) : Val::of_int(0);
    out = plain_access(*this, false, ptr, m, &hold, nullptr, a);
    return true;
  }
  return false;
}

Val Lowerer::block_attribute(const Val& v, const std::string& attr, SourceLoc loc) {
  const int r = rank_of(v);
  auto part_tuple = [&](size_t first) {
    std::vector<Val> items(v.items.begin() + static_cast<long>(first), v.items.begin() + static_cast<long>(first) + r);
    return Val::tuple(items);
  };
  if (is_descriptor(v)) {
    if (attr == "load" || attr == "store") {
      Val m = Val::builtin(attr == "load" ? "tl.load_tensor_descriptor" : "tl.store_tensor_descriptor");
      m.self = std::make_shared<Val>(v);
      return m;
    }
    if (attr == "shape") return part_tuple(1);
    if (attr == "strides") return part_tuple(1 + static_cast<size_t>(r));
    if (attr == "block_shape") {
      std::vector<Val> items;
      for (int64_t d : v.t.shape) items.push_back(Val::of_int(d));
      return Val::tuple(items);
    }
    if (attr == "dtype") return v.uns ? Val::of_udtype(v.t.elem) : Val::of_dtype(v.t.elem);
    unsupported(loc, "the tensor descriptor attribute ." + attr);
  }
  if (attr == "dtype") {  // pointer<block<elem, shape>>, as Triton types a block pointer
    Val d = Val::of_pointer_dtype(v.t.elem);
    d.t.shape = v.t.shape;
    d.uns = v.uns;
    return d;
  }
  unsupported(loc, "the block pointer attribute ." + attr);
}

void Lowerer::assign_block(const std::string& name, const Val& v, SourceLoc loc) {
  Frame& f = frames_.back();
  if (!in_runtime_block()) {  // straight-line code: the value itself (a loop or branch materializes it first)
    f.vars[name] = v;
    f.bound_at[name] = blocks_.size();
    return;
  }
  Val out = v;
  const int r = rank_of(v);
  for (size_t k = 0; k < v.items.size(); ++k) {
    const std::string key = name + "." + part_name(k, r);
    Val x = v.items[k];
    auto it = f.vars.find(key);
    if (it != f.vars.end() && !it->second.var.empty() && k > 0) {
      // a part held in an IR variable keeps that variable's integer type
      const Type* old = visible_type(it->second.var);
      if (old && old->is_scalar() && (x.number() || (x.k == VK::Tensor && x.t.is_scalar() && x.t.elem != old->elem)))
        x = tensor(typed(make_cast(ir(x, loc), old->elem, loc)));
    }
    assign_name(key, x, loc, std::nullopt, nullptr, name + "_" + part_name(k, r));
    out.items[k] = f.vars[key];
  }
  f.vars[name] = out;
  f.bound_at[name] = blocks_.size();
}

void Lowerer::materialize_block(const std::string& name, SourceLoc loc) {
  Frame& f = frames_.back();
  Val b = f.vars[name];
  const int r = rank_of(b);
  for (size_t k = 0; k < b.items.size(); ++k) {
    Val& x = b.items[k];
    if (!(x.number() || (x.k == VK::Tensor && x.var.empty()))) {
      f.vars[name + "." + part_name(k, r)] = x;
      continue;
    }
    Val typed_part = x;
    if (k > 0) typed_part = tensor(typed(make_cast(ir(x, loc), part_type(b, k), loc)));
    x = materialize(typed_part, name + "_" + part_name(k, r), loc);
    f.vars[name + "." + part_name(k, r)] = x;
  }
  f.vars[name] = b;
}

}  // namespace dtsim::py
