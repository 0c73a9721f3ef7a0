// Depthwise convolution over 16- or 8-channel blocks: see conv_dw.h.
#include "kernels/cpu/conv_dw.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "base/page_alloc.h"
#include "kernels/cpu/act512.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

constexpr int kTile = 8;  // output columns per tile
// The (window, stride, dilation) variants with tile loops.
constexpr int kVariants[][3] = {{3, 1, 1}, {3, 2, 1}, {5, 1, 1}, {5, 2, 1}, {3, 1, 2}, {5, 1, 2}};
constexpr int kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]);

int variant_of(int64_t k, int64_t s, int64_t d) {
  for (int v = 0; v < kNumVariants; ++v)
    if (kVariants[v][0] == k && kVariants[v][1] == s && kVariants[v][2] == d) return v;
  return -1;
}

// Columns [a, b) of a row in tiles of up to tw, sizes balanced (the first
// ones a column wider), appended to plan; edge tiles where `edge` says so or
// a tile reaches past the interior [lo, hi).
void plan_tiles(int64_t a, int64_t b, int64_t tw, bool edge, int64_t lo, int64_t hi,
                std::vector<ConvDepthwise::Tile8>* plan) {
  if (b <= a) return;
  const int64_t nt = (b - a + tw - 1) / tw, base = (b - a) / nt, rem = (b - a) % nt;
  for (int64_t t = 0, ow = a; t < nt; ++t) {
    const int64_t n = base + (t < rem ? 1 : 0);
    plan->push_back({static_cast<int32_t>(ow), static_cast<int32_t>(n), edge || ow < lo || ow + n > hi});
    ow += n;
  }
}

bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_CONV_DW");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

#ifdef OPENACL_ACT512
struct RowArgs {
  const float* x;                    // the block's input rows from row0 on
  int64_t row0;                      // the input row x starts at
  int64_t W, xrs;                    // input columns; floats per input row (W * lanes)
  int64_t ih0;                       // the window's first input row (oh * S - pt)
  int kh0, kh1;                      // the window rows inside the input
  int64_t pl;                        // left padding
  const float* w;                    // the block's packed weights, [K * K][lanes]
  const float* bias;                 // its lanes' values
  float* y;                          // the output row (OW * lanes floats)
  const float* r;                    // the residual's row, or null
  __mmask16 mask;                    // the block's real channels
  float a, b;                        // the activation's parameters
  const ConvDepthwise::Tile8* plan;  // 8 lanes: the row's tiles
  int64_t plan_n;                    // how many
  int64_t yrs;                       // floats per output row (OW * lanes)
};

template <int KIND>
__attribute__((target("avx512f"), always_inline)) inline void finish(const RowArgs& t, __m512 v, float* y,
                                                                     const float* r) {
  if (r) v = _mm512_add_ps(v, _mm512_loadu_ps(r));
  v = _mm512_maskz_mov_ps(t.mask, act512::apply<KIND>(v, t.a, t.b));
  _mm512_storeu_ps(y, v);
}

// Input vector c of a tile's row: held in a register, or read from xr.
template <bool HOLD, int N>
__attribute__((target("avx512f"), always_inline)) inline __m512 x_at(const __m512 (&xv)[N], const float* xr, int c) {
  if constexpr (HOLD) return xv[c];
  return _mm512_loadu_ps(xr + 16 * c);
}

