// IEEE-754 binary16 and bfloat16 conversions (bit patterns as uint16_t).
#pragma once

#include <cstdint>

namespace openacl {

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);  // round to nearest even, overflow to inf, NaN kept NaN
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);  // round to nearest even

}  // namespace openacl
