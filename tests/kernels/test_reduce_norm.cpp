// Reductions, ArgMax/ArgMin, TopK, CumSum, Softmax family and normalisations:
// the cases the ONNX node tests miss (dtypes, old opsets, layouts that take
// the general paths, big inputs that take the parallel paths, bad input).
#include <cmath>
#include <numeric>

#include "base/fp16.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

OpRun run_with(const std::string& op, std::vector<Data> in, graph::AttributeMap attrs, int opset,
               int outputs = 1) {
  OpSpec s;
  s.op_type = op;
  s.attrs = std::move(attrs);
  s.opset = opset;
  s.num_outputs = outputs;
  return run_op(s, in);
}

// [2, 3, 4] = 0..23
Data iota3() {
  std::vector<float> v(24);
  std::iota(v.begin(), v.end(), 0.f);
  return tensor<float>({2, 3, 4}, v);
}

TEST(Reduce, SumAxesInputNegativeKeepdims) {
  OpRun r = run_op("ReduceSum", {iota3(), tensor<int64_t>({1}, {-1})}, attrs({{"keepdims", attr_int(1)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{6, 22, 38, 54, 70, 86}));
}

TEST(Reduce, MiddleAndOuterAxesTakeEveryPath) {
  // axis 1 -> [outer, R, inner]; axes 0,2 -> general; axis 0 -> [R, inner]; all -> scalar.
  OpRun r = run_op("ReduceSum", {iota3(), tensor<int64_t>({1}, {1})}, attrs({{"keepdims", attr_int(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57}));
  r = run_op("ReduceSum", {iota3(), tensor<int64_t>({2}, {0, 2})}, attrs({{"keepdims", attr_int(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{60, 92, 124}));
  r = run_op("ReduceMax", {iota3(), tensor<int64_t>({1}, {0})}, attrs({{"keepdims", attr_int(0)}}), 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<float>(r.outputs[0])[0], 12.f);
  r = run_op("ReduceMean", {iota3()}, attrs({{"keepdims", attr_int(0)}}), 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{}));
  EXPECT_FLOAT_EQ(values<float>(r.outputs[0])[0], 11.5f);
}

TEST(Reduce, AxesAttributeInOldOpsets) {
  OpRun r = run_op("ReduceL2", {tensor<float>({2, 2}, {3, 4, 6, 8})}, attrs({{"axes", attr_ints({1})}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{2, 1}));
  expect_near(values<float>(r.outputs[0]), {5, 10});
  r = run_op("ReduceSum", {tensor<float>({2, 2}, {1, 2, 3, 4})}, attrs({{"axes", attr_ints({0})}}), 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {4, 6});
}

TEST(Reduce, NoopWithEmptyAxesStillMapsEachElement) {
  auto x = tensor<float>({3}, {-1, 2, -3});
  OpRun r = run_op("ReduceSumSquare", {x, tensor<int64_t>({0}, {})}, attrs({{"noop_with_empty_axes", attr_int(1)}}), 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 4, 9}));
  r = run_op("ReduceSum", {x, tensor<int64_t>({0}, {})}, attrs({{"keepdims", attr_int(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{-2}));
}

TEST(Reduce, EmptySetGivesIdentity) {
  auto x = tensor<float>({2, 0}, {});
  auto ax = tensor<int64_t>({1}, {1});
  struct Case { const char* op; float want; };
  for (Case c : {Case{"ReduceSum", 0.f}, Case{"ReduceProd", 1.f}, Case{"ReduceMax", -INFINITY},
                 Case{"ReduceMin", INFINITY}, Case{"ReduceLogSumExp", -INFINITY}, Case{"ReduceL2", 0.f}}) {
    OpRun r = run_op(c.op, {x, ax}, {}, 18);
    ASSERT_TRUE(r.status.ok()) << c.op << ": " << r.status.message();
    EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{c.want, c.want})) << c.op;
  }
  OpRun r = run_op("ReduceMin", {tensor<bool>({2, 0}, {}), ax}, {}, 20);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{true, true}));
}

TEST(Reduce, IntegerAndBoolTypes) {
  OpRun r = run_op("ReduceProd", {tensor<int32_t>({2, 3}, {1, 2, 3, -4, 5, 6})}, attrs({{"keepdims", attr_int(0)}}), 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{-720}));
  r = run_op("ReduceMin", {tensor<uint8_t>({2, 2}, {7, 3, 200, 9}), tensor<int64_t>({1}, {1})}, {}, 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{3, 9}));
  r = run_op("ReduceMax", {tensor<bool>({2, 2}, {false, true, false, false}), tensor<int64_t>({1}, {1})}, {}, 20);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{true, false}));
  r = run_op("ReduceMean", {tensor<int64_t>({3}, {1, 2, 4})}, {}, 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{2}));
}

