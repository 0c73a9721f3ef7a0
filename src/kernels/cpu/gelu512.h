// Gelu (erf form) over a run of floats with AVX-512F, 16 lanes at a time:
// the AVX-512 GEMM (sgemm_strassen.cpp) applies it to a block of C while
// the block is in cache. Also e^z for z <= 0 (the attention's softmax). The algorithm of gelu_avx2.h on twice the lanes,
// with 1 / (1 + p u) by a reciprocal estimate and one Newton step instead
// of a division, and e^(-u^2) scaled by vscalefps: to within 2e-7 of
// 0.5 x (1 + erf(x / sqrt 2)) relative to max(1, |x|), as there (both
// 1.6e-7 at worst). On a Zen 5 thread twice the 8-lane form's speed (0.43
// -> 0.21 ns per float): BERT-base's twelve 128 x 768 x 3072 GEMMs with Gelu
// 29.5-29.7 -> 28.4-29.0 ms. Only called where the CPU has AVX-512F.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 reads the _mm512_undefined_ps() inside some AVX-512 intrinsics as
// a use of an uninitialised value (a false positive; as act512.h).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define OPENACL_GELU512 1

namespace openacl::kernels::cpu {

#define OPENACL_AVX512F __attribute__((target("avx512f"), always_inline)) inline

// p[v] = (..(p[v] x[v] + c[0]) x[v] + ..) x[v] + c[N-1] for V vectors, the
// steps interleaved (as gelu_avx2.h's horner).
template <int V, int N>
OPENACL_AVX512F void horner16(__m512 (&p)[V], const __m512 (&x)[V], const float (&c)[N]) {
#pragma GCC unroll 8
  for (int k = 0; k < N; ++k)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) p[v] = _mm512_fmadd_ps(p[v], x[v], _mm512_set1_ps(c[k]));
}

// e^z[v] for z <= 0 (the Gelu's e^(-x^2), a softmax's e^(s - max)), V
// vectors' steps interleaved: 2^n e^r with |r| <= ln2 / 2, e^r by Cephes'
// degree-6 polynomial for expf, 2^n applied by vscalefps. Below -87 it is
// 2^-126 e^r, not 0 (callers that need 0 there mask it); NaN stays NaN.
template <int V>
OPENACL_AVX512F void exp_nonpositive16(__m512 (&z)[V]) {
  __m512 n[V], r[V], p[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    z[v] = _mm512_max_ps(z[v], _mm512_set1_ps(-87.f));
    n[v] = _mm512_roundscale_ps(_mm512_mul_ps(z[v], _mm512_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r[v] = _mm512_fnmadd_ps(n[v], _mm512_set1_ps(0.693359375f), z[v]);
    r[v] = _mm512_fnmadd_ps(n[v], _mm512_set1_ps(-2.12194440e-4f), r[v]);
    p[v] = _mm512_set1_ps(1.9875691500e-4f);
  }
  horner16<V>(p, r, {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    p[v] = _mm512_fmadd_ps(p[v], _mm512_mul_ps(r[v], r[v]), _mm512_add_ps(r[v], _mm512_set1_ps(1.f)));
    z[v] = _mm512_scalef_ps(p[v], n[v]);
  }
}

// y[16V] = x * Phi(x), V vectors' steps interleaved (one vector's chain of
// about 25 dependent operations leaves the FP units idle). erfc(u), u >= 0,
// by Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7): t (a1 + .. + a5
// t^4) e^(-u^2), t = 1 / (1 + p u); 1 + erf(v) is erfc(|v|) for v < 0 and
// 2 - erfc(v) otherwise (no cancellation on the negative side).
template <int V>
OPENACL_AVX512F void gelu16_vectors(float* y) {
  __m512 x[V], t[V], e[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    x[v] = _mm512_loadu_ps(y + 16 * v);
    const __m512 u = _mm512_abs_ps(_mm512_mul_ps(x[v], _mm512_set1_ps(0.70710678118654752f)));
    // (Capped: at x = +-inf the Newton step would make inf x 0.)
    const __m512 d = _mm512_min_ps(_mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), u, _mm512_set1_ps(1.f)),
                                   _mm512_set1_ps(1e30f));
    const __m512 r = _mm512_rcp14_ps(d);  // relative error below 2^-14; one Newton step: below 2^-27
    t[v] = _mm512_fmadd_ps(_mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.f)), r, r);
    e[v] = _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), u), u);
  }
  exp_nonpositive16<V>(e);  // e^(-u^2)
  __m512 q[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) q[v] = _mm512_set1_ps(1.061405429f);
  horner16<V>(q, t, {-1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f});
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    const __m512 erfc = _mm512_mul_ps(_mm512_mul_ps(q[v], t[v]), e[v]);
    const __mmask16 neg = _mm512_cmp_ps_mask(x[v], _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512 one_plus_erf = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(2.f), erfc), erfc);
    _mm512_storeu_ps(y + 16 * v, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x[v]), one_plus_erf));
  }
}

// Gelu in place over y[0, n): 64 floats at a time, then 16, then the rest
// by erf.
__attribute__((target("avx512f"))) inline void gelu_avx512(float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) gelu16_vectors<4>(y + i);
  for (; i + 16 <= n; i += 16) gelu16_vectors<1>(y + i);
  for (; i < n; ++i) y[i] = 0.5f * y[i] * (1.f + std::erf(y[i] * 0.70710678118654752f));
}

#undef OPENACL_AVX512F

}  // namespace openacl::kernels::cpu
#endif
