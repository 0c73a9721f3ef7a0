// ArgMax / ArgMin: int64 index of the extreme along `axis`; the first one on
// ties unless select_last_index (opset 12). NaN counts as the extreme (numpy).
// Viewed as [outer, n, inner]; lanes run over the contiguous inner dim.
#include <algorithm>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

template <bool kMax, bool kLast, class C>
inline bool better(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) {
    if (best != best) return false;  // a NaN already won
    if (v != v) return true;
  }
  if constexpr (kMax) return kLast ? v >= best : v > best;
  else return kLast ? v <= best : v < best;
}

template <bool kMax, bool kLast, class T>
void arg_typed(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t* y) {
  using C = ComputeType<T>;
  constexpr int64_t kB = 256;  // lanes per block: 1 KiB of float per row, fewer pages per pass
  const int64_t nb = (inner + kB - 1) / kB;
  parallel_for(outer * nb, std::max<int64_t>(1, 16384 / (kB * std::max<int64_t>(n, 1))), [&](int64_t b, int64_t e) {
    C best[kB];
    int64_t at[kB];
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / nb, j0 = (it % nb) * kB, len = std::min(kB, inner - j0);
      const T* base = x + o * n * inner + j0;
      for (int64_t j = 0; j < len; ++j) {
        best[j] = load(base[j]);
        at[j] = 0;
      }
      for (int64_t r = 1; r < n; ++r) {
        const T* p = base + r * inner;
        for (int64_t j = 0; j < len; ++j) {
          const C v = load(p[j]);
          if (better<kMax, kLast>(v, best[j])) {
            best[j] = v;
            at[j] = r;
          }
        }
      }
      std::copy(at, at + len, y + o * inner + j0);
    }
  });
}

template <bool kMax>
Status arg(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t axis = 0;
  if (!red::norm_axis(ctx.attrs().get_int("axis", 0), r, &axis))
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(ctx.attrs().get_int("axis", 0)),
                    static_cast<long long>(r));
  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  const bool last = ctx.attrs().get_int("select_last_index", 0) != 0;
  std::vector<int64_t> out_dims = x.dims;
  if (keepdims) out_dims[static_cast<size_t>(axis)] = 1;
  else out_dims.erase(out_dims.begin() + axis);
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, out_dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  if (n == 0) return ctx.fail("cannot take the arg%s of an empty axis %lld", kMax ? "max" : "min",
                              static_cast<long long>(axis));
  const int64_t outer = red::prod(x.dims, 0, static_cast<size_t>(axis));
  const int64_t inner = red::prod(x.dims, static_cast<size_t>(axis) + 1, x.dims.size());
  const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (last) arg_typed<kMax, true>(x.as<T>(), outer, n, inner, y->as<int64_t>());
    else arg_typed<kMax, false>(x.as<T>(), outer, n, inner, y->as<int64_t>());
  });
  if (!ok) return ctx.fail("Arg%s does not handle %s", kMax ? "Max" : "Min", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(ArgMax, "cpu").types(numeric_types()).run(arg<true>);
OPENACL_REGISTER_KERNEL(ArgMin, "cpu").types(numeric_types()).run(arg<false>);

}  // namespace
}  // namespace openacl::kernels::cpu
