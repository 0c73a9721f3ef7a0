// Winograd F(4x4, 3x3) against the reference convolution loops: odd sizes
// (partial tiles), channel counts that are not multiples of 8, every padding
// it accepts, bias, a residual (also written over itself), blocked layouts in
// and out. The error is measured relative to the largest output magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_winograd.h"

#if OPENACL_HAVE_DNNL

namespace openacl::kernels::cpu {
namespace {

struct Case {
  int64_t N, C, M, H, W, pt, pl, pb, pr;
  bool bias = true, residual = false, residual_in_place = false;
  int src_block = 0, dst_block = 0;
  const char* act = "";  // fused activation, applied after the residual
};

WindowGeom geom(const Case& k) {
  WindowGeom g;
  g.nsp = 2;
  g.N = k.N, g.C = k.C, g.M = k.M, g.G = 1;
  g.in[1] = k.H, g.in[2] = k.W;
  g.k[1] = g.k[2] = 3;
  g.pb[1] = k.pt, g.pb[2] = k.pl, g.pe[1] = k.pb, g.pe[2] = k.pr;
  g.out[1] = k.H + k.pt + k.pb - 2;
  g.out[2] = k.W + k.pl + k.pr - 2;
  return g;
}

// The tile-wise products as Conv1x1 sees them: T tiles of C -> M channels.
WindowGeom product_geom(const Case& k) {
  const WindowGeom g = geom(k);
  WindowGeom p;
  p.nsp = 1, p.N = 1, p.C = k.C, p.M = k.M;
  p.in[1] = p.out[1] = k.N * ((g.out[1] + 3) / 4) * ((g.out[2] + 3) / 4);
  return p;
}

// plain NCHW <-> nChw{B}c
std::vector<float> to_blocked(const std::vector<float>& x, int64_t N, int64_t C, int64_t HW, int B) {
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < HW; ++s) y[((n * (C / B) + c / B) * HW + s) * B + c % B] = x[(n * C + c) * HW + s];
  return y;
}
std::vector<float> from_blocked(const std::vector<float>& y, int64_t N, int64_t C, int64_t HW, int B) {
  std::vector<float> x(y.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < HW; ++s) x[(n * C + c) * HW + s] = y[((n * (C / B) + c / B) * HW + s) * B + c % B];
  return x;
}

double run_case(const Case& k, WinogradConv::Products products) {
  const WindowGeom g = geom(k);
  std::mt19937 rng(static_cast<unsigned>(k.C * 131 + k.M * 7 + k.H));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(static_cast<size_t>(k.N * k.C * k.H * k.W)), w(static_cast<size_t>(k.M * k.C * 9)),
      b(static_cast<size_t>(k.M));
  for (float& v : x) v = u(rng);
  for (float& v : w) v = u(rng) * 0.2f;
  for (float& v : b) v = u(rng);
  const int64_t ohw = g.out[1] * g.out[2];
  const size_t ny = static_cast<size_t>(k.N * k.M * ohw);
  std::vector<float> ref(ny), res(ny);
  for (float& v : res) v = u(rng);
  conv_ref<float>(g, x.data(), w.data(), k.bias ? b.data() : nullptr, ref.data());
  if (k.residual)
    for (size_t i = 0; i < ny; ++i) ref[i] += res[i];
  Activation act;
  act.op = k.act;
  act.alpha = -0.5f, act.beta = 0.75f;  // Clip's bounds
  act.apply(ref.data(), static_cast<int64_t>(ny));

  auto e = WinogradConv::make(g, w.data(), k.bias ? b.data() : nullptr, k.src_block, k.dst_block, nullptr, products);
  EXPECT_TRUE(e);
  if (!e) return 1e9;
  // Our products wherever AVX-512 runs them (conv_1x1.h), oneDNN's matmul when asked.
  const bool ours = products == WinogradConv::Products::kWhereverTheyRun ||
                    (products == WinogradConv::Products::kWhereFaster && 36 * k.C * k.M * 4 > (1 << 20));
  EXPECT_EQ(e->products(), ours && Conv1x1::applies(product_geom(k), k.C % 16 == 0 ? 16 : 8, 16));
  const std::vector<float> xin = k.src_block ? to_blocked(x, k.N, k.C, k.H * k.W, k.src_block) : x;
  std::vector<float> rin = k.dst_block ? to_blocked(res, k.N, k.M, ohw, k.dst_block) : res;
  std::vector<float> y(ny, 12345.f);
  if (k.residual && k.residual_in_place) {
    e->run(xin.data(), rin.data(), rin.data(), &act);
    y = rin;
  } else {
    e->run(xin.data(), y.data(), k.residual ? rin.data() : nullptr, &act);
  }
  if (k.dst_block) y = from_blocked(y, k.N, k.M, ohw, k.dst_block);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < ny; ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - ref[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(ref[i])));
  }
  return worst / scale;
}

