// ops.json parsing (atc --singleop's input) and single-op .om files.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/codes.h"
#include "op/op_json.h"

namespace openacl::op {
namespace {

const char* kOps = R"([
  {"op": "Add",
   "input_desc": [{"format": "ND", "shape": [2, 3], "type": "float"},
                  {"format": "ND", "shape": [3], "type": "float", "is_const": true, "const_value": [1, 2, 3]}],
   "output_desc": [{"format": "ND", "shape": [2, 3], "type": "float"}]},
  {"op": "Cast",
   "input_desc": [{"format": "ND", "shape": [-1], "type": "float16", "shape_range": [[1, 64]]}],
   "output_desc": [{"format": "ND", "shape": [-1], "type": "int32"}],
   "attr": [{"name": "dst_type", "type": "int", "value": 3}, {"name": "truncate", "type": "bool", "value": true}]}
])";

TEST(OpJson, ParsesCannOpsJson) {
  std::vector<OpCall> calls;
  ASSERT_TRUE(parse_ops_json(kOps, &calls).ok());
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].type, "Add");
  ASSERT_EQ(calls[0].inputs.size(), 2u);
  EXPECT_EQ(calls[0].inputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(calls[0].inputs[0].dtype, DType::kFloat32);
  ASSERT_TRUE(calls[0].inputs[1].constant);
  EXPECT_EQ(calls[0].inputs[1].constant->as<float>()[2], 3.0f);
  EXPECT_EQ(calls[1].inputs[0].dims, (std::vector<int64_t>{-1}));
  EXPECT_EQ(calls[1].inputs[0].range, (std::vector<std::pair<int64_t, int64_t>>{{1, 64}}));
  EXPECT_EQ(calls[1].attrs.at("dst_type").i, 3);
  EXPECT_EQ(calls[1].attrs.at("truncate").kind, AttrValue::Kind::kBool);
}

TEST(OpJson, RoundTripsThroughItsOwnForm) {
  std::vector<OpCall> calls;
  ASSERT_TRUE(parse_ops_json(kOps, &calls).ok());
  for (const OpCall& c : calls) {
    OpCall back;
    ASSERT_TRUE(op_call_from_json(op_call_json(c), &back).ok());
    EXPECT_EQ(op_key(c.type, c.inputs, c.outputs, c.attrs), op_key(back.type, back.inputs, back.outputs, back.attrs));
  }
}

TEST(OpJson, BadDescriptionsNameTheField) {
  std::vector<OpCall> calls;
  Status st = parse_ops_json("[{\"op\": \"Add\", \"input_desc\": [{\"shape\": [2], \"type\": \"float99\"}]}]", &calls);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("input_desc[0].type"), std::string::npos) << st.message();
  st = parse_ops_json("[{\"op\": \"Add\", \"attr\": [{\"name\": \"a\", \"type\": \"complex\", \"value\": 1}]}]", &calls);
  EXPECT_NE(st.message().find("unknown type 'complex'"), std::string::npos) << st.message();
  st = parse_ops_json("[{\"op\": \"Add\", \"attr\": [{\"name\": \"a\", \"type\": \"int\", \"value\": \"x\"}]}]", &calls);
  EXPECT_NE(st.message().find("is not a int"), std::string::npos) << st.message();
  EXPECT_EQ(parse_ops_json("not json", &calls).code(), code::kInvalidParam);
  EXPECT_EQ(parse_ops_json("[]", &calls).code(), code::kInvalidParam);
}

TEST(OpJson, SingleOpOmLoadsAndRuns) {
  std::vector<OpCall> calls;
  ASSERT_TRUE(parse_ops_json(kOps, &calls).ok());
  std::string bytes;
  ASSERT_TRUE(write_op_om(calls[0], "atc --singleop=ops.json --output=out", &bytes).ok());
  std::shared_ptr<CompiledOp> op;
  ASSERT_TRUE(load_op_om(bytes.data(), bytes.size(), {}, &op).ok());
  // The loaded op answers the same key a runtime call builds: a cache hit.
  EXPECT_EQ(op->key(), op_key(calls[0].type, calls[0].inputs, calls[0].outputs, calls[0].attrs));
  std::vector<float> x = {1, 1, 1, 2, 2, 2}, ignored(3), y(6);
  ASSERT_TRUE(op->execute({{x.data(), 24}, {ignored.data(), 12}}, {{y.data(), 24}}).ok());
  EXPECT_EQ(y, (std::vector<float>{2, 3, 4, 3, 4, 5}));
  // A truncated file, and a model that is not a single op.
  EXPECT_EQ(load_op_om(bytes.data(), bytes.size() / 2, {}, &op).code(), code::kOpLoadFailed);
  OpCall bad = calls[0];
  bad.type = "NoSuchOp";
  EXPECT_EQ(write_op_om(bad, "", &bytes).code(), code::kOpNotFound);
}

}  // namespace
}  // namespace openacl::op
