// IEEE-754 binary16 and bfloat16 conversions (bit patterns as uint16_t).
// Inline: kernels convert per element, and an out-of-line call keeps those
// loops from vectorising.
#pragma once

#include <cstdint>
#include <cstring>

namespace openacl {

namespace fp16_detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace fp16_detail

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return fp16_detail::bits_float(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp == 0) {
    if (mant == 0) return fp16_detail::bits_float(sign);
    // Subnormal half: value = mant * 2^-24, exactly representable in float.
    float v = static_cast<float>(mant) * fp16_detail::bits_float(0x33800000u);  // 2^-24
    return (sign != 0u) ? -v : v;
  }
  return fp16_detail::bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Round to nearest even, overflow to inf, NaN kept NaN.
inline uint16_t float_to_half(float value) {
  uint32_t f = fp16_detail::float_bits(value);
  uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  uint32_t abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    uint16_t nan_bit = (abs > 0x7F800000u) ? static_cast<uint16_t>(0x200u | ((abs >> 13) & 0x3FFu)) : 0;
    return static_cast<uint16_t>(sign | 0x7C00u | nan_bit);
  }
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return sign;  // < 2^-25 rounds to zero
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - exp;  // bits to drop so the result is in units of 2^-24
    uint32_t result = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half_way = 1u << (shift - 1u);
    if (rem > half_way || (rem == half_way && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = ((abs >> 13) - (112u << 10));
  uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;  // may carry into exponent: correct
  return static_cast<uint16_t>(sign | result);
}

inline float bf16_to_float(uint16_t bits) { return fp16_detail::bits_float(static_cast<uint32_t>(bits) << 16); }

// Round to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bf16(float value) {
  uint32_t f = fp16_detail::float_bits(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding = 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

}  // namespace openacl
