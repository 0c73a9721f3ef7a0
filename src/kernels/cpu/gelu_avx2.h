// Gelu (erf form) over a run of floats with AVX2 + FMA, 8 lanes at a time:
// for the GEMMs that apply it to a block of C while the block is in cache
// (sgemm_packed.cpp, sgemm_strassen.cpp). To within 2e-7 of
// 0.5 x (1 + erf(x / sqrt 2)) relative to max(1, |x|) (up to 1% relative
// where x < -3 and Gelu is below 4e-3 in size). Only called where the CPU has
// AVX2 and FMA.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OPENACL_GELU_AVX2 1

namespace openacl::kernels::cpu {

#define OPENACL_AVX2_FMA __attribute__((target("avx2,fma")))

// exp(z) for z <= 0 (the Gelu's e^(-x^2)): 2^n * e^r with |r| <= ln2 / 2, e^r
// by Cephes' degree-6 polynomial for expf; below -87 it is 0.
OPENACL_AVX2_FMA inline __attribute__((always_inline)) __m256 gelu_exp_nonpositive(__m256 z) {
  z = _mm256_max_ps(z, _mm256_set1_ps(-87.f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(z, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), z);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) over y[0, n). erfc(u) for u >= 0
// by Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7): t (a1 + .. + a5 t^4)
// e^(-u^2), t = 1 / (1 + p u). 1 + erf(v) is erfc(|v|) for v < 0 and
// 2 - erfc(v) otherwise, so the negative side has no cancellation.
OPENACL_AVX2_FMA inline void gelu_avx2(float* y, int64_t n) {
  int64_t i = 0;
  const __m256 sign = _mm256_set1_ps(-0.f);
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(y + i);
    const __m256 u = _mm256_andnot_ps(sign, _mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f)));
    const __m256 t =
        _mm256_div_ps(_mm256_set1_ps(1.f), _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), u, _mm256_set1_ps(1.f)));
    __m256 q = _mm256_set1_ps(1.061405429f);
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.453152027f));
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.421413741f));
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.284496736f));
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.254829592f));
    const __m256 erfc = _mm256_mul_ps(_mm256_mul_ps(q, t),
                                      gelu_exp_nonpositive(_mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), u), u)));
    const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 one_plus_erf = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.f), erfc), erfc, neg);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), one_plus_erf));
  }
  for (; i < n; ++i) y[i] = 0.5f * y[i] * (1.f + std::erf(y[i] * 0.70710678118654752f));
}

#undef OPENACL_AVX2_FMA

}  // namespace openacl::kernels::cpu
#endif
