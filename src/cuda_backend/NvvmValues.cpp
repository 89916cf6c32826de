// Register/memory types, literals and the canonical layout of the NVVM emitter (NvvmValues.h).
#include "cuda_backend/NvvmValues.h"

#include <cstdio>
#include <cstring>

namespace dtsim::nvvm {

std::string reg_type(Scalar s, bool ptr) {
  if (ptr) return mem_type(s) + " addrspace(1)*";
  switch (s) {
    case Scalar::I1: return "i1";
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32: return "i32";
    case Scalar::I64: return "i64";
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: return "float";
    case Scalar::F64: return "double";
  }
  return "i32";
}

std::string mem_type(Scalar s) {
  switch (s) {
    case Scalar::I1:
    case Scalar::I8:
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return "i8";
    case Scalar::I16: return "i16";
    case Scalar::I32: return "i32";
    case Scalar::I64: return "i64";
    case Scalar::F16:
    case Scalar::BF16: return "i16";
    case Scalar::F32: return "float";
    case Scalar::F64: return "double";
  }
  return "i32";
}

std::string smem_type(const Type& t) {
  if (t.ptr) return "i64";
  if (t.elem == Scalar::I1) return "i8";
  return reg_type(t.elem);
}

int smem_bytes(const Type& t) {
  if (t.ptr) return 8;
  switch (t.elem) {
    case Scalar::I1: return 1;
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16:
    case Scalar::I32:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: return 4;
    case Scalar::I64:
    case Scalar::F64: return 8;
  }
  return 8;
}

std::string float_hex(double v, bool as_float) {
  double d = as_float ? static_cast<double>(static_cast<float>(v)) : v;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(bits));
  return buf;
}

std::string literal(Scalar s, double f, int64_t i, bool from_float) {
  switch (s) {
    case Scalar::I1: return (from_float ? f != 0 : i != 0) ? "true" : "false";
    case Scalar::I8: return std::to_string(static_cast<int8_t>(from_float ? static_cast<int64_t>(f) : i));
    case Scalar::I16: return std::to_string(static_cast<int16_t>(from_float ? static_cast<int64_t>(f) : i));
    case Scalar::I32: return std::to_string(static_cast<int32_t>(from_float ? static_cast<int64_t>(f) : i));
    case Scalar::I64: return std::to_string(from_float ? static_cast<int64_t>(f) : i);
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: return float_hex(from_float ? f : static_cast<double>(i), true);
    case Scalar::F64: return float_hex(from_float ? f : static_cast<double>(i), false);
  }
  return "0";
}

int log2_exact(int64_t v) {
  int l = 0;
  while ((int64_t(1) << l) < v) ++l;
  return l;
}

std::string to_smem_value(const Type& t, const std::string& v, const std::function<std::string(const std::string&)>& op) {
  if (t.ptr) return op("ptrtoint " + reg_type(t) + " " + v + " to i64");
  if (t.elem == Scalar::I1) return op("zext i1 " + v + " to i8");
  return v;
}
std::string from_smem_value(const Type& t, const std::string& v, const std::function<std::string(const std::string&)>& op) {
  if (t.ptr) return op("inttoptr i64 " + v + " to " + reg_type(t));
  if (t.elem == Scalar::I1) return op("icmp ne i8 " + v + ", 0");
  return v;
}

}  // namespace dtsim::nvvm
