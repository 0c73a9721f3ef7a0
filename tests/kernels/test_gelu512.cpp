// The 16-lane Gelu (kernels/cpu/gelu512.h) against erf in double precision:
// its error bound over a dense range, the lengths that take each of its
// loops, and the values at infinity and NaN (as the scalar form gives them).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/gelu512.h"

namespace openacl::testing {
namespace {

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

#ifdef OPENACL_GELU512
bool has_avx512() { return __builtin_cpu_supports("avx512f"); }

TEST(Gelu512, WithinItsBound) {
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512F on this CPU";
  std::vector<float> x;
  for (float v = -14.f; v <= 14.f; v += 1.f / 4096) x.push_back(v);
  std::vector<float> y = x;
  kernels::cpu::gelu_avx512(y.data(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(y[i], gelu(x[i]), 2e-7 * std::max(1.0, std::fabs(static_cast<double>(x[i])))) << "x = " << x[i];
}

TEST(Gelu512, EveryLengthAndSpecialValues) {
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512F on this CPU";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> special = {inf, -inf, nan, 0.f, -0.f, 1e30f, -1e30f, 100.f, -100.f, 3.f};
  // Lengths through the 64-float loop, the 16-float one and the scalar tail;
  // the special values at every position of a vector.
  for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 80, 131}) {
    for (int64_t at = 0; at < n; at += 7) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[i] = special[static_cast<size_t>((i + at) % special.size())];
      std::vector<float> y = x;
      kernels::cpu::gelu_avx512(y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double want = gelu(x[i]);
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(y[i])) << "x = " << x[i] << ", n = " << n;
        else if (std::isinf(want))
          EXPECT_EQ(y[i], want) << "x = " << x[i] << ", n = " << n;
        else
          EXPECT_NEAR(y[i], want, 2e-7 * std::max(1.0, std::fabs(static_cast<double>(x[i])))) << "x = " << x[i];
      }
    }
  }
}
#endif

}  // namespace
}  // namespace openacl::testing
