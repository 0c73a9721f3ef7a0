// LRN and MeanVarianceNormalization.
//  - LRN: y = x / (bias + alpha / size * sum of x^2 over the channel window
//    [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta, X = [N, C, ...].
//  - MeanVarianceNormalization: y = (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
//    over `axes` (default [0, 2, 3]), as ONNX's function body defines it.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
void lrn_typed(const T* x, T* y, int64_t n, int64_t c, int64_t s, int64_t size, double alpha, double beta,
               double bias) {
  using C = ComputeType<T>;
  const int64_t lo_off = (size - 1) / 2, hi_off = size - 1 - lo_off;
  const C k = static_cast<C>(alpha / static_cast<double>(size));
  const int64_t block = 256;
  const int64_t nb = (s + block - 1) / block;
  parallel_for(n * c * nb, std::max<int64_t>(1, 64 / size), [&](int64_t b, int64_t e) {
    C sq[block];
    for (int64_t it = b; it < e; ++it) {
      const int64_t plane = it / nb, j0 = (it % nb) * block, len = std::min(block, s - j0);
      const int64_t ni = plane / c, ci = plane % c;
      const int64_t c0 = std::max<int64_t>(0, ci - lo_off), c1 = std::min<int64_t>(c - 1, ci + hi_off);
      for (int64_t j = 0; j < len; ++j) sq[j] = 0;
      for (int64_t cc = c0; cc <= c1; ++cc) {
        const T* xp = x + (ni * c + cc) * s + j0;
        for (int64_t j = 0; j < len; ++j) {
          const C v = load(xp[j]);
          sq[j] += v * v;
        }
      }
      const T* xp = x + plane * s + j0;
      T* yp = y + plane * s + j0;
      for (int64_t j = 0; j < len; ++j)
        yp[j] = store<T>(static_cast<C>(load(xp[j])) /
                         static_cast<C>(std::pow(static_cast<C>(bias) + k * sq[j], static_cast<C>(beta))));
    }
  });
}

Status lrn(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("X must have rank >= 2, got %lld", static_cast<long long>(x.rank()));
  const int64_t size = ctx.attrs().get_int("size", 0);
  if (size <= 0) return ctx.fail("size %lld must be positive", static_cast<long long>(size));
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const double alpha = ctx.attrs().get_float("alpha", 1e-4f), beta = ctx.attrs().get_float("beta", 0.75f);
  const double bias = ctx.attrs().get_float("bias", 1.0f);
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    lrn_typed<T>(x.as<T>(), y->as<T>(), x.dims[0], x.dims[1], red::prod(x.dims, 2, x.dims.size()), size, alpha, beta,
                 bias);
  });
  if (!ok) return ctx.fail("LRN does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

// One group per index over the dims not in `axes`. A group's elements are
// its base offset (kept dims) plus a list of offsets (reduced dims), each
// the start of a contiguous run when the trailing dims are reduced; groups
// are independent, so they run in parallel.
template <class T>
void mvn_typed(const T* x, T* y, const std::vector<int64_t>& dims, const std::vector<bool>& reduced) {
  const size_t r = dims.size();
  const std::vector<int64_t> st = strides_of(dims);
  size_t lead = r;
  int64_t run = 1;
  while (lead > 0 && reduced[lead - 1]) run *= dims[--lead];
  std::vector<int64_t> kdims, kstr, roff(1, 0);
  for (size_t i = 0; i < lead; ++i) {
    if (!reduced[i]) {
      kdims.push_back(dims[i]);
      kstr.push_back(st[i]);
      continue;
    }
    std::vector<int64_t> next;
    for (int64_t o : roff)
      for (int64_t k = 0; k < dims[i]; ++k) next.push_back(o + k * st[i]);
    roff.swap(next);
  }
  const int64_t groups = red::prod(kdims, 0, kdims.size());
  const int64_t count = static_cast<int64_t>(roff.size()) * run;
  const double inv_count = count ? 1.0 / static_cast<double>(count) : 0.0;
  parallel_for(groups, std::max<int64_t>(1, 16384 / std::max<int64_t>(count, 1)), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      int64_t base = 0, rem = g;
      for (size_t i = kdims.size(); i-- > 0;) {
        base += (rem % kdims[i]) * kstr[i];
        rem /= kdims[i];
      }
      double s = 0, q = 0;
      for (int64_t off : roff) {
        const T* p = x + base + off;
        for (int64_t j = 0; j < run; ++j) {
          const double v = static_cast<double>(load(p[j]));
          s += v;
          q += v * v;
        }
      }
      const double m = s * inv_count;
      const double inv = 1.0 / (std::sqrt(std::max(0.0, q * inv_count - m * m)) + 1e-9);
      for (int64_t off : roff) {
        const T* p = x + base + off;
        T* yp = y + base + off;
        for (int64_t j = 0; j < run; ++j) yp[j] = store<T>((static_cast<double>(load(p[j])) - m) * inv);
      }
    }
  });
}

Status mvn(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const std::vector<int64_t> axes = ctx.attrs().get_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    int64_t n = 0;
    if (!red::norm_axis(a, r, &n))
      return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(a), static_cast<long long>(r));
    reduced[static_cast<size_t>(n)] = true;
  }
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    mvn_typed<T>(x.as<T>(), y->as<T>(), x.dims, reduced);
  });
  if (!ok) return ctx.fail("MeanVarianceNormalization does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(LRN, "cpu").types(float_types()).run(lrn);
OPENACL_REGISTER_KERNEL(MeanVarianceNormalization, "cpu").types(float_types()).run(mvn);

}  // namespace
}  // namespace openacl::kernels::cpu
