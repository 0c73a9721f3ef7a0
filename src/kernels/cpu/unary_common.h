// The one element-wise loop every unary op, activation and cast shares: each
// op is a functor over the compute type (float for float16/bfloat16), so the
// per-op code is a line and the loop is a flat, contiguous, vectorisable one
// split across threads only when the tensor is large.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu::unary {

// Elements per thread chunk: below 2x this a tensor is processed serially
// (spawning threads costs more than a few thousand cheap element ops).
constexpr int64_t kGrain = 16384;

// e^x for float, branch-free so loops calling it vectorise (libm's expf is an
// opaque call that stops that). Cody-Waite reduction x = n ln2 + r, |r| <=
// ln2/2, a degree-6 polynomial for e^r (relative error ~1e-7, a couple of
// ulp), then 2^n applied in two halves so results near the float range's ends
// round gradually into denormals/overflow like exp's. NaN flows through the
// arithmetic (no select: a NaN test would stop the vectoriser).
inline float exp_approx(float x) {
  const float lo = -104.0f, hi = 89.0f;  // e^lo < smallest denormal, e^hi > FLT_MAX
  // The clamp is done on bits: as `x < lo ? lo : x` GCC folds the clamped
  // paths to constants, turning the select into branches the vectoriser
  // refuses.
  const int32_t below = -static_cast<int32_t>(x < lo), above = -static_cast<int32_t>(x > hi);
  int32_t xb = std::bit_cast<int32_t>(x);
  xb = (xb & ~below) | (std::bit_cast<int32_t>(lo) & below);
  xb = (xb & ~above) | (std::bit_cast<int32_t>(hi) & above);
  const float xc = std::bit_cast<float>(xb);
  // Adding 1.5 * 2^23 rounds to an integer, which then sits in the low
  // mantissa bits: n without a float->int conversion (UB for NaN).
  const float shifter = 12582912.0f;
  const float t = xc * 1.44269504088896341f + shifter;
  const float fn = t - shifter;
  const int32_t n = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(shifter);
  const float r = (xc - fn * 0.693359375f) - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t n1 = n / 2, n2 = n - n1;  // each within [-75, 64]: a normal power of 2
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  return p * s1 * s2;
}

// y[i] = store<Out>(f(load(x[i]))) for i in [0, n). x and y may alias exactly
// (in-place), never partially.
template <class In, class Out, class F>
void map(const In* x, Out* y, int64_t n, const F& f) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
    for (int64_t i = b; i < e; ++i) y[i] = store<Out>(f(load(x[i])));
  });
}

// Runs `f` on input 0 into output 0, both of the same element type in `Set`.
template <unsigned Set, class F>
Status run_same_type(KernelContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.dtype != x.dtype) return ctx.fail("output type %s differs from input type %s", graph::dtype_name(y.dtype),
                                          graph::dtype_name(x.dtype));
  const bool ok = dispatch<Set>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map(x.as<const T>(), y.as<T>(), x.elements(), f);
  });
  if (!ok) return ctx.fail("element type %s is not handled", graph::dtype_name(x.dtype));
  return Status::Ok();
}

// Runs the predicate `f` on input 0 (types in `Set`) into a bool output 0.
template <unsigned Set, class F>
Status run_to_bool(KernelContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.dtype != DType::kBool) return ctx.fail("output type %s is not bool", graph::dtype_name(y.dtype));
  const bool ok = dispatch<Set>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map(x.as<const T>(), y.as<bool>(), x.elements(), f);
  });
  if (!ok) return ctx.fail("element type %s is not handled", graph::dtype_name(x.dtype));
  return Status::Ok();
}

}  // namespace openacl::kernels::cpu::unary
