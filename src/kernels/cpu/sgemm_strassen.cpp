// The one-level Strassen GEMM for a constant B (sgemm_strassen.h).
#include "kernels/cpu/sgemm_strassen.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/act512.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/gelu512.h"

#if defined(OPENACL_ACT512) && defined(OPENACL_GELU512)
#define OPENACL_STRASSEN_AVX512 1
#endif

namespace openacl::kernels::cpu::sgemm_strassen {
namespace {

// Rows per tile for a group of nb 16-column panels: 24 sums in registers
// (16 for one panel), the rest of the 32 for B's vectors; 28 for four
// panels, with the 32nd register for A's broadcast GCC keeps one sum on the
// stack. Tiles of six rows left BERT's 64-row halves at batch 1 two tiles of
// five, each row of which took 10% longer than a row of six (per-tile
// cycle counts in the model); with seven, ten tiles of six or seven. BERT-base
// at batch 1 on an Intel Xeon (medians of alternating runs): one thread 137.7
// -> 136.1 ms, its three Strassen GEMMs 1.3-1.6% faster; batch 8 and the
// shapes alone (1024 x 768 x 3072, 1024 x 768 x 2304, B hot) unchanged.
constexpr int kTileRows[5] = {0, 16, 12, 8, 7};
// A's operand rows of one row block stay within this many bytes (half a Zen
// 4's L2) while the block's column groups read them (128 x 3072 x 768 on
// one thread: 5.4 ms with a quarter, 5.1 with half).
constexpr int64_t kBlockBytes = 512 << 10;
// And Strassen's row blocks hold at most this many rows (16 tiles): a block
// cycles seven A operands and seven B groups through L2 per column group, and
// where K/2 is short the bytes alone allowed 341 rows, whose operands (2.8 MB
// at K/2 = 384) left L2 before the next group read them. BERT's batch-8
// shapes on an Intel Xeon (2 MiB L2; one thread, B hot): 1024 x 768 x 3072
// 31.7-32.7 -> 29.5-30.2 ms, 1024 x 768 x 2304 23.5-23.7 -> 22.3-22.5, 1024
// x 768 x 768 7.58-7.63 -> 7.32-7.39; 1024 x 3072 x 768 (84 rows either way)
// unchanged; 60 or 48 rows no better. BERT-base at batch 8: one thread
// 1168-1240 -> 1144-1169 ms, two 629-689 -> 598-660.
constexpr int64_t kStrassenBlockRows = 96;
// Above this many bytes of a block's A operands (seven rows x K/2 floats
// for Strassen's) its products go one at a time over all column groups
// (run_groups).
constexpr int64_t kOperandBytes = int64_t{3} << 19;
// run_split: each thread's share of K2 at least this many steps, and the
// partial products of the threads past the first within this many bytes.
constexpr int64_t kMinSplitSteps = 256;
constexpr int64_t kSplitBytes = int64_t{16} << 20;
// A tile prefetches at most one line of the next panels every 1 << this
// many steps (run_product).
constexpr int kMaxPrefetchShift = 2;
// The first tile of a product-major call (run_groups) prefetches its own
// group of B this many steps ahead (run_product).
constexpr int64_t kAheadSteps = 24;
// `panels` 16-column panels go in this many groups of up to four, sizes
// balanced (the packed layout's and the tasks' groups alike).
int64_t group_count(int64_t panels) { return (panels + 3) / 4; }
// Group g: its first panel and its panel count.
struct Span {
  int64_t p0, nb;
};
Span group_span(int64_t panels, int64_t g) {
  const int64_t groups = group_count(panels);
  const int64_t p0 = g * panels / groups;
  return {p0, (g + 1) * panels / groups - p0};
}

// Where a product's tile goes: quadrant q of C (0 C11, 1 C12, 2 C21, 3 C22)
// with a sign; `first`: the first product to reach that quadrant (it
// writes bias + residual + its sums), `last`: the last (it adds its sums,
// applies the activation and writes C).
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

// The plain form's one product (run_plain): C = A x B, A in place, B
// whole, C written once.
constexpr Product kPlain[1] = {{5, 1, {{0, 1.f, true, true}, {}}}};

bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_STRASSEN");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

#ifdef OPENACL_STRASSEN_AVX512
using namespace act512;

// One destination of a tile: where its running sum comes from and where the
// new sum goes.
struct Dest {
  const float* in;    // the running sum (in_ld apart); null: the first product here, bias + residual instead
  float* out;         // the block buffer, or C (the quadrant's last product)
  int64_t in_ld, out_ld;
  const float* r;     // residual rows (ldc apart); null: none, or not the first product here
  const float* bias;  // 16 * NB values (zeros without a bias)
  float sign;
  bool last;          // applies the activation
};

struct TileArgs {
  const float* a;  // the tile's first row of the A operand
  int64_t lda;
  const float* w;  // the tile's group of B: [K2][NB][16]
  int64_t K2;
  const float* pf;  // lines to prefetch into L2 while the tile runs, one every 1 << pf_shift steps; or null
  int pf_shift;
  int64_t ahead;    // steps ahead to prefetch the tile's own group of B into L1; 0: none
  int64_t ldc;      // floats between rows of C and of the residual
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
    float* ci = d.out + i * d.out_ld;
    const float* si = d.in ? d.in + i * d.in_ld : nullptr;
    const float* ri = d.r ? d.r + i * ldc : nullptr;
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      __m512 base;
      if (si) {
        base = _mm512_loadu_ps(si + 16 * j);
      } else {
        base = _mm512_loadu_ps(d.bias + 16 * j);
        if (ri) base = _mm512_add_ps(base, _mm512_loadu_ps(ri + 16 * j));
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
  const float* a = t.a;
  const float* w = t.w;
  const float* pf = t.pf;
  for (int64_t k = 0; k < t.K2; ++k, w += NB * 16) {
    if (pf && (k & ((int64_t{1} << t.pf_shift) - 1)) == 0)
      _mm_prefetch(reinterpret_cast<const char*>(pf + (k >> t.pf_shift) * 16), _MM_HINT_T1);
    if (t.ahead) {  // past the last group's end too: a prefetch never faults
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        _mm_prefetch(reinterpret_cast<const char*>(w + (t.ahead * NB + j) * 16), _MM_HINT_T0);
    }
    __m512 wv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(w + j * 16);
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
// r and M2 + r of A), over the kw columns from k0 of each half:
// sums[s][r - first][k - k0], s as Product::a, planes of `rows` rows.
void make_sums(const float* a, int64_t lda, int64_t M2, int64_t K2, int64_t k0, int64_t kw, int64_t r0, int64_t r1,
               int64_t first, int64_t rows, float* sums) {
  const size_t plane = static_cast<size_t>(rows * kw);
  for (int64_t r = r0; r < r1; ++r) {
    const float* a11 = a + r * lda + k0;
    const float* a12 = a11 + K2;
    const float* a21 = a + (M2 + r) * lda + k0;
    const float* a22 = a21 + K2;
    float* s0 = sums + (r - first) * kw;
    float* s1 = s0 + plane;
    float* s2 = s1 + plane;
    float* s3 = s2 + plane;
    float* s4 = s3 + plane;
#pragma omp simd
    for (int64_t k = 0; k < kw; ++k) {
      s0[k] = a11[k] + a22[k];
      s1[k] = a21[k] + a22[k];
      s2[k] = a11[k] + a12[k];
      s3[k] = a21[k] - a11[k];
      s4[k] = a12[k] - a22[k];
    }
  }
}

// One run's operands and its division into tasks.
struct Job {
  int64_t M2, K2, N2, N, panels, groups;
  int64_t k0, kw;  // the steps [k0, k0 + kw) of K2 this job runs (all of them but in run_split)
  int64_t r0, r1;  // the row block being run (rows of the half); sums hold its rows
  const float *a, *packed, *bias, *res;
  int64_t lda;
  float *c, *sums;
  const Activation* act;
  int kind;   // act512::Kind of act
  bool gelu;  // act is Gelu (kOther: gelu512.h on the stored rows)
  const Product* products;  // kProducts, or kPlain (M2, K2, N2 then M, K, N)
  int nprod;
};

// At least `floats` floats of v, 64-byte aligned (v grows on a first run only).
float* aligned_floats(std::vector<float>& v, size_t floats) {
  if (v.size() < floats + 16) v.resize(floats + 16);
  return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t{63});
}

// This thread's block buffer of at least `floats` floats.
float* block_buffer(size_t floats) {
  thread_local std::vector<float> v;
  return aligned_floats(v, floats);
}

// The activation on n stored floats of C: Gelu by gelu512.h, the others by
// Activation::apply_range (where act512 has no vector form, or after
// run_split's sum).
void apply_stored(const Job& j, float* row, int64_t n) {
  if (j.gelu)
    gelu_avx512(row, n);
  else
    j.act->apply_range(row, 0, n);
}

// Product pi of column group g over the row block [j.r0, j.r1), tile by
// tile, each tile added into its quadrants' running sums (quadrant q's
// rows at buf + q * qstride, ld floats apart, the group's columns) or, for a
// quadrant's last product, into C. `next` (next_nb panels): the group of B
// the next call reads, prefetched while this one runs. `ahead`: the first
// tile prefetches its own B kAheadSteps ahead.
void run_product(const Job& j, int pi, int64_t g, float* buf, int64_t qstride, int64_t ld, const float* next,
                 int64_t next_nb, bool ahead) {
  alignas(64) static const float kZeros[64] = {};
  const int64_t K2 = j.K2, N2 = j.N2, N = j.N, k0 = j.k0, kw = j.kw;
  const int64_t r0 = j.r0, r1 = j.r1;
  const Span sp = group_span(j.panels, g);
  const int64_t p0 = sp.p0, nb = sp.nb;
  const int64_t nt = (r1 - r0 + kTileRows[nb] - 1) / kTileRows[nb];
  const Product& P = j.products[pi];
  TileArgs t;
  // abase: the operand's row r0 (the sums hold the block's rows only).
  if (P.a < 5)
    t.a = j.sums + static_cast<size_t>(P.a) * static_cast<size_t>((r1 - r0) * kw), t.lda = kw;
  else if (P.a == 5)
    t.a = j.a + r0 * j.lda + k0, t.lda = j.lda;
  else
    t.a = j.a + (j.M2 + r0) * j.lda + K2 + k0, t.lda = j.lda;
  const float* const abase = t.a;
  t.K2 = kw, t.ldc = N, t.nd = P.nq;
  t.w = j.packed + static_cast<size_t>(pi) * static_cast<size_t>(K2 * N2) + (p0 * K2 + k0 * nb) * 16;
  t.kind = j.kind == kOther ? kNone : j.kind;
  t.alpha = j.act ? j.act->alpha : 0.f, t.beta = j.act ? j.act->beta : 0.f;
  // The next call's group of B (the next product's, or in product-major
  // order the next group's) into L2 while this product runs: B's
  // combinations come from memory, and the hardware prefetcher starts late
  // on each new group (128 x 768 x 3072 with B from memory, one thread:
  // oneDNN's time over ours 1.02-1.08 without, 1.09-1.13 with). By the
  // product's last tiles, not its first:
  // fetched early, they left L2 again under the stream of A's rows before
  // the next product read them, and its first tile ran 1.5-1.9x as long as
  // the others (Zen 5; BERT-base one thread 87.3-88.4 -> 85.6-85.9 ms).
  // Spread, though, over as many of the last tiles as take one line every
  // 2 or 4 steps (kMaxPrefetchShift), not one line every step over the last
  // few: those few asked for lines at about the rate one core reads memory
  // (a line per 12 cycles), and the FMAs waited (Intel Xeon, B from memory,
  // one thread: 128 x 768 x 3072 3.87-3.95 -> 3.43-3.63 ms, 128 x 768 x
  // 768 1.04-1.08 -> 0.97; BERT-base at batch 1 148-153 -> 136-140 ms, two
  // threads 78-80 -> 72-74).
  // Product by product (run_groups' `outer`: a call's group is K2 x 256
  // bytes, 393 KB in BERT's 3072 -> 768 GEMM) the group prefetched so is
  // partly gone from L2 again when the first tile reads it, and that tile ran
  // 1.5x as long as the others; so it also prefetches its own group
  // kAheadSteps ahead into L1. BERT-base on one thread of an Intel Xeon,
  // medians of five alternating runs: its 3072 -> 768 GEMMs at batch 1 42.6
  // -> 41.6 ms, at batch 8 332 -> 327. Group by group (K2 384 there) 16-32
  // steps ahead made the 768 -> 3072 GEMMs 0.6-1.7% slower.
  // A tile prefetching one line every 1 << s steps takes per(s) lines.
  const auto per_tile = [kw](int s) { return (kw + (int64_t{1} << s) - 1) >> s; };
  const int64_t lines = next_nb * kw;
  int shift = 0;
  while (shift < kMaxPrefetchShift && nt * per_tile(shift + 1) >= lines) ++shift;
  const int64_t per = per_tile(shift), needed = (lines + per - 1) / per;
  t.pf_shift = shift;
  for (int64_t ti = 0; ti < nt; ++ti) {
    // The f-th of the last `needed` tiles takes lines [f * per, + per), the last of them the group's last.
    const int64_t f = ti - (nt - needed);
    t.pf = next && f >= 0 ? next + std::min(f * per, lines - per) * 16 : nullptr;
    const int64_t ta = r0 + ti * (r1 - r0) / nt, tb = r0 + (ti + 1) * (r1 - r0) / nt;
    t.a = abase + (ta - r0) * t.lda;
    for (int q = 0; q < P.nq; ++q) {
      const Quad& qd = P.d[q];
      const int64_t off = ((qd.q / 2) * j.M2 + ta) * N + (qd.q % 2) * N2 + p0 * 16;
      float* const sum = buf ? buf + qd.q * qstride + (ta - r0) * ld : nullptr;
      Dest& d = t.d[q];
      d.in = qd.first ? nullptr : sum;
      d.out = qd.last ? j.c + off : sum;
      d.in_ld = ld, d.out_ld = qd.last ? N : ld;
      d.r = j.res && qd.first ? j.res + off : nullptr;
      d.bias = j.bias ? j.bias + (qd.q % 2) * N2 + p0 * 16 : kZeros;
      d.sign = qd.sign, d.last = qd.last;
    }
    t.ahead = ahead && ti == 0 ? kAheadSteps : 0;
    kTiles[static_cast<size_t>(nb)][static_cast<size_t>(tb - ta)](t);
    if (j.kind == kOther)  // an activation without a vector form in act512: on the stored rows
      for (int q = 0; q < P.nq; ++q)
        if (P.d[q].last)
          for (int64_t i = 0; i < tb - ta; ++i) apply_stored(j, t.d[q].out + i * N, nb * 16);
  }
}

// Column groups [g0, g1) of the row block [j.r0, j.r1), all the form's
// products (Strassen's seven, or the plain one). The running sums of the
// quadrant tiles live in this thread's block buffer until a quadrant's last
// product writes C: C's rows lie N floats apart (a multiple of 4 KiB at
// BERT's N, so a tile's rows share L1's sets), the buffer's spread over
// them, and C is written once. With B's groups interleaved (pack()), one
// thread, B hot, Intel Xeon: 1024 x 768 x 3072 28.4 -> 27.9 ms (the groups)
// -> 27.5 (the buffer); BERT-base at batch 1 on two threads 74.1-76.3 ->
// 72.4-72.7 ms, the other cells within noise.
// Group by group, all products of a group before the next (the buffer one
// group wide), where the block's seven A operands take at most
// kOperandBytes; else product by product, all groups of a product before
// the next (the buffer as wide as the groups), so that one operand at a
// time stays in L2 instead of seven coming from L3 for every group: BERT's
// 3072 -> 768 GEMM at batch 1 (2.75 MB of operands) on two threads, B from
// memory, 2.13 -> 2.01 ms (medians of six alternating runs), 3% of its
// time in the model; at batch 8 (3.6 MB) no change.
// Whether the row block's operands (the form's products' A rows) take at most kOperandBytes.
bool operands_fit(const Job& j) { return j.nprod * (j.r1 - j.r0) * j.kw * int64_t{sizeof(float)} <= kOperandBytes; }

void run_groups(const Job& j, int64_t g0, int64_t g1) {
  if (g0 >= g1) return;
  const int64_t rows = j.r1 - j.r0, ng = g1 - g0;
  const bool outer = j.nprod > 1 && ng > 1 && !operands_fit(j);
  const int64_t c0 = group_span(j.panels, g0).p0;
  const Span last = group_span(j.panels, g1 - 1);
  const int64_t ld = outer ? (last.p0 + last.nb - c0) * 16 : 64;
  float* const buf = j.nprod > 1 ? block_buffer(static_cast<size_t>(4 * rows * ld)) : nullptr;
  const int64_t n = ng * j.nprod;
  const auto at = [&](int64_t i, int* pi, int64_t* g) {
    *pi = static_cast<int>(outer ? i / ng : i % j.nprod);
    *g = g0 + (outer ? i % ng : i / j.nprod);
  };
  for (int64_t i = 0; i < n; ++i) {
    int pi, pn;
    int64_t g, gn;
    at(i, &pi, &g);
    const float* next = nullptr;
    int64_t next_nb = 0;
    if (i + 1 < n) {
      at(i + 1, &pn, &gn);
      const Span sn = group_span(j.panels, gn);
      next = j.packed + static_cast<size_t>(pn) * static_cast<size_t>(j.K2 * j.N2) + (sn.p0 * j.K2 + j.k0 * sn.nb) * 16;
      next_nb = sn.nb;
    }
    float* const gb = buf && outer ? buf + (group_span(j.panels, g).p0 - c0) * 16 : buf;
    run_product(j, pi, g, gb, rows * ld, ld, next, next_nb, outer);
  }
}

// Rows [m0, m1) of the half in row blocks of at most `most` rows (sizes
// balanced and a multiple of the 6-row tiles), one after another: with
// `sums`, A's sums of the block (made just before its products read them,
// while in cache: at batch 8 BERT's sums of the whole A, 15.7 MB for 3072 ->
// 768, had gone to memory and back, and the scratch holds one block's), then
// the block's column groups (up to four panels, sizes balanced). `spread`:
// the groups over the compute threads; else on this thread.
//
// Spread, each thread makes the block's sums itself, into its own scratch,
// where the block's operands fit kOperandBytes (run_groups goes group by
// group): made by the threads a share each, half of every thread's
// operands had to come from the other core's cache, for each of its
// groups. BERT-base at batch 1 on two threads of an Intel Xeon, medians of
// alternating runs: its 768 -> 3072 and QKV GEMMs 1.5-2% faster. Where the
// operands are larger (its 3072 -> 768, 2 MB of sums) the threads share
// them: made twice they took 2-4% longer.
void run_rows(Job& j, bool sums, int64_t m0, int64_t m1, int64_t most, bool spread) {
  const int64_t blocks = (m1 - m0 + most - 1) / most;
  const int64_t step = ((m1 - m0 + blocks - 1) / blocks + 5) / 6 * 6;
  const size_t sum_bytes = static_cast<size_t>(5 * std::min(step, m1 - m0) * j.kw) * sizeof(float);
  j.sums = sums ? static_cast<float*>(scratch(sum_bytes)) : nullptr;
  for (j.r0 = m0; j.r0 < m1; j.r0 = j.r1) {
    j.r1 = std::min(m1, j.r0 + step);
    if (!spread) {
      if (sums) make_sums(j.a, j.lda, j.M2, j.K2, j.k0, j.kw, j.r0, j.r1, j.r0, j.r1 - j.r0, j.sums);
      run_groups(j, 0, j.groups);
      continue;
    }
    // A contiguous share of the groups per thread (as parallel_for's static
    // chunks gave before), in one call: run_groups may go product by product.
    const int64_t threads = std::min(compute_threads(), j.groups);
    const bool own = sums && (threads == 1 || operands_fit(j));
    if (sums && !own)
      parallel_for(j.r1 - j.r0, std::max<int64_t>(1, 4096 / j.kw), [&](int64_t lo, int64_t hi) {
        make_sums(j.a, j.lda, j.M2, j.K2, j.k0, j.kw, j.r0 + lo, j.r0 + hi, j.r0, j.r1 - j.r0, j.sums);
      });
    parallel_for(threads, 1, [&](int64_t lo, int64_t hi) {
      Job mine = j;
      if (own) {
        mine.sums = static_cast<float*>(scratch(sum_bytes));
        make_sums(j.a, j.lda, j.M2, j.K2, j.k0, j.kw, j.r0, j.r1, j.r0, j.r1 - j.r0, mine.sums);
      }
      for (int64_t t = lo; t < hi; ++t) run_groups(mine, t * j.groups / threads, (t + 1) * j.groups / threads);
    });
  }
}

// This thread's buffer for run_split's partial products.
float* split_buffer(size_t floats) {
  thread_local std::vector<float> v;
  return aligned_floats(v, floats);
}

// c[0, n) += p[0, n), n a multiple of 16.
__attribute__((target("avx512f"))) void add_row(float* c, const float* p, int64_t n) {
  for (int64_t i = 0; i < n; i += 16)
    _mm512_storeu_ps(c + i, _mm512_add_ps(_mm512_loadu_ps(c + i), _mm512_loadu_ps(p + i)));
}

// Whether run_blocks splits K2 over the threads instead of the column
// groups: Strassen's form, one row block whose operands do not fit
// kOperandBytes but a thread's share of K2 does, and the other threads'
// partial products within kSplitBytes.
bool split_pays(const Job& j, bool sums, int64_t most, int64_t threads) {
  if (!sums || threads < 2 || j.M2 > most) return false;
  Job f = j;
  f.r0 = 0, f.r1 = j.M2;
  if (operands_fit(f)) return false;
  f.kw = j.K2 / threads;
  return f.kw >= kMinSplitSteps && operands_fit(f) &&
         (threads - 1) * 2 * j.M2 * j.N * int64_t{sizeof(float)} <= kSplitBytes;
}

// The GEMM with K2 split over the threads (split_pays): thread t runs every
// product over its share of the steps, with its own sums of A, thread 0
// into C with the bias and the residual, the others into partial products;
// then C gets their sum and the activation, rows over the threads.
// Where the column groups were spread instead, each thread read every
// operand row, half of them from the other core's cache (the sums made a
// share each, and A itself written by the previous GEMM's threads a column
// share each: the very shares of K2 here). BERT-base at batch 1 on two
// threads of an Intel Xeon (medians of eight alternating runs): its twelve
// 3072 -> 768 GEMMs 23.6 -> 22.6 ms, the model 74.6 -> 73.1 ms.
void run_split(const Job& j, int64_t threads) {
  const int64_t M = 2 * j.M2, N = j.N;
  const size_t cfl = static_cast<size_t>(M * N);
  float* const parts = split_buffer(static_cast<size_t>(threads - 1) * cfl);
  Job base = j;
  base.r0 = 0, base.r1 = j.M2;
  base.act = nullptr, base.kind = kNone, base.gelu = false;  // after the sum
  parallel_for(threads, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      Job mine = base;
      mine.k0 = t * j.K2 / threads, mine.kw = (t + 1) * j.K2 / threads - mine.k0;
      if (t > 0) mine.c = parts + static_cast<size_t>(t - 1) * cfl, mine.bias = nullptr, mine.res = nullptr;
      mine.sums = static_cast<float*>(scratch(static_cast<size_t>(5 * j.M2 * mine.kw) * sizeof(float)));
      make_sums(j.a, j.lda, j.M2, j.K2, mine.k0, mine.kw, 0, j.M2, 0, j.M2, mine.sums);
      run_groups(mine, 0, j.groups);
    }
  });
  parallel_for(M, std::max<int64_t>(1, 4096 / N), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      float* row = j.c + r * N;
      for (int64_t t = 1; t < threads; ++t) add_row(row, parts + static_cast<size_t>(t - 1) * cfl + r * N, N);
      if (j.act && j.kind != kNone) apply_stored(j, row, N);
    }
  });
}

