// Sampling, detection, recurrent and attention kernels: the cases the ONNX
// node tests miss (16-bit and integer dtypes, empty results, sequence_lens,
// fully masked rows, clean errors on bad input).
#include <cmath>

#include "base/fp16.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

using graph::AttributeMap;

OpRun run(const std::string& op, const std::vector<Data>& in, AttributeMap attrs, int opset, int outputs = 1) {
  OpSpec s;
  s.op_type = op;
  s.attrs = std::move(attrs);
  s.opset = opset;
  s.num_outputs = outputs;
  return run_op(s, in);
}

// ---- Resize / Upsample ----

TEST(Resize, NearestFloat16Upsample) {
  AttributeMap a;
  a.set("mode", attr_string("nearest"));
  OpRun r = run("Resize", {half({1, 1, 1, 2}, {1.5f, -2.f}), nullptr, tensor<float>({4}, {1, 1, 2, 2})}, a, 19);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, 1, 2, 4}));
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{1.5f, 1.5f, -2, -2, 1.5f, 1.5f, -2, -2}));
}

TEST(Resize, NearestInt64IsExact) {
  AttributeMap a;
  const int64_t big = (int64_t{1} << 60) + 1;
  OpRun r = run("Resize", {tensor<int64_t>({1, 2}, {big, -big}), nullptr, nullptr, tensor<int64_t>({2}, {1, 4})}, a, 19);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{big, big, -big, -big}));
}

TEST(Resize, LinearUint8RoundsAndSaturates) {
  AttributeMap a;
  a.set("mode", attr_string("linear"));
  a.set("coordinate_transformation_mode", attr_string("align_corners"));
  OpRun r = run("Resize", {tensor<uint8_t>({3}, {0, 255, 0}), nullptr, nullptr, tensor<int64_t>({1}, {5})}, a, 19);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{0, 128, 255, 128, 0}));
}

TEST(Resize, NegativeAxesAndEmptyInput) {
  AttributeMap a;
  a.set("axes", attr_ints({-1}));
  OpRun r = run("Resize", {tensor<float>({0, 2}, {}), nullptr, tensor<float>({1}, {2})}, a, 19);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0, 4}));
}

TEST(Resize, WrongScalesLengthFails) {
  OpRun r = run("Resize", {tensor<float>({1, 2}, {1, 2}), nullptr, tensor<float>({1}, {2})}, {}, 19);
  EXPECT_FALSE(r.status.ok());
}

TEST(Upsample, LinearOpset9) {
  AttributeMap a;
  a.set("mode", attr_string("linear"));
  OpRun r = run("Upsample", {tensor<float>({1, 2}, {0, 4}), tensor<float>({2}, {1, 2})}, a, 9);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 2, 4, 4}));
}

TEST(Resize, Opset10NearestDownsampleRoundsUp) {
  // Resize-10 keeps onnxruntime's legacy rule: asymmetric, ceil when shrinking.
  OpRun r = run("Resize", {tensor<float>({1, 4}, {1, 2, 3, 4}), tensor<float>({2}, {1, 0.6f})}, {}, 10);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 3}));
}

