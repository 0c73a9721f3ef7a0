// Winograd F(4x4, 3x3): see conv_winograd.h. The matrices are the standard
// ones for interpolation points 0, 1, -1, 2, -2 and infinity:
//   B^T (input, 6x6), G (weights, 6x3), A^T (output, 4x6).
// Per tile: V = B^T d B (d the 6x6 input patch), U = G g G^T (g the 3x3
// filter), M = sum over input channels of U .* V, Y = A^T M A (4x4 outputs).
#include "kernels/cpu/conv_winograd.h"

#include "kernels/cpu/blocked_layout.h"

#if OPENACL_HAVE_DNNL

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/matmul_common.h"
#include "kernels/cpu/simd8.h"

namespace openacl::kernels::cpu {
namespace {

// Eight floats (simd8.h): the transforms work on 8 channels at once.
using v8 = v8f;


// One 6-point B^T transform: out[k] = sum_r BT[k][r] * d[r], d read with stride.
OPENACL_SIMD_INLINE void bt6(const v8* d, int stride, v8* out, int ostride) {
  const v8 d0 = d[0], d1 = d[stride], d2 = d[2 * stride], d3 = d[3 * stride], d4 = d[4 * stride],
           d5 = d[5 * stride];
  out[0] = 4.f * d0 - 5.f * d2 + d4;
  out[ostride] = -4.f * (d1 + d2) + d3 + d4;
  out[2 * ostride] = 4.f * (d1 - d2) - d3 + d4;
  out[3 * ostride] = 2.f * (d3 - d1) - d2 + d4;
  out[4 * ostride] = 2.f * (d1 - d3) - d2 + d4;
  out[5 * ostride] = 4.f * d1 - 5.f * d3 + d5;
}

// One 6 -> 4 A^T transform.
OPENACL_SIMD_INLINE void at6(const v8* m, int stride, v8* out, int ostride) {
  const v8 m0 = m[0], m1 = m[stride], m2 = m[2 * stride], m3 = m[3 * stride], m4 = m[4 * stride],
           m5 = m[5 * stride];
  const v8 s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
  out[0] = m0 + s12 + s34;
  out[ostride] = d12 + 2.f * d34;
  out[2 * ostride] = s12 + 4.f * s34;
  out[3 * ostride] = d12 + 8.f * d34 + m5;
}

// Channels [c0, c0 + 8) (c0 a multiple of 8) in blocks of b channels: the
// block's index times `stride` plus the offset in the block. b is 8 or 16
// (shifts, no division), or any other b for one block holding them all.
OPENACL_SIMD_INLINE int64_t block_offset(int64_t b, int64_t c0, int64_t stride) {
  if (b == 16) return (c0 >> 4) * stride + (c0 & 15);
  if (b == 8) return (c0 >> 3) * stride;
  return c0;
}

// Where channels [c0, c0 + 8) of row t lie in one of the 36 planes of V or
// M, kept in blocks of `vb` channels ([c / vb][T][vb]): vb 8 or 16 for our
// products (Conv1x1), the whole row (Cp or Mq) for oneDNN's matmul.
OPENACL_SIMD_INLINE int64_t plane_offset(int64_t T, int64_t vb, int64_t t, int64_t c0) {
  return t * vb + block_offset(vb, c0, T * vb);
}

struct Geo {
  int64_t T, tw, th, Cb, Cp, vb;  // tiles, tile columns and rows, 8-channel blocks, V's row length and block
  // The source: 8 channels of pixel (ih, iw) of image n, channel block cb at
  // src + (((n * Cs + cb * 8 / sb) * H + ih) * W + iw) * sb + cb * 8 % sb;
  // zeros outside [0, H) x [0, W). Tile (ti, tj) starts at row 4 ti - pt,
  // column 4 tj - pl.
  const float* src;
  int64_t sb, Cs, H, W, pt, pl;
};

// V (36 planes, plane_offset) for tiles [t0, t1) and all channel blocks.
OPENACL_AVX2_CLONES
void input_tiles(const Geo& g, float* v, int64_t t0, int64_t t1) {
  v8 d[36], tmp[36], out[36];
  const v8 zero = {};
  const int64_t plane = g.T * g.Cp, image = g.Cs * g.H * g.W * g.sb;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.th * g.tw), ti = (t / g.tw) % g.th, tj = t % g.tw;
    const int64_t ih0 = 4 * ti - g.pt, iw0 = 4 * tj - g.pl;
    const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + 6 <= g.H && iw0 + 6 <= g.W;
    for (int64_t cb = 0; cb < g.Cb; ++cb) {
      const int64_t c0 = cb * 8;  // sb is 8 or 16
      const float* plane0 = g.src + n * image + block_offset(g.sb, c0, g.H * g.W * g.sb);
      if (inside) {
        const float* base = plane0 + (ih0 * g.W + iw0) * g.sb;
        for (int r = 0; r < 6; ++r)
          for (int c = 0; c < 6; ++c) d[r * 6 + c] = ld8(base + (r * g.W + c) * g.sb);
      } else {  // a border tile: the padding's zeros
        for (int r = 0; r < 6; ++r)
          for (int c = 0; c < 6; ++c) {
            const int64_t ih = ih0 + r, iw = iw0 + c;
            d[r * 6 + c] = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W ? ld8(plane0 + (ih * g.W + iw) * g.sb) : zero;
          }
      }
      for (int c = 0; c < 6; ++c) bt6(d + c, 6, tmp + c, 6);    // columns: tmp = B^T d
      for (int k = 0; k < 6; ++k) bt6(tmp + k * 6, 1, out + k * 6, 1);  // rows: out = tmp B
      float* dst = v + plane_offset(g.T, g.vb, t, c0);
      for (int k = 0; k < 36; ++k) st8(dst + k * plane, out[k]);
    }
  }
}

