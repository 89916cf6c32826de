// The Triton frontend's expression evaluation: Python operators on compile-time values (Python
// semantics) and on runtime values (IR nodes with Triton's semantics), names, attributes,
// subscripts and calls.
#include <cmath>
#include <limits>

#include "pyfront/Lower.h"

namespace dtsim::py {

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

double num(const Val& v) { return v.k == VK::Float ? v.f : static_cast<double>(v.i); }

int64_t checked(__int128 r, SourceLoc loc) {
  if (r > std::numeric_limits<int64_t>::max() || r < std::numeric_limits<int64_t>::min())
    user_error(loc, "compile-time integer overflows 64 bits");
  return static_cast<int64_t>(r);
}

// Python's floor division and modulo on compile-time integers.
int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Binary operators on two compile-time values (Python semantics).
Val fold(const std::string& op, const Val& a, const Val& b, SourceLoc loc) {
  if (a.k == VK::Str && b.k == VK::Str) {
    if (op == "+") return Val::of_str(a.text + b.text);
    if (op == "==") return Val::of_bool(a.text == b.text);
    if (op == "!=") return Val::of_bool(a.text != b.text);
  }
  if (a.k == VK::Tuple && b.k == VK::Tuple && op == "+") {
    std::vector<Val> items = a.items;
    items.insert(items.end(), b.items.begin(), b.items.end());
    return Val::tuple(items);
  }
  if (op == "==" || op == "!=") {
    bool eq;
    if (a.number() && b.number()) eq = num(a) == num(b);
    else if (a.k == VK::DType && b.k == VK::DType) eq = a.dt == b.dt && a.t.ptr == b.t.ptr && a.uns == b.uns;
    else if (a.k == VK::None || b.k == VK::None) eq = a.k == b.k;
    else if (a.k == VK::Str || b.k == VK::Str) eq = false;
    else user_error(loc, "cannot compare " + py_type_name(a) + " and " + py_type_name(b) + " at compile time");
    return Val::of_bool(op == "==" ? eq : !eq);
  }
  if (!a.number() || !b.number())
    user_error(loc, "unsupported operand types for " + op + ": " + py_type_name(a) + " and " + py_type_name(b));
  bool flt = a.k == VK::Float || b.k == VK::Float;
  if (op == "<") return Val::of_bool(num(a) < num(b));
  if (op == "<=") return Val::of_bool(num(a) <= num(b));
  if (op == ">") return Val::of_bool(num(a) > num(b));
  if (op == ">=") return Val::of_bool(num(a) >= num(b));
  if (op == "/") {
    if (num(b) == 0) user_error(loc, "division by zero at compile time");
    return Val::of_float(num(a) / num(b));
  }
  if (flt) {
    double x = num(a), y = num(b);
    if (op == "+") return Val::of_float(x + y);
    if (op == "-") return Val::of_float(x - y);
    if (op == "*") return Val::of_float(x * y);
    if (op == "**") return Val::of_float(std::pow(x, y));
    if (op == "//" || op == "%") {
      if (y == 0) user_error(loc, "division by zero at compile time");
      double fl = std::floor(x / y);
      return Val::of_float(op == "//" ? fl : x - fl * y);
    }
    user_error(loc, "unsupported operand types for " + op + ": float");
  }
  int64_t x = a.i, y = b.i;
  if (op == "+") return Val::of_int(checked(static_cast<__int128>(x) + y, loc));
  if (op == "-") return Val::of_int(checked(static_cast<__int128>(x) - y, loc));
  if (op == "*") return Val::of_int(checked(static_cast<__int128>(x) * y, loc));
  if (op == "//" || op == "%") {
    if (y == 0) user_error(loc, "integer division by zero at compile time");
    return Val::of_int(op == "//" ? py_floordiv(x, y) : py_mod(x, y));
  }
  if (op == "**") {
    if (y < 0) return Val::of_float(std::pow(static_cast<double>(x), static_cast<double>(y)));
    __int128 r = 1;
    for (int64_t i = 0; i < y; ++i) r = checked(r * x, loc);
    return Val::of_int(static_cast<int64_t>(r));
  }
  bool both_bool = a.k == VK::Bool && b.k == VK::Bool;
  if (op == "&") return both_bool ? Val::of_bool(x & y) : Val::of_int(x & y);
  if (op == "|") return both_bool ? Val::of_bool(x | y) : Val::of_int(x | y);
  if (op == "^") return both_bool ? Val::of_bool(x ^ y) : Val::of_int(x ^ y);
  if (op == "<<") {
    if (y < 0 || y > 63) user_error(loc, "shift count out of range at compile time");
    return Val::of_int(checked(static_cast<__int128>(x) << y, loc));
  }
  if (op == ">>") {
    if (y < 0) user_error(loc, "negative shift count");
    return Val::of_int(y > 63 ? (x < 0 ? -1 : 0) : x >> y);
  }
  user_error(loc, "unsupported operator " + op);
}

// The Python operator `op` on tensors (IR.h's op table; `and`/`or` short-circuit and are lowered apart).
std::optional<BinOp> ir_binop(const std::string& op) {
  for (BinOp b : kAllBinOps) {
    const OpInfo& i = op_info(b);
    if (i.form == OpForm::Infix && i.cat != OpCat::Logical && op == i.py) return b;
  }
  return std::nullopt;
}

}  // namespace

