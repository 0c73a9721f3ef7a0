// Row normalisations: X viewed as [rows, cols] with cols = the normalised
// dims, each row standardised on its own.
//  - LayerNormalization (17): y = (x - mean) / sqrt(var + eps) * scale + B,
//    optional Mean / InvStdDev outputs (typed by stash_type, [rows] values).
//  - RMSNormalization (23):  y = x / sqrt(mean(x^2) + eps) * scale.
//  - GroupNormalization (18, 21): rows are (n, group); scale/bias per group
//    (opset 18, [G]) or per channel (21, [C]).
// Statistics are computed in float (double for float64 inputs), two passes.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/cpu/reduce_util.h"
#include "kernels/cpu/simd8.h"

namespace openacl::kernels::cpu {
namespace {

// Scale/bias broadcast to the normalised dims xdims[axis:], as `cols` values.
// False when it is not broadcastable or varies over the leading dims.
template <class C>
bool expand_to_cols(const Tensor& t, const std::vector<int64_t>& xdims, size_t axis, std::vector<C>* out) {
  std::vector<double> v;
  if (!red::to_vec(t, &v) || t.dims.size() > xdims.size()) return false;
  const size_t off = xdims.size() - t.dims.size();
  for (size_t i = 0; i < t.dims.size(); ++i) {
    const int64_t d = t.dims[i], want = xdims[off + i];
    if (d != want && d != 1) return false;
    if (off + i < axis && d != 1) return false;
  }
  const std::vector<int64_t> bs = broadcast_strides(t.dims, xdims);
  const int64_t cols = red::prod(xdims, axis, xdims.size());
  out->resize(static_cast<size_t>(cols));
  std::vector<int64_t> idx(xdims.size(), 0);
  for (int64_t c = 0; c < cols; ++c) {
    int64_t rem = c, src = 0;
    for (size_t i = xdims.size(); i-- > axis;) {
      src += (rem % xdims[i]) * bs[i];
      rem /= xdims[i];
    }
    (*out)[static_cast<size_t>(c)] = static_cast<C>(v[static_cast<size_t>(src)]);
  }
  return true;
}

// mean and 1/sqrt(var + eps) of one row (var around 0 when !center: RMS).
template <class T, class C>
void row_stats(const T* x, int64_t n, bool center, double eps, C* mean, C* inv) {
  C m = 0;
  if (center) {
    C s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += static_cast<C>(load(x[i]));
    m = n ? s / static_cast<C>(n) : C(0);
  }
  C q = 0;
#pragma omp simd reduction(+ : q)
  for (int64_t i = 0; i < n; ++i) {
    const C d = static_cast<C>(load(x[i])) - m;
    q += d * d;
  }
  const C var = n ? q / static_cast<C>(n) : C(0);
  *mean = m;
  *inv = static_cast<C>(1.0 / std::sqrt(static_cast<double>(var) + eps));
}

// The float32 rows [lo, hi) of `cols` values, with no Mean / InvStdDev
// outputs: the same two passes and formula as row_stats + the loops in
// rownorm, eight lanes at a time under the AVX2 clones (a loop inside the
// lambda given to parallel_for is compiled for the baseline only).
OPENACL_AVX2_CLONES void norm_rows_f32(const float* x, float* y, int64_t lo, int64_t hi, int64_t cols,
                                       const float* scale, const float* bias, double eps, bool center) {
  for (int64_t row = lo; row < hi; ++row) {
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float mean = 0.f;
    int64_t i = 0;
    if (center) {
      v8f s0 = {}, s1 = {}, s2 = {}, s3 = {};
      for (; i + 32 <= cols; i += 32)
        s0 += ld8(xr + i), s1 += ld8(xr + i + 8), s2 += ld8(xr + i + 16), s3 += ld8(xr + i + 24);
      for (; i + 8 <= cols; i += 8) s0 += ld8(xr + i);
      float s = hsum8((s0 + s1) + (s2 + s3));
      for (; i < cols; ++i) s += xr[i];
      mean = cols ? s / static_cast<float>(cols) : 0.f;
    }
    v8f q0 = {}, q1 = {}, q2 = {}, q3 = {};
    const v8f m8 = v8f{} + mean;
    for (i = 0; i + 32 <= cols; i += 32) {
      const v8f d0 = ld8(xr + i) - m8, d1 = ld8(xr + i + 8) - m8;
      const v8f d2 = ld8(xr + i + 16) - m8, d3 = ld8(xr + i + 24) - m8;
      q0 += d0 * d0, q1 += d1 * d1, q2 += d2 * d2, q3 += d3 * d3;
    }
    for (; i + 8 <= cols; i += 8) {
      const v8f d = ld8(xr + i) - m8;
      q0 += d * d;
    }
    float q = hsum8((q0 + q1) + (q2 + q3));
    for (; i < cols; ++i) q += (xr[i] - mean) * (xr[i] - mean);
    const float var = cols ? q / static_cast<float>(cols) : 0.f;
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + eps));
    const v8f inv8 = v8f{} + inv;
    for (i = 0; i + 8 <= cols; i += 8) {
      const v8f v = (ld8(xr + i) - m8) * inv8 * ld8(scale + i);
      st8(yr + i, bias ? v + ld8(bias + i) : v);
    }
    for (; i < cols; ++i) yr[i] = (xr[i] - mean) * inv * scale[i] + (bias ? bias[i] : 0.f);
  }
}

