// Eight floats at a time with GCC's vector extensions, for the hot loops
// compiled under OPENACL_AVX2_CLONES (cpu_common.h): one AVX2 register in the
// x86-64-v3 clone, two SSE registers in the baseline one.
#pragma once

#include <cstdint>
#include <cstring>

// The helpers are always inlined into the cloned loops, so no v8f crosses a
// call: GCC's note about the AVX argument ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace openacl::kernels::cpu {

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

#define OPENACL_SIMD_INLINE inline __attribute__((always_inline))

OPENACL_SIMD_INLINE v8f ld8(const float* p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
OPENACL_SIMD_INLINE void st8(float* p, const v8f& v) { std::memcpy(p, &v, sizeof v); }
OPENACL_SIMD_INLINE float hsum8(const v8f& v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

}  // namespace openacl::kernels::cpu