TEST(ConvWinograd, MatchesReference) {
  const Case cases[] = {
      {1, 32, 32, 8, 8, 1, 1, 1, 1},
      {1, 64, 64, 56, 56, 1, 1, 1, 1},
      {2, 40, 36, 13, 11, 1, 1, 1, 1},          // partial tiles, channels not multiples of 8
      {1, 33, 35, 9, 10, 0, 0, 0, 0},           // no padding
      {1, 32, 48, 7, 7, 2, 2, 2, 2},            // pad 2
      {1, 32, 32, 10, 12, 1, 0, 0, 1},          // asymmetric pads
      {1, 48, 32, 14, 14, 1, 1, 1, 1, false},   // no bias
      {1, 32, 40, 12, 12, 1, 1, 1, 1, true, true},
      {1, 32, 40, 12, 12, 1, 1, 1, 1, true, true, true},  // residual written over itself
      {1, 32, 32, 9, 9, 1, 1, 1, 1, true, false, false, 8, 8},
      {2, 32, 48, 15, 13, 1, 1, 1, 1, true, true, true, 16, 16},
      {1, 64, 32, 7, 7, 1, 1, 1, 1, true, false, false, 8, 0},
      {1, 48, 64, 7, 9, 1, 1, 1, 1, true, false, false, 0, 16},
      {1, 32, 40, 12, 12, 1, 1, 1, 1, true, false, false, 0, 0, "Relu"},
      {1, 32, 40, 11, 12, 1, 1, 1, 1, true, true, true, 0, 0, "Relu"},  // relu(conv + r) over r
      {1, 32, 32, 9, 9, 1, 1, 1, 1, true, true, false, 8, 8, "Clip"},
      {1, 40, 32, 9, 13, 1, 1, 1, 1, false, false, false, 0, 0, "HardSwish"},
      // Blocked X read in place: border tiles at every side, pads 0 and 2,
      // partial tiles, two images, 8-channel halves of 16-blocks.
      {2, 32, 32, 13, 11, 2, 2, 2, 2, true, false, false, 16, 16},
      {1, 48, 40, 10, 9, 0, 0, 0, 0, true, false, false, 8, 0},
      {2, 64, 32, 11, 14, 2, 0, 1, 2, true, true, false, 16, 16},
      {1, 32, 48, 5, 6, 1, 1, 1, 1, true, false, false, 16, 0, "Relu"},
      // Blocked Y stored a vector at a time: relu(conv + r) over r, another activation.
      {2, 32, 48, 10, 7, 1, 1, 1, 1, true, true, true, 16, 16, "Relu"},
      {1, 32, 40, 9, 11, 1, 1, 1, 1, true, true, false, 0, 8, "HardSwish"},
      // U over 1 MiB (the products on Conv1x1's loops by default): 144 channels
      // in 16-blocks; 136 in 8-blocks into 130 (the last block 2 lanes wide).
      {1, 144, 144, 9, 9, 1, 1, 1, 1, true, true, true, 16, 16, "Relu"},
      {1, 136, 130, 8, 10, 1, 1, 1, 1, true, false, false, 8, 0},
  };
  using P = WinogradConv::Products;
  for (const P products : {P::kWhereFaster, P::kWhereverTheyRun, P::kNever})
    for (const Case& k : cases) {
      const bool matmul_only = products == P::kNever;
      const double err = run_case(k, products);
      EXPECT_LT(err, 2e-5) << "N" << k.N << " C" << k.C << " M" << k.M << " " << k.H << "x" << k.W << " pads "
                           << k.pt << k.pl << k.pb << k.pr << " blocks " << k.src_block << "/" << k.dst_block
                           << " act " << k.act << (matmul_only ? " matmul" : "");
      std::printf("C%lld M%lld %lldx%lld blocks %d/%d%s: max error %.2e of the largest output\n",
                  static_cast<long long>(k.C), static_cast<long long>(k.M), static_cast<long long>(k.H),
                  static_cast<long long>(k.W), k.src_block, k.dst_block, matmul_only ? " (matmul)" : "", err);
    }
}

