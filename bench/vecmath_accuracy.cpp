// The error of the interpreter's f32 exp and log (interp/VecMath.h) against the double-precision
// functions over every f32 input (or every STRIDE-th bit pattern), through the array forms the
// interpreter's tile loops call; also counts the inputs where glibc's expf/logf give other bits.
//   dtsim_vecmath_accuracy [--stride N]     (exit status 1 when an error exceeds 0.5 ulp + 2^-20)
// The ulp is that of the f32 nearest the reference (2^-149 below FLT_MIN).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "interp/VecMath.h"

using namespace dtsim::exec;

namespace {

double ulp_of(double ref) {
  double a = std::fabs(ref);
  return a < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(static_cast<float>(a)) - 23);
}

struct Tally {
  double max_err = 0;
  float worst = 0;
  long above_half = 0, differ_libc = 0, libc_above_half = 0;
  double libc_max = 0;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t stride = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--stride" && i + 1 < argc) {
      stride = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--stride N]\n", argv[0]);
      return 2;
    }
  }
  if (stride == 0) stride = 1;
  bool bad = false;
  for (int fn = 0; fn < 2; ++fn) {
    const bool is_log = fn == 1;
    Tally t;
    std::vector<float> in, out;
    in.reserve(1 << 20);
    for (uint64_t b0 = 0; b0 < (uint64_t{1} << 32);) {
      in.clear();
      for (; b0 < (uint64_t{1} << 32) && in.size() < (1u << 20); b0 += stride) {
        uint32_t b = static_cast<uint32_t>(b0);
        float x;
        std::memcpy(&x, &b, 4);
        in.push_back(x);
      }
      out.resize(in.size());
      (is_log ? log_f32_array : exp_f32_array)(in.data(), out.data(), static_cast<int64_t>(in.size()));
      for (size_t i = 0; i < in.size(); ++i) {
        float x = in[i], y = out[i];
        float g = is_log ? logf(x) : expf(x);
        if (std::memcmp(&g, &y, 4) != 0) ++t.differ_libc;
        double ref = is_log ? std::log(static_cast<double>(x)) : std::exp(static_cast<double>(x));
        if (std::isnan(ref)) {
          if (!std::isnan(y)) std::printf("%s(%a): %a, expected NaN\n", is_log ? "log" : "exp", x, y), bad = true;
          continue;
        }
        if (std::fabs(ref) > 0x1.fffffep127 || std::isinf(y)) {  // overflows (or -inf from log(0))
          if (static_cast<float>(ref) != y) std::printf("%s(%a): %a, expected %a\n", is_log ? "log" : "exp", x, y, ref), bad = true;
          continue;
        }
        double e = std::fabs(static_cast<double>(y) - ref) / ulp_of(ref);
        double ge = std::fabs(static_cast<double>(g) - ref) / ulp_of(ref);
        t.above_half += e > 0.5;
        t.libc_above_half += ge > 0.5;
        t.libc_max = std::max(t.libc_max, ge);
        if (e > t.max_err) t.max_err = e, t.worst = x;
      }
    }
    std::printf("%s: max error %.6f ulp (at %a); above 0.5 ulp: %ld inputs; other bits than glibc: %ld inputs (glibc: max %.6f ulp, above 0.5 ulp: %ld)\n",
                is_log ? "log" : "exp", t.max_err, t.worst, t.above_half, t.differ_libc, t.libc_max, t.libc_above_half);
    bad = bad || t.max_err > 0.5 + 0x1p-20;
  }
  return bad ? 1 : 0;
}
