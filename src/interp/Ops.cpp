// Tile operations of the interpreter: allocation, conversion, elementwise unary/binary ops with
// broadcasting, where, reductions, dot and layout ops. Typed loops, no per-element dispatch.
#include <cmath>
#include <cstring>
#include <limits>

#include "interp/Elem.h"

namespace dtsim::exec {

namespace {
XShape to_xshape(const Shape& s) {
  XShape x(s.size());
  for (size_t i = 0; i < s.size(); ++i) x[i] = static_cast<size_t>(s[i]);
  return x;
}

// Narrows every element of `v` (storage T) to type `t` (round_elem): f16/bf16/fp8 rounding, i8/i16
// wraparound; nothing for other types.
template <class T> void round_half(Value& v, Scalar t) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t>) {
    if (!is_narrow(t)) return;
    T* p = data<T>(v);
    int64_t n = numel(v);
    for (int64_t i = 0; i < n; ++i) p[i] = round_elem<T>(p[i], t);
  }
}

}  // namespace

void prep(Value& out, const Type& rt) {
  if (!(out.type == rt && out.defined())) out = alloc(rt);
  out.buffer = -1;
}

namespace {

// out[i] = f(x[i]) for every element.
template <class R, class T, class F> void map1(Value& out, const Value& x, const Type& rt, F f) {
  prep(out, rt);
  const T* px = data<T>(x);
  R* po = data<R>(out);
  int64_t n = numel(out);
  for (int64_t i = 0; i < n; ++i) po[i] = f(px[i]);
}

// out = f(a, b) with broadcasting (out is a tile of its own, never an operand's); fast paths for
// equal shapes and scalars.
template <class R, class T, class F> void map2(Value& out, const Value& a, const Value& b, const Type& rt, F f) {
  prep(out, rt);
  const T* pa = data<T>(a);
  const T* pb = data<T>(b);
  R* po = data<R>(out);
  int64_t n = numel(out), na = numel(a), nb = numel(b);
  if ((na == n || na == 1) && (nb == n || nb == 1)) {
    zip2<T, R>(pa, na == n, pb, nb == n, po, n, f);
    return;
  }
  // Broadcasting: row by row (the last axis), each row one zip2 (an operand's stride along the row
  // is 1, or 0 where it is broadcast), so rows vectorize like whole tiles.
  Dims d = dims_of(rt.shape);
  std::array<Strides, 2> st{bstrides(a.type.shape, rt.shape), bstrides(b.type.shape, rt.shape)};
  brows<2>(d, st, [&](int64_t o, const std::array<int64_t, 2>& base, int64_t W) {
    zip2<T, R>(pa + base[0], st[0][kSlots - 1], pb + base[1], st[1][kSlots - 1], po + o, W, f);
  });
}

// One binary op over whole tiles. The element semantics are Elem.h's (bin_elem, cmp_elem, shared
// with the scalar form); OP is a template argument so each op's loop is its own straight code.
template <BinOp OP, class T> void arith_op(Value& out, const Value& a, const Value& b, const Type& rt, SourceLoc loc) {
  // (flatten: bin_elem's switch folds to OP's case in the loop, which then vectorizes)
  map2<T, T>(out, a, b, rt, [loc](T x, T y) __attribute__((flatten)) { return bin_elem<T>(OP, x, y, loc); });
}
template <BinOp OP, class T> void compare_op(Value& out, const Value& a, const Value& b, const Type& rt) {
  map2<uint8_t, T>(out, a, b, rt, [](T x, T y) { return cmp_elem<T>(OP, x, y); });
}

template <class T> void arith(Value& out, BinOp op, const Value& a, const Value& b, const Type& rt, SourceLoc loc) {
  switch (op) {
#define DT_ARITH(e) \
  case BinOp::e: return arith_op<BinOp::e, T>(out, a, b, rt, loc);
    DT_ARITH(Add) DT_ARITH(Sub) DT_ARITH(Mul) DT_ARITH(Div) DT_ARITH(Min) DT_ARITH(Max) DT_ARITH(MinNum) DT_ARITH(MaxNum) DT_ARITH(FloorDiv)
    DT_ARITH(Cdiv) DT_ARITH(Mod) DT_ARITH(And) DT_ARITH(Or) DT_ARITH(Xor) DT_ARITH(Shl) DT_ARITH(Shr)
    DT_ARITH(Pow) DT_ARITH(Atan2) DT_ARITH(Hypot)
#undef DT_ARITH
#define DT_COMPARE(e) \
  case BinOp::e: return compare_op<BinOp::e, T>(out, a, b, rt);
    DT_COMPARE(Lt) DT_COMPARE(Le) DT_COMPARE(Gt) DT_COMPARE(Ge) DT_COMPARE(Eq) DT_COMPARE(Ne) DT_COMPARE(LAnd) DT_COMPARE(LOr)
#undef DT_COMPARE
  }
  internal_error("Interp", "bad binary op");
}

}  // namespace

