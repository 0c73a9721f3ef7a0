// QuantizeLinear / DequantizeLinear. The quantised type comes from the zero
// point (uint8 when absent; opset 21's `output_dtype` may name it instead); the
// dequantised type is float32 before opset 19 and x_scale's type from 19 on
// (or `output_dtype` where given). Per-axis scales (opset 13) must match X's
// dim at `axis`.
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::opset_of;

// Per-tensor (scalar / 1-element) or per-axis (1-D, length = X[axis]) scale.
// Blocked quantisation (opset 21 block_size > 0) is left unchecked.
Status check_scale(const ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& s = ctx.input(1);
  if (!s.has_rank() || s.rank() == 0 || ctx.attrs().get_int("block_size", 0) > 0) return Status::Ok();
  if (s.rank() > 1) return ctx.fail("scale must be a scalar or a 1-D tensor, got shape %s", shape_str(*s.shape).c_str());
  const Dim& n = (*s.shape)[0];
  if (opset_of(ctx) < 13) {
    if (n.known() && n.value != 1)
      return ctx.fail("scale must be a scalar before opset 13 (no per-axis quantisation), got shape %s",
                      shape_str(*s.shape).c_str());
    return Status::Ok();
  }
  if (!x.has_rank() || (n.known() && n.value == 1)) return Status::Ok();
  int64_t a = 0;
  OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", ctx.attrs().get_int("axis", 1), x.rank(), &a));
  const Dim& d = (*x.shape)[static_cast<size_t>(a)];
  if (n.known() && d.known() && n.value != d.value && n.value != 1)
    return ctx.fail("per-axis scale has %lld elements but X%s has %lld at axis %lld", static_cast<long long>(n.value),
                    shape_str(*x.shape).c_str(), static_cast<long long>(d.value), static_cast<long long>(a));
  return Status::Ok();
}

Status quantize_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(check_scale(ctx));
  DType t = DType::kUInt8;
  const DType zp = ctx.has_input(2) ? ctx.input(2).dtype : DType::kUndefined;
  const int64_t want = opset_of(ctx) >= 21 ? ctx.attrs().get_int("output_dtype", 0) : 0;
  if (want < 0 || want > static_cast<int64_t>(DType::kInt2))
    return ctx.fail("output_dtype %lld is not a tensor element type", static_cast<long long>(want));
  if (want != 0 && zp != DType::kUndefined && zp != static_cast<DType>(want))
    return ctx.fail("output_dtype %s differs from y_zero_point's type %s", dtype_name(static_cast<DType>(want)),
                    dtype_name(zp));
  if (want != 0) t = static_cast<DType>(want);
  else if (ctx.has_input(2)) t = zp;  // undefined stays undefined: type not yet known
  ctx.output(0).dtype = t;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::Ok();
}

Status dequantize_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(check_scale(ctx));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 2));
  const int v = opset_of(ctx);
  DType t = DType::kFloat32;
  if (v >= 19) t = ctx.input(1).dtype;
  const int64_t want = ctx.attrs().get_int("output_dtype", 0);
  if (want < 0 || want > static_cast<int64_t>(DType::kInt2))
    return ctx.fail("output_dtype %lld is not a tensor element type", static_cast<long long>(want));
  if (want != 0) t = static_cast<DType>(want);
  ctx.output(0).dtype = t;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::Ok();
}

OPENACL_REGISTER_OP(QuantizeLinear).inputs(2, 3).outputs(1, 1).since(10).shape(quantize_shape);
OPENACL_REGISTER_OP(DequantizeLinear).inputs(2, 3).outputs(1, 1).since(10).shape(dequantize_shape);

}  // namespace
}  // namespace openacl::graph
