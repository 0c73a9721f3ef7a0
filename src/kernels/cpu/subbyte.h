// The sub-byte element types, held one element per byte (graph/dtype.h):
// int4/int2 sign-extended like int8, uint4/uint2 like uint8, float4e2m1 as
// its 4-bit code (sign, 2 exponent bits, 1 mantissa bit; values 0, 0.5, 1,
// 1.5, 2, 3, 4, 6, no inf or NaN).
//
// Conversions follow the ONNX reference (ml_dtypes):
//  - to an integer type: integers wrap to the type's bits; floats are
//    truncated toward zero through int32 (NaN, inf and values outside int32
//    give 0) and then wrap: Cast(-9.0 -> int4) = 7, Cast(16.0 -> uint4) = 0;
//  - to float4e2m1: round to nearest even, saturating at +-6 (inf too); NaN
//    gives -0 (+0 for a NaN with its sign bit set), as ml_dtypes does.
// QuantizeLinear saturates to the type's range instead (quantize.cpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "graph/dtype.h"

namespace openacl::kernels::cpu::subbyte {

using graph::DType;

constexpr bool is_int(DType t) {
  return t == DType::kInt4 || t == DType::kUInt4 || t == DType::kInt2 || t == DType::kUInt2;
}
constexpr bool is_subbyte(DType t) { return is_int(t) || t == DType::kFloat4E2M1; }
constexpr bool is_signed(DType t) { return t == DType::kInt4 || t == DType::kInt2; }
constexpr int bits(DType t) { return t == DType::kInt2 || t == DType::kUInt2 ? 2 : 4; }
// The byte type a sub-byte integer is held in (kInt8 / kUInt8), else t.
constexpr DType storage(DType t) {
  return is_int(t) ? (is_signed(t) ? DType::kInt8 : DType::kUInt8) : t;
}
constexpr int64_t lowest(DType t) { return is_signed(t) ? -(int64_t{1} << (bits(t) - 1)) : 0; }
constexpr int64_t highest(DType t) {
  return is_signed(t) ? (int64_t{1} << (bits(t) - 1)) - 1 : (int64_t{1} << bits(t)) - 1;
}

// v wrapped to t's bits, as held in memory.
inline uint8_t wrap(int64_t v, DType t) {
  const uint64_t mask = (uint64_t{1} << bits(t)) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (is_signed(t) && (u >> (bits(t) - 1))) u |= ~mask;
  return static_cast<uint8_t>(u);
}

template <class C>
inline uint8_t wrap_float(C v, DType t) {
  if (!(v > C(-2147483649.0) && v < C(2147483648.0))) return 0;  // NaN, inf, outside int32
  return wrap(static_cast<int64_t>(v), t);
}

inline float fp4_decode(uint8_t code) {
  static constexpr float kValues[16] = {0.f,  0.5f,  1.f,  1.5f,  2.f,  3.f,  4.f,  6.f,
                                        -0.f, -0.5f, -1.f, -1.5f, -2.f, -3.f, -4.f, -6.f};
  return kValues[code & 15];
}

template <class C>
inline uint8_t fp4_encode(C x) {
  if (x != x) return std::signbit(x) ? 0 : 8;
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  const C a = std::fabs(x);
  static constexpr float kMagnitudes[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  for (uint8_t c = 0; c < 7; ++c) {
    const C mid = (C(kMagnitudes[c]) + C(kMagnitudes[c + 1])) / 2;  // exact in float
    if (a < mid) return sign | c;
    if (a == mid) return sign | (c % 2 == 0 ? c : c + 1);  // a tie: the even code
  }
  return sign | 7;
}

}  // namespace openacl::kernels::cpu::subbyte
