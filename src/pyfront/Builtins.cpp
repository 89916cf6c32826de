// The Triton frontend's library: tl.* functions, tensor methods and attributes, Python builtins
// usable in kernels, and the practitioner's guide's breakpoint_if / print_if.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "ir/Fma.h"
#include "ir/Hints.h"
#include "ir/InlinePtx.h"
#include "ir/Scaled.h"
#include "ir/Select.h"
#include "ir/Verify.h"

#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

const std::map<std::string, Scalar>& dtype_names() {
  static const std::map<std::string, Scalar> m = {
      {"float16", Scalar::F16}, {"bfloat16", Scalar::BF16}, {"float32", Scalar::F32}, {"float64", Scalar::F64},
      {"int32", Scalar::I32},   {"int64", Scalar::I64},     {"int1", Scalar::I1},     {"fp16", Scalar::F16},
      {"bf16", Scalar::BF16},   {"fp32", Scalar::F32},      {"fp64", Scalar::F64},      {"int8", Scalar::I8},
      {"int16", Scalar::I16},   {"float8e4nv", Scalar::F8E4M3}, {"float8e5", Scalar::F8E5M2}, {"fp8e4nv", Scalar::F8E4M3},
      {"fp8e5", Scalar::F8E5M2}, {"float8e4b15", Scalar::F8E4B15}, {"fp8e4b15", Scalar::F8E4B15},
      {"float8e4b8", Scalar::F8E4B8}, {"fp8e4b8", Scalar::F8E4B8}, {"float8e5b16", Scalar::F8E5B16}, {"fp8e5b16", Scalar::F8E5B16}};
  return m;
}
// tl.uint8 ... tl.uint64: the signless type of the width, with Val::uns (Unsigned.cpp).
const std::map<std::string, Scalar>& unsigned_dtype_names() {
  static const std::map<std::string, Scalar> m = {{"uint8", Scalar::I8}, {"uint16", Scalar::I16}, {"uint32", Scalar::I32}, {"uint64", Scalar::I64}};
  return m;
}
bool unsupported_dtype(const std::string& n) {
  static const std::set<std::string> s = {"void"};
  return s.count(n) > 0;
}

// The element types Triton (3.9, semantic.py) accepts for each atomic, with its own message where it
// refuses one: read-modify-writes need 32- or 64-bit elements (f16 and bf16: atomic_add only), float
// atomic_max/atomic_min f32 or f64, atomic_cas 16-, 32- or 64-bit elements. The IR and `.tile` take
// more (i8/i16 updates run as compare-and-swap loops); a Triton kernel is held to Triton's set.
void triton_atomic_elem_check(AtomicOp op, Scalar et, SourceLoc loc, const std::string& fname) {
  static const std::map<Scalar, const char*> names = {
      {Scalar::I1, "int1"},   {Scalar::I8, "int8"},          {Scalar::I16, "int16"},        {Scalar::I32, "int32"},
      {Scalar::I64, "int64"}, {Scalar::F16, "fp16"},         {Scalar::BF16, "bf16"},        {Scalar::F32, "fp32"},
      {Scalar::F64, "fp64"},  {Scalar::F8E4M3, "fp8e4nv"},   {Scalar::F8E5M2, "fp8e5"},     {Scalar::F8E4B15, "fp8e4b15"},
      {Scalar::F8E4B8, "fp8e4b8"}, {Scalar::F8E5B16, "fp8e5b16"}};
  std::string ty = names.count(et) ? names.at(et) : scalar_name(et);
  std::string name = atomicop_py(op);
  std::string pre = fname + "() on a pointer to " + ty + ": Triton rejects it (";
  int bits = et == Scalar::I1 ? 1 : scalar_bytes(et) * 8;
  if (op == AtomicOp::Cas) {
    if (bits != 16 && bits != 32 && bits != 64) user_error(loc, pre + "\"atomic_cas only supports elements with width {16, 32, 64}\")");
    return;
  }
  if ((et == Scalar::F16 || et == Scalar::BF16) && op != AtomicOp::Add) user_error(loc, pre + "\"" + name + " does not support " + ty + "\")");
  if (et == Scalar::I16 || bits < 16) user_error(loc, pre + "\"" + name + " does not support " + ty + "\")");
  if ((op == AtomicOp::Max || op == AtomicOp::Min) && is_float(et) && et != Scalar::F32 && et != Scalar::F64)
    user_error(loc, pre + "\"" + name + " not supported for dtype " + ty + "\")");
}

// The tensor methods that mirror tl functions (x.to(...), x.sum(axis) ...).
bool is_method(const std::string& n) {
  static const std::set<std::string> s = {"to", "reshape", "trans", "permute", "expand_dims", "broadcast_to", "sum", "max", "min",
                                          "argmax", "argmin", "cast", "view", "gather", "histogram", "split",
                                          // tensor methods of Triton's standard library (Stdlib.cpp) and math functions
                                          "flip", "ravel", "softmax", "sigmoid", "cdiv", "xor_sum", "reduce_or", "cumsum",
                                          "cumprod", "reduce", "associative_scan", "exp", "exp2", "log", "log2", "cos", "sin",
                                          "sqrt", "sqrt_rn", "rsqrt", "abs", "erf", "floor", "ceil", "item", "logical_and", "logical_or"};
  return s.count(n) > 0;
}

struct Builder {
  Lowerer& L;
  CallArgs& a;

  const Val& need(size_t i, const std::string& name) {
    const Val* v = a.get(i, name);
    if (!v) user_error(a.loc, a.fname + "() missing argument " + q(name));
    return *v;
  }
  const Val* opt(size_t i, const std::string& name) {
    const Val* v = a.get(i, name);
    return v && v->k != VK::None ? v : nullptr;
  }
  SourceLoc at(size_t i, const std::string& name) const { return a.loc_of(i, name); }
  Val tensor_arg(size_t i, const std::string& name) {
    const Val& v = need(i, name);
    if (v.k != VK::Tensor) {
      if (v.number()) return L.tensor(L.ir(v, at(i, name)));
      user_error(at(i, name), a.fname + "() argument " + q(name) + " must be a tensor, got " + py_type_name(v));
    }
    return v;
  }
  int64_t int_arg(size_t i, const std::string& name) {
    const Val& v = need(i, name);
    if (v.k != VK::Int && v.k != VK::Bool) user_error(at(i, name), a.fname + "() argument " + q(name) + " must be a compile-time int, got " + py_type_name(v));
    return v.i;
  }
  std::vector<int64_t> int_list(const Val& v, SourceLoc loc, const std::string& what) {
    std::vector<int64_t> out;
    if (v.k == VK::Int) return {v.i};
    if (v.k != VK::Tuple) user_error(loc, what + " must be a compile-time tuple or list of ints, got " + py_type_name(v));
    for (const Val& x : v.items) {
      if (x.k != VK::Int) user_error(loc, what + " must be compile-time ints, got " + py_type_name(x));
      out.push_back(x.i);
    }
    return out;
  }
  // shape given as one tuple argument or as several ints (reshape(x, 8, 8))
  std::vector<int64_t> shape_rest(size_t first, const std::string& name) {
    if (a.pos.size() > first + 1) {
      std::vector<int64_t> s;
      for (size_t i = first; i < a.pos.size(); ++i) s.push_back(int_arg(i, name));
      return s;
    }
    return int_list(need(first, name), at(first, name), a.fname + "() " + name);
  }
  Scalar dtype_arg(const Val& v, SourceLoc loc) {
    if (v.k != VK::DType) user_error(loc, a.fname + "() needs a dtype (tl.float32, ...), got " + py_type_name(v));
    if (v.pointer_dtype()) user_error(loc, a.fname + "() needs an element type, got the pointer type " + py_repr(v));
    return v.dt;
  }
  std::vector<ExprP> consts(const std::vector<int64_t>& s) {
    std::vector<ExprP> out;
    for (int64_t d : s) out.push_back(typed(make_const_int(d, a.loc)));
    return out;
  }
  void ignore(std::initializer_list<const char*> names) {
    for (const char* n : names) a.get(1000, n);
  }
};

// The op whose Triton function is `tl.<name>` (IR.h's op tables: call-form ops with a py spelling).
template <class Op, size_t N> std::optional<Op> tl_op(const Op (&all)[N], const std::string& name) {
  for (Op op : all)
    if (op_info(op).form == OpForm::Call && op_info(op).py[0] && name == op_info(op).py) return op;
  return std::nullopt;
}

ExprP as_i1(Lowerer& L, ExprP e, SourceLoc loc) {
  if (e->type.elem == Scalar::I1 && !e->type.ptr) return e;
  return typed(make_binary(BinOp::Ne, e, typed(make_const_int(0, loc)), loc));
}

// The guide's condition form: '=0,>1' -> pid_0 == 0 and pid_1 > 1 ('' is always true).
ExprP pid_condition(Lowerer& L, const std::string& conds, const std::vector<Val>& pids, SourceLoc loc) {
  ExprP out;
  std::string s;
  for (char c : conds)
    if (c != ' ') s += c;
  size_t field = 0, b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    std::string f = s.substr(b, e - b);
    if (!f.empty()) {
      if (field > 2) user_error(loc, "condition " + q(conds) + " has more than 3 fields");
      std::string op;
      for (const char* o : {"<=", ">=", "!=", "==", "<", ">", "="})
        if (f.rfind(o, 0) == 0) {
          op = o;
          break;
        }
      if (op.empty()) user_error(loc, "condition field " + q(f) + ": rules may only use < > >= <= = !=");
      std::string num = f.substr(op.size());
      char* end = nullptr;
      long v = std::strtol(num.c_str(), &end, 10);
      if (num.empty() || *end) user_error(loc, "condition field " + q(f) + ": expected an integer after " + op);
      if (op == "=") op = "==";
      Val cmp = L.binop(op, pids[field], Val::of_int(v), loc);
      if (cmp.compile_time()) cmp = L.tensor(L.ir(cmp, loc));
      out = out ? typed(make_binary(BinOp::And, out, as_i1(L, cmp.e, loc), loc)) : as_i1(L, cmp.e, loc);
    }
    ++field;
    b = e + 1;
  }
  return out;
}

