// Ops that generate values rather than move them: Shape, Size,
// ConstantOfShape, Range, OneHot, EyeLike, Trilu.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

Status shape(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t s = ctx.attrs().get_int("start", 0), e = ctx.attrs().get_int("end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = std::clamp<int64_t>(s, 0, r);
  e = std::clamp<int64_t>(e, 0, r);
  const int64_t n = std::max<int64_t>(e - s, 0);
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(ensure_output(ctx, 0, {n}, &y));
  for (int64_t i = 0; i < n; ++i) y->as<int64_t>()[i] = x.dims[s + i];
  return Status::Ok();
}

Status size(KernelContext& ctx) {
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(ensure_output(ctx, 0, {}, &y));
  y->as<int64_t>()[0] = ctx.input(0).elements();
  return Status::Ok();
}

// Fills `n` elements of `es` bytes with the pattern at `v`.
void fill_bytes(void* dst, int64_t n, const void* v, size_t es) {
  dispatch_size(es, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U u;
    std::memcpy(&u, v, sizeof(U));
    U* d = static_cast<U*>(dst);
    parallel_for(n, 65536, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = u;
    });
  });
}

Status constant_of_shape(KernelContext& ctx) {
  std::vector<int64_t> dims;
  if (!read_ints(ctx.input(0), &dims)) return ctx.fail("shape must be int64");
  for (int64_t d : dims)
    if (d < 0) return ctx.fail("negative dim %lld", static_cast<long long>(d));
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(ensure_output(ctx, 0, dims, &y));
  const size_t es = elem_size(*y);
  alignas(16) unsigned char v[16] = {};
  if (const graph::Attribute* a = ctx.attrs().find("value")) {
    if (a->kind != graph::Attribute::Kind::kTensor || !a->t || a->t->elements() != 1 || a->t->dtype != y->dtype ||
        a->t->bytes < es)
      return ctx.fail("value must be a one-element tensor of the output type");
    std::memcpy(v, a->t->data, es);
  }
  fill_bytes(y->data, y->elements(), v, es);
  return Status::Ok();
}

Status range(KernelContext& ctx) {
  const Tensor &s = ctx.input(0), &l = ctx.input(1), &d = ctx.input(2);
  if (s.elements() != 1 || l.elements() != 1 || d.elements() != 1) return ctx.fail("start, limit, delta must be scalars");
  if (l.dtype != s.dtype || d.dtype != s.dtype) return ctx.fail("start, limit, delta must share a type");
  Status st = Status::Ok();
  if (!dispatch<kNumeric>(s.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = ComputeType<T>;
        const C a = load(s.as<const T>()[0]), b = load(l.as<const T>()[0]), dl = load(d.as<const T>()[0]);
        if (dl == C(0)) {
          st = ctx.fail("delta must not be 0");
          return;
        }
        int64_t n = 0;
        if constexpr (std::is_floating_point_v<C>) {
          const double v = std::ceil((static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(dl));
          if (!(v < 9.0e18)) {
            st = ctx.fail("range too large");
            return;
          }
          n = v > 0 ? static_cast<int64_t>(v) : 0;
        } else {
          const __int128 span = dl > 0 ? static_cast<__int128>(b) - a : static_cast<__int128>(a) - b;
          const __int128 step = dl > 0 ? static_cast<__int128>(dl) : -static_cast<__int128>(dl);
          n = span > 0 ? static_cast<int64_t>((span + step - 1) / step) : 0;
        }
        Tensor* y = nullptr;
        st = ensure_output(ctx, 0, {n}, &y);
        if (!st.ok()) return;
        T* o = y->as<T>();
        for (int64_t i = 0; i < n; ++i) o[i] = store<T>(static_cast<C>(a + static_cast<C>(i) * dl));
      }))
    return ctx.fail("unsupported type %s", graph::dtype_name(s.dtype));
  return st;
}

bool scalar_as_double(const Tensor& t, double* v) {
  if (t.elements() < 1) return false;
  return dispatch<kNumeric>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *v = static_cast<double>(load(t.as<const T>()[0]));
  });
}

