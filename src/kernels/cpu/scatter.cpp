// Scatter (opset 9-10), ScatterElements, ScatterND with reduction
// none/add/mul/max/min. The output starts as a copy of data (or is data, in
// place); updates then apply in index order, serially, so duplicate indices
// reduce deterministically. All indices are checked before anything is written.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

enum class Red { kNone, kAdd, kMul, kMax, kMin };

bool parse_red(const std::string& s, Red* r) {
  if (s == "none") *r = Red::kNone;
  else if (s == "add") *r = Red::kAdd;
  else if (s == "mul") *r = Red::kMul;
  else if (s == "max") *r = Red::kMax;
  else if (s == "min") *r = Red::kMin;
  else return false;
  return true;
}

template <class T>
inline void apply(T* dst, const T* src, int64_t n, Red red) {
  for (int64_t i = 0; i < n; ++i) {
    const auto a = load(dst[i]);
    const auto b = load(src[i]);
    using C = ComputeType<T>;
    C v;
    switch (red) {
      case Red::kAdd: v = static_cast<C>(a + b); break;
      case Red::kMul: v = static_cast<C>(a * b); break;
      case Red::kMax: v = std::max(a, b); break;
      case Red::kMin: v = std::min(a, b); break;
      default: v = b; break;
    }
    dst[i] = store<T>(v);
  }
}

// Applies updates: dst[off[i] .. +block) op= upd[i*block ...] for each i.
Status scatter_blocks(KernelContext& ctx, Tensor& y, const Tensor& upd, const std::vector<int64_t>& off, int64_t block,
                      Red red) {
  const size_t es = elem_size(y);
  if (red == Red::kNone) {
    char* dst = static_cast<char*>(y.data);
    const char* src = static_cast<const char*>(upd.data);
    const size_t row = static_cast<size_t>(block) * es;
    for (size_t i = 0; i < off.size(); ++i) std::memcpy(dst + off[i] * static_cast<int64_t>(es), src + i * row, row);
    return Status::Ok();
  }
  if (!dispatch<kNumeric>(y.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* dst = y.as<T>();
        const T* src = upd.as<const T>();
        for (size_t i = 0; i < off.size(); ++i) apply(dst + off[i], src + i * block, block, red);
      }))
    return ctx.fail("reduction is not supported for %s", graph::dtype_name(y.dtype));
  return Status::Ok();
}

Status copy_data(const Tensor& x, Tensor& y) {
  if (y.data != x.data && x.bytes()) std::memcpy(y.data, x.data, x.bytes());
  return Status::Ok();
}

Status scatter_elements(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  Tensor& y = ctx.output(0);
  if (!is_index_type(idx.dtype)) return ctx.fail("indices must be int32 or int64");
  if (upd.dtype != x.dtype) return ctx.fail("updates must have the data's type");
  Red red;
  if (!parse_red(ctx.attrs().get_string("reduction", "none"), &red)) return ctx.fail("unknown reduction");
  const int64_t r = x.rank();
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (!norm_axis(&axis, r)) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
  if (idx.dims != upd.dims || idx.rank() != r) return ctx.fail("indices and updates must match, with the data's rank");
  for (int64_t a = 0; a < r; ++a)
    if (a != axis && idx.dims[a] > x.dims[a]) return ctx.fail("indices dim %lld exceeds the data's", static_cast<long long>(a));
  if (y.dims != x.dims) return ctx.fail("output dims differ from data");
  const int64_t n = idx.elements();
  const std::vector<int64_t> xs = strides_of(x.dims);
  std::vector<int64_t> off(static_cast<size_t>(n));
  std::vector<int64_t> c(static_cast<size_t>(r), 0);
  const int64_t d = x.dims[axis];
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = index_at(idx, i);
    if (v < 0) v += d;
    if (v < 0 || v >= d)
      return ctx.fail("index %lld out of range for axis of size %lld", static_cast<long long>(index_at(idx, i)),
                      static_cast<long long>(d));
    int64_t o = 0;
    for (int64_t a = 0; a < r; ++a) o += (a == axis ? v : c[a]) * xs[a];
    off[i] = o;
    for (int64_t a = r - 1; a >= 0; --a) {
      if (++c[a] < idx.dims[a]) break;
      c[a] = 0;
    }
  }
  OPENACL_RETURN_IF_ERROR(copy_data(x, y));
  return scatter_blocks(ctx, y, upd, off, 1, red);
}

Status scatter_nd(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  Tensor& y = ctx.output(0);
  if (!is_index_type(idx.dtype)) return ctx.fail("indices must be int32 or int64");
  if (upd.dtype != x.dtype) return ctx.fail("updates must have the data's type");
  Red red;
  if (!parse_red(ctx.attrs().get_string("reduction", "none"), &red)) return ctx.fail("unknown reduction");
  const int64_t r = x.rank(), q = idx.rank();
  if (q < 1) return ctx.fail("indices must have rank >= 1");
  const int64_t k = idx.dims[q - 1];
  if (k < 0 || k > r) return ctx.fail("indices last dim %lld exceeds the data's rank", static_cast<long long>(k));
  std::vector<int64_t> want(idx.dims.begin(), idx.dims.end() - 1);
  want.insert(want.end(), x.dims.begin() + k, x.dims.end());
  if (upd.dims != want) return ctx.fail("updates shape disagrees with data and indices");
  if (y.dims != x.dims) return ctx.fail("output dims differ from data");
  int64_t block = 1;
  for (int64_t a = k; a < r; ++a) block *= x.dims[a];
  const int64_t tuples = k == 0 ? idx.elements() : idx.elements() / k;
  const int64_t ntuples = k == 0 ? upd.elements() / std::max<int64_t>(block, 1) : tuples;
  const std::vector<int64_t> xs = strides_of(x.dims);
  std::vector<int64_t> off(static_cast<size_t>(ntuples), 0);
  for (int64_t t = 0; k > 0 && t < ntuples; ++t) {
    int64_t o = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t raw = index_at(idx, t * k + j), d = x.dims[j];
      const int64_t v = raw < 0 ? raw + d : raw;
      if (v < 0 || v >= d) return ctx.fail("index %lld out of range for dim of size %lld", static_cast<long long>(raw),
                                           static_cast<long long>(d));
      o += v * xs[j];
    }
    off[t] = o;
  }
  OPENACL_RETURN_IF_ERROR(copy_data(x, y));
  if (block == 0) return Status::Ok();
  return scatter_blocks(ctx, y, upd, off, block, red);
}

OPENACL_REGISTER_KERNEL(Scatter, "cpu").types(movable_types()).in_place(0, 0).run(scatter_elements);
OPENACL_REGISTER_KERNEL(ScatterElements, "cpu").types(movable_types()).in_place(0, 0).run(scatter_elements);
OPENACL_REGISTER_KERNEL(ScatterND, "cpu").types(movable_types()).in_place(0, 0).run(scatter_nd);

}  // namespace
}  // namespace openacl::kernels::cpu
