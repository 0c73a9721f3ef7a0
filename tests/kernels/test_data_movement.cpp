// Data-movement and generator kernels: the cases the ONNX node tests miss
// (other dtypes, int32 indices, empty tensors, bad indices failing cleanly).
#include <numeric>

#include "op_test_util.h"

namespace openacl::testing {
namespace {

using V64 = std::vector<int64_t>;

OpRun run_n(const std::string& op, const std::vector<Data>& in, graph::AttributeMap attrs, int outputs, int opset = 21) {
  OpSpec s;
  s.op_type = op;
  s.attrs = std::move(attrs);
  s.num_outputs = outputs;
  s.opset = opset;
  return run_op(s, in);
}

TEST(Reshape, AnyTypeAndInt32Shape) {
  OpRun r = run_op("Reshape", {tensor<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int64_t>({2}, {3, -1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{3, 2}));
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Transpose, Float16Matrix) {
  OpRun r = run_op("Transpose", {raw_tensor<uint16_t>(DType::kFloat16, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint16_t>(r.outputs[0]), (std::vector<uint16_t>{1, 4, 2, 5, 3, 6}));
}

// A float matrix larger than one 32x32 tile with ragged edges: the 8x8
// register blocks and the scalar edges together move every element, bits
// as they are (a NaN's payload included).
TEST(Transpose, FloatMatrixBlocksAndEdgesAreBitExact) {
  const int64_t R = 70, C = 45;
  std::vector<uint32_t> bits(R * C);
  for (int64_t i = 0; i < R * C; ++i) bits[i] = 0x3f800000u + static_cast<uint32_t>(i);
  bits[9 * C + 17] = 0x7fc01234u;  // a quiet NaN with a payload
  OpRun r = run_op("Transpose", {raw_tensor<uint32_t>(DType::kFloat32, {R, C}, bits)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{C, R}));
  const std::vector<uint32_t> y = values<uint32_t>(r.outputs[0]);
  bool ok = true;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < R; ++i) ok = ok && y[c * R + i] == bits[i * C + c];
  EXPECT_TRUE(ok);
}

// Every permutation of a 4-D tensor against index arithmetic (covers the
// tiled 2-D path, NCHW<->NHWC, block and generic paths).
TEST(Transpose, AllPermutationsOf4D) {
  const V64 d{3, 5, 2, 37};
  const int64_t n = 3 * 5 * 2 * 37;
  std::vector<int32_t> x(n);
  std::iota(x.begin(), x.end(), 0);
  V64 p{0, 1, 2, 3};
  do {
    graph::AttributeMap a;
    a.set("perm", attr_ints(p));
    OpRun r = run_op("Transpose", {tensor<int32_t>(d, x)}, a);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    const std::vector<int32_t> y = values<int32_t>(r.outputs[0]);
    V64 od{d[p[0]], d[p[1]], d[p[2]], d[p[3]]};
    V64 is{5 * 2 * 37, 2 * 37, 37, 1};
    int64_t k = 0;
    bool ok = true;
    for (int64_t i0 = 0; i0 < od[0]; ++i0)
      for (int64_t i1 = 0; i1 < od[1]; ++i1)
        for (int64_t i2 = 0; i2 < od[2]; ++i2)
          for (int64_t i3 = 0; i3 < od[3]; ++i3, ++k)
            ok = ok && y[k] == i0 * is[p[0]] + i1 * is[p[1]] + i2 * is[p[2]] + i3 * is[p[3]];
    EXPECT_TRUE(ok) << p[0] << p[1] << p[2] << p[3];
  } while (std::next_permutation(p.begin(), p.end()));
}

TEST(Concat, NegativeAxisWithEmptyInput) {
  graph::AttributeMap a;
  a.set("axis", attr_int(-1));
  OpRun r = run_op("Concat", {tensor<uint8_t>({2, 1}, {1, 2}), tensor<uint8_t>({2, 0}, {}), tensor<uint8_t>({2, 2}, {3, 4, 5, 6})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{1, 3, 4, 2, 5, 6}));
}

TEST(Split, BoolIntoTwo) {
  graph::AttributeMap a;
  a.set("axis", attr_int(1));
  OpRun r = run_n("Split", {tensor<bool>({2, 2}, {true, false, false, true})}, a, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(r.outputs[1]), (std::vector<bool>{false, true}));
}

TEST(Slice, NegativeStepInt32Inputs) {
  OpRun r = run_op("Slice", {tensor<double>({5}, {0, 1, 2, 3, 4}), tensor<int32_t>({1}, {-1}), tensor<int32_t>({1}, {-100}),
                             tensor<int32_t>({1}, {0}), tensor<int32_t>({1}, {-2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{4, 2, 0}));
}

TEST(Gather, Int32NegativeIndices) {
  graph::AttributeMap a;
  a.set("axis", attr_int(1));
  OpRun r = run_op("Gather", {tensor<int16_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>({2}, {-1, 0})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int16_t>(r.outputs[0]), (std::vector<int16_t>{3, 1, 6, 4}));
}

TEST(Gather, OutOfRangeFails) {
  OpRun r = run_op("Gather", {tensor<float>({3}, {1, 2, 3}), tensor<int64_t>({1}, {3})});
  EXPECT_FALSE(r.status.ok());
  r = run_op("Gather", {tensor<float>({3}, {1, 2, 3}), tensor<int64_t>({1}, {-4})});
  EXPECT_FALSE(r.status.ok());
}

TEST(GatherElements, OutOfRangeFails) {
  OpRun r = run_op("GatherElements", {tensor<float>({2, 2}, {1, 2, 3, 4}), tensor<int32_t>({2, 1}, {0, 2})});
  EXPECT_FALSE(r.status.ok());
}

TEST(GatherND, BatchDims) {
  graph::AttributeMap a;
  a.set("batch_dims", attr_int(1));
  OpRun r = run_op("GatherND", {tensor<int64_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), tensor<int64_t>({2, 1}, {1, 0})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{2, 3, 4, 5}));
}

TEST(ScatterElements, AddWithDuplicatesAndBadIndex) {
  graph::AttributeMap a;
  a.set("reduction", attr_string("add"));
  OpRun r = run_op("ScatterElements", {tensor<int32_t>({3}, {1, 1, 1}), tensor<int64_t>({3}, {0, 0, -1}),
                                       tensor<int32_t>({3}, {5, 6, 7})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{12, 1, 8}));
  r = run_op("ScatterElements", {tensor<int32_t>({3}, {1, 1, 1}), tensor<int64_t>({1}, {3}), tensor<int32_t>({1}, {5})}, a);
  EXPECT_FALSE(r.status.ok());
}

TEST(ScatterND, MulFloat16) {
  graph::AttributeMap a;
  a.set("reduction", attr_string("mul"));
  // float16 2.0 = 0x4000, 3.0 = 0x4200 -> 6.0 = 0x4600
  OpRun r = run_op("ScatterND", {raw_tensor<uint16_t>(DType::kFloat16, {2}, {0x4000, 0x4000}), tensor<int64_t>({1, 1}, {1}),
                                 raw_tensor<uint16_t>(DType::kFloat16, {1}, {0x4200})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint16_t>(r.outputs[0]), (std::vector<uint16_t>{0x4000, 0x4600}));
}

TEST(Pad, ReflectAndWrapInt8) {
  graph::AttributeMap a;
  a.set("mode", attr_string("reflect"));
  OpRun r = run_op("Pad", {tensor<int8_t>({3}, {1, 2, 3}), tensor<int64_t>({2}, {2, 2})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{3, 2, 1, 2, 3, 2, 1}));
  a.set("mode", attr_string("wrap"));
  r = run_op("Pad", {tensor<int8_t>({3}, {1, 2, 3}), tensor<int64_t>({2}, {1, -1})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{3, 1, 2}));
  a.set("mode", attr_string("constant"));
  r = run_op("Pad", {tensor<int8_t>({3}, {1, 2, 3}), tensor<int64_t>({2}, {1, 0}), tensor<int8_t>({}, {9})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{9, 1, 2, 3}));
}

TEST(ExpandTile, Broadcast) {
  OpRun r = run_op("Expand", {tensor<uint16_t>({2, 1}, {1, 2}), tensor<int64_t>({3}, {2, 2, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{2, 2, 3}));
  EXPECT_EQ(values<uint16_t>(r.outputs[0]), (std::vector<uint16_t>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  r = run_op("Tile", {tensor<bool>({2}, {true, false}), tensor<int64_t>({1}, {2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{true, false, true, false}));
}

TEST(Generators, RangeOneHotEyeTrilu) {
  OpRun r = run_op("Range", {tensor<int64_t>({}, {10}), tensor<int64_t>({}, {3}), tensor<int64_t>({}, {-3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{10, 7, 4}));
  r = run_op("OneHot", {tensor<int32_t>({2}, {1, 5}), tensor<int64_t>({}, {3}), tensor<int8_t>({2}, {0, 1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{0, 1, 0, 0, 0, 0}));
  graph::AttributeMap a;
  a.set("k", attr_int(1));
  r = run_op("EyeLike", {tensor<int32_t>({2, 3}, {9, 9, 9, 9, 9, 9})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{0, 1, 0, 0, 0, 1}));
  graph::AttributeMap u;
  u.set("upper", attr_int(0));
  r = run_op("Trilu", {tensor<bool>({2, 2}, {true, true, true, true})}, u);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{true, false, true, true}));
}

TEST(NonZero, BoolAndEmpty) {
  OpRun r = run_op("NonZero", {tensor<bool>({2, 2}, {false, true, true, false})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{2, 2}));
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(Unique, UnsortedAllOutputs) {
  graph::AttributeMap a;
  a.set("sorted", attr_int(0));
  OpRun r = run_n("Unique", {tensor<int32_t>({5}, {3, 1, 3, 2, 1})}, a, 4);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{3, 1, 2}));
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(values<int64_t>(r.outputs[2]), (std::vector<int64_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(values<int64_t>(r.outputs[3]), (std::vector<int64_t>{2, 2, 1}));
}

TEST(Misc, CompressReverseSequenceDepthToSpaceCenterCrop) {
  graph::AttributeMap a;
  a.set("axis", attr_int(0));
  OpRun r = run_op("Compress", {tensor<int64_t>({3}, {7, 8, 9}), tensor<bool>({2}, {false, true})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{8}));
  r = run_op("Compress", {tensor<int64_t>({3}, {7, 8, 9}), tensor<bool>({4}, {false, true, false, true})}, a);
  EXPECT_FALSE(r.status.ok());

  graph::AttributeMap rs;
  rs.set("batch_axis", attr_int(0));
  rs.set("time_axis", attr_int(1));
  r = run_op("ReverseSequence", {tensor<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int64_t>({2}, {2, 3})}, rs);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{2, 1, 3, 6, 5, 4}));

  graph::AttributeMap d;
  d.set("blocksize", attr_int(2));
  d.set("mode", attr_string("CRD"));
  r = run_op("DepthToSpace", {tensor<int32_t>({1, 4, 1, 1}, {1, 2, 3, 4})}, d);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{1, 1, 2, 2}));
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{1, 2, 3, 4}));

  r = run_op("CenterCropPad", {tensor<int32_t>({3}, {1, 2, 3}), tensor<int64_t>({1}, {5})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{0, 1, 2, 3, 0}));
}

}  // namespace
}  // namespace openacl::testing

namespace openacl::testing {
namespace {

TEST(EdgeCases, EmptyTensors) {
  graph::AttributeMap a;
  a.set("perm", attr_ints({1, 0}));
  OpRun r = run_op("Transpose", {tensor<float>({0, 3}, {})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{3, 0}));
  r = run_op("Gather", {tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}), tensor<int64_t>({0}, {})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{0, 2}));
  r = run_op("NonZero", {tensor<int32_t>({3}, {0, 0, 0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{1, 0}));
}

TEST(EdgeCases, OldOpsetAttributes) {
  graph::AttributeMap s;
  s.set("starts", attr_ints({1}));
  s.set("ends", attr_ints({100}));
  OpRun r = run_op("Slice", {tensor<int64_t>({4}, {1, 2, 3, 4})}, s, 9);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{2, 3, 4}));
  graph::AttributeMap p;
  p.set("pads", attr_ints({1, 1}));
  p.set("value", attr_float(2.5f));
  r = run_op("Pad", {tensor<double>({1}, {7})}, p, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{2.5, 7, 2.5}));
}

TEST(EdgeCases, SplitNumOutputsUneven) {
  graph::AttributeMap a;
  a.set("num_outputs", attr_int(2));
  OpRun r = run_n("Split", {tensor<int32_t>({3}, {1, 2, 3})}, a, 2, 18);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(values<int32_t>(r.outputs[1]), (std::vector<int32_t>{3}));
}

TEST(EdgeCases, UniqueAlongAxisFloat16) {
  graph::AttributeMap a;
  a.set("axis", attr_int(-1));
  // Columns: (1,2) (0,0) (1,2) -> sorted unique (0,0) (1,2). float16 1=0x3C00, 2=0x4000.
  OpRun r = run_n("Unique", {raw_tensor<uint16_t>(DType::kFloat16, {2, 3}, {0x3C00, 0, 0x3C00, 0x4000, 0, 0x4000})}, a, 4);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{2, 2}));
  EXPECT_EQ(values<uint16_t>(r.outputs[0]), (std::vector<uint16_t>{0, 0x3C00, 0, 0x4000}));
  EXPECT_EQ(values<int64_t>(r.outputs[2]), (std::vector<int64_t>{1, 0, 1}));
}

TEST(EdgeCases, BadInputsFailCleanly) {
  graph::AttributeMap a;
  a.set("perm", attr_ints({0, 0}));
  EXPECT_FALSE(run_op("Transpose", {tensor<float>({2, 2}, {1, 2, 3, 4})}, a).status.ok());
  EXPECT_FALSE(run_op("ScatterND", {tensor<float>({2}, {1, 2}), tensor<int64_t>({1, 1}, {5}), tensor<float>({1}, {9})})
                   .status.ok());
  EXPECT_FALSE(run_op("GatherND", {tensor<float>({2}, {1, 2}), tensor<int32_t>({1, 1}, {-3})}).status.ok());
}

// The static path (shape input constant): Reshape may run in place.
TEST(EdgeCases, ReshapeStaticConstantShape) {
  OpSpec s;
  s.op_type = "Reshape";
  s.constant_inputs = {1};
  OpRun r = run_op(s, {tensor<float>({2, 2}, {1, 2, 3, 4}), tensor<int64_t>({1}, {4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace openacl::testing

namespace openacl::testing {
namespace {

TEST(EdgeCases, TileOpset1ScalarTilesAndAxis) {
  OpRun r = run_op("Tile", {tensor<float>({2, 1}, {1, 2}), tensor<float>({}, {3}), tensor<float>({}, {1})}, {}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (V64{2, 3}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

}  // namespace
}  // namespace openacl::testing
