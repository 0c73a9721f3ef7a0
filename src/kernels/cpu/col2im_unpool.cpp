// Col2Im (opset 18): sums sliding blocks back into an image (the inverse of
// im2col), and MaxUnpool (opset 9/11): scatters pooled maxima back to the
// positions MaxPool's Indices recorded.
#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

std::vector<int64_t> ints_of(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.elements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
  return v;
}

template <class T>
Status col2im_typed(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  for (size_t i : {1, 2})
    if (ctx.input(i).dtype != DType::kInt64 && ctx.input(i).dtype != DType::kInt32)
      return ctx.fail("input %zu must be int64", i);
  Tensor& y = ctx.output(0);
  const std::vector<int64_t> image = ints_of(ctx.input(1)), block = ints_of(ctx.input(2));
  const size_t r = image.size();
  if (block.size() != r || r == 0) return ctx.fail("image_shape and block_shape must have the same nonzero length");
  const std::vector<int64_t> dil = ctx.attrs().get_ints("dilations").value_or(std::vector<int64_t>(r, 1));
  const std::vector<int64_t> str = ctx.attrs().get_ints("strides").value_or(std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pads = ctx.attrs().get_ints("pads").value_or(std::vector<int64_t>(2 * r, 0));
  if (dil.size() != r || str.size() != r || pads.size() != 2 * r) return ctx.fail("dilations/strides/pads do not match image_shape");
  int64_t kprod = 1, lprod = 1, iprod = 1;
  std::vector<int64_t> nblocks(r);
  for (size_t i = 0; i < r; ++i) {
    if (block[i] < 1 || dil[i] < 1 || str[i] < 1) return ctx.fail("block_shape, dilations and strides must be >= 1");
    const int64_t span = dil[i] * (block[i] - 1) + 1;
    const int64_t padded = image[i] + pads[i] + pads[i + r];
    nblocks[i] = padded < span ? 0 : (padded - span) / str[i] + 1;
    kprod *= block[i];
    lprod *= nblocks[i];
    iprod *= image[i];
  }
  if (x.rank() != 3 || x.dims[1] % kprod || x.dims[2] != lprod)
    return ctx.fail("input must be [N, C*%lld, %lld]", static_cast<long long>(kprod), static_cast<long long>(lprod));
  const int64_t n = x.dims[0], c = x.dims[1] / kprod;
  std::vector<float> acc(static_cast<size_t>(iprod));
  const std::vector<int64_t> istr = strides_of(image);
  const T* xd = x.as<T>();
  T* yd = y.as<T>();
  for (int64_t b = 0; b < n * c; ++b) {
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int64_t k = 0; k < kprod; ++k) {
      const T* row = xd + (b * kprod + k) * lprod;
      for (int64_t l = 0; l < lprod; ++l) {
        int64_t kr = k, lr = l, off = 0;
        bool inside = true;
        for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
          const int64_t ki = kr % block[i], li = lr % nblocks[i];
          kr /= block[i], lr /= nblocks[i];
          const int64_t p = li * str[i] - pads[i] + ki * dil[i];
          if (p < 0 || p >= image[i]) { inside = false; break; }
          off += p * istr[i];
        }
        if (inside) acc[off] += static_cast<float>(load(row[l]));
      }
    }
    for (int64_t i = 0; i < iprod; ++i) yd[b * iprod + i] = store<T>(acc[i]);
  }
  return Status::Ok();
}

Status col2im(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = col2im_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("input must be a float tensor");
  return st;
}

// Indices address the unpooled tensor of the inferred shape (flattened); with
// output_shape the result sits in that tensor's leading corner.
template <class T>
Status max_unpool_typed(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  Tensor& y = ctx.output(0);
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  if (!kernel) return ctx.fail("kernel_shape is required");
  const size_t r = kernel->size();
  if (x.rank() != static_cast<int64_t>(r) + 2 || ind.dims != x.dims) return ctx.fail("X and I must match kernel_shape's rank");
  if (ind.dtype != DType::kInt64 && ind.dtype != DType::kInt32) return ctx.fail("I must be int64");
  const std::vector<int64_t> str = ctx.attrs().get_ints("strides").value_or(std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pads = ctx.attrs().get_ints("pads").value_or(std::vector<int64_t>(2 * r, 0));
  if (str.size() != r || pads.size() != 2 * r) return ctx.fail("strides/pads do not match kernel_shape");
  std::vector<int64_t> inferred{x.dims[0], x.dims[1]};
  for (size_t i = 0; i < r; ++i) inferred.push_back((x.dims[i + 2] - 1) * str[i] - pads[i] - pads[i + r] + (*kernel)[i]);
  if (y.rank() != x.rank()) return ctx.fail("output_shape must have X's rank");
  int64_t total = 1;
  for (size_t i = 0; i < inferred.size(); ++i) {
    if (inferred[i] < 0 || inferred[i] > y.dims[i]) return ctx.fail("output_shape is smaller than the unpooled shape");
    total *= inferred[i];
  }
  std::memset(y.data, 0, y.bytes());
  const std::vector<int64_t> is = strides_of(inferred), os = strides_of(y.dims);
  const T* xd = x.as<T>();
  T* yd = y.as<T>();
  const int64_t count = x.elements();
  for (int64_t e = 0; e < count; ++e) {
    const int64_t flat = ind.dtype == DType::kInt64 ? ind.as<int64_t>()[e] : ind.as<int32_t>()[e];
    if (flat < 0 || flat >= total) return ctx.fail("index %lld is out of range", static_cast<long long>(flat));
    int64_t rem = flat, off = 0;
    for (size_t d = 0; d < inferred.size(); ++d) {
      off += (rem / is[d]) * os[d];
      rem %= is[d];
    }
    yd[off] = xd[e];
  }
  return Status::Ok();
}

Status max_unpool(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = max_unpool_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("X must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(Col2Im, "cpu").types(float_types()).run(col2im);
OPENACL_REGISTER_KERNEL(MaxUnpool, "cpu").types(float_types()).run(max_unpool);

}  // namespace
}  // namespace openacl::kernels::cpu
