// Pointwise convolution over channel-blocked activations: see conv_1x1.h.
#include "kernels/cpu/conv_1x1.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "base/page_alloc.h"
#include "kernels/cpu/act512.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/matmul_common.h"

#ifdef OPENACL_ACT512
#define OPENACL_CONV1X1_AVX512 1
#endif

namespace openacl::kernels::cpu {
namespace {

// Pixels per tile for a group of nb output blocks: 24 accumulators (16 for
// one block), the rest of the 32 registers for the weights.
constexpr int kTilePixels[5] = {0, 16, 12, 8, 6};
// The same with 8 lanes (AVX2's 16 registers): groups of up to three blocks,
// 12 accumulators, a weight vector per block and the broadcast pixel.
constexpr int kMaxGroup8 = 3;
constexpr int kTilePixels8[kMaxGroup8 + 1] = {0, 12, 6, 4};
// Tiles per call of the tile loops, at most (see tile8_kernel): 8 where
// run() shares them out over the threads (a small layer still makes a few
// entries per thread), 32 on a fused block's band (one thread's): 16 -> 96
// channels at 112x112 82 -> 87 GFLOP/s against runs of 8 (8 lanes, Zen 2).
// With 16 lanes (Zen 5, one thread) runs against a call per tile took
// MobileNetV2 3.09-3.26 -> 2.96-3.04 ms, its 112x112 block (16 -> 96
// channels) 0.357 -> 0.316 ms.
constexpr int64_t kRun = 8, kRunSpan = 32;
// X of one pixel range stays within this many bytes (half a Zen 4's L2).
constexpr int64_t kRangeBytes = 512 << 10;

#ifdef OPENACL_CONV1X1_AVX512
struct TileArgs {
  const float* x;     // the tile's first pixel in X's first channel block
  int64_t xcs;        // floats between X's channel blocks (P * xb)
  int64_t C;          // input channels (real ones)
  const float* w;     // packed weights of the tile's first block: [C][16]
  int64_t wbs;        // floats between blocks of packed weights (C * 16)
  const float* bias;  // the tile's first block's 16 values
  float* y;           // the tile's first pixel in Y's first block
  const float* r;     // the same place in the residual, or null
  int64_t ybs;        // floats between Y's blocks (P * 16)
  int last;           // index of the block whose lanes past M are zeroed, or -1
  __mmask16 mask;     // its real lanes
  int kind;           // act512::Kind
  float a, b;         // the activation's parameters
  int count;          // tiles of NP pixels one after another
  const float* pf = nullptr;  // weights to prefetch into L2 while the tile(s) run,
  int64_t pfn = 0;            // this many cache lines from pf on,
  int64_t pf_step = 0;        // this many per channel block
};

// A tile loop's share of the next group's weights, prefetched into L2 a
// step per channel block: spread over the channel blocks of all the group's
// tiles, so that its first tile does not wait for them (where the weights
// are large and the pixels few, they come from memory).
class WeightPrefetch {
 public:
  explicit WeightPrefetch(const TileArgs& t) : p_(t.pf), end_(t.pf + 16 * t.pfn), step_(16 * t.pf_step) {}
  __attribute__((always_inline)) void next() {
    for (const float* e = std::min(end_, p_ + step_); p_ < e; p_ += 16)
      _mm_prefetch(reinterpret_cast<const char*>(p_), _MM_HINT_T1);
  }

 private:
  const float* p_;
  const float* const end_;
  const int64_t step_;
};

using namespace act512;

// acc (+ the residual), activated (KIND: a constant, so the switch folds), into Y.
template <int KIND, int NB, int NP>
__attribute__((target("avx512f"), always_inline)) inline void store_as(const TileArgs& t, __m512 (&acc)[NB][NP]) {
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    float* yj = t.y + j * t.ybs;
    const float* rj = t.r ? t.r + j * t.ybs : nullptr;
#pragma GCC unroll 16
    for (int i = 0; i < NP; ++i) {
      __m512 v = acc[j][i];
      if (rj) v = _mm512_add_ps(v, _mm512_loadu_ps(rj + 16 * i));
      v = act512::apply<KIND>(v, t.a, t.b);
      if (j == t.last) v = _mm512_maskz_mov_ps(t.mask, v);
      _mm512_storeu_ps(yj + 16 * i, v);
    }
  }
}

template <int NB, int NP>
__attribute__((target("avx512f"), always_inline)) inline void store_tile(const TileArgs& t, __m512 (&acc)[NB][NP]) {
  switch (t.kind) {
    case kRelu: return store_as<kRelu>(t, acc);
    case kLeakyRelu: return store_as<kLeakyRelu>(t, acc);
    case kClip: return store_as<kClip>(t, acc);
    case kHardSigmoid: return store_as<kHardSigmoid>(t, acc);
    case kHardSwish: return store_as<kHardSwish>(t, acc);
    default: return store_as<kNone>(t, acc);
  }
}

// v in both halves (AVX-512F's 4-double broadcast; AVX-512DQ's 8-float one
// is the same instruction).
__attribute__((target("avx512f"), always_inline)) inline __m512 twice(__m256 v) {
  return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(v)));
}