// Input row q of a tile (see tile): every tap that reads it (window row q
// of output row 0; with two rows, window row q - S of row 1). At stride 1
// (or with one row) its vectors are loaded once into registers; at stride 2
// two rows' sums and the 17 vectors of eight columns would not fit the 32
// registers, and each FMA reads its vector from L1.
template <int K, int S, int D, int T, bool EDGE, int R>
__attribute__((target("avx512f"), always_inline)) inline void input_row(const RowArgs& t, int64_t ow0, int q,
                                                                        __m512 (&acc)[R][T]) {
  constexpr int NX = (T - 1) * S + (K - 1) * D + 1;  // input columns the tile reads
  constexpr bool HOLD = R == 1 || S == 1;
  const float* xr = t.x + (t.ih0 + q * D - t.row0) * t.xrs + (ow0 * S - t.pl) * 16;
  __m512 xv[HOLD ? NX : 1];
  alignas(64) float buf[EDGE && !HOLD ? NX * 16 : 16];
  if (HOLD) {
#pragma GCC unroll 32
    for (int i = 0; i < NX; ++i) {
      if (EDGE) {
        const int64_t iw = ow0 * S - t.pl + i;
        // (A branch, not a masked load: masked loads ran 10-20% slower.)
        xv[i] = iw >= 0 && iw < t.W ? _mm512_loadu_ps(xr + 16 * i) : _mm512_setzero_ps();
      } else {
        xv[i] = _mm512_loadu_ps(xr + 16 * i);
      }
      // Held in a register: without this GCC folds each load into the FMAs
      // that read it, three loads of every vector instead of one.
      __asm__("" : "+v"(xv[i]));
    }
  } else if (EDGE) {  // the row with zeros for the columns outside, in a buffer the FMAs read
    for (int i = 0; i < NX; ++i) {
      const int64_t iw = ow0 * S - t.pl + i;
      _mm512_store_ps(buf + 16 * i, iw >= 0 && iw < t.W ? _mm512_loadu_ps(xr + 16 * i) : _mm512_setzero_ps());
    }
    xr = buf;
  }
#pragma GCC unroll 5
  for (int kw = 0; kw < K; ++kw) {
    if (R == 1 || q < K) {
      const __m512 wv = _mm512_loadu_ps(t.w + (q * K + kw) * 16);
#pragma GCC unroll 8
      for (int i = 0; i < T; ++i) acc[0][i] = _mm512_fmadd_ps(x_at<HOLD>(xv, xr, i * S + kw * D), wv, acc[0][i]);
    }
    if (R == 2 && q >= S) {
      const __m512 wv = _mm512_loadu_ps(t.w + ((q - S) * K + kw) * 16);
#pragma GCC unroll 8
      for (int i = 0; i < T; ++i) acc[R - 1][i] = _mm512_fmadd_ps(x_at<HOLD>(xv, xr, i * S + kw), wv, acc[R - 1][i]);
    }
  }
}

// Columns [ow0, ow0 + T) of R output rows: 1, or 2 whose windows lie inside
// the input's rows (t.ih0 is the first's; no dilation). EDGE: some windows
// reach past the input's columns (the row's border columns), and the
// columns outside read as zeros. Two rows: input row q serves output row 0
// at window row q and row 1 at q - S (at stride 1 each of its vectors
// loaded once for both), and twice the independent sums (a sum is a chain
// of K * K dependent FMAs: eight chains of four-cycle FMAs barely keep two
// FMA units busy). Zen 5, one thread, alone (3x3, 16 channels a block): 32
// channels at 112x112 0.051 -> 0.043 ms, 144 at 56x56 0.059 -> 0.049, 192
// at 28x28 0.024 -> 0.019; in MobileNetV2's fused blocks about 1%. At
// stride 2: 144 channels 56x56 -> 28x28 0.026 -> 0.024 ms, MobileNetV2's
// 16 -> 96 block at 112x112 0.285-0.290 -> 0.275-0.278 ms.
template <int KIND, int K, int S, int D, int T, bool EDGE, int R>
__attribute__((target("avx512f"))) void tile(const RowArgs& t, int64_t ow0) {
  static_assert(R == 1 || D == 1, "two rows without dilation only");
  __m512 acc[R][T];
  const __m512 bv = _mm512_loadu_ps(t.bias);
#pragma GCC unroll 2
  for (int j = 0; j < R; ++j)
#pragma GCC unroll 8
    for (int i = 0; i < T; ++i) acc[j][i] = bv;
  if constexpr (R == 1) {
    for (int kh = t.kh0; kh < t.kh1; ++kh) input_row<K, S, D, T, EDGE, R>(t, ow0, kh, acc);
  } else {
#pragma GCC unroll 7
    for (int q = 0; q < K + S; ++q) input_row<K, S, D, T, EDGE, R>(t, ow0, q, acc);
  }
#pragma GCC unroll 2
  for (int j = 0; j < R; ++j) {
    float* y = t.y + j * t.yrs + 16 * ow0;
    const float* r = t.r ? t.r + j * t.yrs + 16 * ow0 : nullptr;
#pragma GCC unroll 8
    for (int i = 0; i < T; ++i) finish<KIND>(t, acc[j][i], y + 16 * i, r ? r + 16 * i : nullptr);
  }
}

