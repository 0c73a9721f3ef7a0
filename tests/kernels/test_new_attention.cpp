// LinearAttention, CausalConvWithState, FlexAttention, DeformConv and
// TfIdfVectorizer: small hand-computed cases, float16, bad input.
#include <cmath>

#include "base/fp16.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

OpSpec spec(const char* op, int opset, graph::AttributeMap a = {}, int outputs = 1, const char* domain = "") {
  OpSpec s;
  s.op_type = op;
  s.opset = opset;
  s.attrs = std::move(a);
  s.num_outputs = outputs;
  s.domain = domain;
  return s;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

graph::AttributeMap la_attrs(const char* rule, int64_t hq = 1, int64_t hkv = 1) {
  return attrs({{"update_rule", attr_string(rule)}, {"q_num_heads", attr_int(hq)}, {"kv_num_heads", attr_int(hkv)},
                {"scale", attr_float(1.0f)}});
}

// B=1, T=2, one head, d_k = d_v = 2: S1 = k1⊗v1, S2 = S1 + k2⊗v2.
TEST(LinearAttention, Linear) {
  auto q = tensor<float>({1, 2, 2}, {1, 1, 1, 2});
  auto k = tensor<float>({1, 2, 2}, {1, 0, 0, 1});
  auto v = tensor<float>({1, 2, 2}, {1, 2, 3, 4});
  OpRun r = run_op(spec("LinearAttention", 27, la_attrs("linear"), 2), {q, k, v});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {1, 2, 7, 10});
  expect_near(values<float>(r.outputs[1]), {1, 2, 3, 4});
}

TEST(LinearAttention, LinearFloat16WithPast) {
  auto q = half({1, 2, 2}, {1, 1, 1, 2});
  auto k = half({1, 2, 2}, {1, 0, 0, 1});
  auto v = half({1, 2, 2}, {1, 2, 3, 4});
  auto past = half({1, 1, 2, 2}, {1, 0, 0, 1});
  OpRun r = run_op(spec("LinearAttention", 27, la_attrs("linear"), 2), {q, k, v, past});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kFloat16);
  expect_near(half_values(r.outputs[0]), {2, 3, 8, 12}, 1e-2f);
  expect_near(half_values(r.outputs[1]), {2, 2, 3, 5}, 1e-2f);
}

// Decay 0.5 per head, beta 1: the delta rule writes only what S lacks.
TEST(LinearAttention, GatedDelta) {
  auto q = tensor<float>({1, 2, 2}, {1, 1, 1, 2});
  auto k = tensor<float>({1, 2, 2}, {1, 0, 1, 0});
  auto v = tensor<float>({1, 2, 2}, {1, 2, 3, 4});
  const float g = std::log(0.5f);
  auto decay = tensor<float>({1, 2, 1}, {g, g});
  auto beta = tensor<float>({1, 2, 1}, {1, 1});
  OpRun r = run_op(spec("LinearAttention", 27, la_attrs("gated_delta"), 2), {q, k, v, nullptr, decay, beta});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {1, 2, 3, 4});
  expect_near(values<float>(r.outputs[1]), {3, 4, 0, 0});
}

// Two query heads share one KV head.
TEST(LinearAttention, GroupedQuery) {
  auto q = tensor<float>({1, 1, 4}, {1, 0, 0, 2});
  auto k = tensor<float>({1, 1, 2}, {1, 1});
  auto v = tensor<float>({1, 1, 2}, {2, 3});
  OpRun r = run_op(spec("LinearAttention", 27, la_attrs("linear", 2, 1), 2), {q, k, v});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {2, 3, 4, 6});
}

TEST(LinearAttention, BadInput) {
  auto x = tensor<float>({1, 2, 2}, {1, 1, 1, 2});
  // gated needs decay
  EXPECT_FALSE(run_op(spec("LinearAttention", 27, la_attrs("gated"), 2), {x, x, x}).status.ok());
  // q heads not a multiple of kv heads
  EXPECT_FALSE(run_op(spec("LinearAttention", 27, la_attrs("linear", 1, 2), 2), {x, x, x}).status.ok());
  // past_state of the wrong shape
  auto past = tensor<float>({1, 1, 3, 2}, {0, 0, 0, 0, 0, 0});
  EXPECT_FALSE(run_op(spec("LinearAttention", 27, la_attrs("linear"), 2), {x, x, x, past}).status.ok());
}

TEST(CausalConvWithState, PastAndBias) {
  auto x = tensor<float>({1, 1, 3}, {1, 2, 3});
  auto w = tensor<float>({1, 1, 2}, {1, 10});
  auto b = tensor<float>({1}, {1});
  auto past = tensor<float>({1, 1, 1}, {5});
  OpRun r = run_op(spec("CausalConvWithState", 27, {}, 2), {x, w, b, past});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {16, 22, 33});
  expect_near(values<float>(r.outputs[1]), {3});
  // no past: zeros on the left
  r = run_op(spec("CausalConvWithState", 27, {}, 2), {x, w});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {10, 21, 32});
}

TEST(CausalConvWithState, SiluFloat16) {
  auto x = half({1, 2, 2}, {1, -1, 0.5f, 2});
  auto w = half({2, 1, 1}, {1, 2});
  OpRun r = run_op(spec("CausalConvWithState", 27, attrs({{"activation", attr_string("silu")}}), 2), {x, w});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto silu = [](float v) { return v / (1 + std::exp(-v)); };
  expect_near(half_values(r.outputs[0]), {silu(1), silu(-1), silu(1), silu(4)}, 2e-3f);
  EXPECT_EQ(r.outputs[1]->elements(), 0);
}

