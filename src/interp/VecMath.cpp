// The array forms of VecMath.h's f32 exp and log, built for AVX-512, AVX2 and the baseline (the
// loader picks one per machine); each loop is the scalar function's, so every version gives the
// same bits (no FMA: the interpreter is compiled with -ffp-contract=off).
#include "interp/VecMath.h"

namespace dtsim::exec {

#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__)
#define DT_VECMATH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DT_VECMATH_CLONES
#endif

DT_VECMATH_CLONES void exp_f32_array(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_f32(in[i]);
}

DT_VECMATH_CLONES void log_f32_array(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = log_f32(in[i]);
}

}  // namespace dtsim::exec
