#include "op_test_util.h"

namespace openacl::testing {
namespace {

TEST(Identity, CopiesAnyType) {
  OpRun r = run_op("Identity", {tensor<int64_t>({3}, {1, -2, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{1, -2, 3}));
}

TEST(Identity, EmptyTensor) {
  OpRun r = run_op("Identity", {tensor<float>({0, 4}, {})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0, 4}));
}

TEST(Registry, UnknownOpListsTheNode) {
  OpRun r = run_op("NoSuchOp", {tensor<float>({1}, {1})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("NoSuchOp"), std::string::npos) << r.status.message();
}

}  // namespace
}  // namespace openacl::testing
