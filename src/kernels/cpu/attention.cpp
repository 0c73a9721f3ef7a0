// Attention (opset 23..25): softmax(Q·Kᵀ·scale [softcap] + bias)·V per query
// row, where bias gathers the attention mask, the causal and sliding-window
// limits and the nonpad_kv_seqlen padding. K/V heads are shared across query
// heads (GQA). Arithmetic is in float (double for float64).
//
// A row whose bias is -inf everywhere (fully masked) yields zeros, as the spec
// requires, instead of NaN.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <dnnl.h>

#include "graph/passes.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/gelu512.h"
#include "kernels/cpu/gelu_avx2.h"
#include "kernels/cpu/simd8.h"
#include "kernels/cpu/softmax_row.h"

namespace openacl::kernels::cpu {
namespace {

// Element (b, h, s, d) of a Q/K/V input seen as [B, H, S, D].
struct HeadView {
  int64_t sb, sh, ss;  // strides (d stride is 1)
};

// Q, K or V as read here: an input tensor, or one third of a packed
// [B, S, 3 * H * D] input (graph::kPackedQkvAttr: part i at element
// i * H * D of each row). No copy and no allocation either way.
struct Part {
  const void* data = nullptr;
  int64_t rank = 0;
  int64_t dims[4] = {};
  int64_t row = 0;  // 3-D form: elements between consecutive positions
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data);
  }
};

// The input as a Part; false where its rank is not 3 or 4.
bool part_of(const Tensor& t, Part* p) {
  if (t.rank() != 3 && t.rank() != 4) return false;
  p->data = t.data, p->rank = t.rank();
  std::copy(t.dims.begin(), t.dims.end(), p->dims);
  p->row = t.rank() == 3 ? t.dims[2] : 0;
  return true;
}

// Part i (0 q, 1 k, 2 v) of a packed 3-D QKV input; false where its last
// dim does not divide by 3.
bool packed_part(const Tensor& t, int i, Part* p) {
  if (t.rank() != 3 || t.dims[2] % 3 != 0) return false;
  const int64_t w = t.dims[2] / 3;
  p->data = static_cast<const char*>(t.data) + static_cast<size_t>(i * w) * graph::dtype_bytes(t.dtype);
  p->rank = 3, p->dims[0] = t.dims[0], p->dims[1] = t.dims[1], p->dims[2] = w, p->row = t.dims[2];
  return true;
}

HeadView view_of(const Part& t, int64_t d) {
  if (t.rank == 4) return {t.dims[1] * t.dims[2] * t.dims[3], t.dims[2] * t.dims[3], t.dims[3]};
  return {t.dims[1] * t.row, d, t.row};  // 3-D [B, S, H*D], rows `row` apart
}

template <class T>
float as_float(const void* p, int64_t i) {
  return static_cast<float>(load(static_cast<const T*>(p)[i]));
}

// s[j] += m[j] (m may be null); returns the row's max (NaN ignored).
OPENACL_AVX2_CLONES float add_mask_max(float* s, const float* m, int64_t n) {
  v8f mv = v8f{} - std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    v8f x = ld8(s + j);
    if (m) {
      x += ld8(m + j);
      st8(s + j, x);
    }
    mv = x > mv ? x : mv;
  }
  float mx = mv[0];
  for (int l = 1; l < 8; ++l) mx = std::max(mx, mv[l]);
  for (; j < n; ++j) {
    if (m) s[j] += m[j];
    mx = std::max(mx, s[j]);
  }
  return mx;
}

bool has_nan(const float* s, int64_t n) {
  return std::any_of(s, s + n, [](float x) { return std::isnan(x); });
}

// The float32 case real models reach (a plain or fused encoder attention: no
// cache, no causal or window limits, no softcap, only output 0, an additive
// float mask covering every key): per (batch, head, block of query rows) the
// scores, mask and softmax while they are in cache, then Y (our tiles
// below, AVX2 or AVX-512, else one sgemm for each product). Q, K, V and Y
// are read and written through their strides, so the 3-D [B, S, H*D] form
// needs no copies. A fully masked row gives zeros; a row of NaN scores, NaN.
struct FastAttention {
  const float *q, *k, *v, *mask;
  float* y;
  HeadView qv, kv, vv, yv;
  int64_t ms[3];  // mask strides over batch, head, query row (keys: 1)
  int64_t batch, hq, group, sq, skv, dk, dv;
  float scale;
};

constexpr int64_t kRows = 64;  // query rows per score block: 64 x skv floats stay in L2