TEST(Resize, ConstantScalesRunStatic) {
  // Constant scales give static shapes: the planned-arena path.
  OpSpec s;
  s.op_type = "Resize";
  s.opset = 13;
  s.attrs.set("mode", attr_string("cubic"));
  s.constant_inputs = {2};
  OpRun r = run_op(s, {tensor<double>({1, 1, 1, 2}, {1, 1}), nullptr, tensor<float>({4}, {1, 1, 2, 2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, 1, 2, 4}));
  for (double v : values<double>(r.outputs[0])) EXPECT_NEAR(v, 1.0, 1e-12);
}

// Float32 linear upsampling of the last two axes with constant scales or
// sizes takes a path of its own (taps computed at compile time, one pass per
// plane); the same node with its scales as a graph input takes the general
// path. Both must agree, for every coordinate mode, whole and fractional
// scales, sizes, ranks 2 to 5, Upsample, and an output large enough to be
// stored past the caches.
TEST(Resize, LinearUpsampleWithConstantScalesMatchesTheGeneralPath) {
  struct Case {
    std::vector<int64_t> x;
    std::vector<float> scales;   // empty: sizes
    std::vector<int64_t> sizes;
    const char* coord;
    int opset;
    const char* op;
  };
  const std::vector<Case> cases = {
      {{1, 21, 7, 7}, {1, 1, 8, 8}, {}, "half_pixel", 19, "Resize"},
      {{1, 3, 5, 6}, {1, 1, 2, 3}, {}, "pytorch_half_pixel", 19, "Resize"},
      {{2, 3, 5, 4}, {}, {2, 3, 9, 13}, "align_corners", 19, "Resize"},
      {{1, 2, 4, 5}, {1, 1, 2.5f, 1.7f}, {}, "asymmetric", 19, "Resize"},
      {{3, 6}, {1.5f, 4}, {}, "half_pixel_symmetric", 19, "Resize"},
      {{1, 2, 3, 4, 5}, {1, 1, 1, 2, 2}, {}, "half_pixel", 19, "Resize"},
      {{1, 1, 1, 9}, {1, 1, 3, 2}, {}, "half_pixel", 13, "Resize"},  // one input row, many output rows
      {{1, 4, 3, 3}, {1, 1, 2, 2}, {}, "", 9, "Upsample"},
      {{1, 21, 32, 32}, {1, 1, 8, 8}, {}, "half_pixel", 19, "Resize"},  // LR-ASPP's head, 5.5 MB: streamed stores
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + c.coord);
    int64_t n = 1;
    for (int64_t d : c.x) n *= d;
    Data x = tensor<float>(c.x, random_floats(static_cast<size_t>(n), 7));
    OpSpec s;
    s.op_type = c.op;
    s.opset = c.opset;
    s.attrs.set("mode", attr_string("linear"));
    if (*c.coord) s.attrs.set("coordinate_transformation_mode", attr_string(c.coord));
    const int64_t r = static_cast<int64_t>(c.x.size());
    std::vector<Data> in;
    int at;
    if (c.opset < 10) {
      in = {x, tensor<float>({r}, c.scales)};
      at = 1;
    } else if (!c.scales.empty()) {
      in = {x, nullptr, tensor<float>({r}, c.scales)};
      at = 2;
    } else {
      in = {x, nullptr, nullptr, tensor<int64_t>({r}, c.sizes)};
      at = 3;
    }
    OpRun general = run_op(s, in);
    s.constant_inputs = {at};
    OpRun fast = run_op(s, in);
    ASSERT_TRUE(general.status.ok()) << general.status.message();
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    ASSERT_EQ(fast.outputs[0]->dims, general.outputs[0]->dims);
    EXPECT_GT(fast.outputs[0]->dims[r - 1], c.x[r - 1] - 1);
    const std::vector<float> a = values<float>(fast.outputs[0]), b = values<float>(general.outputs[0]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f * (1 + std::fabs(b[i]))) << "at " << i;
  }
}

// ---- NonMaxSuppression ----

TEST(NonMaxSuppression, NothingSelectedGivesEmptyOutput) {
  Data boxes = tensor<float>({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  Data scores = tensor<float>({1, 1, 2}, {0.1f, 0.2f});
  OpRun r = run("NonMaxSuppression",
                {boxes, scores, tensor<int64_t>({1}, {5}), tensor<float>({1}, {0.5f}), tensor<float>({1}, {0.9f})}, {}, 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0, 3}));
}

TEST(NonMaxSuppression, Float16AndNoMaxMeansNone) {
  Data boxes = half({1, 2, 4}, {0, 0, 1, 1, 0, 0.5f, 1, 1.5f});
  Data scores = half({1, 1, 2}, {0.5f, 0.9f});
  OpRun none = run("NonMaxSuppression", {boxes, scores}, {}, 11);
  ASSERT_TRUE(none.status.ok()) << none.status.message();
  EXPECT_EQ(none.outputs[0]->dims, (std::vector<int64_t>{0, 3}));
  OpRun r = run("NonMaxSuppression", {boxes, scores, tensor<int64_t>({1}, {2}), tensor<float>({1}, {0.2f})}, {}, 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // IoU of the two boxes is 1/3 > 0.2: only the higher-scored box 1 stays.
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{0, 0, 1}));
}

// ---- RoiAlign ----

TEST(RoiAlign, Float16Average) {
  AttributeMap a;
  a.set("output_height", attr_int(1));
  a.set("output_width", attr_int(1));
  a.set("sampling_ratio", attr_int(1));
  OpRun r = run("RoiAlign",
                {half({1, 1, 2, 2}, {1, 2, 3, 4}), half({1, 4}, {0, 0, 1, 1}), tensor<int64_t>({1}, {0})}, a,
                16);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // half_pixel: the single sample sits at (0, 0) -> 1.
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{1}));
}