// NB output blocks x NP pixels, X in XB-blocks. HM (half mode) 0: every
// block has 16 real lanes. Otherwise the last block has 8 (M % 16 == 8:
// MobileNet's 24-, 40- and 72-channel tensors), and its sums are kept
// either (HM 1) in 8-lane registers, whose FMAs cost half a 16-lane one
// where the CPU splits AVX-512 into two 256-bit halves (Zen 4), or (HM 2)
// two pixels' 8 lanes to a 16-lane register, the pixels' broadcasts
// blended into one vector: where a 16-lane FMA costs what an 8-lane one
// does (full-width AVX-512, Zen 5) half the FMAs for that block. t.count
// such tiles one after another (see tile8_kernel).
template <int XB, int NB, int NP, int HM>
__attribute__((target("avx512f,avx512vl,fma"))) void tile_kernel(const TileArgs& args) {
  constexpr bool HALF = HM != 0, PAIR = HM == 2;
  constexpr int NF = HALF ? NB - 1 : NB;                    // blocks of 16 lanes
  constexpr int NH = !HALF ? 1 : PAIR ? (NP + 1) / 2 : NP;  // registers of the half block's sums
  TileArgs t = args;
  WeightPrefetch pf(t);
  for (int k = 0; k < args.count; ++k, t.x += NP * XB, t.y += NP * 16, t.r = t.r ? t.r + NP * 16 : nullptr) {
    __m512 acc[NB][NP];
    __m256 acch[PAIR ? 1 : NH];
    __m512 accp[PAIR ? NH : 1];
#pragma GCC unroll 4
    for (int j = 0; j < NF; ++j) {
      const __m512 bv = _mm512_loadu_ps(t.bias + 16 * j);
#pragma GCC unroll 16
      for (int i = 0; i < NP; ++i) acc[j][i] = bv;
    }
    if (HALF) {
      const __m256 bh = _mm256_loadu_ps(t.bias + 16 * NF);
#pragma GCC unroll 16
      for (int i = 0; i < NH; ++i) {
        if (PAIR)
          accp[i] = twice(bh);
        else
          acch[i] = bh;
      }
    }
    for (int64_t c0 = 0; c0 < t.C; c0 += XB) {
      const float* xc = t.x + (c0 / XB) * t.xcs;
      const float* wc = t.w + c0 * 16;
      const int64_t cn = std::min<int64_t>(XB, t.C - c0);
      // The next tile's X in this channel block, a tile ahead (its pixels
      // follow this tile's): X's channel blocks lie a plane apart, too many
      // streams for the hardware prefetchers, and X mostly comes from L3 at
      // batch 8 (960 -> 128 channels at 16x16: 88 -> 106 GFLOP/s).
#pragma GCC unroll 16
      for (int i = 0; i < NP * XB; i += 16) _mm_prefetch(reinterpret_cast<const char*>(xc + NP * XB + i), _MM_HINT_T0);
      pf.next();
      for (int64_t ci = 0; ci < cn; ++ci) {
        __m512 wv[NB];
#pragma GCC unroll 4
        for (int j = 0; j < NF; ++j) wv[j] = _mm512_load_ps(wc + j * t.wbs + ci * 16);
        const __m256 wh = HALF ? _mm256_load_ps(wc + NF * t.wbs + ci * 16) : _mm256_setzero_ps();
        const __m512 wp = PAIR ? twice(wh) : _mm512_setzero_ps();
        __m512 xprev = _mm512_setzero_ps();
#pragma GCC unroll 16
        for (int i = 0; i < NP; ++i) {
          const __m512 xv = _mm512_set1_ps(xc[i * XB + ci]);
#pragma GCC unroll 4
          for (int j = 0; j < NF; ++j) acc[j][i] = _mm512_fmadd_ps(xv, wv[j], acc[j][i]);
          if (HM == 1) acch[i] = _mm256_fmadd_ps(_mm512_castps512_ps256(xv), wh, acch[i]);
          if (PAIR) {
            // Pixel i - 1 in the low lanes, i in the high ones; a last odd
            // pixel alone (its high lanes unused).
            if (i % 2 == 1)
              accp[i / 2] = _mm512_fmadd_ps(_mm512_mask_blend_ps(0xff00, xprev, xv), wp, accp[i / 2]);
            else if (i == NP - 1)
              accp[i / 2] = _mm512_fmadd_ps(xv, wp, accp[i / 2]);
            xprev = xv;
          }
        }
      }
    }
    // The half block's upper lanes are masked to zeros when stored (t.last is this block).
    if (HM == 1)
#pragma GCC unroll 16
      for (int i = 0; i < NP; ++i) acc[NF][i] = _mm512_castps256_ps512(acch[i]);
    if (PAIR)
#pragma GCC unroll 16
      for (int i = 0; i < NP; ++i)
        acc[NF][i] = i % 2 == 0 ? accp[i / 2] : _mm512_shuffle_f32x4(accp[i / 2], accp[i / 2], 0xee);
    store_tile<NB, NP>(t, acc);
  }
}

