// Kernels for ops new to the engine: losses, CumProd, LpNormalization, Swish,
// SwiGLU, BitCast, DynamicQuantizeLinear, TensorScatter, Det, DFT, STFT, the
// window generators and MelWeightMatrix. The ONNX node tests cover the common
// float32 cases; these add the other dtypes, edge shapes and bad inputs.
#include <cmath>
#include <complex>

#include "base/fp16.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

OpSpec spec(const char* op, int opset, graph::AttributeMap a = {}, int outputs = 1, std::vector<int> consts = {}) {
  OpSpec s;
  s.op_type = op;
  s.opset = opset;
  s.attrs = std::move(a);
  s.num_outputs = outputs;
  s.constant_inputs = std::move(consts);
  return s;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// ---- losses ----

TEST(NegativeLogLikelihoodLoss, NoneWithWeightsAndNegativeIgnoreIndex) {
  // x [2, 3], targets {2, -1}: the second sample is ignored.
  auto x = tensor<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  auto t = tensor<int32_t>({2}, {2, -1});
  auto w = tensor<float>({3}, {1, 1, 0.5f});
  OpRun r = run_op(spec("NegativeLogLikelihoodLoss", 22,
                        attrs({{"reduction", attr_string("none")}, {"ignore_index", attr_int(-1)}})),
                   {x, t, w});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {1.5f, 0.0f});
}

TEST(NegativeLogLikelihoodLoss, MeanDividesByUsedWeight) {
  auto x = tensor<double>({3, 2}, {-1, -2, -3, -4, -5, -6});
  auto t = tensor<int64_t>({3}, {0, 1, 1});
  auto w = tensor<double>({2}, {2, 1});
  OpRun r = run_op(spec("NegativeLogLikelihoodLoss", 22, attrs({{"ignore_index", attr_int(0)}})), {x, t, w});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NEAR(values<double>(r.outputs[0])[0], (4.0 + 6.0) / 2.0, 1e-12);
}

TEST(NegativeLogLikelihoodLoss, Float16SumOverSpatialDims) {
  // x [1, 2, 2]: x[0, t, d]; targets {1, 0}.
  auto x = half({1, 2, 2}, {-0.5f, -1.0f, -2.0f, -4.0f});
  auto t = tensor<int64_t>({1, 2}, {1, 0});
  OpRun r = run_op(spec("NegativeLogLikelihoodLoss", 22, attrs({{"reduction", attr_string("sum")}})), {x, t});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(half_values(r.outputs[0]), {2.0f + 1.0f});
}

TEST(NegativeLogLikelihoodLoss, TargetOutOfRangeFails) {
  auto x = tensor<float>({1, 3}, {0, 0, 0});
  auto t = tensor<int64_t>({1}, {3});
  OpRun r = run_op(spec("NegativeLogLikelihoodLoss", 22), {x, t});
  EXPECT_FALSE(r.status.ok());
}

TEST(SoftmaxCrossEntropyLoss, LogProbAndMean) {
  auto x = tensor<float>({2, 3}, {1, 2, 3, 0, 0, 0});
  auto t = tensor<int64_t>({2}, {2, 0});
  OpRun r = run_op(spec("SoftmaxCrossEntropyLoss", 13, {}, 2), {x, t});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const float lse0 = std::log(std::exp(1.f) + std::exp(2.f) + std::exp(3.f)), lse1 = std::log(3.f);
  expect_near(values<float>(r.outputs[1]), {1 - lse0, 2 - lse0, 3 - lse0, -lse1, -lse1, -lse1});
  expect_near(values<float>(r.outputs[0]), {((lse0 - 3) + lse1) / 2});
}

TEST(SoftmaxCrossEntropyLoss, BFloat16NoneNd) {
  // x [1, 2, 3] (classes along dim 1, 3 positions); uniform logits give log 2.
  std::vector<uint16_t> b(6, float_to_bf16(0.0f));
  auto x = raw_tensor(DType::kBFloat16, {1, 2, 3}, b);
  auto t = tensor<int32_t>({1, 3}, {0, 1, 0});
  OpRun r = run_op(spec("SoftmaxCrossEntropyLoss", 13, attrs({{"reduction", attr_string("none")}})), {x, t});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, 3}));
  for (uint16_t v : values<uint16_t>(r.outputs[0])) EXPECT_NEAR(bf16_to_float(v), std::log(2.0f), 1e-2);
}

TEST(SoftmaxCrossEntropyLoss, WrongTargetShapeFails) {
  OpRun r = run_op(spec("SoftmaxCrossEntropyLoss", 13),
                   {tensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}), tensor<int64_t>({3}, {0, 0, 0})});
  EXPECT_FALSE(r.status.ok());
}