template <class T>
void write_stat(Tensor* t, int64_t i, double v) {
  if (t && t->data) t->as<T>()[i] = store<T>(v);
}

// LayerNormalization (center = true) and RMSNormalization (center = false).
template <bool kCenter>
Status rownorm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  int64_t axis = 0;
  if (!red::norm_axis(axis_attr, r, &axis))
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(axis_attr),
                    static_cast<long long>(r));
  const size_t a = static_cast<size_t>(axis);
  const int64_t rows = red::prod(x.dims, 0, a), cols = red::prod(x.dims, a, x.dims.size());
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  // Mean / InvStdDev (LayerNormalization): X's dims with [axis, r) set to 1.
  Tensor* stats[2] = {nullptr, nullptr};
  if (kCenter && (ctx.has_output(1) || ctx.has_output(2))) {
    std::vector<int64_t> sdims = x.dims;
    for (size_t i = a; i < sdims.size(); ++i) sdims[i] = 1;
    for (size_t o = 1; o < 3; ++o)
      if (ctx.has_output(o)) OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, o, sdims, &stats[o - 1]));
  }
  if (rows == 0) return Status::Ok();
  // Arithmetic in X's compute type; Y is stored in its own type
  // (RMSNormalization's Y has scale's type V, which may differ from X's T).
  Status st = Status::Ok();
  bool inner_ok = true;
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    inner_ok = dispatch<kFloats>(y->dtype, [&](auto ytag) {
      using U = typename decltype(ytag)::type;
      using C = ComputeType<T>;
      const bool has_bias = kCenter && ctx.has_input(2);
      if constexpr (std::is_same_v<T, float> && std::is_same_v<U, float> && std::is_same_v<C, float>) {
        // Scale and B float32 over exactly the normalised dims (their usual
        // form): read in place, nothing expanded per run.
        auto direct = [&](const Tensor& t) {
          if (t.dtype != DType::kFloat32 || t.elements() != cols || t.dims.size() > x.dims.size()) return false;
          for (size_t i = 0; i < t.dims.size(); ++i) {
            const size_t xi = x.dims.size() - t.dims.size() + i;
            if (t.dims[i] != (xi < a ? 1 : x.dims[xi])) return false;
          }
          return true;
        };
        if (!stats[0] && !stats[1] && direct(ctx.input(1)) && (!has_bias || direct(ctx.input(2)))) {
          const float* xp = x.as<float>();
          float* yp = y->as<float>();
          const float* sp = ctx.input(1).as<float>();
          const float* bp = has_bias ? ctx.input(2).as<float>() : nullptr;
          parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
            norm_rows_f32(xp, yp, lo, hi, cols, sp, bp, eps, kCenter);
          });
          return;
        }
      }
      std::vector<C> scale, bias;
      if (!expand_to_cols(ctx.input(1), x.dims, a, &scale)) {
        st = ctx.fail("Scale (input 1) does not broadcast to the normalised dims of X");
        return;
      }
      if (has_bias && !expand_to_cols(ctx.input(2), x.dims, a, &bias)) {
        st = ctx.fail("B (input 2) does not broadcast to the normalised dims of X");
        return;
      }
      const T* xp = x.as<T>();
      U* yp = y->as<U>();
      const C* sp = scale.data();
      const C* bp = bias.data();
      parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
        for (int64_t row = lo; row < hi; ++row) {
          const T* xr = xp + row * cols;
          U* yr = yp + row * cols;
          C mean, inv;
          row_stats<T, C>(xr, cols, kCenter, eps, &mean, &inv);
          if (has_bias) {
#pragma omp simd
            for (int64_t i = 0; i < cols; ++i)
              yr[i] = store<U>((static_cast<C>(load(xr[i])) - mean) * inv * sp[i] + bp[i]);
          } else {
#pragma omp simd
            for (int64_t i = 0; i < cols; ++i) yr[i] = store<U>((static_cast<C>(load(xr[i])) - mean) * inv * sp[i]);
          }
          for (int s = 0; s < 2; ++s) {
            if (!stats[s]) continue;
            const double v = s == 0 ? mean : inv;
            dispatch<kFloats>(stats[s]->dtype,
                              [&](auto stag) { write_stat<typename decltype(stag)::type>(stats[s], row, v); });
          }
        }
      });
    });
  });
  if (!st.ok()) return st;
  if (!ok || !inner_ok)
    return ctx.fail("%s does not handle %s -> %s", ctx.node().op_type.c_str(), graph::dtype_name(x.dtype),
                    graph::dtype_name(y->dtype));
  return Status::Ok();
}