// ---- allocation and conversion ----

Value alloc(const Type& t) {
  Value v;
  v.type = t;
  XShape xs = to_xshape(t.shape);
  switch (storage_of(t.elem, t.ptr)) {
    case 0: v.data = Arr<uint8_t>::from_shape(xs); break;
    case 1: v.data = Arr<int32_t>::from_shape(xs); break;
    case 2: v.data = Arr<int64_t>::from_shape(xs); break;
    case 3: v.data = Arr<float>::from_shape(xs); break;
    default: v.data = Arr<double>::from_shape(xs); break;
  }
  return v;
}

Value scalar_value(Scalar t, double f, int64_t i, bool from_float) {
  Value v = alloc(Type{t, false, {}});
  with_storage(storage_of(t, false), [&](auto tag) {
    using T = decltype(tag);
    data<T>(v)[0] = from_float ? conv_to<T>(f, t) : conv_to<T>(i, t);
    return 0;
  });
  return v;
}

void convert_into(Value& out, const Value& v, Scalar to) {
  Type rt{to, false, v.type.shape};
  with_storage(storage_of(v.type.elem, v.type.ptr), [&](auto stag) {
    using S = decltype(stag);
    return with_storage(storage_of(to, false), [&](auto dtag) {
      using D = decltype(dtag);
      if (is_narrow(to) && v.type.elem != to) map1<D, S>(out, v, rt, [to](S x) { return conv_to<D>(x, to); });
      else map1<D, S>(out, v, rt, [](S x) { return conv_elem<D>(x); });
      return 0;
    });
  });
}

Value convert(const Value& v, Scalar to) {
  Value out;
  convert_into(out, v, to);
  return out;
}

const Value& coerce(const Value& v, Scalar to, Value& tmp) {
  if (!v.type.ptr && v.type.elem == to) return v;
  tmp = convert(v, to);
  return tmp;
}

Dims dims_of(const Shape& out) {
  Dims d;
  size_t r = out.size();
  if (r > static_cast<size_t>(kSlots)) internal_error("Interp", "a tile of rank " + std::to_string(r) + " (at most " + std::to_string(kSlots) + ")");
  for (size_t i = 0; i < r; ++i) d.n[kSlots - r + i] = out[i];
  d.numel = shape_numel(out);
  return d;
}

Strides bstrides(const Shape& in, const Shape& out) {
  Strides s{};
  size_t r = in.size(), ro = out.size();
  int64_t stride = 1;
  for (size_t i = r; i-- > 0;) {
    size_t axis = kSlots - ro + (ro - r) + i;
    s[axis] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return s;
}

// ---- elementwise ----

void unary_into(Value& out, UnOp op, const Value& x, const Type& rt) {
  with_storage(storage_of(rt.elem, false), [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case UnOp::Neg:
        if constexpr (std::is_floating_point_v<T>) map1<T, T>(out, x, rt, [](T v) { return -v; });  // -0.0 of +0.0
        else map1<T, T>(out, x, rt, [](T v) { return wsub<T>(0, v); });
        break;
      case UnOp::Not:
        if constexpr (std::is_same_v<T, uint8_t>) map1<T, T>(out, x, rt, [](T v) -> T { return !v; });
        else if constexpr (std::is_integral_v<T>) map1<T, T>(out, x, rt, [](T v) -> T { return ~v; });
        else internal_error("Interp", "'~' on floats");
        break;
      case UnOp::Abs:
        if constexpr (std::is_floating_point_v<T>) map1<T, T>(out, x, rt, [](T v) { return std::fabs(v); });
        else map1<T, T>(out, x, rt, [](T v) { return v < 0 ? wsub<T>(0, v) : v; });
        break;
      DT_MATH_UNOP_CASES
        if constexpr (std::is_floating_point_v<T>) {
          if constexpr (std::is_same_v<T, float>) {
            if (op == UnOp::Exp || op == UnOp::Log) {
              prep(out, rt);
              (op == UnOp::Exp ? exp_f32_array : log_f32_array)(data<float>(x), data<float>(out), numel(out));
              break;
            }
          }
          if (op == UnOp::Exp) map1<T, T>(out, x, rt, [](T v) { return std::exp(v); });
          else map1<T, T>(out, x, rt, [op](T v) { return math1<T>(op, v); });
        } else {
          internal_error("Interp", "math function on integers");
        }
        break;
    }
    round_half<T>(out, rt.elem);
    return 0;
  });
}

