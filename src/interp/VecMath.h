// The interpreter's f32 exp and log: each evaluated in double (range reduction plus a polynomial,
// no table and no branch), so that a loop over a tile vectorizes, and rounded once to f32. The
// double result is within about 2^-50 of the exact value, so the f32 result is the correctly
// rounded one except where the exact value lies that close to a midpoint between two floats;
// tests/unit/interp/test_vecmath.cpp measures the error (docs/tile-language.md gives the figures).
// The scalar functions below are what every executor path of the interpreter calls for an f32
// element (math1 in Elem.h); exp_f32_array / log_f32_array run the same functions over arrays,
// built for several instruction sets (VecMath.cpp). The interpreter's sources are compiled with
// -ffp-contract=off, so no path fuses a multiply and an add that another does not: every path
// gives the same bits.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace dtsim::exec {

// The NaN an invalid operation makes on this machine (log of a negative number returns it, as the
// C library's logf does).
inline const float kInvalidNaN = [] {
  volatile float z = 0.0f;
  return z / z;
}();

inline float exp_f32(float xf) {
  double x = xf;
  // Beyond these bounds the f32 result is +inf or 0 (a NaN passes both comparisons unchanged).
  x = x < -104.0 ? -104.0 : x;
  x = x > 89.0 ? 89.0 : x;
  // k = round(x / ln 2) through the 1.5 * 2^52 shift; r = x - k ln 2 with ln 2 in two parts
  // (k * ln2_hi is exact for |k| < 2^21, and so is x - k * ln2_hi).
  constexpr double kShift = 0x1.8p52;
  constexpr double kLog2e = 0x1.71547652b82fep0;
  constexpr double kLn2Hi = 0x1.62e42feep-1;         // 6.93147180369123816490e-01
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;    // 1.90821492927058770002e-10
  double kb = x * kLog2e + kShift;
  double k = kb - kShift;
  double r = (x - k * kLn2Hi) - k * kLn2Lo;  // |r| <= 0.3466
  // exp(r): Taylor to degree 12 (truncation < 2^-52 relative on |r| <= 0.35), Horner.
  double p = 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^k from the low bits of kb (k in [-151, 129]: a normal double).
  uint64_t e = (std::bit_cast<uint64_t>(kb) << 52) + (uint64_t{1023} << 52);
  float y = static_cast<float>(p * std::bit_cast<double>(e));
  return xf != xf ? xf + xf : y;
}

inline float log_f32(float xf) {
  double x = xf;  // f32 subnormals are normal doubles
  uint64_t b = std::bit_cast<uint64_t>(x);
  // The biased exponent as a double through the 2^52 shift (no int64 conversion, which AVX2 lacks).
  double e = std::bit_cast<double>(((b >> 52) & 0x7ff) | (uint64_t{0x433} << 52)) - (0x1p52 + 1023.0);
  double m = std::bit_cast<double>((b & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));  // [1, 2)
  bool hi = m > 0x1.6a09e667f3bcdp0;                                                          // sqrt(2)
  m = hi ? m * 0.5 : m;
  e = hi ? e + 1.0 : e;
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the odd series to s^19.
  double s = (m - 1.0) / (m + 1.0);
  double z = s * s;
  double q = 1.0 / 19.0;
  q = q * z + 1.0 / 17.0;
  q = q * z + 1.0 / 15.0;
  q = q * z + 1.0 / 13.0;
  q = q * z + 1.0 / 11.0;
  q = q * z + 1.0 / 9.0;
  q = q * z + 1.0 / 7.0;
  q = q * z + 1.0 / 5.0;
  q = q * z + 1.0 / 3.0;
  double lm = 2.0 * s + 2.0 * s * (z * q);
  constexpr double kLn2 = 0x1.62e42fefa39efp-1;
  float y = static_cast<float>(e * kLn2 + lm);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  y = xf < 0.0f ? kInvalidNaN : y;
  y = xf == 0.0f ? -kInf : y;
  y = xf == kInf ? kInf : y;
  return xf != xf ? xf + xf : y;
}

// out[i] = exp_f32(in[i]) / log_f32(in[i]) for i < n (in and out may be the same array).
void exp_f32_array(const float* in, float* out, int64_t n);
void log_f32_array(const float* in, float* out, int64_t n);

}  // namespace dtsim::exec
