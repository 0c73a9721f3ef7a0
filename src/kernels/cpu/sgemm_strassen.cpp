// The one-level Strassen GEMM for a constant B (sgemm_strassen.h).
#include "kernels/cpu/sgemm_strassen.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "kernels/cpu/act512.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/gelu_avx2.h"

#if defined(OPENACL_ACT512) && defined(OPENACL_GELU_AVX2)
#define OPENACL_STRASSEN_AVX512 1
#endif

namespace openacl::kernels::cpu::sgemm_strassen {
namespace {

// Rows per tile for a group of nb 16-column panels: 24 sums in registers
// (16 for one panel), the rest of the 32 for B's vectors.
constexpr int kTileRows[5] = {0, 16, 12, 8, 6};
// A's operand rows of one row block stay within this many bytes (half a Zen
// 4's L2) while the block's column groups read them (128 x 3072 x 768 on
// one thread: 5.4 ms with a quarter, 5.1 with half).
constexpr int64_t kBlockBytes = 512 << 10;

// Where a product's tile goes: quadrant q of C (0 C11, 1 C12, 2 C21, 3 C22)
// with a sign; `first`: the first product to reach that quadrant (it
// writes bias + residual + its sums), `last`: the last (it applies the
// activation).
struct Quad {
  int q;
  float sign;
  bool first, last;
};
// A product: its A operand (0..4: the sums A11 + A22, A21 + A22, A11 + A12,
// A21 - A11, A12 - A22 in the scratch; 5: A11, 6: A22, read in place), and
// the quadrants it adds into. Its B operand is combination i for product i.
struct Product {
  int a;
  int nq;
  Quad d[2];
};
constexpr Product kProducts[7] = {
    {0, 2, {{0, 1.f, true, false}, {3, 1.f, true, false}}},    // P1 = (A11 + A22)(B11 + B22)
    {1, 2, {{2, 1.f, true, false}, {3, -1.f, false, false}}},  // P2 = (A21 + A22) B11
    {5, 2, {{1, 1.f, true, false}, {3, 1.f, false, false}}},   // P3 = A11 (B12 - B22)
    {6, 2, {{0, 1.f, false, false}, {2, 1.f, false, true}}},   // P4 = A22 (B21 - B11)
    {2, 2, {{0, -1.f, false, false}, {1, 1.f, false, true}}},  // P5 = (A11 + A12) B22
    {3, 1, {{3, 1.f, false, true}, {}}},                       // P6 = (A21 - A11)(B11 + B12)
    {4, 1, {{0, 1.f, false, true}, {}}},                       // P7 = (A12 - A22)(B21 + B22)
};

bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_STRASSEN");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

#ifdef OPENACL_GELU_AVX2
// One run's operands and its division into tasks (both forms).
struct Job {
  int64_t M2, K2, N2, N, panels, blocks, groups;
  const float *a, *packed, *bias, *res;
  int64_t lda;
  float* c;
  float* sums;            // the AVX-512 form's sums of A
  const Activation* act;  // null: none
  int kind;               // act512::Kind of act (the AVX-512 form)
  bool gelu;              // act is Gelu
};

Job job_of(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
           const float* res, float* c, const Activation* act) {
  Job j;
  j.M2 = M / 2, j.K2 = K / 2, j.N2 = N / 2, j.N = N, j.panels = j.N2 / 16;
  j.a = a, j.lda = lda, j.packed = packed, j.bias = bias, j.res = res, j.c = c, j.sums = nullptr;
  j.act = act && !act->op.empty() ? act : nullptr;
  j.gelu = j.act && j.act->op == "Gelu";
  j.kind = 0;
  return j;
}

bool avx2_supported() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

#endif  // OPENACL_GELU_AVX2

#ifdef OPENACL_STRASSEN_AVX512
using namespace act512;

// One destination of a tile: its place in C, in the residual and in the bias.
struct Dest {
  float* c;
  const float* r;     // null: no residual, or not the first product here
  const float* bias;  // 16 * NB values (zeros without a bias)
  float sign;
  bool first, last;
};

struct TileArgs {
  const float* a;  // the tile's first row of the A operand
  int64_t lda;
  const float* w;  // the first panel of the tile's group: [K2][16], panels K2 * 16 floats apart
  int64_t K2;
  const float* pf;  // a panel (K2 lines) to prefetch into L2 while the tile runs, or null
  int64_t ldc;      // floats between rows of C (and of the residual)
  int nd;
  Dest d[2];
  int kind;  // act512::Kind of the activation (applied by `last` destinations)
  float alpha, beta;
};

template <int KIND, int NB, int NP>
__attribute__((target("avx512f"), always_inline)) inline void add_into(const Dest& d, int64_t ldc,
                                                                       const __m512 (&acc)[NB][NP], float alpha,
                                                                       float beta) {
  const __m512 s = _mm512_set1_ps(d.sign);
#pragma GCC unroll 16
  for (int i = 0; i < NP; ++i) {
    float* ci = d.c + i * ldc;
    const float* ri = d.r ? d.r + i * ldc : nullptr;
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      __m512 base;
      if (d.first) {
        base = _mm512_loadu_ps(d.bias + 16 * j);
        if (ri) base = _mm512_add_ps(base, _mm512_loadu_ps(ri + 16 * j));
      } else {
        base = _mm512_loadu_ps(ci + 16 * j);
      }
      __m512 v = _mm512_fmadd_ps(acc[j][i], s, base);
      v = apply<KIND>(v, alpha, beta);
      _mm512_storeu_ps(ci + 16 * j, v);
    }
  }
}

// NP rows x NB panels of one product over K2, then added into its quadrants.
template <int NB, int NP>
__attribute__((target("avx512f"))) void tile_kernel(const TileArgs& t) {
  __m512 acc[NB][NP];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j)
#pragma GCC unroll 16
    for (int i = 0; i < NP; ++i) acc[j][i] = _mm512_setzero_ps();
  const int64_t wps = t.K2 * 16;
  const float* a = t.a;
  const float* w = t.w;
  const float* pf = t.pf;
  for (int64_t k = 0; k < t.K2; ++k, w += 16) {
    if (pf) _mm_prefetch(reinterpret_cast<const char*>(pf + k * 16), _MM_HINT_T1);
    __m512 wv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(w + j * wps);
#pragma GCC unroll 16
    for (int i = 0; i < NP; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * t.lda + k]);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[j][i] = _mm512_fmadd_ps(av, wv[j], acc[j][i]);
    }
  }
  for (int q = 0; q < t.nd; ++q) {
    const Dest& d = t.d[q];
    if (!d.last) {
      add_into<kNone, NB, NP>(d, t.ldc, acc, 0.f, 0.f);
      continue;
    }
    switch (t.kind) {
      case kRelu:
        add_into<kRelu, NB, NP>(d, t.ldc, acc, t.alpha, t.beta);
        break;
      case kLeakyRelu:
        add_into<kLeakyRelu, NB, NP>(d, t.ldc, acc, t.alpha, t.beta);
        break;
      case kClip:
        add_into<kClip, NB, NP>(d, t.ldc, acc, t.alpha, t.beta);
        break;
      case kHardSigmoid:
        add_into<kHardSigmoid, NB, NP>(d, t.ldc, acc, t.alpha, t.beta);
        break;
      case kHardSwish:
        add_into<kHardSwish, NB, NP>(d, t.ldc, acc, t.alpha, t.beta);
        break;
      default:
        add_into<kNone, NB, NP>(d, t.ldc, acc, 0.f, 0.f);
        break;
    }
  }
}

