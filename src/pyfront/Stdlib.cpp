// Triton's standard library in dtsim's own .py reader: the functions Triton writes in Triton itself
// (triton/language/standard.py and random.py: tl.sort, tl.topk, tl.flip, tl.softmax, tl.rand ...),
// which Triton's frontend hands the TTIR reader already expanded into basic ops. Here they are a
// prelude of @triton.jit functions of dtsim's own (kPrelude below, written from the algorithms: a
// bitonic sorting network on the tile reshaped to a 2x2x...x2 cube, Philox 4x32-10), read once per
// lowering and inlined where a kernel calls one (as any @triton.jit function it calls), so that both
// readers give the same bits. The library's reductions go through it too where dtsim's builtin ones compute something else
// (tl.max / tl.min leaving NaNs out and widening narrow types, tl.argmax of floats with NaNs, tl.sum /
// tl.cumsum / tl.cumprod in Triton's accumulation types: the prelude's `_max`, `_sum` ...); the
// prelude's own calls of them are the builtin ones. The few that are one IR operation (tl.to_tensor,
// tl.div_rn, tl.fdiv, tl.add, tl.broadcast ...) are built here directly.
#include <cmath>

#include "ir/Verify.h"
#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

// The prelude's file name in messages and the debugger (no file of that name is read).
const char* const kPreludePath = "<dtsim>/triton_language_library.py";

// The prelude. Public names are the tl.* functions it gives; `_` names are its own functions and the forms
// call_stdlib picks for tl.max, tl.sum, x.item() ... Each
// function follows the Triton function of its name: the same operations in the same order on the
// same element types (reductions widen narrow types as tl.max does; the compare-and-swap's
// condition is Triton's, so equal keys, -0.0 and NaNs come out as Triton's network leaves them).
const char* const kPrelude = R"PY(
import triton
import triton.language as tl


@triton.jit
def _ilog2(n: tl.constexpr):
    # floor(log2(n)) of a compile-time n >= 1
    e = 0
    for b in tl.static_range(1, 63):
        if (n >> b) > 0:
            e = b
    return e


@triton.jit
def _pow2(n: tl.constexpr):
    return n > 0 and (n & (n - 1)) == 0


@triton.jit
def _bits_type(t: tl.constexpr):
    # the signed integer type as wide as t (the bits a value is moved as)
    w = t.primitive_bitwidth
    if w == 1:
        r = tl.int1
    elif w == 8:
        r = tl.int8
    elif w == 16:
        r = tl.int16
    elif w == 32:
        r = tl.int32
    else:
        tl.static_assert(w == 64, "no integer type is as wide as this element type")
        r = tl.int64
    return r


@triton.jit
def _twos(n: tl.constexpr):
    # the shape (2, 2, ..., 2) of n dimensions
    shape = ()
    for _ in tl.static_range(n):
        shape = shape + (2,)
    return shape


@triton.jit
def _splice(shape, d: tl.constexpr, middle):
    # shape with its entry d replaced by the entries of `middle`
    out = ()
    for i in tl.static_range(len(shape)):
        if i == d:
            out = out + middle
        else:
            out = out + (shape[i],)
    return out


@triton.jit
def _half(rank: tl.constexpr, axis: tl.constexpr):
    # 0 on the first and 1 on the second half of dimension `axis` of a 2x...x2 cube of `rank` dimensions,
    # axes counted from the innermost one (a tensor of ones elsewhere, broadcast against the cube)
    shape = ()
    for d in tl.static_range(rank):
        if d == rank - 1 - axis:
            shape = shape + (2,)
        else:
            shape = shape + (1,)
    return tl.reshape(tl.arange(0, 2), shape)


@triton.jit
def _exchange(x, desc, axis: tl.constexpr):
    # one compare-and-swap step of the network along cube axis `axis` (from the innermost): each element
    # meets its mate across that axis (its bits xor the pair's xor, so NaN payloads and -0.0 travel as
    # they are) and keeps the smaller of the two on the first half where `desc` is 0, the larger where 1
    rank = _ilog2(x.numel)
    bits = x.to(_bits_type(x.dtype), bitcast=True)
    mate = (bits ^ tl.xor_sum(bits, rank - 1 - axis, keep_dims=True)).to(x.dtype, bitcast=True)
    swap = (x > mate) != (desc ^ _half(rank, axis)).to(tl.int1)
    return tl.where(swap, mate, x)