TEST(ConvWinograd, AppliesOnlyWhereItShould) {
  WindowGeom g = geom({1, 128, 128, 28, 28, 1, 1, 1, 1});
  EXPECT_TRUE(WinogradConv::applies(g));
  // 64 channels: only where oneDNN's brgemm convolution does not beat it
  // (AVX-512 on full-width units).
  EXPECT_EQ(WinogradConv::applies(geom({1, 64, 64, 56, 56, 1, 1, 1, 1})), !full_width_avx512());
  WindowGeom s = g;
  s.s[1] = s.s[2] = 2;
  EXPECT_FALSE(WinogradConv::applies(s));  // strided
  WindowGeom d = g;
  d.d[1] = 2;
  EXPECT_FALSE(WinogradConv::applies(d));  // dilated
  WindowGeom k = g;
  k.k[1] = k.k[2] = 5;
  EXPECT_FALSE(WinogradConv::applies(k));  // 5x5
  WindowGeom gr = g;
  gr.G = 64;
  EXPECT_FALSE(WinogradConv::applies(gr));  // depthwise
  WindowGeom narrow = g;
  narrow.C = 3;
  EXPECT_FALSE(WinogradConv::applies(narrow));  // the first layer of a CNN
}

TEST(ConvWinograd, MakeRefusesWhatItCannotCompute) {
  const WindowGeom g = geom({1, 32, 48, 9, 9, 1, 1, 1, 1});
  std::vector<float> w(static_cast<size_t>(48 * 32 * 9), 0.1f);
  EXPECT_TRUE(WinogradConv::make(g, w.data(), nullptr));
  EXPECT_FALSE(WinogradConv::make(g, nullptr, nullptr));  // no weights
  WindowGeom s = g;
  s.s[1] = 2;
  EXPECT_FALSE(WinogradConv::make(s, w.data(), nullptr));  // strided
  WindowGeom k = g;
  k.k[2] = 5;
  EXPECT_FALSE(WinogradConv::make(k, w.data(), nullptr));  // not 3x3
  WindowGeom p = g;
  p.pb[1] = 3;
  EXPECT_FALSE(WinogradConv::make(p, w.data(), nullptr));  // a top pad the padded plane cannot hold
  WindowGeom e = g;
  e.N = 0;
  EXPECT_FALSE(WinogradConv::make(e, w.data(), nullptr));  // empty
  EXPECT_FALSE(WinogradConv::make(g, w.data(), nullptr, 12, 0));  // not a block size
  EXPECT_FALSE(WinogradConv::make(g, w.data(), nullptr, 0, 32));  // 32 is not a block size either
  WindowGeom c = geom({1, 36, 48, 9, 9, 1, 1, 1, 1});
  std::vector<float> wc(static_cast<size_t>(48 * 36 * 9), 0.1f);
  EXPECT_FALSE(WinogradConv::make(c, wc.data(), nullptr, 8, 0));   // 36 channels are not blocks of 8
  EXPECT_TRUE(WinogradConv::make(c, wc.data(), nullptr, 0, 16));  // 48 are blocks of 16
}

}  // namespace
}  // namespace openacl::kernels::cpu

#endif