// print / tl.device_print / print_if. Plain arguments: the leading compile-time ones form the
// text, the runtime ones are the values (one Print statement). An f-string prints one line per
// runtime field, labelled by the text before it ("pid = {pid} | offs = {offs}" gives the lines
// "pid = <pid>" and "offs = <offs>"); compile-time fields are formatted into the text.
void emit_prints(Lowerer& L, const CallArgs& a, SourceLoc loc, std::vector<StmtP>& out) {
  std::string text;
  std::vector<ExprP> values;
  auto flush = [&] {
    while (!text.empty() && text.back() == ' ') text.pop_back();
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Print;
    s->loc = loc;
    s->text = text;
    s->args = values;
    out.push_back(s);
    text.clear();
    values.clear();
  };
  // unsigned integers narrower than 64 bits print as their zero extension (the value Triton prints)
  auto value_ir = [&](const Val& v, SourceLoc at) {
    ExprP e = L.ir(v, at);
    if (v.k == VK::Tensor && v.uns && !v.t.ptr && is_int(v.t.elem) && v.t.elem != Scalar::I1 && v.t.elem != Scalar::I64)
      e = L.typed_tree(zero_extend_i64(e, v.t.elem, at));
    return e;
  };
  auto strip_separators = [](const std::string& s) {
    size_t p = s.find_first_not_of(" ,|;\t");
    return p == std::string::npos ? std::string() : s.substr(p);
  };
  for (size_t i = 0; i < a.pos.size(); ++i) {
    const Node* n = i < a.pos_nodes.size() ? a.pos_nodes[i] : nullptr;
    if (n && n->kind == NK::FStr) {
      text += n->parts[0];
      for (size_t k = 0; k < n->kids.size(); ++k) {
        Val v = L.eval(*n->kids[k]);
        if (v.compile_time()) {
          text += py_repr(v) + n->parts[k + 1];
          continue;
        }
        values.push_back(value_ir(v, n->kids[k]->loc));
        flush();
        text = strip_separators(n->parts[k + 1]);
      }
      continue;
    }
    const Val& v = a.pos[i];
    if (v.compile_time() && values.empty()) {
      text += (text.empty() ? "" : " ") + py_repr(v);
    } else {
      values.push_back(value_ir(v, a.pos_loc[i]));
    }
  }
  if (!strip_separators(text).empty() || !values.empty() || out.empty()) flush();
}

}  // namespace

ExprP arange_along(int64_t n, int axis, int rank, SourceLoc loc) {
  ExprP idx = typed(make_arange(typed(make_const_int(0, loc)), typed(make_const_int(n, loc)), loc));
  for (int b = 0; b < rank; ++b)
    if (b != axis) idx = typed(make_expand_dims(idx, b < axis ? 0 : b, loc));
  return idx;
}

Val Lowerer::attribute(const Val& v, const std::string& attr, SourceLoc loc) {
  if (v.k == VK::Module) {
    if (v.mod) return global(*v.mod, attr, loc);
    if (v.text == "triton") {
      if (attr == "language") {
        Val m;
        m.k = VK::Module;
        m.text = "triton.language";
        return m;
      }
      return Val::builtin("triton." + attr);
    }
    if (v.text == "triton.language") {
      if (attr == "math" || attr == "libdevice" || attr == "extra") {
        Val m;
        m.k = VK::Module;
        m.text = "triton.language.math";
        return m;
      }
      if (attr == "constexpr") {
        Val c;
        c.k = VK::Constexpr;
        return c;
      }
      if (auto it = dtype_names().find(attr); it != dtype_names().end()) return Val::of_dtype(it->second);
      if (auto it = unsigned_dtype_names().find(attr); it != unsigned_dtype_names().end()) return Val::of_udtype(it->second);
      if (unsupported_dtype(attr)) unsupported(loc, "the dtype tl." + attr);
      return Val::builtin("tl." + attr);
    }
    if (v.text == "triton.language.math") {
      if (attr == "libdevice" || attr == "cuda") return v;  // tl.extra.cuda.libdevice.tanh
      return Val::builtin("tl." + attr);
    }
  }
  if (v.k == VK::Builtin && (v.text == "tl.PropagateNan" || v.text == "tl.PropagateNan")) return Val::of_str("PropagateNan." + attr);
  if (v.k == VK::Block) return block_attribute(v, attr, loc);
  if (v.k == VK::Tensor) {
    if (attr == "shape") {
      std::vector<Val> items;
      for (int64_t d : v.t.shape) items.push_back(Val::of_int(d));
      return Val::tuple(items);
    }
    if (attr == "dtype") {  // a pointer tensor's: the pointer type (its .element_ty the element's)
      Val d = v.t.ptr ? Val::of_pointer_dtype(v.t.elem) : Val::of_dtype(v.t.elem);
      d.uns = v.uns;
      return d;
    }
    if (attr == "numel") return Val::of_int(v.t.numel());
    if (attr == "T") {
      CallArgs a;
      a.fname = "tl.trans";
      a.loc = loc;
      a.pos = {v};
      a.pos_loc = {loc};
      return call_builtin("tl.trans", a);
    }
    if (is_method(attr)) {
      Val m = Val::builtin(attr == "to" ? "tl.cast" : "tl." + attr);
      m.self = std::make_shared<Val>(v);
      return m;
    }
    unsupported(loc, "the tensor attribute ." + attr);
  }
  if (v.k == VK::DType && !v.t.shape.empty() && attr == "element_ty") {
    // a block pointer's dtype is pointer<block<elem, shape>>: its element_ty the block type (t.shape
    // kept, not a pointer), whose element_ty is the element type
    Val d = Val::of_dtype(v.dt);
    if (v.t.ptr) d.t = Type{v.dt, false, v.t.shape};
    d.uns = v.uns;
    return d;
  }
  if (v.pointer_dtype()) {
    if (attr == "element_ty") {
      Val d = Val::of_dtype(v.dt);
      d.uns = v.uns;
      return d;
    }
    user_error(loc, "the pointer type " + py_repr(v) + " has no attribute " + q(attr) + " here (element_ty is read)");
  }
  if (v.k == VK::DType) {
    if (attr == "primitive_bitwidth") return Val::of_int(v.dt == Scalar::I1 ? 1 : scalar_bytes(v.dt) * 8);
    if (attr == "int_bitwidth" && is_int(v.dt) && !v.pointer_dtype()) return Val::of_int(v.dt == Scalar::I1 ? 1 : scalar_bytes(v.dt) * 8);
    if (attr.rfind("is_", 0) == 0) {  // is_floating(), is_int(), is_int_signed() ... (Stdlib.cpp)
      Val m = Val::builtin("dtype." + attr);
      m.self = std::make_shared<Val>(v);
      return m;
    }
  }
  if (v.k == VK::Host && v.text == "pdb" && attr == "set_trace")
    user_error(loc, "pdb.set_trace() cannot stop inside a kernel (host code): call breakpoint() there (dtsim stops at that line in "
                    "every instance), or breakpoint_if('=1', ...), or run with --break-at FILE:LINE [if COND]");
  if (v.k == VK::Host)
    user_error(loc, "'" + v.text + "." + attr + "' is host code: a kernel can use only compile-time constants, tl.* and @triton.jit functions");
  if (v.k == VK::Constexpr && attr == "value") return v;
  if (v.number() && attr == "value") return v;
  if (v.k == VK::Int && attr == "bit_length") {  // a Python int's method, on compile-time ints
    Val m = Val::builtin("int.bit_length");
    m.self = std::make_shared<Val>(v);
    return m;
  }
  user_error(loc, py_type_name(v) + " has no attribute " + q(attr));
}