@triton.jit
def _merge(h, stage: tl.constexpr, order: tl.constexpr):
    # the bitonic merge of blocks of 2^stage elements: order 0 ascending, 1 descending, 2 alternating
    # block by block (ascending, descending, ...), as the sort's earlier stages need
    if order == 2:
        desc = _half(_ilog2(h.numel), stage)
    else:
        desc = order
    for s in tl.static_range(stage):
        h = _exchange(h, desc, stage - 1 - s)
    return h


@triton.jit
def _extreme(x, axis: tl.constexpr, largest: tl.constexpr, keep_dims: tl.constexpr = False):
    # tl.max / tl.min as Triton's library writes them: narrow types widened to 32 bits, then a
    # reduction by tl.maximum / tl.minimum, which leaves NaNs out on floats. That reduction is built
    # as the TTIR reader builds Triton's: NaN lanes read as -inf (a max) or inf (a min), NaN where
    # every lane is NaN. (Results are returned, not held in locals: a local tensor would be one more
    # variable in the debugger.)
    if x.dtype.primitive_bitwidth < 32:
        if x.dtype.is_floating():
            return _extreme(x.to(tl.float32), axis, largest, keep_dims)
        return _extreme(x.to(tl.int32), axis, largest, keep_dims)
    if not x.dtype.is_floating():
        if largest:
            return tl.max(x, axis, keep_dims=keep_dims)
        return tl.min(x, axis, keep_dims=keep_dims)
    if largest:
        return tl.where(tl.sum((x == x).to(tl.int32), axis, keep_dims=keep_dims) == 0, float("nan"),
                        tl.max(tl.where(x != x, float("-inf"), x), axis, keep_dims=keep_dims))
    return tl.where(tl.sum((x == x).to(tl.int32), axis, keep_dims=keep_dims) == 0, float("nan"),
                    tl.min(tl.where(x != x, float("inf"), x), axis, keep_dims=keep_dims))