using TileFn = void (*)(const TileArgs&);
using TileTable = std::array<std::array<TileFn, 17>, 5>;

// kTiles[xb == 16][half mode][nb][np]: every tile shape run() may meet.
template <int XB, int NB, int HALF, int... NP>
constexpr std::array<TileFn, 17> row(std::integer_sequence<int, NP...>) {
  std::array<TileFn, 17> r{};
  ((r[NP + 1] = NP + 1 <= kTilePixels[NB] ? &tile_kernel<XB, NB, (NP + 1 <= kTilePixels[NB] ? NP + 1 : 1), HALF>
                                          : nullptr),
   ...);
  return r;
}
template <int XB, int HALF>
constexpr TileTable table() {
  const auto s = std::make_integer_sequence<int, 16>{};
  return {std::array<TileFn, 17>{}, row<XB, 1, HALF>(s), row<XB, 2, HALF>(s), row<XB, 3, HALF>(s),
          row<XB, 4, HALF>(s)};
}
const TileTable kTiles[2][3] = {{table<8, 0>(), table<8, 1>(), table<8, 2>()},
                                 {table<16, 0>(), table<16, 1>(), table<16, 2>()}};

// The 8-lane form (AVX2 + FMA; X and Y in 8-blocks), for the CPUs whose
// oneDNN kernels take 8-blocks: the same tile as tile_kernel (per input
// channel, one weight vector per block and one broadcast per pixel), with
// the lanes past M of the last block (t.last, the low bits of t.mask) zeroed.
template <int KIND, int NB, int NP>
__attribute__((target("avx2,fma"), always_inline)) inline void store8_as(const TileArgs& t, __m256 (&acc)[NB][NP]) {
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    float* yj = t.y + j * t.ybs;
    const float* rj = t.r ? t.r + j * t.ybs : nullptr;
    const __m256 keep = lanes8(j == t.last ? __builtin_popcount(t.mask) : 8);
#pragma GCC unroll 16
    for (int i = 0; i < NP; ++i) {
      __m256 v = acc[j][i];
      if (rj) v = _mm256_add_ps(v, _mm256_loadu_ps(rj + 8 * i));
      v = act512::apply8<KIND>(v, t.a, t.b);
      if (j == t.last) v = _mm256_and_ps(v, keep);
      _mm256_storeu_ps(yj + 8 * i, v);
    }
  }
}

// One input channel ci of the 8-lane tile.
template <int NB, int NP>
__attribute__((target("avx2,fma"), always_inline)) inline void step8(const float* xc, const float* wc, int64_t wbs,
                                                                     int64_t ci, __m256 (&acc)[NB][NP]) {
  __m256 wv[NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) wv[j] = _mm256_load_ps(wc + j * wbs + ci * 8);
#pragma GCC unroll 16
  for (int i = 0; i < NP; ++i) {
    const __m256 xv = _mm256_broadcast_ss(xc + i * 8 + ci);
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[j][i] = _mm256_fmadd_ps(xv, wv[j], acc[j][i]);
  }
}