TEST(Reduce, Float16AccumulatesInFloat) {
  // 4096 x 0.1 summed in float16 would stall at 256; float accumulation does not.
  std::vector<float> v(4096, 0.1f);
  OpRun r = run_op("ReduceSum", {half({4096}, v)}, attrs({{"keepdims", attr_int(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NEAR(half_values(r.outputs[0])[0], 409.5f, 1.0f);
}

TEST(Reduce, LogSumExpIsStable) {
  OpRun r = run_op("ReduceLogSumExp", {tensor<double>({2}, {1000, 1000})}, {}, 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NEAR(values<double>(r.outputs[0])[0], 1000 + std::log(2.0), 1e-9);
}

TEST(Reduce, LongRowsTakeTheSplitPath) {
  const int64_t n = 1 << 18;
  std::vector<float> v(static_cast<size_t>(n), 1.f);
  v[12345] = 7.f;
  OpRun r = run_op("ReduceMax", {tensor<float>({n}, v)}, {}, 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0])[0], 7.f);
  r = run_op("ReduceSum", {tensor<float>({2, n / 2}, v), tensor<int64_t>({1}, {1})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {n / 2.f + 6.f, n / 2.f});
}

TEST(Reduce, BadAxisFailsCleanly) {
  OpRun r = run_op("ReduceSum", {iota3(), tensor<int64_t>({1}, {3})}, {}, 13);
  EXPECT_FALSE(r.status.ok());
}

TEST(ArgMinMax, SelectLastIndexAndFloat16) {
  auto x = tensor<float>({2, 3}, {1, 5, 5, 2, 2, 0});
  OpRun r = run_op("ArgMax", {x}, attrs({{"axis", attr_int(-1)}, {"select_last_index", attr_int(1)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{2, 1}));
  r = run_op("ArgMax", {x}, attrs({{"axis", attr_int(1)}, {"keepdims", attr_int(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{1, 0}));
  r = run_op("ArgMin", {half({2, 3}, {1, 5, 5, 2, 2, 0})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{0, 1, 1}));
}

TEST(TopK, TiesGoToTheLowerIndex) {
  auto x = tensor<int32_t>({2, 4}, {3, 1, 3, 2, 0, 0, 0, 0});
  OpRun r = run_with("TopK", {x, tensor<int64_t>({1}, {2})}, {}, 11, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{3, 3, 0, 0}));
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{0, 2, 0, 1}));
  r = run_with("TopK", {x, tensor<int64_t>({1}, {1})}, attrs({{"largest", attr_int(0)}, {"axis", attr_int(0)}}), 11, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(TopK, AttributeKAndBadK) {
  OpRun r = run_with("TopK", {tensor<float>({3}, {1, 3, 2})}, attrs({{"k", attr_int(2)}}), 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{3, 2}));
  r = run_with("TopK", {tensor<float>({3}, {1, 3, 2}), tensor<int64_t>({1}, {4})}, {}, 11, 2);
  EXPECT_FALSE(r.status.ok());
  r = run_with("TopK", {tensor<float>({3}, {1, 3, 2}), tensor<int64_t>({1}, {0})}, {}, 11, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0}));
}

TEST(CumSum, ExclusiveReverseInnerAxis) {
  auto x = tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  OpRun r = run_op("CumSum", {x, tensor<int64_t>({}, {0})}, attrs({{"exclusive", attr_int(1)}, {"reverse", attr_int(1)}}), 14);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{4, 5, 6, 0, 0, 0}));
  r = run_op("CumSum", {half({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>({1}, {-1})}, {}, 14);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  r = run_op("CumSum", {x, tensor<int64_t>({}, {2})}, {}, 14);
  EXPECT_FALSE(r.status.ok());
}

TEST(Softmax, OldOpsetsFlattenFromAxis) {
  // [1, 2, 2]: opset 11 axis 1 normalises all 4 values; opset 13 axis 1 pairs.
  auto x = tensor<float>({1, 2, 2}, {0, 0, 0, 0});
  OpRun r = run_op("Softmax", {x}, attrs({{"axis", attr_int(1)}}), 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {0.25f, 0.25f, 0.25f, 0.25f});
  r = run_op("Softmax", {x}, attrs({{"axis", attr_int(1)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {0.5f, 0.5f, 0.5f, 0.5f});
  r = run_op("Hardmax", {tensor<float>({1, 2, 2}, {1, 3, 3, 2})}, attrs({{"axis", attr_int(1)}}), 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 1, 0, 0}));
}

TEST(Softmax, LargeValuesFloat16AndLog) {
  OpRun r = run_op("Softmax", {half({2}, {10000, 10000})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(half_values(r.outputs[0]), (std::vector<float>{0.5f, 0.5f}));
  r = run_op("LogSoftmax", {tensor<double>({2, 2}, {1, 1, 1000, 1000})}, attrs({{"axis", attr_int(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::vector<double> y = values<double>(r.outputs[0]);
  EXPECT_NEAR(y[2], 0.0, 1e-9);
  EXPECT_NEAR(y[0], -999.0, 1e-9);
}

// The float path uses its own vector exp: compare with double on both the
// contiguous (last axis) and strided (axis 0) paths, with odd sizes for the
// scalar tails and -inf entries (masked positions) that must give exactly 0.
TEST(Softmax, FloatMatchesDoubleOnBothPaths) {
  const int64_t rows = 7, cols = 13;
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * 30.f;
  v[3] = -INFINITY;
  v[cols + 5] = -INFINITY;
  for (int64_t axis : {0, 1}) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      OpRun r = run_op(op, {tensor<float>({rows, cols}, v)}, attrs({{"axis", attr_int(axis)}}), 13);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      const std::vector<float> y = values<float>(r.outputs[0]);
      const bool log = std::string(op) == "LogSoftmax";
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          // The group this element belongs to: a column (axis 0) or a row (axis 1).
          double m = -INFINITY, s = 0;
          const int64_t n = axis == 0 ? rows : cols;
          auto at = [&](int64_t k) { return static_cast<double>(axis == 0 ? v[k * cols + j] : v[i * cols + k]); };
          for (int64_t k = 0; k < n; ++k) m = std::max(m, at(k));
          for (int64_t k = 0; k < n; ++k) s += std::exp(at(k) - m);
          const double x = v[static_cast<size_t>(i * cols + j)];
          const double want = log ? x - m - std::log(s) : std::exp(x - m) / s;
          const float got = y[static_cast<size_t>(i * cols + j)];
          if (std::isinf(want)) {
            EXPECT_EQ(got, static_cast<float>(want)) << op << " axis " << axis;
          } else {
            EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::fabs(want))) << op << " axis " << axis << " at " << i << "," << j;
          }
        }
    }
  }
}

TEST(Norm, BatchNormInferenceAndTrainingUnsupported) {
  auto x = tensor<float>({1, 2, 2}, {1, 2, 3, 4});
  auto s = tensor<float>({2}, {1, 2}), b = tensor<float>({2}, {0, 1});
  auto m = tensor<float>({2}, {1, 3}), v = tensor<float>({2}, {1, 4});
  OpRun r = run_op("BatchNormalization", {x, s, b, m, v}, attrs({{"epsilon", attr_float(0)}}), 15);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {0, 1, 1, 2});
  r = run_op("BatchNormalization", {x, s, b, m, v}, attrs({{"training_mode", attr_int(1)}}), 15);
  EXPECT_FALSE(r.status.ok());
}

TEST(Norm, LayerNormStatsOutputs) {
  OpRun r = run_with("LayerNormalization", {tensor<float>({2, 2}, {1, 3, 2, 4}), tensor<float>({2}, {1, 1})},
                     attrs({{"epsilon", attr_float(0)}}), 17, 3);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {-1, 1, -1, 1});
  EXPECT_EQ(r.outputs[1]->dims, (std::vector<int64_t>{2, 1}));
  expect_near(values<float>(r.outputs[1]), {2, 3});
  EXPECT_NEAR(values<float>(r.outputs[2])[0], 1.f, 1e-6f);
}

// float32 Y only, scale and B over exactly the normalised dims (the eight-
// lane path): against a double reference, for row lengths with and without
// a tail of fewer than 8 / 16 values, with and without B, and RMS.
TEST(Norm, LayerNormAndRmsNormFloat32RowsMatchReference) {
  for (const int64_t cols : {3, 8, 21, 48, 768}) {
    const int64_t rows = 5;
    std::vector<float> x = random_floats(static_cast<size_t>(rows * cols), 11);
    const std::vector<float> scale = random_floats(static_cast<size_t>(cols), 12);
    const std::vector<float> bias = random_floats(static_cast<size_t>(cols), 13);
    for (float& v : x) v += 3.f;  // a mean well away from 0
    for (const bool rms : {false, true})
      for (const bool with_bias : {false, true}) {
        if (rms && with_bias) continue;
        std::vector<Data> in = {tensor<float>({rows, 1, cols}, x), tensor<float>({1, cols}, scale)};
        if (with_bias) in.push_back(tensor<float>({cols}, bias));
        OpRun r = rms ? run_op("RMSNormalization", in, attrs({{"epsilon", attr_float(1e-3f)}}), 23)
                      : run_op("LayerNormalization", in, attrs({{"epsilon", attr_float(1e-3f)}}), 17);
        ASSERT_TRUE(r.status.ok()) << r.status.message();
        const std::vector<float> y = values<float>(r.outputs[0]);
        ASSERT_EQ(y.size(), x.size());
        for (int64_t i = 0; i < rows; ++i) {
          double mean = 0, var = 0;
          for (int64_t j = 0; j < cols; ++j) mean += rms ? 0.0 : x[static_cast<size_t>(i * cols + j)];
          mean /= static_cast<double>(cols);
          for (int64_t j = 0; j < cols; ++j) {
            const double d = x[static_cast<size_t>(i * cols + j)] - mean;
            var += d * d;
          }
          const double inv = 1.0 / std::sqrt(var / static_cast<double>(cols) + 1e-3);
          for (int64_t j = 0; j < cols; ++j) {
            const size_t k = static_cast<size_t>(i * cols + j);
            const size_t c = static_cast<size_t>(j);
            const double want = (x[k] - mean) * inv * scale[c] + (with_bias ? bias[c] : 0.0);
            ASSERT_NEAR(y[k], want, 1e-4 * (1 + std::fabs(want))) << "cols " << cols << (rms ? " rms" : "")
                                                                   << (with_bias ? " bias" : "") << " at " << k;
          }
        }
      }
  }
}

TEST(Norm, RmsNormFloat16AndScaleBroadcast) {
  OpRun r = run_op("RMSNormalization", {half({2, 2}, {3, 4, 0, 0}), half({1}, {2})},
                   attrs({{"epsilon", attr_float(0)}}), 23);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::vector<float> y = half_values(r.outputs[0]);
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5f) * 2, 1e-2f);
  r = run_op("RMSNormalization", {tensor<float>({2, 2}, {1, 2, 3, 4}), tensor<float>({3}, {1, 1, 1})}, {}, 23);
  EXPECT_FALSE(r.status.ok());
}

TEST(Norm, GroupNormPerGroupScaleOpset18) {
  auto x = tensor<float>({1, 4, 1}, {1, 3, 4, 6});
  OpRun r = run_op("GroupNormalization", {x, tensor<float>({2}, {1, 2}), tensor<float>({2}, {0, 1})},
                   attrs({{"num_groups", attr_int(2)}, {"epsilon", attr_float(0)}}), 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {-1, 1, -1, 3});
}

TEST(Norm, InstanceNormLrnMvn) {
  OpRun r = run_op("InstanceNormalization", {tensor<float>({1, 1, 2}, {1, 3}), tensor<float>({1}, {2}), tensor<float>({1}, {1})},
                   attrs({{"epsilon", attr_float(0)}}), 6);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {-1, 3});
  r = run_op("LRN", {tensor<float>({1, 2, 1}, {1, 1})},
             attrs({{"size", attr_int(2)}, {"alpha", attr_float(2)}, {"beta", attr_float(1)}, {"bias", attr_float(0)}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {0.5f, 1.f});
  r = run_op("MeanVarianceNormalization", {tensor<float>({1, 2, 2}, {1, 3, 5, 5})}, attrs({{"axes", attr_ints({2})}}), 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {-1, 1, 0, 0});
  // Default axes 0, 2, 3: per-channel statistics across the batch.
  r = run_op("MeanVarianceNormalization", {tensor<float>({2, 2, 1, 1}, {1, 2, 3, 6})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {-1, -1, 1, 1});
}

}  // namespace
}  // namespace openacl::testing