// ---- CumProd ----

TEST(CumProd, ExclusiveReverseNegativeAxis) {
  auto x = tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  OpRun r = run_op(spec("CumProd", 26, attrs({{"exclusive", attr_int(1)}, {"reverse", attr_int(1)}})),
                   {x, tensor<int64_t>({}, {-1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {6, 3, 1, 30, 6, 1});
}

TEST(CumProd, Float16AndInt64Axis0) {
  OpRun r = run_op(spec("CumProd", 26, {}, 1, {1}), {half({3, 1}, {2, 3, 0.5f}), tensor<int32_t>({1}, {0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(half_values(r.outputs[0]), {2, 6, 3});
  OpRun ri = run_op(spec("CumProd", 26), {tensor<int64_t>({3}, {-2, 3, 4}), tensor<int64_t>({}, {0})});
  ASSERT_TRUE(ri.status.ok()) << ri.status.message();
  EXPECT_EQ(values<int64_t>(ri.outputs[0]), (std::vector<int64_t>{-2, -6, -24}));
}

TEST(CumProd, EmptyAndBadAxis) {
  OpRun r = run_op(spec("CumProd", 26), {tensor<float>({0, 2}, {}), tensor<int64_t>({}, {1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0, 2}));
  OpRun bad = run_op(spec("CumProd", 26), {tensor<float>({2}, {1, 2}), tensor<int64_t>({}, {3})});
  EXPECT_FALSE(bad.status.ok());
}

// ---- LpNormalization, Swish, SwiGLU ----

TEST(LpNormalization, L1Axis0WithZeroColumn) {
  OpRun r = run_op(spec("LpNormalization", 22, attrs({{"p", attr_int(1)}, {"axis", attr_int(0)}})),
                   {tensor<float>({2, 2}, {1, 0, -3, 0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {0.25f, 0, -0.75f, 0});
}

TEST(LpNormalization, L2Float16AndBadP) {
  OpRun r = run_op(spec("LpNormalization", 22), {half({1, 2}, {3, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(half_values(r.outputs[0]), {0.6f, 0.8f}, 1e-3f);
  EXPECT_FALSE(
      run_op(spec("LpNormalization", 22, attrs({{"p", attr_int(3)}})), {tensor<float>({2}, {1, 2})}).status.ok());
}

TEST(Swish, AlphaAndDouble) {
  OpRun r = run_op(spec("Swish", 24, attrs({{"alpha", attr_float(2.0f)}})), {tensor<double>({2}, {0.0, 1.0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto v = values<double>(r.outputs[0]);
  EXPECT_NEAR(v[0], 0.0, 1e-12);
  EXPECT_NEAR(v[1], 1.0 / (1.0 + std::exp(-2.0)), 1e-6);
}

TEST(SwiGLU, GatesAndRejectsShapeMismatch) {
  OpRun r = run_op(spec("SwiGLU", 28), {tensor<float>({2}, {0, 2}), tensor<float>({2}, {5, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {0.0f, 3.0f * 2.0f / (1.0f + std::exp(-2.0f))});
  EXPECT_FALSE(run_op(spec("SwiGLU", 28), {tensor<float>({2}, {0, 2}), tensor<float>({1}, {5})}).status.ok());
}

// ---- BitCast, DynamicQuantizeLinear ----

TEST(BitCast, FloatBitsAndWidthMismatch) {
  OpRun r = run_op(spec("BitCast", 26, attrs({{"to", attr_int(static_cast<int64_t>(DType::kUInt32))}})),
                   {tensor<float>({2}, {1.0f, -2.0f})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint32_t>(r.outputs[0]), (std::vector<uint32_t>{0x3f800000u, 0xc0000000u}));
  OpRun h =
      run_op(spec("BitCast", 26, attrs({{"to", attr_int(static_cast<int64_t>(DType::kUInt16))}})), {half({1}, {1.0f})});
  ASSERT_TRUE(h.status.ok()) << h.status.message();
  EXPECT_EQ(values<uint16_t>(h.outputs[0]), (std::vector<uint16_t>{0x3c00}));
  EXPECT_FALSE(run_op(spec("BitCast", 26, attrs({{"to", attr_int(static_cast<int64_t>(DType::kInt64))}})),
                      {tensor<float>({1}, {1.0f})})
                   .status.ok());
}

TEST(DynamicQuantizeLinear, PositiveRangeAndEmpty) {
  OpRun r = run_op(spec("DynamicQuantizeLinear", 11, {}, 3), {tensor<float>({3}, {0.0f, 1.0f, 2.55f})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{0, 100, 255}));
  EXPECT_NEAR(values<float>(r.outputs[1])[0], 0.01f, 1e-7);
  EXPECT_EQ(values<uint8_t>(r.outputs[2])[0], 0);
  OpRun e = run_op(spec("DynamicQuantizeLinear", 11, {}, 3), {tensor<float>({0}, {})});
  ASSERT_TRUE(e.status.ok()) << e.status.message();
  EXPECT_EQ(values<uint8_t>(e.outputs[2])[0], 0);
}

// ---- TensorScatter, Det ----

TEST(TensorScatter, CircularInt8AndLinearOverrun) {
  // cache [2, 3, 1], update [2, 2, 1], axis 1; batch 1 writes at 2 and wraps to 0.
  auto past = tensor<int8_t>({2, 3, 1}, {0, 0, 0, 0, 0, 0});
  auto upd = tensor<int8_t>({2, 2, 1}, {1, 2, 3, 4});
  auto wi = tensor<int64_t>({2}, {0, 2});
  OpRun r = run_op(spec("TensorScatter", 24, attrs({{"mode", attr_string("circular")}, {"axis", attr_int(1)}})),
                   {past, upd, wi});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{1, 2, 0, 4, 0, 3}));
  OpRun bad = run_op(spec("TensorScatter", 24, attrs({{"axis", attr_int(1)}})), {past, upd, wi});
  EXPECT_FALSE(bad.status.ok());
}

TEST(Det, BatchedDoubleAndSingular) {
  auto x = tensor<double>({2, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2,    // det = 6
                                      1, 2, 3, 4, 5, 6, 7, 8, 9});  // singular
  OpRun r = run_op(spec("Det", 22), {x});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto v = values<double>(r.outputs[0]);
  EXPECT_NEAR(v[0], 6.0, 1e-12);
  EXPECT_NEAR(v[1], 0.0, 1e-12);
  EXPECT_FALSE(run_op(spec("Det", 22), {tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}).status.ok());
}

// ---- DFT, STFT, windows, MelWeightMatrix ----

// Direct DFT of a real signal for comparison.
std::vector<std::complex<double>> naive_dft(const std::vector<float>& x, int64_t n) {
  std::vector<std::complex<double>> out(n);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < static_cast<int64_t>(x.size()) && j < n; ++j)
      out[k] += static_cast<double>(x[j]) * std::polar(1.0, -2.0 * M_PI * k * j / n);
  return out;
}

TEST(DFT, PowerOfTwoAndOddLengthsMatchTheSum) {
  // 8: radix-2; 7: direct sum; 100 and 97 (prime): Bluestein.
  for (int64_t n : {8, 7, 100, 97}) {
    std::vector<float> x;
    for (int64_t i = 0; i < n; ++i) x.push_back(std::sin(0.7f * i) + 0.1f * i);
    OpRun r = run_op(spec("DFT", 20), {tensor<float>({1, n, 1}, x)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, n, 2}));
    const auto want = naive_dft(x, n);
    const auto got = values<float>(r.outputs[0]);
    for (int64_t k = 0; k < n; ++k) {
      EXPECT_NEAR(got[2 * k], want[k].real(), 1e-3) << n << " " << k;
      EXPECT_NEAR(got[2 * k + 1], want[k].imag(), 1e-3) << n << " " << k;
    }
  }
}

TEST(DFT, RfftPaddedThenIrfftRoundTrip) {
  const std::vector<float> x = {1, 2, 3, 4, 5};
  // dft_length 6 zero-pads; onesided keeps 4 bins.
  OpRun f = run_op(spec("DFT", 20, attrs({{"onesided", attr_int(1)}}), 1, {1}),
                   {tensor<float>({1, 5, 1}, x), tensor<int64_t>({}, {6})});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(f.outputs[0]->dims, (std::vector<int64_t>{1, 4, 2}));
  OpRun inv = run_op(spec("DFT", 20, attrs({{"onesided", attr_int(1)}, {"inverse", attr_int(1)}})), {f.outputs[0]});
  ASSERT_TRUE(inv.status.ok()) << inv.status.message();
  EXPECT_EQ(inv.outputs[0]->dims, (std::vector<int64_t>{1, 6, 1}));
  expect_near(values<float>(inv.outputs[0]), {1, 2, 3, 4, 5, 0}, 1e-4f);
}

TEST(DFT, Opset17AxisAttributeInverseDouble) {
  // Complex input [2, 1, 2] along axis 0 (attribute): inverse of {1, 1} is {1, 0}.
  OpRun r = run_op(spec("DFT", 17, attrs({{"axis", attr_int(0)}, {"inverse", attr_int(1)}})),
                   {tensor<double>({2, 1, 2}, {1, 0, 1, 0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto v = values<double>(r.outputs[0]);
  EXPECT_NEAR(v[0], 1, 1e-12);
  EXPECT_NEAR(v[2], 0, 1e-12);
  EXPECT_FALSE(run_op(spec("DFT", 20), {tensor<float>({4, 3}, std::vector<float>(12, 0))}).status.ok());
}

TEST(DFT, Float16ComplexBluesteinRoundTrip) {
  // Forward then inverse over length 67 (Bluestein) gives the signal back.
  std::vector<float> x;
  for (int i = 0; i < 67 * 2; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
  OpRun f = run_op(spec("DFT", 20), {half({1, 67, 2}, x)});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  OpRun inv = run_op(spec("DFT", 20, attrs({{"inverse", attr_int(1)}})), {f.outputs[0]});
  ASSERT_TRUE(inv.status.ok()) << inv.status.message();
  expect_near(half_values(inv.outputs[0]), x, 0.05f);
}

TEST(STFT, RectangularFramesOfConstant) {
  // A constant signal: each frame's DC bin is frame_length, the rest 0.
  OpRun r = run_op(spec("STFT", 17, {}, 1, {1, 3}), {tensor<float>({1, 8, 1}, std::vector<float>(8, 1.0f)),
                                                     tensor<int64_t>({}, {2}), nullptr, tensor<int64_t>({}, {4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, 3, 3, 2}));
  const auto v = values<float>(r.outputs[0]);
  for (int f = 0; f < 3; ++f) {
    EXPECT_NEAR(v[f * 6], 4.0f, 1e-5);
    for (int k = 1; k < 6; ++k) EXPECT_NEAR(v[f * 6 + k], 0.0f, 1e-5);
  }
}

TEST(Windows, IntegerAndDoubleOutputs) {
  OpRun h =
      run_op(spec("HannWindow", 17, attrs({{"output_datatype", attr_int(static_cast<int64_t>(DType::kFloat64))}})),
             {tensor<int64_t>({}, {4})});
  ASSERT_TRUE(h.status.ok()) << h.status.message();
  const auto hv = values<double>(h.outputs[0]);
  EXPECT_NEAR(hv[0], 0.0, 1e-12);
  EXPECT_NEAR(hv[1], 0.5, 1e-12);
  EXPECT_NEAR(hv[2], 1.0, 1e-12);
  OpRun hi = run_op(
      spec("HannWindow", 17,
           attrs({{"output_datatype", attr_int(static_cast<int64_t>(DType::kInt32))}, {"periodic", attr_int(0)}})),
      {tensor<int32_t>({}, {3})});
  ASSERT_TRUE(hi.status.ok()) << hi.status.message();
  EXPECT_EQ(values<int32_t>(hi.outputs[0]), (std::vector<int32_t>{0, 1, 0}));
  OpRun b = run_op(spec("BlackmanWindow", 17), {tensor<int32_t>({}, {4})});
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  expect_near(values<float>(b.outputs[0]), {0.0f, 0.34f, 1.0f, 0.34f});
  OpRun one = run_op(spec("HammingWindow", 17, attrs({{"periodic", attr_int(0)}})), {tensor<int32_t>({}, {1})});
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  expect_near(values<float>(one.outputs[0]), {1.0f});
  EXPECT_FALSE(run_op(spec("HannWindow", 17), {tensor<int32_t>({}, {-1})}).status.ok());
  OpRun empty = run_op(spec("HannWindow", 17), {tensor<int64_t>({}, {0})});
  ASSERT_TRUE(empty.status.ok()) << empty.status.message();
  EXPECT_EQ(empty.outputs[0]->dims, (std::vector<int64_t>{0}));
}

TEST(MelWeightMatrix, MatchesReference) {
  OpRun r = run_op(spec("MelWeightMatrix", 17),
                   {tensor<int32_t>({}, {4}), tensor<int32_t>({}, {16}), tensor<int32_t>({}, {8000}),
                    tensor<float>({}, {0.0f}), tensor<float>({}, {4000.0f})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{9, 4}));
  std::vector<float> want(36, 0.0f);
  want[0] = want[5] = want[10] = want[15] = 1.0f;
  want[19] = 0.5f;
  expect_near(values<float>(r.outputs[0]), want);
}

}  // namespace
}  // namespace openacl::testing
