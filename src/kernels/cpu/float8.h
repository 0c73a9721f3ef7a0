// The 8-bit float formats of ONNX (one byte per element, stored as uint8_t):
//
//   format      exp/mant bias  max finite   inf        NaN            -0
//   e4m3fn      4/3      7     448 (0x7E)   none       0x7F, 0xFF     yes
//   e4m3fnuz    4/3      8     240 (0x7F)   none       0x80 only      no
//   e5m2        5/2      15    57344 (0x7B) 0x7C/0xFC  0x7D-7F, FD-FF yes
//   e5m2fnuz    5/2      16    57344 (0x7F) none       0x80 only      no
//   e8m0        8/0      127   2^127 (0xFE) none       0xFF           no sign
//
// Decoding is exact in float (every value is a float); encode() takes a float
// and rounds to nearest even. Values in double or 64-bit integers go through
// narrow_to_float() first (round-to-odd), which keeps that single rounding.
// (The onnx reference, through ml_dtypes, rounds double -> float -> float8;
// the two differ only for doubles within 2^-24 relative of a float8 tie.)
//
// Out of range (ONNX Cast/QuantizeLinear `saturate`): saturate=1 clamps
// finite values and infinities to +-max finite; saturate=0 turns overflow
// into inf for e5m2 and into NaN for the types without inf. NaN stays NaN.
// The fnuz types have no negative zero: results that round to -0 are +0.
//
// e8m0 (a bare power of two, 2^(e-127)) follows the ONNX reference: the sign
// is dropped, NaN and inf give 0xFF, and `round_mode` picks how the mantissa
// is dropped ("up": any fraction rounds up, "down": truncates, "nearest":
// rounds half up); saturate keeps 0xFE from rounding up into NaN.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

#include "graph/dtype.h"

namespace openacl::kernels::cpu::f8 {

using graph::DType;

enum class Format : uint8_t { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ, kE8M0 };
enum class RoundMode : uint8_t { kUp, kNearest, kDown };  // e8m0 only

constexpr bool is_float8(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ || t == DType::kFloat8E8M0;
}

constexpr Format format_of(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNUZ: return Format::kE4M3FNUZ;
    case DType::kFloat8E5M2: return Format::kE5M2;
    case DType::kFloat8E5M2FNUZ: return Format::kE5M2FNUZ;
    case DType::kFloat8E8M0: return Format::kE8M0;
    default: return Format::kE4M3FN;
  }
}

template <Format F>
struct FormatTag {
  static constexpr Format value = F;
};

// Calls f(FormatTag<F>{}) for a float8 dtype; false for other types.
template <class Fn>
bool dispatch_format(DType t, Fn&& f) {
  switch (t) {
    case DType::kFloat8E4M3FN: f(FormatTag<Format::kE4M3FN>{}); return true;
    case DType::kFloat8E4M3FNUZ: f(FormatTag<Format::kE4M3FNUZ>{}); return true;
    case DType::kFloat8E5M2: f(FormatTag<Format::kE5M2>{}); return true;
    case DType::kFloat8E5M2FNUZ: f(FormatTag<Format::kE5M2FNUZ>{}); return true;
    case DType::kFloat8E8M0: f(FormatTag<Format::kE8M0>{}); return true;
    default: return false;
  }
}

namespace detail {

constexpr int mant_bits(Format f) {
  return f == Format::kE4M3FN || f == Format::kE4M3FNUZ ? 3 : f == Format::kE8M0 ? 0 : 2;
}
constexpr int bias(Format f) {
  switch (f) {
    case Format::kE4M3FN: return 7;
    case Format::kE4M3FNUZ: return 8;
    case Format::kE5M2: return 15;
    case Format::kE5M2FNUZ: return 16;
    default: return 127;
  }
}
constexpr uint32_t max_code(Format f) { return f == Format::kE4M3FN ? 0x7E : f == Format::kE5M2 ? 0x7B : 0x7F; }
constexpr bool is_fnuz(Format f) { return f == Format::kE4M3FNUZ || f == Format::kE5M2FNUZ; }

// 2^k for k in float's normal exponent range.
constexpr float pow2(int k) { return std::bit_cast<float>(static_cast<uint32_t>(k + 127) << 23); }

template <Format F>
constexpr float decode_slow(uint8_t c) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  if constexpr (F == Format::kE8M0) {
    if (c == 0xFF) return kNaN;
    return c == 0 ? std::bit_cast<float>(uint32_t{0x00400000}) : std::bit_cast<float>(static_cast<uint32_t>(c) << 23);
  } else {
    constexpr int M = mant_bits(F), B = bias(F);
    const uint32_t mag = c & 0x7Fu;
    if constexpr (is_fnuz(F)) {
      if (c == 0x80) return kNaN;
    } else if constexpr (F == Format::kE4M3FN) {
      if (mag == 0x7F) return kNaN;
    } else {
      if (mag >= 0x7C) {
        if (mag > 0x7C) return kNaN;
        return c & 0x80 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
      }
    }
    const uint32_t e = mag >> M, m = mag & ((1u << M) - 1);
    const float v = e == 0 ? static_cast<float>(m) * pow2(1 - B - M)
                           : std::bit_cast<float>(((e - B + 127) << 23) | (m << (23 - M)));
    return c & 0x80 ? -v : v;
  }
}