// Columns [ow, ow + n), n <= kTile, in one tile.
template <int KIND, int K, int S, int D, bool EDGE, int R>
__attribute__((target("avx512f"), always_inline)) inline void tile_of(const RowArgs& t, int64_t ow, int64_t n) {
  switch (n) {
    case 8: tile<KIND, K, S, D, 8, EDGE, R>(t, ow); break;
    case 7: tile<KIND, K, S, D, 7, EDGE, R>(t, ow); break;
    case 6: tile<KIND, K, S, D, 6, EDGE, R>(t, ow); break;
    case 5: tile<KIND, K, S, D, 5, EDGE, R>(t, ow); break;
    case 4: tile<KIND, K, S, D, 4, EDGE, R>(t, ow); break;
    case 3: tile<KIND, K, S, D, 3, EDGE, R>(t, ow); break;
    case 2: tile<KIND, K, S, D, 2, EDGE, R>(t, ow); break;
    case 1: tile<KIND, K, S, D, 1, EDGE, R>(t, ow); break;
    default: break;
  }
}

// Columns [ow, end) in tiles of up to kTile.
template <int KIND, int K, int S, int D, bool EDGE, int R>
__attribute__((target("avx512f"), always_inline)) inline void tiles(const RowArgs& t, int64_t ow, int64_t end) {
  for (; ow < end; ow += kTile) tile_of<KIND, K, S, D, EDGE, R>(t, ow, std::min<int64_t>(kTile, end - ow));
}

// R output rows (see tile); [lo, hi) are the interior columns (windows
// inside the input's columns), the rest border columns, which take edge
// tiles rather than a pixel at a time (a dilated 5x5 window on a 16-column
// image has 8 border columns of 16). Rows of up to two tiles go in tiles
// from column 0, any with a border column an edge tile: 7x7 and 14x14
// layers 12-24% faster than the interior's tiles plus the border's, dilated
// 5x5 ones at 16x16 40% faster than a pixel at a time. Longer rows: the
// border columns in edge tiles of their own, the interior in plain ones (an
// edge tile costs more than a plain one: 5% on a 64x64 5x5 layer of stride
// 2 when its first and last tiles were edge tiles).
template <int KIND, int V, int R>
__attribute__((target("avx512f"))) void row(const RowArgs& t, int64_t OW, int64_t lo, int64_t hi) {
  constexpr int K = kVariants[V][0], S = kVariants[V][1], D = kVariants[V][2];
  if (OW <= 2 * kTile) {
    for (int64_t ow = 0; ow < OW; ow += kTile) {
      const int64_t n = std::min<int64_t>(kTile, OW - ow);
      if (ow < lo || ow + n > hi) tile_of<KIND, K, S, D, true, R>(t, ow, n);
      else tile_of<KIND, K, S, D, false, R>(t, ow, n);
    }
    return;
  }
  tiles<KIND, K, S, D, true, R>(t, 0, lo);
  tiles<KIND, K, S, D, false, R>(t, lo, hi);
  tiles<KIND, K, S, D, true, R>(t, hi, OW);
}

using RowFn = void (*)(const RowArgs&, int64_t, int64_t, int64_t);

// The 8-lane form (AVX2 + FMA, 8-blocks), for the CPUs whose oneDNN kernels
// take 8-blocks. Not the 16-lane tile's way (a window row's input vectors
// held in registers): AVX2's 16 registers then leave room for 4-6 columns,
// and a column's sum is a chain of K * K dependent FMAs (5 cycles each on a
// Zen 2), so few chains left the FMA units idle (35 GFLOP/s on a 56x56 3x3
// layer). Here each FMA takes its input vector straight from memory (L1:
// each is read K times) and the weight vector from a register, and a tile
// holds 8 independent sums: 8 columns of one row, or 4 columns of two rows
// whose windows lie inside the input's rows (the weight vector then serves
// both; at stride 1 an input vector too). 8 sums ran best (one row: tiles
// of 6, 8, 10 or 12 columns 50, 57, 50 and 46 GFLOP/s on a 56x56 layer's
// interior; two rows of 3, 4, 5 or 6 columns 54, 60, 50 and 51), and two
// rows beat one on short rows (14x14: 0.068 -> 0.051 ms for 576 channels),
// where a row is one or two tiles. Loading each input vector once for both
// rows at stride 1 (11 of 16 registers) took 56x56 from 0.158 to 0.148 ms
// (oneDNN's jit_dw 0.148) and 14x14 to 0.049 (oneDNN 0.048).
constexpr int kTile8Max = 8;
constexpr int kTile8x2Max = 4;  // columns per tile of two rows