using TileFn = void (*)(const TileArgs&);
using TileRow = std::array<TileFn, 17>;

template <int NB, int... NP>
constexpr TileRow row(std::integer_sequence<int, NP...>) {
  TileRow r{};
  ((r[NP + 1] = NP + 1 <= kTileRows[NB] ? &tile_kernel<NB, (NP + 1 <= kTileRows[NB] ? NP + 1 : 1)> : nullptr), ...);
  return r;
}
// kTiles[nb][np]: every tile shape run() may meet.
const std::array<TileRow, 5> kTiles = {
    TileRow{}, row<1>(std::make_integer_sequence<int, 16>{}), row<2>(std::make_integer_sequence<int, 16>{}),
    row<3>(std::make_integer_sequence<int, 16>{}), row<4>(std::make_integer_sequence<int, 16>{})};

// A's five sums of rows [r0, r1) of the half (row r of a sum combines rows
// r and M2 + r of A): sums[s][r][k], s as Product::a.
void make_sums(const float* a, int64_t lda, int64_t M2, int64_t K2, int64_t r0, int64_t r1, float* sums) {
  const size_t plane = static_cast<size_t>(M2 * K2);
  for (int64_t r = r0; r < r1; ++r) {
    const float* a11 = a + r * lda;
    const float* a12 = a11 + K2;
    const float* a21 = a + (M2 + r) * lda;
    const float* a22 = a21 + K2;
    float* s0 = sums + r * K2;
    float* s1 = s0 + plane;
    float* s2 = s1 + plane;
    float* s3 = s2 + plane;
    float* s4 = s3 + plane;
#pragma omp simd
    for (int64_t k = 0; k < K2; ++k) {
      s0[k] = a11[k] + a22[k];
      s1[k] = a21[k] + a22[k];
      s2[k] = a11[k] + a12[k];
      s3[k] = a21[k] - a11[k];
      s4[k] = a12[k] - a22[k];
    }
  }
}