Value unary_op(UnOp op, const Value& x, const Type& rt) {
  Value out;
  unary_into(out, op, x, rt);
  return out;
}

void binary_into(Value& out, BinOp op, const Value& a, const Value& b, const Type& rt, SourceLoc loc) {
  with_storage(storage_of(a.type.elem, false), [&](auto tag) {
    using T = decltype(tag);
    arith<T>(out, op, a, b, rt, loc);
    if (!binop_is_compare(op) && op != BinOp::LAnd && op != BinOp::LOr) round_half<T>(out, rt.elem);
    return 0;
  });
}

Value binary_op(BinOp op, const Value& a, const Value& b, const Type& rt, SourceLoc loc) {
  Value out;
  binary_into(out, op, a, b, rt, loc);
  return out;
}

void where_into(Value& out, const Value& c, const Value& a, const Value& b, const Type& rt) {
  with_storage(storage_of(rt.elem, rt.ptr), [&](auto tag) {
    using T = decltype(tag);
    prep(out, rt);
    const uint8_t* pc = data<uint8_t>(c);
    const T* pa = data<T>(a);
    const T* pb = data<T>(b);
    T* po = data<T>(out);
    bloop<3>(dims_of(rt.shape), {bstrides(c.type.shape, rt.shape), bstrides(a.type.shape, rt.shape), bstrides(b.type.shape, rt.shape)},
             [&](int64_t o, const std::array<int64_t, 3>& ix) { po[o] = pc[ix[0]] ? pa[ix[1]] : pb[ix[2]]; });
    return 0;
  });
}

Value packed_pointers(const Value& p) {
  if (p.buffer == kMultiBuffer) return p;
  Value out = alloc(p.type);
  const int64_t* pp = data<int64_t>(p);
  int64_t* po = data<int64_t>(out);
  for (int64_t i = 0; i < numel(p); ++i) po[i] = pack_offset(p.buffer, pp[i]);
  out.buffer = kMultiBuffer;
  return out;
}

void where_ptr_into(Value& out, const Value& c, const Value& a, const Value& b, const Type& rt) {
  int buf = kMultiBuffer;
  if (a.buffer == b.buffer) {
    buf = a.buffer;
  } else {
    const uint8_t* pc = data<uint8_t>(c);
    const int64_t n = numel(c);
    bool any = false, all = true;
    for (int64_t i = 0; i < n; ++i) {
      any = any || pc[i] != 0;
      all = all && pc[i] != 0;
    }
    if (all) buf = a.buffer;
    else if (!any) buf = b.buffer;
  }
  if (buf != kMultiBuffer || (a.buffer == kMultiBuffer && b.buffer == kMultiBuffer)) {
    where_into(out, c, a, b, rt);
  } else {  // lane by lane between two buffers: the lanes packed
    Value pa = packed_pointers(a), pb = packed_pointers(b);
    where_into(out, c, pa, pb, rt);
  }
  out.buffer = buf;
}

Value where_op(const Value& c, const Value& a, const Value& b, const Type& rt) {
  Value out;
  where_into(out, c, a, b, rt);
  return out;
}

Value broadcast_op(const Value& x, const Shape& s) {
  Type rt = x.type.with_shape(s);
  return with_storage(storage_of(rt.elem, rt.ptr), [&](auto tag) {
    using T = decltype(tag);
    Value out = alloc(rt);
    out.buffer = x.buffer;
    const T* px = data<T>(x);
    T* po = data<T>(out);
    bloop<1>(dims_of(s), {bstrides(x.type.shape, s)}, [&](int64_t o, const std::array<int64_t, 1>& ix) { po[o] = px[ix[0]]; });
    return out;
  });
}

