// Depthwise convolution over 16-channel blocks: see conv_dw.h.
#include "kernels/cpu/conv_dw.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "base/page_alloc.h"
#include "kernels/cpu/act512.h"
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

bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_CONV_DW");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

#ifdef OPENACL_ACT512
struct RowArgs {
  const float* x;     // the block's input rows from row0 on
  int64_t row0;       // the input row x starts at
  int64_t W, xrs;     // input columns; floats per input row (W * 16)
  int64_t ih0;        // the window's first input row (oh * S - pt)
  int kh0, kh1;       // the window rows inside the input
  int64_t pl;         // left padding
  const float* w;     // the block's packed weights, [K * K][16]
  const float* bias;  // its 16 values
  float* y;           // the output row (OW * 16 floats)
  const float* r;     // the residual's row, or null
  __mmask16 mask;     // the block's real channels
  float a, b;         // the activation's parameters
};

template <int KIND>
__attribute__((target("avx512f"), always_inline)) inline void finish(const RowArgs& t, __m512 v, int64_t ow) {
  if (t.r) v = _mm512_add_ps(v, _mm512_loadu_ps(t.r + 16 * ow));
  v = _mm512_maskz_mov_ps(t.mask, act512::apply<KIND>(v, t.a, t.b));
  _mm512_storeu_ps(t.y + 16 * ow, v);
}

