// Assorted newer ops: LpNormalization, Swish, SwiGLU, BitCast,
// DynamicQuantizeLinear, TensorScatter, Det.
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

Status lpnorm_shape(ShapeContext& ctx) {
  const int64_t p = ctx.attrs().get_int("p", 2);
  if (p != 1 && p != 2) return ctx.fail("p = %lld; LpNormalization supports p = 1 or 2", static_cast<long long>(p));
  const TensorType& x = ctx.input(0);
  if (x.has_rank()) {
    int64_t a = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", ctx.attrs().get_int("axis", -1), x.rank(), &a));
  }
  return ew::same_as_input0(ctx);
}

// SwiGLU: A and B must have identical shapes (no broadcasting).
Status swiglu_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  if (a.has_rank() && b.has_rank()) {
    bool same = a.rank() == b.rank();
    for (int64_t i = 0; same && i < a.rank(); ++i) {
      const Dim& da = (*a.shape)[i];
      const Dim& db = (*b.shape)[i];
      same = !(da.known() && db.known() && da.value != db.value);
    }
    if (!same)
      return ctx.fail("A %s and B %s must have the same shape", shape_str(*a.shape).c_str(),
                      shape_str(*b.shape).c_str());
  }
  ctx.output(0).dtype = a.dtype != DType::kUndefined ? a.dtype : b.dtype;
  ctx.output(0).shape = a.has_rank() ? a.shape : b.shape;
  return Status::Ok();
}

// BitCast (opset 26): same bit pattern, type `to` of the same width.
Status bitcast_shape(ShapeContext& ctx) {
  const Attribute* to = ctx.attrs().find("to");
  if (!to || to->kind != Attribute::Kind::kInt) return ctx.fail("BitCast needs integer attribute 'to'");
  if (to->i <= 0 || to->i > static_cast<int64_t>(DType::kInt2) || to->i == static_cast<int64_t>(DType::kString))
    return ctx.fail("BitCast 'to' = %lld is not a supported element type", static_cast<long long>(to->i));
  const DType t = static_cast<DType>(to->i);
  const DType in = ctx.input(0).dtype;
  if (in == DType::kString) return ctx.fail("BitCast from string is not supported");
  if (in != DType::kUndefined && dtype_bytes(in) != dtype_bytes(t))
    return ctx.fail("BitCast needs types of the same width: %s is %zu bytes, %s is %zu", dtype_name(in),
                    dtype_bytes(in), dtype_name(t), dtype_bytes(t));
  ctx.output(0).dtype = t;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::Ok();
}

// DynamicQuantizeLinear: y (uint8, x's shape), y_scale (float32 scalar),
// y_zero_point (uint8 scalar).
Status dynquant_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 0, DType::kFloat32, "x"));
  ctx.output(0).dtype = DType::kUInt8;
  ctx.output(0).shape = ctx.input(0).shape;
  if (ctx.num_outputs() > 1) ctx.output(1) = TensorType{DType::kFloat32, Shape{}};
  if (ctx.num_outputs() > 2) ctx.output(2) = TensorType{DType::kUInt8, Shape{}};
  return Status::Ok();
}

// TensorScatter (opset 24): present_cache has past_cache's shape; update may
// be shorter along `axis` only; write_indices is [batch].
Status tensor_scatter_shape(ShapeContext& ctx) {
  const std::string mode = ctx.attrs().get_string("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.fail("mode '%s' is not linear or circular", mode.c_str());
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 2, DType::kInt64, "write_indices"));
  const TensorType& past = ctx.input(0);
  const TensorType& upd = ctx.input(1);
  if (past.has_rank()) {
    int64_t axis = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", ctx.attrs().get_int("axis", -2), past.rank(), &axis));
    if (axis == 0) return ctx.fail("axis must not be the batch dim (0)");
    if (upd.has_rank()) {
      if (upd.rank() != past.rank())
        return ctx.fail("update %s and past_cache %s must have the same rank", shape_str(*upd.shape).c_str(),
                        shape_str(*past.shape).c_str());
      for (int64_t i = 0; i < past.rank(); ++i) {
        const Dim& dp = (*past.shape)[i];
        const Dim& du = (*upd.shape)[i];
        if (!dp.known() || !du.known()) continue;
        if (i == axis ? du.value > dp.value : du.value != dp.value)
          return ctx.fail("update %s does not fit past_cache %s", shape_str(*upd.shape).c_str(),
                          shape_str(*past.shape).c_str());
      }
    }
  }
  return ew::same_as_input0(ctx);
}

// Det: [*, M, M] -> [*].
Status det_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  ctx.output(0).dtype = x.dtype;
  if (!x.has_rank()) {
    ctx.output(0).shape.reset();
    return Status::Ok();
  }
  if (x.rank() < 2) return ctx.fail("Det needs rank >= 2, got shape %s", shape_str(*x.shape).c_str());
  const Dim& m = (*x.shape)[x.rank() - 2];
  const Dim& n = (*x.shape)[x.rank() - 1];
  if (m.known() && n.known() && m.value != n.value)
    return ctx.fail("Det needs square matrices, got shape %s", shape_str(*x.shape).c_str());
  ctx.output(0).shape = Shape(x.shape->begin(), x.shape->end() - 2);
  return Status::Ok();
}

OPENACL_REGISTER_OP(LpNormalization).inputs(1, 1).outputs(1, 1).shape(lpnorm_shape);
OPENACL_REGISTER_OP(Swish).inputs(1, 1).outputs(1, 1).since(24).shape(ew::same_as_input0);
OPENACL_REGISTER_OP(SwiGLU).inputs(2, 2).outputs(1, 1).since(28).shape(swiglu_shape);
OPENACL_REGISTER_OP(BitCast).inputs(1, 1).outputs(1, 1).since(26).shape(bitcast_shape);
OPENACL_REGISTER_OP(DynamicQuantizeLinear).inputs(1, 1).outputs(3, 3).since(11).shape(dynquant_shape);
OPENACL_REGISTER_OP(TensorScatter).inputs(2, 3).outputs(1, 1).since(24).shape(tensor_scatter_shape);
OPENACL_REGISTER_OP(Det).inputs(1, 1).outputs(1, 1).since(11).shape(det_shape);

}  // namespace
}  // namespace openacl::graph
