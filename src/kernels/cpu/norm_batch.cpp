// Per-channel normalisations of X = [N, C, spatial...]:
//  - BatchNormalization (inference): y = (x - mean) / sqrt(var + eps) * scale + B,
//    folded per channel into y = x * a + b. training_mode=1 (opset 14+) and
//    the training outputs of older opsets are reported unsupported.
//  - InstanceNormalization: the same with mean/var of each (n, c) plane.
// Parameters may have their own float types (BatchNormalization opset 15's T1/T2).
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

template <class T, class C>
void affine_planes(const T* x, T* y, int64_t n, int64_t c, int64_t s, const C* a, const C* b) {
  parallel_for(n * c, std::max<int64_t>(1, 16384 / std::max<int64_t>(s, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const C ac = a[p % c], bc = b[p % c];
      const T* xp = x + p * s;
      T* yp = y + p * s;
#pragma omp simd
      for (int64_t i = 0; i < s; ++i) yp[i] = store<T>(static_cast<C>(load(xp[i])) * ac + bc);
    }
  });
}

std::string batchnorm_supports(const KernelInit& init) {
  if (init.attrs().get_int("training_mode", 0) != 0) return "training_mode=1 (batch statistics) is not supported";
  for (size_t o = 1; o < init.num_outputs(); ++o)
    if (init.output(o).dtype != DType::kUndefined) return "the training outputs (running/saved mean and var)";
  if (init.opset() > 0 && init.opset() < 9 && init.attrs().get_int("spatial", 1) == 0)
    return "spatial=0 (per-element statistics, opsets 7-8)";
  return "";
}

Status batchnorm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("X must have rank >= 2, got %lld", static_cast<long long>(x.rank()));
  const int64_t n = x.dims[0], c = x.dims[1], s = red::prod(x.dims, 2, x.dims.size());
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  std::vector<double> p[4];
  for (size_t i = 0; i < 4; ++i) {
    if (!red::to_vec(ctx.input(i + 1), &p[i])) return ctx.fail("input %zu must be a float tensor", i + 1);
    if (static_cast<int64_t>(p[i].size()) != c)
      return ctx.fail("input %zu has %zu values; X has %lld channels", i + 1, p[i].size(), static_cast<long long>(c));
  }
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    std::vector<C> a(static_cast<size_t>(c)), b(static_cast<size_t>(c));
    for (size_t i = 0; i < a.size(); ++i) {
      const double k = p[0][i] / std::sqrt(p[3][i] + eps);
      a[i] = static_cast<C>(k);
      b[i] = static_cast<C>(p[1][i] - p[2][i] * k);
    }
    affine_planes<T, C>(x.as<T>(), y->as<T>(), n, c, s, a.data(), b.data());
  });
  if (!ok) return ctx.fail("BatchNormalization does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

template <class T>
void instancenorm_typed(const T* x, T* y, int64_t n, int64_t c, int64_t s, const std::vector<double>& scale,
                        const std::vector<double>& bias, double eps) {
  using C = ComputeType<T>;
  parallel_for(n * c, std::max<int64_t>(1, 8192 / std::max<int64_t>(s, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const T* xp = x + p * s;
      T* yp = y + p * s;
      C sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < s; ++i) sum += static_cast<C>(load(xp[i]));
      const C mean = s ? sum / static_cast<C>(s) : C(0);
      C sq = 0;
#pragma omp simd reduction(+ : sq)
      for (int64_t i = 0; i < s; ++i) {
        const C d = static_cast<C>(load(xp[i])) - mean;
        sq += d * d;
      }
      const C var = s ? sq / static_cast<C>(s) : C(0);
      const C a = static_cast<C>(scale[static_cast<size_t>(p % c)] / std::sqrt(static_cast<double>(var) + eps));
      const C b = static_cast<C>(bias[static_cast<size_t>(p % c)]) - mean * a;
#pragma omp simd
      for (int64_t i = 0; i < s; ++i) yp[i] = store<T>(static_cast<C>(load(xp[i])) * a + b);
    }
  });
}

Status instancenorm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("X must have rank >= 2, got %lld", static_cast<long long>(x.rank()));
  const int64_t n = x.dims[0], c = x.dims[1], s = red::prod(x.dims, 2, x.dims.size());
  std::vector<double> scale, bias;
  if (!red::to_vec(ctx.input(1), &scale) || !red::to_vec(ctx.input(2), &bias))
    return ctx.fail("scale and B must be float tensors");
  if (static_cast<int64_t>(scale.size()) != c || static_cast<int64_t>(bias.size()) != c)
    return ctx.fail("scale and B must have %lld values (X's channels), got %zu and %zu", static_cast<long long>(c),
                    scale.size(), bias.size());
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    instancenorm_typed<T>(x.as<T>(), y->as<T>(), n, c, s, scale, bias, eps);
  });
  if (!ok) return ctx.fail("InstanceNormalization does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(BatchNormalization, "cpu").types(float_types()).supports(batchnorm_supports).run(batchnorm);
OPENACL_REGISTER_KERNEL(InstanceNormalization, "cpu").types(float_types()).run(instancenorm);

}  // namespace
}  // namespace openacl::kernels::cpu
