// LpNormalization: x / ||x||_p along one axis (p = 1 or 2); a zero norm gives 0.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

constexpr int64_t kBlock = 128;

template <class T>
void lpnorm_typed(const T* x, T* y, int64_t outer, int64_t len, int64_t inner, int p) {
  using A = ComputeType<T>;
  if (inner == 1) {
    // The common axis = -1 case: each norm is over a contiguous row.
    parallel_for(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* xr = x + o * len;
        T* yr = y + o * len;
        A norm = 0;
        if (p == 1) {
#pragma omp simd reduction(+ : norm)
          for (int64_t k = 0; k < len; ++k) norm += std::abs(load(xr[k]));
        } else {
#pragma omp simd reduction(+ : norm)
          for (int64_t k = 0; k < len; ++k) norm += load(xr[k]) * load(xr[k]);
          norm = std::sqrt(norm);
        }
        const A inv = norm == A(0) ? A(0) : A(1) / norm;
#pragma omp simd
        for (int64_t k = 0; k < len; ++k) yr[k] = store<T>(load(xr[k]) * inv);
      }
    });
    return;
  }
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len * std::min(inner, kBlock)));
  parallel_for(outer * blocks, grain, [&](int64_t b, int64_t e) {
    A norm[kBlock];
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / blocks, i0 = (item % blocks) * kBlock, n = std::min(kBlock, inner - i0);
      const int64_t base = o * len * inner + i0;
      for (int64_t j = 0; j < n; ++j) norm[j] = 0;
      for (int64_t k = 0; k < len; ++k) {
        const T* xs = x + base + k * inner;
        if (p == 1) {
          for (int64_t j = 0; j < n; ++j) norm[j] += std::abs(load(xs[j]));
        } else {
          for (int64_t j = 0; j < n; ++j) {
            const A v = load(xs[j]);
            norm[j] += v * v;
          }
        }
      }
      // Multiply by the inverse (0 for a zero norm) so the inner loop has no branch.
      for (int64_t j = 0; j < n; ++j) {
        const A nv = p == 1 ? norm[j] : std::sqrt(norm[j]);
        norm[j] = nv == A(0) ? A(0) : A(1) / nv;
      }
      for (int64_t k = 0; k < len; ++k) {
        const T* xs = x + base + k * inner;
        T* ys = y + base + k * inner;
        for (int64_t j = 0; j < n; ++j) ys[j] = store<T>(load(xs[j]) * norm[j]);
      }
    }
  });
}

Status lpnorm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t p = ctx.attrs().get_int("p", 2);
  if (p != 1 && p != 2) return ctx.fail("p = %lld; only 1 and 2 are supported", static_cast<long long>(p));
  const int64_t r = x.rank();
  int64_t axis = ctx.attrs().get_int("axis", -1);
  if (r == 0 || axis < -r || axis >= r)
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(r));
  if (axis < 0) axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.dims[i];
  for (int64_t i = axis + 1; i < r; ++i) inner *= x.dims[i];
  if (x.elements() == 0) return Status::Ok();
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    lpnorm_typed<T>(x.as<T>(), y.as<T>(), outer, x.dims[axis], inner, static_cast<int>(p));
  });
  if (!ok) return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(LpNormalization, "cpu").types(float_types()).run(lpnorm);

}  // namespace
}  // namespace openacl::kernels::cpu