Val Lowerer::binop(const std::string& op, const Val& a, const Val& b, SourceLoc loc) {
  if (a.compile_time() && b.compile_time()) return fold(op, a, b, loc);
  if (a.k == VK::Pair || b.k == VK::Pair) user_error(loc, "tl.swizzle2d() returns two values: write `a, b = tl.swizzle2d(...)`");
  if (unsigned_operands(a, b)) return unsigned_binop(op, a, b, loc);
  auto bop = ir_binop(op);
  if (!bop) {
    if (op == "**") unsupported(loc, "'**' on tensors");
    if (op == "@") unsupported(loc, "'@' on tensors (use tl.dot)");
    user_error(loc, "unsupported operator " + op);
  }
  ExprP ea = ir(a, loc), eb = ir(b, loc);
  std::set<std::string> bufs = a.bufs;
  bufs.insert(b.bufs.begin(), b.bufs.end());
  Val r = tensor(make_binary(*bop, ea, eb, loc), bufs);
  if (r.t.ptr) r.uns = (a.k == VK::Tensor && a.t.ptr) ? a.uns : b.uns;  // a pointer to unsigned elements stays one
  return r;
}

Val Lowerer::eval(const Node& n) {
  switch (n.kind) {
    case NK::Name: return lookup(n.text, n.loc);
    case NK::Int:
      if (n.big) user_error(n.loc, "integer literal " + n.text + " does not fit 64 bits");
      return Val::of_int(n.ival);
    case NK::Float: return Val::of_float(n.fval);
    case NK::Str: return Val::of_str(n.text);
    case NK::NoneLit: return Val::none();
    case NK::TrueLit: return Val::of_bool(true);
    case NK::FalseLit: return Val::of_bool(false);
    case NK::Ellipsis: user_error(n.loc, "'...' is not supported here");
    case NK::FStr: {
      std::string s = n.parts[0];
      for (size_t i = 0; i < n.kids.size(); ++i) {
        Val v = eval(*n.kids[i]);
        if (!v.compile_time()) user_error(n.kids[i]->loc, "an f-string with runtime values can only be printed (print / tl.device_print / print_if)");
        s += py_repr(v) + n.parts[i + 1];
      }
      return Val::of_str(s);
    }
    case NK::Attr: return attribute(eval(*n.kids[0]), n.text, n.loc);
    case NK::Call: return eval_call(n);
    case NK::Tuple:
    case NK::List: {
      std::vector<Val> items;
      for (const NodeP& k : n.kids) {
        if (k->kind == NK::Starred) {
          Val t = eval(*k->kids[0]);
          if (t.k != VK::Tuple) user_error(k->loc, "only a tuple can be unpacked with *");
          items.insert(items.end(), t.items.begin(), t.items.end());
        } else {
          items.push_back(eval(*k));
        }
      }
      return Val::tuple(items);
    }
    case NK::Starred: user_error(n.loc, "'*' is only allowed in calls and tuples");
    case NK::BinOp: {
      Val a = eval(*n.kids[0]);
      Val b = eval(*n.kids[1]);
      return binop(n.op, a, b, n.loc);
    }
    case NK::UnaryOp: {
      Val x = eval(*n.kids[0]);
      if (n.op == "+") return x;
      if (x.compile_time()) {
        if (n.op == "not") return Val::of_bool(!truthy(x, n.loc));
        if (x.k == VK::Float && n.op == "-") return Val::of_float(-x.f);
        if ((x.k == VK::Int || x.k == VK::Bool) && n.op == "-") return Val::of_int(checked(-static_cast<__int128>(x.i), n.loc));
        if ((x.k == VK::Int || x.k == VK::Bool) && n.op == "~") return Val::of_int(~x.i);
        user_error(n.loc, "bad operand type for unary " + n.op + ": " + py_type_name(x));
      }
      if (n.op == "not") {
        if (!x.t.is_scalar()) user_error(n.loc, "'not' needs a scalar; use ~ on tensors");
        ExprP e = ir(x, n.loc);
        if (e->type.elem != Scalar::I1) e = typed(make_binary(BinOp::Ne, e, typed(make_const_int(0, n.loc)), n.loc));
        return tensor(make_unary(UnOp::Not, e, n.loc));
      }
      Val r = tensor(make_unary(n.op == "-" ? UnOp::Neg : UnOp::Not, ir(x, n.loc), n.loc));
      r.uns = x.uns && !x.t.ptr && r.t.elem != Scalar::I1;  // -x and ~x wrap alike
      return r;
    }
    case NK::BoolOp: {
      Val cur = eval(*n.kids[0]);
      for (size_t i = 1; i < n.kids.size(); ++i) {
        if (cur.compile_time()) {
          bool t = truthy(cur, n.kids[i - 1]->loc);
          if ((n.op == "and" && !t) || (n.op == "or" && t)) return cur;
          cur = eval(*n.kids[i]);
          continue;
        }
        Val nxt = eval(*n.kids[i]);
        if (!cur.t.is_scalar() || (nxt.k == VK::Tensor && !nxt.t.is_scalar()))
          user_error(n.loc, "'" + n.op + "' needs scalars; use & and | on tensors");
        cur = tensor(make_binary(n.op == "and" ? BinOp::LAnd : BinOp::LOr, ir(cur, n.loc), ir(nxt, n.kids[i]->loc), n.loc));
      }
      return cur;
    }
    case NK::Compare: {
      Val left = eval(*n.kids[0]);
      Val result;
      for (size_t i = 0; i < n.ops.size(); ++i) {
        Val right = eval(*n.kids[i + 1]);
        const std::string& op = n.ops[i];
        Val r;
        if (op == "is" || op == "is not") {
          if (!left.compile_time() || !right.compile_time()) {
            bool same = left.k == right.k;  // a tensor is never None
            r = Val::of_bool(op == "is" ? (same && left.k != VK::Tensor) : !(same && left.k != VK::Tensor));
          } else {
            bool same = left.k == right.k && (left.k == VK::None || fold("==", left, right, n.loc).i);
            r = Val::of_bool(op == "is" ? same : !same);
          }
        } else if (op == "in" || op == "not in") {
          if (right.k != VK::Tuple || !left.compile_time()) user_error(n.loc, "'in' works on compile-time tuples only");
          bool found = false;
          for (const Val& it : right.items)
            if (it.compile_time() && (it.k == left.k || (it.number() && left.number())) && fold("==", left, it, n.loc).i) found = true;
          r = Val::of_bool(op == "in" ? found : !found);
        } else {
          r = binop(op, left, right, n.loc);
        }
        if (i == 0) {
          result = r;
        } else if (result.compile_time() && r.compile_time()) {
          result = Val::of_bool(truthy(result, n.loc) && truthy(r, n.loc));
        } else {
          user_error(n.loc, "chained comparisons of runtime values are not supported; combine them with &");
        }
        left = right;
      }
      return result;
    }
    case NK::IfExp: {
      Val c = eval(*n.kids[0]);
      if (c.compile_time()) return eval(truthy(c, n.kids[0]->loc) ? *n.kids[1] : *n.kids[2]);
      Val a = eval(*n.kids[1]), b = eval(*n.kids[2]);
      ExprP ec = ir(c, n.loc);
      if (ec->type.elem != Scalar::I1) ec = typed(make_binary(BinOp::Ne, ec, typed(make_const_int(0, n.loc)), n.loc));
      std::set<std::string> bufs = a.bufs;
      bufs.insert(b.bufs.begin(), b.bufs.end());
      return tensor(make_where(ec, ir(a, n.loc), ir(b, n.loc), n.loc), bufs);
    }
    case NK::Subscript: {
      Val v = eval(*n.kids[0]);
      if (v.k == VK::Tuple || v.k == VK::Str) {
        if (n.kids.size() != 2 || n.kids[1]->kind == NK::Slice) user_error(n.loc, "only a single index into a compile-time tuple is supported");
        Val i = eval(*n.kids[1]);
        if (i.k != VK::Int) user_error(n.kids[1]->loc, "a tuple index must be a compile-time int");
        int64_t len = v.k == VK::Tuple ? static_cast<int64_t>(v.items.size()) : static_cast<int64_t>(v.text.size());
        int64_t idx = i.i < 0 ? i.i + len : i.i;
        if (idx < 0 || idx >= len) user_error(n.kids[1]->loc, "index " + std::to_string(i.i) + " out of range");
        if (v.k == VK::Str) return Val::of_str(v.text.substr(static_cast<size_t>(idx), 1));
        return v.items[static_cast<size_t>(idx)];
      }
      if (v.k == VK::Constexpr) return v;  // tl.constexpr[...]
      if (v.k != VK::Tensor) user_error(n.loc, "cannot index " + py_type_name(v));
      // x[:, None], x[None, :], x[None], x[..., None]: insert unit axes
      ExprP e = ir(v, n.loc);
      int rank = e->type.rank();
      int pos = 0, consumed = 0;
      bool ellipsis = false;
      size_t items = n.kids.size() - 1;
      for (size_t i = 1; i <= items; ++i) {
        const Node& it = *n.kids[i];
        if (it.kind == NK::NoneLit) {
          e = typed(make_expand_dims(e, pos, it.loc));
          ++pos;
        } else if (it.kind == NK::Slice) {
          if ((it.kids[0] || it.kids[1] || it.kids[2]) && debugger)
            user_error(it.loc, "slicing a tensor with bounds works on the value printed: write the subscript last, as in "
                               "(x + 1)[1:4]");
          if (it.kids[0] || it.kids[1] || it.kids[2]) unsupported(it.loc, "slicing a tensor with bounds");
          ++pos;
          ++consumed;
        } else if (it.kind == NK::Ellipsis) {
          if (ellipsis) user_error(it.loc, "only one '...' per subscript");
          ellipsis = true;
          int rest = 0;
          for (size_t j = i + 1; j <= items; ++j)
            if (n.kids[j]->kind == NK::Slice) ++rest;
          int skip = rank - consumed - rest;
          pos += skip;
          consumed += skip;
        } else if (debugger) {
          user_error(it.loc, "indexing a tensor with a number works on the value printed: write the subscript last, "
                             "as in (x + 1)[3] (Triton kernels index tensors with ':' and None only)");
        } else {
          unsupported(it.loc, "indexing a tensor with a value (only ':' and None subscripts exist)");
        }
      }
      if (consumed > rank) user_error(n.loc, "too many ':' for a tensor of rank " + std::to_string(rank));
      Val r = tensor(e, v.bufs);
      return r;
    }
    case NK::Slice: user_error(n.loc, "a slice is only allowed in a subscript");
    case NK::Dict: unsupported(n.loc, "a dict or set in a kernel");
    default: user_error(n.loc, "this expression is not supported in a Triton kernel");
  }
}