Val Lowerer::call_builtin_signless(const std::string& name0, CallArgs& a) {
  std::string name = name0;
  Builder B{*this, a};
  SourceLoc loc = a.loc;
  auto unary = [&](UnOp op) {
    Val x = B.tensor_arg(0, "x");
    a.done();
    return tensor(make_unary(op, ir(x, loc), loc));
  };
  // ---- Python builtins ----
  if (name == "range") user_error(loc, "range() can only be used in a for loop");
  if (name == "int.bit_length") {
    const Val& v = B.need(0, "self");
    a.done();
    uint64_t m = v.i < 0 ? 0 - static_cast<uint64_t>(v.i) : static_cast<uint64_t>(v.i);
    int64_t n = 0;
    for (; m; m >>= 1) ++n;
    return Val::of_int(n);
  }
  if (name == "len") {
    const Val& v = B.need(0, "obj");
    a.done();
    if (v.k == VK::Tuple) return Val::of_int(static_cast<int64_t>(v.items.size()));
    if (v.k == VK::Str) return Val::of_int(static_cast<int64_t>(v.text.size()));
    user_error(loc, "len() of " + py_type_name(v));
  }
  if (name == "min" || name == "max") {
    std::vector<Val> xs = a.pos;
    if (xs.size() == 1 && xs[0].k == VK::Tuple) xs = xs[0].items;
    for (size_t i = 0; i < a.pos.size(); ++i) a.get(i, "");
    a.done();
    if (xs.empty()) user_error(loc, name + "() needs arguments");
    if (std::all_of(xs.begin(), xs.end(), [](const Val& v) { return v.compile_time(); })) {
      Val best = xs[0];
      for (size_t i = 1; i < xs.size(); ++i) {
        Val lt = binop(name == "min" ? "<" : ">", xs[i], best, loc);
        if (lt.i) best = xs[i];
      }
      return best;
    }
    // Runtime values: as Triton's frontend takes them, tl.minimum / tl.maximum folded left to right.
    for (const Val& v : xs) {
      if (v.k != VK::Tensor && !v.compile_time()) user_error(loc, name + "() of " + py_type_name(v));
      if (v.uns) unsupported(loc, name + "() of unsigned runtime values (use tl.minimum / tl.maximum)");
    }
    ExprP e = ir(xs[0], loc);
    for (size_t i = 1; i < xs.size(); ++i) e = typed(make_binary(name == "min" ? BinOp::Min : BinOp::Max, e, ir(xs[i], loc), loc));
    return tensor(e);
  }
  if (name == "int" || name == "float" || name == "bool") {
    const Val& v = B.need(0, "x");
    a.done();
    if (!v.compile_time()) user_error(loc, name + "() of a runtime value; use .to(tl.int32) / .to(tl.float32)");
    if (v.k == VK::Str) {
      if (name == "float") {
        std::string t = v.text;
        for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (t == "inf" || t == "+inf" || t == "infinity") return Val::of_float(INFINITY);
        if (t == "-inf" || t == "-infinity") return Val::of_float(-INFINITY);
        if (t == "nan") return Val::of_float(NAN);
        char* end = nullptr;
        double d = std::strtod(v.text.c_str(), &end);
        if (!v.text.empty() && *end == '\0') return Val::of_float(d);
      }
      user_error(loc, name + "() of the string '" + v.text + "'");
    }
    double d = v.k == VK::Float ? v.f : static_cast<double>(v.i);
    if (name == "int") return Val::of_int(static_cast<int64_t>(d));
    if (name == "float") return Val::of_float(d);
    return Val::of_bool(d != 0);
  }
  if (name == "abs") {
    const Val& v = B.need(0, "x");
    if (v.k == VK::Int) { a.done(); return Val::of_int(v.i < 0 ? -v.i : v.i); }
    if (v.k == VK::Float) { a.done(); return Val::of_float(std::fabs(v.f)); }
    return unary(UnOp::Abs);
  }
  if (name == "triton.cdiv" || name == "cdiv" || name == "tl.cdiv") {
    Val x = B.need(0, "x"), d = B.need(1, "div");
    a.done();
    if (x.compile_time() && d.compile_time()) {
      if (x.k != VK::Int || d.k != VK::Int) user_error(loc, "cdiv() needs integers");
      if (d.i == 0) user_error(loc, "cdiv() by zero");
      Val s = binop("+", x, Val::of_int(d.i - 1), loc);
      return binop("//", s, d, loc);
    }
    return tensor(make_binary(BinOp::Cdiv, ir(x, loc), ir(d, loc), loc));
  }
  if (name == "triton.next_power_of_2") {
    int64_t n = B.int_arg(0, "n");
    a.done();
    int64_t p = 1;
    while (p < n) p <<= 1;
    return Val::of_int(p);
  }
  if (name == "print" || name == "tl.device_print") {
    std::vector<StmtP> out;
    for (size_t i = 0; i < a.pos.size(); ++i) a.get(i, "");
    B.ignore({"hex", "sep", "end", "flush"});
    a.done();
    emit_prints(*this, a, loc, out);
    for (auto& s : out) emit(s);
    return Val::none();
  }
  if (name == "print_if" || name == "breakpoint_if" || name == "breakpoint") {
    bool is_print = name == "print_if";
    ExprP cond;
    if (name == "breakpoint") {  // Python's breakpoint() in a kernel: a stop at this line in every instance
      for (size_t i = 0; i < a.pos.size(); ++i) a.get(i, "");
      for (const auto& kw : a.kw) a.get(1000, kw.first);  // passed to sys.breakpointhook in Python: nothing here
      a.done();
    } else {
      size_t off = is_print ? 1 : 0;
      if (is_print) B.need(0, "txt");
      const Val& conds = B.need(off, "conds");
      if (conds.k != VK::Str) user_error(a.loc_of(off, "conds"), name + "() conditions must be a string like '=0,>1'");
      std::vector<Val> pids;
      for (int i = 0; i < 3; ++i) {
        const Val* p = a.get(off + 1 + static_cast<size_t>(i), "pid_" + std::to_string(i));
        Val v = p ? *p : Val::of_int(0);
        if (v.k == VK::Tuple && v.items.size() == 1) v = v.items[0];  // the helper's default [0]
        pids.push_back(v);
      }
      a.done();
      cond = pid_condition(*this, conds.text, pids, loc);
    }
    if (is_print) {
      CallArgs pa = a;
      pa.pos.resize(1);
      pa.pos_nodes.resize(1);
      std::vector<StmtP> prints;
      emit_prints(*this, pa, loc, prints);
      if (!cond) {
        for (auto& s : prints) emit(s);
      } else {
        emit(make_if(cond, prints, {}, loc));
      }
      return Val::none();
    }
    // breakpoint_if: the condition goes into a variable (a statement without a line of its own);
    // the debugger stops at the empty `if` on this line when the variable is true.
    std::string var = fresh("breakpoint_if_" + std::to_string(loc.line));
    ExprP c = cond ? cond : typed(make_const_bool(true, loc));
    emit(make_assign(var, c, SourceLoc{}));
    blocks_.back().declared[var] = Type{Scalar::I1, false, {}};
    ExprP ref = make_var(var, loc);
    ref->type = Type{Scalar::I1, false, {}};
    emit(make_if(ref, {}, {}, loc));
    break_at.push_back(Sources::name(loc.file) + ":" + std::to_string(loc.line) + " if " + var);
    return Val::none();
  }
  if (name.rfind("triton.", 0) == 0) {
    if (name == "triton.jit" || name == "triton.autotune" || name == "triton.heuristics" || name == "triton.Config")
      user_error(loc, name + " cannot be called inside a kernel");
    unsupported(loc, name);
  }
  if (name.rfind("tl.", 0) != 0) user_error(loc, q(name) + " cannot be called from a kernel");
  std::string tl = name.substr(3);

  // ---- program ids ----
  if (tl == "program_id" || tl == "num_programs") {
    int64_t axis = B.int_arg(0, "axis");
    a.done();
    if (axis < 0 || axis > 2) user_error(a.loc_of(0, "axis"), "axis must be 0, 1 or 2, got " + std::to_string(axis));
    return tensor(tl == "program_id" ? make_program_id(static_cast<int>(axis), loc) : make_num_programs(static_cast<int>(axis), loc));
  }
  // tl.extra.cuda.globaltimer() / smid(): readings of the machine (IR.h's DT_FOR_EACH_MACHINE_REG)
  if (tl == "globaltimer" || tl == "smid") {
    a.done();
    return tensor(make_machine(tl == "smid" ? MachineReg::SmId : MachineReg::GlobalTimer, loc));
  }
  // ---- creation ----
  if (tl == "arange") {
    int64_t lo = B.int_arg(0, "start"), hi = B.int_arg(1, "end");
    a.done();
    return tensor(make_arange(typed(make_const_int(lo, loc)), typed(make_const_int(hi, loc)), loc));
  }
  if (tl == "zeros" || tl == "full") {
    std::vector<int64_t> shape = B.int_list(B.need(0, "shape"), B.at(0, "shape"), a.fname + "() shape");
    Val value = tl == "zeros" ? Val::of_int(0) : B.need(1, "value");
    size_t di = tl == "zeros" ? 1 : 2;
    const Val& dt = B.need(di, "dtype");
    Scalar s = B.dtype_arg(dt, B.at(di, "dtype"));
    a.done();
    Val r = tensor(make_full(B.consts(shape), ir(value, loc), s, loc));
    r.uns = dt.uns;
    return r;
  }
  if (tl == "zeros_like" || tl == "full_like") {
    Val x = B.tensor_arg(0, "input");
    Val value = tl == "zeros_like" ? Val::of_int(0) : B.need(1, "value");
    size_t di = tl == "zeros_like" ? 1 : 2;
    const Val* dt = B.opt(di, "dtype");
    Scalar s = dt ? B.dtype_arg(*dt, B.at(di, "dtype")) : x.t.elem;
    a.done();
    if (x.t.ptr) unsupported(loc, a.fname + "() of a pointer tensor");
    Val r = tensor(x.t.is_scalar() ? make_cast(ir(value, loc), s, loc) : make_full(B.consts(x.t.shape), ir(value, loc), s, loc));
    r.uns = dt ? dt->uns : x.uns;
    return r;
  }
  // ---- memory ----
  if (tl == "load") {
    Val p = B.tensor_arg(0, "pointer");
    const Val* mask = B.opt(1, "mask");
    const Val* other = B.opt(2, "other");
    const Val* bc = B.opt(3, "boundary_check");
    const Val* pad = B.opt(4, "padding_option");
    if (bc && !(bc->k == VK::Tuple && bc->items.empty())) user_error(B.at(3, "boundary_check"), "tl.load(boundary_check=...) needs a block pointer (tl.make_block_ptr), got " + py_type_name(p));
    if (pad && !(pad->k == VK::Str && pad->text.empty())) user_error(B.at(4, "padding_option"), "tl.load(padding_option=...) needs a block pointer (tl.make_block_ptr), got " + py_type_name(p));
    B.ignore({"cache_modifier", "eviction_policy", "volatile"});
    a.done();
    if (!p.t.ptr) user_error(B.at(0, "pointer"), "tl.load() needs a pointer, got " + py_type_name(p));
    for (const auto& b : p.bufs) loaded.insert(b);
    ExprP m = mask ? as_i1(*this, ir(*mask, B.at(1, "mask")), B.at(1, "mask")) : nullptr;
    ExprP ld = make_load(ir(p, loc), m, other ? ir(*other, B.at(2, "other")) : nullptr, loc);
    ld->undef_masked = m && !other;  // Triton leaves the masked-off lanes undefined (ir/Undefined.h)
    return tensor(ld);
  }
  if (tl == "store") {
    Val p = B.tensor_arg(0, "pointer");
    Val v = B.need(1, "value");
    const Val* mask = B.opt(2, "mask");
    const Val* bc = B.opt(3, "boundary_check");
    if (bc && !(bc->k == VK::Tuple && bc->items.empty())) user_error(B.at(3, "boundary_check"), "tl.store(boundary_check=...) needs a block pointer (tl.make_block_ptr), got " + py_type_name(p));
    B.ignore({"cache_modifier", "eviction_policy"});
    a.done();
    if (!p.t.ptr) user_error(B.at(0, "pointer"), "tl.store() needs a pointer, got " + py_type_name(p));
    for (const auto& b : p.bufs) stored.insert(b);
    ExprP ep = ir(p, loc), ev = ir(v, B.at(1, "value"));
    ExprP em = mask ? as_i1(*this, ir(*mask, B.at(2, "mask")), B.at(2, "mask")) : nullptr;
    // Triton broadcasts the pointer to the value's and the mask's shape.
    Shape s = ep->type.shape;
    for (const ExprP& x : {ev, em})
      if (x) s = broadcast_shapes(s, x->type.shape).value_or(s);
    if (s != ep->type.shape) ep = typed(make_broadcast(ep, B.consts(s), loc));
    emit(make_store(ep, ev, em, loc));
    return Val::none();
  }
  // ---- dot ----
  if (tl == "dot") {
    Val x = B.tensor_arg(0, "input"), y = B.tensor_arg(1, "other");
    const Val* acc = B.opt(2, "acc");
    const Val* prec = B.opt(3, "input_precision");
    const Val* tf32 = B.opt(4, "allow_tf32");
    const Val* imprecise = B.opt(5, "max_num_imprecise_acc");
    const Val* out = B.opt(6, "out_dtype");
    a.done();
    bool f32_operands = x.t.elem == Scalar::F32 || y.t.elem == Scalar::F32;
    // f32 operands: "ieee" multiplies them exactly, "tf32" rounds them to tf32 first (the IR's
    // precision=tf32). Triton's default is tf32 (or $TRITON_F32_DEFAULT); allow_tf32 is the old spelling.
    std::string precision = "tf32";
    if (const char* env = std::getenv("TRITON_F32_DEFAULT")) precision = env;
    SourceLoc ploc = loc;
    if (tf32 && tf32->compile_time()) {
      precision = truthy(*tf32, B.at(4, "allow_tf32")) ? "tf32" : "ieee";
      ploc = B.at(4, "allow_tf32");
    }
    if (prec) {
      if (prec->k != VK::Str) user_error(B.at(3, "input_precision"), "input_precision must be a string");
      precision = prec->text;
      ploc = B.at(3, "input_precision");
    }
    if (f32_operands && precision != "ieee" && precision != "tf32")
      unsupported(ploc, "tl.dot(input_precision=\"" + precision + "\") (f32 operands: \"ieee\" or \"tf32\")");
    if (imprecise && !(imprecise->k == VK::Int && imprecise->i == 0)) unsupported(B.at(5, "max_num_imprecise_acc"), "tl.dot(max_num_imprecise_acc=...)");
    Scalar rt = x.t.elem == Scalar::I8 ? Scalar::I32 : x.t.elem == Scalar::F64 ? Scalar::F64 : Scalar::F32;
    if (out && (out->k != VK::DType || out->pointer_dtype() || out->dt != rt))
      unsupported(B.at(6, "out_dtype"), std::string("tl.dot(out_dtype=") + py_repr(*out) + ") (the result is " + scalar_name(rt) + ")");
    if (x.t.rank() == 3 && y.t.rank() == 3) {  // batched: [B, M, K] @ [B, K, N], one 2-D dot per batch (ir/Scaled.h)
      const Shape& xs = x.t.shape;
      const Shape& ys = y.t.shape;
      if (xs[0] != ys[0] || xs[2] != ys[1])
        user_error(loc, "tl.dot(): the shapes do not match for a batched dot: " + x.t.str() + " @ " + y.t.str());
      const Shape rs{xs[0], xs[1], ys[2]};
      if (acc && (acc->k != VK::Tensor || acc->t.ptr || acc->t.elem != rt || acc->t.shape != rs))
        user_error(B.at(2, "acc"), "tl.dot() accumulator must be " + Type{rt, false, rs}.str() + ", got " + py_repr(*acc));
      BindFn bind = binder(loc);
      ExprP av = bind("dot_a", ir(x, loc)), bv = bind("dot_b", ir(y, loc));
      ExprP cv = acc ? bind("dot_acc", ir(*acc, B.at(2, "acc"))) : nullptr;
      const bool tf = f32_operands && precision == "tf32";
      ExprP d = from_batches(rs[0], rs[1], rs[2], loc, [&](int64_t bi) {
        ExprP one = make_dot(batch_of(clone_expr(av), xs, x.t.elem, bi, loc), batch_of(clone_expr(bv), ys, y.t.elem, bi, loc),
                             cv ? batch_of(clone_expr(cv), rs, rt, bi, loc) : nullptr, loc);
        one->tf32 = tf;
        return one;
      });
      return tensor(typed_tree(d));
    }
    if (x.t.rank() != 2 || y.t.rank() != 2) unsupported(loc, "tl.dot of tensors that are not 2-D or 3-D (" + x.t.str() + ", " + y.t.str() + ")");
    ExprP eacc = acc ? ir(*acc, B.at(2, "acc")) : nullptr;
    ExprP d = make_dot(ir(x, loc), ir(y, loc), eacc, loc);
    d->tf32 = f32_operands && precision == "tf32";
    return tensor(d);
  }
  // ---- dot_scaled (ir/Scaled.h, as the TTIR reader builds it) ----
  if (tl == "dot_scaled") {
    Val x = B.tensor_arg(0, "lhs");
    const Val* xs = B.opt(1, "lhs_scale");
    const Val& xf = B.need(2, "lhs_format");
    Val y = B.tensor_arg(3, "rhs");
    const Val* ys = B.opt(4, "rhs_scale");
    const Val& yf = B.need(5, "rhs_format");
    const Val* acc = B.opt(6, "acc");
    const Val* fast = B.opt(7, "fast_math");
    const Val* xk = B.opt(8, "lhs_k_pack");
    const Val* yk = B.opt(9, "rhs_k_pack");
    const Val* out = B.opt(10, "out_dtype");
    a.done();
    if (fast) truthy(*fast, B.at(7, "fast_math"));  // NaN scales are NaN either way (docs/triton.md)
    if (out && (out->k != VK::DType || out->pointer_dtype() || out->dt != Scalar::F32))
      user_error(B.at(10, "out_dtype"), "tl.dot_scaled(out_dtype=" + py_repr(*out) + "): Triton supports only float32");
    auto side = [&](const Val& v, const Val* sc, const Val& fmt, const Val* kp, size_t i, const std::string& name) {
      if (fmt.k != VK::Str) user_error(B.at(i + 2, name + "_format"), "tl.dot_scaled() " + name + "_format must be a string (\"e2m1\", \"e4m3\", \"e5m2\", \"bf16\", \"fp16\")");
      if (v.t.ptr) user_error(B.at(i, name), "tl.dot_scaled() needs a tensor " + name + ", got a pointer");
      ScaledOperand o;
      o.value = ir(v, B.at(i, name));
      o.elem = v.t.elem;
      o.shape = v.t.shape;
      o.format = fmt.text;
      o.k_pack = !kp || truthy(*kp, B.at(i == 0 ? 8 : 9, name + "_k_pack"));
      if (sc) {
        if (sc->k != VK::Tensor || sc->t.ptr) user_error(B.at(i + 1, name + "_scale"), "tl.dot_scaled() " + name + "_scale must be a tensor or None, got " + py_type_name(*sc));
        o.scale = ir(*sc, B.at(i + 1, name + "_scale"));
        o.scale_elem = sc->t.elem;
        o.scale_shape = sc->t.shape;
      }
      return o;
    };
    ScaledOperand lo = side(x, xs, xf, xk, 0, "lhs"), ro = side(y, ys, yf, yk, 3, "rhs");
    // (rank 3: the batched form, [B, M, K] @ [B, K, N] with a [B, M, N] accumulator)
    const bool batched = lo.shape.size() == 3 && ro.shape.size() == 3;
    const size_t r0 = batched ? 1 : 0;
    int64_t m = lo.shape.size() == r0 + 2 ? lo.shape[r0] * (lo.format == "e2m1" && !lo.k_pack ? 2 : 1) : 0;
    int64_t n = ro.shape.size() == r0 + 2 ? ro.shape[r0 + 1] * (ro.format == "e2m1" && !ro.k_pack ? 2 : 1) : 0;
    const Shape rdims = batched ? Shape{lo.shape[0], m, n} : Shape{m, n};
    ExprP eacc;
    if (acc) {
      eacc = ir(*acc, B.at(6, "acc"));
      if (acc->t.elem != Scalar::F32 || acc->t.shape != rdims)
        user_error(B.at(6, "acc"), "tl.dot_scaled(): the accumulator must be " + Type{Scalar::F32, false, rdims}.str() +
                                       ", got " + acc->t.str());
    } else {
      ExprP zero = make_const_float(0.0, loc);
      zero->weak = false;
      zero->dtype = Scalar::F32;
      eacc = make_full(B.consts(rdims), typed(zero), Scalar::F32, loc);
    }
    return tensor(typed_tree(scaled_dot(lo, ro, eacc, loc, binder(loc))));
  }
  // ---- reductions ----
  if (tl == "reduce" && B.need(0, "input").k == VK::Tuple) {  // tl.reduce((x, y, ...), axis, combine_fn)
    Val xs = B.need(0, "input");
    const Val* axv = B.opt(1, "axis");
    const Val& fn = B.need(2, "combine_fn");
    const Val* kd = B.opt(3, "keep_dims");
    a.done();
    if (!axv || axv->k != VK::Int) user_error(B.at(1, "axis"), "tl.reduce() of a tuple needs a compile-time axis");
    if (kd && kd->i) unsupported(B.at(3, "keep_dims"), "tl.reduce(keep_dims=True) of a tuple");
    return combine_tuple(xs, static_cast<int>(axv->i), false, false, fn, B.at(0, "input"), B.at(2, "combine_fn"), loc);
  }
  if (tl == "associative_scan" && B.need(0, "input").k == VK::Tuple) {  // tl.associative_scan((x, y, ...), axis, combine_fn, reverse)
    Val xs = B.need(0, "input");
    const Val* axv = B.opt(1, "axis");
    const Val& fn = B.need(2, "combine_fn");
    const Val* rev = B.opt(3, "reverse");
    a.done();
    if (!axv || axv->k != VK::Int) user_error(B.at(1, "axis"), "tl.associative_scan() of a tuple needs a compile-time axis");
    return combine_tuple(xs, static_cast<int>(axv->i), true, rev && truthy(*rev, loc), fn, B.at(0, "input"), B.at(2, "combine_fn"), loc);
  }
  if (tl == "reduce") {  // tl.reduce(input, axis, combine_fn, keep_dims=False)
    Val x = B.tensor_arg(0, "input");
    const Val* axv = B.opt(1, "axis");
    const Val& fn = B.need(2, "combine_fn");
    const Val* kd = B.opt(3, "keep_dims");
    a.done();
    if (x.t.ptr || x.t.is_scalar()) user_error(B.at(0, "input"), a.fname + "() needs a tensor, got " + py_type_name(x));
    if (axv && axv->k != VK::Int) user_error(B.at(1, "axis"), "axis must be a compile-time int");
    ExprP e = ir(x, loc);
    int rank = e->type.rank(), axis = 0;
    if (!axv) {
      if (rank > 1) e = typed(make_reshape(e, B.consts({e->type.numel()}), loc));
    } else {
      axis = static_cast<int>(axv->i);
    }
    ExprP r = make_reduce(RedOp::Fn, e, axis, loc);
    r->fn = combine_fn(fn, e->type.elem, B.at(2, "combine_fn"));
    r = typed(r);
    if (kd && kd->i) r = typed(axv ? make_expand_dims(r, axis < 0 ? axis + rank : axis, loc) : make_reshape(r, B.consts(std::vector<int64_t>(static_cast<size_t>(rank), 1)), loc));
    return tensor(r);
  }
  if (std::optional<RedOp> rop = tl_op(kAllRedOps, tl)) {
    Val x = B.tensor_arg(0, "input");
    const Val* axv = B.opt(1, "axis");
    bool want_idx = false;
    bool keep = false;
    if (tl == "max" || tl == "min") {
      const Val* ri = B.opt(2, "return_indices");
      want_idx = ri && ri->i;
      const Val* tb = B.opt(3, "return_indices_tie_break_left");
      if (tb && !tb->i) unsupported(B.at(3, "return_indices_tie_break_left"), "return_indices_tie_break_left=False");
      const Val* kd = B.opt(4, "keep_dims");
      keep = kd && kd->i;
    } else if (tl == "argmax" || tl == "argmin") {
      const Val* tb = B.opt(2, "tie_break_left");
      if (tb && !tb->i) unsupported(B.at(2, "tie_break_left"), "tie_break_left=False");
      const Val* kd = B.opt(3, "keep_dims");
      keep = kd && kd->i;
    } else {
      const Val* kd = B.opt(2, "keep_dims");
      keep = kd && kd->i;
      if (const Val* dt = B.opt(3, "dtype")) {
        Scalar s = B.dtype_arg(*dt, B.at(3, "dtype"));
        x = x.uns || dt->uns ? unsigned_cast(x, s, dt->uns, loc) : tensor(make_cast(ir(x, loc), s, loc));
      }
    }
    a.done();
    if (x.t.ptr || x.t.is_scalar()) user_error(B.at(0, "input"), a.fname + "() needs a tensor, got " + py_type_name(x));
    if (x.uns && is_narrow_int(x.t.elem) && *rop == RedOp::Sum)
      x = unsigned_cast(x, Scalar::I32, true, loc);  // Triton sums narrow unsigned integers as uint32
    auto reduce = [&](RedOp op) {
      ExprP e = ir(x, loc);
      // unsigned order: the signed one with the sign bits flipped (before and after)
      bool flip = x.uns && (op == RedOp::Max || op == RedOp::Min || op == RedOp::Argmax || op == RedOp::Argmin);
      if (flip) e = typed(flip_sign(e, e->type.elem, loc));
      int rank = e->type.rank();
      int axis;
      if (!axv) {
        if (rank > 1) e = typed(make_reshape(e, B.consts({e->type.numel()}), loc));
        axis = 0;
      } else {
        if (axv->k != VK::Int) user_error(B.at(1, "axis"), "axis must be a compile-time int");
        axis = static_cast<int>(axv->i);
      }
      ExprP r = typed(make_reduce(op, e, axis, loc));
      if (keep) {
        if (!axv) {
          r = typed(make_reshape(r, B.consts(std::vector<int64_t>(static_cast<size_t>(rank), 1)), loc));
        } else {
          r = typed(make_expand_dims(r, axis < 0 ? axis + rank : axis, loc));
        }
      }
      if (flip && (op == RedOp::Max || op == RedOp::Min)) r = typed(flip_sign(r, r->type.elem, loc));
      Val out = tensor(r);
      out.uns = x.uns && op != RedOp::Argmax && op != RedOp::Argmin && out.t.elem != Scalar::I1;
      return out;
    };
    Val m = reduce(*rop);
    if (!want_idx) return m;
    return Val::tuple({m, reduce(*rop == RedOp::Max ? RedOp::Argmax : RedOp::Argmin)});
  }
  // ---- scans ----
  std::optional<ScanOp> sop;
  for (ScanOp op : kAllScanOps)
    if (tl == scanop_py(op)) sop = op;
  if (sop || tl == "associative_scan") {
    Val x = B.tensor_arg(0, "input");
    const Val* axv = B.opt(1, "axis");
    const Val* fn = tl == "associative_scan" ? &B.need(2, "combine_fn") : nullptr;
    const Val* rev = B.opt(fn ? 3 : 2, "reverse");
    const Val* dt = fn ? nullptr : B.opt(3, "dtype");
    a.done();
    if (x.t.ptr || x.t.is_scalar()) user_error(B.at(0, "input"), a.fname + "() needs a tensor, got " + py_type_name(x));
    if (axv && axv->k != VK::Int) user_error(B.at(1, "axis"), "axis must be a compile-time int");
    ExprP e = ir(x, loc);
    if (dt) e = typed(make_cast(e, B.dtype_arg(*dt, B.at(3, "dtype")), loc));
    ExprP body;
    if (fn) {
      sop.reset();
      body = combine_fn(*fn, e->type.elem, B.at(2, "combine_fn"), &sop);
      if (!sop) sop = ScanOp::Fn;
    }
    ExprP sc = make_scan(*sop, e, axv ? static_cast<int>(axv->i) : 0, rev && truthy(*rev, loc), loc);
    if (sop == ScanOp::Fn) sc->fn = body;
    return tensor(sc);
  }
  // ---- atomics ----
  std::optional<AtomicOp> aop;
  for (AtomicOp op : kAllAtomicOps)
    if (atomicop_py(op)[0] && tl == atomicop_py(op)) aop = op;
  if (aop) {
    bool cas = *aop == AtomicOp::Cas;
    Val p = B.tensor_arg(0, "pointer");
    Val v1 = B.need(1, cas ? "cmp" : "val");
    const Val* v2 = cas ? &B.need(2, "val") : B.opt(2, "mask");
    const Val* sem = B.opt(3, "sem");
    const Val* scope = B.opt(4, "scope");
    a.done();
    if (!p.t.ptr) user_error(B.at(0, "pointer"), a.fname + "() needs a pointer, got " + py_type_name(p));
    triton_atomic_elem_check(*aop, p.t.elem, loc, a.fname);
    if (p.uns && *aop == AtomicOp::Max) aop = AtomicOp::UMax;  // unsigned elements: Triton's atomic umax/umin
    if (p.uns && *aop == AtomicOp::Min) aop = AtomicOp::UMin;
    for (const auto& b : p.bufs) stored.insert(b), loaded.insert(b);
    ExprP ep = ir(p, loc), e1 = ir(v1, B.at(1, cas ? "cmp" : "val"));
    ExprP e2 = v2 ? (cas ? ir(*v2, B.at(2, "val")) : as_i1(*this, ir(*v2, B.at(2, "mask")), B.at(2, "mask"))) : nullptr;
    Shape shape = ep->type.shape;
    for (const ExprP& x : {e1, e2})
      if (x) shape = broadcast_shapes(shape, x->type.shape).value_or(shape);
    if (shape != ep->type.shape) ep = typed(make_broadcast(ep, B.consts(shape), loc));
    std::string var = fresh(tl);
    StmtP st = make_atomic(*aop, var, {ep, e1, e2}, loc);
    auto word = [&](const Val* w, size_t i, const char* what) {
      if (w->k != VK::Str) user_error(B.at(i, what), std::string(what) + " must be a string");
      return w->text;
    };
    if (sem) {
      auto m = parse_memsem(word(sem, 3, "sem"));
      if (!m) user_error(B.at(3, "sem"), "unknown sem '" + sem->text + "' (acq_rel, relaxed, acquire or release)");
      st->sem = *m;
    }
    if (scope) {
      auto m = parse_memscope(word(scope, 4, "scope"));
      if (!m) user_error(B.at(4, "scope"), "unknown scope '" + scope->text + "' (gpu, cta or sys)");
      st->scope = *m;
    }
    emit(st);
    Type rt{p.t.elem, false, shape};
    blocks_.back().declared[var] = rt;
    ExprP ref = make_var(var, loc);
    ref->type = rt;
    Val out = tensor(ref);
    out.var = var;
    out.uns = p.uns;
    if (p.uns) uns_vars_.insert(var);
    else uns_vars_.erase(var);
    return out;
  }
  // ---- elementwise ----
  if (tl == "where") {
    Val c = B.need(0, "condition"), x = B.need(1, "x"), y = B.need(2, "y");
    a.done();
    if (c.compile_time() && x.compile_time() && y.compile_time()) return truthy(c, loc) ? x : y;
    std::set<std::string> bufs = x.bufs;
    bufs.insert(y.bufs.begin(), y.bufs.end());
    return tensor(make_where(as_i1(*this, ir(c, B.at(0, "condition")), loc), ir(x, B.at(1, "x")), ir(y, B.at(2, "y")), loc), bufs);
  }
  if (tl == "umulhi") {  // the high half of the product of x and y as unsigned integers (Triton's mulhiui)
    Val x = B.tensor_arg(0, "x"), y = B.tensor_arg(1, "y");
    a.done();
    if (!is_int(x.t.elem) || !is_int(y.t.elem) || x.t.ptr || y.t.ptr) user_error(loc, "tl.umulhi() needs integer operands, got " + py_type_name(x) + " and " + py_type_name(y));
    return unsigned_binop("umulhi", x, y, loc);
  }
  if (std::optional<BinOp> op = tl_op(kAllBinOps, tl)) {  // minimum, maximum (tl.cdiv folds above)
    Val x = B.need(0, "x"), y = B.need(1, "y");
    // floats: Triton's default propagate_nan=NONE is IEEE minNum / maxNum (a NaN operand left out);
    // tl.PropagateNan.ALL propagates it
    const bool mm = *op == BinOp::Min || *op == BinOp::Max;
    const Val* pn = mm ? B.opt(2, "propagate_nan") : nullptr;
    if (pn && !(pn->k == VK::Str && (pn->text == "PropagateNan.ALL" || pn->text == "PropagateNan.NONE")))
      user_error(B.at(2, "propagate_nan"), "tl." + tl + "() argument 'propagate_nan' must be tl.PropagateNan.NONE or tl.PropagateNan.ALL");
    a.done();
    ExprP e = typed(make_binary(*op, ir(x, loc), ir(y, loc), loc));
    if (mm && is_float(e->type.elem) && !(pn && pn->text == "PropagateNan.ALL")) e->bop = *op == BinOp::Min ? BinOp::MinNum : BinOp::MaxNum;
    return tensor(e);
  }
  if (tl == "clamp") {
    Val x = B.need(0, "x"), lo = B.need(1, "min"), hi = B.need(2, "max");
    const Val* pn = B.opt(3, "propagate_nan");
    a.done();
    if (pn && !(pn->k == VK::Str && (pn->text == "PropagateNan.ALL" || pn->text == "PropagateNan.NONE")))
      user_error(B.at(3, "propagate_nan"), "tl.clamp() argument 'propagate_nan' must be tl.PropagateNan.NONE or tl.PropagateNan.ALL");
    // NONE (the default): IEEE maxNum / minNum, so a NaN x gives a bound (tt.clampf as the GPU lowers it)
    const bool all = pn && pn->text == "PropagateNan.ALL";
    ExprP ex = ir(x, loc);
    const bool fl = is_float(ex->type.elem);
    ExprP m = typed(make_binary(fl && !all ? BinOp::MaxNum : BinOp::Max, ex, ir(lo, B.at(1, "min")), loc));
    return tensor(make_binary(fl && !all ? BinOp::MinNum : BinOp::Min, m, ir(hi, B.at(2, "max")), loc));
  }
  if (std::optional<UnOp> op = tl_op(kAllUnOps, tl)) return unary(*op);  // exp, sqrt, abs ...
  if (tl == "sqrt_rn") return unary(UnOp::Sqrt);
  if (tl == "fma") {
    Val x = B.tensor_arg(0, "x"), y = B.tensor_arg(1, "y"), z = B.tensor_arg(2, "z");
    a.done();
    // x*y+z rounded once (ir/Fma.h, as the TTIR reader)
    ExprP ex = ir(x, loc), ey = ir(y, loc), ez = ir(z, loc);
    ExprP probe = typed(make_binary(BinOp::Add, typed(make_binary(BinOp::Mul, clone_expr(ex), clone_expr(ey), loc)), clone_expr(ez), loc));
    Scalar rt = is_float(probe->type.elem) ? probe->type.elem : Scalar::F32;
    return tensor(typed_tree(fused_multiply_add(ex, ey, ez, rt, loc, binder(loc))));
  }
  if (tl == "inline_asm_elementwise") {  // the PTX block as the IR's ops (ir/InlinePtx.h, as the TTIR reader)
    const Val& text = B.need(0, "asm");
    const Val& cons = B.need(1, "constraints");
    const Val& args = B.need(2, "args");
    const Val& dtype = B.need(3, "dtype");
    const Val* pure = B.opt(4, "is_pure");
    const Val* packv = B.opt(5, "pack");
    a.done();
    if (text.k != VK::Str) user_error(B.at(0, "asm"), "tl.inline_asm_elementwise() asm must be a string");
    if (cons.k != VK::Str) user_error(B.at(1, "constraints"), "tl.inline_asm_elementwise() constraints must be a string");
    if (pure) truthy(*pure, B.at(4, "is_pure"));
    int64_t pack = 1;
    if (packv) {
      if (packv->k != VK::Int) user_error(B.at(5, "pack"), "tl.inline_asm_elementwise() pack must be a compile-time int");
      pack = packv->i;
    }
    std::vector<Val> in = args.k == VK::Tuple ? args.items : std::vector<Val>{args};
    std::vector<PtxOperand> ops;
    Shape shape;
    for (size_t i = 0; i < in.size(); ++i) {
      Val v = in[i];
      if (v.number()) v = tensor(ir(v, B.at(2, "args")));
      if (v.k != VK::Tensor || v.t.ptr) user_error(B.at(2, "args"), "tl.inline_asm_elementwise() args must be tensors, got " + py_type_name(v));
      auto b = broadcast_shapes(shape, v.t.shape);
      if (!b) user_error(B.at(2, "args"), "tl.inline_asm_elementwise() args of shapes that do not broadcast: " + v.t.str());
      shape = *b;
      ops.push_back(PtxOperand{ir(v, B.at(2, "args")), v.t.elem});
    }
    const bool several = dtype.k == VK::Tuple;
    std::vector<Val> dts = several ? dtype.items : std::vector<Val>{dtype};
    std::vector<Scalar> elems;
    for (const Val& d : dts) elems.push_back(B.dtype_arg(d, B.at(3, "dtype")));
    std::vector<StmtP> traps;
    std::vector<ExprP> rs = lower_inline_ptx(text.text, cons.text, static_cast<int>(pack), ops, elems, shape, loc, binder(loc), &traps);
    for (StmtP& t : traps) emit(t);
    std::vector<Val> out;
    for (size_t i = 0; i < rs.size(); ++i) {
      Val r = tensor(typed_tree(rs[i]));
      r.uns = dts[i].uns;
      out.push_back(r);
    }
    return several ? Val::tuple(out) : out[0];
  }
  if (tl == "pointer_type") {  // tl.pointer_type(element_ty[, address_space])
    Scalar s = B.dtype_arg(B.need(0, "element_ty"), B.at(0, "element_ty"));
    const Val* space = B.opt(1, "address_space");
    a.done();
    if (space && !(space->k == VK::Int && space->i == 1)) unsupported(B.at(1, "address_space"), "tl.pointer_type(address_space=...) other than 1");
    Val r = Val::of_pointer_dtype(s);
    r.uns = a.pos.empty() ? false : B.need(0, "element_ty").uns;
    return r;
  }
  if (tl == "cast") {
    Val x = B.tensor_arg(0, "input");
    const Val& dtv = B.need(1, "dtype");
    const Val* rounding = B.opt(2, "fp_downcast_rounding");
    const Val* bitcast = B.opt(3, "bitcast");
    if (dtv.pointer_dtype()) {  // int64 addresses -> pointers (Triton's tt.int_to_ptr; docs/tile-language.md, Addresses)
      a.done();
      if (x.t.ptr) user_error(loc, "casting a pointer to another pointer type is not supported yet by dtsim's own reader (where Triton is installed, its frontend's TTIR reader runs it)");
      if (x.t.elem != Scalar::I64) user_error(B.at(0, "input"), "a pointer is made from int64 addresses, got " + x.t.str());
      Val r = tensor(make_int_to_ptr(ir(x, loc), dtv.dt, loc), x.bufs);  // the buffers of ptr_to_int's pointer, if any
      r.uns = dtv.uns;
      return r;
    }
    Scalar s = B.dtype_arg(dtv, B.at(1, "dtype"));
    a.done();
    if (rounding) {
      // Triton's rule: only for a float to a narrower float; "rtne" is then the default rounding
      const bool downcast = is_float(x.t.elem) && is_float(s) && scalar_bytes(s) < scalar_bytes(x.t.elem);
      if (!downcast)
        user_error(B.at(2, "fp_downcast_rounding"), "fp_downcast_rounding is only for narrowing float conversions, not " +
                                                        std::string(scalar_name(x.t.elem)) + " to " + scalar_name(s));
      if (rounding->k != VK::Str || (rounding->text != "rtne" && rounding->text != "rtz"))
        user_error(B.at(2, "fp_downcast_rounding"), "fp_downcast_rounding must be \"rtne\" or \"rtz\", got " + py_repr(*rounding));
      if (rounding->text == "rtz") unsupported(B.at(2, "fp_downcast_rounding"), "fp_downcast_rounding=\"rtz\"");
    }
    if (x.t.ptr) {  // pointers -> int64 addresses (tt.ptr_to_int)
      if (s != Scalar::I64 || (bitcast && bitcast->i)) user_error(loc, "a pointer converts only to tl.int64 (its address), not " + std::string(scalar_name(s)));
      return tensor(make_ptr_to_int(ir(x, loc), loc), x.bufs);
    }
    if (x.t.elem == s) {  // the same bits; int32 <-> uint32 changes only the meaning
      Val r = x;
      r.uns = dtv.uns;
      return r;
    }
    if (bitcast && bitcast->i) {
      Val r = tensor(make_bitcast(ir(x, loc), s, loc));
      r.uns = dtv.uns;
      return r;
    }
    if (x.uns || dtv.uns) return unsigned_cast(x, s, dtv.uns, loc);
    return tensor(make_cast(ir(x, loc), s, loc));
  }
  // ---- gather, histogram, cat: as the TTIR reader lowers them (the IR's gather and histogram; cat over one more axis) ----
  if (tl == "gather" || tl == "histogram" || tl == "cat" || tl == "join" || tl == "interleave") {
    auto iota_along = [&](int64_t n, int axis, int rank) { return arange_along(n, axis, rank, loc); };
    auto check_size = [&](const Shape& s, const std::string& what) {
      if (static_cast<int>(s.size()) > kMaxRank || shape_numel(s) > kMaxTileElems)
        user_error(loc, what + " needs a tile of " + shape_str(s) + " (at most " + std::to_string(kMaxRank) +
                            " dimensions and 2^20 elements): use smaller blocks");
    };
    if (tl == "gather") {  // tl.gather(src, index, axis)
      Val src = B.tensor_arg(0, "src"), idx = B.tensor_arg(1, "index");
      int64_t ax = B.int_arg(2, "axis");
      a.done();
      int rank = src.t.rank();
      if (src.t.ptr || idx.t.ptr || !is_int(idx.t.elem) || idx.t.rank() != rank || rank == 0)
        user_error(loc, "tl.gather() needs a tensor and an integer index tensor of the same rank, got " + src.t.str() + " and " + idx.t.str());
      if (ax < 0) ax += rank;
      if (ax < 0 || ax >= rank) user_error(B.at(2, "axis"), "tl.gather(): axis " + std::to_string(ax) + " of a rank-" + std::to_string(rank) + " tensor");
      const int axis = static_cast<int>(ax);
      for (int d = 0; d < rank; ++d)
        if (d != axis && src.t.shape[static_cast<size_t>(d)] != idx.t.shape[static_cast<size_t>(d)])
          user_error(loc, "tl.gather(): the index " + idx.t.str() + " must match the source " + src.t.str() + " outside axis " + std::to_string(axis));
      int64_t n = src.t.shape[static_cast<size_t>(axis)];
      // the index goes into a variable (read twice: the range check and the selection)
      std::string iv = fresh("gather_index");
      ExprP ie = ir(idx, B.at(1, "index"));
      emit(make_assign(iv, ie, loc));
      blocks_.back().declared[iv] = ie->type;
      auto iref = [&] {
        ExprP r = make_var(iv, loc);
        r->type = ie->type;
        return r;
      };
      auto s = std::make_shared<Stmt>();
      s->kind = StmtKind::Assert;
      s->loc = loc;
      s->text = "tl.gather: an index is outside [0, " + std::to_string(n) + ") of the gathered axis";
      s->args = {typed(make_binary(BinOp::And, typed(make_binary(BinOp::Ge, iref(), typed(make_const_int(0, loc)), loc)),
                                   typed(make_binary(BinOp::Lt, iref(), typed(make_const_int(n, loc)), loc)), loc))};
      emit(s);
      ExprP index = iref();
      if (index->type.elem == Scalar::I1) index = typed(make_cast(index, Scalar::I32, loc));
      return tensor(typed(make_gather(ir(src, loc), index, axis, loc)));
    }
    if (tl == "histogram") {  // tl.histogram(input, num_bins, mask=None): the IR's histogram
      Val x = B.tensor_arg(0, "input");
      int64_t bins = B.int_arg(1, "num_bins");
      const Val* mask = B.opt(2, "mask");
      a.done();
      if (x.t.ptr || !is_int(x.t.elem) || x.t.rank() != 1) user_error(loc, "tl.histogram() needs a 1-D integer tensor, got " + x.t.str());
      if (bins < 1 || (bins & (bins - 1)) != 0 || bins > kMaxTileElems)
        user_error(B.at(1, "num_bins"), "tl.histogram(): num_bins must be a power of two of at most 2^20, got " + std::to_string(bins));
      // an unsigned 8- or 16-bit input zero-extended (its values of 2^7 / 2^15 and more are bins);
      // u32 and u64 values that read as negative lie past any number of bins either way
      if (x.uns && is_narrow_int(x.t.elem)) x = unsigned_cast(x, Scalar::I32, false, loc);
      ExprP xe = ir(x, loc);
      if (xe->type.elem == Scalar::I1) xe = typed(make_cast(xe, Scalar::I32, loc));
      ExprP m;
      if (mask) {
        SourceLoc ml = B.at(2, "mask");
        m = as_i1(*this, ir(*mask, ml), ml);
        if (m->type.is_scalar()) {
          m = typed(make_full(B.consts(x.t.shape), m, Scalar::I1, loc));
        } else if (m->type.shape != x.t.shape) {
          if (broadcast_shapes(m->type.shape, x.t.shape) != std::optional<Shape>(x.t.shape))
            user_error(ml, "tl.histogram(): the mask " + m->type.str() + " does not broadcast to the input " + x.t.str());
          m = typed(make_broadcast(m, B.consts(x.t.shape), loc));
        }
      }
      return tensor(typed(make_histogram(xe, typed(make_const_int(bins, loc)), m, loc)));
    }
    if (tl == "join" || tl == "interleave") {  // [.., 2] of (a, b); interleave: that flattened along the last axis
      Val x = B.tensor_arg(0, "a"), y = B.tensor_arg(1, "b");
      a.done();
      ExprP ex = ir(x, B.at(0, "a")), ey = ir(y, B.at(1, "b"));
      Shape s = broadcast_shapes(ex->type.shape, ey->type.shape).value_or(Shape{});
      if (ex->type.ptr || ey->type.ptr || !broadcast_shapes(ex->type.shape, ey->type.shape))
        user_error(loc, a.fname + "() needs two tensors that broadcast together, got " + ex->type.str() + " and " + ey->type.str());
      if (ex->type.elem != ey->type.elem) {  // one type, as Triton's binary ops promote
        ExprP probe = typed(make_binary(BinOp::Add, clone_expr(ex), clone_expr(ey), loc));
        if (ex->type.elem != probe->type.elem) ex = typed(make_cast(ex, probe->type.elem, loc));
        if (ey->type.elem != probe->type.elem) ey = typed(make_cast(ey, probe->type.elem, loc));
      }
      int rank = static_cast<int>(s.size()) + 1;
      Shape two = s;
      two.push_back(2);
      check_size(two, a.fname);
      if (s.size() != ex->type.shape.size()) ex = typed(make_broadcast(ex, B.consts(s), loc));
      if (s.size() != ey->type.shape.size()) ey = typed(make_broadcast(ey, B.consts(s), loc));
      ExprP first = typed(make_binary(BinOp::Eq, iota_along(2, rank - 1, rank), typed(make_const_int(0, loc)), loc));
      ExprP e = typed(make_where(first, typed(make_expand_dims(ex, rank - 1, loc)), typed(make_expand_dims(ey, rank - 1, loc)), loc));
      e = typed(make_broadcast(e, B.consts(two), loc));
      std::set<std::string> bufs = x.bufs;
      bufs.insert(y.bufs.begin(), y.bufs.end());
      if (tl == "join") return tensor(e, bufs);
      if (s.empty()) user_error(loc, "tl.interleave() needs tensors, got two scalars");
      Shape flat = s;
      flat.back() *= 2;
      return tensor(make_reshape(e, B.consts(flat), loc), bufs);
    }
    // tl.cat(input, other, can_reorder=False): input's lanes, then other's, along the first axis
    Val x = B.tensor_arg(0, "input"), y = B.tensor_arg(1, "other");
    B.ignore({"can_reorder"});
    a.done();
    if (x.t.ptr || y.t.ptr || x.t.rank() == 0 || x.t.shape != y.t.shape || x.t.elem != y.t.elem)
      user_error(loc, "tl.cat() needs two tensors of one shape and type, got " + x.t.str() + " and " + y.t.str());
    int rank = x.t.rank();
    Shape two = x.t.shape;
    two.insert(two.begin(), 2);
    check_size(two, "tl.cat");
    Shape out = x.t.shape;
    out[0] *= 2;
    ExprP first = typed(make_binary(BinOp::Eq, iota_along(2, 0, rank + 1), typed(make_const_int(0, loc)), loc));
    ExprP e = typed(make_where(first, typed(make_expand_dims(ir(x, loc), 0, loc)), typed(make_expand_dims(ir(y, B.at(1, "other")), 0, loc)), loc));
    std::set<std::string> bufs = x.bufs;
    bufs.insert(y.bufs.begin(), y.bufs.end());
    return tensor(make_reshape(typed(make_broadcast(e, B.consts(two), loc)), B.consts(out), loc), bufs);
  }
  // ---- shapes ----
  if (tl == "reshape" || tl == "view") {
    Val x = B.tensor_arg(0, "input");
    B.ignore({"can_reorder"});
    std::vector<int64_t> s = B.shape_rest(1, "shape");
    a.done();
    int64_t known = 1, neg = -1;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == -1 && neg < 0) neg = static_cast<int64_t>(i);
      else known *= s[i];
    }
    if (neg >= 0 && known > 0) s[static_cast<size_t>(neg)] = x.t.numel() / known;
    return tensor(make_reshape(ir(x, loc), B.consts(s), loc));
  }
  if (tl == "split") {  // tl.split(a): the two halves of a tensor whose last dimension is 2 (join's inverse)
    Val x = B.tensor_arg(0, "a");
    a.done();
    int r = x.t.rank();
    if (x.t.ptr || r == 0 || x.t.shape.back() != 2)
      user_error(loc, "tl.split() needs a tensor whose last dimension is 2, got " + x.t.str());
    // the tensor goes into a variable (read by both halves); each half is the lane selected along the
    // last axis, bit for bit (ir/Select.h)
    std::string xv = fresh("split");
    ExprP xe = ir(x, loc);
    emit(make_assign(xv, xe, loc));
    blocks_.back().declared[xv] = xe->type;
    std::vector<Val> halves;
    for (int64_t lane = 0; lane < 2; ++lane) {
      ExprP cond = typed(make_binary(BinOp::Eq, arange_along(2, r - 1, r, loc), typed(make_const_int(lane, loc)), loc));
      ExprP ref = make_var(xv, loc);
      ref->type = xe->type;
      halves.push_back(tensor(typed_tree(select_lane(cond, ref, r - 1, xe->type.elem, loc)), x.bufs));
    }
    return Val::tuple(halves);
  }
  if (tl == "trans" || tl == "permute") {
    Val x = B.tensor_arg(0, "input");
    std::vector<int64_t> dims;
    if (a.pos.size() > 1 || a.get(1000, "dims")) dims = tl == "trans" && a.pos.size() > 2 ? B.shape_rest(1, "dims") : B.shape_rest(1, "dims");
    a.done();
    int r = x.t.rank();
    if (dims.empty()) {
      if (tl == "permute") user_error(loc, "tl.permute() needs the dims");
      for (int i = r - 1; i >= 0; --i) dims.push_back(i);
    }
    bool identity = true;
    for (size_t i = 0; i < dims.size(); ++i) identity = identity && dims[i] == static_cast<int64_t>(i);
    if (static_cast<int>(dims.size()) != r) user_error(loc, a.fname + "(): " + std::to_string(dims.size()) + " dims for a tensor of rank " + std::to_string(r));
    if (identity) return x;
    if (r == 2) return tensor(make_trans(ir(x, loc), loc));
    std::vector<int64_t> seen(dims.size(), 0);
    for (int64_t d : dims) {
      if (d < 0 || d >= r || seen[static_cast<size_t>(d)]++) user_error(loc, a.fname + "(): the dims must be a permutation of 0.." + std::to_string(r - 1));
    }
    return tensor(make_permute(ir(x, loc), B.consts(dims), loc));
  }
  if (tl == "expand_dims") {
    Val x = B.tensor_arg(0, "input");
    std::vector<int64_t> axes = B.int_list(B.need(1, "axis"), B.at(1, "axis"), "expand_dims() axis");
    a.done();
    ExprP e = ir(x, loc);
    int final_rank = e->type.rank() + static_cast<int>(axes.size());
    std::vector<int64_t> norm;
    for (int64_t ax : axes) norm.push_back(ax < 0 ? ax + final_rank : ax);
    std::sort(norm.begin(), norm.end());
    for (int64_t ax : norm) e = typed(make_expand_dims(e, static_cast<int>(ax), loc));
    return tensor(e, x.bufs);
  }
  if (tl == "broadcast_to") {
    Val x = B.tensor_arg(0, "input");
    std::vector<int64_t> s = B.shape_rest(1, "shape");
    a.done();
    return tensor(make_broadcast(ir(x, loc), B.consts(s), loc), x.bufs);
  }
  // ---- hints ----
  if (tl == "multiple_of" || tl == "max_contiguous" || tl == "max_constancy") {
    Val x = B.need(0, "input");
    std::vector<int64_t> values = B.int_list(B.need(1, "values"), B.at(1, "values"), a.fname + "() values");
    a.done();
    // checked where the launch asks for it (the interpreter with the sanitizer on; ir/Hints.h)
    if (!launch_.hint_checks || x.k != VK::Tensor) return x;
    HintKind k = tl == "multiple_of" ? HintKind::Divisibility : tl == "max_contiguous" ? HintKind::Contiguity : HintKind::Constancy;
    const Node* arg = a.pos_nodes.empty() ? nullptr : a.pos_nodes[0];
    Val m = materialize(x, "hinted", loc);
    for (StmtP s : hint_checks(k, values, m.e, m.e->type, arg && arg->kind == NK::Name ? arg->text : "", loc, binder(loc))) {
      s->args[0] = as_i1(*this, typed_tree(s->args[0]), loc);
      for (size_t i = 1; i < s->args.size(); ++i) s->args[i] = typed_tree(s->args[i]);
      emit(s);
    }
    return m;
  }
  // ---- compile-time and debugging ----
  if (tl == "static_assert") {
    const Val& c = B.need(0, "cond");
    const Val* msg = B.opt(1, "msg");
    a.done();
    if (!c.compile_time()) user_error(B.at(0, "cond"), "tl.static_assert() needs a compile-time condition (use tl.device_assert)");
    if (!truthy(c, loc)) user_error(B.at(0, "cond"), "static assertion failed" + (msg ? ": " + py_repr(*msg) : std::string()));
    return Val::none();
  }
  if (tl == "static_print") {
    std::string s;
    for (size_t i = 0; i < a.pos.size(); ++i) {
      a.get(i, "");
      s += (i ? " " : "") + py_repr(a.pos[i]);
    }
    a.done();
    std::cerr << s << "\n";
    return Val::none();
  }
  if (tl == "device_assert") {
    Val c = B.need(0, "cond");
    const Val* msg = B.opt(1, "msg");
    a.done();
    if (c.compile_time()) {
      if (!truthy(c, loc)) user_error(B.at(0, "cond"), "assertion failed" + (msg ? ": " + py_repr(*msg) : std::string()));
      return Val::none();
    }
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assert;
    s->loc = loc;
    s->text = msg ? py_repr(*msg) : "";
    s->args.push_back(as_i1(*this, ir(c, loc), loc));
    emit(s);
    return Val::none();
  }
  if (tl == "assume") {  // what the compiler may take as true is checked (as the TTIR reader's llvm.intr.assume)
    Val c = B.need(0, "cond");
    a.done();
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assert;
    s->loc = loc;
    s->text = "tl.assume: the assumed condition does not hold (Triton's compiler may miscompile this kernel)";
    s->args.push_back(as_i1(*this, ir(c, loc), loc));
    emit(s);
    return Val::none();
  }
  if (tl == "debug_barrier") {  // an instance runs its statements in order (the TTIR reader's gpu.barrier)
    a.done();
    return Val::none();
  }
  if (tl == "swizzle2d") {
    std::vector<ExprP> xs;
    const char* names[] = {"i", "j", "size_i", "size_j", "size_g"};
    for (size_t i = 0; i < 5; ++i) xs.push_back(ir(B.need(i, names[i]), B.at(i, names[i])));
    a.done();
    Val p;
    p.k = VK::Pair;
    p.e = typed(make_swizzle2d(xs[0], xs[1], xs[2], xs[3], xs[4], loc));
    p.t = p.e->type;
    return p;
  }
  if (tl == "static_range" || tl == "range") user_error(loc, a.fname + "() can only be used in a for loop");
  unsupported(loc, a.fname);
}

