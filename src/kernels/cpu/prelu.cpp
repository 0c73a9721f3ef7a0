// PRelu: y = x < 0 ? slope * x : x, slope broadcast onto X (unidirectional
// numpy broadcasting from opset 7). Before that a 1-D slope whose length
// matches exactly one dim of X applies along that dim (the channel), which is
// also what the ONNX reference falls back to.
#include "kernels/cpu/binary_common.h"

namespace openacl::kernels::cpu {
namespace {

struct PReluOp {
  template <class T>
  T operator()(T x, T slope) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (std::is_integral_v<T>) {
      return x < 0 ? static_cast<T>(static_cast<WrapType<T>>(x) * static_cast<WrapType<T>>(slope)) : x;
    } else {
      return x < 0 ? slope * x : x;
    }
  }
};

// Slope dims numpy-aligned to X's, or the legacy channel placement; false when
// neither applies.
bool slope_dims_for(const std::vector<int64_t>& x, const std::vector<int64_t>& s, std::vector<int64_t>* out) {
  bool numpy = s.size() <= x.size();
  for (size_t i = 0; numpy && i < s.size(); ++i) {
    const int64_t d = x[x.size() - s.size() + i];
    numpy = s[i] == 1 || s[i] == d;
  }
  if (numpy) {
    *out = s;
    return true;
  }
  if (s.size() != 1) return false;
  size_t found = 0, at = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] == s[0]) ++found, at = i;
  if (found != 1) return false;
  out->assign(x.size(), 1);
  (*out)[at] = s[0];
  return true;
}

Status prelu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (x.dtype != slope.dtype)
    return ctx.fail("X is %s but slope is %s", graph::dtype_name(x.dtype), graph::dtype_name(slope.dtype));
  std::vector<int64_t> sd;
  if (!slope_dims_for(x.dims, slope.dims, &sd) || y.dims != x.dims)
    return ctx.fail("slope does not broadcast onto X");
  const bool typed = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_broadcast(x.as<T>(), x.dims, slope.as<T>(), sd, y.as<T>(), y.dims, PReluOp{});
  });
  if (!typed) return ctx.fail("element type %s is not supported", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(PRelu, "cpu")
    .types({DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32, DType::kInt64,
            DType::kUInt32, DType::kUInt64})
    .run(prelu);

}  // namespace
}  // namespace openacl::kernels::cpu
