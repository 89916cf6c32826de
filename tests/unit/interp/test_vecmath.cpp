// The interpreter's f32 exp and log (interp/VecMath.h): the error against the double-precision
// functions on a dense sample of all f32 inputs, the special values, and the array forms (one per
// instruction set, picked at load time) bit-identical to the scalar functions.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "interp/VecMath.h"

using namespace dtsim::exec;

namespace {

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// |y - ref| in units of the ulp of the float nearest ref (the f32 subnormal spacing below FLT_MIN).
double ulp_error(float y, double ref) {
  double a = std::fabs(ref);
  double ulp = a < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(static_cast<float>(a)) - 23);
  return std::fabs(static_cast<double>(y) - ref) / ulp;
}

// Every `stride`-th f32 bit pattern plus the neighbourhoods of the points where the functions'
// reductions change case.
std::vector<float> sample(uint32_t stride) {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += stride) v.push_back(from_bits(static_cast<uint32_t>(b)));
  for (float c : {88.72283f, -87.33655f, -103.27893f, -103.97208f, 0.34657359f, -0.34657359f, 1.0f, 1.41421356f, 0.70710678f, 2.0f,
                  0x1p-126f, 0x1p-149f}) {
    uint32_t b = bits(c);
    for (uint32_t d = 0; d < 2000; ++d) v.push_back(from_bits(b - 1000 + d));
  }
  return v;
}

// The largest error in ulp of f against the double function ref over finite, non-NaN results.
template <class F, class R> double max_error(const std::vector<float>& xs, F f, R ref) {
  double worst = 0;
  for (float x : xs) {
    double r = ref(static_cast<double>(x));
    if (std::isnan(r) || std::fabs(r) > 0x1.fffffep127) continue;
    worst = std::max(worst, ulp_error(f(x), r));
  }
  return worst;
}

}  // namespace

TEST_CASE("vecmath: f32 exp and log within 0.5 ulp plus 2^-20 of the double functions on a dense sample") {
  std::vector<float> xs = sample(4099);
  double e = max_error(xs, exp_f32, [](double x) { return std::exp(x); });
  double l = max_error(xs, log_f32, [](double x) { return std::log(x); });
  CHECK(e < 0.5 + 0x1p-20);
  CHECK(l < 0.5 + 0x1p-20);
}

TEST_CASE("vecmath: special values as the C library's expf and logf give them") {
  constexpr float inf = std::numeric_limits<float>::infinity();
  float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(exp_f32(0.0f) == 1.0f);
  CHECK(exp_f32(-0.0f) == 1.0f);
  CHECK(exp_f32(inf) == inf);
  CHECK(exp_f32(-inf) == 0.0f);
  CHECK(exp_f32(89.0f) == inf);
  CHECK(exp_f32(88.72283f) == static_cast<float>(std::exp(static_cast<double>(88.72283f))));
  CHECK(exp_f32(1000.0f) == inf);
  CHECK(exp_f32(-1000.0f) == 0.0f);
  CHECK(exp_f32(-103.0f) == 0x1p-149f);  // exp(-103) = 1.44e-45: the smallest subnormal is nearest
  CHECK(std::isnan(exp_f32(nan)));
  CHECK(log_f32(1.0f) == 0.0f);
  CHECK(log_f32(0.0f) == -inf);
  CHECK(log_f32(-0.0f) == -inf);
  CHECK(log_f32(inf) == inf);
  CHECK(std::isnan(log_f32(-1.0f)));
  CHECK(std::isnan(log_f32(-inf)));
  CHECK(std::isnan(log_f32(nan)));
  CHECK(bits(log_f32(-1.0f)) == bits(kInvalidNaN));
  CHECK(log_f32(0x1p-149f) == static_cast<float>(-149 * std::log(2.0)));
  CHECK(exp_f32(1.0f) == static_cast<float>(std::exp(1.0)));
}

TEST_CASE("vecmath: the array forms give the scalar functions' bits, in place and at every length") {
  std::vector<float> xs = sample(65537);
  for (float s : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -0.0f, 0.0f})
    xs.push_back(s);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{17}, static_cast<int64_t>(xs.size())}) {
    std::vector<float> e(xs.size()), l(xs.size()), inplace(xs.begin(), xs.end());
    exp_f32_array(xs.data(), e.data(), n);
    log_f32_array(xs.data(), l.data(), n);
    exp_f32_array(inplace.data(), inplace.data(), n);
    bool same = true;
    for (int64_t i = 0; i < n; ++i)
      same = same && bits(e[static_cast<size_t>(i)]) == bits(exp_f32(xs[static_cast<size_t>(i)])) &&
             bits(l[static_cast<size_t>(i)]) == bits(log_f32(xs[static_cast<size_t>(i)])) &&
             bits(inplace[static_cast<size_t>(i)]) == bits(e[static_cast<size_t>(i)]);
    CHECK(same);
  }
}
