// The depthwise convolution loops (conv_dw.h) against the reference
// convolution, in both forms (16 lanes on AVX-512; 8 on AVX2, with the
// machine's block forced to 8): 3x3 and 5x5 windows, strides 1 and 2, dilation 2, paddings
// that clip the window at every border (and none), planes narrower than a
// tile, channel counts that leave a partial block (X's padding channels
// hold NaN: never in a result; Y's must come out as zeros), batches, bias, a
// residual (also written over itself), every activation, and weights taken
// from a PackCache as atc stores them.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/pack_cache.h"
#include "blocked_conv_test_util.h"

namespace openacl::kernels::cpu {
namespace {

using namespace blocked_test;

struct Case {
  int64_t N, C, H, W, K, S, D, pad;  // pad: on every side
  bool bias = true, residual = false, in_place = false;
  const char* act = "";
  int64_t pad_end = -1;  // bottom/right padding when not `pad`
};

WindowGeom geom(const Case& k) {
  WindowGeom g;
  g.nsp = 2;
  g.N = k.N, g.C = k.C, g.M = k.C, g.G = k.C;
  const int64_t pe = k.pad_end < 0 ? k.pad : k.pad_end;
  g.in[1] = k.H, g.in[2] = k.W;
  for (int i = 1; i < 3; ++i) {
    g.k[i] = k.K, g.s[i] = k.S, g.d[i] = k.D, g.pb[i] = k.pad, g.pe[i] = pe;
    g.out[i] = (g.in[i] + k.pad + pe - (k.K - 1) * k.D - 1) / k.S + 1;
  }
  return g;
}

ConvData make_data(const Case& k) {
  return random_data(geom(k), static_cast<unsigned>(k.C * 131 + k.H * 7 + k.W * 3 + k.K + k.S * 5 + k.D * 11), 0.5f);
}

double check(const Case& k, const ConvData& d, const ConvDepthwise& e, int64_t lanes) {
  return run_against_reference(e, geom(k), d, lanes, lanes, k.bias, k.residual, k.in_place, k.act);
}

bool available() { return ConvDepthwise::applies(geom({1, 16, 8, 8, 3, 1, 1, 1}), 16, 16); }

// Whether the form of `lanes` runs here (for_each_form).
bool runs(int64_t lanes) { return ConvDepthwise::applies(geom({1, 16, 8, 8, 3, 1, 1, 1}), lanes, lanes); }

TEST(ConvDepthwise, MatchesReference) {
  const Case cases[] = {
      {1, 16, 8, 8, 3, 1, 1, 1},                                      // one block, one tile per row
      {1, 32, 29, 31, 3, 1, 1, 1, true, false, false, "Clip"},        // tiles and a partial tile
      {2, 24, 14, 14, 3, 2, 1, 1, true, true, false, "Relu"},         // stride 2, padded block, residual
      {1, 72, 17, 23, 5, 2, 1, 2, true, false, false, "Relu"},        // 5x5 stride 2
      {1, 40, 16, 16, 5, 1, 1, 2, false, true, true, "HardSwish"},    // 5x5, residual in place
      {1, 48, 16, 16, 5, 1, 2, 4, true, false, false, "HardSwish"},   // dilation 2: window wider than the tile
      {1, 20, 9, 11, 3, 1, 2, 2, true, false, false, "HardSigmoid"},  // act(0) != 0: padding lanes still 0
      {1, 16, 3, 2, 3, 1, 1, 1, true, false, false, "LeakyRelu"},     // narrower than a tile: borders only
      {1, 20, 7, 7, 5, 1, 1, 2, true, true, false,
       "Sigmoid"},  // no vector form: on the stored row; sigmoid(0) != 0 in the padding
      {3, 8, 6, 10, 3, 2, 1, 0, true, false, false, "Tanh"},        // no padding, 8 channels
      {1, 16, 10, 12, 3, 1, 1, 0, true, false, false, "", 2},       // bottom/right padding only
      {1, 32, 5, 5, 5, 1, 1, 2},                                    // every column a border column
      {1, 16, 4, 4, 3, 1, 1, 9, true, false, false, "Relu"},        // 9 border columns a side: whole edge tiles
      {2, 24, 7, 9, 5, 2, 1, 3, true, true, false, "Clip"},         // stride 2, wide padding: edge tiles on both sides
      {1, 12, 13, 27, 3, 1, 1, 1, true, true, false, "Relu"},       // 8 lanes: 27 columns in tiles of 6, partial block
      {1, 8, 11, 19, 3, 1, 2, 2, true, false, false, "HardSwish"},  // 8 lanes: dilated, tiles of 5
      {1, 16, 12, 20, 5, 2, 1, 2, false, false, false, "Clip"},     // 8 lanes: 5x5 stride 2, tiles of 3
  };
  for_each_form(runs, [&](int64_t lanes) {
    for (const Case& k : cases) {
      SCOPED_TRACE(testing::Message() << "N" << k.N << " C" << k.C << " " << k.H << "x" << k.W << " k" << k.K << " s"
                                      << k.S << " d" << k.D << " pad" << k.pad << " act '" << k.act << "'"
                                      << (k.residual ? " residual" : "") << (k.in_place ? " in place" : ""));
      const WindowGeom g = geom(k);
      const ConvData d = make_data(k);
      auto e = ConvDepthwise::make(g, d.w.data(), k.bias ? d.b.data() : nullptr, lanes, lanes, activation(k.act));
      ASSERT_TRUE(e);
      EXPECT_EQ(e->lanes(), lanes);
      EXPECT_LT(check(k, d, *e, lanes), 1e-5);
    }
  });
}

TEST(ConvDepthwise, AppliesOnlyWhereItShouldWith8Lanes) {
  LanesScope scope(8);  // the 8-lane form: X and Y in 8-blocks only
  const WindowGeom g = geom({1, 32, 8, 8, 3, 1, 1, 1});
  if (!ConvDepthwise::applies(g, 8, 8)) GTEST_SKIP() << "no AVX2 + FMA (or OPENACL_CONV_DW=0)";
  EXPECT_FALSE(ConvDepthwise::applies(g, 16, 8));
  EXPECT_FALSE(ConvDepthwise::applies(g, 8, 0));
  EXPECT_FALSE(ConvDepthwise::applies(geom({1, 32, 8, 8, 7, 1, 1, 3}), 8, 8));  // 7x7
}

TEST(ConvDepthwise, AppliesOnlyWhereItShould) {
  if (!available()) GTEST_SKIP() << "no AVX-512F (or OPENACL_CONV_DW=0)";
  const WindowGeom g = geom({1, 32, 8, 8, 3, 1, 1, 1});
  EXPECT_TRUE(ConvDepthwise::applies(g, 16, 16));
  EXPECT_FALSE(ConvDepthwise::applies(g, 8, 8));    // 8-blocks where the machine's are 16: oneDNN's
  EXPECT_FALSE(ConvDepthwise::applies(g, 0, 16));   // plain X
  EXPECT_FALSE(ConvDepthwise::applies(g, 16, 0));   // plain Y
  EXPECT_FALSE(ConvDepthwise::applies(geom({1, 32, 8, 8, 7, 1, 1, 3}), 16, 16));  // 7x7
  EXPECT_FALSE(ConvDepthwise::applies(geom({1, 32, 9, 9, 3, 2, 2, 2}), 16, 16));  // stride and dilation 2
  EXPECT_FALSE(ConvDepthwise::applies(geom({1, 32, 9, 9, 3, 3, 1, 1}), 16, 16));  // stride 3
  WindowGeom mult = g;
  mult.M = 64;  // two outputs per channel
  EXPECT_FALSE(ConvDepthwise::applies(mult, 16, 16));
  WindowGeom grouped = g;
  grouped.G = 2;
  EXPECT_FALSE(ConvDepthwise::applies(grouped, 16, 16));
  WindowGeom rect = g;
  rect.k[2] = 5;
  EXPECT_FALSE(ConvDepthwise::applies(rect, 16, 16));  // 3x5
  EXPECT_FALSE(ConvDepthwise::make(g, nullptr, nullptr, 16, 16, Activation()));  // no weights
}

TEST(ConvDepthwise, UsesWeightsPackedAhead) {
  const Case k{1, 40, 12, 12, 5, 1, 1, 2, true, false, false, "Relu"};
  for_each_form(runs, [&](int64_t lanes) {
    const ConvData d = make_data(k);
    // 40 channels: 3 blocks of 16 or 5 of 8.
    const size_t bytes = static_cast<size_t>((40 + lanes - 1) / lanes * 25 * lanes) * sizeof(float);
    auto loaded = made_from_packs(d.w, bytes, [&](const float* w, PackCache* packs) {
      return ConvDepthwise::make(geom(k), w, d.b.data(), lanes, lanes, activation(k.act), packs);
    });
    ASSERT_TRUE(loaded);
    EXPECT_LT(check(k, d, *loaded, lanes), 1e-5);
  });
}

}  // namespace
}  // namespace openacl::kernels::cpu