struct OutGeo {
  int64_t T, tw, th, Mb, Mq, mb, M, OH, OW;  // Mq, mb: M's row length and block
  int block;  // 0 plain, else nChw{block}c
};

// Element (n, oc, oh, ow) of a plain Y.
OPENACL_SIMD_INLINE int64_t out_index(const OutGeo& g, int64_t n, int64_t oc, int64_t oh, int64_t ow) {
  return ((n * g.M + oc) * g.OH + oh) * g.OW + ow;
}

// Y for tiles [t0, t1): m (36 planes, plane_offset) -> y (+ bias, + residual, then act;
// relu: act is Relu). In a blocked Y the 8 channels of a block half are one
// vector at each pixel: stored (and the residual read) as such; a plain Y
// takes them lane by lane.
OPENACL_AVX2_CLONES
void output_tiles(const OutGeo& g, const float* m, const float* bias, float* y, const float* res, const Activation* act,
                  bool relu, int64_t t0, int64_t t1) {
  v8 a[36], tmp[24], o[16];
  const v8 zero = {};
  alignas(32) float lanes[16][8];
  const int64_t plane = g.T * g.Mq;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.th * g.tw), ti = (t / g.tw) % g.th, tj = t % g.tw;
    const int64_t rows = std::min<int64_t>(4, g.OH - 4 * ti), cols = std::min<int64_t>(4, g.OW - 4 * tj);
    for (int64_t ob = 0; ob < g.Mb; ++ob) {
      const float* src = m + plane_offset(g.T, g.mb, t, ob * 8);
      for (int k = 0; k < 36; ++k) a[k] = ld8(src + k * plane);
      for (int c = 0; c < 6; ++c) at6(a + c, 6, tmp + c, 6);       // tmp [4][6] = A^T a
      for (int i = 0; i < 4; ++i) at6(tmp + i * 6, 1, o + i * 4, 1);  // o [4][4] = tmp A
      const v8 b = ld8(bias + ob * 8);
      if (g.block != 0) {
        // Pixel (oh, ow) of this block half at y + at + (oh * OW + ow) * block.
        const int64_t at = n * g.M * g.OH * g.OW + block_offset(g.block, ob * 8, g.OH * g.OW * g.block);
        auto off = [&](int k) { return at + ((4 * ti + k / 4) * g.OW + 4 * tj + k % 4) * g.block; };
        for (int k = 0; k < 16; ++k) {
          if (k / 4 >= rows || k % 4 >= cols) continue;
          o[k] += b;
          if (res) o[k] += ld8(res + off(k));  // the residual first, then the activation (conv + r, then act)
          if (relu) o[k] = o[k] > zero ? o[k] : zero;
        }
        if (act && !relu) {
          for (int k = 0; k < 16; ++k) st8(lanes[k], o[k]);
          act->apply_range(&lanes[0][0], 0, 16 * 8);
          for (int k = 0; k < 16; ++k) o[k] = ld8(lanes[k]);
        }
        for (int k = 0; k < 16; ++k)
          if (k / 4 < rows && k % 4 < cols) st8(y + off(k), o[k]);
        continue;
      }
      for (int k = 0; k < 16; ++k) st8(lanes[k], o[k] + b);
      const int64_t lanes_here = std::min<int64_t>(8, g.M - ob * 8);
      if (res) {
        for (int64_t l = 0; l < lanes_here; ++l)
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) lanes[i * 4 + j][l] += res[out_index(g, n, ob * 8 + l, 4 * ti + i, 4 * tj + j)];
      }
      if (act) act->apply_range(&lanes[0][0], 0, 16 * 8);
      for (int64_t l = 0; l < lanes_here; ++l)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) y[out_index(g, n, ob * 8 + l, 4 * ti + i, 4 * tj + j)] = lanes[i * 4 + j][l];
    }
  }
}