namespace {

bool has_unsigned(const Val& v) {
  if (v.k == VK::Tuple) return std::any_of(v.items.begin(), v.items.end(), has_unsigned);
  return (v.k == VK::Tensor || v.k == VK::DType) && v.uns;
}

void mark_unsigned(Val& v) {
  if (v.k == VK::Tuple) {
    for (Val& x : v.items) mark_unsigned(x);
    return;
  }
  if (v.k == VK::Tensor && (v.t.ptr || (is_int(v.t.elem) && v.t.elem != Scalar::I1))) v.uns = true;
}

}  // namespace

// Triton's math functions check their tensor arguments' dtypes (language/math.py's _check_dtype):
// tl.exp of an fp16 tensor is an error there ("Expected dtype ['fp32', 'fp64'] but got fp16"), not
// a computation in f32, so the same call is refused here. Scalars (Python numbers) are not checked.
static void check_math_dtypes(const std::string& name, const CallArgs& a) {
  static const std::set<std::string> f32_f64 = {"tl.exp", "tl.exp2", "tl.log", "tl.log2", "tl.cos", "tl.sin", "tl.sqrt",
                                                "tl.rsqrt", "tl.erf", "tl.floor", "tl.ceil", "tl.sigmoid", "tl.softmax"};
  const bool f32_only = name == "tl.sqrt_rn" || name == "tl.div_rn";
  if (!f32_only && !f32_f64.count(name)) return;
  auto triton_name = [](const Val& v) {
    Scalar e = v.t.elem;
    if (e == Scalar::F16) return std::string("fp16");
    if (e == Scalar::BF16) return std::string("bf16");
    if (e == Scalar::F32) return std::string("fp32");
    if (e == Scalar::F64) return std::string("fp64");
    if (e == Scalar::I1) return std::string("int1");
    if (is_int(e)) return std::string(v.uns ? "uint" : "int") + std::to_string(scalar_bytes(e) * 8);
    return std::string(scalar_name(e));
  };
  auto check = [&](const Val& v, SourceLoc at) {
    if (v.k != VK::Tensor) return;
    if (v.t.elem == Scalar::F32 || (!f32_only && v.t.elem == Scalar::F64)) return;
    user_error(at, a.fname + "(): expected dtype " + std::string(f32_only ? "['fp32']" : "['fp32', 'fp64']") + " but got " +
                       triton_name(v) + ", as Triton's math functions check (convert with .to(tl.float32))");
  };
  for (size_t i = 0; i < a.pos.size(); ++i) check(a.pos[i], i < a.pos_loc.size() ? a.pos_loc[i] : a.loc);
  for (size_t i = 0; i < a.kw.size(); ++i) check(a.kw[i].second, i < a.kw_loc.size() ? a.kw_loc[i] : a.loc);
}

