#include "kernels/cpu/blocked_layout.h"

#include <algorithm>
#include <atomic>

#if OPENACL_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace openacl::kernels::cpu {

namespace {
std::atomic<int64_t> g_block_override{-1};
}  // namespace

void set_channel_block_for_testing(int64_t block) { g_block_override.store(block, std::memory_order_relaxed); }

int64_t channel_block() {
#if OPENACL_HAVE_DNNL
  if (const int64_t o = g_block_override.load(std::memory_order_relaxed); o >= 0) return o;
  // oneDNN's direct kernels use one vector register of floats per block.
  static const int64_t block = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) == avx512 ? int64_t{16} : int64_t{8};
  }();
  return block;
#else
  return 0;  // nothing reads blocked layouts without oneDNN
#endif
}

int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, graph::DType dt,
                      const std::vector<int64_t>& dims) {
  const auto marks = attrs.get_ints(output ? kBlockedOutputsAttr : kBlockedInputsAttr);
  if (!marks || std::find(marks->begin(), marks->end(), static_cast<int64_t>(index)) == marks->end()) return 0;
  int64_t b = channel_block();
  if (const int64_t cap = attrs.get_int(kBlockedMaxAttr, 0); cap > 0) b = std::min(b, cap);
  if (b == 0 || dt != graph::DType::kFloat32 || dims.size() < 3 || dims.size() > 5) return 0;
  return dims[1] > 0 && dims[1] % b == 0 ? b : 0;
}

int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, const graph::TensorType& t) {
  if (!t.shape || !graph::fully_known(*t.shape)) return 0;
  std::vector<int64_t> dims;
  for (const graph::Dim& d : *t.shape) dims.push_back(d.value);
  return blocked_block(attrs, output, index, t.dtype, dims);
}

namespace {

// Calls f(plain offset, blocked offset) for every element.
template <class F>
void for_each_blocked(const std::vector<int64_t>& dims, int64_t b, F&& f) {
  const int64_t N = dims[0], C = dims[1];
  int64_t S = 1;
  for (size_t i = 2; i < dims.size(); ++i) S *= dims[i];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) f((n * C + c) * S + s, ((n * (C / b) + c / b) * S + s) * b + c % b);
}

}  // namespace

void blocked_to_plain(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block) {
  for_each_blocked(dims, block, [&](int64_t p, int64_t q) { dst[p] = src[q]; });
}

void plain_to_blocked(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block) {
  for_each_blocked(dims, block, [&](int64_t p, int64_t q) { dst[q] = src[p]; });
}

}  // namespace openacl::kernels::cpu