// Task `task`: row block task / groups x column group task % groups, all
// seven products.
void run_task(const Job& j, int64_t task) {
  alignas(64) static const float kZeros[64] = {};
  const int64_t K2 = j.K2, N2 = j.N2, N = j.N;
  const int64_t rb = task / j.groups, g = task % j.groups;
  const int64_t r0 = rb * j.M2 / j.blocks, r1 = (rb + 1) * j.M2 / j.blocks;
  const int64_t p0 = g * j.panels / j.groups, nb = (g + 1) * j.panels / j.groups - p0;
  const int64_t nt = (r1 - r0 + kTileRows[nb] - 1) / kTileRows[nb];
  for (int pi = 0; pi < 7; ++pi) {
    const Product& P = kProducts[pi];
    TileArgs t;
    if (P.a < 5)
      t.a = j.sums + static_cast<size_t>(P.a) * static_cast<size_t>(j.M2 * K2), t.lda = K2;
    else if (P.a == 5)
      t.a = j.a, t.lda = j.lda;
    else
      t.a = j.a + j.M2 * j.lda + K2, t.lda = j.lda;
    const float* const abase = t.a;
    t.K2 = K2, t.ldc = N, t.nd = P.nq;
    t.w = j.packed + static_cast<size_t>(pi) * static_cast<size_t>(K2 * N2) + p0 * K2 * 16;
    t.kind = j.kind == kOther ? kNone : j.kind;
    t.alpha = j.act ? j.act->alpha : 0.f, t.beta = j.act ? j.act->beta : 0.f;
    // The next product's panels (after the last product, the next task's),
    // one panel per tile, into L2 while this product runs: B's combinations
    // come from memory, and the hardware prefetcher starts late on each new
    // group (128 x 768 x 3072 with B from memory, one thread: oneDNN's time
    // over ours 1.02-1.08 without, 1.09-1.13 with).
    const float* next = nullptr;
    int64_t next_nb = 0;
    if (pi < 6) {
      next = t.w + static_cast<size_t>(K2 * N2), next_nb = nb;
    } else if (task + 1 < j.blocks * j.groups) {
      const int64_t g2 = (task + 1) % j.groups, q0 = g2 * j.panels / j.groups;
      next = j.packed + q0 * K2 * 16, next_nb = (g2 + 1) * j.panels / j.groups - q0;
    }
    for (int64_t ti = 0; ti < nt; ++ti) {
      t.pf = next && ti < next_nb ? next + ti * K2 * 16 : nullptr;
      const int64_t ta = r0 + ti * (r1 - r0) / nt, tb = r0 + (ti + 1) * (r1 - r0) / nt;
      t.a = abase + ta * t.lda;
      for (int q = 0; q < P.nq; ++q) {
        const Quad& qd = P.d[q];
        const int64_t off = ((qd.q / 2) * j.M2 + ta) * N + (qd.q % 2) * N2 + p0 * 16;
        Dest& d = t.d[q];
        d.c = j.c + off;
        d.r = j.res && qd.first ? j.res + off : nullptr;
        d.bias = j.bias ? j.bias + (qd.q % 2) * N2 + p0 * 16 : kZeros;
        d.sign = qd.sign, d.first = qd.first, d.last = qd.last;
      }
      kTiles[static_cast<size_t>(nb)][static_cast<size_t>(tb - ta)](t);
      if (j.kind == kOther)  // an activation without a vector form in act512: on the stored rows
        for (int q = 0; q < P.nq; ++q)
          if (P.d[q].last)
            for (int64_t i = 0; i < tb - ta; ++i) {
              float* row = t.d[q].c + i * N;
              if (j.gelu)
                gelu_avx2(row, nb * 16);
              else
                j.act->apply_range(row, 0, nb * 16);
            }
    }
  }
}

