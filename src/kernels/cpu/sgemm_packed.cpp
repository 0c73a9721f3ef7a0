// The packed-B AVX2 GEMM (sgemm_packed.h). The micro-kernel is compiled for
// AVX2 + FMA by a target attribute and only called where the CPU has both.
#include "kernels/cpu/sgemm_packed.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/gelu_avx2.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OPENACL_SGEMM_X86 1
#endif

namespace openacl::kernels::cpu::sgemm_packed {

bool supported() {
#if OPENACL_SGEMM_X86
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

bool prefer() {
#if OPENACL_SGEMM_X86
  static const bool yes = supported() && !__builtin_cpu_supports("avx512f");
  return yes;
#else
  return false;
#endif
}

bool fits(int64_t M, int64_t K, int64_t N) { return M > 0 && M <= kMaxRows && K > 0 && N > 0 && N % kNr == 0; }

size_t packed_floats(int64_t K, int64_t N) { return static_cast<size_t>(K) * static_cast<size_t>(N); }

void pack(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out) {
  const int64_t panels = N / kNr;
  // One task per K block: each writes its own span of `out`.
  const int64_t blocks = (K + kKc - 1) / kKc;
  parallel_for(blocks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t blk = lo; blk < hi; ++blk) {
      const int64_t k0 = blk * kKc, kb = std::min(kKc, K - k0);
      float* o = out + k0 * N;
      for (int64_t j = 0; j < panels; ++j)
        for (int64_t k = k0; k < k0 + kb; ++k)
          for (int64_t c = 0; c < kNr; ++c) *o++ = b[k * stride_k + (j * kNr + c) * stride_n];
    }
  });
}

const char* recipe() { return "openacl sgemm_packed v1 kc256 nr16"; }

#if OPENACL_SGEMM_X86
namespace {

#define OPENACL_AVX2_FMA __attribute__((target("avx2,fma")))

// One k: C[MR x 16] += A[MR x 1] x panel row k; PF: also one line of the
// next panel into L2.
template <int MR, bool PF>
OPENACL_AVX2_FMA inline __attribute__((always_inline)) void step(const float* a, int64_t lda, const float* w,
                                                                 const float* pf, __m256 (&acc)[MR][2]) {
  if constexpr (PF) _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
  const __m256 b0 = _mm256_loadu_ps(w), b1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const __m256 av = _mm256_broadcast_ss(a + r * lda);
    acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
    acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
  }
}

// C[MR x 16] (+)= A[MR x kb] x panel[kb x 16]. first: start from `init` rows
// (ldi apart; nullptr: zero) plus the bias instead of C. The first npf
// k's each prefetch one line (16 floats) from pf on into L2.
template <int MR>
OPENACL_AVX2_FMA inline __attribute__((always_inline)) void tile(int64_t kb, const float* a, int64_t lda,
                                                                 const float* panel, float* c, int64_t ldc, bool first,
                                                                 const float* init, int64_t ldi, const float* bias,
                                                                 const float* pf, int64_t npf) {
  __m256 acc[MR][2];
  if (first) {
    const __m256 z0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 z1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      acc[r][0] = init ? _mm256_add_ps(z0, _mm256_loadu_ps(init + r * ldi)) : z0;
      acc[r][1] = init ? _mm256_add_ps(z1, _mm256_loadu_ps(init + r * ldi + 8)) : z1;
    }
  } else {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      acc[r][0] = _mm256_loadu_ps(c + r * ldc);
      acc[r][1] = _mm256_loadu_ps(c + r * ldc + 8);
    }
  }
  const int64_t kp = std::min(npf, kb);  // the k's that prefetch
  int64_t k = 0;
  for (; k < kp; ++k) step<MR, true>(a + k, lda, panel + k * kNr, pf + k * kNr, acc);
  for (; k < kb; ++k) step<MR, false>(a + k, lda, panel + k * kNr, nullptr, acc);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_ps(c + r * ldc, acc[r][0]);
    _mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
  }
}