// U[k][c][m] = (G g G^T)[k] for filter (m, c) of w [M, C, 3, 3], written to
// u [36][Cp][Mp] (its padding left as it is).
void transform_weights(const float* w, int64_t C, int64_t M, int64_t Cp, int64_t Mp, float* u) {
  static const double G[6][3] = {{1.0 / 4, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};
  // Input channels in parallel, output channels innermost: the writes for
  // one (k, c) run along m (load time: ResNet-50's 13 layers took 55 ms with
  // the loops the other way round).
  parallel_for(C, 4, [&](int64_t c0, int64_t c1) {
    // For one input channel c: f[t][m] (the 9 taps of every filter, m
    // contiguous), gg[i][l][m] = sum_j G[i][j] f[3j+l][m], then the 36 rows
    // U[i*6+k][c][m] = sum_l gg[i][l][m] G[k][l]: every loop runs along m and
    // vectorises. float is enough here (G's entries are exact to 1e-8).
    std::vector<float> f(static_cast<size_t>(9 * M)), gg(static_cast<size_t>(18 * M));
    float Gf[6][3];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 3; ++j) Gf[i][j] = static_cast<float>(G[i][j]);
    for (int64_t c = c0; c < c1; ++c) {
      for (int64_t m = 0; m < M; ++m)
        for (int t = 0; t < 9; ++t) f[t * M + m] = w[(m * C + c) * 9 + t];
      for (int i = 0; i < 6; ++i)
        for (int l = 0; l < 3; ++l) {
          float* g = gg.data() + (i * 3 + l) * M;
          const float* f0 = f.data() + l * M;
          const float* f1 = f.data() + (3 + l) * M;
          const float* f2 = f.data() + (6 + l) * M;
          for (int64_t m = 0; m < M; ++m) g[m] = Gf[i][0] * f0[m] + Gf[i][1] * f1[m] + Gf[i][2] * f2[m];
        }
      for (int i = 0; i < 6; ++i)
        for (int k = 0; k < 6; ++k) {
          float* out = u + ((i * 6 + k) * Cp + c) * Mp;
          const float* g0 = gg.data() + (i * 3) * M;
          const float* g1 = g0 + M;
          const float* g2 = g1 + M;
          for (int64_t m = 0; m < M; ++m) out[m] = g0[m] * Gf[k][0] + g1[m] * Gf[k][1] + g2[m] * Gf[k][2];
        }
    }
  });
}

