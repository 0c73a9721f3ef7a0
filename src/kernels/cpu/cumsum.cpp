// CumSum (opset 11+): running sum along the axis given by input 1, optionally
// exclusive (each output leaves out its own element) and/or reverse.
// Viewed as [outer, n, inner]; the running sums for a block of the contiguous
// inner dim live in a small stack array (float for float16/bfloat16).
#include <algorithm>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
void cumsum_typed(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse) {
  using A = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  constexpr int64_t kB = 256;  // lanes per block: 1 KiB of float per row, fewer pages per pass
  const int64_t nb = (inner + kB - 1) / kB;
  parallel_for(outer * nb, std::max<int64_t>(1, 16384 / (kB * std::max<int64_t>(n, 1))), [&](int64_t b, int64_t e) {
    A acc[kB];
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / nb, j0 = (it % nb) * kB, len = std::min(kB, inner - j0);
      for (int64_t j = 0; j < len; ++j) acc[j] = A(0);
      for (int64_t s = 0; s < n; ++s) {
        const int64_t r = reverse ? n - 1 - s : s;
        const int64_t off = (o * n + r) * inner + j0;
        const T* xp = x + off;
        T* yp = y + off;
        if (exclusive) {
          for (int64_t j = 0; j < len; ++j) {
            const A v = static_cast<A>(load(xp[j]));
            yp[j] = store<T>(acc[j]);
            acc[j] += v;
          }
        } else {
          for (int64_t j = 0; j < len; ++j) {
            acc[j] += static_cast<A>(load(xp[j]));
            yp[j] = store<T>(acc[j]);
          }
        }
      }
    }
  });
}

Status cumsum(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> av;
  if (!red::read_ints(ctx.input(1), &av) || av.size() != 1)
    return ctx.fail("axis (input 1) must be one int32 or int64 value");
  int64_t axis = 0;
  if (!red::norm_axis(av[0], x.rank(), &axis))
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(av[0]),
                    static_cast<long long>(x.rank()));
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, x.dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const bool exclusive = ctx.attrs().get_int("exclusive", 0) != 0;
  const bool reverse = ctx.attrs().get_int("reverse", 0) != 0;
  const int64_t outer = red::prod(x.dims, 0, static_cast<size_t>(axis));
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  const int64_t inner = red::prod(x.dims, static_cast<size_t>(axis) + 1, x.dims.size());
  const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cumsum_typed<T>(x.as<T>(), y->as<T>(), outer, n, inner, exclusive, reverse);
  });
  if (!ok) return ctx.fail("CumSum does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(CumSum, "cpu").types(numeric_types()).run(cumsum);

}  // namespace
}  // namespace openacl::kernels::cpu
