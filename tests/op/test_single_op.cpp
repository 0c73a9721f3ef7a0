// The op layer through its own API: catalogue lookups, argument checks with
// CANN's codes, compile + execute on the model path, cache, infer_shape.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/codes.h"
#include "op/single_op.h"

namespace openacl::op {
namespace {

TensorSpec spec(DType t, std::vector<int64_t> dims) {
  TensorSpec s;
  s.dtype = t;
  s.dims = std::move(dims);
  return s;
}

model::IoBuffer buf(std::vector<float>& v) { return {v.data(), v.size() * sizeof(float)}; }

TEST(OpCatalog, KnowsCoreOpsAndSuggestsNearNames) {
  EXPECT_NE(Catalog::instance().find("Add"), nullptr);
  EXPECT_NE(Catalog::instance().find("Cast"), nullptr);
  EXPECT_EQ(Catalog::instance().find("Addd"), nullptr);
  auto near = Catalog::instance().nearest("Addd");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "Add");
  std::shared_ptr<CompiledOp> op;
  Status st = CompiledOp::compile("Addd", {spec(DType::kFloat32, {2})}, {spec(DType::kFloat32, {2})}, {}, {}, &op);
  EXPECT_EQ(st.code(), code::kOpNotFound);
  EXPECT_NE(st.message().find("did you mean Add"), std::string::npos) << st.message();
}

TEST(OpKey, DistinguishesEverythingThatMatters) {
  auto a = spec(DType::kFloat32, {2, 3});
  auto b = spec(DType::kFloat32, {3, 2});
  OpAttrs none, one{{"alpha", AttrValue::of_float(1.0f)}}, other{{"alpha", AttrValue::of_float(1.5f)}};
  const std::string k = op_key("Add", {a, a}, {a}, none);
  EXPECT_EQ(k, op_key("Add", {a, a}, {a}, none));
  EXPECT_NE(k, op_key("Add", {b, b}, {b}, none));
  EXPECT_NE(k, op_key("Sub", {a, a}, {a}, none));
  EXPECT_NE(op_key("Add", {a, a}, {a}, one), op_key("Add", {a, a}, {a}, other));
  EXPECT_NE(op_key("Add", {a, a}, {a}, one), k);
  auto f16 = spec(DType::kFloat16, {2, 3});
  EXPECT_NE(k, op_key("Add", {f16, f16}, {f16}, none));
  auto c = a;
  std::vector<float> v(6, 1.0f);
  c.constant = graph::TensorData::copy_of(DType::kFloat32, {2, 3}, v.data(), 24);
  EXPECT_NE(k, op_key("Add", {a, c}, {a}, none));
  auto c2 = c;
  v[5] = 2.0f;
  c2.constant = graph::TensorData::copy_of(DType::kFloat32, {2, 3}, v.data(), 24);
  EXPECT_NE(op_key("Add", {a, c}, {a}, none), op_key("Add", {a, c2}, {a}, none));
}

TEST(SingleOp, AddBroadcastsAndRuns) {
  std::shared_ptr<CompiledOp> op;
  ASSERT_TRUE(CompiledOp::compile("Add", {spec(DType::kFloat32, {2, 3}), spec(DType::kFloat32, {3})},
                                  {spec(DType::kFloat32, {2, 3})}, {}, {}, &op)
                  .ok());
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {10, 20, 30}, z(6, 0);
  ASSERT_TRUE(op->execute({buf(x), buf(y)}, {buf(z)}).ok());
  EXPECT_EQ(z, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // Buffers too small: refused, nothing written.
  std::vector<float> small(5, -1);
  Status st = op->execute({buf(x), buf(y)}, {buf(small)});
  EXPECT_EQ(st.code(), code::kOpOutputNotMatch) << st.message();
  EXPECT_EQ(small, std::vector<float>(5, -1));
  std::vector<float> short_in(2);
  EXPECT_EQ(op->execute({buf(x), buf(short_in)}, {buf(z)}).code(), code::kOpInputNotMatch);
}

TEST(SingleOp, ArgumentErrorsCarryCannCodes) {
  std::shared_ptr<CompiledOp> op;
  auto f = spec(DType::kFloat32, {4});
  // Input count.
  Status st = CompiledOp::compile("Add", {f}, {f}, {}, {}, &op);
  EXPECT_EQ(st.code(), code::kOpInputNotMatch) << st.message();
  // Output count.
  EXPECT_EQ(CompiledOp::compile("Add", {f, f}, {f, f}, {}, {}, &op).code(), code::kOpOutputNotMatch);
  // Mixed dtypes.
  EXPECT_EQ(CompiledOp::compile("Add", {f, spec(DType::kInt32, {4})}, {f}, {}, {}, &op).code(),
            code::kOpInputNotMatch);
  // A dtype the op does not take.
  st = CompiledOp::compile("Add", {spec(DType::kBool, {4}), spec(DType::kBool, {4})}, {spec(DType::kBool, {4})}, {},
                           {}, &op);
  EXPECT_EQ(st.code(), code::kUnsupportedDataType) << st.message();
  // Output desc that disagrees with the op.
  st = CompiledOp::compile("Add", {f, f}, {spec(DType::kFloat32, {5})}, {}, {}, &op);
  EXPECT_EQ(st.code(), code::kOpOutputNotMatch) << st.message();
  st = CompiledOp::compile("Add", {f, f}, {spec(DType::kFloat16, {4})}, {}, {}, &op);
  EXPECT_EQ(st.code(), code::kOpOutputNotMatch) << st.message();
  // Shapes that cannot broadcast.
  st = CompiledOp::compile("Add", {f, spec(DType::kFloat32, {3})}, {f}, {}, {}, &op);
  EXPECT_EQ(st.code(), code::kOpInputNotMatch) << st.message();
  // Attribute of the wrong kind.
  st = CompiledOp::compile("Cast", {f}, {spec(DType::kInt32, {4})}, {{"dst_type", AttrValue::of_float(3)}}, {}, &op);
  EXPECT_EQ(st.code(), code::kOpAttrNotMatch) << st.message();
}

TEST(SingleOp, CastTakesTheTargetFromTheOutputDescOrTheAttribute) {
  std::shared_ptr<CompiledOp> op;
  ASSERT_TRUE(CompiledOp::compile("Cast", {spec(DType::kFloat32, {3})}, {spec(DType::kInt32, {3})}, {}, {}, &op).ok());
  std::vector<float> x = {1.7f, -2.7f, 3.0f};
  std::vector<int32_t> y(3);
  ASSERT_TRUE(op->execute({buf(x)}, {{y.data(), 12}}).ok());
  EXPECT_EQ(y, (std::vector<int32_t>{1, -2, 3}));
  // dst_type 1 = ACL_FLOAT16.
  ASSERT_TRUE(CompiledOp::compile("Cast", {spec(DType::kFloat32, {3})}, {spec(DType::kFloat16, {3})},
                                  {{"dst_type", AttrValue::of_int(1)}}, {}, &op)
                  .ok());
  EXPECT_EQ(op->outputs()[0].dtype, DType::kFloat16);
}

TEST(SingleOp, ConstantInputsAreCompiledIn) {
  std::vector<float> c = {100, 200};
  auto cs = spec(DType::kFloat32, {2});
  cs.constant = graph::TensorData::copy_of(DType::kFloat32, {2}, c.data(), 8);
  std::shared_ptr<CompiledOp> op;
  ASSERT_TRUE(CompiledOp::compile("Add", {spec(DType::kFloat32, {2}), cs}, {spec(DType::kFloat32, {2})}, {}, {}, &op)
                  .ok());
  std::vector<float> x = {1, 2}, ignored = {-5, -5}, y(2);
  ASSERT_TRUE(op->execute({buf(x), buf(ignored)}, {buf(y)}).ok());
  EXPECT_EQ(y, (std::vector<float>{101, 202}));
  // Attached bytes that do not fit the shape.
  auto bad = cs;
  bad.dims = {3};
  EXPECT_EQ(CompiledOp::compile("Add", {spec(DType::kFloat32, {3}), bad}, {spec(DType::kFloat32, {3})}, {}, {}, &op)
                .code(),
            code::kOpInputNotMatch);
}

TEST(SingleOp, InferShapeReportsDims) {
  std::vector<TensorSpec> out;
  ASSERT_TRUE(infer_shape("Add", {spec(DType::kFloat32, {4, 1}), spec(DType::kFloat32, {3})}, 1, {}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(out[0].dtype, DType::kFloat32);
  ASSERT_TRUE(infer_shape("Add", {spec(DType::kFloat32, {-1, 3}), spec(DType::kFloat32, {3})}, 1, {}, &out).ok());
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{-1, 3}));
  ASSERT_EQ(out[0].range.size(), 2u);
  EXPECT_EQ(out[0].range[1], (std::pair<int64_t, int64_t>{3, 3}));
}

TEST(OpCache, HitsMissesAndEviction) {
  OpCache cache;
  auto f = [](int64_t n) { return spec(DType::kFloat32, {n}); };
  std::shared_ptr<CompiledOp> a, b, c;
  auto get = [&](int64_t n, std::shared_ptr<CompiledOp>* out) {
    return cache.get(op_key("Add", {f(n), f(n)}, {f(n)}, {}), "Add", {f(n), f(n)}, {f(n)}, {}, {}, out);
  };
  ASSERT_TRUE(get(2, &a).ok());
  ASSERT_TRUE(get(2, &b).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  cache.set_capacity(1);
  ASSERT_TRUE(get(3, &c).ok());
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_TRUE(get(2, &b).ok());
  EXPECT_NE(a, b);  // evicted, compiled again
  EXPECT_EQ(cache.misses(), 3u);
  // An evicted op still runs for whoever holds it.
  std::vector<float> x = {1, 2}, y(2);
  EXPECT_TRUE(a->execute({buf(x), buf(x)}, {buf(y)}).ok());
  EXPECT_EQ(y, (std::vector<float>{2, 4}));
}

}  // namespace
}  // namespace openacl::op