// t.count tiles of NP pixels, one after another: the call, the arguments
// and the switch once for them all. With few input channels a tile is
// short (16 channels: 96 cycles of FMAs), and as a call of its own each
// took about 75 cycles more: 16 -> 96 channels at 24x24 58 -> 91 GFLOP/s,
// at 112x112 57 -> 82 (Zen 2, one thread).
template <int KIND, int NB, int NP>
__attribute__((target("avx2,fma"))) void tile8_kernel(const TileArgs& args) {
  TileArgs t = args;
  WeightPrefetch pf(t);
  for (int k = 0; k < args.count; ++k, t.x += NP * 8, t.y += NP * 8, t.r = t.r ? t.r + NP * 8 : nullptr) {
    __m256 acc[NB][NP];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      const __m256 bv = _mm256_loadu_ps(t.bias + 8 * j);
#pragma GCC unroll 16
      for (int i = 0; i < NP; ++i) acc[j][i] = bv;
    }
    for (int64_t c0 = 0; c0 < t.C; c0 += 8) {
      const float* xc = t.x + (c0 / 8) * t.xcs;
      const float* wc = t.w + c0 * 8;
      // The next tile's X in this channel block (see tile_kernel).
#pragma GCC unroll 16
      for (int i = 0; i < NP * 8; i += 16) _mm_prefetch(reinterpret_cast<const char*>(xc + NP * 8 + i), _MM_HINT_T0);
      pf.next();
      // Not unrolled: unrolled, GCC ran short of registers and folded the
      // weight loads into the FMAs, each weight vector loaded four times.
      const int64_t cn = std::min<int64_t>(8, t.C - c0);
      for (int64_t ci = 0; ci < cn; ++ci) step8<NB, NP>(xc, wc, t.wbs, ci, acc);
    }
    store8_as<KIND>(t, acc);
  }
}

// kTiles8[kind][nb][np]: every 8-lane tile shape run() may meet, per
// activation (kOther: kNone's loops, the caller applies it after).
using TileTable8 = std::array<std::array<TileFn, 13>, kMaxGroup8 + 1>;
template <int KIND, int NB, int... NP>
constexpr std::array<TileFn, 13> row8(std::integer_sequence<int, NP...>) {
  std::array<TileFn, 13> r{};
  ((r[NP + 1] =
        NP + 1 <= kTilePixels8[NB] ? &tile8_kernel<KIND, NB, (NP + 1 <= kTilePixels8[NB] ? NP + 1 : 1)> : nullptr),
   ...);
  return r;
}
template <int KIND>
constexpr TileTable8 table8() {
  const auto s = std::make_integer_sequence<int, 12>{};
  return {std::array<TileFn, 13>{}, row8<KIND, 1>(s), row8<KIND, 2>(s), row8<KIND, 3>(s)};
}
const TileTable8 kTiles8[kOther + 1] = {table8<kNone>(), table8<kRelu>(),        table8<kLeakyRelu>(),
                                        table8<kClip>(), table8<kHardSigmoid>(), table8<kHardSwish>(),
                                        table8<kNone>()};
#endif  // OPENACL_CONV1X1_AVX512

std::atomic<int> g_half_form{0};  // set_half_form_for_testing

bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_CONV_1X1");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

}  // namespace

void Conv1x1::set_half_form_for_testing(int form) {
  // Anything but 1 or 2 is the machine's choice (the form indexes kTiles).
  g_half_form.store(form == 1 || form == 2 ? form : 0, std::memory_order_relaxed);
}

bool Conv1x1::applies(const WindowGeom& g, int64_t xb, int64_t yb) {
#ifdef OPENACL_CONV1X1_AVX512
  if (!enabled()) return false;
  if (yb == 16) {
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    if (!avx512 || (xb != 8 && xb != 16)) return false;
  } else if (yb != 8 || xb != 8 || !eight_lane_loops()) {
    return false;
  }
  for (int i = 0; i < kMaxSpatial; ++i)
    if (g.k[i] != 1 || g.s[i] != 1 || g.pb[i] != 0 || g.pe[i] != 0 || g.in[i] != g.out[i]) return false;
  return g.G == 1 && g.N > 0 && g.C > 0 && g.M > 0 && g.in_size() > 1 && g.in_size() <= (int64_t{1} << 30);
#else
  (void)g, (void)xb, (void)yb;
  return false;
#endif
}

std::shared_ptr<const Conv1x1> Conv1x1::make(const WindowGeom& g, const float* w, const float* b, int64_t xb,
                                             int64_t yb, const Activation& act, PackCache* packs) {
  if (!w || !applies(g, xb, yb)) return nullptr;
  // Packed weights (change "v1" when the layout changes).
  const std::string recipe =
      "conv1x1 [Mb][C][" + std::to_string(yb) + "] v1 C" + std::to_string(g.C) + " M" + std::to_string(g.M);
  auto packed = pack_rows(w, g.M, g.C, yb, recipe, packs);
  if (!packed) return nullptr;
  return setup(g.N, g.C, g.M, g.in_size(), xb, yb, std::move(packed), b, act);
}

