// Shared helpers for CPU kernels: element types as C++ types, dtype dispatch,
// the parallel loop, and broadcasting index math.
//
// Threads: every CPU kernel parallelises with parallel_for (OpenMP, the same
// pool oneDNN uses), so there is one pool for all compute (DESIGN.md).
// float16/bfloat16 are storage types: kernels load them as float, compute in
// float, and store back (rounding to nearest even).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "base/fp16.h"
#include "kernels/kernel.h"

// Hot loops compiled twice, for x86-64-v3 (AVX2, FMA) and the baseline, one
// picked at load time, so the library itself keeps the baseline ISA. Not
// under ThreadSanitizer: the clones' ifunc resolvers run while the library is
// relocated, before TSan's runtime is up, and its instrumentation crashes there.
// OPENACL_WIDE_CLONES adds an x86-64-v4 (AVX-512) clone, for loops GCC
// vectorises itself (the element-wise map: 16 lanes where the CPU has them,
// 1.6-11x faster than 8 on a Zen 5; the v8f helpers gain nothing from it).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define OPENACL_AVX2_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define OPENACL_WIDE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OPENACL_AVX2_CLONES
#define OPENACL_WIDE_CLONES
#endif

namespace openacl::kernels::cpu {

// This thread's scratch memory, grown to at least `bytes` (allocates only
// when it grows: the first run of the largest user). One buffer per thread
// for every kernel, valid until that thread's next call: oneDNN primitives'
// scratchpads and their reordered operands, Winograd's planes, the Strassen
// GEMM's sums of A.
inline void* scratch(size_t bytes) {
  thread_local std::vector<char> buf;
  if (buf.size() < bytes) buf.resize(bytes);
  return buf.data();
}

// A constant's float32 data, or nullptr when it is not float32 or its buffer
// is shorter than its dims say (then nothing is prepacked from it).
inline const float* const_f32(const graph::TensorData* t) {
  if (!t || t->dtype != graph::DType::kFloat32 || t->elements() < 0 ||
      t->bytes < static_cast<size_t>(t->elements()) * sizeof(float))
    return nullptr;
  return static_cast<const float*>(t->data);
}

// Storage types for the 16-bit floats.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// The type arithmetic happens in: float for the 16-bit floats, T otherwise.
template <class T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <class T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <class T>
inline ComputeType<T> load(const T& v) {
  if constexpr (std::is_same_v<T, Half>) return openacl::half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return openacl::bf16_to_float(v.bits);
  else return v;
}
template <class T, class C>
inline T store(C v) {
  if constexpr (std::is_same_v<T, Half>) return Half{openacl::float_to_half(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{openacl::float_to_bf16(static_cast<float>(v))};
  else return static_cast<T>(v);
}

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The C++ type for a DType, as a tag passed to dispatch lambdas.
template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) for the C++ type of `t`. Returns false (and does not
// call f) for types outside the set: bool is uint8_t-sized `bool`.
// Sets: kFloats (f16, bf16, f32, f64), kInts (all integer types), kAll (both + bool).
enum TypeSet : unsigned { kFloats = 1, kInts = 2, kBool = 4, kNumeric = kFloats | kInts, kAll = kFloats | kInts | kBool };

template <unsigned Set = kAll, class F>
bool dispatch(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: if constexpr (Set & kFloats) { f(TypeTag<float>{}); return true; } break;
    case DType::kFloat64: if constexpr (Set & kFloats) { f(TypeTag<double>{}); return true; } break;
    case DType::kFloat16: if constexpr (Set & kFloats) { f(TypeTag<Half>{}); return true; } break;
    case DType::kBFloat16: if constexpr (Set & kFloats) { f(TypeTag<BFloat16>{}); return true; } break;
    case DType::kInt8: if constexpr (Set & kInts) { f(TypeTag<int8_t>{}); return true; } break;
    case DType::kInt16: if constexpr (Set & kInts) { f(TypeTag<int16_t>{}); return true; } break;
    case DType::kInt32: if constexpr (Set & kInts) { f(TypeTag<int32_t>{}); return true; } break;
    case DType::kInt64: if constexpr (Set & kInts) { f(TypeTag<int64_t>{}); return true; } break;
    case DType::kUInt8: if constexpr (Set & kInts) { f(TypeTag<uint8_t>{}); return true; } break;
    case DType::kUInt16: if constexpr (Set & kInts) { f(TypeTag<uint16_t>{}); return true; } break;
    case DType::kUInt32: if constexpr (Set & kInts) { f(TypeTag<uint32_t>{}); return true; } break;
    case DType::kUInt64: if constexpr (Set & kInts) { f(TypeTag<uint64_t>{}); return true; } break;
    case DType::kBool: if constexpr (Set & kBool) { f(TypeTag<bool>{}); return true; } break;
    default: break;
  }
  return false;
}

// DType lists for registrations.
inline std::vector<DType> float_types() { return {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}; }
inline std::vector<DType> int_types() {
  return {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
          DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
}
inline std::vector<DType> numeric_types() {
  std::vector<DType> v = float_types();
  for (DType t : int_types()) v.push_back(t);
  return v;
}
inline std::vector<DType> all_types() {
  std::vector<DType> v = numeric_types();
  v.push_back(DType::kBool);
  return v;
}

// How many compute threads parallel_for may use.
inline int64_t compute_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Runs f(begin, end) over [0, n) split across the compute threads; chunks of
// at least `grain` items, serial when n < 2 * grain. f must be thread-safe.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n < 2 * grain) {
    f(int64_t{0}, n);
    return;
  }
#if defined(_OPENMP)
  int64_t chunks = n / grain;
  const int64_t most = static_cast<int64_t>(omp_get_max_threads()) * 4;
  if (chunks > most) chunks = most;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b = c * n / chunks, e = (c + 1) * n / chunks;
      f(b, e);
    }
  }
#else
  f(int64_t{0}, n);
#endif
}

// Runs f(i) for every i in [0, n) across the compute threads, each item to
// whichever thread is free (items of uneven cost: building kernels). Inside
// another parallel region, and with one thread, it runs them in order.
template <class F>
void parallel_tasks(int64_t n, F&& f) {
#if defined(_OPENMP)
  if (n > 1 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) f(i);
}

// Row-major strides of dims (in elements).
inline std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// Strides for reading a tensor of `dims` broadcast to an output of rank
// `out_rank` (numpy rules, right-aligned): 0 where the input dim is 1 or
// missing; written to s[0, out_rank) (no allocation). dims.size() <= out_rank.
inline void broadcast_strides(const std::vector<int64_t>& dims, size_t out_rank, int64_t* s) {
  const size_t off = out_rank - dims.size();
  std::fill(s, s + off, 0);
  int64_t own = 1;  // dims' row-major stride at i
  for (size_t i = dims.size(); i-- > 0;) {
    s[off + i] = dims[i] == 1 ? 0 : own;
    own *= dims[i];
  }
}
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  if (dims.size() > out_dims.size()) return s;  // callers check ranks first; never index out of bounds
  broadcast_strides(dims, out_dims.size(), s.data());
  return s;
}

}  // namespace openacl::kernels::cpu