inline int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }
using dnnl_util::align64;

// The geometry F(4x4, 3x3) computes: 2-D, one group, 3x3, stride 1, no
// dilation, top/left pads of at most 2 (the padded input plane holds them).
bool geometry_ok(const WindowGeom& g) {
  if (g.nsp != 2 || g.G != 1 || g.N < 1 || g.C < 1 || g.M < 1 || g.out[1] < 1 || g.out[2] < 1) return false;
  if (g.k[1] != 3 || g.k[2] != 3 || g.s[1] != 1 || g.s[2] != 1 || g.d[1] != 1 || g.d[2] != 1) return false;
  return g.pb[1] >= 0 && g.pb[2] >= 0 && g.pe[1] >= 0 && g.pe[2] >= 0 && g.pb[1] <= 2 && g.pb[2] <= 2;
}

bool block_ok(int block, int64_t channels) {
  return block == 0 || ((block == 8 || block == 16) && channels % block == 0);
}

}  // namespace

bool WinogradConv::applies(const WindowGeom& g) {
  static const bool enabled = [] {
    const char* e = std::getenv("OPENACL_CONV_WINOGRAD");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  if (!enabled || !geometry_ok(g)) return false;
  // The products are [tiles x C] x [C x M] matrices: with few tiles or narrow
  // channels the transforms cost more than the multiplies they save.
  const int64_t tiles = g.N * ((g.out[1] + 3) / 4) * ((g.out[2] + 3) / 4);
  // Measured on ResNet-50 (one thread, AVX2): 56x56 and 28x28 layers run 2-2.6x
  // faster, 14x14 (16 tiles) 1.7x, 7x7 (4 tiles) 1.3x slower. Where AVX-512
  // runs on full-width units the multiplies cost half as much and oneDNN's
  // brgemm convolution takes the direct ones (conv_dnnl.h,
  // prefers_channels_last): there the 64-channel 56x56 layers ran 1.23-1.47
  // ms in Winograd, 1.19-1.24 direct; 128 channels at 28x28 0.72-0.91
  // against 1.09-1.17, 256 at 14x14 1.01-1.07 against 1.15-1.18 (Zen 5).
  // Where the halves are split (Zen 4) the 64-channel 56x56 layers ran
  // 1.56-1.78 ms in Winograd against 2.3 ms in oneDNN's brgemm kernel.
  const int64_t min_channels = full_width_avx512() ? 128 : 32;
  return g.C >= min_channels && g.M >= min_channels && tiles >= 16;
}

std::shared_ptr<const WinogradConv> WinogradConv::make(const WindowGeom& g, const float* w, const float* b,
                                                       int src_block, int dst_block, PackCache* packs,
                                                       Products products) {
  if (!w || !geometry_ok(g) || !block_ok(src_block, g.C) || !block_ok(dst_block, g.M)) return nullptr;
  std::shared_ptr<WinogradConv> e(new WinogradConv());
  e->N_ = g.N, e->C_ = g.C, e->M_ = g.M, e->H_ = g.in[1], e->W_ = g.in[2], e->OH_ = g.out[1], e->OW_ = g.out[2];
  e->pt_ = g.pb[1], e->pl_ = g.pb[2];
  e->th_ = (e->OH_ + 3) / 4, e->tw_ = (e->OW_ + 3) / 4, e->T_ = e->N_ * e->th_ * e->tw_;
  e->Cp_ = round8(e->C_), e->Mp_ = round8(e->M_);
  e->Hp_ = e->th_ * 4 + 2, e->Wp_ = e->tw_ * 4 + 2;
  e->src_block_ = src_block, e->dst_block_ = dst_block;
  e->bias_.assign(static_cast<size_t>(e->Mp_), 0.f);
  if (b) std::memcpy(e->bias_.data(), b, static_cast<size_t>(e->M_) * sizeof(float));

  if (e->make_products(w, packs, products) || e->make_matmul(w, packs)) return e;
  return nullptr;
}

bool WinogradConv::make_products(const float* w, PackCache* packs, Products when) {
  // Our loops take the 36 products where Conv1x1 runs (AVX-512): V in
  // 16-blocks (8 where C is not a multiple of 16), M in 16-blocks, U_k packed
  // as Conv1x1's weights, [Mb][C][16], all 36 in one buffer. Where they pay
  // (kWhereFaster): U over 1 MiB, which comes from memory on every run of a
  // model (the other layers evict it) and which these loops read front to
  // back, each U_k once. ResNet-50 on a Zen 4, the products timed in the
  // model: the five 14x14 layers (U 9.4 MB each) 5.1-5.6 ms a run against
  // oneDNN's 6.9-7.3 on one thread, 3.3 against 3.9-4.1 on two; the three
  // 28x28 ones (2.4 MB) 2.0-2.1 against 2.3-2.4 on one thread; at batch 8
  // the two 7x7 ones (38 MB) 12 against 17-19 ms. The 56x56 ones (U 0.6 MB,
  // in the cache) ran 12% slower alone than oneDNN's and equal in the model.
  if (when == Products::kNever) return false;
  if (when == Products::kWhereFaster && 36 * C_ * M_ * static_cast<int64_t>(sizeof(float)) <= (int64_t{1} << 20))
    return false;
  vb_ = C_ % 16 == 0 ? 16 : 8, mb_ = 16;
  const int64_t Mb = (M_ + 15) / 16;
  Mq_ = Mb * 16;
  WindowGeom pg;
  pg.nsp = 1, pg.N = 1, pg.C = C_, pg.M = M_, pg.in[1] = pg.out[1] = T_;
  if (!Conv1x1::applies(pg, vb_, 16)) return false;
  const size_t per_k = static_cast<size_t>(Mb * C_ * 16), bytes = 36 * per_k * sizeof(float);
  // Change "v1" when U's values or this layout change.
  const std::string recipe =
      "winograd F(4x4,3x3) [36][Mb][C][16] v1 C" + std::to_string(C_) + " M" + std::to_string(M_);
  std::shared_ptr<const void> packed = packs ? packs->find(w, recipe, bytes) : nullptr;
  if (!packed) {
    std::vector<float> u(static_cast<size_t>(36 * C_ * M_));
    transform_weights(w, C_, M_, C_, M_, u.data());
    PageBuffer buf = alloc_pages(bytes);
    if (!buf) return false;
    float* p = static_cast<float*>(buf.get());
    parallel_for(36 * Mb, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t k = i / Mb, mb = i % Mb, lanes = std::min<int64_t>(16, M_ - mb * 16);
        float* dst = p + i * C_ * 16;
        for (int64_t c = 0; c < C_; ++c) {
          const float* src = u.data() + (k * C_ + c) * M_ + mb * 16;
          for (int64_t l = 0; l < 16; ++l) dst[c * 16 + l] = l < lanes ? src[l] : 0.f;
        }
      }
    });
    packed = std::shared_ptr<const void>(buf.release(), PageFree());
    if (packs) packs->record(w, recipe, packed.get(), bytes, packed);
  }
  const float* base = static_cast<const float*>(packed.get());
  for (int64_t k = 0; k < 36; ++k) {
    // Each product keeps the whole buffer alive (an aliasing pointer to its U_k).
    auto pk = Conv1x1::make_product(C_, M_, T_, vb_, std::shared_ptr<const void>(packed, base + k * per_k));
    if (!pk) {
      products_.clear();
      return false;
    }
    products_.push_back(std::move(pk));
  }
  set_buffers();
  return true;
}