template <int KIND>
__attribute__((target("avx2,fma"), always_inline)) inline void finish8(const RowArgs& t, __m256 v, float* y,
                                                                       const float* r) {
  if (r) v = _mm256_add_ps(v, _mm256_loadu_ps(r));
  v = act512::apply8<KIND>(v, t.a, t.b);
  if (t.mask != 0xff) v = _mm256_and_ps(v, act512::lanes8(__builtin_popcount(t.mask)));
  _mm256_storeu_ps(y, v);
}

// Columns [ow0, ow0 + T) of R output rows (1, or 2 whose windows lie
// inside the input's rows: t.ih0 is the first's). EDGE: some windows reach
// past the input's columns: each window row's input vectors are first
// copied into a buffer with zeros for the columns outside, and the FMAs
// read that (a test per FMA instead, or the border columns in tiles of
// their own, each a chain of K * K dependent FMAs, cost more). Inlined
// into the row's loop: a call per tile (and its copy of t) cost 4-9% at
// 56x56, 28x28 and 14x14 (kernel alone, one thread).
template <int KIND, int K, int S, int D, int R, int T, bool EDGE>
__attribute__((target("avx2,fma"), always_inline)) inline void tile8(const RowArgs& args, int64_t ow0) {
  // A copy of one's own: the stores through t.y could otherwise be t's own
  // floats, and GCC reloaded the activation's parameters and the pointers
  // for every column.
  const RowArgs t = args;
  __m256 acc[R][T];
  const __m256 bv = _mm256_loadu_ps(t.bias);
#pragma GCC unroll 2
  for (int j = 0; j < R; ++j)
#pragma GCC unroll 8
    for (int i = 0; i < T; ++i) acc[j][i] = bv;
  const int64_t iw0 = ow0 * S - t.pl;                // the tile's first input column
  constexpr int NX = (T - 1) * S + (K - 1) * D + 1;  // input columns the tile reads
  alignas(32) float buf[EDGE ? R * NX * 8 : 8];
  if constexpr (R == 2 && S == 1 && D == 1) {
    // Two rows at stride 1: input row q serves output row 0 at window row q
    // and row 1 at q - 1, so each input vector is loaded once for both.
#pragma GCC unroll 6
    for (int q = 0; q <= K; ++q) {
      const float* xq = t.x + (t.ih0 + q - t.row0) * t.xrs + iw0 * 8;
      if (EDGE) {
        for (int c = 0; c < NX; ++c)
          _mm256_store_ps(buf + 8 * c,
                          iw0 + c >= 0 && iw0 + c < t.W ? _mm256_loadu_ps(xq + 8 * c) : _mm256_setzero_ps());
        xq = buf;
      }
#pragma GCC unroll 5
      for (int kw = 0; kw < K; ++kw) {
        const __m256 w0 = q < K ? _mm256_loadu_ps(t.w + (q * K + kw) * 8) : _mm256_setzero_ps();
        const __m256 w1 = q > 0 ? _mm256_loadu_ps(t.w + ((q - 1) * K + kw) * 8) : _mm256_setzero_ps();
#pragma GCC unroll 8
        for (int i = 0; i < T; ++i) {
          const __m256 xv = _mm256_loadu_ps(xq + 8 * (i + kw));
          if (q < K) acc[0][i] = _mm256_fmadd_ps(xv, w0, acc[0][i]);
          if (q > 0) acc[R - 1][i] = _mm256_fmadd_ps(xv, w1, acc[R - 1][i]);
        }
      }
    }
  } else {
    const int kh0 = R == 1 ? t.kh0 : 0, kh1 = R == 1 ? t.kh1 : K;
    for (int kh = kh0; kh < kh1; ++kh) {
      const float* xr[R];
#pragma GCC unroll 2
      for (int j = 0; j < R; ++j) {
        xr[j] = t.x + (t.ih0 + j * S + kh * D - t.row0) * t.xrs + iw0 * 8;
        if (EDGE) {
          float* b = buf + j * NX * 8;
          for (int c = 0; c < NX; ++c)
            _mm256_store_ps(b + 8 * c,
                            iw0 + c >= 0 && iw0 + c < t.W ? _mm256_loadu_ps(xr[j] + 8 * c) : _mm256_setzero_ps());
          xr[j] = b;
        }
      }
      const float* wk = t.w + kh * K * 8;
#pragma GCC unroll 5
      for (int kw = 0; kw < K; ++kw) {
        const __m256 wv = _mm256_loadu_ps(wk + 8 * kw);
#pragma GCC unroll 2
        for (int j = 0; j < R; ++j)
#pragma GCC unroll 8
          for (int i = 0; i < T; ++i)
            acc[j][i] = _mm256_fmadd_ps(_mm256_loadu_ps(xr[j] + 8 * (i * S + kw * D)), wv, acc[j][i]);
      }
    }
  }
#pragma GCC unroll 2
  for (int j = 0; j < R; ++j) {
    float* y = t.y + j * t.yrs + 8 * ow0;
    const float* r = t.r ? t.r + j * t.yrs + 8 * ow0 : nullptr;
#pragma GCC unroll 8
    for (int i = 0; i < T; ++i) finish8<KIND>(t, acc[j][i], y + 8 * i, r ? r + 8 * i : nullptr);
  }
}