#if OPENACL_GELU_AVX2  // x86 with GCC: the AVX2 helpers of gelu_avx2.h are there
// The fused path's own tiles, AVX2 + FMA, where the CPU has them but not
// AVX-512 (which has its own, tiles16 below). Per (batch, head,
// share of the query rows): K^T packed once into 16-key panels
// [ceil(skv/16)][dk][16] and V into 16-column panels; then per tile of <= 6
// query rows its scores against every key (6 x 16 at a time, scaled), the
// mask added and exp(s - row max) left unnormalised in a 6-row buffer, and
// its rows of Y (6 x 16 or 6 x 8 at a time) scaled by 1 / row sum as they
// are stored. BERT-base's heads (128 x 128 x 64) on a Zen 2, one thread:
// 0.83 ms per layer with two sgemm per 64 rows, 0.70 with these.
namespace tiles {

#define OPENACL_AVX2_FMA __attribute__((target("avx2,fma")))

constexpr int64_t kPanel = 16;  // keys per K^T panel, columns per score tile
constexpr int kMr = 6;          // query rows per tile (12 or 6 sums of 16 registers)

// kt[p][d][c] = K[16p + c][d] (K's rows ldk apart); keys past skv are 0.
// Eight keys by eight d's at a time through an in-register transpose.
OPENACL_AVX2_FMA void pack_kt(const float* k, int64_t ldk, int64_t skv, int64_t dk, float* kt) {
  const int64_t panels = (skv + kPanel - 1) / kPanel, d8 = dk / 8 * 8;
  for (int64_t j0 = 0; j0 < panels * kPanel; j0 += 8) {
    float* o = kt + (j0 / kPanel) * dk * kPanel + j0 % kPanel;
    if (j0 + 8 > skv) {  // the last keys, and the zeros after them
      for (int64_t c = 0; c < 8; ++c)
        for (int64_t d = 0; d < dk; ++d) o[d * kPanel + c] = j0 + c < skv ? k[(j0 + c) * ldk + d] : 0.f;
      continue;
    }
    const float* kr = k + j0 * ldk;
    for (int64_t d = 0; d < d8; d += 8) {
      __m256 r[8];
      for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(kr + c * ldk + d);
      // rows c = keys, lanes = d's -> rows = d's, lanes = keys
      const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
      const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
      const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
      const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* od = o + d * kPanel;
      _mm256_storeu_ps(od + 0 * kPanel, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(od + 1 * kPanel, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(od + 2 * kPanel, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(od + 3 * kPanel, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(od + 4 * kPanel, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(od + 5 * kPanel, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(od + 6 * kPanel, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(od + 7 * kPanel, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (int64_t c = 0; c < 8; ++c)
      for (int64_t d = d8; d < dk; ++d) o[d * kPanel + c] = kr[c * ldk + d];
  }
}

// V's head columns in panels of 16 (the last 8 wide when dv % 16 == 8):
// panel d0 at vp + d0 * skv, [skv][width].
OPENACL_AVX2_FMA void pack_v(const float* v, int64_t ldv, int64_t skv, int64_t dv, float* vp) {
  for (int64_t d0 = 0; d0 < dv; d0 += kPanel) {
    const int64_t w = std::min(kPanel, dv - d0);
    float* o = vp + d0 * skv;
    for (int64_t j = 0; j < skv; ++j, o += w)
      for (int64_t c = 0; c < w; c += 8) _mm256_storeu_ps(o + c, _mm256_loadu_ps(v + j * ldv + d0 + c));
  }
}

// s[MR rows lds apart][16] = scale * Q[MR rows ldq apart][dk] x panel[dk][16].
template <int MR>
OPENACL_AVX2_FMA void score_tile(const float* q, int64_t ldq, const float* panel, int64_t dk, float scale, float* s,
                                 int64_t lds) {
  __m256 acc[MR][2];
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t d = 0; d < dk; ++d) {
    const __m256 b0 = _mm256_loadu_ps(panel + d * kPanel), b1 = _mm256_loadu_ps(panel + d * kPanel + 8);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(q + r * ldq + d);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  const __m256 sc = _mm256_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_ps(s + r * lds, _mm256_mul_ps(acc[r][0], sc));
    _mm256_storeu_ps(s + r * lds + 8, _mm256_mul_ps(acc[r][1], sc));
  }
}

// y[MR rows ldy apart][8 NV] = inv[r] * P[MR rows ldp apart][n] x V[n rows ldv apart][8 NV].
template <int MR, int NV>
OPENACL_AVX2_FMA void pv_tile(const float* p, int64_t ldp, const float* v, int64_t ldv, int64_t n, const float* inv,
                              float* y, int64_t ldy) {
  __m256 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t j = 0; j < n; ++j) {
    __m256 b[NV];
    for (int c = 0; c < NV; ++c) b[c] = _mm256_loadu_ps(v + j * ldv + 8 * c);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(p + r * ldp + j);
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm256_fmadd_ps(av, b[c], acc[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const __m256 iv = _mm256_set1_ps(inv[r]);
    for (int c = 0; c < NV; ++c) _mm256_storeu_ps(y + r * ldy + 8 * c, _mm256_mul_ps(acc[r][c], iv));
  }
}

using ScoreTile = void (*)(const float*, int64_t, const float*, int64_t, float, float*, int64_t);
using PvTile = void (*)(const float*, int64_t, const float*, int64_t, int64_t, const float*, float*, int64_t);
constexpr ScoreTile kScore[kMr + 1] = {nullptr,       score_tile<1>, score_tile<2>, score_tile<3>,
                                       score_tile<4>, score_tile<5>, score_tile<6>};
constexpr PvTile kPv[2][kMr + 1] = {
    {nullptr, pv_tile<1, 1>, pv_tile<2, 1>, pv_tile<3, 1>, pv_tile<4, 1>, pv_tile<5, 1>, pv_tile<6, 1>},
    {nullptr, pv_tile<1, 2>, pv_tile<2, 2>, pv_tile<3, 2>, pv_tile<4, 2>, pv_tile<5, 2>, pv_tile<6, 2>}};

// s[0, 8V) = e^(s - shift) for s <= shift, 0 below -87 (so -inf gives 0),
// NaN kept; their sum added to *sum.
template <int V>
OPENACL_AVX2_FMA inline __attribute__((always_inline)) void exp_shifted(float* s, __m256 shift, __m256* sum) {
  __m256 z[V], e[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) e[v] = z[v] = _mm256_sub_ps(_mm256_loadu_ps(s + 8 * v), shift);
  exp_nonpositive<V>(e);
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    __m256 x = _mm256_andnot_ps(_mm256_cmp_ps(z[v], _mm256_set1_ps(-87.f), _CMP_LT_OQ), e[v]);
    x = _mm256_blendv_ps(x, z[v], _mm256_cmp_ps(z[v], z[v], _CMP_UNORD_Q));
    _mm256_storeu_ps(s + 8 * v, x);
    *sum = _mm256_add_ps(*sum, x);
  }
}

// One score row s[0, n) (s holds at least n rounded up to 8 floats): adds the
// mask row m (may be null), replaces s by exp(s - max) and returns 1 / sum,
// or 0 for a row masked everywhere (then s is all 0). NaN is ignored by the
// max and comes out of the exp, so a NaN score gives a NaN row.
OPENACL_AVX2_FMA float softmax_row(float* s, const float* m, int64_t n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  if (m) {
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, _mm256_add_ps(_mm256_loadu_ps(s + j), _mm256_loadu_ps(m + j)));
    for (; j < n; ++j) s[j] += m[j];
  }
  const int64_t n8 = (n + 7) / 8 * 8;
  for (j = n; j < n8; ++j) s[j] = ninf;  // the last vector's keys past n
  __m256 mv = _mm256_set1_ps(ninf);
  for (j = 0; j < n8; j += 8) mv = _mm256_max_ps(_mm256_loadu_ps(s + j), mv);  // max(x, mv): a NaN x is skipped
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(mv), _mm256_extractf128_ps(mv, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  const float mx = _mm_cvtss_f32(h);
  if (mx == ninf) {  // masked everywhere: zeros; NaN scores (the max skipped them): NaN
    const bool nan = has_nan(s, n);
    std::fill(s, s + n8, nan ? std::numeric_limits<float>::quiet_NaN() : 0.f);
    return nan ? 1.f : 0.f;
  }
  const __m256 shift = _mm256_set1_ps(mx);
  __m256 sum = _mm256_setzero_ps();
  for (j = 0; j + 32 <= n8; j += 32) exp_shifted<4>(s + j, shift, &sum);
  for (; j < n8; j += 8) exp_shifted<1>(s + j, shift, &sum);
  __m128 t = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  t = _mm_add_ps(t, _mm_movehl_ps(t, t));
  t = _mm_add_ss(t, _mm_shuffle_ps(t, t, 1));
  return 1.f / _mm_cvtss_f32(t);
}

// Query rows per block of the 16-lane tiles (tiles16::head_rows): up to
// kRows, fewer where the keys are many, so that a block's scores (rows of
// lds floats) stay within 256 KiB, in L2.
int64_t block_rows(int64_t lds) {
  constexpr int64_t kBlockScoreBytes = 256 << 10;
  return std::clamp<int64_t>(kBlockScoreBytes / (lds * int64_t{sizeof(float)}) / kMr * kMr, kMr, kRows);
}

// Scratch of one task: packed K^T and V, the scores of a block of
// block_rows() query rows (the AVX2 tiles use one row tile's).
struct Scratch {
  float *kt, *v, *s;
  int64_t lds;  // score row stride: skv rounded up to 16

  static int64_t stride(const FastAttention& a) { return (a.skv + kPanel - 1) / kPanel * kPanel; }
  static size_t floats(const FastAttention& a) {
    return static_cast<size_t>(stride(a) * a.dk + a.skv * a.dv + block_rows(stride(a)) * stride(a));
  }
  Scratch(const FastAttention& a, float* base) : lds(stride(a)) {
    kt = base, v = kt + lds * a.dk, s = v + a.skv * a.dv;
  }
};

// Query rows [r0, r1) of head h in batch entry b, one tile of <= 6 rows at a
// time: its scores against every key, their softmax, its rows of Y. K and V
// are copied first: their rows lie H * D floats apart, and at 768 floats 128
// such rows fall in 4 of the L1's 64 sets.
OPENACL_AVX2_FMA void head_rows(const FastAttention& a, int64_t b, int64_t h, int64_t r0, int64_t r1,
                                const Scratch& w) {
  const int64_t kh = h / a.group, panels = (a.skv + kPanel - 1) / kPanel, lds = w.lds;
  pack_kt(a.k + b * a.kv.sb + kh * a.kv.sh, a.kv.ss, a.skv, a.dk, w.kt);
  pack_v(a.v + b * a.vv.sb + kh * a.vv.sh, a.vv.ss, a.skv, a.dv, w.v);
  float inv[kMr];
  for (int64_t i0 = r0; i0 < r1; i0 += kMr) {
    const int64_t m = std::min<int64_t>(kMr, r1 - i0);
    const float* qp = a.q + b * a.qv.sb + h * a.qv.sh + i0 * a.qv.ss;
    for (int64_t p = 0; p < panels; ++p)
      kScore[m](qp, a.qv.ss, w.kt + p * a.dk * kPanel, a.dk, a.scale, w.s + p * kPanel, lds);
    for (int64_t r = 0; r < m; ++r)
      inv[r] =
          softmax_row(w.s + r * lds, a.mask ? a.mask + b * a.ms[0] + h * a.ms[1] + (i0 + r) * a.ms[2] : nullptr, a.skv);
    float* yp = a.y + b * a.yv.sb + h * a.yv.sh + i0 * a.yv.ss;
    for (int64_t d0 = 0; d0 < a.dv; d0 += kPanel) {
      const int64_t width = std::min(kPanel, a.dv - d0);
      kPv[width == kPanel ? 1 : 0][m](w.s, lds, w.v + d0 * a.skv, width, a.skv, inv, yp + d0, a.yv.ss);
    }
  }
}

// OPENACL_ATTENTION_TILES=0 sends every head to oneDNN's sgemm.
bool usable(const FastAttention& a) {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_ATTENTION_TILES");
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !__builtin_cpu_supports("avx512f") &&
           !(e && std::string(e) == "0");
  }();
  return on && a.dv % 8 == 0 && a.dk > 0;
}

#undef OPENACL_AVX2_FMA

}  // namespace tiles

#if OPENACL_GELU512
// The same on AVX-512F, 16 lanes, where oneDNN's sgemm would take the
// products otherwise: K^T and V packed as for the AVX2 tiles (16-key and
// 16-column panels), a tile of <= 6 query rows against up to four panels
// at once (24 sums of 32 registers), the softmax and exp on 16 lanes.
// BERT-base's heads (128 x 128 x 64, 12 a layer) on a Zen 5, one thread:
// 0.41-0.43 ms per layer with two sgemm per 64 rows, 0.32 with these.
namespace tiles16 {

#define OPENACL_AVX512F __attribute__((target("avx512f")))

using tiles::kMr;
using tiles::kPanel;

// s[MR rows lds apart][16 NP] = scale * Q[MR rows ldq apart][dk] x panels
// [NP][dk][16] (consecutive).
template <int MR, int NP>
OPENACL_AVX512F void score_tile(const float* q, int64_t ldq, const float* panel, int64_t dk, float scale, float* s,
                                int64_t lds) {
  __m512 acc[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t d = 0; d < dk; ++d) {
    __m512 b[NP];
#pragma GCC unroll 4
    for (int c = 0; c < NP; ++c) b[c] = _mm512_loadu_ps(panel + (c * dk + d) * kPanel);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(q[r * ldq + d]);
#pragma GCC unroll 4
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_fmadd_ps(av, b[c], acc[r][c]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NP; ++c) _mm512_storeu_ps(s + r * lds + 16 * c, _mm512_mul_ps(acc[r][c], sc));
}

// y[MR rows ldy apart][16 NV] = inv[r] * P[MR rows ldp apart][n] x V's
// panels [NV][n][16] (panel c at v + 16 c * n).
template <int MR, int NV>
OPENACL_AVX512F void pv_tile(const float* p, int64_t ldp, const float* v, int64_t n, const float* inv, float* y,
                             int64_t ldy) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; ++j) {
    __m512 b[NV];
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) b[c] = _mm512_loadu_ps(v + (c * n + j) * 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(p[r * ldp + j]);
#pragma GCC unroll 4
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_fmadd_ps(av, b[c], acc[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const __m512 iv = _mm512_set1_ps(inv[r]);
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) _mm512_storeu_ps(y + r * ldy + 16 * c, _mm512_mul_ps(acc[r][c], iv));
  }
}

using ScoreTile = void (*)(const float*, int64_t, const float*, int64_t, float, float*, int64_t);
using PvTile = void (*)(const float*, int64_t, const float*, int64_t, const float*, float*, int64_t);
template <int MR>
constexpr std::array<ScoreTile, 5> score_row() {
  return {nullptr, score_tile<MR, 1>, score_tile<MR, 2>, score_tile<MR, 3>, score_tile<MR, 4>};
}
template <int MR>
constexpr std::array<PvTile, 5> pv_row() {
  return {nullptr, pv_tile<MR, 1>, pv_tile<MR, 2>, pv_tile<MR, 3>, pv_tile<MR, 4>};
}
// kScore[rows][panels], kPv[rows][panels].
constexpr std::array<std::array<ScoreTile, 5>, kMr + 1> kScore = {
    {{}, score_row<1>(), score_row<2>(), score_row<3>(), score_row<4>(), score_row<5>(), score_row<6>()}};
constexpr std::array<std::array<PvTile, 5>, kMr + 1> kPv = {
    {{}, pv_row<1>(), pv_row<2>(), pv_row<3>(), pv_row<4>(), pv_row<5>(), pv_row<6>()}};

// s[0, 16V) = e^(s - shift) for s <= shift, 0 below -87 (so -inf gives 0),
// NaN kept; their sum added to *sum.
template <int V>
OPENACL_AVX512F inline __attribute__((always_inline)) void exp_shifted(float* s, __m512 shift, __m512* sum) {
  __m512 z[V], e[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) e[v] = z[v] = _mm512_sub_ps(_mm512_loadu_ps(s + 16 * v), shift);
  exp_nonpositive16<V>(e);
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    __m512 x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(z[v], _mm512_set1_ps(-87.f), _CMP_GE_OQ), e[v]);
    x = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(z[v], z[v], _CMP_UNORD_Q), z[v]);
    _mm512_storeu_ps(s + 16 * v, x);
    *sum = _mm512_add_ps(*sum, x);
  }
}

// tiles::softmax_row on 16 lanes: s holds at least n rounded up to 16 floats.
OPENACL_AVX512F float softmax_row(float* s, const float* m, int64_t n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  if (m) {
    for (; j + 16 <= n; j += 16)
      _mm512_storeu_ps(s + j, _mm512_add_ps(_mm512_loadu_ps(s + j), _mm512_loadu_ps(m + j)));
    for (; j < n; ++j) s[j] += m[j];
  }
  const int64_t n16 = (n + 15) / 16 * 16;
  for (j = n; j < n16; ++j) s[j] = ninf;  // the last vector's keys past n
  __m512 mv = _mm512_set1_ps(ninf);
  for (j = 0; j < n16; j += 16) mv = _mm512_max_ps(_mm512_loadu_ps(s + j), mv);  // max(x, mv): a NaN x is skipped
  const float mx = _mm512_reduce_max_ps(mv);
  if (mx == ninf) {  // masked everywhere: zeros; NaN scores (the max skipped them): NaN
    const bool nan = has_nan(s, n);
    std::fill(s, s + n16, nan ? std::numeric_limits<float>::quiet_NaN() : 0.f);
    return nan ? 1.f : 0.f;
  }
  const __m512 shift = _mm512_set1_ps(mx);
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j + 64 <= n16; j += 64) exp_shifted<4>(s + j, shift, &sum);
  for (; j < n16; j += 16) exp_shifted<1>(s + j, shift, &sum);
  return 1.f / _mm512_reduce_add_ps(sum);
}

// tiles::head_rows with these tiles, a block of up to kRows query rows at a
// time: the block's scores group of K^T by group (four panels, 16 KiB at
// dk = 64, in L1 while every row tile of the block reads it), their
// softmax, then Y row tile by row tile (V, 32 KiB at 128 x 64, in L1 across
// them). Tile by tile through both products instead, each 6-row tile read
// all of K^T and V from L2. BERT-base's attention on an Intel Xeon: at batch
// 8 56.2-58.4 -> 53.4-54.9 ms on one thread, 27.7-30.1 -> 26.1-28.3 on two;
// at batch 1 (6.3-6.6 ms) no change. With many keys the block has fewer
// rows (tiles::block_rows).
OPENACL_AVX512F void head_rows(const FastAttention& a, int64_t b, int64_t h, int64_t r0, int64_t r1,
                               const tiles::Scratch& w) {
  const int64_t kh = h / a.group, panels = (a.skv + kPanel - 1) / kPanel, lds = w.lds;
  const int64_t most = tiles::block_rows(lds);
  tiles::pack_kt(a.k + b * a.kv.sb + kh * a.kv.sh, a.kv.ss, a.skv, a.dk, w.kt);
  tiles::pack_v(a.v + b * a.vv.sb + kh * a.vv.sh, a.vv.ss, a.skv, a.dv, w.v);
  float inv[kRows];
  for (int64_t b0 = r0; b0 < r1; b0 += most) {
    const int64_t rows = std::min(most, r1 - b0), nt = (rows + kMr - 1) / kMr;
    // Row tile t: rows [t * rows / nt, (t + 1) * rows / nt) of the block (sizes balanced).
    const auto first = [rows, nt](int64_t t) { return t * rows / nt; };
    const float* qb = a.q + b * a.qv.sb + h * a.qv.sh + b0 * a.qv.ss;
    for (int64_t p = 0; p < panels; p += 4) {
      const int64_t np = std::min<int64_t>(4, panels - p);
      for (int64_t t = 0; t < nt; ++t)
        kScore[first(t + 1) - first(t)][np](qb + first(t) * a.qv.ss, a.qv.ss, w.kt + p * a.dk * kPanel, a.dk,
                                            a.scale, w.s + first(t) * lds + p * kPanel, lds);
    }
    for (int64_t r = 0; r < rows; ++r)
      inv[r] = softmax_row(w.s + r * lds, a.mask ? a.mask + b * a.ms[0] + h * a.ms[1] + (b0 + r) * a.ms[2] : nullptr,
                           a.skv);
    float* yb = a.y + b * a.yv.sb + h * a.yv.sh + b0 * a.yv.ss;
    for (int64_t d0 = 0; d0 < a.dv; d0 += 4 * kPanel) {
      const int64_t nv = std::min<int64_t>(4, (a.dv - d0) / kPanel);
      for (int64_t t = 0; t < nt; ++t)
        kPv[first(t + 1) - first(t)][nv](w.s + first(t) * lds, lds, w.v + d0 * a.skv, a.skv, inv + first(t),
                                         yb + first(t) * a.yv.ss + d0, a.yv.ss);
    }
  }
}

// OPENACL_ATTENTION_TILES=0 sends every head to oneDNN's sgemm here too.
// (AVX2 and FMA as well: K^T and V are packed by the AVX2 tiles' code.)
bool usable(const FastAttention& a) {
  static const bool on = [] {
    const char* e = std::getenv("OPENACL_ATTENTION_TILES");
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           !(e && std::string(e) == "0");
  }();
  return on && a.dv % 16 == 0 && a.dk > 0;
}

#undef OPENACL_AVX512F

}  // namespace tiles16
#endif

using HeadRows = void (*)(const FastAttention&, int64_t, int64_t, int64_t, int64_t, const tiles::Scratch&);

void run_tiles(const FastAttention& a, HeadRows head_rows) {
  // Shares of each head's query rows: enough tasks to balance the threads,
  // each packing K^T once for all the blocks it runs.
  const int64_t threads = compute_threads();
  const int64_t heads = a.batch * a.hq, blocks = (a.sq + kRows - 1) / kRows;
  const int64_t shares = std::clamp<int64_t>((4 * threads + heads - 1) / heads, 1, blocks);
  parallel_for(heads * shares, 1, [&](int64_t t0, int64_t t1) {
    const tiles::Scratch w(a, static_cast<float*>(scratch(tiles::Scratch::floats(a) * sizeof(float))));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t head = t / shares, part = t % shares;
      const int64_t r0 = part * blocks / shares * kRows, r1 = std::min(a.sq, (part + 1) * blocks / shares * kRows);
      head_rows(a, head / a.hq, head % a.hq, r0, r1, w);
    }
  });
}
#endif

Status run_fast(const KernelContext& ctx, const FastAttention& a) {
#if OPENACL_GELU_AVX2
  if (tiles::usable(a)) {
    run_tiles(a, tiles::head_rows);
    return Status::Ok();
  }
#endif
#if OPENACL_GELU_AVX2 && OPENACL_GELU512
  if (tiles16::usable(a)) {
    run_tiles(a, tiles16::head_rows);
    return Status::Ok();
  }
#endif
  const int64_t blocks = (a.sq + kRows - 1) / kRows;
  std::atomic<bool> failed{false};
  parallel_for(a.batch * a.hq * blocks, 1, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> buf;
    if (buf.size() < static_cast<size_t>(kRows * a.skv)) buf.resize(static_cast<size_t>(kRows * a.skv));
    float* s = buf.data();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t blk = t % blocks, h = (t / blocks) % a.hq, b = t / (blocks * a.hq), kh = h / a.group;
      const int64_t i0 = blk * kRows, m = std::min(kRows, a.sq - i0);
      const float* qp = a.q + b * a.qv.sb + h * a.qv.sh + i0 * a.qv.ss;
      const float* kp = a.k + b * a.kv.sb + kh * a.kv.sh;
      const float* vp = a.v + b * a.vv.sb + kh * a.vv.sh;
      float* yp = a.y + b * a.yv.sb + h * a.yv.sh + i0 * a.yv.ss;
      bool ok = dnnl_sgemm('N', 'T', m, a.skv, a.dk, a.scale, qp, a.qv.ss, kp, a.kv.ss, 0.f, s, a.skv) == dnnl_success;
      for (int64_t r = 0; r < m && ok; ++r) {
        float* row = s + r * a.skv;
        const float* mrow = a.mask ? a.mask + b * a.ms[0] + h * a.ms[1] + (i0 + r) * a.ms[2] : nullptr;
        if (add_mask_max(row, mrow, a.skv) == -std::numeric_limits<float>::infinity())
          std::fill(row, row + a.skv, has_nan(row, a.skv) ? std::numeric_limits<float>::quiet_NaN() : 0.f);
        else
          softmax_row_f32(row, row, a.skv, false);
      }
      ok = ok && dnnl_sgemm('N', 'N', m, a.dv, a.skv, 1.f, s, a.skv, vp, a.vv.ss, 0.f, yp, a.yv.ss) == dnnl_success;
      if (!ok) failed = true;
    }
  });
  return failed ? ctx.fail("oneDNN sgemm failed") : Status::Ok();
}

