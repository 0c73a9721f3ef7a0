// NonZero and Unique: outputs whose shapes depend on the data, allocated here
// once the data has been scanned.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
inline bool nonzero(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v;
  else return load(v) != 0;
}

Status non_zero(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank(), n = x.elements();
  Status st = Status::Ok();
  if (!dispatch<kAll>(x.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = x.as<const T>();
        int64_t count = 0;
        for (int64_t i = 0; i < n; ++i) count += nonzero(p[i]) ? 1 : 0;
        // A scalar reports as rank 1 (ONNX reference: np.nonzero of a 0-d array).
        const int64_t rows = r == 0 ? 1 : r;
        Tensor* y = nullptr;
        st = ensure_output(ctx, 0, {rows, count}, &y);
        if (!st.ok()) return;
        int64_t* o = y->as<int64_t>();
        std::vector<int64_t> c(static_cast<size_t>(r), 0);
        int64_t k = 0;
        for (int64_t i = 0; i < n; ++i) {
          if (nonzero(p[i])) {
            for (int64_t a = 0; a < r; ++a) o[a * count + k] = c[a];
            if (r == 0) o[k] = 0;
            ++k;
          }
          for (int64_t a = r - 1; a >= 0; --a) {
            if (++c[a] < x.dims[a]) break;
            c[a] = 0;
          }
        }
      }))
    return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return st;
}

// A strict weak order for sorting: NaN after every number, NaNs equal.
template <class C>
inline bool less(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Unique over slices along `axis` (or single elements when flattened): slice
// k is x[o, k, i] for all (o, i).
Status unique(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool sorted = ctx.attrs().get_int("sorted", 1) != 0;
  const bool has_axis = ctx.attrs().find("axis") != nullptr;
  int64_t outer = 1, n = x.elements(), inner = 1, axis = 0;
  if (has_axis) {
    axis = ctx.attrs().get_int("axis", 0);
    if (!norm_axis(&axis, x.rank())) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
    n = x.dims[axis];
    for (int64_t a = 0; a < x.rank(); ++a)
      if (a < axis) outer *= x.dims[a];
      else if (a > axis) inner *= x.dims[a];
  }
  Status st = Status::Ok();
  if (!dispatch<kAll>(x.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = x.as<const T>();
        auto at = [&](int64_t k, int64_t o, int64_t i) { return load(p[(o * n + k) * inner + i]); };
        // <0, 0, >0 comparing slices a and b lexicographically.
        auto cmp = [&](int64_t a, int64_t b) -> int {
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
              const auto va = at(a, o, i), vb = at(b, o, i);
              if (less(va, vb)) return -1;
              if (less(vb, va)) return 1;
            }
          return 0;
        };
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
        // Groups of equal slices in sorted order; first = smallest original index.
        std::vector<int64_t> group_of(static_cast<size_t>(n)), first, counts;
        for (int64_t s = 0; s < n; ++s) {
          if (s == 0 || cmp(order[s - 1], order[s]) != 0) {
            first.push_back(order[s]);
            counts.push_back(0);
          }
          group_of[order[s]] = static_cast<int64_t>(first.size()) - 1;
          ++counts.back();
        }
        const int64_t u = static_cast<int64_t>(first.size());
        // Output position of each group: sorted order, or first occurrence.
        std::vector<int64_t> pos(static_cast<size_t>(u));
        std::iota(pos.begin(), pos.end(), 0);
        if (!sorted) {
          std::vector<int64_t> g(static_cast<size_t>(u));
          std::iota(g.begin(), g.end(), 0);
          std::sort(g.begin(), g.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
          for (int64_t k = 0; k < u; ++k) pos[g[k]] = k;
        }
        std::vector<int64_t> ydims = has_axis ? x.dims : std::vector<int64_t>{};
        if (has_axis) ydims[axis] = u;
        else ydims = {u};
        Tensor* y = nullptr;
        st = ensure_output(ctx, 0, ydims, &y);
        if (!st.ok()) return;
        T* yo = y->as<T>();
        for (int64_t gi = 0; gi < u; ++gi)
          for (int64_t o = 0; o < outer; ++o)
            std::memcpy(yo + (o * u + pos[gi]) * inner, p + (o * n + first[gi]) * inner,
                        static_cast<size_t>(inner) * sizeof(T));
        if (ctx.num_outputs() > 1 && ctx.has_output(1)) {
          Tensor* t = nullptr;
          st = ensure_output(ctx, 1, {u}, &t);
          if (!st.ok()) return;
          for (int64_t gi = 0; gi < u; ++gi) t->as<int64_t>()[pos[gi]] = first[gi];
        }
        if (ctx.num_outputs() > 2 && ctx.has_output(2)) {
          Tensor* t = nullptr;
          st = ensure_output(ctx, 2, {n}, &t);
          if (!st.ok()) return;
          for (int64_t k = 0; k < n; ++k) t->as<int64_t>()[k] = pos[group_of[k]];
        }
        if (ctx.num_outputs() > 3 && ctx.has_output(3)) {
          Tensor* t = nullptr;
          st = ensure_output(ctx, 3, {u}, &t);
          if (!st.ok()) return;
          for (int64_t gi = 0; gi < u; ++gi) t->as<int64_t>()[pos[gi]] = counts[gi];
        }
      }))
    return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return st;
}

OPENACL_REGISTER_KERNEL(NonZero, "cpu").types(all_types()).run(non_zero);
OPENACL_REGISTER_KERNEL(Unique, "cpu").types(all_types()).run(unique);

}  // namespace
}  // namespace openacl::kernels::cpu
