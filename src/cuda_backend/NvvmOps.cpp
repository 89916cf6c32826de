// Elementwise lowering of the NVVM emitter: unary/binary ops, casts, f16/bf16 rounding, libdevice math
// and global memory element access, each on one register value (IR.h semantics).
#include "cuda_backend/KernelEmitter.h"

#include <cmath>

namespace dtsim::nvvm {

std::string KernelEmitter::constant(Scalar s, double f, int64_t i, bool from_float) {
  std::string lit = literal(s, f, i, from_float);
  if (s == Scalar::F16 || s == Scalar::BF16 || is_fp8(s)) return round_to(s, lit);
  return lit;
}

// f8e4b15, f8e4b8 and f8e5b16, which PTX cannot convert, in integer and float ops (host/Buffers.h
// fp8_format describes each). To fp8: the magnitude scaled by the power of two that makes the format's
// spacing at its binade 1 (exact), rounded to an integer (to even, or e4b15's ties away), scaled back,
// saturated, and its bits taken from the f32's; NaN, infinities and zero's sign as fp8_nan and
// f32_to_fp8 make them. `exact`: the value is one of the format's (a store), so it saturates only at
// the largest finite value (e4b15's 1.875, which no conversion gives).
std::string KernelEmitter::soft_to_fp8(Scalar t, const std::string& v, bool exact) {
  Fp8Format F = fp8_format(t);
  const int emin = 1 - F.bias;
  auto pow2 = [](int e) { return float_hex(std::ldexp(1.0, e), true); };
  std::string xb = op("bitcast float " + v + " to i32");
  std::string sign = op("trunc i32 " + op("and i32 " + op("lshr i32 " + xb + ", 24") + ", 128") + " to i8");
  std::string a = call("float", "__nv_fabsf", "float " + v, "float");
  std::string e = op("sub i32 " + op("and i32 " + op("lshr i32 " + xb + ", 23") + ", 255") + ", 127");
  std::string ec = op("select i1 " + op("icmp slt i32 " + e + ", " + std::to_string(emin)) + ", i32 " + std::to_string(emin) + ", i32 " + e);
  // 2^-(ec - mbits) and 2^(ec - mbits) as f32 bits: ec - mbits lies in [emin - mbits, 128 - mbits]
  std::string inv = op("bitcast i32 " + op("shl i32 " + op("sub i32 " + std::to_string(127 + F.mbits) + ", " + ec) + ", 23") + " to float");
  std::string q = op("bitcast i32 " + op("shl i32 " + op("add i32 " + ec + ", " + std::to_string(127 - F.mbits)) + ", 23") + " to float");
  std::string s = op("fmul float " + a + ", " + inv);
  std::string r = call("float", F.ties_away ? "__nv_roundf" : "__nv_rintf", "float " + s, "float");
  std::string rq = op("fmul float " + r + ", " + q);
  std::string lim = float_hex(exact ? F.max : F.sat, true);
  rq = op("select i1 " + op("fcmp ogt float " + rq + ", " + lim) + ", float " + lim + ", float " + rq);
  std::string rb = op("bitcast float " + rq + " to i32");
  std::string normal = op("sub i32 " + op("lshr i32 " + rb + ", " + std::to_string(23 - F.mbits)) + ", " + std::to_string((127 - F.bias) << F.mbits));
  std::string sub = op("fptoui float " + op("fmul float " + rq + ", " + pow2(F.mbits - emin)) + " to i32");
  std::string code = op("select i1 " + op("fcmp olt float " + rq + ", " + pow2(emin)) + ", i32 " + sub + ", i32 " + normal);
  code = op("trunc i32 " + op("and i32 " + code + ", 127") + " to i8");
  std::string b = op("or i8 " + sign + ", " + code);
  std::string nan = op("fcmp uno float " + v + ", 0.0");
  if (F.nan == Fp8Nan::Fnuz) {  // +0 for a zero, the one NaN for NaN and the infinities
    b = op("select i1 " + op("icmp eq i8 " + code + ", 0") + ", i8 0, i8 " + b);
    std::string inf = op("fcmp oeq float " + a + ", 0x7FF0000000000000");
    return op("select i1 " + op("or i1 " + nan + ", " + inf) + ", i8 -128, i8 " + b);
  }
  // e4b15: NaN gives the saturation value of its sign
  std::string satb = op("or i8 " + sign + ", " + std::to_string(dtsim::f32_to_fp8(t, F.sat)));
  return op("select i1 " + nan + ", i8 " + satb + ", i8 " + b);
}

// The f32 of an f8e4b15 / f8e4b8 / f8e5b16 byte (exact): a normal value's bits assembled from the
// fields, a subnormal's as its mantissa times the smallest subnormal, the sign or'ed in; fnuz's 0x80
// is the quiet NaN fp8_to_f32 gives.
std::string KernelEmitter::soft_from_fp8(Scalar t, const std::string& b) {
  Fp8Format F = fp8_format(t);
  const int emask = (1 << (7 - F.mbits)) - 1, mmask = (1 << F.mbits) - 1;
  std::string w = op("zext i8 " + b + " to i32");
  std::string e = op("and i32 " + op("lshr i32 " + w + ", " + std::to_string(F.mbits)) + ", " + std::to_string(emask));
  std::string m = op("and i32 " + w + ", " + std::to_string(mmask));
  std::string nb = op("or i32 " + op("shl i32 " + op("add i32 " + e + ", " + std::to_string(127 - F.bias)) + ", 23") + ", " +
                      op("shl i32 " + m + ", " + std::to_string(23 - F.mbits)));
  std::string sub = op("bitcast float " + op("fmul float " + op("uitofp i32 " + m + " to float") + ", " +
                                             float_hex(std::ldexp(1.0, 1 - F.bias - F.mbits), true)) + " to i32");
  std::string mag = op("select i1 " + op("icmp eq i32 " + e + ", 0") + ", i32 " + sub + ", i32 " + nb);
  std::string bits = op("or i32 " + mag + ", " + op("shl i32 " + op("and i32 " + w + ", 128") + ", 24"));
  if (F.nan == Fp8Nan::Fnuz) bits = op("select i1 " + op("icmp eq i32 " + w + ", 128") + ", i32 2143289344, i32 " + bits);
  return op("bitcast i32 " + bits + " to float");
}

// fp8 <-> f32 by PTX (sm_89 and newer): cvt.rn.satfinite.{e4m3,e5m2}x2.f32 rounds to nearest even
// and saturates finite overflow and infinities to the largest finite value (NaN stays NaN);
// cvt.rn.f16x2.{e4m3,e5m2}x2 widens exactly. The x2 forms convert two values: ours is the low one.
// The other fp8 formats convert in software.
std::string KernelEmitter::f32_to_fp8(Scalar t, const std::string& v) {
  if (!ptx_converts_fp8(t)) return soft_to_fp8(t, v, false);
  const char* f = t == Scalar::F8E4M3 ? "e4m3x2" : "e5m2x2";
  std::string h = op(std::string("call i16 asm \"cvt.rn.satfinite.") + f + ".f32 $0, $1, $2;\", \"=h,f,f\"(float 0.0, float " + v + ")");
  return op("trunc i16 " + h + " to i8");
}

std::string KernelEmitter::fp8_to_f32(Scalar t, const std::string& b) {
  if (!ptx_converts_fp8(t)) return soft_from_fp8(t, b);
  const char* f = t == Scalar::F8E4M3 ? "e4m3x2" : "e5m2x2";
  std::string w = op("zext i8 " + b + " to i16");
  std::string h2 = op(std::string("call i32 asm \"cvt.rn.f16x2.") + f + " $0, $1;\", \"=r,h\"(i16 " + w + ")");
  std::string h = op("bitcast i16 " + op("trunc i32 " + h2 + " to i16") + " to half");
  std::string v = op("fpext half " + h + " to float");
  // A NaN pattern keeps its sign and payload in the f32's top mantissa bits, as the interpreter keeps
  // them (host/Buffers.h fp8_to_f32), so that a copy stores the same byte back (to_mem)
  const bool e4 = t == Scalar::F8E4M3;
  std::string w32 = op("zext i8 " + b + " to i32");
  std::string nan = op("icmp ugt i32 " + op("and i32 " + w32 + ", 127") + (e4 ? ", 126" : ", 124"));
  std::string sign = op("shl i32 " + op("and i32 " + w32 + ", 128") + ", 24");
  std::string pay = op("shl i32 " + op("and i32 " + w32 + (e4 ? ", 7" : ", 3")) + (e4 ? ", 20" : ", 21"));
  std::string bits = op("or i32 " + op("or i32 " + sign + ", 2139095040") + ", " + pay);
  return op("select i1 " + nan + ", float " + op("bitcast i32 " + bits + " to float") + ", float " + v);
}

// The fp8 byte of an f32 NaN: its sign, e4m3's one NaN, or e5m2's with the f32's top two mantissa bits
// (3 where both are 0), as host/Buffers.h fp8_nan makes it.
std::string KernelEmitter::fp8_nan_byte(Scalar t, const std::string& v) {
  std::string vb = op("bitcast float " + v + " to i32");
  std::string sign = op("trunc i32 " + op("and i32 " + op("lshr i32 " + vb + ", 24") + ", 128") + " to i8");
  if (t == Scalar::F8E4M3) return op("or i8 " + sign + ", 127");
  std::string m = op("trunc i32 " + op("and i32 " + op("lshr i32 " + vb + ", 21") + ", 3") + " to i8");
  std::string m3 = op("select i1 " + op("icmp eq i8 " + m + ", 0") + ", i8 3, i8 " + m);
  return op("or i8 " + op("or i8 " + sign + ", 124") + ", " + m3);
}

// An i32 register wrapped to the width of i8/i16 (sign-extended back).
std::string KernelEmitter::wrap_int(Scalar t, const std::string& v) {
  std::string n = t == Scalar::I8 ? "i8" : "i16";
  return op("sext " + n + " " + op("trunc i32 " + v + " to " + n) + " to i32");
}

std::string KernelEmitter::round_to(Scalar t, const std::string& v) {
  switch (t) {
    case Scalar::I8:
    case Scalar::I16: return wrap_int(t, v);
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return fp8_to_f32(t, f32_to_fp8(t, v));
    case Scalar::F16: {
      std::string h = op("fptrunc float " + v + " to half");
      return op("fpext half " + h + " to float");
    }
    case Scalar::BF16: {
      std::string b = op("call i16 asm \"cvt.rn.bf16.f32 $0, $1;\", \"=h,f\"(float " + v + ")");
      std::string w = op("zext i16 " + b + " to i32");
      std::string s = op("shl i32 " + w + ", 16");
      return op("bitcast i32 " + s + " to float");
    }
    case Scalar::I1:
    case Scalar::I32:
    case Scalar::I64:
    case Scalar::F32:
    case Scalar::F64: return v;
  }
  return v;
}

std::string KernelEmitter::to_bool(Scalar t, const std::string& v) {
  if (t == Scalar::I1) return v;
  if (is_float(t)) return op("fcmp une " + reg_type(t) + " " + v + ", " + literal(t, 0, 0, false));
  return op("icmp ne " + reg_type(t) + " " + v + ", 0");
}

std::string KernelEmitter::cast(Scalar from, Scalar to, const std::string& v) {
  if (from == to) return v;
  if (to == Scalar::I1) return to_bool(from, v);
  std::string ft = reg_type(from), tt = reg_type(to);
  if (from == Scalar::I1) {
    if (is_int(to)) return op("zext i1 " + v + " to " + tt);
    return op("uitofp i1 " + v + " to " + tt);
  }
  if (is_int(from) && is_int(to)) {  // i8/i16/i32 registers are i32: widen or narrow, then wrap
    std::string r = ft == tt ? v : op((ft == "i32" ? "sext i32 " : "trunc i64 ") + v + " to " + tt);
    return is_narrow_int(to) ? wrap_int(to, r) : r;
  }
  if (is_int(from)) {  // int -> float: round to nearest
    if (to == Scalar::F64) return op("sitofp " + ft + " " + v + " to double");
    return round_to(to, op("sitofp " + ft + " " + v + " to float"));
  }
  if (is_int(to)) {  // float -> int: PTX cvt.rzi truncates and saturates; NaN to 0 (IR.h) by a select, as
                     // cvt.rzi.s64.f32 and cvt.rzi.s32.f64 give the most negative value for it (measured on an H200)
    std::string ins = std::string("cvt.rzi.") + (to != Scalar::I64 ? "s32." : "s64.") + (from == Scalar::F64 ? "f64" : "f32");
    std::string cons = std::string(to != Scalar::I64 ? "=r," : "=l,") + (from == Scalar::F64 ? "d" : "f");
    std::string r = op("call " + tt + " asm \"" + ins + " $0, $1;\", \"" + cons + "\"(" + ft + " " + v + ")");
    std::string nan = op("fcmp uno " + ft + " " + v + ", " + v);
    r = op("select i1 " + nan + ", " + tt + " 0, " + tt + " " + r);
    if (!is_narrow_int(to)) return r;
    std::string hi = to == Scalar::I8 ? "127" : "32767", lo = to == Scalar::I8 ? "-128" : "-32768";  // saturate at i8/i16
    std::string big = op("icmp sgt i32 " + r + ", " + hi);
    r = op("select i1 " + big + ", i32 " + hi + ", i32 " + r);
    std::string small = op("icmp slt i32 " + r + ", " + lo);
    return op("select i1 " + small + ", i32 " + lo + ", i32 " + r);
  }
  if (to == Scalar::F64) return op("fpext float " + v + " to double");
  std::string f = from == Scalar::F64 ? op("fptrunc double " + v + " to float") : v;
  return round_to(to, f);
}

std::string KernelEmitter::bitcast(Scalar from, Scalar to, const std::string& v) {
  if (from == to) return v;
  if (reg_type(from) != mem_type(from) || reg_type(to) != mem_type(to)) {  // through the bits in memory form
    std::string m = to_mem(from, v);
    if (mem_type(from) != mem_type(to)) m = op("bitcast " + mem_type(from) + " " + m + " to " + mem_type(to));
    return from_mem(to, m);
  }
  return op("bitcast " + reg_type(from) + " " + v + " to " + reg_type(to));
}

std::string KernelEmitter::math(UnOp u, Scalar t, const std::string& x) {
  bool d = t == Scalar::F64;
  std::string ty = d ? "double" : "float";
  auto lib = [&](const char* name) { return call(ty, std::string("__nv_") + name + (d ? "" : "f"), ty + " " + x, ty); };
  // f32 exp and exp2 on the SFU, as Triton's tl.exp and tl.exp2: 2^y by ex2.approx.ftz.f32 (relative
  // error < 2^-22; a result below 2^-126 is flushed to zero, as Triton's: the SFU instruction alone,
  // where keeping subnormals costs a compare and two multiplies around it), exp(x) = 2^(x * log2 e).
  // Rounding x * log2 e adds a relative error below |x| * 2^-24 and log2 e's f32 rounding one below
  // |x| * 1.4e-8: at most 6.8e-6 where exp stays in the f32 range (|x| < 88), inside the
  // differential tester's f32 tolerance (rtol 1e-5); a flushed subnormal is off by less than 2^-126.
  auto ex2 = [&](const std::string& y) { return op("call float asm \"ex2.approx.ftz.f32 $0, $1;\", \"=f,f\"(float " + y + ")"); };
  std::string r;
  switch (u) {
    case UnOp::Exp: r = d ? lib("exp") : ex2(op("fmul float " + x + ", " + float_hex(1.4426950408889634, true))); break;
    case UnOp::Exp2: r = d ? lib("exp2") : ex2(x); break;
    case UnOp::Log: r = lib("log"); break;
    case UnOp::Log2: r = lib("log2"); break;
    case UnOp::Sqrt: r = lib("sqrt"); break;
    case UnOp::Rsqrt: r = lib("rsqrt"); break;
    case UnOp::Tanh: r = lib("tanh"); break;
    case UnOp::Erf: r = lib("erf"); break;
    case UnOp::Erfc: r = lib("erfc"); break;
    case UnOp::Floor: r = lib("floor"); break;
    case UnOp::Ceil: r = lib("ceil"); break;
    case UnOp::Trunc: r = lib("trunc"); break;
    case UnOp::Round: r = lib("round"); break;
    case UnOp::Rint: r = lib("rint"); break;
    case UnOp::Sin: r = lib("sin"); break;
    case UnOp::Cos: r = lib("cos"); break;
    case UnOp::Tan: r = lib("tan"); break;
    case UnOp::Asin: r = lib("asin"); break;
    case UnOp::Acos: r = lib("acos"); break;
    case UnOp::Atan: r = lib("atan"); break;
    case UnOp::Sinh: r = lib("sinh"); break;
    case UnOp::Cosh: r = lib("cosh"); break;
    case UnOp::Asinh: r = lib("asinh"); break;
    case UnOp::Acosh: r = lib("acosh"); break;
    case UnOp::Atanh: r = lib("atanh"); break;
    case UnOp::Log10: r = lib("log10"); break;
    case UnOp::Log1p: r = lib("log1p"); break;
    case UnOp::Expm1: r = lib("expm1"); break;
    case UnOp::Cbrt: r = lib("cbrt"); break;
    case UnOp::Abs: r = lib("fabs"); break;
    case UnOp::Sigmoid: {
      std::string n = op("fsub " + ty + " " + literal(t, -0.0, 0, true) + ", " + x);
      std::string e = d ? call(ty, "__nv_exp", ty + " " + n, ty) : ex2(op("fmul float " + n + ", " + float_hex(1.4426950408889634, true)));
      std::string s = op("fadd " + ty + " " + literal(t, 1.0, 0, true) + ", " + e);
      r = op("fdiv " + ty + " " + literal(t, 1.0, 0, true) + ", " + s);
      break;
    }
    case UnOp::Neg:
    case UnOp::Not: internal_error("NvvmEmitter", "math() on a non-math op");
  }
  return round_to(t, r);
}

std::string KernelEmitter::unary(const Expr& e, const std::string& xin) {
  Scalar src = e.args[0]->type.elem, t = e.type.elem;
  std::string ty = reg_type(t);
  switch (e.uop) {
    case UnOp::Neg: {
      std::string x = cast(src, t, xin);
      if (is_int(t)) return round_to(t, op("sub " + ty + " 0, " + x));
      return op("fsub " + ty + " " + literal(t, -0.0, 0, true) + ", " + x);
    }
    case UnOp::Not: {
      if (t == Scalar::I1) return op("xor i1 " + xin + ", true");
      return op("xor " + ty + " " + xin + ", -1");
    }
    case UnOp::Abs: {
      std::string x = cast(src, t, xin);
      if (is_int(t)) {
        std::string neg = op("icmp slt " + ty + " " + x + ", 0");
        std::string n = op("sub " + ty + " 0, " + x);
        return round_to(t, op("select i1 " + neg + ", " + ty + " " + n + ", " + ty + " " + x));
      }
      return math(UnOp::Abs, t, x);
    }
    DT_MATH_UNOP_CASES return math(e.uop, t, cast(src, t, xin));
  }
  return xin;
}

std::string KernelEmitter::nan_minmax(bool is_max, Scalar t, const std::string& a, const std::string& b) {
  std::string ty = reg_type(t);
  if (is_int(t)) {
    std::string c = op(std::string("icmp ") + (t == Scalar::I1 ? (is_max ? "ugt " : "ult ") : (is_max ? "sgt " : "slt ")) + ty + " " + a + ", " + b);
    return op("select i1 " + c + ", " + ty + " " + a + ", " + ty + " " + b);
  }
  // sm_80 and newer: one max.NaN / min.NaN (FMNMX.NAN), a NaN operand giving NaN as below; the sign
  // of a zero result may differ (+0 and -0 compare equal, and the interpreter keeps the first).
  if (sm_version() >= 80 && t != Scalar::F64)
    return op(std::string("call float asm \"") + (is_max ? "max" : "min") + ".NaN.f32 $0, $1, $2;\", \"=f,f,f\"(float " + a +
              ", float " + b + ")");
  std::string c = op(std::string("fcmp ") + (is_max ? "ogt " : "olt ") + ty + " " + a + ", " + b);
  std::string pick = op("select i1 " + c + ", " + ty + " " + a + ", " + ty + " " + b);
  std::string nan = op("fcmp uno " + ty + " " + a + ", " + b);
  std::string sum = op("fadd " + ty + " " + a + ", " + b);  // NaN when either is NaN
  return op("select i1 " + nan + ", " + ty + " " + sum + ", " + ty + " " + pick);
}

// `a op b` with both operands already in type t (the op's computation type).
std::string KernelEmitter::binary_typed(BinOp o, Scalar t, const std::string& a, const std::string& b) {
  std::string ty = reg_type(t);
  bool fl = is_float(t), i1 = t == Scalar::I1;
  // fp fusion: the `contract` flag lets the code generator fuse a multiply into the add or subtract
  // that takes it (fma.rn); without it (and libNVVM's -fma=0) each rounds on its own.
  const char* flags = fl && opt_.fp_fusion ? " contract" : "";
  auto ar = [&](const char* iop, const char* fop) {
    return round_to(t, op(std::string(fl ? fop : iop) + (fl ? flags : "") + " " + ty + " " + a + ", " + b));
  };
  auto cmp = [&](const char* s, const char* u, const char* f) {
    return op(std::string(fl ? "fcmp " : "icmp ") + (fl ? f : i1 ? u : s) + " " + ty + " " + a + ", " + b);
  };
  switch (o) {
    case BinOp::Add: return ar("add", "fadd");
    case BinOp::Sub: return ar("sub", "fsub");
    case BinOp::Mul: return ar("mul", "fmul");
    case BinOp::Div: return ar("sdiv", "fdiv");
    case BinOp::FloorDiv: return round_to(t, op("sdiv " + ty + " " + a + ", " + b));
    case BinOp::Mod:
      if (fl) {
        bool d = t == Scalar::F64;
        return round_to(t, call(ty, d ? "__nv_fmod" : "__nv_fmodf", ty + " " + a + ", " + ty + " " + b, ty + ", " + ty));
      }
      return op("srem " + ty + " " + a + ", " + b);
    case BinOp::And: return op("and " + ty + " " + a + ", " + b);
    case BinOp::Or: return op("or " + ty + " " + a + ", " + b);
    case BinOp::Xor: return op("xor " + ty + " " + a + ", " + b);
    case BinOp::Shl:
    case BinOp::Shr: {
      if (i1) return a;
      // a count >= the width (unsigned) gives 0, >> the sign (IR.h; LLVM's shl/ashr would be poison
      // there): the count clamped to width - 1 for ashr, the result selected 0 for shl.
      // i8/i16: in their i32 registers, then wrapped
      int w = t == Scalar::I64 ? 63 : 31;
      std::string wl = std::to_string(w);
      std::string big = op("icmp ugt " + ty + " " + b + ", " + wl);
      std::string n = op("select i1 " + big + ", " + ty + " " + wl + ", " + ty + " " + b);
      std::string r = op(std::string(o == BinOp::Shl ? "shl " : "ashr ") + ty + " " + a + ", " + n);
      if (o == BinOp::Shl) r = op("select i1 " + big + ", " + ty + " 0, " + ty + " " + r);
      return round_to(t, r);
    }
    case BinOp::Lt: return cmp("slt", "ult", "olt");
    case BinOp::Le: return cmp("sle", "ule", "ole");
    case BinOp::Gt: return cmp("sgt", "ugt", "ogt");
    case BinOp::Ge: return cmp("sge", "uge", "oge");
    case BinOp::Eq: return cmp("eq", "eq", "oeq");
    case BinOp::Ne: return cmp("ne", "ne", "une");
    case BinOp::LAnd: return op("and i1 " + a + ", " + b);
    case BinOp::LOr: return op("or i1 " + a + ", " + b);
    case BinOp::Min: return nan_minmax(false, t, a, b);
    case BinOp::Max: return nan_minmax(true, t, a, b);
    case BinOp::MinNum:
    case BinOp::MaxNum: {  // PTX min/max (no .NaN): the other operand where one is NaN
      if (!fl) return nan_minmax(o == BinOp::MaxNum, t, a, b);
      const bool d = t == Scalar::F64;
      return op(std::string("call ") + ty + " asm \"" + (o == BinOp::MaxNum ? "max" : "min") + (d ? ".f64" : ".f32") + " $0, $1, $2;\", \"" +
                (d ? "=d,d,d" : "=f,f,f") + "\"(" + ty + " " + a + ", " + ty + " " + b + ")");
    }
    case BinOp::Pow:
    case BinOp::Atan2:
    case BinOp::Hypot: {  // libdevice, as the unary math functions
      const char* name = "";
      switch (o) {
        case BinOp::Pow: name = "pow"; break;
        case BinOp::Atan2: name = "atan2"; break;
        case BinOp::Hypot: name = "hypot"; break;
        DT_NOT_MATH_BINOP_CASES internal_error("NvvmEmitter", "not a binary math function");
      }
      std::string fn = std::string("__nv_") + name + (t == Scalar::F64 ? "" : "f");
      return round_to(t, call(ty, fn, ty + " " + a + ", " + ty + " " + b, ty + ", " + ty));
    }
    case BinOp::Cdiv: {
      std::string s = op("add " + ty + " " + a + ", " + b);
      std::string s1 = op("sub " + ty + " " + s + ", 1");
      return round_to(t, op("sdiv " + ty + " " + s1 + ", " + b));
    }
  }
  return a;
}

std::string KernelEmitter::binary(const Expr& e, const std::string& a, const std::string& b) {
  const ExprP& x = e.args[0];
  const ExprP& y = e.args[1];
  // Pointer arithmetic: element offsets in i64.
  if (x->type.ptr || y->type.ptr) {
    if (e.bop == BinOp::Eq || e.bop == BinOp::Ne) {
      std::string pt = reg_type(x->type.scalar_type());
      return op(std::string("icmp ") + (e.bop == BinOp::Eq ? "eq " : "ne ") + pt + " " + a + ", " + b);
    }
    bool pa = x->type.ptr;
    const ExprP& ie = pa ? y : x;
    std::string idx = cast(ie->type.elem, Scalar::I64, pa ? b : a);
    if (e.bop == BinOp::Sub) idx = op("sub i64 0, " + idx);
    std::string mt = mem_type(e.type.elem);
    return op("getelementptr " + mt + ", " + mt + " addrspace(1)* " + (pa ? a : b) + ", i64 " + idx);
  }
  Scalar t;
  if (binop_is_compare(e.bop)) {
    t = promote_operands(*x, *y);
  } else if (e.bop == BinOp::LAnd || e.bop == BinOp::LOr) {
    t = Scalar::I1;
  } else {
    t = e.type.elem;
  }
  std::string ca = cast(x->type.elem, t, a), cb = cast(y->type.elem, t, b);
  return binary_typed(e.bop, t, ca, cb);
}

std::string KernelEmitter::where(const Expr& e, const std::string& c, const std::string& a, const std::string& b) {
  std::string ty = reg_type(e.type);
  std::string ca = e.type.ptr ? a : cast(e.args[1]->type.elem, e.type.elem, a);
  if (c == "true") return ca;  // a true mask (plan_true_masks)
  std::string cb = e.type.ptr ? b : cast(e.args[2]->type.elem, e.type.elem, b);
  return op("select i1 " + c + ", " + ty + " " + ca + ", " + ty + " " + cb);
}

std::string KernelEmitter::from_mem(Scalar s, const std::string& x) {
  switch (s) {
    case Scalar::I1: return op("icmp ne i8 " + x + ", 0");
    case Scalar::I8: return op("sext i8 " + x + " to i32");
    case Scalar::I16: return op("sext i16 " + x + " to i32");
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return fp8_to_f32(s, x);
    case Scalar::F16: {
      std::string h = op("bitcast i16 " + x + " to half");
      return op("fpext half " + h + " to float");
    }
    case Scalar::BF16: {
      std::string w = op("zext i16 " + x + " to i32");
      std::string sh = op("shl i32 " + w + ", 16");
      return op("bitcast i32 " + sh + " to float");
    }
    case Scalar::I32:
    case Scalar::I64:
    case Scalar::F32:
    case Scalar::F64: return x;
  }
  return x;
}

std::string KernelEmitter::to_mem(Scalar s, const std::string& v) {
  switch (s) {
    case Scalar::I1: return op("zext i1 " + v + " to i8");
    case Scalar::I8: return op("trunc i32 " + v + " to i8");
    case Scalar::I16: return op("trunc i32 " + v + " to i16");
    case Scalar::F8E4M3: {  // exact: the register holds an fp8 value; a NaN keeps its sign
      std::string b = f32_to_fp8(s, v);
      return op("select i1 " + op("fcmp uno float " + v + ", 0.0") + ", i8 " + fp8_nan_byte(s, v) + ", i8 " + b);
    }
    case Scalar::F8E5M2: {  // the same, but an infinity stays one (cvt.rn.satfinite would saturate it)
      std::string b = f32_to_fp8(s, v);
      std::string pos = op("select i1 " + op("fcmp oeq float " + v + ", 0x7FF0000000000000") + ", i8 124, i8 " + b);
      std::string inf = op("select i1 " + op("fcmp oeq float " + v + ", 0xFFF0000000000000") + ", i8 -4, i8 " + pos);
      return op("select i1 " + op("fcmp uno float " + v + ", 0.0") + ", i8 " + fp8_nan_byte(s, v) + ", i8 " + inf);
    }
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return soft_to_fp8(s, v, true);  // exact, fnuz's NaN included
    case Scalar::F16: {
      std::string h = op("fptrunc float " + v + " to half");
      return op("bitcast half " + h + " to i16");
    }
    case Scalar::BF16: {  // the register already holds a bf16 value: its upper half is exact
      std::string w = op("bitcast float " + v + " to i32");
      std::string sh = op("lshr i32 " + w + ", 16");
      return op("trunc i32 " + sh + " to i16");
    }
    case Scalar::I32:
    case Scalar::I64:
    case Scalar::F32:
    case Scalar::F64: return v;
  }
  return v;
}

std::string KernelEmitter::load_mem(Scalar s, const std::string& ptr) {
  std::string mt = mem_type(s);
  return from_mem(s, op("load " + mt + ", " + mt + " addrspace(1)* " + ptr + ", align " + std::to_string(scalar_bytes(s))));
}

void KernelEmitter::store_mem(Scalar s, const std::string& ptr, const std::string& v) {
  std::string mt = mem_type(s);
  line("store " + mt + " " + to_mem(s, v) + ", " + mt + " addrspace(1)* " + ptr + ", align " + std::to_string(scalar_bytes(s)));
}

// `w` consecutive elements from `ptr`, which is aligned to the vector's size (ld.global.v2/v4, or
// ld.shared with addrspace 3).
std::vector<std::string> KernelEmitter::load_vec(Scalar s, const std::string& ptr, int w, int addrspace) {
  std::string mt = mem_type(s), as = " addrspace(" + std::to_string(addrspace) + ")*";
  std::vector<std::string> out;
  if (mt == "i16" && w % 2 == 0) {  // pairs of 2-byte elements as 32-bit words (ld.v4.b32, not two ld.v4.u16)
    int n = w / 2;
    std::string vt = n == 1 ? "i32" : "<" + std::to_string(n) + " x i32>";
    std::string vp = op("bitcast " + mt + as + " " + ptr + " to " + vt + as);
    std::string vv = op("load " + vt + ", " + vt + as + " " + vp + ", align " + std::to_string(w * 2));
    for (int j = 0; j < n; ++j) {
      std::string word = n == 1 ? vv : op("extractelement " + vt + " " + vv + ", i32 " + std::to_string(j));
      auto halves = unpack2(s, word);
      out.push_back(halves.first);
      out.push_back(halves.second);
    }
    return out;
  }
  std::string vt = "<" + std::to_string(w) + " x " + mt + ">";
  std::string vp = op("bitcast " + mt + as + " " + ptr + " to " + vt + as);
  std::string vv = op("load " + vt + ", " + vt + as + " " + vp + ", align " + std::to_string(w * scalar_bytes(s)));
  for (int j = 0; j < w; ++j) out.push_back(from_mem(s, op("extractelement " + vt + " " + vv + ", i32 " + std::to_string(j))));
  return out;
}

void KernelEmitter::store_vec(Scalar s, const std::string& ptr, const std::vector<std::string>& v, int addrspace) {
  int w = static_cast<int>(v.size());
  std::string mt = mem_type(s), as = " addrspace(" + std::to_string(addrspace) + ")*";
  if (mt == "i16" && w % 2 == 0) {  // pairs as 32-bit words (st.v4.b32, not two st.v4.u16)
    int n = w / 2;
    std::string vt = n == 1 ? "i32" : "<" + std::to_string(n) + " x i32>";
    std::string acc = "undef";
    for (int j = 0; j < n; ++j) {
      std::string word = pack2(s, v[static_cast<size_t>(2 * j)], v[static_cast<size_t>(2 * j + 1)]);
      acc = n == 1 ? word : op("insertelement " + vt + " " + acc + ", i32 " + word + ", i32 " + std::to_string(j));
    }
    std::string vp = op("bitcast " + mt + as + " " + ptr + " to " + vt + as);
    line("store " + vt + " " + acc + ", " + vt + as + " " + vp + ", align " + std::to_string(w * 2));
    return;
  }
  std::string vt = "<" + std::to_string(w) + " x " + mt + ">";
  std::string acc = "undef";
  for (int j = 0; j < w; ++j)
    acc = op("insertelement " + vt + " " + acc + ", " + mt + " " + to_mem(s, v[static_cast<size_t>(j)]) + ", i32 " + std::to_string(j));
  std::string vp = op("bitcast " + mt + as + " " + ptr + " to " + vt + as);
  line("store " + vt + " " + acc + ", " + vt + as + " " + vp + ", align " + std::to_string(w * scalar_bytes(s)));
}

// Two 2-byte elements as one 32-bit word, `lo` in the low half (as memory holds them); bf16: the
// upper halves of the two floats. Plain LLVM, so that a word unpacked by unpack2 and packed again
// folds back to the word.
std::string KernelEmitter::pack2(Scalar s, const std::string& lo, const std::string& hi) {
  if (s == Scalar::BF16) {
    std::string l = op("lshr i32 " + op("bitcast float " + lo + " to i32") + ", 16");
    std::string h = op("and i32 " + op("bitcast float " + hi + " to i32") + ", -65536");
    return op("or i32 " + h + ", " + l);
  }
  std::string l = op("zext i16 " + to_mem(s, lo) + " to i32");
  std::string h = op("shl i32 " + op("zext i16 " + to_mem(s, hi) + " to i32") + ", 16");
  return op("or i32 " + h + ", " + l);
}

std::pair<std::string, std::string> KernelEmitter::unpack2(Scalar s, const std::string& word) {
  if (s == Scalar::BF16)
    return {op("bitcast i32 " + op("shl i32 " + word + ", 16") + " to float"), op("bitcast i32 " + op("and i32 " + word + ", -65536") + " to float")};
  std::string lo = op("trunc i32 " + word + " to i16");
  std::string hi = op("trunc i32 " + op("lshr i32 " + word + ", 16") + " to i16");
  return {from_mem(s, lo), from_mem(s, hi)};
}

}  // namespace dtsim::nvvm