TEST(RoiAlign, BatchIndexOutOfRangeFails) {
  OpRun r = run("RoiAlign",
                {tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}), tensor<float>({1, 4}, {0, 0, 1, 1}), tensor<int64_t>({1}, {3})},
                {}, 16);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("batch_indices"), std::string::npos) << r.status.message();
}

// ---- RNN / GRU / LSTM ----

TEST(Rnn, ReluClipAndSequenceLens) {
  // hidden 1, input 1: h_t = relu(clip(x_t + h_{t-1}, 2.5)).
  AttributeMap a;
  a.set("hidden_size", attr_int(1));
  a.set("activations", [] { graph::Attribute s; s.kind = graph::Attribute::Kind::kStrings; s.strings = {"Relu"}; return s; }());
  a.set("clip", attr_float(2.5f));
  Data x = tensor<float>({3, 2, 1}, {1, 1, 1, 1, 1, 1});  // [seq, batch, input]
  Data w = tensor<float>({1, 1, 1}, {1});
  Data rw = tensor<float>({1, 1, 1}, {1});
  Data lens = tensor<int32_t>({2}, {3, 1});
  OpRun r = run("RNN", {x, w, rw, nullptr, lens}, a, 14, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 1, 2, 0, 2.5f, 0}));
  EXPECT_EQ(values<float>(r.outputs[1]), (std::vector<float>{2.5f, 1}));
}

TEST(Gru, LinearBeforeResetFloat16) {
  // All weights zero except biases: z = sigmoid(0) = 0.5, h~ = tanh(0) = 0,
  // so h_t = 0.5 * h_{t-1}, starting from initial_h = 1.
  AttributeMap a;
  a.set("hidden_size", attr_int(1));
  a.set("linear_before_reset", attr_int(1));
  Data x = half({2, 1, 1}, {3, -3});
  Data w = half({1, 3, 1}, {0, 0, 0});
  Data rw = half({1, 3, 1}, {0, 0, 0});
  Data h0 = half({1, 1, 1}, {1});
  OpRun r = run("GRU", {x, w, rw, nullptr, nullptr, h0}, a, 14, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{0.5f, 0.25f}));
  EXPECT_EQ(half_values(r.outputs[1]), (std::vector<float>{0.25f}));
}

TEST(Lstm, BadWeightShapeFails) {
  AttributeMap a;
  a.set("hidden_size", attr_int(2));
  OpRun r = run("LSTM", {tensor<float>({1, 1, 1}, {1}), tensor<float>({1, 8, 2}, std::vector<float>(16, 0)),
                         tensor<float>({1, 8, 2}, std::vector<float>(16, 0))},
                a, 14, 3);
  EXPECT_FALSE(r.status.ok());
}

// ---- Attention / RotaryEmbedding ----

TEST(Attention, FullyMaskedRowIsZeroFloat16) {
  // Q, K, V [1, 1, 2, 1]; the bool mask blocks every key for query 0.
  Data q = half({1, 1, 2, 1}, {1, 1});
  Data k = half({1, 1, 2, 1}, {1, 2});
  Data v = half({1, 1, 2, 1}, {3, 5});
  Data mask = tensor<bool>({2, 2}, {false, false, true, true});
  OpRun r = run("Attention", {q, k, v, mask}, {}, 23);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::vector<float> y = half_values(r.outputs[0]);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0], 0.f);
  const float p1 = 1.f / (1.f + std::exp(1.f));  // softmax weight of key 0
  EXPECT_NEAR(y[1], p1 * 3 + (1 - p1) * 5, 1e-2);
}

TEST(Attention, HeadCountMismatchFails) {
  Data q = tensor<float>({1, 3, 1, 2}, std::vector<float>(6, 1));
  Data kv = tensor<float>({1, 2, 1, 2}, std::vector<float>(4, 1));
  OpRun r = run("Attention", {q, kv, kv}, {}, 23);
  EXPECT_FALSE(r.status.ok());
}

TEST(RotaryEmbedding, PositionOutOfRangeFails) {
  Data x = tensor<float>({1, 1, 1, 2}, {1, 0});
  Data cache = tensor<float>({2, 1}, {1, 0});
  OpRun r = run("RotaryEmbedding", {x, cache, cache, tensor<int64_t>({1, 1}, {7})}, {}, 23);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("position"), std::string::npos) << r.status.message();
}

