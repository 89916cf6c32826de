// The Triton frontend's type inference on the IR nodes it builds (the verifier's rules, IR.h):
// the lowering needs shapes and element types while it specializes (zeros_like, reshape(-1),
// keep_dims, reductions over every axis); the verifier still checks and annotates the result.
#include <cmath>
#include <sstream>

#include "ir/Printer.h"
#include "ir/Verify.h"
#include "pyfront/Lower.h"

namespace dtsim::py {

ExprP typed(ExprP e) {
  auto arg = [&](size_t i) -> const Type& { return e->args[i]->type; };
  auto bshape = [&](const Shape& a, const Shape& b) { return broadcast_shapes(a, b).value_or(a.size() >= b.size() ? a : b); };
  switch (e->kind) {
    case ExprKind::Const:
      e->type = Type{e->is_float ? (e->weak ? Scalar::F32 : e->dtype) : e->dtype, false, {}};
      break;
    case ExprKind::Var: break;  // set by the caller
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms: e->type = Type{Scalar::I32, false, {}}; break;
    case ExprKind::Arange: e->type = Type{Scalar::I32, false, {e->args[1]->ival - e->args[0]->ival}}; break;
    case ExprKind::Full: {
      Shape s;
      for (size_t i = 0; i + 1 < e->args.size(); ++i) s.push_back(e->args[i]->ival);
      e->type = Type{e->dtype, false, s};
      break;
    }
    case ExprKind::Unary: {
      Scalar t = op_result_elem(op_info(e->uop).rule, arg(0).elem).value_or(arg(0).elem);  // the verifier reports misuse
      e->type = Type{t, false, arg(0).shape};
      break;
    }
    case ExprKind::Binary: {
      const Type &a = arg(0), &b = arg(1);
      Shape s = bshape(a.shape, b.shape);
      if (a.ptr || b.ptr) {
        bool cmp = binop_is_compare(e->bop);
        e->type = Type{a.ptr ? a.elem : b.elem, !cmp, s};
        if (cmp) e->type.elem = Scalar::I1;
        break;
      }
      Scalar p = promote_operands(*e->args[0], *e->args[1]);
      Scalar t = op_result_elem(op_info(e->bop).rule, p).value_or(p);
      e->type = Type{t, false, s};
      break;
    }
    case ExprKind::Where: {
      Shape s = bshape(bshape(arg(0).shape, arg(1).shape), arg(2).shape);
      if (arg(1).ptr) e->type = Type{arg(1).elem, true, s};
      else e->type = Type{promote_operands(*e->args[1], *e->args[2]), false, s};
      break;
    }
    case ExprKind::Cast:
    case ExprKind::Bitcast: e->type = Type{e->dtype, false, arg(0).shape}; break;
    case ExprKind::Scan: {
      int r = static_cast<int>(arg(0).shape.size());
      int ax = e->axis < 0 ? e->axis + r : e->axis;
      if (ax < 0 || ax >= r) user_error(e->loc, "axis " + std::to_string(e->axis) + " is out of range for " + arg(0).str());
      e->type = Type{arg(0).elem == Scalar::I1 ? Scalar::I32 : arg(0).elem, false, arg(0).shape};
      if (!e->fns.empty()) e->type.elem = arg(static_cast<size_t>(e->part)).elem;  // a component of several operands
      break;
    }
    case ExprKind::ExpandDims: {
      Shape s = arg(0).shape;
      int r = static_cast<int>(s.size());
      int ax = e->axis < 0 ? e->axis + r + 1 : e->axis;
      if (ax < 0 || ax > r) user_error(e->loc, "expand_dims axis " + std::to_string(e->axis) + " is out of range for rank " + std::to_string(r));
      s.insert(s.begin() + ax, 1);
      e->type = arg(0).with_shape(s);
      break;
    }
    case ExprKind::Reshape:
    case ExprKind::Broadcast: {
      Shape s;
      for (size_t i = 1; i < e->args.size(); ++i) s.push_back(e->args[i]->ival);
      e->type = arg(0).with_shape(s);
      break;
    }
    case ExprKind::Trans: {
      Shape s = arg(0).shape;
      if (e->args.size() == 1 && s.size() == 2) std::swap(s[0], s[1]);
      for (size_t i = 1; i < e->args.size() && e->args.size() - 1 == s.size(); ++i)
        if (e->args[i]->kind == ExprKind::Const) s[i - 1] = arg(0).shape.at(static_cast<size_t>(e->args[i]->ival));
      e->type = arg(0).with_shape(s);
      break;
    }
    case ExprKind::Load: {
      Shape s = arg(0).shape;
      if (e->args[1]) s = bshape(s, arg(1).shape);
      if (e->args[2]) s = bshape(s, arg(2).shape);
      e->type = Type{arg(0).elem, false, s};
      break;
    }
    case ExprKind::Dot: {
      Shape s{arg(0).shape.size() == 2 ? arg(0).shape[0] : 1, arg(1).shape.size() == 2 ? arg(1).shape[1] : 1};
      e->type = Type{arg(0).elem == Scalar::I8 ? Scalar::I32 : arg(0).elem == Scalar::F64 ? Scalar::F64 : Scalar::F32, false, s};
      break;
    }
    case ExprKind::Reduce: {
      Shape s = arg(0).shape;
      int r = static_cast<int>(s.size());
      int ax = e->axis < 0 ? e->axis + r : e->axis;
      if (ax < 0 || ax >= r) user_error(e->loc, "axis " + std::to_string(e->axis) + " is out of range for " + arg(0).str());
      s.erase(s.begin() + ax);
      Scalar t = op_result_elem(op_info(e->rop).rule, arg(0).elem).value_or(arg(0).elem);
      if (!e->fns.empty()) t = arg(static_cast<size_t>(e->part)).elem;  // a component of several operands
      e->type = Type{t, false, s};
      break;
    }
    case ExprKind::Swizzle2d: e->type = Type{Scalar::I32, false, {}}; break;
    case ExprKind::CombineArg: break;  // set by the caller (the scan's or reduction's element type)
    case ExprKind::IntToPtr: e->type = Type{e->dtype, true, arg(0).shape}; break;
    case ExprKind::PtrToInt: e->type = Type{Scalar::I64, false, arg(0).shape}; break;
    case ExprKind::Machine: e->type = Type{machine_reg_type(static_cast<MachineReg>(e->axis)), false, {}}; break;
    case ExprKind::Gather: e->type = Type{arg(0).elem, false, arg(1).shape}; break;
    case ExprKind::Histogram: e->type = Type{Scalar::I32, false, {e->args[1]->ival}}; break;
  }
  return e;
}

std::string py_repr(const Val& v) {
  switch (v.k) {
    case VK::None: return "None";
    case VK::Int: return std::to_string(v.i);
    case VK::Float: {
      if (std::isinf(v.f)) return v.f > 0 ? "inf" : "-inf";
      if (std::isnan(v.f)) return "nan";
      return format_float_literal(v.f);
    }
    case VK::Bool: return v.i ? "True" : "False";
    case VK::Str: return v.text;
    case VK::DType: {
      std::string n = v.uns ? "uint" + std::to_string(scalar_bytes(v.dt) * 8) : std::string(scalar_name(v.dt));
      return v.t.ptr ? "pointer<" + n + ">" : n;
    }
    case VK::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < v.items.size(); ++i) s += (i ? ", " : "") + py_repr(v.items[i]);
      return s + (v.items.size() == 1 ? ",)" : ")");
    }
    case VK::Tensor: return "tensor " + v.t.str();
    case VK::Func: return "<jit function " + v.fn->text + ">";
    case VK::Host: return "<function " + v.text + ">";
    case VK::Module: return "<module " + v.text + ">";
    case VK::Builtin: return "<" + v.text + ">";
    case VK::Pair: return "<swizzle2d pair>";
    case VK::Block: return "<" + std::string(v.text == "block_ptr" ? "block pointer " : "tensor descriptor ") + v.t.str() + ">";
    case VK::Constexpr: return "tl.constexpr";
  }
  return "?";
}

std::string py_type_name(const Val& v) {
  switch (v.k) {
    case VK::None: return "None";
    case VK::Int: return "int";
    case VK::Float: return "float";
    case VK::Bool: return "bool";
    case VK::Str: return "str";
    case VK::DType: return "dtype";
    case VK::Tuple: return "tuple";
    case VK::Tensor: {
      std::string t = v.t.str();
      if (v.uns && !t.empty() && t[0] == 'i') t = "u" + t.substr(1);  // u32[64]
      if (v.uns && v.t.ptr && t.size() > 1 && t[1] == 'i') t = "*u" + t.substr(2);
      return v.t.is_scalar() ? "scalar " + t : "tensor " + t;
    }
    case VK::Func: return "jit function";
    case VK::Host: return "Python function '" + v.text + "'";
    case VK::Module: return "module";
    case VK::Builtin: return "function " + v.text;
    case VK::Pair: return "swizzle2d pair";
    case VK::Block: return std::string(v.text == "block_ptr" ? "block pointer " : "tensor descriptor ") + v.t.str();
    case VK::Constexpr: return "tl.constexpr";
  }
  return "?";
}

}  // namespace dtsim::py