Val Lowerer::eval_call(const Node& n) {
  const Node& callee_node = *n.kids[0];
  Val callee = eval(callee_node);
  CallArgs a;
  a.loc = start_loc(callee_node);
  // Printing calls read their f-strings themselves (runtime fields become printed values).
  bool prints = (callee.k == VK::Builtin || callee.k == VK::Host) &&
                (callee.text == "print" || callee.text == "tl.device_print" || callee.text == "print_if");
  size_t npos = n.kids.size() - 1 - n.kw.size();
  for (size_t i = 1; i <= npos; ++i) {
    const Node& an = *n.kids[i];
    if (an.kind == NK::Starred) {
      Val t = eval(*an.kids[0]);
      if (t.k != VK::Tuple) user_error(an.loc, "only a tuple can be unpacked with *");
      for (const Val& x : t.items) {
        a.pos.push_back(x);
        a.pos_loc.push_back(an.loc);
        a.pos_nodes.push_back(nullptr);
      }
      continue;
    }
    a.pos.push_back(prints && an.kind == NK::FStr ? Val::of_str("") : eval(an));
    a.pos_loc.push_back(start_loc(an));
    a.pos_nodes.push_back(&an);
  }
  for (size_t k = 0; k < n.kw.size(); ++k) {
    a.kw.push_back({n.kw[k], eval(*n.kids[1 + npos + k])});
    a.kw_loc.push_back(start_loc(*n.kids[1 + npos + k]));
  }
  switch (callee.k) {
    case VK::Func:
      a.fname = callee.fn->text;
      return call_function(*callee.fn, *callee.mod, a);
    case VK::Builtin:
      a.fname = callee.text;
      if (callee.self) {
        a.pos.insert(a.pos.begin(), *callee.self);
        a.pos_loc.insert(a.pos_loc.begin(), a.loc);
        a.pos_nodes.insert(a.pos_nodes.begin(), nullptr);
      }
      return call_builtin(callee.text, a);
    case VK::Host:
      if (callee.text == "breakpoint_if" || callee.text == "print_if" || callee.text == "cdiv" || callee.text == "breakpoint") {
        a.fname = callee.text;
        return call_builtin(callee.text, a);
      }
      user_error(a.loc, q(callee.text) + " is not a @triton.jit function and cannot be called from a kernel");
    case VK::Constexpr:
      if (a.pos.size() != 1) user_error(a.loc, "tl.constexpr() takes one value");
      return a.pos[0];
    case VK::DType:
      if (a.pos.size() != 1) user_error(a.loc, "a dtype call takes one value");
      a.fname = "tl.cast";
      a.pos.push_back(callee);
      a.pos_loc.push_back(a.loc);
      return call_builtin("tl.cast", a);
    default: user_error(a.loc, py_type_name(callee) + " is not callable");
  }
}

}  // namespace dtsim::py