// Columns [ow, ow + n), 0 < n <= T, in one tile.
template <int KIND, int K, int S, int D, int R, bool EDGE, int T>
__attribute__((target("avx2,fma"), always_inline)) inline void tile8_of(const RowArgs& t, int64_t ow, int64_t n) {
  if constexpr (T > 0) {
    if (n == T)
      tile8<KIND, K, S, D, R, T, EDGE>(t, ow);
    else
      tile8_of<KIND, K, S, D, R, EDGE, T - 1>(t, ow, n);
  }
}

// R output rows: the tiles of t.plan (ConvDepthwise::make).
template <int KIND, int V, int R>
__attribute__((target("avx2,fma"))) void row8(const RowArgs& t, int64_t, int64_t, int64_t) {
  constexpr int K = kVariants[V][0], S = kVariants[V][1], D = kVariants[V][2];
  constexpr int TW = R == 1 ? kTile8Max : kTile8x2Max;
  for (int64_t i = 0; i < t.plan_n; ++i) {
    const ConvDepthwise::Tile8& p = t.plan[i];
    if (p.edge)
      tile8_of<KIND, K, S, D, R, true, TW>(t, p.ow, p.n);
    else
      tile8_of<KIND, K, S, D, R, false, TW>(t, p.ow, p.n);
  }
}

// The row loops by form: kRows[R - 1][kind][variant] (16 lanes; null where
// a variant has no two-row form), kRows8 the same for 8 lanes; kOther runs
// kNone's loops (the caller applies it after).
struct Rows16 {
  template <int KIND, int V, int R>
  static constexpr RowFn get() {
    if constexpr (R == 1 || kVariants[V][2] == 1) return &row<KIND, V, R>;
    return nullptr;
  }
};
struct Rows8 {
  template <int KIND, int V, int R>
  static constexpr RowFn get() {
    return &row8<KIND, V, R>;
  }
};
using RowTable = std::array<std::array<RowFn, kNumVariants>, act512::kOther + 1>;
template <class F, int R, int KIND, int... V>
constexpr std::array<RowFn, kNumVariants> rows_for(std::integer_sequence<int, V...>) {
  return {F::template get<KIND, V, R>()...};
}
template <class F, int R, int... KIND>
constexpr RowTable all_rows(std::integer_sequence<int, KIND...>) {
  constexpr auto variants = std::make_integer_sequence<int, kNumVariants>{};
  return {rows_for<F, R, (KIND == act512::kOther ? act512::kNone : KIND)>(variants)...};
}
template <class F>
constexpr std::array<RowTable, 2> row_tables() {
  constexpr auto kinds = std::make_integer_sequence<int, act512::kOther + 1>{};
  return {all_rows<F, 1>(kinds), all_rows<F, 2>(kinds)};
}
const std::array<RowTable, 2> kRows = row_tables<Rows16>(), kRows8 = row_tables<Rows8>();
#endif  // OPENACL_ACT512

}  // namespace