TEST(CausalConvWithState, BadInput) {
  auto x = tensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  auto w = tensor<float>({1, 1, 2}, {1, 1});  // one channel, input has two
  EXPECT_FALSE(run_op(spec("CausalConvWithState", 27, {}, 2), {x, w}).status.ok());
  auto w2 = tensor<float>({2, 1, 2}, {1, 1, 1, 1});
  auto past = tensor<float>({1, 2, 2}, {0, 0, 0, 0});  // k - 1 = 1 column expected
  EXPECT_FALSE(run_op(spec("CausalConvWithState", 27, {}, 2), {x, w2, nullptr, past}).status.ok());
}

// scores [0, ln 3] -> probabilities [1/4, 3/4].
TEST(FlexAttention, Basic) {
  auto q = tensor<float>({1, 1, 1, 1}, {1});
  auto k = tensor<float>({1, 1, 2, 1}, {0, std::log(3.0f)});
  auto v = tensor<float>({1, 1, 2, 1}, {4, 8});
  OpRun r = run_op(spec("FlexAttention", 1, attrs({{"scale", attr_float(1)}}), 1, "ai.onnx.preview"), {q, k, v});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {7});
}

TEST(FlexAttention, GroupedQueryFloat16) {
  auto q = half({1, 2, 1, 1}, {1, 0});
  auto k = half({1, 1, 2, 1}, {0, std::log(3.0f)});
  auto v = half({1, 1, 2, 1}, {4, 8});
  OpRun r = run_op(spec("FlexAttention", 1, attrs({{"scale", attr_float(1)}}), 1, "ai.onnx.preview"), {q, k, v});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(half_values(r.outputs[0]), {7, 6}, 1e-2f);
}

TEST(FlexAttention, BadInput) {
  auto x = tensor<float>({1, 2, 2}, {1, 1, 1, 2});
  EXPECT_FALSE(run_op(spec("FlexAttention", 1, {}, 1, "ai.onnx.preview"), {x, x, x}).status.ok());
  auto q = tensor<float>({1, 1, 1, 2}, {1, 1});
  auto k = tensor<float>({1, 1, 1, 3}, {1, 1, 1});  // head size differs from Q's
  EXPECT_FALSE(run_op(spec("FlexAttention", 1, {}, 1, "ai.onnx.preview"), {q, k, k}).status.ok());
}

// Zero offsets make DeformConv a plain convolution; the mask scales taps.
TEST(DeformConv, ZeroOffsetMaskBias) {
  auto x = tensor<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto w = tensor<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  auto off = tensor<float>({1, 8, 2, 2}, std::vector<float>(32, 0.0f));
  OpRun r = run_op(spec("DeformConv", 22), {x, w, off});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {12, 16, 24, 28});
  auto b = tensor<float>({1}, {1});
  auto mask = tensor<float>({1, 4, 2, 2}, std::vector<float>(16, 0.5f));
  r = run_op(spec("DeformConv", 22), {x, w, off, b, mask});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {7, 9, 13, 15});
}

// A half-pixel shift right on every tap: bilinear between columns, zero past the edge.
TEST(DeformConv, FractionalOffsetFloat16) {
  auto x = half({1, 1, 2, 2}, {1, 2, 3, 4});
  auto w = half({1, 1, 1, 1}, {1});
  auto off = half({1, 2, 2, 2}, {0, 0, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f});
  OpRun r = run_op(spec("DeformConv", 22), {x, w, off});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(half_values(r.outputs[0]), {1.5f, 1, 3.5f, 2}, 1e-3f);
}

TEST(DeformConv, BadInput) {
  auto x = tensor<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto w = tensor<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  auto off = tensor<float>({1, 4, 2, 2}, std::vector<float>(16, 0.0f));  // needs 8 channels
  EXPECT_FALSE(run_op(spec("DeformConv", 22), {x, w, off}).status.ok());
}

graph::AttributeMap tfidf_attrs(const char* mode, std::vector<float> weights = {}) {
  graph::AttributeMap a = attrs({{"mode", attr_string(mode)}, {"min_gram_length", attr_int(1)},
                                 {"max_gram_length", attr_int(2)}, {"max_skip_count", attr_int(0)},
                                 {"ngram_counts", attr_ints({0, 2})}, {"ngram_indexes", attr_ints({0, 1, 2})},
                                 {"pool_int64s", attr_ints({1, 2, 1, 2})}});
  if (!weights.empty()) a.set("weights", attr_floats(weights));
  return a;
}

TEST(TfIdfVectorizer, Modes) {
  auto x = tensor<int64_t>({2, 4}, {1, 2, 1, 2, 3, 3, 2, 3});
  OpRun r = run_op(spec("TfIdfVectorizer", 9, tfidf_attrs("TF")), {x});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {2, 2, 2, 0, 1, 0});
  r = run_op(spec("TfIdfVectorizer", 9, tfidf_attrs("TFIDF", {1, 0.5f, 2})), {x});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {2, 1, 4, 0, 0.5f, 0});
  auto x32 = tensor<int32_t>({4}, {1, 2, 1, 2});
  r = run_op(spec("TfIdfVectorizer", 9, tfidf_attrs("IDF", {1, 0.5f, 2})), {x32});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), {1, 0.5f, 2});
}

TEST(TfIdfVectorizer, BadInput) {
  auto x = tensor<float>({4}, {1, 2, 1, 2});  // float tokens are not allowed
  EXPECT_FALSE(run_op(spec("TfIdfVectorizer", 9, tfidf_attrs("TF")), {x}).status.ok());
  auto xi = tensor<int64_t>({4}, {1, 2, 1, 2});
  EXPECT_FALSE(run_op(spec("TfIdfVectorizer", 9, tfidf_attrs("BM25")), {xi}).status.ok());
}

}  // namespace
}  // namespace openacl::testing