// The whole GEMM: row blocks of A's operand rows within kBlockBytes,
// Strassen's of at most kStrassenBlockRows rows, each block's column groups
// over the threads. Where Strassen's rows give every thread a full block,
// the threads take the rows instead (a share each, in blocks on their own:
// no barrier between blocks, a block's operands in one core's L2, B read as
// often): BERT-base at batch 8 on two threads of an Intel Xeon 617-703 ->
// 587-623 ms. Not for the plain form (its out projection at batch 1, 128
// rows, 1% slower so).
void run_blocks(Job& j, bool sums) {
  int64_t most = std::max<int64_t>(6, kBlockBytes / (j.K2 * static_cast<int64_t>(sizeof(float))));
  if (sums) most = std::min(most, kStrassenBlockRows);
  j.groups = group_count(j.panels);
  const int64_t threads = compute_threads();
  if (split_pays(j, sums, most, threads)) {
    run_split(j, threads);
    return;
  }
  if (!sums || threads < 2 || j.M2 < threads * kStrassenBlockRows) {
    run_rows(j, sums, 0, j.M2, most, true);
    return;
  }
  parallel_for(threads, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      Job mine = j;
      run_rows(mine, sums, t * j.M2 / threads, (t + 1) * j.M2 / threads, most, false);
    }
  });
}