template <Format F>
constexpr std::array<float, 256> make_table() {
  std::array<float, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = decode_slow<F>(static_cast<uint8_t>(i));
  return t;
}
template <Format F>
inline constexpr std::array<float, 256> kTable = make_table<F>();

}  // namespace detail

template <Format F>
inline float decode(uint8_t c) {
  return detail::kTable<F>[c];
}

// Any float8 dtype's element as float (NaN for non-float8 types).
inline float to_float(DType t, uint8_t c) {
  float v = std::numeric_limits<float>::quiet_NaN();
  dispatch_format(t, [&](auto tag) { v = decode<decltype(tag)::value>(c); });
  return v;
}

// `d` rounded to float with round-to-odd: a later round-to-nearest-even to a
// much narrower type gives the same result as rounding `d` directly.
inline float narrow_to_float(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && f - f == 0.0f) {  // inexact and finite
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 1u) == 0) {
      // f was rounded onto an even neighbour: step to the odd neighbour on
      // d's side of f (sign-magnitude bits: +1 moves away from zero).
      const bool f_bigger = (f < 0 ? -static_cast<double>(f) : static_cast<double>(f)) > (d < 0 ? -d : d);
      bits = f_bigger ? bits - 1 : bits + 1;
      f = std::bit_cast<float>(bits);
    }
  }
  return f;
}

inline uint8_t encode_e8m0(float x, bool saturate, RoundMode mode) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  uint32_t e = (u >> 23) & 0xFF;
  if (e == 0xFF) return 0xFF;
  bool up = false;
  switch (mode) {
    case RoundMode::kUp: up = (u & 0x7FFFFF) != 0; break;
    case RoundMode::kNearest:  // guard bit set and (anything below it, or a normal input)
      up = (u & 0x400000) && ((u & 0x3FFFFF) || e > 0);
      break;
    case RoundMode::kDown: break;
  }
  if (up && !(saturate && e == 0xFE)) ++e;
  return static_cast<uint8_t>(e);
}

template <Format F>
inline uint8_t encode(float x, bool saturate, RoundMode mode = RoundMode::kUp) {
  if constexpr (F == Format::kE8M0) {
    return encode_e8m0(x, saturate, mode);
  } else {
    constexpr int M = detail::mant_bits(F), B = detail::bias(F);
    constexpr uint32_t kMax = detail::max_code(F);
    constexpr bool kFnuz = detail::is_fnuz(F);
    // What overflow (saturate=0) and NaN become, before the sign.
    constexpr uint32_t kNaN = kFnuz ? 0x80 : 0x7F;
    constexpr uint32_t kOverflow = F == Format::kE5M2 ? 0x7C : kNaN;
    uint32_t u = std::bit_cast<uint32_t>(x);
    const uint32_t sign = kFnuz ? 0 : (u >> 24) & 0x80;  // fnuz: NaN and overflow are unsigned 0x80
    u &= 0x7FFFFFFFu;
    if (u > 0x7F800000u) return static_cast<uint8_t>(kNaN | sign);
    uint32_t code;
    if (u >= (static_cast<uint32_t>(1 - B + 127) << 23)) {
      // Normal in the target (or beyond): round the float's mantissa to M
      // bits, half to even; a carry moves into the exponent naturally. inf
      // lands above kMax as well.
      constexpr int S = 23 - M;
      const uint32_t r = (u + ((1u << (S - 1)) - 1) + ((u >> S) & 1u)) >> S;
      code = r - (static_cast<uint32_t>(127 - B) << M);
    } else {
      // Subnormal (or zero) in the target: count units of the smallest
      // subnormal; the scaling is exact and adding 2^23 rounds to an
      // integer, half to even (the default FP mode).
      const float q = std::bit_cast<float>(u) * detail::pow2(B - 1 + M);
      code = static_cast<uint32_t>((q + 8388608.0f) - 8388608.0f);
    }
    if (code > kMax) {
      if (saturate) return static_cast<uint8_t>(kMax | ((std::bit_cast<uint32_t>(x) >> 24) & 0x80));
      return static_cast<uint8_t>(kOverflow | sign);
    }
    if (kFnuz) return static_cast<uint8_t>(code == 0 ? 0 : code | ((std::bit_cast<uint32_t>(x) >> 24) & 0x80));
    return static_cast<uint8_t>(code | sign);
  }
}

}  // namespace openacl::kernels::cpu::f8
