// Helpers for the tests of our convolution loops over channel-blocked
// tensors (test_conv_1x1.cpp, test_conv_dw.cpp): layouts, the activation
// under test, the comparison of a blocked result with the reference, and
// the machine's block forced to 8 (the loops' AVX2 form) for a scope.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/fused_activation.h"

namespace openacl::kernels::cpu::blocked_test {

// Lanes 8: the machine's channel block forced to 8 while it lives, so the
// loops' 8-lane (AVX2) form applies on any CPU with AVX2 (an AVX-512 one
// included); lanes 16: nothing changed.
class LanesScope {
 public:
  explicit LanesScope(int64_t lanes) : forced_(lanes == 8) {
    if (forced_) set_channel_block_for_testing(8);
  }
  ~LanesScope() {
    if (forced_) set_channel_block_for_testing(-1);
  }
  LanesScope(const LanesScope&) = delete;
  LanesScope& operator=(const LanesScope&) = delete;

 private:
  bool forced_;
};

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

// The largest error of y (N C HW in yb-blocks) against ref (plain N C HW),
// relative to ref's largest magnitude; NaN if any result is NaN (std::max
// would drop it). Fails the test where a padding lane of y is not zero.
inline double blocked_error(const std::vector<float>& y, const std::vector<float>& ref, int64_t N, int64_t C,
                            int64_t HW, int64_t yb = 16) {
  const int64_t Cp = round_up(C, yb);
  double worst = 0, scale = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cp; ++c)
      for (int64_t s = 0; s < HW; ++s) {
        const float got = y[static_cast<size_t>(((n * (Cp / yb) + c / yb) * HW + s) * yb + c % yb)];
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

struct ConvData {
  std::vector<float> x, w, b, res;  // plain X, W, B and a residual of Y's shape
};

// Uniform random values in [-1, 1) for a convolution of geometry g (W scaled
// by w_scale, the residual by 2).
inline ConvData random_data(const WindowGeom& g, unsigned seed, float w_scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  ConvData d;
  d.x.resize(static_cast<size_t>(g.N * g.C * g.in_size()));
  d.w.resize(static_cast<size_t>(g.M * (g.C / g.G) * g.k_size()));
  d.b.resize(static_cast<size_t>(g.M));
  d.res.resize(static_cast<size_t>(g.N * g.M * g.out_size()));
  for (float& v : d.x) v = u(rng);
  for (float& v : d.w) v = u(rng) * w_scale;
  for (float& v : d.b) v = u(rng);
  for (float& v : d.res) v = u(rng) * 2.f;
  return d;
}

// Runs e (built by the caller from d.w and, with `bias`, d.b) on X in blocks
// of xb (0: plain) whose padding channels hold NaN, Y in yb-blocks, with the
// residual apart or written over itself (`in_place`), and returns the
// blocked_error of its output against the reference convolution (+ the
// residual) and the activation `act`.
template <class Kernel>
double run_against_reference(const Kernel& e, const WindowGeom& g, const ConvData& d, int64_t xb, int64_t yb, bool bias,
                             bool residual, bool in_place, const char* act) {
  const int64_t OHW = g.out_size();
  const size_t ny = static_cast<size_t>(g.N * g.M * OHW);
  std::vector<float> ref(ny);
  conv_ref<float>(g, d.x.data(), d.w.data(), bias ? d.b.data() : nullptr, ref.data());
  if (residual)
    for (size_t i = 0; i < ny; ++i) ref[i] += d.res[i];
  activation(act).apply(ref.data(), static_cast<int64_t>(ny));
  const std::vector<float> xin =
      xb ? to_blocked(d.x, g.N, g.C, g.in_size(), xb, std::numeric_limits<float>::quiet_NaN()) : d.x;
  std::vector<float> rin = to_blocked(d.res, g.N, g.M, OHW, yb, 0.f);  // as its writer leaves it
  std::vector<float> y(rin.size(), 12345.f);
  if (residual && in_place) {
    e.run(xin.data(), rin.data(), rin.data());
    y = rin;
  } else {
    e.run(xin.data(), y.data(), residual ? rin.data() : nullptr);
  }
  return blocked_error(y, ref, g.N, g.M, OHW, yb);
}

}  // namespace openacl::kernels::cpu::blocked_test