// run() (strassen) or run_plain(), their arguments checked.
void run_form(bool strassen, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed,
              const float* bias, const float* res, float* c, const Activation* act) {
  Job j;
  const int64_t d = strassen ? 2 : 1;  // Strassen's products are of halves
  j.M2 = M / d, j.K2 = K / d, j.N2 = N / d, j.N = N, j.panels = j.N2 / 16;
  j.k0 = 0, j.kw = j.K2;
  j.a = a, j.lda = lda, j.packed = packed, j.bias = bias, j.res = res, j.c = c, j.act = act;
  j.kind = act ? act512::kind_of(*act) : act512::kNone;
  j.gelu = j.kind == act512::kOther && act->op == "Gelu";
  j.products = strassen ? kProducts : kPlain, j.nprod = strassen ? 7 : 1;
  run_blocks(j, strassen);
}
#endif  // OPENACL_STRASSEN_AVX512

}  // namespace

bool supported() {
#ifdef OPENACL_STRASSEN_AVX512
  static const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx512 && enabled();
#else
  return false;
#endif
}

bool fits(int64_t M, int64_t K, int64_t N) {
  const int64_t most = int64_t{1} << 30;
  return M >= 2 && M % 2 == 0 && K >= 2 && K % 2 == 0 && N >= 32 && N % 32 == 0 && M <= most && K <= most && N <= most;
}