// tl.gather: out[i] = src[i with i[axis] = index[i]], an index outside the axis clamped to it (the
// readers' assert reports such an index first). Elements are copied as stored: bit for bit.
Value gather_op(const Value& src, const Value& index, int axis, const Type& rt) {
  const Shape& ss = src.type.shape;
  const Shape& is = index.type.shape;
  const size_t rank = ss.size(), ax = static_cast<size_t>(axis);
  std::vector<int64_t> st(rank, 1);
  for (size_t i = rank; i-- > 1;) st[i - 1] = st[i] * ss[i];
  const int64_t n = ss[ax], step = st[ax];
  Value out = alloc(rt);
  with_storage(storage_of(src.type.elem, false), [&](auto tag) {
    using T = decltype(tag);
    const T* ps = data<T>(src);
    T* po = data<T>(out);
    with_storage(storage_of(index.type.elem, false), [&](auto itag) {
      using I = decltype(itag);
      if constexpr (std::is_integral_v<I>) {
        const I* pi = data<I>(index);
        std::vector<int64_t> ctr(rank, 0);
        int64_t base = 0;  // the source offset of the output position, its axis coordinate left out
        const int64_t total = shape_numel(is);
        for (int64_t o = 0; o < total; ++o) {
          const int64_t k = std::clamp<int64_t>(static_cast<int64_t>(pi[o]), 0, n - 1);
          po[o] = ps[base + k * step];
          for (size_t d = rank; d-- > 0;) {
            if (++ctr[d] < is[d]) {
              if (d != ax) base += st[d];
              break;
            }
            if (d != ax) base -= st[d] * (is[d] - 1);
            ctr[d] = 0;
          }
        }
      } else {
        internal_error("Interp", "gather() with a float index");
      }
      return 0;
    });
    return 0;
  });
  return out;
}

// tl.histogram: bin b counts the lanes of x equal to b where the mask is on; one pass over the lanes
// (values outside [0, bins), as signed integers of x's type, are counted nowhere).
Value histogram_op(const Value& x, const Value* mask, int64_t bins) {
  Value out = alloc(Type{Scalar::I32, false, {bins}});
  int32_t* po = data<int32_t>(out);
  std::fill(po, po + bins, 0);
  const int64_t n = numel(x);
  const uint8_t* pm = mask ? data<uint8_t>(*mask) : nullptr;
  with_storage(storage_of(x.type.elem, false), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, uint8_t>) {
      const T* px = data<T>(x);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = static_cast<int64_t>(px[i]);
        // one unsigned comparison drops the negative values too
        if (static_cast<uint64_t>(v) < static_cast<uint64_t>(bins) && (!pm || pm[i])) ++po[v];
      }
    } else {
      internal_error("Interp", "histogram() of a non-integer tile");
    }
    return 0;
  });
  return out;
}

Value trans_op(const Value& x, const std::vector<int64_t>& order) {
  const Shape& in = x.type.shape;
  const size_t rank = in.size();
  Shape s(rank);
  for (size_t i = 0; i < rank; ++i) s[i] = in[static_cast<size_t>(order[i])];
  Value out = alloc(x.type.with_shape(s));
  out.buffer = x.buffer;
  if (rank == 2 && order[0] == 1) {
    int64_t r = in[0], c = in[1];
    with_storage(storage_of(x.type.elem, x.type.ptr), [&](auto tag) {
      using T = decltype(tag);
      const T* px = data<T>(x);
      T* po = data<T>(out);
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) po[j * r + i] = px[i * c + j];
      return 0;
    });
    return out;
  }
  // Any rank: the output's elements in order, each read at the input's strides of its axes.
  std::vector<int64_t> in_stride(rank, 1), st(rank);
  for (size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * in[i];
  for (size_t i = 0; i < rank; ++i) st[i] = in_stride[static_cast<size_t>(order[i])];
  with_storage(storage_of(x.type.elem, x.type.ptr), [&](auto tag) {
    using T = decltype(tag);
    const T* px = data<T>(x);
    T* po = data<T>(out);
    std::vector<int64_t> ctr(rank, 0);
    int64_t src = 0, n = shape_numel(s);
    for (int64_t o = 0; o < n; ++o) {
      po[o] = px[src];
      for (size_t ax = rank; ax-- > 0;) {
        if (++ctr[ax] < s[ax]) {
          src += st[ax];
          break;
        }
        src -= st[ax] * (s[ax] - 1);
        ctr[ax] = 0;
      }
    }
    return 0;
  });
  return out;
}