@triton.jit
def _max_indices(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    return tl.max(tl.where(input != input, float("-inf"), input), axis, True, return_indices_tie_break_left, keep_dims)


@triton.jit
def _min_indices(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    return tl.min(tl.where(input != input, float("inf"), input), axis, True, return_indices_tie_break_left, keep_dims)


@triton.jit
def _argmax(input, axis, tie_break_left=True, keep_dims=False):
    return tl.argmax(tl.where(input != input, float("-inf"), input), axis, tie_break_left, keep_dims)


@triton.jit
def _argmin(input, axis, tie_break_left=True, keep_dims=False):
    return tl.argmin(tl.where(input != input, float("inf"), input), axis, tie_break_left, keep_dims)


@triton.jit
def _item(input):
    # x.item(): the one element of a tensor as a scalar
    tl.static_assert(input.numel == 1, "item() needs a tensor of one element")
    return tl.reshape(input, ())


@triton.jit
def _swizzle2d(i, j, size_i, size_j, size_g):
    # tl.swizzle2d of tensors: the row-major index i * size_j + j renumbered column-major within groups
    # of size_g rows (the last group may have fewer)
    flat = i * size_j + j
    group = flat // (size_g * size_j)
    first = group * size_g
    rows = tl.minimum(size_i - first, size_g)
    within = flat % (size_g * size_j)
    return first + within % rows, within // rows


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _sum_type(t: tl.constexpr, dtype: tl.constexpr):
    # the type a sum or a cumulative sum / product accumulates in: `dtype` where given, else integers
    # narrower than 32 bits widened to 32 bits of their signedness (bool counting as unsigned)
    if dtype is not None:
        r = dtype
    elif t.is_int_signed() and t.primitive_bitwidth < 32:
        r = tl.int32
    elif t.is_int_unsigned() and t.primitive_bitwidth < 32:
        r = tl.uint32
    else:
        r = t
    return r


@triton.jit
def _sum(input, axis=None, keep_dims=False, dtype: tl.constexpr = None):
    t = _sum_type(input.dtype, dtype)
    return tl.reduce(input.to(t), axis, _add, keep_dims=keep_dims).to(t)


@triton.jit
def _cumsum(input, axis=0, reverse=False, dtype: tl.constexpr = None):
    t = _sum_type(input.dtype, dtype)
    return tl.associative_scan(input.to(t), axis, _add, reverse).to(t)


@triton.jit
def _cumprod(input, axis=0, reverse=False, dtype: tl.constexpr = None):
    t = _sum_type(input.dtype, dtype)
    return tl.associative_scan(input.to(t), axis, _mul, reverse).to(t)


@triton.jit
def _max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    return _extreme(input, axis, True, keep_dims)


@triton.jit
def _min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    return _extreme(input, axis, False, keep_dims)


@triton.jit
def _sorted(x, k: tl.constexpr, dim: tl.constexpr, descending: tl.constexpr):
    # tl.sort (k None) and tl.topk: sort the last dimension's runs of 2^log_k elements, then repeatedly
    # keep the better half of each pair of sorted runs (elementwise max / min of a run and its mate,
    # which leaves a bitonic run holding the top 2^log_k) and merge it again
    last = len(x.shape) - 1
    d = last if dim is None else dim
    tl.static_assert(d == last, "only the last dimension can be sorted (dim must be None or len(x.shape) - 1)")
    if k is not None:
        tl.static_assert(k > 0, "k must be at least 1")
        tl.static_assert(_pow2(k), "k must be 1, 2, 4, 8, ...")
        tl.static_assert(k <= x.shape[d], "k must be at most the size of the last dimension")
    log_n = _ilog2(x.shape[d])
    log_k = log_n if k is None else _ilog2(k)
    if log_k == 0:
        x = _extreme(x, d, descending, True)
    else:
        h = tl.reshape(x, _twos(_ilog2(x.numel)))
        for i in tl.static_range(1, log_k + 1):
            h = _merge(h, i, 2 if i < log_n else descending)
        for i in tl.static_range(log_k + 1, log_n + 1):
            h = _extreme(h, _ilog2(h.numel) - 1 - log_k, descending)
            h = _merge(h, log_k, 2 if i < log_n else descending)
        x = tl.reshape(h, _splice(x.shape, len(x.shape) - 1, (1 << log_k,)))
    return x


@triton.jit
def sort(x, dim: tl.constexpr = None, descending: tl.constexpr = 0):
    return _sorted(x, None, dim, descending)


@triton.jit
def topk(x, k: tl.constexpr, dim: tl.constexpr = None, descending: tl.constexpr = True):
    return _sorted(x, k, dim, descending)


@triton.jit
def bitonic_merge(x, dim: tl.constexpr = None, descending: tl.constexpr = 0):
    last = len(x.shape) - 1
    d = last if dim is None else dim
    tl.static_assert(d == last, "only the last dimension can be sorted (dim must be None or len(x.shape) - 1)")
    h = tl.reshape(x, _twos(_ilog2(x.numel)))
    h = _merge(h, _ilog2(x.shape[-1]), descending)
    return tl.reshape(h, x.shape)


@triton.jit
def flip(x, dim=None):
    # the dimension viewed as a 2x...x2 cube whose axes are each reversed by xoring every pair with
    # its xor (the bits move unchanged)
    rank = len(x.shape)
    d = rank - 1 if dim is None else dim
    if d < 0:
        d = d + rank
    tl.static_assert(0 <= d and d < rank, "dim must be None or a dimension of x (-rank <= dim < rank)")
    tl.static_assert(_pow2(x.shape[d]), "the flipped dimension must have a power-of-two size")
    steps = _ilog2(x.shape[d])
    y = tl.reshape(x.to(_bits_type(x.dtype), bitcast=True), _splice(x.shape, d, _twos(steps)))
    for i in tl.static_range(steps):
        y = y ^ tl.xor_sum(y, d + i, keep_dims=True)
    return tl.reshape(y, x.shape).to(x.dtype, bitcast=True)


@triton.jit
def ravel(x, can_reorder=False):
    return tl.reshape(x, (x.numel,), can_reorder=can_reorder)


@triton.jit
def softmax(x, dim=None, keep_dims=None, ieee_rounding=False):
    d = 0 if dim is None else dim
    shifted = x - _extreme(x, d, True, True)
    e = tl.exp(shifted)
    return tl.fdiv(e, tl.sum(e, d, keep_dims=True), ieee_rounding)


# Philox 4x32-10 / 4x64-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11):
# per round, two multiplications whose high halves are mixed with the other counters and the key,
# whose low halves become the new odd counters; the key is bumped by the Weyl constants.
@triton.jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = 10):
    if c0.dtype.primitive_bitwidth == 32:
        mul_a = tl.to_tensor(0xD2511F53)
        mul_b = tl.to_tensor(0xCD9E8D57)
        weyl_a = tl.to_tensor(0x9E3779B9)
        weyl_b = tl.to_tensor(0xBB67AE85)
    else:
        tl.static_assert(c0.dtype.primitive_bitwidth == 64, "the counters must be 32- or 64-bit unsigned integers")
        mul_a = tl.to_tensor(-3249550476889527149).to(tl.uint64, bitcast=True)
        mul_b = tl.to_tensor(-3865633965929787049).to(tl.uint64, bitcast=True)
        weyl_a = tl.to_tensor(-7046029254386353131).to(tl.uint64, bitcast=True)
        weyl_b = tl.to_tensor(-4942790177534073029).to(tl.uint64, bitcast=True)
    for _ in tl.static_range(n_rounds):
        even0 = c0
        even2 = c2
        c0 = tl.umulhi(mul_b, even2) ^ c1 ^ k0
        c2 = tl.umulhi(mul_a, even0) ^ c3 ^ k1
        c1 = mul_b * even2
        c3 = mul_a * even0
        k0 = k0 + weyl_a
        k1 = k1 + weyl_b
    return c0, c1, c2, c3


@triton.jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = 10):
    seed = tl.to_tensor(seed)
    tl.static_assert(not seed.dtype.is_floating(), "the seed must be an integer")
    seed = seed.to(tl.uint64)
    c0 = tl.to_tensor(c0)
    c1 = tl.to_tensor(c1)
    c2 = tl.to_tensor(c2)
    c3 = tl.to_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        word = tl.uint32
        key_hi = ((seed >> 32) & 0xFFFFFFFF).to(tl.uint32)
        key_lo = (seed & 0xFFFFFFFF).to(tl.uint32)
    else:
        tl.static_assert(c0.dtype.primitive_bitwidth == 64, "the counters must be 32- or 64-bit integers")
        word = tl.uint64
        key_hi = tl.full((1,), 0, dtype=tl.uint64)
        key_lo = seed
    return philox_impl(c0.to(word, bitcast=True), c1.to(word, bitcast=True), c2.to(word, bitcast=True),
                       c3.to(word, bitcast=True), key_lo, key_hi, n_rounds)