// The AVX-512 form: A's sums into the calling thread's scratch, then the
// tasks: row blocks (A's operand rows within kBlockBytes) x column groups of
// up to four panels (sizes balanced).
void run_avx512(Job& j) {
  j.sums = static_cast<float*>(scratch(static_cast<size_t>(5 * j.M2 * j.K2) * sizeof(float)));
  parallel_for(j.M2, std::max<int64_t>(1, 4096 / j.K2),
               [&](int64_t lo, int64_t hi) { make_sums(j.a, j.lda, j.M2, j.K2, lo, hi, j.sums); });
  const int64_t block_rows = std::max<int64_t>(6, kBlockBytes / (j.K2 * static_cast<int64_t>(sizeof(float))));
  j.blocks = (j.M2 + block_rows - 1) / block_rows;
  j.groups = (j.panels + 3) / 4;
  parallel_for(j.blocks * j.groups, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) run_task(j, t);
  });
}
#endif  // OPENACL_STRASSEN_AVX512

#ifdef OPENACL_GELU_AVX2
// The AVX2 + FMA form, for CPUs without AVX-512. 16 registers, so a tile is
// 6 rows x one 16-column panel (12 sums, 2 of B, 1 of A), and K is cut in
// blocks whose panel slice stays in L1 while the block's tiles pass over it
// (as sgemm_packed's: Zen 2's L1 holds 32 KiB, so a whole K/2 x 16 panel of
// BERT's 3072 x 768 GEMM, 96 KiB, would come from L2 for every tile); a
// tile's sums carry from one K block to the next in `part`. All seven A
// operands (the five sums, A11 and A22) are packed per tile, so each tile
// reads A as one stream. Each tile prefetches part of the next panel slice
// into L2. On one Zen 2 thread the tile runs at 92% of the FMA peak hot in L1.
namespace avx2 {

// K blocks of at most this many rows (balanced, multiples of 8).
constexpr int64_t kKc = 256;
// Tiles per row block: the block's slice of the A operand (96 rows x kKc,
// 96 KiB) stays in L2 while the group's panels go past it.
constexpr int64_t kBlockTiles = 16;
constexpr int64_t kGroup = 4;           // panels per task
constexpr int64_t kPart = kGroup * 16;  // floats between rows of a task's partial sums

// The seven A operands, packed per tile of 6 rows so a tile reads one
// stream: operand s, tile t, element (r, k) at
// ((s * tiles + t) * K8 + k / 8 * 8) * 6 + r * 8 + k % 8 (K8: K/2 rounded up
// to 8): the 8 k's of each row one after another, 6 rows per 8 k's.
struct PackedA {
  float* p;
  int64_t tiles, K8;
  float* at(int s, int64_t t) const { return p + (static_cast<size_t>(s) * tiles + t) * static_cast<size_t>(K8) * 6; }
};

size_t packed_a_floats(int64_t M2, int64_t K2) {
  return size_t{7} * static_cast<size_t>((M2 + 5) / 6) * static_cast<size_t>((K2 + 7) / 8 * 8) * 6;
}

// A's operands for tiles [t0, t1): the five sums of kProducts (A11 + A22, A21
// + A22, A11 + A12, A21 - A11, A12 - A22) and A11, A22.
__attribute__((target("avx2,fma"))) void pack_a(const Job& j, const PackedA& pa, int64_t t0, int64_t t1) {
  const int64_t M2 = j.M2, K2 = j.K2;
  for (int64_t t = t0; t < t1; ++t)
    for (int64_t r = 0; r < 6 && t * 6 + r < M2; ++r) {
      const float* a11 = j.a + (t * 6 + r) * j.lda;
      const float* a12 = a11 + K2;
      const float* a21 = j.a + (M2 + t * 6 + r) * j.lda;
      const float* a22 = a21 + K2;
      float* o[7];
      for (int s = 0; s < 7; ++s) o[s] = pa.at(s, t) + r * 8;
      int64_t k = 0;
      for (; k + 8 <= K2; k += 8) {
        const __m256 x11 = _mm256_loadu_ps(a11 + k), x12 = _mm256_loadu_ps(a12 + k);
        const __m256 x21 = _mm256_loadu_ps(a21 + k), x22 = _mm256_loadu_ps(a22 + k);
        const size_t at = static_cast<size_t>(k) * 6;
        _mm256_storeu_ps(o[0] + at, _mm256_add_ps(x11, x22));
        _mm256_storeu_ps(o[1] + at, _mm256_add_ps(x21, x22));
        _mm256_storeu_ps(o[2] + at, _mm256_add_ps(x11, x12));
        _mm256_storeu_ps(o[3] + at, _mm256_sub_ps(x21, x11));
        _mm256_storeu_ps(o[4] + at, _mm256_sub_ps(x12, x22));
        _mm256_storeu_ps(o[5] + at, x11);
        _mm256_storeu_ps(o[6] + at, x22);
      }
      for (; k < K2; ++k) {
        const size_t at = static_cast<size_t>(k / 8) * 48 + k % 8;
        o[0][at] = a11[k] + a22[k], o[1][at] = a21[k] + a22[k], o[2][at] = a11[k] + a12[k];
        o[3][at] = a21[k] - a11[k], o[4][at] = a12[k] - a22[k], o[5][at] = a11[k], o[6][at] = a22[k];
      }
    }
}

struct TileArgs {
  const float* a;  // the tile's packed A operand at the K block's first k
  const float* w;  // the panel's slice for this K block: [kb][16]
  int64_t kb;
  const float* pf;  // lines of the next panel slice to prefetch while this tile runs
  int64_t npf;      // how many (multiple of 8)
  float* part;      // the tile's sums so far (rows kPart apart)
  bool resume;      // add to part (not the first K block)
  bool finish;      // the last K block: add into the quadrants (else store into part)
  int64_t ldc;
  int nd;
  struct {
    float* c;
    const float* r;     // null: no residual, or not the first product here
    const float* bias;  // 16 values (zeros without a bias)
    float sign;
    bool first, last;
  } d[2];
};

// One k of a tile (A's six values at a, r * 8 apart; B's two vectors at w):
// 12 multiply-adds; PF: also one line of the next slice into L2.
template <int MR, bool PF>
__attribute__((target("avx2,fma"), always_inline)) inline void step(const float* a, const float* w, const float* pf,
                                                                    __m256 (&acc)[MR][2]) {
  if constexpr (PF) _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
  const __m256 b0 = _mm256_loadu_ps(w), b1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    const __m256 av = _mm256_broadcast_ss(a + r * 8);
    acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
    acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
  }
}

