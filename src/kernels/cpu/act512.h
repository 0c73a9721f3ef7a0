// The fused activations (fused_activation.h) on 16 floats at a time (apply)
// or 8 (apply8), for our convolution loops (conv_1x1.cpp, conv_dw.cpp: their
// AVX-512 and AVX2 forms): applied in registers before the store. Same
// results as Activation::apply_range, NaN included.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/fused_activation.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 reads the _mm512_undefined_ps() inside _mm512_max_ps / _mm512_min_ps
// as a use of an uninitialised value (a false positive, reported where the
// intrinsic is inlined: so for the whole file that includes this one).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define OPENACL_ACT512 1
#endif

namespace openacl::kernels::cpu::act512 {

// kOther: an activation without a vector form here (Sigmoid, Tanh, Gelu):
// the caller applies Activation::apply_range to what it stored.
enum Kind : int { kNone, kRelu, kLeakyRelu, kClip, kHardSigmoid, kHardSwish, kOther };

inline Kind kind_of(const Activation& a) {
  if (a.op.empty()) return kNone;
  if (a.op == "Relu") return kRelu;
  if (a.op == "LeakyRelu") return kLeakyRelu;
  if (a.op == "Clip") return kClip;
  if (a.op == "HardSigmoid") return kHardSigmoid;
  if (a.op == "HardSwish") return kHardSwish;
  return kOther;
}

// kOther's way: `act` over `pixels` stored vectors of `lanes` floats (one
// channel block), then the lanes from `real` on set back to zero (a block's
// padding channels stay zeros whatever the activation makes of 0).
inline void apply_stored(const Activation& act, float* y, int64_t pixels, int64_t real, int64_t lanes = 16) {
  act.apply_range(y, 0, pixels * lanes);
  if (real < lanes)
    for (int64_t p = 0; p < pixels; ++p) std::fill(y + p * lanes + real, y + (p + 1) * lanes, 0.f);
}

#ifdef OPENACL_ACT512
// KIND a constant, so each caller's loops hold one activation's code.
template <int KIND>
__attribute__((target("avx512f"), always_inline)) inline __m512 apply(__m512 v, float a, float b) {
  if constexpr (KIND == kRelu) {
    return _mm512_max_ps(v, _mm512_setzero_ps());  // NaN -> 0, as apply_range
  } else if constexpr (KIND == kLeakyRelu) {
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, _mm512_set1_ps(a));
  } else if constexpr (KIND == kClip) {  // NaN passes (the second operand is returned when one is NaN)
    return _mm512_min_ps(_mm512_set1_ps(b), _mm512_max_ps(_mm512_set1_ps(a), v));
  } else if constexpr (KIND == kHardSigmoid) {
    const __m512 t = _mm512_min_ps(_mm512_fmadd_ps(v, _mm512_set1_ps(a), _mm512_set1_ps(b)), _mm512_set1_ps(1.f));
    return _mm512_max_ps(t, _mm512_setzero_ps());
  } else if constexpr (KIND == kHardSwish) {
    const __m512 t =
        _mm512_min_ps(_mm512_fmadd_ps(v, _mm512_set1_ps(1.f / 6.f), _mm512_set1_ps(0.5f)), _mm512_set1_ps(1.f));
    return _mm512_mul_ps(v, _mm512_max_ps(t, _mm512_setzero_ps()));
  } else {
    (void)a, (void)b;
    return v;
  }
}

// The same on 8 floats (AVX2): max/min return the second operand where one
// is NaN, as the 16-float forms.
template <int KIND>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 apply8(__m256 v, float a, float b) {
  if constexpr (KIND == kRelu) {
    return _mm256_max_ps(v, _mm256_setzero_ps());  // NaN -> 0
  } else if constexpr (KIND == kLeakyRelu) {
    const __m256 neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(a)), neg);
  } else if constexpr (KIND == kClip) {  // NaN passes
    return _mm256_min_ps(_mm256_set1_ps(b), _mm256_max_ps(_mm256_set1_ps(a), v));
  } else if constexpr (KIND == kHardSigmoid) {
    const __m256 t = _mm256_min_ps(_mm256_fmadd_ps(v, _mm256_set1_ps(a), _mm256_set1_ps(b)), _mm256_set1_ps(1.f));
    return _mm256_max_ps(t, _mm256_setzero_ps());
  } else if constexpr (KIND == kHardSwish) {
    const __m256 t =
        _mm256_min_ps(_mm256_fmadd_ps(v, _mm256_set1_ps(1.f / 6.f), _mm256_set1_ps(0.5f)), _mm256_set1_ps(1.f));
    return _mm256_mul_ps(v, _mm256_max_ps(t, _mm256_setzero_ps()));
  } else {
    (void)a, (void)b;
    return v;
  }
}

// The first `real` of 8 lanes set, for _mm256_and_ps (a block's padding
// lanes to zero).
__attribute__((target("avx2"), always_inline)) inline __m256 lanes8(int64_t real) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(real)), idx));
}
#endif

}  // namespace openacl::kernels::cpu::act512