bool WinogradConv::make_matmul(const float* w, PackCache* packs) {
  vb_ = Cp_, mb_ = Mq_ = Mp_;
  try {
    using dnnl::memory;
    v_md_ = memory::desc({36, T_, Cp_}, memory::data_type::f32, memory::format_tag::abc);
    m_md_ = memory::desc({36, T_, Mp_}, memory::data_type::f32, memory::format_tag::abc);
    const memory::desc u_plain({36, Cp_, Mp_}, memory::data_type::f32, memory::format_tag::abc);
    const memory::desc u_any({36, Cp_, Mp_}, memory::data_type::f32, memory::format_tag::any);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(v_md_, u_any, m_md_), dnnl_util::base_attr(),
                                          dnnl_util::engine());
    u_md_ = pd.weights_desc();
    // U from the .om when atc transformed these weights for this layout (the
    // recipe names the transform's version: change it when U's values change).
    const std::string recipe =
        packs
            ? dnnl_util::pack_recipe(
                  ("winograd F(4x4,3x3) v1 C" + std::to_string(C_) + " M" + std::to_string(M_)).c_str(), u_plain, u_md_)
            : std::string();
    if (!recipe.empty())
      if (auto blob = packs->find(w, recipe, u_md_.get_size())) u_ = dnnl_util::adopt(u_md_, std::move(blob));
    if (!u_) {
      // U is written straight into the primitive's memory when it takes the
      // plain layout (U is 4x the size of the 3x3 weights: one buffer, not two).
      dnnl_util::Packed plain = dnnl_util::packed_memory(u_plain);
      float* u = static_cast<float*>(plain.mem.get_data_handle());
      if (Cp_ != C_ || Mp_ != M_) std::memset(u, 0, u_plain.get_size());  // the padding rows and columns
      transform_weights(w, C_, M_, Cp_, Mp_, u);
      u_ = u_md_ == u_plain ? plain : dnnl_util::pack(u_plain, u, u_md_);
      if (!recipe.empty()) packs->record(w, recipe, u_.mem.get_data_handle(), u_md_.get_size(), u_.storage);
    }
    scratch_md_ = pd.scratchpad_desc();
    prim_ = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return false;
  }
  s_bytes_ = align64(scratch_md_.get_size());
  args_.add(DNNL_ARG_SRC, v_md_);
  args_.add_fixed(DNNL_ARG_WEIGHTS, u_.mem);
  args_.add(DNNL_ARG_DST, m_md_);
  if (s_bytes_) args_.add(DNNL_ARG_SCRATCHPAD, scratch_md_);
  set_buffers();
  return true;
}