// `n` k's (at most 8) from one 8-k group of the packed A. Not unrolled: 8
// k's at once made GCC spill sums to the stack (hot in L1 on Zen 2: 88
// GFLOP/s against 92.5 for one k per iteration).
template <int MR, bool PF>
__attribute__((target("avx2,fma"), always_inline)) inline void group(const float* a, const float* w, const float* pf,
                                                                     int n, __m256 (&acc)[MR][2]) {
#pragma GCC unroll 1
  for (int kk = 0; kk < n; ++kk) step<MR, PF>(a + kk, w + kk * 16, pf + kk * 16, acc);
}

// GELU: the activation is Gelu, applied in registers by the last product to
// reach a quadrant (per row of 16 from memory it cost 8% of BERT's
// feed-forward GEMM at batch 1).
template <int MR, bool GELU>
__attribute__((target("avx2,fma"))) void tile(const TileArgs& t) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = t.resume ? _mm256_loadu_ps(t.part + r * kPart) : _mm256_setzero_ps();
    acc[r][1] = t.resume ? _mm256_loadu_ps(t.part + r * kPart + 8) : _mm256_setzero_ps();
  }
  const float* a = t.a;
  const float* w = t.w;
  const float* pf = t.pf;
  const int64_t k8 = t.kb / 8 * 8, npf = std::min(t.npf, k8);
  int64_t k = 0;
  for (; k < npf; k += 8, a += 48, w += 128, pf += 128) group<MR, true>(a, w, pf, 8, acc);
  for (; k < k8; k += 8, a += 48, w += 128) group<MR, false>(a, w, pf, 8, acc);
  group<MR, false>(a, w, pf, static_cast<int>(t.kb - k8), acc);  // the last k's (K/2 % 8)
  if (!t.finish) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      _mm256_storeu_ps(t.part + r * kPart, acc[r][0]);
      _mm256_storeu_ps(t.part + r * kPart + 8, acc[r][1]);
    }
    return;
  }
  for (int q = 0; q < t.nd; ++q) {
    const auto& d = t.d[q];
    const __m256 s = _mm256_set1_ps(d.sign);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float* c = d.c + r * t.ldc;
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m256 base;
        if (d.first) {
          base = _mm256_loadu_ps(d.bias + 8 * h);
          if (d.r) base = _mm256_add_ps(base, _mm256_loadu_ps(d.r + r * t.ldc + 8 * h));
        } else {
          base = _mm256_loadu_ps(c + 8 * h);
        }
        __m256 v = _mm256_fmadd_ps(acc[r][h], s, base);
        if (GELU && d.last) v = gelu8(v);
        _mm256_storeu_ps(c + 8 * h, v);
      }
    }
  }
}