// One task: rows [m0, m1) x columns [n0, n1) of C, over all of K. While a
// panel's tiles run, they prefetch the next panel (the task's next one in
// this K block, else its first in the next; B comes from memory), its lines
// spread over the tiles.
OPENACL_AVX2_FMA void block(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t N, int64_t K, const float* a,
                            int64_t lda, const float* packed_b, const float* bias, const float* res, float* c) {
  // The rows split evenly over ceil(rows / 6) tiles: 128 rows as 18 tiles
  // of 6 and 4 of 5, not 21 of 6 and one of 2, whose 4 sums (chains of
  // dependent FMAs) keep the FMA pipes under half busy.
  const int64_t ntiles = (m1 - m0 + 5) / 6, wide = (m1 - m0) - ntiles * ((m1 - m0) / ntiles);
  const int64_t rows = (m1 - m0) / ntiles;  // the first `wide` tiles take one more
  for (int64_t k0 = 0; k0 < K; k0 += kKc) {
    const int64_t kb = std::min(kKc, K - k0);
    const bool first = k0 == 0;
    for (int64_t n = n0; n < n1; n += kNr) {
      const float* panel = packed_b + k0 * N + (n / kNr) * kb * kNr;
      const float* next = nullptr;
      int64_t next_kb = 0;
      if (n + kNr < n1) {
        next = panel + kb * kNr, next_kb = kb;
      } else if (k0 + kKc < K) {
        next_kb = std::min(kKc, K - k0 - kKc), next = packed_b + (k0 + kKc) * N + (n0 / kNr) * next_kb * kNr;
      }
      const float* bn = bias ? bias + n : nullptr;
      for (int64_t m = m0, ti = 0, mr = 0; m < m1; m += mr, ++ti) {
        mr = rows + (ti < wide ? 1 : 0);
        const int64_t l0 = ti * next_kb / ntiles, l1 = (ti + 1) * next_kb / ntiles;
        const float* pf = next ? next + l0 * kNr : nullptr;
        const int64_t npf = next ? l1 - l0 : 0;
        const float* ap = a + m * lda + k0;
        float* cp = c + m * N + n;
        const float* ip = res ? res + m * N + n : nullptr;
        switch (mr) {
          case 6: tile<6>(kb, ap, lda, panel, cp, N, first, ip, N, bn, pf, npf); break;
          case 5: tile<5>(kb, ap, lda, panel, cp, N, first, ip, N, bn, pf, npf); break;
          case 4: tile<4>(kb, ap, lda, panel, cp, N, first, ip, N, bn, pf, npf); break;
          case 3: tile<3>(kb, ap, lda, panel, cp, N, first, ip, N, bn, pf, npf); break;
          case 2: tile<2>(kb, ap, lda, panel, cp, N, first, ip, N, bn, pf, npf); break;
          default: tile<1>(kb, ap, lda, panel, cp, N, first, ip, N, bn, pf, npf); break;
        }
      }
    }
  }
}

}  // namespace
#endif

bool run(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed_b, const float* bias,
         const float* res, float* c, const Activation* act) {
  if (!supported() || !fits(M, K, N)) return false;
#if OPENACL_SGEMM_X86
  const int64_t mt = (M + kMc - 1) / kMc, nt = (N + kNc - 1) / kNc;
  const bool with_act = act && !act->op.empty();
  const bool gelu_act = with_act && act->op == "Gelu";
  parallel_for(mt * nt, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t m0 = (t / nt) * kMc, m1 = std::min(M, m0 + kMc);
      const int64_t n0 = (t % nt) * kNc, n1 = std::min(N, n0 + kNc);
      block(m0, m1, n0, n1, N, K, a, lda, packed_b, bias, res, c);
      if (gelu_act)  // while the block is still in cache
        for (int64_t m = m0; m < m1; ++m) gelu_avx2(c + m * N + n0, n1 - n0);
      else if (with_act)
        for (int64_t m = m0; m < m1; ++m) act->apply_range(c + m * N, n0, n1);
    }
  });
  return true;
#else
  (void)a, (void)lda, (void)packed_b, (void)bias, (void)res, (void)c, (void)act;
  return false;
#endif
}

}  // namespace openacl::kernels::cpu::sgemm_packed