void WinogradConv::set_buffers() {
  if (src_block_ == 0) p_bytes_ = align64(static_cast<size_t>(N_ * (Cp_ / 8) * Hp_ * Wp_ * 8) * sizeof(float));
  v_bytes_ = align64(static_cast<size_t>(36 * T_ * Cp_) * sizeof(float));
  m_bytes_ = align64(static_cast<size_t>(36 * T_ * Mq_) * sizeof(float));
}

void WinogradConv::pad_input(const float* x, float* p) const {
  const int64_t Cb = Cp_ / 8, rows = N_ * Cb * Hp_;
  const int64_t sb = src_block_;
  parallel_for(rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t hp = r % Hp_, cb = (r / Hp_) % Cb, n = r / (Hp_ * Cb);
      float* dst = p + r * Wp_ * 8;
      const int64_t ih = hp - pt_;
      if (ih < 0 || ih >= H_) {
        std::memset(dst, 0, static_cast<size_t>(Wp_) * 8 * sizeof(float));
        continue;
      }
      const int64_t w0 = std::min(pl_, Wp_), w1 = std::min(Wp_, pl_ + W_);  // [w0, w1): inside the input
      std::memset(dst, 0, static_cast<size_t>(w0) * 8 * sizeof(float));
      if (w1 < Wp_) std::memset(dst + w1 * 8, 0, static_cast<size_t>(Wp_ - w1) * 8 * sizeof(float));
      for (int64_t l = 0; l < 8; ++l) {
        const int64_t c = cb * 8 + l;
        if (c >= C_) {
          for (int64_t wp = w0; wp < w1; ++wp) dst[wp * 8 + l] = 0.f;
          continue;
        }
        if (sb == 0) {
          const float* row = x + ((n * C_ + c) * H_ + ih) * W_;
          for (int64_t wp = w0; wp < w1; ++wp) dst[wp * 8 + l] = row[wp - pl_];
        } else {
          const float* row = x + ((n * (C_ / sb) + c / sb) * H_ + ih) * W_ * sb + c % sb;
          for (int64_t wp = w0; wp < w1; ++wp) dst[wp * 8 + l] = row[(wp - pl_) * sb];
        }
      }
    }
  });
}