bool pays(int64_t M, int64_t K, int64_t N) {
  if (!fits(M, K, N) || M < kMinRows || K < kMinDepth || K * N < kMinWeights) return false;
  return M >= (kMinWork + K * N - 1) / (K * N);  // M x K x N >= kMinWork, without overflow
}

size_t packed_floats(int64_t K, int64_t N) {
  return size_t{7} * static_cast<size_t>(K / 2) * static_cast<size_t>(N / 2);
}

void pack(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out) {
  const int64_t K2 = K / 2, N2 = N / 2, panels = N2 / 16;
  const size_t combo = static_cast<size_t>(K2 * N2);
  auto at = [&](int64_t k, int64_t n) { return b[k * stride_k + n * stride_n]; };
  parallel_for(group_count(panels), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t g = lo; g < hi; ++g) {
      const Span sp = group_span(panels, g);
      for (int64_t k = 0; k < K2; ++k)
        for (int64_t p = 0; p < sp.nb; ++p)
          for (int64_t l = 0; l < 16; ++l) {
            const int64_t n = (sp.p0 + p) * 16 + l;
            const float b11 = at(k, n), b12 = at(k, N2 + n), b21 = at(K2 + k, n), b22 = at(K2 + k, N2 + n);
            const float w[7] = {b11 + b22, b11, b12 - b22, b21 - b11, b22, b11 + b12, b21 + b22};
            const size_t o = static_cast<size_t>((sp.p0 * K2 + k * sp.nb + p) * 16 + l);
            for (int i = 0; i < 7; ++i) out[i * combo + o] = w[i];
          }
    }
  });
}

