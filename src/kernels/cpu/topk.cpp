// TopK: the k largest (or smallest) values along `axis` and their int64
// indices. Ties go to the lower index; the output is always sorted (allowed
// for sorted=0). k is an attribute before opset 10, input 1 after. NaN sorts
// above every number (numpy's order), so it comes first with largest=1.
#include <algorithm>
#include <utility>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

template <class C>
inline bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

template <class T>
void topk_typed(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest, T* vals,
                int64_t* idx) {
  using C = ComputeType<T>;
  using Item = std::pair<C, int64_t>;
  // a before b: larger (smaller) value first, then lower index.
  auto before = [largest](const Item& a, const Item& b) {
    const bool an = is_nan(a.first), bn = is_nan(b.first);
    if (an || bn) {
      if (an && bn) return a.second < b.second;
      return largest ? an : bn;
    }
    if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  parallel_for(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    std::vector<Item> buf(static_cast<size_t>(n));
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / inner, j = it % inner;
      const T* p = x + o * n * inner + j;
      for (int64_t r = 0; r < n; ++r) buf[static_cast<size_t>(r)] = Item(load(p[r * inner]), r);
      std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), before);
      T* vp = vals + o * k * inner + j;
      int64_t* ip = idx + o * k * inner + j;
      for (int64_t r = 0; r < k; ++r) {
        vp[r * inner] = store<T>(buf[static_cast<size_t>(r)].first);
        ip[r * inner] = buf[static_cast<size_t>(r)].second;
      }
    }
  });
}

Status topk(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t k = 0;
  if (ctx.opset() > 0 && ctx.opset() < 10) {
    k = ctx.attrs().get_int("k", -1);
  } else {
    std::vector<int64_t> kv;
    if (!ctx.has_input(1) || !red::read_ints(ctx.input(1), &kv) || kv.size() != 1)
      return ctx.fail("K (input 1) must be a 1-element int64 tensor");
    k = kv[0];
  }
  int64_t axis = 0;
  if (!red::norm_axis(ctx.attrs().get_int("axis", -1), r, &axis))
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(ctx.attrs().get_int("axis", -1)),
                    static_cast<long long>(r));
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  if (k < 0 || k > n)
    return ctx.fail("k = %lld is outside [0, %lld] (dim %lld of the input)", static_cast<long long>(k),
                    static_cast<long long>(n), static_cast<long long>(axis));
  const bool largest = ctx.attrs().get_int("largest", 1) != 0;
  std::vector<int64_t> out_dims = x.dims;
  out_dims[static_cast<size_t>(axis)] = k;
  // Either output may be omitted (an unused name): then it goes to scratch.
  Tensor* vals = nullptr;
  Tensor* idx = nullptr;
  const int64_t count = red::prod(out_dims, 0, out_dims.size());
  if (count == 0) {
    for (size_t o = 0; o < 2; ++o)
      if (ctx.has_output(o)) OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, o, out_dims, &vals));
    return Status::Ok();
  }
  std::vector<unsigned char> vscratch;
  std::vector<int64_t> iscratch;
  void* vp = nullptr;
  int64_t* ip = nullptr;
  if (ctx.has_output(0)) {
    OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, out_dims, &vals));
    vp = vals->data;
  } else {
    vscratch.resize(static_cast<size_t>(count) * graph::dtype_bytes(x.dtype));
    vp = vscratch.data();
  }
  if (ctx.has_output(1)) {
    OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 1, out_dims, &idx));
    ip = idx->as<int64_t>();
  } else {
    iscratch.resize(static_cast<size_t>(count));
    ip = iscratch.data();
  }
  const int64_t outer = red::prod(x.dims, 0, static_cast<size_t>(axis));
  const int64_t inner = red::prod(x.dims, static_cast<size_t>(axis) + 1, x.dims.size());
  const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    topk_typed<T>(x.as<T>(), outer, n, inner, k, largest, static_cast<T*>(vp), ip);
  });
  if (!ok) return ctx.fail("TopK does not handle %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(TopK, "cpu").types(numeric_types()).run(topk);

}  // namespace
}  // namespace openacl::kernels::cpu
