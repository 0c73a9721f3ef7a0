// TensorScatter (opset 24): writes `update` into a copy of `past_cache` along
// the sequence axis at each batch's write index (KV-cache append). "circular"
// wraps the index modulo the cache length; "linear" must fit.
#include <cstring>
#include <string>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

Status tensor_scatter(KernelContext& ctx) {
  const Tensor& past = ctx.input(0);
  const Tensor& upd = ctx.input(1);
  Tensor& y = ctx.output(0);
  const std::string mode = ctx.attrs().get_string("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.fail("mode '%s' is not linear or circular", mode.c_str());
  const bool circular = mode == "circular";
  const size_t es = graph::dtype_bytes(past.dtype);
  if (es == 0) return ctx.fail("unsupported type %s", graph::dtype_name(past.dtype));
  if (upd.dtype != past.dtype) return ctx.fail("update must have past_cache's type");
  const int64_t r = past.rank();
  int64_t axis = ctx.attrs().get_int("axis", -2);
  if (axis < -r || axis >= r)
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(r));
  if (axis < 0) axis += r;
  if (axis == 0) return ctx.fail("axis must not be the batch dim (0)");
  if (upd.rank() != r) return ctx.fail("update and past_cache must have the same rank");
  for (int64_t i = 0; i < r; ++i)
    if (i == axis ? upd.dims[i] > past.dims[i] : upd.dims[i] != past.dims[i])
      return ctx.fail("update's shape does not fit past_cache's in dim %lld", static_cast<long long>(i));
  const int64_t batch = past.dims[0], max_seq = past.dims[axis], seq = upd.dims[axis];
  const int64_t* wi = nullptr;
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.dtype != DType::kInt64 || w.elements() != batch)
      return ctx.fail("write_indices must be int64 with one value per batch (%lld)", static_cast<long long>(batch));
    wi = w.as<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      if (wi[b] < 0)
        return ctx.fail("write_indices[%lld] = %lld is negative", static_cast<long long>(b),
                        static_cast<long long>(wi[b]));
      if (!circular && wi[b] + seq > max_seq)
        return ctx.fail("write_indices[%lld] = %lld plus %lld updates overruns the cache length %lld",
                        static_cast<long long>(b), static_cast<long long>(wi[b]), static_cast<long long>(seq),
                        static_cast<long long>(max_seq));
    }
  }
  if (y.data != past.data && past.bytes()) std::memcpy(y.data, past.data, past.bytes());
  if (upd.elements() == 0) return Status::Ok();
  int64_t mid = 1, inner = 1;  // dims between batch and axis; dims after axis
  for (int64_t i = 1; i < axis; ++i) mid *= past.dims[i];
  for (int64_t i = axis + 1; i < r; ++i) inner *= past.dims[i];
  const size_t row = static_cast<size_t>(inner) * es;
  const char* src = static_cast<const char*>(upd.data);
  char* dst = static_cast<char*>(y.data);
  parallel_for(batch * mid, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, seq * inner)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t start = wi ? wi[p / mid] : 0;
      for (int64_t s = 0; s < seq; ++s) {
        int64_t k = start + s;
        if (circular) k %= max_seq;
        std::memcpy(dst + (p * max_seq + k) * row, src + (p * seq + s) * row, row);
      }
    }
  });
  return Status::Ok();
}

// Any fixed-width element type: rows are copied as bytes.
std::string fixed_width(const KernelInit& init) {
  const DType t = init.input(0).dtype;
  return graph::dtype_bytes(t) ? "" : std::string(graph::dtype_name(t)) + " has no fixed byte width";
}

OPENACL_REGISTER_KERNEL(TensorScatter, "cpu").supports(fixed_width).in_place(0, 0).run(tensor_scatter);

}  // namespace
}  // namespace openacl::kernels::cpu
