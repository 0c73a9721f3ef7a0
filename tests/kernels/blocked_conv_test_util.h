// Helpers for the tests of our convolution loops over channel-blocked
// tensors (test_conv_1x1.cpp, test_conv_dw.cpp): layouts, the activation
// under test, and the comparison of a 16-blocked result with the reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/fused_activation.h"

namespace openacl::kernels::cpu::blocked_test {

inline int64_t round_up(int64_t c, int64_t b) { return (c + b - 1) / b * b; }

// plain N C HW -> blocked N ceil(C/B) HW B, the padding channels set to `pad`.
inline std::vector<float> to_blocked(const std::vector<float>& x, int64_t N, int64_t C, int64_t HW, int64_t B,
                                     float pad) {
  const int64_t Cp = round_up(C, B);
  std::vector<float> y(static_cast<size_t>(N * Cp * HW), pad);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < HW; ++s) y[((n * (Cp / B) + c / B) * HW + s) * B + c % B] = x[(n * C + c) * HW + s];
  return y;
}

// The fused activation `op` ("" none) with the parameters the tests use.
inline Activation activation(const char* op) {
  Activation act;
  act.op = op;
  const bool clip = act.op == "Clip";
  act.alpha = clip ? -0.5f : 0.2f;
  act.beta = clip ? 0.75f : 0.5f;
  return act;
}

// The largest error of y (N C HW in 16-blocks) against ref (plain N C HW),
// relative to ref's largest magnitude; NaN if any result is NaN (std::max
// would drop it). Fails the test where a padding lane of y is not zero.
inline double blocked_error(const std::vector<float>& y, const std::vector<float>& ref, int64_t N, int64_t C,
                            int64_t HW) {
  const int64_t Cp = round_up(C, 16);
  double worst = 0, scale = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cp; ++c)
      for (int64_t s = 0; s < HW; ++s) {
        const float got = y[static_cast<size_t>(((n * (Cp / 16) + c / 16) * HW + s) * 16 + c % 16)];
        if (c >= C) {
          if (got != 0.f) ADD_FAILURE() << "padding lane " << c << " at pixel " << s << " holds " << got;
          continue;
        }
        const double want = ref[static_cast<size_t>((n * C + c) * HW + s)];
        const double err = std::fabs(got - want);
        if (!(err <= worst)) worst = err;
        scale = std::max(scale, std::fabs(want));
      }
  return worst / std::max(scale, 1e-30);
}

}  // namespace openacl::kernels::cpu::blocked_test