TEST(RotaryEmbedding, Float16Rotates) {
  Data x = half({1, 1, 1, 2}, {1, 0});
  Data cosc = half({1, 1, 1}, {0});
  Data sinc = half({1, 1, 1}, {1});
  OpRun r = run("RotaryEmbedding", {x, cosc, sinc}, {}, 23);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{0, 1}));
}

// ---- GridSample / AffineGrid / Col2Im / MaxUnpool ----

TEST(GridSample, Float16BorderCenter) {
  AttributeMap a;
  a.set("padding_mode", attr_string("border"));
  Data x = half({1, 1, 2, 2}, {1, 2, 3, 4});
  Data grid = half({1, 1, 2, 2}, {0, 0, 5, 5});
  OpRun r = run("GridSample", {x, grid}, a, 20);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{2.5f, 4}));
}

TEST(GridSample, GridOfWrongRankFails) {
  OpRun r = run("GridSample", {tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}), tensor<float>({1, 2, 2}, {0, 0, 0, 0})}, {}, 20);
  EXPECT_FALSE(r.status.ok());
}

TEST(AffineGrid, IdentityAlignCorners) {
  AttributeMap a;
  a.set("align_corners", attr_int(1));
  OpRun r = run("AffineGrid", {tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0}), tensor<int64_t>({4}, {1, 1, 1, 2})}, a, 20);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{-1, -1, 1, -1}));
}

TEST(Col2Im, OverlappingBlocksSum) {
  // 1-D image of 3 pixels from blocks of 2 with stride 1: the middle pixel gets two.
  Data x = tensor<float>({1, 2, 2}, {1, 2, 10, 20});  // [N, C*block, L]
  OpRun r = run("Col2Im", {x, tensor<int64_t>({2}, {1, 3}), tensor<int64_t>({2}, {1, 2})}, {}, 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 12, 20}));
}

TEST(MaxUnpool, IndexOutOfRangeFails) {
  AttributeMap a;
  a.set("kernel_shape", attr_ints({2}));
  a.set("strides", attr_ints({2}));
  OpRun r = run("MaxUnpool", {tensor<float>({1, 1, 1}, {5}), tensor<int64_t>({1, 1, 1}, {9})}, a, 11);
  EXPECT_FALSE(r.status.ok());
  OpRun ok = run("MaxUnpool", {tensor<float>({1, 1, 1}, {5}), tensor<int64_t>({1, 1, 1}, {1})}, a, 11);
  ASSERT_TRUE(ok.status.ok()) << ok.status.message();
  EXPECT_EQ(values<float>(ok.outputs[0]), (std::vector<float>{0, 5}));
}

// ---- hostile data: no UB, clean results or errors ----

TEST(Hostile, GridSampleNanAndHugeCoordinates) {
  for (const char* pad : {"zeros", "border", "reflection"}) {
    AttributeMap a;
    a.set("padding_mode", attr_string(pad));
    a.set("mode", attr_string("cubic"));
    Data grid = tensor<float>({1, 1, 2, 2}, {NAN, 0, 1e30f, -1e30f});
    OpRun r = run("GridSample", {tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}), grid}, a, 20);
    EXPECT_TRUE(r.status.ok()) << pad << ": " << r.status.message();
  }
}

TEST(Hostile, RoiAlignNanRoiFails) {
  OpRun r = run("RoiAlign",
                {tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}), tensor<float>({1, 4}, {0, 0, NAN, 1e30f}),
                 tensor<int64_t>({1}, {0})},
                {}, 16);
  EXPECT_FALSE(r.status.ok());
}

TEST(Hostile, NmsIgnoresNanScores) {
  Data boxes = tensor<float>({1, 2, 4}, {0, 0, 1, 1, 2, 2, 3, 3});
  Data scores = tensor<float>({1, 1, 2}, {NAN, 0.5f});
  OpRun r = run("NonMaxSuppression", {boxes, scores, tensor<int64_t>({1}, {5})}, {}, 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{0, 0, 1}));
}

TEST(Hostile, ResizeCropWithHugeRoi) {
  AttributeMap a;
  a.set("mode", attr_string("linear"));
  a.set("coordinate_transformation_mode", attr_string("tf_crop_and_resize"));
  a.set("extrapolation_value", attr_float(7));
  OpRun r = run("Resize", {tensor<float>({2}, {1, 2}), tensor<float>({2}, {-1e30f, NAN}), nullptr,
                           tensor<int64_t>({1}, {3})},
                a, 19);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{7, 7, 7}));
}

}  // namespace
}  // namespace openacl::testing