const char* recipe() { return "openacl strassen v2 [7][N/32 in groups of <=4 panels][K/2][panel][16]"; }

bool run(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
         const float* res, float* c, const Activation* act) {
  if (!supported() || !fits(M, K, N)) return false;
#ifdef OPENACL_STRASSEN_AVX512
  run_form(true, M, N, K, a, lda, packed, bias, res, c, act);
  return true;
#else
  (void)a, (void)lda, (void)packed, (void)bias, (void)res, (void)c, (void)act;
  return false;
#endif
}

bool plain_supported() {
#ifdef OPENACL_STRASSEN_AVX512
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_GEMM512");
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           !(e && std::string(e) == "0");
  }();
  return on;
#else
  return false;
#endif
}

bool plain_pays(int64_t M, int64_t K, int64_t N) {
  const int64_t most = int64_t{1} << 30;
  return plain_supported() && N >= 16 && N % 16 == 0 && M >= kMinPlainRows && K >= 16 && M <= most && K <= most &&
         N <= most;
}

size_t plain_floats(int64_t K, int64_t N) { return static_cast<size_t>(K) * static_cast<size_t>(N); }

const char* plain_recipe() { return "openacl gemm512 v2 [N/16 in groups of <=4 panels][K][panel][16]"; }

void pack_plain(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out) {
  const int64_t panels = N / 16;
  parallel_for(group_count(panels), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t g = lo; g < hi; ++g) {
      const Span sp = group_span(panels, g);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t p = 0; p < sp.nb; ++p)
          for (int64_t l = 0; l < 16; ++l)
            out[(sp.p0 * K + k * sp.nb + p) * 16 + l] = b[k * stride_k + ((sp.p0 + p) * 16 + l) * stride_n];
    }
  });
}

bool run_plain(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
               const float* res, float* c, const Activation* act) {
  if (!plain_supported() || M < 1 || K < 1 || N < 16 || N % 16 != 0) return false;
#ifdef OPENACL_STRASSEN_AVX512
  run_form(false, M, N, K, a, lda, packed, bias, res, c, act);
  return true;
#else
  (void)a, (void)lda, (void)packed, (void)bias, (void)res, (void)c, (void)act;
  return false;
#endif
}

}  // namespace openacl::kernels::cpu::sgemm_strassen