@triton.jit
def randint4x(seed, offset, n_rounds: tl.constexpr = 10):
    lo = offset.to(tl.uint32)
    zero = lo * 0
    if offset.dtype.primitive_bitwidth > 32:
        hi = (offset >> 32).to(tl.uint32)
    else:
        hi = zero
    return philox(seed, lo, hi, zero, zero, n_rounds)


@triton.jit
def randint(seed, offset, n_rounds: tl.constexpr = 10):
    r0, r1, r2, r3 = randint4x(seed, offset, n_rounds)
    return r0


@triton.jit
def uint_to_uniform_float(x):
    # the random bits as a signed integer folded onto [0, 2^(w-1)) (~x where negative), scaled by the
    # largest factor whose product with the largest such value stays below 1.0 in float32
    tl.static_assert(not x.dtype.is_floating(), "x must hold integers")
    if x.dtype.primitive_bitwidth == 32:
        x = x.to(tl.int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        tl.static_assert(x.dtype.primitive_bitwidth == 64, "x must hold 32- or 64-bit integers")
        x = x.to(tl.int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = tl.where(x < 0, ~x, x)
    return x * scale


@triton.jit
def rand(seed, offset, n_rounds: tl.constexpr = 10):
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@triton.jit
def rand4x(seed, offsets, n_rounds: tl.constexpr = 10):
    r0, r1, r2, r3 = randint4x(seed, offsets, n_rounds)
    return uint_to_uniform_float(r0), uint_to_uniform_float(r1), uint_to_uniform_float(r2), uint_to_uniform_float(r3)


@triton.jit
def pair_uniform_to_normal(u1, u2):
    # Box-Muller
    u1 = tl.maximum(1.0e-7, u1)
    angle = 6.283185307179586 * u2
    radius = tl.sqrt(-2.0 * tl.log(u1))
    return radius * tl.cos(angle), radius * tl.sin(angle)


@triton.jit
def randn(seed, offset, n_rounds: tl.constexpr = 10):
    r0, r1, r2, r3 = randint4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(uint_to_uniform_float(r0), uint_to_uniform_float(r1))
    return n0


@triton.jit
def randn4x(seed, offset, n_rounds: tl.constexpr = 10):
    u0, u1, u2, u3 = rand4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(u0, u1)
    n2, n3 = pair_uniform_to_normal(u2, u3)
    return n0, n1, n2, n3


@triton.jit
def squeeze(x, dim: tl.constexpr):
    rank = len(x.shape)
    tl.static_assert(-rank <= dim and dim < rank, "dim is out of range")
    d = dim + rank if dim < 0 else dim
    tl.static_assert(x.shape[d] == 1, "the squeezed dimension must have size 1")
    return tl.reshape(x, _splice(x.shape, d, ()))


@triton.jit
def unsqueeze(x, dim: tl.constexpr):
    rank = len(x.shape) + 1
    tl.static_assert(-rank <= dim and dim < rank, "dim is out of range")
    d = dim + rank if dim < 0 else dim
    return tl.expand_dims(x, d)
)PY";

// Triton's to_tensor typing of a Python number: bool -> int1; int -> int32, uint32, int64 (the first
// that holds it); float -> float32, or float64 where its magnitude is outside float32's normal range.
Val number_tensor(Lowerer& L, const Val& v, SourceLoc loc) {
  if (v.k == VK::Bool) return L.tensor(typed(make_const_bool(v.i != 0, loc)));
  if (v.k == VK::Int) {
    if (v.i >= INT32_MIN && v.i <= INT32_MAX) return L.tensor(typed(make_cast(L.ir(v, loc), Scalar::I32, loc)));
    if (v.i > INT32_MAX && v.i <= static_cast<int64_t>(UINT32_MAX)) {
      Val r = L.tensor(typed(make_cast(L.ir(v, loc), Scalar::I32, loc)));
      r.uns = true;
      return r;
    }
    return L.tensor(typed(make_cast(L.ir(v, loc), Scalar::I64, loc)));
  }
  double a = std::fabs(v.f);
  bool f32 = std::isinf(a) || a == 0.0 || std::isnan(v.f) || (a >= std::ldexp(1.0, -126) && a <= (2 - std::ldexp(1.0, -23)) * std::ldexp(1.0, 127));
  return L.tensor(typed(make_cast(L.ir(v, loc), f32 ? Scalar::F32 : Scalar::F64, loc)));
}

}  // namespace