bool ConvDepthwise::applies(const WindowGeom& g, int64_t xb, int64_t yb) {
#ifdef OPENACL_ACT512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool lanes_ok = yb == 16 ? avx512 : yb == 8 && eight_lane_loops();
  if (!lanes_ok || !enabled() || xb != yb || g.nsp != 2) return false;
  if (g.G != g.C || g.M != g.C || g.C <= 0 || g.N <= 0 || g.out_size() <= 0) return false;
  if (g.k[1] != g.k[2] || g.s[1] != g.s[2] || g.d[1] != g.d[2] || variant_of(g.k[1], g.s[1], g.d[1]) < 0) return false;
  for (int i = 1; i < kMaxSpatial; ++i)
    if (g.pb[i] < 0 || g.pe[i] < 0) return false;
  return true;
#else
  (void)g, (void)xb, (void)yb;
  return false;
#endif
}

std::shared_ptr<const ConvDepthwise> ConvDepthwise::make(const WindowGeom& g, const float* w, const float* b,
                                                         int64_t xb, int64_t yb, const Activation& act,
                                                         PackCache* packs) {
  if (!w || !applies(g, xb, yb)) return nullptr;
  std::shared_ptr<ConvDepthwise> k(new ConvDepthwise());
  k->N_ = g.N, k->C_ = g.C, k->L_ = yb, k->Cb_ = (g.C + yb - 1) / yb;
  k->H_ = g.in[1], k->W_ = g.in[2], k->OH_ = g.out[1], k->OW_ = g.out[2];
  k->K_ = static_cast<int>(g.k[1]), k->S_ = static_cast<int>(g.s[1]), k->D_ = static_cast<int>(g.d[1]);
  k->pt_ = g.pb[1], k->pl_ = g.pb[2];
  k->variant_ = variant_of(g.k[1], g.s[1], g.d[1]);
  const int64_t C = g.C, Cb = k->Cb_, KK = g.k[1] * g.k[1], L = yb;
  // Interior columns: ow * S - pl >= 0 and ow * S - pl + (K - 1) * D <= W - 1.
  k->ow_lo_ = std::min<int64_t>(k->OW_, (k->pl_ + k->S_ - 1) / k->S_);
  const int64_t last_start = k->W_ - 1 - (k->K_ - 1) * k->D_ + k->pl_;  // the largest ow * S allowed
  k->ow_hi_ = last_start < 0 ? k->ow_lo_ : std::clamp<int64_t>(last_start / k->S_ + 1, k->ow_lo_, k->OW_);
#ifdef OPENACL_ACT512
  if (L == 8) {
    // The row's tiles, the same for every row: as row() cuts them, but in
    // tiles of balanced sizes (a 7-column row in 4 + 3, not 6 + 1).
    const int64_t OW = k->OW_, lo = k->ow_lo_, hi = k->ow_hi_;
    for (auto [tw, plan] : {std::pair<int64_t, std::vector<Tile8>*>{kTile8Max, &k->plan8_},
                            std::pair<int64_t, std::vector<Tile8>*>{kTile8x2Max, &k->plan8x2_}}) {
      if (OW <= 2 * tw) {
        plan_tiles(0, OW, tw, false, lo, hi, plan);
      } else {
        plan_tiles(0, lo, tw, true, lo, hi, plan);
        plan_tiles(lo, hi, tw, false, lo, hi, plan);
        plan_tiles(hi, OW, tw, true, lo, hi, plan);
      }
    }
  }
#endif
  k->bias_.assign(static_cast<size_t>(Cb * L), 0.f);
  if (b) std::memcpy(k->bias_.data(), b, static_cast<size_t>(C) * sizeof(float));
  k->act_ = act;
  k->kind_ = act512::kind_of(act);

  const size_t bytes = static_cast<size_t>(Cb * KK * L) * sizeof(float);
  const std::string recipe =
      "conv depthwise [Cb][K*K][" + std::to_string(L) + "] v1 C" + std::to_string(C) + " K" + std::to_string(k->K_);
  if (packs) k->w_ = packs->find(w, recipe, bytes);
  if (!k->w_) {
    PageBuffer buf = alloc_pages(bytes);
    if (!buf) return nullptr;
    float* p = static_cast<float*>(buf.get());
    std::memset(p, 0, bytes);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < KK; ++t) p[((c / L) * KK + t) * L + c % L] = w[c * KK + t];
    std::shared_ptr<const void> owned(buf.release(), PageFree());
    if (packs) packs->record(w, recipe, owned.get(), bytes, owned);
    k->w_ = std::move(owned);
  }
  // Rows per parallel chunk: at least about 2K multiply-adds of 16 lanes (a
  // microsecond). Small, so that parallel_for cuts even a 7x7 layer into its
  // full count of chunks (four per thread, evenly shared): with a few large
  // chunks one thread got three of five, and MobileNetV2's small layers ran
  // 15% slower than oneDNN's on two threads.
  k->grain_ = std::max<int64_t>(1, (int64_t{1} << 11) / std::max<int64_t>(1, k->OW_ * KK));
  return k;
}

