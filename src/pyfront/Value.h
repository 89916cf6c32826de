// The Triton frontend's compile-time values: what a Python name holds while a kernel is
// specialized. Python numbers, strings, dtypes, tuples, functions and modules live only at compile
// time; a `Tensor` is a runtime value: an IR expression with its inferred type.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "pyfront/PyAst.h"

namespace dtsim::py {

struct ModuleInfo;

enum class VK : uint8_t {
  None, Int, Float, Bool, Str, DType, Tuple, Tensor,
  Func,     // a @triton.jit function (fn, mod)
  Host,     // a plain Python function or an unknown import (text: its name)
  Module,   // text: "triton", "triton.language", "triton.language.math", or a sibling module (mod)
  Builtin,  // text: "tl.load", "range", "min", ...; self: the bound tensor for methods
  Pair,     // swizzle2d(): two values in one IR node (e)
  Block,    // a block pointer or tensor descriptor (BlockPointers.cpp): text "block_ptr" / "tensor_descriptor",
            // t the element type and block shape, items base, extents, strides (and offsets), i padding NaN
  Constexpr // the `tl.constexpr` marker
};

struct Val {
  VK k = VK::None;
  int64_t i = 0;
  double f = 0;
  std::string text;
  Scalar dt = Scalar::F32;
  std::vector<Val> items;
  ExprP e;
  Type t;
  std::string var;                  // Tensor: the IR variable holding it ("" = an expression)
  std::set<std::string> bufs;       // Tensor pointers: the buffers it may point into
  const Node* fn = nullptr;         // Func
  const ModuleInfo* mod = nullptr;  // Func / Module
  std::shared_ptr<Val> self;        // Builtin: bound tensor (x.to, x.sum, ...)
  // DType: tl.uint8 ... tl.uint64 (dt: the signless type of that width); Tensor: unsigned integer
  // values (a pointer: to unsigned elements). Pyfront's Unsigned.cpp gives them Triton's meaning.
  bool uns = false;

  bool compile_time() const { return k != VK::Tensor && k != VK::Pair; }
  bool number() const { return k == VK::Int || k == VK::Float || k == VK::Bool; }
  static Val none() { return Val{}; }
  static Val of_int(int64_t v) { Val x; x.k = VK::Int; x.i = v; return x; }
  static Val of_float(double v) { Val x; x.k = VK::Float; x.f = v; return x; }
  static Val of_bool(bool v) { Val x; x.k = VK::Bool; x.i = v; return x; }
  static Val of_str(std::string s) { Val x; x.k = VK::Str; x.text = std::move(s); return x; }
  static Val of_dtype(Scalar s) { Val x; x.k = VK::DType; x.dt = s; return x; }
  static Val of_udtype(Scalar s) { Val x = of_dtype(s); x.uns = true; return x; }
  // tl.pointer_type(s): a dtype whose t.ptr is set (dt: the element type)
  static Val of_pointer_dtype(Scalar s) { Val x = of_dtype(s); x.t = Type{s, true, {}}; return x; }
  bool pointer_dtype() const { return k == VK::DType && t.ptr; }
  static Val tuple(std::vector<Val> v) { Val x; x.k = VK::Tuple; x.items = std::move(v); return x; }
  static Val builtin(std::string name) { Val x; x.k = VK::Builtin; x.text = std::move(name); return x; }
};

// What Python prints for a compile-time value (static_print, f-strings, messages).
std::string py_repr(const Val& v);
// The kind of a value in messages: "int", "str", "tensor i32[64]", ...
std::string py_type_name(const Val& v);

}  // namespace dtsim::py