Value full_op(const Value& v, const Type& rt) {
  Value out;
  full_into(out, v, rt);
  return out;
}

void full_into(Value& out, const Value& v, const Type& rt) {
  prep(out, rt);
  with_storage(storage_of(rt.elem, false), [&](auto tag) {
    using T = decltype(tag);
    T x = data<T>(v)[0];
    T* po = data<T>(out);
    int64_t n = numel(out);
    for (int64_t i = 0; i < n; ++i) po[i] = x;
    return 0;
  });
}

Value arange_op(int64_t lo, int64_t hi) {
  Value out = alloc(Type{Scalar::I32, false, {hi - lo}});
  int32_t* p = data<int32_t>(out);
  for (int64_t i = lo; i < hi; ++i) p[i - lo] = static_cast<int32_t>(i);
  return out;
}

// ---- reductions ----

namespace {
template <class T, class A> void reduce_typed(Value& out, RedOp op, const Value& x, int axis, const Type& rt) {
  const Shape& s = x.type.shape;
  int64_t outer = 1, inner = 1, n = s[static_cast<size_t>(axis)];
  for (int i = 0; i < axis; ++i) outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
  prep(out, rt);
  const T* px = data<T>(x);
  if constexpr (std::is_floating_point_v<A>) {
    if (op == RedOp::Sum && n > 2) {
      // floats: tree_fold's order (Exec.h), the rows of the inner axes folded together
      thread_local std::vector<A> buf;
      buf.resize(static_cast<size_t>(n * inner));
      A* out_p = data<A>(out);
      for (int64_t o = 0; o < outer; ++o) {
        const T* p = px + o * n * inner;
        for (int64_t k = 0; k < n * inner; ++k) buf[static_cast<size_t>(k)] = static_cast<A>(p[k]);
        tree_fold(buf.data(), n, inner);
        std::copy_n(buf.data(), inner, out_p + o * inner);
      }
      return;
    }
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const T* p = px + o * n * inner + in;
      int64_t dst = o * inner + in;
      switch (op) {
        case RedOp::Sum: {
          A acc = 0;
          for (int64_t k = 0; k < n; ++k) acc = wadd<A>(acc, static_cast<A>(p[k * inner]));
          data<A>(out)[dst] = acc;
          break;
        }
        case RedOp::Max:
        case RedOp::Min: {
          T acc = p[0];
          for (int64_t k = 1; k < n; ++k) acc = op == RedOp::Max ? fmax_nan(acc, p[k * inner]) : fmin_nan(acc, p[k * inner]);
          data<T>(out)[dst] = acc;
          break;
        }
        case RedOp::Argmax:
        case RedOp::Argmin: {
          int64_t best = 0;
          T bv = p[0];
          for (int64_t k = 1; k < n && bv == bv; ++k) {
            T v = p[k * inner];
            if (v != v || (op == RedOp::Argmax ? v > bv : v < bv)) {
              best = k;
              bv = v;
            }
          }
          data<int32_t>(out)[dst] = static_cast<int32_t>(best);
          break;
        }
        case RedOp::Fn: internal_error("Interp", "a reduction with a combine function outside combine_op");
        case RedOp::Xor:
        case RedOp::Or:
          if constexpr (std::is_integral_v<T>) {
            T acc = p[0];
            for (int64_t k = 1; k < n; ++k) {
              T v = p[k * inner];
              acc = static_cast<T>(op == RedOp::Xor ? acc ^ v : acc | v);
            }
            data<T>(out)[dst] = acc;
          } else {
            internal_error("Interp", "bitwise reduction of floats");
          }
          break;
      }
    }
}
}  // namespace

void reduce_into(Value& out, RedOp op, const Value& x, int axis, const Type& rt) {
  with_storage(storage_of(x.type.elem, false), [&](auto tag) {
    using T = decltype(tag);
    if (op == RedOp::Sum) {
      if constexpr (std::is_same_v<T, uint8_t>) return reduce_typed<T, int32_t>(out, op, x, axis, rt);
      else return reduce_typed<T, T>(out, op, x, axis, rt);
    }
    return reduce_typed<T, T>(out, op, x, axis, rt);
  });
}

Value reduce_op(RedOp op, const Value& x, int axis, const Type& rt) {
  Value out;
  reduce_into(out, op, x, axis, rt);
  return out;
}

// ---- bitcasts between types of one width (i8 <-> fp8, i16 <-> f16/bf16, f16 <-> bf16, fp8 <-> fp8,
// i32 <-> f32, i64 <-> f64): every element's bits in its type, from its storage and back ----

