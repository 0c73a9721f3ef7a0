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
#include "kernels/pack_cache.h"

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

// body(lanes) for each form of a kernel's loops this CPU runs, as
// runs(lanes) says (16 lanes: AVX-512F; 8: AVX2 + FMA, with the block forced
// to 8 meanwhile); the test is skipped where neither runs.
template <class Runs, class Body>
void for_each_form(Runs runs, Body body) {
  bool any = false;
  for (int64_t lanes : {16, 8}) {
    LanesScope scope(lanes);
    if (!runs(lanes)) continue;
    SCOPED_TRACE(testing::Message() << lanes << " lanes");
    any = true;
    body(lanes);
  }
  if (!any) GTEST_SKIP() << "neither AVX-512F nor AVX2 + FMA (or the loops turned off): oneDNN runs these";
}

// What atc and a load do with packed weights: make(w, packs) over the
// weights `w` records one blob of `bytes` (atc); then, the weights elsewhere
// (a copy), make() finds that blob by offset and uses it where it lies. The
// copy is zeroed before returning that second kernel, so checking its
// results against `w`'s reference proves the blob is what runs. Null (with
// a test failure) where a step fails.
template <class Make>
auto made_from_packs(const std::vector<float>& w, size_t bytes, Make make) -> decltype(make(w.data(), nullptr)) {
  const size_t wbytes = w.size() * sizeof(float);
  PackCache recorder(PackCache::Mode::kRecord, w.data(), wbytes);
  if (!make(w.data(), &recorder)) {
    ADD_FAILURE() << "no kernel while recording the pack";
    return nullptr;
  }
  const std::vector<PackedBlob> blobs = recorder.recorded();
  if (blobs.size() != 1u || blobs[0].bytes != bytes) {
    ADD_FAILURE() << blobs.size() << " packs recorded, the first of " << (blobs.empty() ? 0 : blobs[0].bytes)
                  << " bytes; expected one of " << bytes;
    return nullptr;
  }
  std::vector<float> copy = w;
  PackCache use(PackCache::Mode::kUse, copy.data(), wbytes);
  use.add(blobs[0]);
  auto loaded = make(copy.data(), &use);
  EXPECT_EQ(use.used(), 1u);
  std::fill(copy.begin(), copy.end(), 0.f);
  return loaded;
}

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