// libdevice's fast_* approximations (f32): the accurate functions, as the TTIR reader lowers them.
static const std::string& libdevice_alias(const std::string& name) {
  static const std::map<std::string, std::string> alias = {
      {"tl.fast_expf", "tl.exp"},   {"tl.fast_logf", "tl.log"}, {"tl.fast_log2f", "tl.log2"}, {"tl.fast_log10f", "tl.log10"},
      {"tl.fast_sinf", "tl.sin"},   {"tl.fast_cosf", "tl.cos"}, {"tl.fast_tanf", "tl.tan"},   {"tl.fast_powf", "tl.pow"},
      {"tl.fast_dividef", "tl.fdiv"}};
  auto it = alias.find(name);
  return it == alias.end() ? name : it->second;
}

Val Lowerer::call_builtin(const std::string& name0, CallArgs& a) {
  const std::string& name = libdevice_alias(name0);
  if (&name != &name0) {
    for (const Val& v : a.pos)
      if (v.k == VK::Tensor && v.t.elem != Scalar::F32)
        user_error(a.loc, name0.substr(3) + "() is libdevice's f32 function: its argument is " + py_type_name(v) + " (convert with .to(tl.float32))");
    a.fname = name;
  }
  check_math_dtypes(name, a);
  if (Val r; call_block(name, a, r)) return r;  // block pointers, tensor descriptors (BlockPointers.cpp)
  if (Val r; call_stdlib(name, a, r)) return r;  // tl.sort, tl.rand, ... (Stdlib.cpp)
  bool any = std::any_of(a.pos.begin(), a.pos.end(), has_unsigned);
  for (const auto& kw : a.kw) any = any || has_unsigned(kw.second);
  return any ? call_builtin_unsigned(name, a) : call_builtin_signless(name, a);
}

