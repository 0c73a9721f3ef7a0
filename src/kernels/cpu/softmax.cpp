// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D at
// `axis` (default 1) and each row [a_axis * ... * a_last] is normalised; from
// 13 one axis is (default -1). Either way the problem is [outer, n, inner].
// Softmax subtracts the row max before exp (stable for large inputs).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/reduce_util.h"
#include "kernels/cpu/simd8.h"
#include "kernels/cpu/softmax_row.h"

namespace openacl::kernels::cpu {
namespace {

enum class Mode { kSoftmax, kLog, kHard };

// exp for float on 4 or 8 lanes at once (GCC vector extensions; simd8.h):
// libm's expf does not vectorise without -ffast-math, and a scalar
// polynomial does not either (its range clamps become branches).
// exp(x) = 2^n * exp(r), r = x - n*ln2, exp(r) by the Cephes degree-6
// polynomial (relative error < 1e-7). Below -87.3 gives 0 (so -inf -> 0),
// NaN stays NaN.
typedef float V4f __attribute__((vector_size(16)));
typedef int32_t V4i __attribute__((vector_size(16)));

template <class V, class VI>
inline __attribute__((always_inline)) V expv(V x) {
  const V lo = V{} - 87.33654f, hi = V{} + 88.37626f;
  V c = x < lo ? lo : x;
  c = c > hi ? hi : c;
  const V n = (c * 1.44269504088896341f + 12582912.f) - 12582912.f;  // round(c / ln2)
  V r = c - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  V p = V{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const VI bits = (__builtin_convertvector(n, VI) + 127) << 23;
  V e = p * (V)bits;  // vector cast: a bit reinterpretation
  e = x < lo ? V{} : e;
  return x != x ? x : e;
}

inline V4f exp4(V4f x) { return expv<V4f, V4i>(x); }


inline float exp1(float x) { return exp4(V4f{} + x)[0]; }

template <class C>
inline C vexp(C x) {
  if constexpr (std::is_same_v<C, float>) return exp1(x);
  else return std::exp(x);
}

inline V4f load4(const float* p) {
  V4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, V4f v) { std::memcpy(p, &v, sizeof v); }

// y[j] = exp(x[j] - m[j]); s[j] += y[j] (y may be null).
inline void exp_lanes(const float* x, const float* m, float* y, float* s, int64_t n) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const V4f e = exp4(load4(x + j) - load4(m + j));
    if (y) store4(y + j, e);
    store4(s + j, load4(s + j) + e);
  }
  for (; j < n; ++j) {
    const float e = exp1(x[j] - m[j]);
    if (y) y[j] = e;
    s[j] += e;
  }
}

}  // namespace

OPENACL_AVX2_CLONES void softmax_row_f32(const float* x, float* y, int64_t n, bool log_mode) {
  // The max ignores NaN (as std::max does); a NaN input still makes the row NaN via its exp.
  v8f mv = v8f{} - std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8f v = ld8(x + i);
    mv = v > mv ? v : mv;
  }
  float m = mv[0];
  for (int l = 1; l < 8; ++l) m = std::max(m, mv[l]);
  for (; i < n; ++i) m = std::max(m, x[i]);
  v8f acc = {};
  for (i = 0; i + 8 <= n; i += 8) {
    const v8f e = expv<v8f, v8i>(ld8(x + i) - m);
    if (!log_mode) std::memcpy(y + i, &e, sizeof e);
    acc += e;
  }
  float s = hsum8(acc);
  for (; i < n; ++i) {
    const float e = exp1(x[i] - m);
    if (!log_mode) y[i] = e;
    s += e;
  }
  if (!log_mode) {
    const float inv = 1.f / s;
    for (i = 0; i < n; ++i) y[i] *= inv;
  } else {
    const float sub = m + std::log(s);
    for (i = 0; i < n; ++i) y[i] = x[i] - sub;
  }
}

namespace {

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
    if constexpr (std::is_same_v<T, float>) {
      softmax_row_f32(x, y, n, M == Mode::kLog);  // one exp per element, kept in y
      return;
    } else {
      C m = -std::numeric_limits<C>::infinity();
#pragma omp simd reduction(max : m)
      for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<C>(load(x[i])));
      C s = 0;
      if constexpr (M == Mode::kSoftmax && std::is_same_v<T, C>) {
        for (int64_t i = 0; i < n; ++i) {
          const C e = vexp(x[i] - m);
          y[i] = e;
          s += e;
        }
        const C inv = C(1) / s;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) y[i] *= inv;
      } else {
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < n; ++i) s += vexp(static_cast<C>(load(x[i])) - m);
        if constexpr (M == Mode::kSoftmax) {
          const C inv = C(1) / s;
          for (int64_t i = 0; i < n; ++i) y[i] = store<T>(vexp(static_cast<C>(load(x[i])) - m) * inv);
        } else {
          const C sub = m + std::log(s);
          for (int64_t i = 0; i < n; ++i) y[i] = store<T>(static_cast<C>(load(x[i])) - sub);
        }
      }
    }
  }
}

// n rows of stride `inner`, a block of `len` contiguous lanes at a time.
template <Mode M, class T>
void block_strided(const T* x, T* y, int64_t n, int64_t inner, int64_t len) {
  using C = ComputeType<T>;
  constexpr int64_t kB = 256;  // 1 KiB of float per row: fewer pages touched per pass
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
  } else if constexpr (M == Mode::kSoftmax && std::is_same_v<T, C>) {
    // Native type: keep exp(x - max) in y, then scale (one exp per element).
    for (int64_t r = 0; r < n; ++r) {
      if constexpr (std::is_same_v<T, float>) {
        exp_lanes(x + r * inner, m, y + r * inner, s, len);
      } else {
        for (int64_t j = 0; j < len; ++j) {
          const C e = vexp(x[r * inner + j] - m[j]);
          y[r * inner + j] = e;
          s[j] += e;
        }
      }
    }
    for (int64_t j = 0; j < len; ++j) s[j] = C(1) / s[j];
    for (int64_t r = 0; r < n; ++r)
#pragma omp simd
      for (int64_t j = 0; j < len; ++j) y[r * inner + j] *= s[j];
  } else {
    for (int64_t r = 0; r < n; ++r) {
      if constexpr (std::is_same_v<T, float>) {
        exp_lanes(x + r * inner, m, nullptr, s, len);
      } else {
        for (int64_t j = 0; j < len; ++j) s[j] += vexp(static_cast<C>(load(x[r * inner + j])) - m[j]);
      }
    }
    for (int64_t j = 0; j < len; ++j) {
      if constexpr (M == Mode::kSoftmax) s[j] = C(1) / s[j];
      else s[j] = m[j] + std::log(s[j]);
    }
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < len; ++j) {
        const C v = load(x[r * inner + j]);
        if constexpr (M == Mode::kSoftmax) y[r * inner + j] = store<T>(vexp(v - m[j]) * s[j]);
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
  constexpr int64_t kB = 256;  // 1 KiB of float per row: fewer pages touched per pass
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