Status one_hot(KernelContext& ctx) {
  const Tensor &idx = ctx.input(0), &depth_t = ctx.input(1), &vals = ctx.input(2);
  Tensor& y = ctx.output(0);
  double dd;
  if (!scalar_as_double(depth_t, &dd) || !(dd >= 1 && dd < 9.0e18)) return ctx.fail("depth must be a positive scalar");
  const int64_t depth = static_cast<int64_t>(dd);
  if (vals.elements() != 2 || vals.dtype != y.dtype) return ctx.fail("values must hold [off, on]");
  const int64_t r = idx.rank() + 1;
  int64_t axis = ctx.attrs().get_int("axis", -1);
  if (!norm_axis(&axis, r)) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < idx.rank(); ++a) (a < axis ? outer : inner) *= idx.dims[a];
  if (y.elements() != outer * depth * inner) return ctx.fail("output dims disagree with depth");
  const int64_t n = idx.elements();
  std::vector<int64_t> ind(static_cast<size_t>(n));
  if (!dispatch<kNumeric>(idx.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < n; ++i) {
          const double v = static_cast<double>(load(idx.as<const T>()[i]));
          int64_t k = (v > -9.0e18 && v < 9.0e18) ? static_cast<int64_t>(v) : -depth - 1;
          if (k < 0) k += depth;
          ind[i] = k;  // out of range: no position is "on"
        }
      }))
    return ctx.fail("indices must be numeric");
  const size_t es = elem_size(y);
  const char* off = static_cast<const char*>(vals.data);
  fill_bytes(y.data, y.elements(), off, es);
  char* out = static_cast<char*>(y.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = ind[o * inner + i];
      if (k >= 0 && k < depth) std::memcpy(out + ((o * depth + k) * inner + i) * es, off + es, es);
    }
  return Status::Ok();
}

Status eye_like(KernelContext& ctx) {
  Tensor& y = ctx.output(0);
  if (y.rank() != 2) return ctx.fail("EyeLike needs a 2-D input");
  const int64_t k = ctx.attrs().get_int("k", 0);
  if (y.bytes()) std::memset(y.data, 0, y.bytes());
  const int64_t rows = y.dims[0], cols = y.dims[1];
  if (!dispatch<kAll>(y.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* o = y.as<T>();
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t j = i + k;
          if (j >= 0 && j < cols) o[i * cols + j] = store<T>(1);
        }
      }))
    return ctx.fail("unsupported type %s", graph::dtype_name(y.dtype));
  return Status::Ok();
}

Status trilu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.rank() < 2) return ctx.fail("Trilu needs rank >= 2");
  int64_t k = 0;
  if (ctx.has_input(1) && ctx.input(1).elements() > 0) {
    if (!is_index_type(ctx.input(1).dtype)) return ctx.fail("k must be int64");
    k = index_at(ctx.input(1), 0);
  }
  const bool upper = ctx.attrs().get_int("upper", 1) != 0;
  if (y.data != x.data && x.bytes()) std::memcpy(y.data, x.data, x.bytes());
  const int64_t R = x.dims[x.rank() - 2], C = x.dims[x.rank() - 1];
  if (R == 0 || C == 0) return Status::Ok();
  const int64_t mats = x.elements() / (R * C);
  const size_t es = elem_size(x);
  char* base = static_cast<char*>(y.data);
  parallel_for(mats * R, std::max<int64_t>(1, 4096 / C), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t i = t % R;
      char* row = base + t * C * static_cast<int64_t>(es);
      // Keep j - i >= k (upper) or j - i <= k (lower); zero the rest.
      int64_t z0, z1;
      if (upper) {
        z0 = 0;
        z1 = std::clamp<int64_t>(i + k, 0, C);
      } else {
        z0 = std::clamp<int64_t>(i + k + 1, 0, C);
        z1 = C;
      }
      if (z1 > z0) std::memset(row + z0 * es, 0, static_cast<size_t>(z1 - z0) * es);
    }
  });
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Shape, "cpu").run(shape);
OPENACL_REGISTER_KERNEL(Size, "cpu").run(size);
OPENACL_REGISTER_KERNEL(ConstantOfShape, "cpu").types({DType::kInt64}).run(constant_of_shape);
OPENACL_REGISTER_KERNEL(Range, "cpu").types(numeric_types()).run(range);
OPENACL_REGISTER_KERNEL(OneHot, "cpu").types(numeric_types()).run(one_hot);
OPENACL_REGISTER_KERNEL(EyeLike, "cpu").types(all_types()).run(eye_like);
OPENACL_REGISTER_KERNEL(Trilu, "cpu").types(movable_types()).in_place(0, 0).run(trilu);

}  // namespace
}  // namespace openacl::kernels::cpu