// Builtins called with unsigned operands or dtypes. Those that move or combine bits alike for
// either signedness keep their results unsigned; those with an unsigned meaning (casts, creation,
// max/min reductions, atomics, umulhi) handle Val::uns themselves; the others are refused rather
// than run with signed semantics.
Val Lowerer::call_builtin_unsigned(const std::string& name, CallArgs& a) {
  std::string tl = name.rfind("tl.", 0) == 0 ? name.substr(3) : name;
  static const std::set<std::string> keep = {"load", "reshape", "view", "trans", "permute", "expand_dims", "broadcast_to", "broadcast",
                                             "multiple_of", "max_contiguous", "max_constancy", "xor_sum", "reduce_or", "flip", "join",
                                             "interleave", "cat"};
  static const std::set<std::string> own = {"cast", "zeros", "full", "zeros_like", "full_like", "sum", "max", "min", "argmax",
                                            "argmin", "umulhi", "pointer_type", "static_print", "static_assert", "device_assert",
                                            "dot_scaled",  // its bytes are bit patterns
                                            "histogram",   // narrow unsigned inputs zero-extended
                                            "inline_asm_elementwise",
                                            "print", "device_print"};  // unsigned values printed zero-extended (emit_prints)  // bits; its results take their dtypes' signedness
  Builder B{*this, a};
  SourceLoc loc = a.loc;
  bool is_atomic = false;
  for (AtomicOp op : kAllAtomicOps)
    if (atomicop_py(op)[0] && tl == atomicop_py(op)) is_atomic = true;
  if (keep.count(tl)) {
    Val r = call_builtin_signless(name, a);
    mark_unsigned(r);
    return r;
  }
  if (own.count(tl) || is_atomic) return call_builtin_signless(name, a);
  if (tl == "maximum" || tl == "minimum") {
    Val x = B.need(0, "x"), y = B.need(1, "y");
    B.ignore({"propagate_nan"});
    a.done();
    return unsigned_binop(tl, x, y, loc);
  }
  if (tl == "clamp") {
    Val x = B.need(0, "x"), lo = B.need(1, "min"), hi = B.need(2, "max");
    B.ignore({"propagate_nan"});
    a.done();
    return unsigned_binop("minimum", unsigned_binop("maximum", x, lo, loc), hi, loc);
  }
  if (tl == "where") {
    Val c = B.need(0, "condition"), x = B.need(1, "x"), y = B.need(2, "y");
    a.done();
    if (x.compile_time() && y.compile_time()) return truthy(c, loc) ? x : y;
    // the two values promoted as a binary operator's operands, then selected
    if (!unsigned_operands(x, y)) {
      std::fill(a.pos_used.begin(), a.pos_used.end(), false);
      std::fill(a.kw_used.begin(), a.kw_used.end(), false);
      return call_builtin_signless(name, a);
    }
    auto [px, py] = unsigned_promote(x, y, loc);
    std::set<std::string> bufs = x.bufs;
    bufs.insert(y.bufs.begin(), y.bufs.end());
    Val r = tensor(make_where(as_i1(*this, ir(c, B.at(0, "condition")), loc), ir(px, B.at(1, "x")), ir(py, B.at(2, "y")), loc), bufs);
    r.uns = (px.k == VK::Tensor && px.uns) || (py.k == VK::Tensor && py.uns);
    return r;
  }
  if (tl == "store") {  // the value converted to the pointer's element type as Triton converts it
    Val p = B.tensor_arg(0, "pointer");
    const Val* v = a.get(1, "value");
    if (p.t.ptr && v && v->k == VK::Tensor && v->uns && v->t.elem != p.t.elem) {
      Val cv = unsigned_cast(*v, p.t.elem, p.uns, loc);
      for (size_t i = 0; i < a.pos.size(); ++i)
        if (i == 1) a.pos[i] = cv;
      for (auto& kw : a.kw)
        if (kw.first == "value") kw.second = cv;
    }
    std::fill(a.pos_used.begin(), a.pos_used.end(), false);
    std::fill(a.kw_used.begin(), a.kw_used.end(), false);
    return call_builtin_signless(name, a);
  }
  if (name == "triton.cdiv" || name == "cdiv" || name == "tl.cdiv") {
    Val x = B.need(0, "x"), d = B.need(1, "div");
    a.done();
    return binop("//", binop("-", binop("+", x, d, loc), Val::of_int(1), loc), d, loc);
  }
  if (tl == "reduce" || tl == "associative_scan") {  // the combine function gets the unsigned operands as unsigned
    const Val* in = a.get(0, "input");
    std::vector<Val> ins = in && in->k == VK::Tuple ? in->items : std::vector<Val>{in ? *in : Val::none()};
    std::fill(a.pos_used.begin(), a.pos_used.end(), false);
    std::fill(a.kw_used.begin(), a.kw_used.end(), false);
    combine_unsigned_.clear();
    for (const Val& v : ins) combine_unsigned_.push_back(v.k == VK::Tensor && v.uns);
    std::vector<bool> marks = combine_unsigned_;
    Val r;
    try {
      r = call_builtin_signless(name, a);
    } catch (...) {
      combine_unsigned_.clear();
      throw;
    }
    combine_unsigned_.clear();
    if (r.k == VK::Tuple) {
      for (size_t i = 0; i < r.items.size() && i < marks.size(); ++i)
        if (marks[i]) mark_unsigned(r.items[i]);
    } else if (marks.size() == 1 && marks[0]) {
      mark_unsigned(r);
    }
    return r;
  }
  if (name == "abs" || tl == "abs") {  // an unsigned value is its own magnitude
    Val x = B.tensor_arg(0, "x");
    a.done();
    return x;
  }
  user_error(loc, a.fname + "() on unsigned integers (tl.uint8 ... tl.uint64) is not supported by dtsim's .py reader yet "
                            "(python -m dtsim with Triton installed reads the kernel through Triton's frontend)");
}