const std::set<std::string>& stdlib_cpp_names() {
  static const std::set<std::string> s = {"to_tensor", "div_rn", "fdiv", "add", "sub", "mul", "expect_zero", "logical_and", "logical_or",
                                          "broadcast"};
  return s;
}

std::vector<std::string> stdlib_names() {
  std::vector<std::string> out;
  for (const std::string& n : stdlib_cpp_names())
    if (n.rfind("logical_", 0) != 0) out.push_back(n);  // (tensor methods only in Triton)
  std::string text = kPrelude;
  for (size_t p = text.find("\ndef "); p != std::string::npos; p = text.find("\ndef ", p + 1)) {
    std::string name = text.substr(p + 5, text.find('(', p) - p - 5);
    if (name[0] != '_') out.push_back(name);
  }
  return out;
}

const ModuleInfo& Lowerer::prelude() { return load_module(kPreludePath); }

bool is_prelude_path(const std::string& path) { return path == kPreludePath; }
const char* prelude_text() { return kPrelude; }

// x / y of Triton's tt.precise_divf: the operands promoted as for `/`, then divided with IEEE
// rounding; f32 through f64 (whose quotient rounds to the correctly rounded f32 one), as the TTIR
// reader lowers it, so that no backend's approximate f32 division is used.
static Val ieee_divide(Lowerer& L, const Val& x, const Val& y, SourceLoc loc, const std::string& fname) {
  ExprP ex = L.ir(x, loc), ey = L.ir(y, loc);
  Type t = typed(make_binary(BinOp::Div, clone_expr(ex), clone_expr(ey), loc))->type;
  if (!is_float(ex->type.elem) && !is_float(ey->type.elem)) user_error(loc, fname + "() needs floating-point operands");
  // every node typed: the quotient's shape is the operands' broadcast (a scalar 1.0 over a tensor)
  ExprP px = typed(make_cast(ex, t.elem, loc)), py = typed(make_cast(ey, t.elem, loc));
  if (t.elem != Scalar::F32) return L.tensor(typed(make_binary(BinOp::Div, px, py, loc)));
  ExprP q = typed(make_binary(BinOp::Div, typed(make_cast(px, Scalar::F64, loc)), typed(make_cast(py, Scalar::F64, loc)), loc));
  return L.tensor(typed(make_cast(q, Scalar::F32, loc)));
}

