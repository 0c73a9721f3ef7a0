// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D at
// `axis` (default 1) and each row [a_axis * ... * a_last] is normalised; from
// 13 one axis is (default -1). Either way the problem is [outer, n, inner].
// Softmax subtracts the row max before exp (stable for large inputs).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

enum class Mode { kSoftmax, kLog, kHard };

template <Mode M, class T>
void row_contiguous(const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  if constexpr (M == Mode::kHard) {
    int64_t at = 0;
    C best = load(x[0]);
    for (int64_t i = 1; i < n; ++i) {
      const C v = load(x[i]);
      if (v > best) {
        best = v;
        at = i;
      }
    }
    for (int64_t i = 0; i < n; ++i) y[i] = store<T>(C(i == at ? 1 : 0));
    return;
  } else {
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<C>(load(x[i])));
    C s = 0;
    if constexpr (M == Mode::kSoftmax && std::is_same_v<T, C>) {
      for (int64_t i = 0; i < n; ++i) {
        const C e = std::exp(x[i] - m);
        y[i] = e;
        s += e;
      }
      const C inv = C(1) / s;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    } else {
      for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<C>(load(x[i])) - m);
      if constexpr (M == Mode::kSoftmax) {
        const C inv = C(1) / s;
        for (int64_t i = 0; i < n; ++i) y[i] = store<T>(std::exp(static_cast<C>(load(x[i])) - m) * inv);
      } else {
        const C sub = m + std::log(s);
        for (int64_t i = 0; i < n; ++i) y[i] = store<T>(static_cast<C>(load(x[i])) - sub);
      }
    }
  }
}

// n rows of stride `inner`, a block of `len` contiguous lanes at a time.
template <Mode M, class T>
void block_strided(const T* x, T* y, int64_t n, int64_t inner, int64_t len) {
  using C = ComputeType<T>;
  constexpr int64_t kB = 64;
  C m[kB], s[kB];
  int64_t at[kB];
  for (int64_t j = 0; j < len; ++j) {
    m[j] = -std::numeric_limits<C>::infinity();
    s[j] = 0;
    at[j] = 0;
  }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < len; ++j) {
      const C v = load(x[r * inner + j]);
      if constexpr (M == Mode::kHard) {
        if (r == 0 || v > m[j]) {
          m[j] = v;
          at[j] = r;
        }
      } else {
        m[j] = std::max(m[j], v);
      }
    }
  if constexpr (M == Mode::kHard) {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < len; ++j) y[r * inner + j] = store<T>(C(at[j] == r ? 1 : 0));
    return;
  } else {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < len; ++j) s[j] += std::exp(static_cast<C>(load(x[r * inner + j])) - m[j]);
    for (int64_t j = 0; j < len; ++j) {
      if constexpr (M == Mode::kSoftmax) s[j] = C(1) / s[j];
      else s[j] = m[j] + std::log(s[j]);
    }
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < len; ++j) {
        const C v = load(x[r * inner + j]);
        if constexpr (M == Mode::kSoftmax) y[r * inner + j] = store<T>(std::exp(v - m[j]) * s[j]);
        else y[r * inner + j] = store<T>(v - s[j]);
      }
  }
}

template <Mode M, class T>
void run_typed(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) row_contiguous<M, T>(x + o * n, y + o * n, n);
    });
    return;
  }
  constexpr int64_t kB = 64;
  const int64_t nb = (inner + kB - 1) / kB;
  parallel_for(outer * nb, std::max<int64_t>(1, 8192 / (kB * n)), [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / nb, j0 = (it % nb) * kB;
      const int64_t off = o * n * inner + j0;
      block_strided<M, T>(x + off, y + off, n, inner, std::min(kB, inner - j0));
    }
  });
}

template <Mode M>
Status softmax(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const bool per_axis = ctx.opset() <= 0 || ctx.opset() >= 13;
  const int64_t axis_attr = ctx.attrs().get_int("axis", per_axis ? -1 : 1);
  int64_t axis = 0;
  if (!per_axis && axis_attr == r) {
    axis = r;  // before opset 11 the coercion point may sit after the last dim
  } else if (!red::norm_axis(axis_attr, r, &axis)) {
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(axis_attr),
                    static_cast<long long>(r));
  }
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = red::prod(x.dims, 0, a);
  const int64_t n = per_axis ? x.dims[a] : red::prod(x.dims, a, x.dims.size());
  const int64_t inner = per_axis ? red::prod(x.dims, a + 1, x.dims.size()) : 1;
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_typed<M, T>(x.as<T>(), y->as<T>(), outer, n, inner);
  });
  if (!ok) return ctx.fail("%s does not handle %s", ctx.node().op_type.c_str(), graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Softmax, "cpu").types(float_types()).run(softmax<Mode::kSoftmax>);
OPENACL_REGISTER_KERNEL(LogSoftmax, "cpu").types(float_types()).run(softmax<Mode::kLog>);
OPENACL_REGISTER_KERNEL(Hardmax, "cpu").types(float_types()).run(softmax<Mode::kHard>);

}  // namespace
}  // namespace openacl::kernels::cpu