std::shared_ptr<const Conv1x1> Conv1x1::make_product(int64_t C, int64_t M, int64_t np, int64_t xb,
                                                     std::shared_ptr<const void> packed) {
  WindowGeom g;
  g.nsp = 1, g.N = 1, g.C = C, g.M = M, g.G = 1, g.in[1] = g.out[1] = np, g.k[1] = 1;
  if (!packed || !applies(g, xb, 16)) return nullptr;
  return setup(1, C, M, np, xb, 16, std::move(packed), nullptr, Activation());
}

std::shared_ptr<const Conv1x1> Conv1x1::setup(int64_t N, int64_t C, int64_t M, int64_t P, int64_t xb, int64_t L,
                                              std::shared_ptr<const void> packed, const float* b,
                                              const Activation& act) {
  std::shared_ptr<Conv1x1> k(new Conv1x1());
  k->N_ = N, k->C_ = C, k->M_ = M, k->P_ = P, k->xb_ = xb, k->L_ = L, k->Mb_ = (M + L - 1) / L;
  k->w_ = std::move(packed);
  k->bias_.assign(static_cast<size_t>(k->Mb_ * L), 0.f);
  if (b) std::memcpy(k->bias_.data(), b, static_cast<size_t>(M) * sizeof(float));
  k->act_ = act;
  k->kind_ = act512::kind_of(act);
#ifdef OPENACL_CONV1X1_AVX512
  if (L == 16 && M % 16 == 8 && __builtin_cpu_supports("avx512vl")) {
    // Pairs where a 16-lane FMA costs what an 8-lane one does: alone, one
    // thread, Zen 5: 144 -> 24 channels at 56x56 0.118 -> 0.092 ms (73 ->
    // 94% of the peak), 240 -> 40 at 28x28 0.073 -> 0.062, 480 -> 72 at
    // 14x14 0.060 -> 0.055.
    const int forced = g_half_form.load(std::memory_order_relaxed);
    k->half_ = forced ? forced : full_width_avx512() ? 2 : 1;
  }
#endif

  // Tiles: pixel ranges whose X fits kRangeBytes, each range's tiles together.
  const int64_t Cp = (C + xb - 1) / xb * xb;
  k->range_ = std::max<int64_t>(24, kRangeBytes / (Cp * static_cast<int64_t>(sizeof(float))));
  const int64_t ranges = (P + k->range_ - 1) / k->range_;
  for (int64_t rg = 0; rg < ranges; ++rg) k->add_tiles(rg * P / ranges, (rg + 1) * P / ranges, kRun, &k->tiles_);
  // Chunks of at least ~256K FLOPs (8K multiply-adds of 16 lanes: a few microseconds).
  const int64_t tile_flops = 2 * C * (L == 16 ? 16 * 24 : 8 * 12) * kRun;
  k->grain_ = std::max<int64_t>(1, (int64_t{1} << 18) / tile_flops);
  return k;
}

void Conv1x1::add_tiles(int64_t q0, int64_t q1, int64_t run, std::vector<Tile>* tiles) const {
  const int64_t max_group = L_ == 16 ? 4 : kMaxGroup8;
  const int* const pixels = L_ == 16 ? kTilePixels : kTilePixels8;
  const int64_t groups = (Mb_ + max_group - 1) / max_group;
  for (int64_t gi = 0, ob0 = 0; gi < groups; ++gi) {
    const int64_t nb = Mb_ / groups + (gi < Mb_ % groups ? 1 : 0);
    // nt tiles of balanced sizes (the first `rem` one pixel larger), without
    // a division per tile (run_span cuts a band's tiles on every call);
    // runs of up to `run` tiles of one size in one entry.
    const int64_t nt = (q1 - q0 + pixels[nb] - 1) / pixels[nb], base = (q1 - q0) / nt, rem = (q1 - q0) % nt;
    // The next group's weights (none after the last), in 64-byte lines,
    // shared out over this group's tiles.
    const int64_t next_nb = gi + 1 < groups ? Mb_ / groups + (gi + 1 < Mb_ % groups ? 1 : 0) : 0;
    // Worked out here, not per call of the tile loop (divisions; a tile
    // with few input channels is short).
    const int64_t lines = next_nb * C_ * L_ / 16, pf0 = (ob0 + nb) * C_ * L_, cblocks = (C_ + xb_ - 1) / xb_;
    for (int64_t t = 0, p0 = q0; t < nt;) {
      const int64_t np = base + (t < rem ? 1 : 0), count = std::min(run, (t < rem ? rem : nt) - t);
      const int64_t l0 = lines ? t * lines / nt : 0, l1 = lines ? (t + count) * lines / nt : 0;
      const int64_t step = l1 > l0 ? (l1 - l0 + count * cblocks - 1) / (count * cblocks) : 0;
      tiles->push_back(Tile{static_cast<int32_t>(p0), static_cast<int32_t>(np), static_cast<int32_t>(ob0),
                            static_cast<int32_t>(nb), static_cast<int32_t>(count), static_cast<int32_t>(l1 - l0),
                            static_cast<int32_t>(step), pf0 + l0 * 16});
      p0 += np * count, t += count;
    }
    ob0 += nb;
  }
}