Status groupnorm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("X must have rank >= 2, got %lld", static_cast<long long>(x.rank()));
  const int64_t g = ctx.attrs().get_int("num_groups", 0);
  const int64_t n = x.dims[0], c = x.dims[1], s = red::prod(x.dims, 2, x.dims.size());
  if (g <= 0 || c % g != 0)
    return ctx.fail("num_groups %lld must be positive and divide the %lld channels", static_cast<long long>(g),
                    static_cast<long long>(c));
  std::vector<double> scale, bias;
  if (!red::to_vec(ctx.input(1), &scale) || !red::to_vec(ctx.input(2), &bias))
    return ctx.fail("scale and bias must be float tensors");
  // Per channel ([C], opset 21) or per group ([G], opset 18), told apart by size.
  const int64_t ns = static_cast<int64_t>(scale.size());
  if (ns != static_cast<int64_t>(bias.size()) || (ns != c && ns != g))
    return ctx.fail("scale and bias must both have %lld (channels) or %lld (groups) values, got %zu and %zu",
                    static_cast<long long>(c), static_cast<long long>(g), scale.size(), bias.size());
  const bool per_channel = ns == c;
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const int64_t cpg = c / g, len = cpg * s;
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* xp = x.as<T>();
    T* yp = y->as<T>();
    parallel_for(n * g, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        const int64_t grp = row % g;
        C mean, inv;
        row_stats<T, C>(xp + row * len, len, true, eps, &mean, &inv);
        for (int64_t k = 0; k < cpg; ++k) {
          const size_t pi = static_cast<size_t>(per_channel ? grp * cpg + k : grp);
          const C a = inv * static_cast<C>(scale[pi]);
          const C b = static_cast<C>(bias[pi]) - mean * a;
          const T* xr = xp + row * len + k * s;
          T* yr = yp + row * len + k * s;
#pragma omp simd
          for (int64_t i = 0; i < s; ++i) yr[i] = store<T>(static_cast<C>(load(xr[i])) * a + b);
        }
      }
    });
  });
  if (!ok) return ctx.fail("GroupNormalization does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(LayerNormalization, "cpu").types(float_types()).run(rownorm<true>);
OPENACL_REGISTER_KERNEL(RMSNormalization, "cpu").types(float_types()).run(rownorm<false>);
OPENACL_REGISTER_KERNEL(GroupNormalization, "cpu").types(float_types()).run(groupnorm);

}  // namespace
}  // namespace openacl::kernels::cpu