namespace {
uint64_t elem_bits(const Value& x, int64_t i) {
  Scalar t = x.type.elem;
  switch (t) {
    case Scalar::I8: return static_cast<uint8_t>(data<int32_t>(x)[i]);
    case Scalar::I16: return static_cast<uint16_t>(data<int32_t>(x)[i]);
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return fp8_bits(t, data<float>(x)[i]);
    case Scalar::F16: return f32_to_f16(data<float>(x)[i]);
    case Scalar::BF16: return f32_to_bf16(data<float>(x)[i]);
    case Scalar::I32: return static_cast<uint32_t>(data<int32_t>(x)[i]);
    case Scalar::F32: {
      uint32_t u;
      std::memcpy(&u, &data<float>(x)[i], 4);
      return u;
    }
    case Scalar::I64: return static_cast<uint64_t>(data<int64_t>(x)[i]);
    case Scalar::F64: {
      uint64_t u;
      std::memcpy(&u, &data<double>(x)[i], 8);
      return u;
    }
    case Scalar::I1: break;
  }
  internal_error("Interp", "bitcast of i1");
}
void put_bits(Value& out, int64_t i, uint64_t u) {
  Scalar t = out.type.elem;
  switch (t) {
    case Scalar::I8: data<int32_t>(out)[i] = static_cast<int8_t>(static_cast<uint8_t>(u)); return;
    case Scalar::I16: data<int32_t>(out)[i] = static_cast<int16_t>(static_cast<uint16_t>(u)); return;
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: data<float>(out)[i] = fp8_to_f32(t, static_cast<uint8_t>(u)); return;
    case Scalar::F16: data<float>(out)[i] = f16_to_f32(static_cast<uint16_t>(u)); return;
    case Scalar::BF16: data<float>(out)[i] = bf16_to_f32(static_cast<uint16_t>(u)); return;
    case Scalar::I32: data<int32_t>(out)[i] = static_cast<int32_t>(static_cast<uint32_t>(u)); return;
    case Scalar::F32: {
      uint32_t v = static_cast<uint32_t>(u);
      std::memcpy(&data<float>(out)[i], &v, 4);
      return;
    }
    case Scalar::I64: data<int64_t>(out)[i] = static_cast<int64_t>(u); return;
    case Scalar::F64: std::memcpy(&data<double>(out)[i], &u, 8); return;
    case Scalar::I1: break;
  }
  internal_error("Interp", "bitcast to i1");
}
}  // namespace

Value bitcast_op(const Value& x, Scalar to) {
  if (x.type.elem == to) return x;
  if (scalar_bytes(x.type.elem) != scalar_bytes(to)) internal_error("Interp", "bitcast between types of different widths");
  Value out = alloc(Type{to, false, x.type.shape});
  int64_t n = numel(x);
  for (int64_t i = 0; i < n; ++i) put_bits(out, i, elem_bits(x, i));
  return out;
}

// ---- scans: element i along the axis combines elements 0..i (reverse: i..n-1) in that order;
// f16/bf16 round after every step (IR.h) ----

namespace {
template <class T> T scan_step(ScanOp op, T acc, T v, Scalar t) {
  T r = acc;
  switch (op) {
    case ScanOp::Sum: r = wadd<T>(acc, v); break;
    case ScanOp::Prod: r = wmul<T>(acc, v); break;
    case ScanOp::Max: r = fmax_nan(acc, v); break;
    case ScanOp::Min: r = fmin_nan(acc, v); break;
    case ScanOp::Fn: internal_error("Interp", "a scan with a combine function outside combine_op");
  }
  return round_elem(r, t);
}
}  // namespace

Value scan_op(ScanOp op, const Value& x, int axis, bool reverse, const Type& rt) {
  Value xt;
  const Value& in = coerce(x, rt.elem, xt);  // i1 scans as i32
  Value out;
  prep(out, rt);
  const Shape& s = rt.shape;
  int64_t outer = 1, inner = 1, n = s[static_cast<size_t>(axis)];
  for (int i = 0; i < axis; ++i) outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
  with_storage(storage_of(rt.elem, false), [&](auto tag) {
    using T = decltype(tag);
    const T* px = data<T>(in);
    T* po = data<T>(out);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t base = o * n * inner + j;
        for (int64_t k = 0; k < n; ++k) {
          int64_t at = base + (reverse ? n - 1 - k : k) * inner;
          po[at] = k == 0 ? px[at] : scan_step<T>(op, po[at + (reverse ? inner : -inner)], px[at], rt.elem);
        }
      }
    return 0;
  });
  return out;
}