template <class T>
Status attention_typed(KernelContext& ctx) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const C ninf = -std::numeric_limits<C>::infinity();
  const graph::AttributeMap& at = ctx.attrs();
  Part q, k, v;
  if (at.get_int(graph::kPackedQkvAttr, 0) != 0) {
    if (!packed_part(ctx.input(0), 0, &q) || !packed_part(ctx.input(0), 1, &k) || !packed_part(ctx.input(0), 2, &v))
      return ctx.fail("a packed QKV input must be 3-D with a last dim that divides by 3");
  } else if (!part_of(ctx.input(0), &q) || !part_of(ctx.input(1), &k) || !part_of(ctx.input(2), &v)) {
    return ctx.fail("Q, K, V must all be 3-D or all 4-D");
  }
  const int64_t r = q.rank;
  if (k.rank != r || v.rank != r) return ctx.fail("Q, K, V must all be 3-D or all 4-D");
  const int64_t batch = q.dims[0];
  int64_t hq, hkv, sq, skv, dk, dv, dq;
  if (r == 4) {
    hq = q.dims[1], sq = q.dims[2], dq = q.dims[3];
    hkv = k.dims[1], skv = k.dims[2], dk = k.dims[3], dv = v.dims[3];
    if (v.dims[1] != hkv || v.dims[2] != skv) return ctx.fail("K and V disagree on heads or length");
  } else {
    hq = at.get_int("q_num_heads", 0), hkv = at.get_int("kv_num_heads", 0);
    if (hq < 1 || hkv < 1) return ctx.fail("3-D inputs need q_num_heads and kv_num_heads");
    if (q.dims[2] % hq || k.dims[2] % hkv || v.dims[2] % hkv) return ctx.fail("hidden sizes are not divisible by the head counts");
    sq = q.dims[1], dq = q.dims[2] / hq, skv = k.dims[1], dk = k.dims[2] / hkv, dv = v.dims[2] / hkv;
    if (v.dims[1] != skv) return ctx.fail("K and V disagree on length");
  }
  if (k.dims[0] != batch || v.dims[0] != batch) return ctx.fail("Q, K, V disagree on batch");
  for (size_t i : {1, 2, 4, 5})
    if (ctx.has_input(i) && ctx.input(i).dtype != ctx.input(0).dtype)
      return ctx.fail("input %zu must have Q's dtype", i);
  if (dq != dk) return ctx.fail("Q head size %lld differs from K's %lld", (long long)dq, (long long)dk);
  if (hkv == 0 || hq % hkv) return ctx.fail("q heads must be a multiple of kv heads");
  const bool has_past = ctx.has_input(4) && ctx.has_input(5);
  if (ctx.has_input(4) != ctx.has_input(5)) return ctx.fail("past_key and past_value come together");
  int64_t past = 0;
  if (has_past) {
    const Tensor& pk = ctx.input(4);
    const Tensor& pv = ctx.input(5);
    if (pk.rank() != 4 || pv.rank() != 4 || pk.dims[0] != batch || pk.dims[1] != hkv || pk.dims[3] != dk ||
        pv.dims != std::vector<int64_t>{batch, hkv, pk.dims[2], dv})
      return ctx.fail("past_key/past_value must be [batch, kv_heads, past, head_size]");
    past = pk.dims[2];
  }
  const int64_t total = past + skv;
  // K, V with the cache in front: [B, Hkv, total, D], in compute type.
  std::vector<C> kall, vall;  // sized by gather (the fast path needs neither)
  auto gather = [&](const Part& src, const Tensor* pst, int64_t d, std::vector<C>& dst, Tensor* present) {
    const HeadView sv = view_of(src, d);
    dst.resize(static_cast<size_t>(batch * hkv * total * d));
    const T* s = src.as<T>();
    T* pr = present ? present->as<T>() : nullptr;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < hkv; ++h)
        for (int64_t t = 0; t < total; ++t) {
          const int64_t o = ((b * hkv + h) * total + t) * d;
          const T* row = t < past ? pst->as<T>() + ((b * hkv + h) * past + t) * d
                                  : s + b * sv.sb + h * sv.sh + (t - past) * sv.ss;
          for (int64_t j = 0; j < d; ++j) dst[o + j] = static_cast<C>(load(row[j]));
          if (pr) std::copy(row, row + d, pr + o);
        }
  };
  Tensor* present_k = ctx.num_outputs() > 1 && ctx.has_output(1) ? &ctx.output(1) : nullptr;
  Tensor* present_v = ctx.num_outputs() > 2 && ctx.has_output(2) ? &ctx.output(2) : nullptr;

  // Mask: right-aligned broadcast to [B, Hq, Sq, Tm]; keys past Tm are masked.
  const Tensor* mask = ctx.has_input(3) && ctx.input(3).data ? &ctx.input(3) : nullptr;
  int64_t mstride[4] = {0, 0, 0, 0};
  int64_t mlen = total;
  if (mask) {
    if (mask->rank() < 1 || mask->rank() > 4) return ctx.fail("attn_mask must have rank 1..4");
    const int64_t full[4] = {batch, hq, sq, mask->dims.back()};
    const int64_t off = 4 - mask->rank();
    int64_t own = 1;  // row-major stride of mask dim i
    for (int64_t i = mask->rank() - 1; i >= 0; --i) {
      const int64_t md = mask->dims[i], fd = full[off + i];
      if (md != 1 && md != fd) return ctx.fail("attn_mask does not broadcast to [batch, heads, q_seq, kv_seq]");
      mstride[off + i] = md == 1 ? 0 : own;
      own *= md;
    }
    mlen = mask->dims.back();
    if (mlen > total) return ctx.fail("attn_mask's last dim %lld exceeds the key length %lld", (long long)mlen, (long long)total);
    if (mask->dtype != DType::kBool && mask->dtype != DType::kFloat32 && mask->dtype != DType::kFloat16 &&
        mask->dtype != DType::kBFloat16 && mask->dtype != DType::kFloat64)
      return ctx.fail("attn_mask must be bool or float");
  }
  const Tensor* nonpad = ctx.num_inputs() > 6 && ctx.has_input(6) ? &ctx.input(6) : nullptr;
  std::vector<int64_t> valid;  // keys per batch entry, with nonpad_kv_seqlen only
  if (nonpad) {
    valid.assign(static_cast<size_t>(batch), total);
    if (has_past) return ctx.fail("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    if (nonpad->elements() != batch) return ctx.fail("nonpad_kv_seqlen must have batch entries");
    if (nonpad->dtype != DType::kInt64 && nonpad->dtype != DType::kInt32) return ctx.fail("nonpad_kv_seqlen must be int64");
    for (int64_t b = 0; b < batch; ++b)
      valid[b] = nonpad->dtype == DType::kInt64 ? nonpad->as<int64_t>()[b] : nonpad->as<int32_t>()[b];
  }
  const bool causal = at.get_int("is_causal", 0) != 0;
  // Keys longer than a short string holds, built once (this runs per execute).
  static const std::string kLeft = "left_window_size", kRight = "right_window_size",
                           kMode = "qk_matmul_output_mode";
  const int64_t left = at.get_int(kLeft, -1), right = at.get_int(kRight, -1);
  const bool window = left >= 0 || right >= 0;
  const float softcap = at.get_float("softcap", 0.f);
  const int64_t mode = at.get_int(kMode, 0);
  float scale = at.get_float("scale", 0.f);
  if (!at.has("scale")) scale = 1.f / std::sqrt(static_cast<float>(dq));
  if constexpr (std::is_same_v<T, float>) {
    const bool extra_outputs = present_k || present_v || (ctx.num_outputs() > 3 && ctx.has_output(3));
    if (!has_past && !nonpad && !causal && !window && softcap == 0.f && !extra_outputs && total > 0 &&
        (!mask || (mask->dtype == DType::kFloat32 && mlen == total))) {
      FastAttention a{q.as<float>(), k.as<float>(), v.as<float>(), mask ? mask->as<float>() : nullptr,
                      ctx.output(0).as<float>(), view_of(q, dq), view_of(k, dk), view_of(v, dv),
                      r == 4 ? HeadView{hq * sq * dv, sq * dv, dv} : HeadView{sq * hq * dv, dv, hq * dv},
                      {mstride[0], mstride[1], mstride[2]}, batch, hq, hq / hkv, sq, skv, dk, dv, scale};
      return run_fast(ctx, a);
    }
  }
  gather(k, has_past ? &ctx.input(4) : nullptr, dk, kall, present_k);
  gather(v, has_past ? &ctx.input(5) : nullptr, dv, vall, present_v);
  Tensor& y = ctx.output(0);
  Tensor* qk_out = ctx.num_outputs() > 3 && ctx.has_output(3) ? &ctx.output(3) : nullptr;
  const HeadView qv = view_of(q, dq);
  const HeadView yv = r == 4 ? HeadView{hq * sq * dv, sq * dv, dv} : HeadView{sq * hq * dv, dv, hq * dv};
  const int64_t group = hq / hkv;
  const T* qd = q.as<T>();
  T* yd = y.as<T>();
  const DType mdt = mask ? mask->dtype : DType::kUndefined;
  // 16-bit inputs: round where the spec's reference rounds (it computes in the
  // input type), so bfloat16 results agree to the last bit more often.
  constexpr bool k16 = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  auto rnd = [](C x) -> C {
    if constexpr (k16) return static_cast<C>(load(store<T>(x)));
    else return x;
  };
  const C sqrt_scale = rnd(static_cast<C>(std::sqrt(static_cast<double>(scale))));
  if constexpr (k16) {
    for (C& e : kall) e = rnd(e * sqrt_scale);
  }

  parallel_for(batch * hq * sq, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, total * (dq + dv))), [&](int64_t s0, int64_t s1) {
    std::vector<C> bias(static_cast<size_t>(total)), score(static_cast<size_t>(total)), qrow(static_cast<size_t>(dq)), acc(static_cast<size_t>(dv));
    for (int64_t row = s0; row < s1; ++row) {
      const int64_t i = row % sq, h = (row / sq) % hq, b = row / (sq * hq);
      const int64_t kh = h / group;
      const int64_t offset = nonpad && !has_past ? valid[b] - sq : past;
      // Bias for this query row.
      bool any_open = false;
      for (int64_t j = 0; j < total; ++j) {
        C bj = 0;
        if (mask) {
          if (j >= mlen) {
            bj = ninf;
          } else {
            const int64_t mi = b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3];
            if (mdt == DType::kBool) bj = static_cast<const uint8_t*>(mask->data)[mi] ? C(0) : ninf;
            else if (mdt == DType::kFloat32) bj = static_cast<C>(as_float<float>(mask->data, mi));
            else if (mdt == DType::kFloat16) bj = static_cast<C>(as_float<Half>(mask->data, mi));
            else if (mdt == DType::kBFloat16) bj = static_cast<C>(as_float<BFloat16>(mask->data, mi));
            else bj = static_cast<C>(static_cast<const double*>(mask->data)[mi]);
          }
        }
        if (causal && j > i + offset) bj = ninf;
        if (window) {
          const int64_t diff = i + offset - j;
          if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) bj = ninf;
        }
        if (nonpad && j >= valid[b]) bj = ninf;
        bias[j] = bj;
        any_open = any_open || bj != ninf;
      }
      const T* qp = qd + b * qv.sb + h * qv.sh + i * qv.ss;
      for (int64_t d = 0; d < dq; ++d) qrow[d] = static_cast<C>(load(qp[d]));
      if constexpr (k16) {
        for (int64_t d = 0; d < dq; ++d) qrow[d] = rnd(qrow[d] * sqrt_scale);
      }
      const C* kb = kall.data() + (b * hkv + kh) * total * dk;
      C mx = ninf;
      const bool raw_needed = qk_out && mode < 2;
      for (int64_t j = 0; j < total; ++j) {
        if (bias[j] == ninf && !raw_needed) {  // masked key: its product cannot matter
          if (qk_out && mode == 2) qk_out->as<T>()[row * total + j] = store<T>(ninf);
          score[j] = ninf;
          continue;
        }
        const C* kr = kb + j * dk;
        C dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int64_t d = 0; d < dq; ++d) dot += qrow[d] * kr[d];
        C sc = k16 ? rnd(dot) : dot * static_cast<C>(scale);
        if (softcap > 0) sc = rnd(static_cast<C>(softcap) * rnd(std::tanh(rnd(sc / static_cast<C>(softcap)))));
        if (qk_out && mode < 2) qk_out->as<T>()[row * total + j] = store<T>(sc);
        sc = rnd(sc + bias[j]);
        if (qk_out && mode == 2) qk_out->as<T>()[row * total + j] = store<T>(sc);
        score[j] = sc;
        mx = std::max(mx, sc);
      }
      C sum = 0;
      const C shift = mx == ninf ? C(0) : mx;
      for (int64_t j = 0; j < total; ++j) {
        score[j] = rnd(std::exp(rnd(score[j] - shift)));
        // numpy sums float16 in float, but ml_dtypes' bfloat16 step by step.
        sum = std::is_same_v<T, BFloat16> ? rnd(sum + score[j]) : sum + score[j];
      }
      sum = rnd(sum);
      if (!any_open || sum == 0) std::fill(score.begin(), score.end(), C(0));
      else if constexpr (k16) for (int64_t j = 0; j < total; ++j) score[j] = rnd(score[j] / sum);
      else for (int64_t j = 0; j < total; ++j) score[j] /= sum;
      if (qk_out && mode == 3)
        for (int64_t j = 0; j < total; ++j) qk_out->as<T>()[row * total + j] = store<T>(score[j]);
      std::fill(acc.begin(), acc.end(), C(0));
      const C* vb = vall.data() + (b * hkv + kh) * total * dv;
      for (int64_t j = 0; j < total; ++j) {
        const C p = score[j];
        if (p == 0) continue;
        const C* vr = vb + j * dv;
#pragma omp simd
        for (int64_t d = 0; d < dv; ++d) acc[d] += p * vr[d];
      }
      T* yp = yd + b * yv.sb + h * yv.sh + i * yv.ss;
      for (int64_t d = 0; d < dv; ++d) yp[d] = store<T>(acc[d]);
    }
  });
  return Status::Ok();
}

Status attention(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = attention_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("Q must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(Attention, "cpu").types(float_types()).run(attention);

}  // namespace
}  // namespace openacl::kernels::cpu
