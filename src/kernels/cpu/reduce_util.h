// Helpers shared by the reduction / softmax / normalisation kernels: reading
// small integer inputs (axes, k), normalising axes, getting an output whose
// dims the kernel computed itself, and collapsing a tensor to
// [outer, n, inner] around an axis range.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu::red {

// The int32/int64 contents of input i; false (with *why set) for another dtype.
inline bool read_ints(const Tensor& t, std::vector<int64_t>* out) {
  out->clear();
  const int64_t n = t.elements();
  if (n > 0 && t.data == nullptr) return false;
  if (t.dtype == DType::kInt64) {
    out->assign(t.as<int64_t>(), t.as<int64_t>() + n);
  } else if (t.dtype == DType::kInt32) {
    for (int64_t i = 0; i < n; ++i) out->push_back(t.as<int32_t>()[i]);
  } else {
    return false;
  }
  return true;
}

// axis in [-rank, rank) to [0, rank); false when out of range.
inline bool norm_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

// Output i with `dims`: the one the engine allocated when it matches (an
// empty tensor may come without data), else allocated here (outputs whose
// shape depended on data the engine could not see).
inline Status output_with_dims(KernelContext& ctx, size_t i, const std::vector<int64_t>& dims, Tensor** out) {
  Tensor& t = ctx.output(i);
  if (t.dims == dims && (t.data != nullptr || t.elements() == 0)) {
    *out = &t;
    return Status::Ok();
  }
  return ctx.allocate_output(i, dims, out);
}

inline int64_t prod(const std::vector<int64_t>& d, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e && i < d.size(); ++i) p *= d[i];
  return p;
}

// A float tensor's values as C (per-channel parameters, small); false for a
// non-float dtype or missing data.
template <class C>
bool to_vec(const Tensor& t, std::vector<C>* out) {
  const int64_t n = t.elements();
  out->resize(static_cast<size_t>(n));
  if (n > 0 && t.data == nullptr) return false;
  return dispatch<kFloats>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.as<T>();
    for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = static_cast<C>(load(p[i]));
  });
}

}  // namespace openacl::kernels::cpu::red