// ---- dot: each output element accumulated in k order (c += a[i,k] * b[k,j], product rounded
// first: no FMA contraction). Register-blocked: 4 rows x 16 columns of c stay in registers over the
// whole k loop; compiled for AVX-512, AVX2 and baseline x86-64 (picked at load time), so the
// binary still runs anywhere. Every element sees the same operations in the same order in every
// variant, so results are bit-identical to the plain i-k-j loop. ----

namespace {
// One block of R rows x (one 64-byte vector of) columns of c, held in registers over the k loop.
template <class T, int R>
__attribute__((always_inline)) inline void dot_block(const T* __restrict a, const T* __restrict b, T* __restrict c, int64_t i0, int64_t j0, int64_t K, int64_t N) {
  typedef T V __attribute__((vector_size(64)));
  V acc[R];
  for (int r = 0; r < R; ++r) std::memcpy(&acc[r], c + (i0 + r) * N + j0, sizeof(V));
  for (int64_t k = 0; k < K; ++k) {
    V bv;
    std::memcpy(&bv, b + k * N + j0, sizeof(V));
    for (int r = 0; r < R; ++r) {
      V p = a[(i0 + r) * K + k] * bv;  // rounded product, then the add: no contraction
      acc[r] += p;
    }
  }
  for (int r = 0; r < R; ++r) std::memcpy(c + (i0 + r) * N + j0, &acc[r], sizeof(V));
}

template <class T>
__attribute__((always_inline)) inline void dot_rows(const T* __restrict a, const T* __restrict b, T* __restrict c, int64_t i0, int64_t i1, int64_t j0, int64_t K, int64_t N) {
  for (int64_t i = i0; i < i1; ++i) {
    T* crow = c + i * N;
    for (int64_t k = 0; k < K; ++k) {
      T aik = a[i * K + k];
      const T* brow = b + k * N;
      for (int64_t j = j0; j < N; ++j) crow[j] += aik * brow[j];
    }
  }
}

template <class T, int R> __attribute__((always_inline)) inline void dot_impl(const T* a, const T* b, T* c, int64_t M, int64_t K, int64_t N) {
  constexpr int J = 64 / static_cast<int>(sizeof(T));
  int64_t Mb = M / R * R, Nb = N / J * J;
  for (int64_t i = 0; i < Mb; i += R)
    for (int64_t j = 0; j < Nb; j += J) dot_block<T, R>(a, b, c, i, j, K, N);
  if (Nb < N) dot_rows(a, b, c, 0, Mb, Nb, K, N);
  if (Mb < M) dot_rows(a, b, c, Mb, M, 0, K, N);
}

// ISA variants picked at run time (the binary must run on any x86-64; no -march=native). The
// same element-wise operations in the same order in each, so results do not depend on the ISA.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define DTSIM_DOT_ISA 1
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
template <class T> __attribute__((target("avx512f"))) void dot_avx512(const T* a, const T* b, T* c, int64_t M, int64_t K, int64_t N) { dot_impl<T, 8>(a, b, c, M, K, N); }
template <class T> __attribute__((target("avx2"))) void dot_avx2(const T* a, const T* b, T* c, int64_t M, int64_t K, int64_t N) { dot_impl<T, 4>(a, b, c, M, K, N); }
#pragma GCC pop_options
#endif
template <class T> void dot_any(const T* a, const T* b, T* c, int64_t M, int64_t K, int64_t N) {
#ifdef DTSIM_DOT_ISA
  static const int isa = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  if (isa == 2) return dot_avx512<T>(a, b, c, M, K, N);
  if (isa == 1) return dot_avx2<T>(a, b, c, M, K, N);
#endif
  dot_impl<T, 4>(a, b, c, M, K, N);
}
}  // namespace

float round_tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // infinities and NaNs as they are
  u = (u + 0x1000u) & 0xffffe000u;                  // half of the dropped 13 bits: ties away from zero
  std::memcpy(&x, &u, 4);
  return x;
}