void WinogradConv::transform_input(const float* x, float* p, float* v) const {
  // Blocked X is read in place (8 channels are one vector there); plain X is
  // first gathered into padded 8-blocks (p).
  Geo g{T_, tw_, th_, Cp_ / 8, Cp_, vb_, x, src_block_, C_ / std::max(src_block_, 1), H_, W_, pt_, pl_};
  if (src_block_ == 0) {
    pad_input(x, p);
    g.src = p, g.sb = 8, g.Cs = Cp_ / 8, g.H = Hp_, g.W = Wp_, g.pt = 0, g.pl = 0;
  }
  parallel_for(T_, std::max<int64_t>(1, 64 / g.Cb), [&](int64_t t0, int64_t t1) { input_tiles(g, v, t0, t1); });
}

void WinogradConv::transform_output(const float* m, float* y, const float* residual, const Activation* act) const {
  const OutGeo g{T_, tw_, th_, Mp_ / 8, Mq_, mb_, M_, OH_, OW_, dst_block_};
  if (act && act->op.empty()) act = nullptr;
  const bool relu = act && act->op == "Relu";
  parallel_for(T_, std::max<int64_t>(1, 64 / g.Mb),
               [&](int64_t t0, int64_t t1) { output_tiles(g, m, bias_.data(), y, residual, act, relu, t0, t1); });
}

void WinogradConv::run(const float* x, float* y, const float* residual, const Activation* act) const {
  using namespace dnnl_util;
  char* buf = static_cast<char*>(scratch(p_bytes_ + v_bytes_ + m_bytes_ + s_bytes_));
  float* p = reinterpret_cast<float*>(buf);
  float* v = reinterpret_cast<float*>(buf + p_bytes_);
  float* m = reinterpret_cast<float*>(buf + p_bytes_ + v_bytes_);
  transform_input(x, p, v);
  if (!products_.empty()) {
    // 36 products over the compute threads, each U_k read once.
    parallel_for(36, 1, [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        products_[static_cast<size_t>(k)]->run_span(v + k * T_ * Cp_, T_ * vb_, m + k * T_ * Mq_, T_ * 16, nullptr,
                                                    T_);
    });
  } else {
    ArgSets::Lease a = args_.take();
    a.bind(DNNL_ARG_SRC, v);
    a.bind(DNNL_ARG_DST, m);
    if (s_bytes_) a.bind(DNNL_ARG_SCRATCHPAD, buf + p_bytes_ + v_bytes_ + m_bytes_);
    a.execute(prim_);
    stream().wait();
  }
  transform_output(m, y, residual, act);
}

}  // namespace openacl::kernels::cpu

#endif  // OPENACL_HAVE_DNNL