using TileFn = void (*)(const TileArgs&);
constexpr TileFn kTiles[2][7] = {
    {nullptr, &tile<1, false>, &tile<2, false>, &tile<3, false>, &tile<4, false>, &tile<5, false>, &tile<6, false>},
    {nullptr, &tile<1, true>, &tile<2, true>, &tile<3, true>, &tile<4, true>, &tile<5, true>, &tile<6, true>}};

// Task `task`: row block task / groups x column group task % groups, all
// seven products, each K block by K block (the K blocks' bounds multiples of
// 8, as the packed A's groups).
void run_task(const Job& j, const PackedA& pa, int64_t task) {
  alignas(32) static const float kZeros[16] = {};
  alignas(32) float part[kBlockTiles * 6 * kPart];
  const int64_t K2 = j.K2, N2 = j.N2, N = j.N;
  const int64_t rb = task / j.groups, g = task % j.groups;
  const int64_t t0 = rb * pa.tiles / j.blocks, t1 = (rb + 1) * pa.tiles / j.blocks;
  const int64_t p0 = g * j.panels / j.groups, nb = (g + 1) * j.panels / j.groups - p0;
  const int64_t kblocks = (K2 + kKc - 1) / kKc;
  auto kbound = [&](int64_t i) { return i >= kblocks ? K2 : i * K2 / kblocks / 8 * 8; };
  for (int pi = 0; pi < 7; ++pi) {
    const Product& P = kProducts[pi];
    TileArgs t;
    t.ldc = N, t.nd = P.nq;
    const float* combo = j.packed + static_cast<size_t>(pi) * static_cast<size_t>(K2 * N2);
    for (int64_t kbi = 0; kbi < kblocks; ++kbi) {
      const int64_t k0 = kbound(kbi), k1 = kbound(kbi + 1);
      t.kb = k1 - k0, t.resume = kbi > 0, t.finish = kbi + 1 == kblocks;
      for (int64_t p = 0; p < nb; ++p) {
        t.w = combo + (p0 + p) * K2 * 16 + k0 * 16;
        // The next slice (next panel, else the next K block's first, else
        // the next product's), its lines spread over this panel's tiles: B
        // comes from memory, and each slice is read by this task alone
        // (128 x 768 x 3072 with B from memory, one thread: 10.5 ms without, 9.0 with).
        const float* next = nullptr;
        int64_t next_lines = 0;
        if (p + 1 < nb) {
          next = t.w + K2 * 16, next_lines = t.kb;
        } else if (kbi + 1 < kblocks) {
          next = combo + p0 * K2 * 16 + k1 * 16, next_lines = kbound(kbi + 2) - k1;
        } else if (pi < 6) {
          next = combo + static_cast<size_t>(K2 * N2) + p0 * K2 * 16, next_lines = kbound(1);
        }
        const int64_t ntiles = t1 - t0;
        for (int64_t ti = t0; ti < t1; ++ti) {
          const int64_t m = ti * 6, mr = std::min<int64_t>(6, j.M2 - m);
          const int64_t l0 = (ti - t0) * next_lines / ntiles / 8 * 8;
          const int64_t l1 = ti + 1 == t1 ? next_lines : (ti - t0 + 1) * next_lines / ntiles / 8 * 8;
          t.pf = next ? next + l0 * 16 : nullptr, t.npf = next ? l1 - l0 : 0;
          t.a = pa.at(P.a, ti) + k0 * 6;
          t.part = part + (ti - t0) * 6 * kPart + p * 16;
          if (t.finish)
            for (int q = 0; q < P.nq; ++q) {
              const Quad& qd = P.d[q];
              const int64_t col = (qd.q % 2) * N2 + (p0 + p) * 16;
              const int64_t off = ((qd.q / 2) * j.M2 + m) * N + col;
              auto& d = t.d[q];
              d.c = j.c + off;
              d.r = j.res && qd.first ? j.res + off : nullptr;
              d.bias = j.bias ? j.bias + col : kZeros;
              d.sign = qd.sign, d.first = qd.first, d.last = qd.last;
            }
          kTiles[j.gelu][mr](t);
          if (t.finish && j.act && !j.gelu)  // another activation: on the finished rows, while in cache
            for (int q = 0; q < P.nq; ++q)
              if (P.d[q].last)
                for (int64_t i = 0; i < mr; ++i) j.act->apply_range(t.d[q].c + i * N, 0, 16);
        }
      }
    }
  }
}

