// The one element-wise loop every unary op, activation and cast shares: each
// op is a functor over the compute type (float for float16/bfloat16), so the
// per-op code is a line and the loop is a flat, contiguous, vectorisable one
// split across threads only when the tensor is large.
#pragma once

#include <bit>
#include <cstddef>
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
// c[0] z^(N-1) + c[1] z^(N-2) + ... + c[N-1] by Horner's rule (N is a
// constant: the loop unrolls into the same multiply-adds written out).
template <size_t N>
inline float horner(float z, const float (&c)[N]) {
  float p = c[0];
  for (size_t i = 1; i < N; ++i) p = p * z + c[i];
  return p;
}

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
  static constexpr float kC[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  const float p = horner(r, kC) * r * r + r + 1.0f;
  const int32_t n1 = n / 2, n2 = n - n1;  // each within [-75, 64]: a normal power of 2
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  return p * s1 * s2;
}

// Bits of a where mask is all ones, of b where it is zero: a select the
// vectoriser keeps (a ?: on floats becomes a branch it refuses).
inline float select_bits(int32_t mask, float a, float b) {
  return std::bit_cast<float>((std::bit_cast<int32_t>(a) & mask) | (std::bit_cast<int32_t>(b) & ~mask));
}

// |x| with x's sign bit put back on y.
inline float with_sign_of(float x, float y) {
  return std::bit_cast<float>((std::bit_cast<int32_t>(y) & 0x7fffffff) |
                              (std::bit_cast<int32_t>(x) & static_cast<int32_t>(0x80000000u)));
}

// tanh for float, branch-free (libm's tanhf stops the vectoriser). |x| < 0.5:
// the odd Taylor series to x^15 (next term below 1e-8 relative); beyond:
// (1 - e^-2|x|) / (1 + e^-2|x|) with exp_approx (no cancellation there: the
// numerator is at least 0.63). A few ulp; NaN stays NaN, +-inf gives +-1.
inline float tanh_approx(float x) {
  const float a = std::bit_cast<float>(std::bit_cast<int32_t>(x) & 0x7fffffff);
  const float z = a * a;
  static constexpr float kC[] = {-929569.f / 638512875.f, 21844.f / 6081075.f, -1382.f / 155925.f,
                                 62.f / 2835.f, -17.f / 315.f, 2.f / 15.f, -1.f / 3.f};
  const float small = a + a * z * horner(z, kC);
  // e^-2|x| no smaller than e^-80 (tanh is 1 in float long before): a
  // denormal e would cost microcode assists on every lane. (A NaN fails
  // the compare and flows on.)
  const float e = exp_approx(-select_bits(-static_cast<int32_t>(a > 40.f), 80.f, 2.f * a));
  const float large = (1.f - e) / (1.f + e);
  return with_sign_of(x, select_bits(-static_cast<int32_t>(a < 0.5f), small, large));
}

// erf for float, branch-free. |x| < 1: the Taylor series to x^21 (next
// term about 1e-9); beyond: 1 - erfc by Abramowitz and Stegun 7.1.26,
// t (a1 + .. + a5 t^4) e^-x^2 with t = 1 / (1 + p|x|), absolute error at
// most 1.5e-7 (a couple of ulp of values above erf(1) = 0.84). NaN stays
// NaN, +-inf gives +-1.
inline float erf_approx(float x) {
  const float a = std::bit_cast<float>(std::bit_cast<int32_t>(x) & 0x7fffffff);
  const float z = a * a;
  static constexpr float kTaylor[] = {  // (-1)^k / (k! (2k + 1)), k = 10 .. 1
      1.f / 76204800.f, -1.f / 6894720.f, 1.f / 685440.f, -1.f / 75600.f, 1.f / 9360.f,
      -1.f / 1320.f,    1.f / 216.f,      -1.f / 42.f,    1.f / 10.f,     -1.f / 3.f};
  const float small = 1.1283791670955126f * (a + a * z * horner(z, kTaylor));  // 2 / sqrt(pi)
  const float t = 1.f / (1.f + 0.3275911f * a);
  static constexpr float kAs[] = {1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f};
  const float q = horner(t, kAs);
  // e^-x^2 no smaller than e^-80 (erf is 1 in float from |x| = 4): see tanh_approx.
  const float large = 1.f - q * t * exp_approx(-select_bits(-static_cast<int32_t>(z > 80.f), 80.f, z));
  return with_sign_of(x, select_bits(-static_cast<int32_t>(a < 1.f), small, large));
}

