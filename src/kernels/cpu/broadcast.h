// Numpy broadcasting for element-wise kernels (binary, variadic, Where, PRelu,
// and any other op whose inputs stretch onto one output shape).
//
//   BroadcastPlan<2> p;
//   if (!plan_broadcast<2>({&a.dims, &b.dims}, y.dims, &p)) return ctx.fail(...);
//   for_each_run(p, kElementwiseGrain, [&](int64_t y_off, const std::array<int64_t, 2>& in_off,
//                                          const std::array<int64_t, 2>& in_step, int64_t n) { ... });
//
// plan_broadcast collapses the problem first: output dims of 1 are dropped and
// neighbouring dims are merged wherever every input walks them as one (both
// broadcast or both contiguous). Same-shape inputs become one flat run,
// [N,C,H,W] x [C,1,1] becomes [N, C, H*W], [M,N] x [N] stays a row broadcast.
// for_each_run then cuts the output into runs along the innermost collapsed
// dim; inside a run each input either advances one element per output element
// (step 1) or repeats one element (step 0), so a callback can pick a tight,
// vectorisable loop per step combination. Large outputs are split across
// threads at arbitrary element positions (a run may be a part of a row).
//
// binary_broadcast() is the common case on top: y[i] = op(a[.], b[.]) with
// the four step-specialised inner loops, loading 16-bit floats as float.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/small_dims.h"

namespace openacl::kernels::cpu {

// Elements per thread chunk for cheap element-wise work; costly per-element
// functions (pow, fmod) pass a smaller grain.
inline constexpr int64_t kElementwiseGrain = 16384;

// Held in SmallDims: planning and walking allocate nothing up to 8 dims.
template <size_t N>
struct BroadcastPlan {
  SmallDims dims;                    // collapsed output dims (at least one)
  std::array<SmallDims, N> strides;  // per input, in elements, 0 where broadcast
  int64_t elements = 0;              // output elements
};

// False when some input does not broadcast to `out` (numpy rules, right-aligned).
template <size_t N>
bool plan_broadcast(const std::array<const std::vector<int64_t>*, N>& in, const std::vector<int64_t>& out,
                    BroadcastPlan<N>* plan) {
  const size_t rank = out.size();
  std::array<SmallDims, N> full;  // input k's stride along output dim i, 0 where broadcast
  for (size_t k = 0; k < N; ++k) {
    const std::vector<int64_t>& d = *in[k];
    if (d.size() > rank) return false;
    const size_t off = rank - d.size();
    for (size_t j = 0; j < d.size(); ++j)
      if (d[j] != 1 && d[j] != out[off + j]) return false;
    full[k].resize(rank);
    broadcast_strides(d, rank, full[k].data());
  }
  plan->elements = 1;
  for (int64_t d : out) plan->elements *= d;
  plan->dims.clear();
  for (size_t k = 0; k < N; ++k) plan->strides[k].clear();
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    bool merge = !plan->dims.empty();
    for (size_t k = 0; merge && k < N; ++k) merge = plan->strides[k].back() == full[k][i] * out[i];
    if (merge) {
      plan->dims.back() *= out[i];
      for (size_t k = 0; k < N; ++k) plan->strides[k].back() = full[k][i];
    } else {
      plan->dims.push_back(out[i]);
      for (size_t k = 0; k < N; ++k) plan->strides[k].push_back(full[k][i]);
    }
  }
  if (plan->dims.empty()) {
    plan->dims.push_back(1);
    for (size_t k = 0; k < N; ++k) plan->strides[k].push_back(0);
  }
  return true;
}

// Calls run(y_off, in_off, in_step, n) over runs covering every output element
// once: output elements [y_off, y_off + n) read input k at in_off[k] + i * in_step[k]
// (in_step is 0 or 1). Runs may execute concurrently on several threads.
template <size_t N, class Run>
void for_each_run(const BroadcastPlan<N>& p, int64_t grain, Run&& run) {
  if (p.elements <= 0) return;
  const size_t outer = p.dims.size() - 1;
  const int64_t n = p.dims.back();
  std::array<int64_t, N> step;
  for (size_t k = 0; k < N; ++k) step[k] = p.strides[k].back();
  parallel_for(p.elements, grain, [&](int64_t begin, int64_t end) {
    SmallDims idx(outer, 0);
    std::array<int64_t, N> base{};
    int64_t row = begin / n, col = begin % n;
    for (size_t d = outer; d-- > 0;) {
      idx[d] = row % p.dims[d];
      row /= p.dims[d];
      for (size_t k = 0; k < N; ++k) base[k] += idx[d] * p.strides[k][d];
    }
    int64_t pos = begin;
    while (pos < end) {
      const int64_t len = std::min(n - col, end - pos);
      std::array<int64_t, N> off;
      for (size_t k = 0; k < N; ++k) off[k] = base[k] + col * step[k];
      run(pos, off, step, len);
      pos += len;
      col = 0;
      for (size_t d = outer; d-- > 0;) {
        ++idx[d];
        for (size_t k = 0; k < N; ++k) base[k] += p.strides[k][d];
        if (idx[d] < p.dims[d]) break;
        idx[d] = 0;
        for (size_t k = 0; k < N; ++k) base[k] -= p.strides[k][d] * p.dims[d];
      }
    }
  });
}

// One run of y[i] = op(a, b) with a/b advancing (step 1) or fixed (step 0).
// op takes the compute types (float for 16-bit floats) and returns a value
// convertible to Y's compute type.
template <class A, class B, class Y, class Op>
inline void binary_run(const A* a, int64_t sa, const B* b, int64_t sb, Y* y, int64_t n, const Op& op) {
  if (sa && sb) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = store<Y>(op(load(a[i]), load(b[i])));
  } else if (sa) {
    const auto bv = load(*b);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = store<Y>(op(load(a[i]), bv));
  } else if (sb) {
    const auto av = load(*a);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = store<Y>(op(av, load(b[i])));
  } else {
    const Y v = store<Y>(op(load(*a), load(*b)));
    std::fill(y, y + n, v);
  }
}

// y = op(a, b) broadcast; a and b keep their own dims (y.dims is the output
// shape). False when a or b does not broadcast to y.
template <class A, class B, class Y, class Op>
bool binary_broadcast(const A* a, const std::vector<int64_t>& a_dims, const B* b, const std::vector<int64_t>& b_dims,
                      Y* y, const std::vector<int64_t>& y_dims, const Op& op, int64_t grain = kElementwiseGrain) {
  BroadcastPlan<2> p;
  if (!plan_broadcast<2>({&a_dims, &b_dims}, y_dims, &p)) return false;
  for_each_run(p, grain, [&](int64_t yo, const std::array<int64_t, 2>& o, const std::array<int64_t, 2>& s, int64_t n) {
    binary_run(a + o[0], s[0], b + o[1], s[1], y + yo, n, op);
  });
  return true;
}

}  // namespace openacl::kernels::cpu