// The whole GEMM: A's operands into the calling thread's scratch, then the
// tasks (row blocks of kBlockTiles tiles x column groups of up to kGroup
// panels).
void run(Job& j) {
  PackedA pa;
  pa.tiles = (j.M2 + 5) / 6, pa.K8 = (j.K2 + 7) / 8 * 8;
  pa.p = static_cast<float*>(scratch(packed_a_floats(j.M2, j.K2) * sizeof(float)));
  parallel_for(pa.tiles, std::max<int64_t>(1, 1024 / j.K2), [&](int64_t lo, int64_t hi) { pack_a(j, pa, lo, hi); });
  j.blocks = (pa.tiles + kBlockTiles - 1) / kBlockTiles;
  j.groups = (j.panels + kGroup - 1) / kGroup;
  parallel_for(j.blocks * j.groups, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) run_task(j, pa, t);
  });
}

}  // namespace avx2
#endif  // OPENACL_GELU_AVX2

}  // namespace

bool supported() {
#ifdef OPENACL_GELU_AVX2
  return avx2_supported() && enabled();
#else
  return false;
#endif
}

bool fits(int64_t M, int64_t K, int64_t N) {
  const int64_t most = int64_t{1} << 30;
  return M >= 2 && M % 2 == 0 && K >= 2 && K % 2 == 0 && N >= 32 && N % 32 == 0 && M <= most && K <= most && N <= most;
}