// 2 atanh(s) = log((1 + s) / (1 - s)) for |s| <= 1/3, by the odd series to
// s^15 (the next term is below 1e-8 relative at s = 1/3).
inline float two_atanh(float s) {
  const float z = s * s;
  static constexpr float kC[] = {1.f / 15.f, 1.f / 13.f, 1.f / 11.f, 1.f / 9.f, 1.f / 7.f, 1.f / 5.f, 1.f / 3.f};
  return 2.f * (s + s * z * horner(z, kC));
}

// Natural log for float, branch-free (libm's logf stops the vectoriser).
// x = m 2^e with m in [sqrt(1/2), sqrt(2)) (denormals scaled by 2^24
// first), log m = 2 atanh(s), s = (m - 1) / (m + 1) in [-0.172, 0.172];
// then + e ln 2 in two parts. A few ulp. 0 gives -inf, negatives and NaN
// give NaN, +inf +inf.
inline float log_approx(float x) {
  const int32_t tiny = -static_cast<int32_t>(x < 1.17549435e-38f);  // denormal or below
  const float xs = select_bits(tiny, x * 16777216.f, x);             // * 2^24
  // Exponent relative to [sqrt(1/2), sqrt(2)): subtract the bits of
  // sqrt(1/2). Unsigned arithmetic: a negative x's bits would overflow an
  // int (its result is replaced by NaN below anyway).
  const uint32_t bits = std::bit_cast<uint32_t>(xs);
  const int32_t e = static_cast<int32_t>(bits - 0x3f3504f3u) >> 23;
  const float m = std::bit_cast<float>(bits - (static_cast<uint32_t>(e) << 23));
  const float fe = static_cast<float>(e) - select_bits(tiny, 24.f, 0.f);
  const float lm = two_atanh((m - 1.f) / (m + 1.f));
  const float r = fe * 0.693359375f + (fe * -2.12194440e-4f + lm);  // ln 2 = 0.693359375 - 2.12194440e-4
  // Specials on bits: x == 0 -> -inf, x < 0 or NaN -> NaN, +inf -> +inf.
  const float inf = std::numeric_limits<float>::infinity();
  float out = select_bits(-static_cast<int32_t>(x == 0.f), -inf, r);
  out = select_bits(-static_cast<int32_t>(x == inf), inf, out);
  return select_bits(-static_cast<int32_t>(!(x >= 0.f)), std::numeric_limits<float>::quiet_NaN(), out);
}

// softplus = log(1 + e^x) for float, branch-free: max(x, 0) + log1p(u) with
// u = e^-|x| in (0, 1], and log1p(u) = 2 atanh(s), s = u / (2 + u) in
// (0, 1/3]. No cancellation for tiny u (s = u / 2 to within rounding), so
// e^x for very negative x keeps its precision. NaN stays NaN; +inf gives
// +inf, -inf 0.
inline float softplus_approx(float x) {
  const float a = std::bit_cast<float>(std::bit_cast<int32_t>(x) & 0x7fffffff);
  const float u = exp_approx(-a);
  return (x > 0.f ? x : 0.f) + two_atanh(u / (2.f + u));
}

// y[i] = store<Out>(f(load(x[i]))) for i in [b, e): a function of its own
// under the AVX-512 / AVX2 clones (a loop written inside the lambda given to
// parallel_for is compiled for the baseline only, four floats at a time),
// flattened: f and the math it calls are inlined whatever their size, or the
// loop would call them once per element (Mish: softplus, tanh, two exps).
template <class In, class Out, class F>
OPENACL_WIDE_CLONES __attribute__((flatten)) void map_range(const In* x, Out* y, int64_t b, int64_t e, const F& f) {
#pragma omp simd
  for (int64_t i = b; i < e; ++i) y[i] = store<Out>(f(load(x[i])));
}

// y[i] = store<Out>(f(load(x[i]))) for i in [0, n). x and y may alias exactly
// (in-place), never partially.
template <class In, class Out, class F>
void map(const In* x, Out* y, int64_t n, const F& f) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { map_range(x, y, b, e, f); });
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
