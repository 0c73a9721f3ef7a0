// A list of int64_t (dims, strides, indices) that holds up to kInline
// elements in itself and only goes to the heap past that: for the shape
// bookkeeping kernels do on every execute, which must not allocate
// (DESIGN.md: no heap allocation while a static model executes). Tensors of
// more than kInline dims still work, with an allocation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace openacl::kernels::cpu {

class SmallDims {
 public:
  static constexpr size_t kInline = 8;

  SmallDims() = default;
  explicit SmallDims(size_t n, int64_t v = 0) { resize(n, v); }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t* data() { return heap_.empty() ? inline_ : heap_.data(); }
  const int64_t* data() const { return heap_.empty() ? inline_ : heap_.data(); }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& back() { return data()[n_ - 1]; }
  int64_t back() const { return data()[n_ - 1]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + n_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + n_; }

  void clear() { n_ = 0; }
  void push_back(int64_t v) {
    resize(n_ + 1);
    back() = v;
  }
  // New elements (past the old size) are v.
  void resize(size_t n, int64_t v = 0) {
    if (n > kInline && heap_.size() < n) {
      std::vector<int64_t> grown(std::max(n, 2 * heap_.size()));
      std::copy(begin(), end(), grown.begin());
      heap_ = std::move(grown);
    }
    std::fill(data() + std::min(n_, n), data() + n, v);
    n_ = n;
  }

 private:
  size_t n_ = 0;
  int64_t inline_[kInline] = {};
  std::vector<int64_t> heap_;  // used instead of inline_ once non-empty
};

}  // namespace openacl::kernels::cpu