// Columns [ow0, ow0 + T). EDGE: some windows reach past the input's columns
// (the row's border columns), and the columns outside read as zeros.
template <int KIND, int K, int S, int D, int T, bool EDGE = false>
__attribute__((target("avx512f"))) void tile(const RowArgs& t, int64_t ow0) {
  __m512 acc[T];
  const __m512 bv = _mm512_loadu_ps(t.bias);
#pragma GCC unroll 8
  for (int i = 0; i < T; ++i) acc[i] = bv;
  constexpr int NX = (T - 1) * S + (K - 1) * D + 1;  // input columns the tile reads
  for (int kh = t.kh0; kh < t.kh1; ++kh) {
    const float* xr = t.x + (t.ih0 + kh * D - t.row0) * t.xrs + (ow0 * S - t.pl) * 16;
    __m512 xv[NX];
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
    const float* wk = t.w + kh * K * 16;
#pragma GCC unroll 5
    for (int kw = 0; kw < K; ++kw) {
      const __m512 wv = _mm512_loadu_ps(wk + 16 * kw);
#pragma GCC unroll 8
      for (int i = 0; i < T; ++i) acc[i] = _mm512_fmadd_ps(xv[i * S + kw * D], wv, acc[i]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < T; ++i) finish<KIND>(t, acc[i], ow0 + i);
}

// Columns [ow, ow + n), n <= kTile, in one tile.
template <int KIND, int K, int S, int D, bool EDGE>
__attribute__((target("avx512f"), always_inline)) inline void tile_of(const RowArgs& t, int64_t ow, int64_t n) {
  switch (n) {
    case 8: tile<KIND, K, S, D, 8, EDGE>(t, ow); break;
    case 7: tile<KIND, K, S, D, 7, EDGE>(t, ow); break;
    case 6: tile<KIND, K, S, D, 6, EDGE>(t, ow); break;
    case 5: tile<KIND, K, S, D, 5, EDGE>(t, ow); break;
    case 4: tile<KIND, K, S, D, 4, EDGE>(t, ow); break;
    case 3: tile<KIND, K, S, D, 3, EDGE>(t, ow); break;
    case 2: tile<KIND, K, S, D, 2, EDGE>(t, ow); break;
    case 1: tile<KIND, K, S, D, 1, EDGE>(t, ow); break;
    default: break;
  }
}

// Columns [ow, end) in tiles of up to kTile.
template <int KIND, int K, int S, int D, bool EDGE>
__attribute__((target("avx512f"), always_inline)) inline void tiles(const RowArgs& t, int64_t ow, int64_t end) {
  for (; ow < end; ow += kTile) tile_of<KIND, K, S, D, EDGE>(t, ow, std::min<int64_t>(kTile, end - ow));
}

// One output row; [lo, hi) are the interior columns (windows inside the
// input's columns), the rest border columns, which take edge tiles rather
// than a pixel at a time (a dilated 5x5 window on a 16-column image has 8
// border columns of 16). Rows of up to two tiles go in tiles from column 0,
// any with a border column an edge tile: 7x7 and 14x14 layers 12-24% faster
// than the interior's tiles plus the border's, dilated 5x5 ones at 16x16
// 40% faster than a pixel at a time. Longer rows: the border columns in
// edge tiles of their own, the interior in plain ones (an edge tile costs
// more than a plain one: 5% on a 64x64 5x5 layer of stride 2 when its first
// and last tiles were edge tiles).
template <int KIND, int V>
__attribute__((target("avx512f"))) void row(const RowArgs& t, int64_t OW, int64_t lo, int64_t hi) {
  constexpr int K = kVariants[V][0], S = kVariants[V][1], D = kVariants[V][2];
  if (OW <= 2 * kTile) {
    for (int64_t ow = 0; ow < OW; ow += kTile) {
      const int64_t n = std::min<int64_t>(kTile, OW - ow);
      if (ow < lo || ow + n > hi) tile_of<KIND, K, S, D, true>(t, ow, n);
      else tile_of<KIND, K, S, D, false>(t, ow, n);
    }
    return;
  }
  tiles<KIND, K, S, D, true>(t, 0, lo);
  tiles<KIND, K, S, D, false>(t, lo, hi);
  tiles<KIND, K, S, D, true>(t, hi, OW);
}

using RowFn = void (*)(const RowArgs&, int64_t, int64_t, int64_t);

template <int KIND, int... V>
constexpr std::array<RowFn, kNumVariants> rows_for(std::integer_sequence<int, V...>) {
  return {&row<KIND, V>...};
}
// kRows[kind][variant]; kOther runs kNone's loops (the caller applies it after).
template <int... KIND>
constexpr std::array<std::array<RowFn, kNumVariants>, act512::kOther + 1> all_rows(std::integer_sequence<int, KIND...>) {
  return {rows_for<KIND == act512::kOther ? act512::kNone : KIND>(std::make_integer_sequence<int, kNumVariants>{})...};
}
const auto kRows = all_rows(std::make_integer_sequence<int, act512::kOther + 1>{});
#endif  // OPENACL_ACT512

}  // namespace

bool ConvDepthwise::applies(const WindowGeom& g, int64_t xb, int64_t yb) {
#ifdef OPENACL_ACT512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 || !enabled() || xb != 16 || yb != 16 || g.nsp != 2) return false;
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
  k->N_ = g.N, k->C_ = g.C, k->Cb_ = (g.C + 15) / 16;
  k->H_ = g.in[1], k->W_ = g.in[2], k->OH_ = g.out[1], k->OW_ = g.out[2];
  k->K_ = static_cast<int>(g.k[1]), k->S_ = static_cast<int>(g.s[1]), k->D_ = static_cast<int>(g.d[1]);
  k->pt_ = g.pb[1], k->pl_ = g.pb[2];
  k->variant_ = variant_of(g.k[1], g.s[1], g.d[1]);
  const int64_t C = g.C, Cb = k->Cb_, KK = g.k[1] * g.k[1];
  // Interior columns: ow * S - pl >= 0 and ow * S - pl + (K - 1) * D <= W - 1.
  k->ow_lo_ = std::min<int64_t>(k->OW_, (k->pl_ + k->S_ - 1) / k->S_);
  const int64_t last_start = k->W_ - 1 - (k->K_ - 1) * k->D_ + k->pl_;  // the largest ow * S allowed
  k->ow_hi_ = last_start < 0 ? k->ow_lo_ : std::clamp<int64_t>(last_start / k->S_ + 1, k->ow_lo_, k->OW_);
  k->bias_.assign(static_cast<size_t>(Cb * 16), 0.f);
  if (b) std::memcpy(k->bias_.data(), b, static_cast<size_t>(C) * sizeof(float));
  k->act_ = act;
  k->kind_ = act512::kind_of(act);

  const size_t bytes = static_cast<size_t>(Cb * KK * 16) * sizeof(float);
  const std::string recipe = "conv depthwise [Cb][K*K][16] v1 C" + std::to_string(C) + " K" + std::to_string(k->K_);
  if (packs) k->w_ = packs->find(w, recipe, bytes);
  if (!k->w_) {
    PageBuffer buf = alloc_pages(bytes);
    if (!buf) return nullptr;
    float* p = static_cast<float*>(buf.get());
    std::memset(p, 0, bytes);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < KK; ++t) p[((c / 16) * KK + t) * 16 + c % 16] = w[c * KK + t];
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

void ConvDepthwise::run_row(const float* x, int64_t row0, float* y, const float* r, int64_t cb, int64_t oh) const {
#ifdef OPENACL_ACT512
  RowArgs t;
  t.x = x, t.row0 = row0;
  t.W = W_, t.xrs = W_ * 16, t.pl = pl_;
  t.ih0 = oh * S_ - pt_;
  // Window rows inside the input: 0 <= ih0 + kh * D <= H - 1.
  t.kh0 = t.ih0 >= 0 ? 0 : static_cast<int>((-t.ih0 + D_ - 1) / D_);
  const int64_t top = H_ - 1 - t.ih0;
  t.kh1 = top < 0 ? 0 : static_cast<int>(std::min<int64_t>(K_, top / D_ + 1));
  t.kh1 = std::max(t.kh1, t.kh0);
  t.w = static_cast<const float*>(w_.get()) + cb * K_ * K_ * 16;
  t.bias = bias_.data() + cb * 16;
  t.y = y, t.r = r;
  const int64_t real = std::min<int64_t>(16, C_ - cb * 16);
  t.mask = static_cast<__mmask16>((1u << real) - 1);
  t.a = act_.alpha, t.b = act_.beta;
  kRows[static_cast<size_t>(kind_)][static_cast<size_t>(variant_)](t, OW_, ow_lo_, ow_hi_);
  if (kind_ == act512::kOther) act512::apply_stored(act_, y, OW_, real);  // no vector form here: on the stored row
#else
  (void)x, (void)row0, (void)y, (void)r, (void)cb, (void)oh;
#endif
}

void ConvDepthwise::run(const float* x, float* y, const float* residual) const {
  const int64_t xplane = H_ * W_ * 16, yplane = OH_ * OW_ * 16;
  parallel_for(N_ * Cb_ * OH_, grain_, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t oh = i % OH_, nb = i / OH_;  // nb: image * Cb + block
      const int64_t yoff = nb * yplane + oh * OW_ * 16;
      run_row(x + nb * xplane, 0, y + yoff, residual ? residual + yoff : nullptr, nb % Cb_, oh);
    }
  });
}

}  // namespace openacl::kernels::cpu
