// CumProd (opset 26): running product along an axis given as a scalar input,
// optionally exclusive (starting from 1) and/or reversed. Same form as CumSum.
#include <algorithm>
#include <type_traits>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

// Inner positions per work item: the running products live in a stack array
// and each step along the axis is one contiguous pass over it.
constexpr int64_t kBlock = 128;

// Integer products wrap (as numpy's do): multiplying as uint64 keeps that
// defined for every width, where int promotion of small types would not.
template <class A>
inline A mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <class T>
void cumprod_typed(const T* x, T* y, int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse) {
  using A = ComputeType<T>;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len * std::min(inner, kBlock)));
  parallel_for(outer * blocks, grain, [&](int64_t b, int64_t e) {
    A acc[kBlock];
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / blocks, i0 = (item % blocks) * kBlock, n = std::min(kBlock, inner - i0);
      const int64_t base = o * len * inner + i0;
      for (int64_t j = 0; j < n; ++j) acc[j] = A(1);
      for (int64_t s = 0; s < len; ++s) {
        const int64_t k = reverse ? len - 1 - s : s;
        const T* xs = x + base + k * inner;
        T* ys = y + base + k * inner;
        if (exclusive) {
          for (int64_t j = 0; j < n; ++j) {
            ys[j] = store<T>(acc[j]);
            acc[j] = mul<A>(acc[j], load(xs[j]));
          }
        } else {
          for (int64_t j = 0; j < n; ++j) {
            acc[j] = mul<A>(acc[j], load(xs[j]));
            ys[j] = store<T>(acc[j]);
          }
        }
      }
    }
  });
}

Status cumprod(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& at = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (at.elements() != 1)
    return ctx.fail("axis must hold exactly one value, it holds %lld", static_cast<long long>(at.elements()));
  int64_t axis = 0;
  if (at.dtype == DType::kInt64)
    axis = at.as<int64_t>()[0];
  else if (at.dtype == DType::kInt32)
    axis = at.as<int32_t>()[0];
  else
    return ctx.fail("axis must be int32 or int64, got %s", graph::dtype_name(at.dtype));
  const int64_t r = std::max<int64_t>(x.rank(), 1);  // a scalar behaves as [1]
  if (axis < -r || axis >= r)
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(r));
  if (axis < 0) axis += r;
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (i < axis)
      outer *= x.dims[i];
    else if (i == axis)
      len = x.dims[i];
    else
      inner *= x.dims[i];
  }
  if (x.elements() == 0) return Status::Ok();
  const bool exclusive = ctx.attrs().get_int("exclusive", 0) != 0;
  const bool reverse = ctx.attrs().get_int("reverse", 0) != 0;
  const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cumprod_typed<T>(x.as<T>(), y.as<T>(), outer, len, inner, exclusive, reverse);
  });
  if (!ok) return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(CumProd, "cpu")
    .types({DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32, DType::kInt64,
            DType::kUInt32, DType::kUInt64})
    .run(cumprod);

}  // namespace
}  // namespace openacl::kernels::cpu
