// RotaryEmbedding (opset 23): for each (batch, seq, head) the first
// rotary_embedding_dim features are rotated in pairs — (x[i], x[i + half]) or,
// interleaved, (x[2i], x[2i + 1]) — by the angle whose cos/sin come from the
// caches, indexed by position_ids[b, s] or directly by (b, s).
#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
Status rotary_typed(KernelContext& ctx) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Tensor& x = ctx.input(0);
  const Tensor& cosc = ctx.input(1);
  const Tensor& sinc = ctx.input(2);
  const Tensor* pos = ctx.has_input(3) && ctx.input(3).data ? &ctx.input(3) : nullptr;
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  if (r != 3 && r != 4) return ctx.fail("input must be 3-D or 4-D");
  const int64_t batch = x.dims[0];
  int64_t seq, heads, hd;
  if (r == 4) {
    heads = x.dims[1], seq = x.dims[2], hd = x.dims[3];
  } else {
    heads = ctx.attrs().get_int("num_heads", 0);
    if (heads < 1 || x.dims[2] % heads) return ctx.fail("num_heads must divide the hidden size");
    seq = x.dims[1], hd = x.dims[2] / heads;
  }
  int64_t rd = ctx.attrs().get_int("rotary_embedding_dim", 0);
  if (rd == 0) rd = hd;
  if (rd < 0 || rd > hd || rd % 2) return ctx.fail("rotary_embedding_dim %lld is invalid for head size %lld", (long long)rd, (long long)hd);
  const int64_t half = rd / 2;
  const bool interleaved = ctx.attrs().get_int("interleaved", 0) != 0;
  if (cosc.dtype != x.dtype || sinc.dtype != x.dtype) return ctx.fail("cos_cache and sin_cache must have the input's dtype");
  if (cosc.dims != sinc.dims || cosc.dims.empty() || cosc.dims.back() != half)
    return ctx.fail("cos_cache/sin_cache must end in rotary_embedding_dim / 2 = %lld", (long long)half);
  int64_t max_pos = 0;
  if (pos) {
    if (cosc.rank() != 2) return ctx.fail("with position_ids the caches must be [max_position, dim / 2]");
    if (pos->elements() != batch * seq) return ctx.fail("position_ids must be [batch, seq]");
    if (pos->dtype != DType::kInt64 && pos->dtype != DType::kInt32) return ctx.fail("position_ids must be int64");
    max_pos = cosc.dims[0];
  } else if (cosc.rank() != 3 || cosc.dims[0] != batch || cosc.dims[1] != seq) {
    return ctx.fail("without position_ids the caches must be [batch, seq, dim / 2]");
  }
  const T* xd = x.as<T>();
  const T* cd = cosc.as<T>();
  const T* sd = sinc.as<T>();
  T* yd = y.as<T>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      int64_t p = b * seq + s;
      if (pos) {
        p = pos->dtype == DType::kInt64 ? pos->as<int64_t>()[b * seq + s] : pos->as<int32_t>()[b * seq + s];
        if (p < 0 || p >= max_pos) return ctx.fail("position id %lld is out of range [0, %lld)", (long long)p, (long long)max_pos);
      }
      const T* cr = cd + p * half;
      const T* sr = sd + p * half;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t off = r == 4 ? ((b * heads + h) * seq + s) * hd : ((b * seq + s) * heads + h) * hd;
        const T* in = xd + off;
        T* out = yd + off;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
          const C c = static_cast<C>(load(cr[i])), sn = static_cast<C>(load(sr[i]));
          const C x1 = static_cast<C>(load(in[i1])), x2 = static_cast<C>(load(in[i2]));
          out[i1] = store<T>(c * x1 - sn * x2);
          out[i2] = store<T>(sn * x1 + c * x2);
        }
        if (out != in) std::copy(in + rd, in + hd, out + rd);
      }
    }
  return Status::Ok();
}

Status rotary(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = rotary_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("input must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(RotaryEmbedding, "cpu").types(float_types()).run(rotary);

}  // namespace
}  // namespace openacl::kernels::cpu
