// Backend-internal: how tile-IR values look in NVVM IR (register and memory types, literals). How
// tiles are spread over threads is Layout.h's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace dtsim::nvvm {

// Register type of a value: i1 i32 i64; i8/i16 live as `i32` (sign-extended, wrapped to their width
// after every op); fp8/f16/bf16/f32 live as `float` (rounded to their type after every op); f64 as
// `double`; pointers as `<mem type> addrspace(1)*`.
std::string reg_type(Scalar s, bool ptr = false);
inline std::string reg_type(const Type& t) { return reg_type(t.elem, t.ptr); }
// The fp8 formats PTX converts (cvt, sm_89 and newer); the others convert in software (NvvmOps.cpp).
inline bool ptx_converts_fp8(Scalar s) { return s == Scalar::F8E4M3 || s == Scalar::F8E5M2; }
// Type of one element in global memory: i1 -> i8, fp8 -> i8 and f16/bf16 -> i16 (bit patterns).
std::string mem_type(Scalar s);
// Type of one element in the shared-memory exchange buffer (pointers as i64, i1 as i8).
std::string smem_type(const Type& t);
int smem_bytes(const Type& t);
// LLVM literal of a number in register type `s` (floats as exact hex doubles).
std::string literal(Scalar s, double f, int64_t i, bool from_float);
std::string float_hex(double v, bool as_float);
int log2_exact(int64_t v);
// Elements of the shared exchange buffer for a tile of n elements (one padding element every 32).
inline int64_t smem_padded(int64_t n) { return n + n / 32 + 1; }
// A register value of type t as the exchange buffer holds it (smem_type), and back; `op` emits one
// instruction and names its result.
std::string to_smem_value(const Type& t, const std::string& v, const std::function<std::string(const std::string&)>& op);
std::string from_smem_value(const Type& t, const std::string& v, const std::function<std::string(const std::string&)>& op);

}  // namespace dtsim::nvvm