void dot_into(Value& out, const Value& a, const Value& b, const Value* acc, const Type& rt, bool tf32) {
  int64_t M = a.type.shape[0], K = a.type.shape[1], N = b.type.shape[1];
  if (tf32) {
    Value ra = a, rb = b;
    for (int64_t i = 0; i < M * K; ++i) data<float>(ra)[i] = round_tf32(data<float>(a)[i]);
    for (int64_t i = 0; i < K * N; ++i) data<float>(rb)[i] = round_tf32(data<float>(b)[i]);
    dot_into(out, ra, rb, acc, rt, false);
    return;
  }
  prep(out, rt);
  if (rt.elem == Scalar::I32) {  // i8 operands in int32 storage: products and sums wrap modulo 2^32
    uint32_t* c = reinterpret_cast<uint32_t*>(data<int32_t>(out));
    if (acc) std::copy_n(reinterpret_cast<const uint32_t*>(data<int32_t>(*acc)), M * N, c);
    else std::fill_n(c, M * N, 0u);
    dot_any<uint32_t>(reinterpret_cast<const uint32_t*>(data<int32_t>(a)), reinterpret_cast<const uint32_t*>(data<int32_t>(b)), c, M, K, N);
  } else if (rt.elem == Scalar::F64) {
    if (acc) std::copy_n(data<double>(*acc), M * N, data<double>(out));
    else std::fill_n(data<double>(out), M * N, 0.0);
    dot_any<double>(data<double>(a), data<double>(b), data<double>(out), M, K, N);
  } else {
    if (acc) std::copy_n(data<float>(*acc), M * N, data<float>(out));
    else std::fill_n(data<float>(out), M * N, 0.0f);
    dot_any<float>(data<float>(a), data<float>(b), data<float>(out), M, K, N);
  }
}

Value dot_op(const Value& a, const Value& b, const Value* acc, const Type& rt, bool tf32) {
  Value out;
  dot_into(out, a, b, acc, rt, tf32);
  return out;
}

std::array<int64_t, 2> swizzle2d(int64_t i, int64_t j, int64_t ni, int64_t nj, int64_t group, SourceLoc loc) {
  int64_t ij = i * nj + j;
  int64_t size_gj = group * nj;
  if (size_gj == 0) throw RuntimeFault(loc, "swizzle2d(): group size times the column count is zero");
  int64_t gid = ij / size_gj;
  int64_t off_i = gid * group;
  int64_t g = std::min(ni - off_i, group);
  ij = ij % size_gj;
  if (g == 0) throw RuntimeFault(loc, "swizzle2d(): empty group (row " + std::to_string(i) + " is outside the grid)");
  return {off_i + ij % g, ij / g};
}

}  // namespace dtsim::exec

namespace dtsim::exec {

void ptr_arith_into(Value& out, BinOp op, const Value& p, const Value& off, const Type& rt, bool ptr_first) {
  int buffer = p.buffer;
  if (op == BinOp::Sub) map2<int64_t, int64_t>(out, p, off, rt, [](int64_t x, int64_t y) { return wsub(x, y); });
  else if (ptr_first) map2<int64_t, int64_t>(out, p, off, rt, [](int64_t x, int64_t y) { return wadd(x, y); });
  else map2<int64_t, int64_t>(out, off, p, rt, [](int64_t x, int64_t y) { return wadd(x, y); });
  out.buffer = buffer;
}

Value ptr_arith(BinOp op, const Value& p, const Value& off, const Type& rt, bool ptr_first) {
  Value out;
  ptr_arith_into(out, op, p, off, rt, ptr_first);
  return out;
}

Value ptr_compare(BinOp op, const Value& a, const Value& b, const Type& rt) {
  Value out;
  ptr_compare_into(out, op, a, b, rt);
  return out;
}

void ptr_compare_into(Value& out, BinOp op, const Value& a, const Value& b, const Type& rt) {
  if (a.buffer != b.buffer && (a.buffer == kMultiBuffer || b.buffer == kMultiBuffer)) {  // compared packed
    Value pa = packed_pointers(a), pb = packed_pointers(b);
    ptr_compare_into(out, op, pa, pb, rt);
    return;
  }
  bool same = a.buffer == b.buffer;
  if (op == BinOp::Eq) map2<uint8_t, int64_t>(out, a, b, rt, [same](int64_t x, int64_t y) -> uint8_t { return same && x == y; });
  else map2<uint8_t, int64_t>(out, a, b, rt, [same](int64_t x, int64_t y) -> uint8_t { return !same || x != y; });
}

}  // namespace dtsim::exec
