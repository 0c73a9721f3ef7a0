// The pointwise convolution loops (conv_1x1.h) against the reference
// convolution, in both forms (16 lanes on AVX-512; 8 on AVX2, with the
// machine's block forced to 8): X in 8- or 16-blocks whose padding channels
// hold NaN (never read), Y in blocks whose padding channels must come out as zeros,
// channel counts that leave partial blocks and groups, pixel counts that
// leave partial tiles, batches, bias, a residual (also written over itself),
// every activation, weights taken from a PackCache as atc stores them, and
// with 16 lanes both forms of a last block of 8 real channels.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "blocked_conv_test_util.h"
#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_irb.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/matmul_common.h"
#include "kernels/pack_cache.h"

namespace openacl::kernels::cpu {
namespace {

using namespace blocked_test;

struct Case {
  int64_t N, C, M, H, W;
  int64_t xb = 16;
  bool bias = true, residual = false, in_place = false;
  const char* act = "";
};

WindowGeom geom(const Case& k) {
  WindowGeom g;
  g.nsp = 2;
  g.N = k.N, g.C = k.C, g.M = k.M, g.G = 1;
  g.in[1] = g.out[1] = k.H;
  g.in[2] = g.out[2] = k.W;
  return g;
}

ConvData make_data(const Case& k) {
  return random_data(geom(k), static_cast<unsigned>(k.C * 131 + k.M * 7 + k.H * 3 + k.W), 0.3f);
}

// X's block for a case at `lanes`: the case's with 16 lanes, 8 with 8.
int64_t x_block(const Case& k, int64_t lanes) { return lanes == 16 ? k.xb : 8; }

double check(const Case& k, const ConvData& d, const Conv1x1& e, int64_t lanes) {
  return run_against_reference(e, geom(k), d, x_block(k, lanes), lanes, k.bias, k.residual, k.in_place, k.act);
}

bool available() { return Conv1x1::applies(geom({1, 16, 16, 4, 4}), 16, 16); }

// Whether the form of `lanes` runs here (for_each_form).
bool runs(int64_t lanes) { return Conv1x1::applies(geom({1, 16, 16, 4, 4}), lanes, lanes); }

TEST(Conv1x1, MatchesReference) {
  const Case cases[] = {
      {1, 16, 16, 4, 4},                                   // one block each side, one tile
      {1, 24, 144, 7, 7, 16},                              // padded X, 9 blocks: groups of 3
      {1, 144, 24, 7, 7, 16, true, true},                  // padded Y + residual
      {2, 40, 40, 5, 9, 8, false, true, true, "Relu"},     // 8-blocks, batch, residual in place
      {1, 32, 80, 3, 17, 16, true, false, false, "Clip"},  // 5 blocks: groups of 3 and 2
      {1, 17, 33, 1, 50, 16, true, false, false, "HardSwish"},
      {1, 24, 40, 5, 5, 16, true, false, false, "HardSigmoid"},  // act(0) != 0: the padding lanes still 0
      {1, 64, 16, 23, 29, 8, true, true, false, "HardSigmoid"},  // one block: 1 x 16 tiles, many ranges
      {1, 96, 72, 6, 6, 16, true, false, false, "LeakyRelu"},
      {1, 48, 20, 4, 5, 16, true, true, false, "Sigmoid"},     // no vector form: applied to the stored tile
      {3, 8, 1, 2, 3, 8, true, false, false, "Tanh"},          // one output channel
      {1, 520, 64, 2, 2, 16},                                  // C past a range's worth of pixels
      {1, 48, 56, 9, 11, 8, true, true, false, "Relu"},        // 8 lanes: 7 blocks, groups of 3, 2, 2
      {1, 16, 8, 5, 31, 8, false, false, false, "LeakyRelu"},  // 8 lanes: one block, 1 x 12 tiles
  };
  for_each_form(runs, [&](int64_t lanes) {
    // With 16 lanes, both forms of a last block with 8 real lanes (M % 16 ==
    // 8); a form out of range (7, -1) is the machine's choice.
    for (int half_form : lanes == 16 ? std::vector<int>{1, 2, 7, -1} : std::vector<int>{0}) {
      Conv1x1::set_half_form_for_testing(half_form);
      for (const Case& k : cases) {
        SCOPED_TRACE(testing::Message() << "N" << k.N << " C" << k.C << " M" << k.M << " " << k.H << "x" << k.W << " xb"
                                        << x_block(k, lanes) << " act '" << k.act << "'"
                                        << (k.residual ? " residual" : "") << (k.in_place ? " in place" : "")
                                        << " half form " << half_form);
        const ConvData d = make_data(k);
        auto e = Conv1x1::make(geom(k), d.w.data(), k.bias ? d.b.data() : nullptr, x_block(k, lanes), lanes,
                               activation(k.act));
        ASSERT_TRUE(e);
        EXPECT_EQ(e->y_block(), lanes);
        EXPECT_LT(check(k, d, *e, lanes), 1e-5);
      }
    }
    Conv1x1::set_half_form_for_testing(0);
  });
}

TEST(Conv1x1, AppliesOnlyWhereItShouldWith8Lanes) {
  LanesScope scope(8);  // the 8-lane form: X and Y in 8-blocks only
  const WindowGeom g = geom({1, 32, 64, 8, 8});
  if (!Conv1x1::applies(g, 8, 8)) GTEST_SKIP() << "no AVX2 + FMA (or OPENACL_CONV_1X1=0)";
  EXPECT_FALSE(Conv1x1::applies(g, 16, 8));  // X in 16-blocks
  EXPECT_FALSE(Conv1x1::applies(g, 0, 8));   // plain X
  EXPECT_FALSE(Conv1x1::applies(g, 8, 0));   // plain Y
  WindowGeom s = g;
  s.s[1] = s.s[2] = 2;
  s.out[1] = s.out[2] = 4;
  EXPECT_FALSE(Conv1x1::applies(s, 8, 8));  // strided
}

TEST(Conv1x1, AppliesOnlyWhereItShould) {
  if (!available()) GTEST_SKIP() << "no AVX-512F (or OPENACL_CONV_1X1=0)";
  const WindowGeom g = geom({1, 32, 64, 8, 8});
  EXPECT_TRUE(Conv1x1::applies(g, 16, 16));
  EXPECT_TRUE(Conv1x1::applies(g, 8, 16));
  EXPECT_FALSE(Conv1x1::applies(g, 0, 16));   // plain X
  EXPECT_FALSE(Conv1x1::applies(g, 16, 8));   // Y in 8-blocks (the 8-lane form runs only where blocks are 8)
  EXPECT_FALSE(Conv1x1::applies(g, 8, 8));
  EXPECT_FALSE(Conv1x1::applies(g, 16, 0));   // plain Y
  WindowGeom s = g;
  s.s[1] = s.s[2] = 2;
  s.out[1] = s.out[2] = 4;
  EXPECT_FALSE(Conv1x1::applies(s, 16, 16));  // strided
  WindowGeom k = g;
  k.k[1] = k.k[2] = 3;
  EXPECT_FALSE(Conv1x1::applies(k, 16, 16));  // 3x3
  WindowGeom p = g;
  p.pb[1] = 1;
  EXPECT_FALSE(Conv1x1::applies(p, 16, 16));  // padded
  WindowGeom gr = g;
  gr.G = 2;
  EXPECT_FALSE(Conv1x1::applies(gr, 16, 16));  // grouped
  WindowGeom one = geom({1, 32, 64, 1, 1});
  EXPECT_FALSE(Conv1x1::applies(one, 16, 16));  // a 1x1 plane: ConvKernel's matrix-vector path
  EXPECT_FALSE(Conv1x1::make(g, nullptr, nullptr, 16, 16, Activation()));  // no weights
}

TEST(Conv1x1, UsesWeightsPackedAhead) {
  const Case k{1, 40, 56, 6, 7, 8, true, true, false, "Relu"};
  for_each_form(runs, [&](int64_t lanes) {
    const ConvData d = make_data(k);
    // 56 outputs: 4 blocks of 16 or 7 of 8.
    const size_t bytes = static_cast<size_t>((56 + lanes - 1) / lanes * 40 * lanes) * sizeof(float);
    auto loaded = made_from_packs(d.w, bytes, [&](const float* w, PackCache* packs) {
      return Conv1x1::make(geom(k), w, d.b.data(), k.xb, lanes, activation(k.act), packs);
    });
    ASSERT_TRUE(loaded);
    EXPECT_LT(check(k, d, *loaded, lanes), 1e-5);
  });
}

// The pieces of a fused block must chain (InvertedResidual::make: null
// otherwise, the node then runs chained), at `lanes`.
void fused_block_refusals(int64_t lanes) {
  const std::vector<float> w(96 * 96, 0.1f);
  auto pointwise = [&](int64_t c, int64_t m, int64_t hw, int64_t xb) {
    return Conv1x1::make(geom({1, c, m, hw, hw}), w.data(), nullptr, xb, lanes, Activation{});
  };
  auto depthwise = [&](int64_t c, int64_t hw, int64_t s) {
    WindowGeom g;
    g.nsp = 2;
    g.N = 1, g.C = g.M = g.G = c;
    for (int i = 1; i < 3; ++i) {
      g.in[i] = hw, g.k[i] = 3, g.s[i] = s, g.d[i] = 1, g.pb[i] = g.pe[i] = 1;
      g.out[i] = (hw - 1) / s + 1;
    }
    return ConvDepthwise::make(g, w.data(), nullptr, lanes, lanes, Activation{});
  };
  // 24 -> 48 at 16x16, depthwise stride 2 to 8x8, 48 -> 24.
  const auto expand = pointwise(24, 48, 16, 8), project = pointwise(48, 24, 8, lanes);
  const auto dw = depthwise(48, 16, 2);
  ASSERT_TRUE(expand && dw && project);
  EXPECT_NE(InvertedResidual::make(expand, dw, project, 1), nullptr);
  EXPECT_NE(InvertedResidual::make(nullptr, depthwise(24, 16, 2), pointwise(24, 24, 8, lanes), 1), nullptr);
  EXPECT_EQ(InvertedResidual::make(expand, nullptr, project, 1), nullptr);
  EXPECT_EQ(InvertedResidual::make(expand, dw, nullptr, 1), nullptr);
  EXPECT_EQ(InvertedResidual::make(expand, dw, project, 0), nullptr);                       // no images
  EXPECT_EQ(InvertedResidual::make(pointwise(24, 32, 16, 8), dw, project, 1), nullptr);   // 32 != 48 channels
  EXPECT_EQ(InvertedResidual::make(pointwise(24, 48, 12, 8), dw, project, 1), nullptr);   // expands 12x12
  EXPECT_EQ(InvertedResidual::make(expand, dw, pointwise(48, 24, 16, lanes), 1), nullptr);  // projects 16x16
  if (lanes == 16) {
    EXPECT_EQ(InvertedResidual::make(expand, dw, pointwise(48, 24, 8, 8), 1), nullptr);  // reads 8-blocks
  }
  EXPECT_EQ(InvertedResidual::make(expand, depthwise(32, 16, 2), project, 1), nullptr);
}

TEST(Conv1x1, FusedBlockRefusesWhatDoesNotChain) {
  for_each_form(runs, [](int64_t lanes) { fused_block_refusals(lanes); });
}

// GemvPacked and pack_rows refuse what they cannot pack; pack_rows' layout.
TEST(Conv1x1, PackingRefusesWhatItCannotPack) {
  const std::vector<float> w(96 * 96, 0.1f);
  EXPECT_EQ(GemvPacked::make(nullptr, 10, 8), nullptr);
  EXPECT_EQ(GemvPacked::make(w.data(), 0, 8), nullptr);
  EXPECT_EQ(GemvPacked::make(w.data(), 10, -1), nullptr);
  // 17 rows of 3 columns: two blocks, the second one row and fifteen of zeros.
  const auto packed = pack_rows16(w.data(), 17, 3, "test v1", nullptr);
  ASSERT_NE(packed, nullptr);
  const float* p = static_cast<const float*>(packed.get());
  EXPECT_EQ(p[16 * 3 + 0], 0.1f);
  EXPECT_EQ(p[16 * 3 + 1], 0.f);
  EXPECT_EQ(p[2 * 16 * 3 - 1], 0.f);
  EXPECT_EQ(pack_rows(w.data(), 17, 3, 0, "test v1", nullptr), nullptr);  // no lanes
  // 8 lanes: 17 rows in three blocks, the third one row and seven of zeros.
  const auto packed8 = pack_rows(w.data(), 17, 3, 8, "test v1", nullptr);
  ASSERT_NE(packed8, nullptr);
  const float* p8 = static_cast<const float*>(packed8.get());
  EXPECT_EQ(p8[2 * 8 * 3 + 8 * 2], 0.1f);
  EXPECT_EQ(p8[2 * 8 * 3 + 8 * 2 + 1], 0.f);
}

// A plain product on these loops (Winograd's, conv_winograd.h): Y [np x M]
// in 16-blocks = X [np x C] in xb-blocks x W packed by pack_rows16, against
// the sums computed here; refusals of what the loops cannot run.
TEST(Conv1x1, ProductOfPackedWeights) {
  if (!available()) GTEST_SKIP() << "no AVX-512F (or OPENACL_CONV_1X1=0): oneDNN runs these";
  const int64_t C = 20, M = 37, np = 13;  // X padded to 24 (8-blocks), Y to 48 (16-blocks)
  std::vector<float> w(static_cast<size_t>(M * C)), x(static_cast<size_t>(3 * np * 8), NAN);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7) % 11) * 0.1f - 0.5f;
  auto xat = [&](int64_t p, int64_t c) -> float& { return x[static_cast<size_t>((c / 8 * np + p) * 8 + c % 8)]; };
  for (int64_t p = 0; p < np; ++p)
    for (int64_t c = 0; c < C; ++c) xat(p, c) = static_cast<float>((p * 5 + c * 3) % 13) * 0.2f - 1.f;
  const auto packed = pack_rows16(w.data(), M, C, "test product v1", nullptr);
  const auto e = Conv1x1::make_product(C, M, np, 8, packed);
  ASSERT_NE(e, nullptr);
  std::vector<float> y(static_cast<size_t>(3 * np * 16), 12345.f);
  e->run_span(x.data(), np * 8, y.data(), np * 16, nullptr, np);
  for (int64_t p = 0; p < np; ++p)
    for (int64_t m = 0; m < 48; ++m) {
      double want = 0;
      for (int64_t c = 0; m < M && c < C; ++c)
        want += static_cast<double>(xat(p, c)) * w[static_cast<size_t>(m * C + c)];
      EXPECT_NEAR(y[static_cast<size_t>((m / 16 * np + p) * 16 + m % 16)], want, 1e-4) << "pixel " << p << " m " << m;
    }
  EXPECT_EQ(Conv1x1::make_product(C, M, np, 8, nullptr), nullptr);  // no weights
  EXPECT_EQ(Conv1x1::make_product(C, M, 1, 8, packed), nullptr);    // one pixel
  EXPECT_EQ(Conv1x1::make_product(C, M, np, 4, packed), nullptr);   // not a block size
  EXPECT_EQ(Conv1x1::make_product(0, M, np, 8, packed), nullptr);   // no channels
}

}  // namespace
}  // namespace openacl::kernels::cpu
