// SmallDims (kernels/cpu/small_dims.h): the inline form, the move to the heap
// past kInline elements, and copies of both.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/small_dims.h"

namespace openacl::kernels::cpu {
namespace {

std::vector<int64_t> as_vector(const SmallDims& d) { return std::vector<int64_t>(d.begin(), d.end()); }

TEST(SmallDims, InlineThenHeap) {
  SmallDims d;
  EXPECT_TRUE(d.empty());
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 20; ++i) {  // crosses kInline (8) with values kept
    d.push_back(i * 3);
    want.push_back(i * 3);
    ASSERT_EQ(as_vector(d), want) << "after " << i + 1;
    EXPECT_EQ(d.back(), i * 3);
  }
  d.resize(4);
  EXPECT_EQ(as_vector(d), (std::vector<int64_t>{0, 3, 6, 9}));
  d.resize(6, -1);  // new elements take the value, even on the heap
  EXPECT_EQ(as_vector(d), (std::vector<int64_t>{0, 3, 6, 9, -1, -1}));
  d.clear();
  EXPECT_EQ(d.size(), 0u);
}

TEST(SmallDims, CopiesAreIndependent) {
  for (size_t n : {size_t{3}, size_t{12}}) {  // inline and heap
    SmallDims a(n, 7);
    SmallDims b = a;
    b[0] = 1;
    EXPECT_EQ(a[0], 7) << n;
    EXPECT_EQ(b[0], 1) << n;
    EXPECT_EQ(b.size(), n);
    SmallDims c;
    c = b;
    c.back() = 5;
    EXPECT_EQ(b.back(), 7) << n;
    EXPECT_EQ(as_vector(c).front(), 1) << n;
  }
}

}  // namespace
}  // namespace openacl::kernels::cpu