void ConvDepthwise::run_rows(const float* x, int64_t row0, float* y, const float* r, int64_t cb, int64_t oh0,
                             int64_t oh1) const {
#ifdef OPENACL_ACT512
  RowArgs t;
  t.x = x, t.row0 = row0;
  t.W = W_, t.xrs = W_ * L_, t.pl = pl_;
  t.w = static_cast<const float*>(w_.get()) + cb * K_ * K_ * L_;
  t.bias = bias_.data() + cb * L_;
  const int64_t real = std::min<int64_t>(L_, C_ - cb * L_);
  t.mask = static_cast<__mmask16>((1u << real) - 1);
  t.a = act_.alpha, t.b = act_.beta;
  t.yrs = OW_ * L_;
  const auto& rows = L_ == 8 ? kRows8 : kRows;
  const bool two = L_ == 8 || D_ == 1;  // a two-row form
  const int dshift = D_ == 2 ? 1 : 0;  // D is 1 or 2: a shift, not a division, on every row
  const int64_t span = (K_ - 1) * D_;  // the window's rows, less one
  for (int64_t oh = oh0; oh < oh1;) {
    t.ih0 = oh * S_ - pt_;
    t.y = y + (oh - oh0) * t.yrs, t.r = r ? r + (oh - oh0) * t.yrs : nullptr;
    int64_t n = 1;  // rows done by this call
    if (two && oh + 1 < oh1 && t.ih0 >= 0 && t.ih0 + S_ + span <= H_ - 1) {
      // Two rows whose windows lie inside the input's rows: one tile, twice
      // the independent sums (see kTile8x2Max and tile()).
      t.plan = plan8x2_.data(), t.plan_n = static_cast<int64_t>(plan8x2_.size());
      rows[1][static_cast<size_t>(kind_)][static_cast<size_t>(variant_)](t, OW_, ow_lo_, ow_hi_);
      n = 2;
    } else {
      // Window rows inside the input: 0 <= ih0 + kh * D <= H - 1.
      t.kh0 = t.ih0 >= 0 ? 0 : static_cast<int>((-t.ih0 + D_ - 1) >> dshift);
      const int64_t top = H_ - 1 - t.ih0;
      t.kh1 = top < 0 ? 0 : static_cast<int>(std::min<int64_t>(K_, (top >> dshift) + 1));
      t.kh1 = std::max(t.kh1, t.kh0);
      t.plan = plan8_.data(), t.plan_n = static_cast<int64_t>(plan8_.size());
      rows[0][static_cast<size_t>(kind_)][static_cast<size_t>(variant_)](t, OW_, ow_lo_, ow_hi_);
    }
    // No vector form here: on the stored rows.
    if (kind_ == act512::kOther) act512::apply_stored(act_, t.y, OW_ * n, real, L_);
    oh += n;
  }
#else
  (void)x, (void)row0, (void)y, (void)r, (void)cb, (void)oh0, (void)oh1;
#endif
}

void ConvDepthwise::run(const float* x, float* y, const float* residual) const {
  const int64_t xplane = H_ * W_ * L_, yplane = OH_ * OW_ * L_;
  parallel_for(N_ * Cb_ * OH_, grain_, [&](int64_t lo, int64_t hi) {
    // nb: image * Cb + block, cb: the block; rows counted, not divided out.
    for (int64_t i = lo, oh = lo % OH_, nb = lo / OH_, cb = nb % Cb_; i < hi;) {
      const int64_t n = std::min(hi - i, OH_ - oh);  // rows of this plane in the chunk
      const int64_t yoff = nb * yplane + oh * OW_ * L_;
      run_rows(x + nb * xplane, 0, y + yoff, residual ? residual + yoff : nullptr, cb, oh, oh + n);
      i += n, oh += n;
      if (oh == OH_) {
        oh = 0, ++nb;
        if (++cb == Cb_) cb = 0;
      }
    }
  });
}

}  // namespace openacl::kernels::cpu