// Every `tl.NAME` that call_builtin and attribute() give a meaning: the names dispatched on above
// (keep them in step) and the op tables' Triton spellings.
std::vector<std::string> tl_names() {
  std::set<std::string> s = {"arange", "argmax", "argmin", "assume", "associative_scan", "debug_barrier", "broadcast_to", "cast", "cat", "cdiv", "clamp",
                             "constexpr", "device_assert", "device_print", "dot", "dot_scaled", "expand_dims", "fma", "full", "full_like", "gather", "globaltimer", "histogram",
                             "interleave", "join", "pointer_type", "umulhi", "make_block_ptr", "advance", "make_tensor_descriptor",
                             "load_tensor_descriptor", "store_tensor_descriptor",
                             "load", "max_constancy", "max_contiguous", "multiple_of", "num_programs", "permute",
                             "program_id", "range", "reduce", "reshape", "smid", "split", "sqrt_rn", "static_assert", "static_print",
                             "static_range", "store", "swizzle2d", "trans", "view", "where", "zeros", "zeros_like"};
  for (const auto& [name, dt] : dtype_names()) s.insert(name);
  for (const auto& [name, dt] : unsigned_dtype_names()) s.insert(name);
  for (const std::string& name : stdlib_names()) s.insert(name);
  for (UnOp op : kAllUnOps)
    if (op_info(op).form == OpForm::Call && op_info(op).py[0]) s.insert(op_info(op).py);
  for (BinOp op : kAllBinOps)
    if (op_info(op).form == OpForm::Call && op_info(op).py[0]) s.insert(op_info(op).py);
  for (RedOp op : kAllRedOps)
    if (op_info(op).form == OpForm::Call && op_info(op).py[0]) s.insert(op_info(op).py);
  for (ScanOp op : kAllScanOps) s.insert(scanop_py(op));
  for (AtomicOp op : kAllAtomicOps)
    if (atomicop_py(op)[0]) s.insert(atomicop_py(op));
  return std::vector<std::string>(s.begin(), s.end());
}

}  // namespace dtsim::py