void Conv1x1::run_tile(const Tile& t, const float* x, int64_t xcs, float* y, int64_t ybs, const float* r) const {
#ifdef OPENACL_CONV1X1_AVX512
  TileArgs a;
  a.x = x + t.p0 * xb_;
  a.xcs = xcs, a.C = C_, a.wbs = C_ * L_, a.ybs = ybs;
  a.w = static_cast<const float*>(w_.get()) + t.ob0 * C_ * L_;
  a.bias = bias_.data() + t.ob0 * L_;
  const int64_t yoff = t.ob0 * ybs + t.p0 * L_;
  a.y = y + yoff;
  a.r = r ? r + yoff : nullptr;
  const bool pad = M_ % L_ != 0;
  a.last = pad && t.ob0 + t.nb == Mb_ ? t.nb - 1 : -1;
  a.mask = static_cast<__mmask16>((1u << (M_ % L_)) - 1);
  a.kind = kind_, a.a = act_.alpha, a.b = act_.beta, a.count = t.count;
  a.pf = static_cast<const float*>(w_.get()) + t.pf0, a.pfn = t.pfn, a.pf_step = t.pf_step;
  if (L_ == 8) {
    kTiles8[kind_][static_cast<size_t>(t.nb)][static_cast<size_t>(t.np)](a);
  } else {
    // The last group's last block has 8 real lanes (half_).
    const int half = t.ob0 + t.nb == Mb_ ? half_ : 0;
    kTiles[xb_ == 16][half][static_cast<size_t>(t.nb)][static_cast<size_t>(t.np)](a);
  }
  if (kind_ == act512::kOther)  // an activation without a vector form here: on the stored tile(s)
    for (int j = 0; j < t.nb; ++j)
      act512::apply_stored(act_, a.y + j * ybs, t.np * t.count, j == a.last ? M_ % L_ : L_, L_);
#else
  (void)t, (void)x, (void)xcs, (void)y, (void)ybs, (void)r;
#endif
}

void Conv1x1::run(const float* x, float* y, const float* residual) const {
  const int64_t T = static_cast<int64_t>(tiles_.size());
  const int64_t ximg = (C_ + xb_ - 1) / xb_ * xb_ * P_, yimg = Mb_ * L_ * P_;
  parallel_for(N_ * T, grain_, [&](int64_t lo, int64_t hi) {
    // Image n, tile ti: counted, not divided out per tile (a 64-bit division
    // is tens of cycles, and a tile with few input channels a hundred).
    for (int64_t i = lo, n = lo / T, ti = lo % T; i < hi; ++i) {
      run_tile(tiles_[static_cast<size_t>(ti)], x + n * ximg, P_ * xb_, y + n * yimg, P_ * L_,
               residual ? residual + n * yimg : nullptr);
      if (++ti == T) ti = 0, ++n;
    }
  });
}

void Conv1x1::run_span(const float* x, int64_t xcs, float* y, int64_t ybs, const float* residual,
                       int64_t np) const {
  // A band is a few rows: its tiles are cut here (microseconds against the
  // band's tens of thousands of multiply-adds per pixel row).
  thread_local std::vector<Tile> tiles;
  for (int64_t q0 = 0; q0 < np; q0 += range_) {
    tiles.clear();
    add_tiles(q0, std::min(np, q0 + range_), kRunSpan, &tiles);
    for (const Tile& t : tiles) run_tile(t, x, xcs, y, ybs, residual);
  }
}

}  // namespace openacl::kernels::cpu