// A dtype's predicates (x.dtype.is_int() ...), as Triton's dtype answers them.
static bool dtype_predicate(const std::string& what, const Val& d, SourceLoc loc) {
  if (d.pointer_dtype()) return what == "is_ptr";
  Scalar s = d.dt;
  bool integer = is_int(s);
  if (what == "is_floating") return is_float(s);
  if (what == "is_int") return integer;
  if (what == "is_int_signed") return integer && s != Scalar::I1 && !d.uns;
  if (what == "is_int_unsigned") return integer && (s == Scalar::I1 || d.uns);
  if (what == "is_bool" || what == "is_int1") return s == Scalar::I1;
  if (what == "is_fp16") return s == Scalar::F16;
  if (what == "is_bf16") return s == Scalar::BF16;
  if (what == "is_fp32") return s == Scalar::F32;
  if (what == "is_fp64") return s == Scalar::F64;
  if (what == "is_ptr") return false;
  if (what == "is_standard_floating") return s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F32 || s == Scalar::F64;
  user_error(loc, "dtype." + what + "() is not supported yet");
}

bool Lowerer::call_stdlib(const std::string& name, CallArgs& a, Val& out) {
  if (name.rfind("dtype.", 0) == 0) {  // x.dtype.is_floating(): the dtype is the method's self
    const Val* self = a.get(0, "self");
    a.done();
    if (!self || self->k != VK::DType) user_error(a.loc, name + "() needs a dtype");
    out = Val::of_bool(dtype_predicate(name.substr(6), *self, a.loc));
    return true;
  }
  if (name.rfind("tl.", 0) != 0) return false;
  std::string tl = name.substr(3);
  SourceLoc loc = a.loc;
  if (stdlib_cpp_names().count(tl)) {
    auto need = [&](size_t i, const char* n) -> const Val& {
      const Val* v = a.get(i, n);
      if (!v) user_error(loc, a.fname + "() missing argument '" + n + "'");
      return *v;
    };
    if (tl == "to_tensor") {
      Val x = need(0, "x");
      a.done();
      if (x.k == VK::Tensor) out = x;
      else if (x.k == VK::Int || x.k == VK::Float || x.k == VK::Bool) out = number_tensor(*this, x, loc);
      else user_error(a.loc_of(0, "x"), "tl.to_tensor() cannot convert " + py_type_name(x) + " to a tensor");
      return true;
    }
    if (tl == "add" || tl == "sub" || tl == "mul") {  // sanitize_overflow: the overflow checks Triton's sanitizer adds (none here)
      Val x = need(0, "x"), y = need(1, "y");
      a.get(2, "sanitize_overflow");
      a.done();
      out = binop(tl == "add" ? "+" : tl == "sub" ? "-" : "*", x, y, loc);
      return true;
    }
    if (tl == "logical_and" || tl == "logical_or") {  // x.logical_and(y): methods of int1 tensors in Triton
      Val x = need(0, "self"), y = need(1, "other");
      a.done();
      for (const Val* v : {&x, &y})
        if (v->k == VK::Tensor && (v->t.ptr || v->t.elem != Scalar::I1))
          user_error(loc, "x." + tl + "() needs int1 (boolean) operands, got " + py_type_name(*v));
      out = binop(tl == "logical_and" ? "&" : "|", x, y, loc);
      return true;
    }
    if (tl == "broadcast") {  // tl.broadcast(input, other): both broadcast to their common shape (leading 1s added)
      Val x = need(0, "input"), y = need(1, "other");
      a.done();
      ExprP ex = ir(x, a.loc_of(0, "input")), ey = ir(y, a.loc_of(1, "other"));
      std::optional<Shape> common = broadcast_shapes(ex->type.shape, ey->type.shape);
      if (!common)
        user_error(loc, "tl.broadcast(): shapes " + shape_str(ex->type.shape) + " and " + shape_str(ey->type.shape) + " are not compatible");
      std::vector<ExprP> shape;
      for (int64_t d : *common) shape.push_back(typed(make_const_int(d, loc)));
      std::vector<Val> items;
      for (auto [e, v] : {std::pair<ExprP, const Val*>{ex, &x}, {ey, &y}}) {
        std::vector<ExprP> sh;
        for (const ExprP& d : shape) sh.push_back(clone_expr(d));
        Val r = tensor(typed(make_broadcast(e, sh, loc)), v->bufs);
        r.uns = v->k == VK::Tensor && v->uns;
        items.push_back(r);
      }
      out = Val::tuple(items);
      return true;
    }
    if (tl == "expect_zero") {  // x itself (Triton's debug builds assert it, its fpsan mode zeroes it)
      Val x = need(0, "x");
      need(1, "mask");
      a.done();
      out = x;
      return true;
    }
    Val x = need(0, "x"), y = need(1, "y");
    bool ieee = tl == "div_rn", approx = false;
    if (tl == "fdiv") {
      for (auto [i, n, flag] : {std::tuple<size_t, const char*, bool*>{2, "ieee_rounding", &ieee}, {3, "approx", &approx}})
        if (const Val* v = a.get(i, n)) {
          if (!v->compile_time()) user_error(a.loc_of(i, n), "tl.fdiv() argument '" + std::string(n) + "' must be a compile-time bool");
          *flag = truthy(*v, a.loc_of(i, n));
        }
      if (ieee && approx) user_error(loc, "tl.fdiv(): approx and ieee_rounding cannot both be True");
    }
    a.done();
    if (ieee) {
      out = ieee_divide(*this, x, y, loc, a.fname);
      precise_div = true;
    } else {  // Triton's `/` on floats (arith.divf); approx=True: div.approx.f32 on the GPU, `/` here
      out = binop("/", x, y, loc);
      if (out.k == VK::Tensor && !is_float(out.t.elem)) user_error(loc, "tl.fdiv() needs floating-point operands");
    }
    return true;
  }
  const ModuleInfo& m = prelude();
  std::string fname = tl;
  // The reductions below are the builtin ones where they already compute what Triton's library does,
  // and always where the prelude itself calls them.
  const bool from_prelude = !frames_.empty() && frames_.back().mod == &m;
  if (tl == "max" || tl == "min" || tl == "argmax" || tl == "argmin") {
    // tl.max / tl.min as Triton's library computes them: floats NaN-ignoring, types narrower than 32
    // bits widened first (the result is f32 / int32); with return_indices (and argmax / argmin) NaN
    // lanes left out as the TTIR reader leaves them (as -inf for a max, inf for a min), no widening
    const Val* x = a.get(0, "input");
    const bool arg = tl[0] == 'a';
    const Val* ri = arg ? nullptr : a.get(2, "return_indices");
    std::fill(a.pos_used.begin(), a.pos_used.end(), false);
    std::fill(a.kw_used.begin(), a.kw_used.end(), false);
    if (from_prelude || !x || x->k != VK::Tensor || x->t.ptr || (ri && !ri->compile_time())) return false;
    const bool indices = arg || (ri && truthy(*ri, loc));
    if (indices ? !is_float(x->t.elem) : !is_float(x->t.elem) && x->t.elem != Scalar::I1 && scalar_bytes(x->t.elem) >= 4) return false;
    fname = indices && !arg ? "_" + tl + "_indices" : "_" + tl;
  } else if (tl == "sum" || tl == "cumsum" || tl == "cumprod") {
    // the accumulation type Triton's library picks (8/16-bit integers and bools in 32 bits, f16 sums
    // in f16, `dtype=` where given) and unsigned scans; the builtin reduction where it agrees
    const Val* x = a.get(0, "input");
    const Val* dt = a.get(3, "dtype");
    std::fill(a.pos_used.begin(), a.pos_used.end(), false);
    std::fill(a.kw_used.begin(), a.kw_used.end(), false);
    if (!x || x->k != VK::Tensor || x->t.ptr) return false;
    bool narrow = x->t.elem == Scalar::I1 || scalar_bytes(x->t.elem) < 4;
    bool given = dt && dt->k != VK::None;
    bool redirect = tl == "sum" ? narrow || given : (narrow && !is_float(x->t.elem)) || x->uns || given;
    if (!redirect || from_prelude) return false;
    fname = "_" + tl;
  } else if (tl == "item") {  // x.item() (a method only)
    fname = "_item";
  } else if (tl == "swizzle2d") {  // of tensors (the builtin takes scalars: one IR node for both results)
    auto tile = [](const Val& v) { return v.k == VK::Tensor && !v.t.is_scalar(); };
    bool any = std::any_of(a.pos.begin(), a.pos.end(), tile);
    for (const auto& kw : a.kw) any = any || tile(kw.second);
    if (!any) return false;
    fname = "_swizzle2d";
  } else if (!m.jit.count(tl) || tl[0] == '_') {
    return false;
  }
  if (fname != tl && fname != "_item" && fname != "_swizzle2d") {  // a reduction: its axis checked here, as the builtin's is
    const Val* x = a.get(0, "input");
    const Val* ax = a.get(1, "axis");
    std::fill(a.pos_used.begin(), a.pos_used.end(), false);
    std::fill(a.kw_used.begin(), a.kw_used.end(), false);
    int64_t rank = x->t.rank();
    if (ax && ax->k == VK::Int && (ax->i < -rank || ax->i >= std::max<int64_t>(rank, 1)))
      user_error(loc, "axis " + std::to_string(ax->i) + " is out of range for " + x->t.str());
  }
  Val fn = global(m, fname, loc);
  // A failed check inside the prelude (a static_assert, a shape the library cannot take) is reported
  // at the kernel's call, in the words of the check (a static assertion's with the function named).
  const Val* x = a.pos.empty() ? nullptr : &a.pos[0];
  for (size_t i = 0; i < a.kw.size() && !x; ++i)
    if (a.kw[i].first == "x" || a.kw[i].first == "input") x = &a.kw[i].second;
  static const std::set<std::string> tiles = {"sort", "topk", "bitonic_merge", "flip", "softmax", "ravel", "squeeze", "unsqueeze"};
  if (tiles.count(tl) && x && (x->k != VK::Tensor || x->t.ptr || (x->t.is_scalar() && tl != "unsqueeze")))
    user_error(a.pos.empty() ? loc : a.pos_loc[0], a.fname + "() needs a tensor of numbers, got " + py_type_name(*x));
  try {
    out = call_function(*fn.fn, m, a);
  } catch (const UserError& e) {
    if (e.loc.file < 0 || Sources::name(e.loc.file) != kPreludePath) throw;
    std::string msg = e.what();
    user_error(loc, msg.rfind("static assertion failed", 0) == 0 ? a.fname + "(): " + msg : msg);
  }
  return true;
}

}  // namespace dtsim::py