bool pays(int64_t M, int64_t K, int64_t N) {
#ifdef OPENACL_STRASSEN_AVX512
  static const bool wide = __builtin_cpu_supports("avx512f") && avx2_supported();
#else
  const bool wide = false;
#endif
  return fits(M, K, N) && M >= kMinRows && K * N >= kMinWeights && (wide || M <= kMaxRowsAvx2);
}

size_t packed_floats(int64_t K, int64_t N) {
  return size_t{7} * static_cast<size_t>(K / 2) * static_cast<size_t>(N / 2);
}

void pack(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out) {
  const int64_t K2 = K / 2, N2 = N / 2, panels = N2 / 16;
  const size_t combo = static_cast<size_t>(K2 * N2);
  auto at = [&](int64_t k, int64_t n) { return b[k * stride_k + n * stride_n]; };
  parallel_for(panels, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p)
      for (int64_t k = 0; k < K2; ++k)
        for (int64_t l = 0; l < 16; ++l) {
          const int64_t n = p * 16 + l;
          const float b11 = at(k, n), b12 = at(k, N2 + n), b21 = at(K2 + k, n), b22 = at(K2 + k, N2 + n);
          const float w[7] = {b11 + b22, b11, b12 - b22, b21 - b11, b22, b11 + b12, b21 + b22};
          const size_t o = static_cast<size_t>((p * K2 + k) * 16 + l);
          for (int i = 0; i < 7; ++i) out[i * combo + o] = w[i];
        }
  });
}

const char* recipe() { return "openacl strassen v1 [7][N/32][K/2][16]"; }

bool run_avx2(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
              const float* res, float* c, const Activation* act) {
#ifdef OPENACL_GELU_AVX2
  if (!avx2_supported() || !fits(M, K, N)) return false;
  Job j = job_of(M, N, K, a, lda, packed, bias, res, c, act);
  avx2::run(j);
  return true;
#else
  (void)M, (void)N, (void)K, (void)a, (void)lda, (void)packed, (void)bias, (void)res, (void)c, (void)act;
  return false;
#endif
}

bool run(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
         const float* res, float* c, const Activation* act) {
  if (!supported() || !fits(M, K, N)) return false;
#ifdef OPENACL_STRASSEN_AVX512
  static const bool wide = __builtin_cpu_supports("avx512f");
  if (wide) {
    Job j = job_of(M, N, K, a, lda, packed, bias, res, c, act);
    j.kind = act ? act512::kind_of(*act) : act512::kNone;
    run_avx512(j);
    return true;
  }
#endif
  return run_avx2(M, N, K, a, lda, packed, bias, res, c, act);
}

}  // namespace openacl::kernels::cpu::sgemm_strassen
