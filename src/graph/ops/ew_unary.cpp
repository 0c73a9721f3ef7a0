// Unary elementwise ops and the type-changing ones: math functions, Not,
// IsNaN/IsInf, Identity, Dropout, Clip, Cast, CastLike.
#include <cstring>

#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::opset_of;
using ew::same_as_input0;

Status to_bool(ShapeContext& ctx) {
  ctx.output(0).dtype = DType::kBool;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::Ok();
}

Status not_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 0, DType::kBool, "X"));
  return to_bool(ctx);
}

Status isnan_shape(ShapeContext& ctx) {
  const DType t = ctx.input(0).dtype;
  if (t != DType::kUndefined && dtype_is_integer(t))
    return ctx.fail("%s takes floating-point input, got %s", ctx.node().op_type.c_str(), dtype_name(t));
  return to_bool(ctx);
}

// Dropout: ratio/training_mode become inputs at opset 12; the mask is bool from
// opset 10 (T before).
Status dropout_shape(ShapeContext& ctx) {
  const int v = opset_of(ctx);
  if (v < 12 && ctx.num_inputs() > 1)
    return ctx.fail("Dropout takes ratio and training_mode as inputs from opset 12 only; %zu inputs given",
                    ctx.num_inputs());
  ew::copy_input(ctx, 0, 0);
  if (ctx.num_outputs() > 1) {
    ctx.output(1).shape = ctx.input(0).shape;
    ctx.output(1).dtype = v >= 10 ? DType::kBool : ctx.input(0).dtype;
  }
  return Status::Ok();
}

// Clip: min/max are attributes before opset 11, optional scalar inputs after.
Status clip_shape(ShapeContext& ctx) {
  if (opset_of(ctx) < 11 && ctx.num_inputs() > 1)
    return ctx.fail("Clip takes min/max as inputs from opset 11 only (opset %d uses attributes)", ctx.opset());
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 2));
  return same_as_input0(ctx);
}

// Cast-1 names the target type as a string.
DType dtype_from_legacy_name(const std::string& s) {
  static const struct {
    const char* name;
    DType t;
  } kNames[] = {{"FLOAT", DType::kFloat32},  {"UINT8", DType::kUInt8},   {"INT8", DType::kInt8},
                {"UINT16", DType::kUInt16},  {"INT16", DType::kInt16},   {"INT32", DType::kInt32},
                {"INT64", DType::kInt64},    {"STRING", DType::kString}, {"BOOL", DType::kBool},
                {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64}, {"UINT32", DType::kUInt32},
                {"UINT64", DType::kUInt64}};
  for (const auto& n : kNames)
    if (s == n.name) return n.t;
  return DType::kUndefined;
}

Status cast_shape(ShapeContext& ctx) {
  const Attribute* to = ctx.attrs().find("to");
  if (!to) return ctx.fail("Cast needs attribute 'to'");
  DType t = DType::kUndefined;
  if (to->kind == Attribute::Kind::kInt) {
    if (to->i <= 0 || to->i > static_cast<int64_t>(DType::kInt2))
      return ctx.fail("Cast 'to' = %lld (%s) is not an element type the engine supports", static_cast<long long>(to->i),
                      dtype_name(static_cast<DType>(to->i)));
    t = static_cast<DType>(to->i);
  } else if (to->kind == Attribute::Kind::kString) {
    t = dtype_from_legacy_name(to->s);
    if (t == DType::kUndefined) return ctx.fail("Cast 'to' = \"%s\" is not a known tensor element type", to->s.c_str());
  } else {
    return ctx.fail("Cast attribute 'to' must be an int (or a type name before opset 6), got %s",
                    attribute_kind_name(to->kind));
  }
  ctx.output(0).dtype = t;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::Ok();
}

Status castlike_shape(ShapeContext& ctx) {
  ctx.output(0).dtype = ctx.input(1).dtype;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::Ok();
}

OPENACL_REGISTER_OP(Sqrt).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Reciprocal).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Exp).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Log).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Erf).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Abs).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Neg).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Floor).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Ceil).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Round).inputs(1, 1).outputs(1, 1).since(11).shape(same_as_input0);
OPENACL_REGISTER_OP(Sign).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Sin).inputs(1, 1).outputs(1, 1).since(7).shape(same_as_input0);
OPENACL_REGISTER_OP(Cos).inputs(1, 1).outputs(1, 1).since(7).shape(same_as_input0);
OPENACL_REGISTER_OP(Tan).inputs(1, 1).outputs(1, 1).since(7).shape(same_as_input0);
OPENACL_REGISTER_OP(Asin).inputs(1, 1).outputs(1, 1).since(7).shape(same_as_input0);
OPENACL_REGISTER_OP(Acos).inputs(1, 1).outputs(1, 1).since(7).shape(same_as_input0);
OPENACL_REGISTER_OP(Atan).inputs(1, 1).outputs(1, 1).since(7).shape(same_as_input0);
OPENACL_REGISTER_OP(Sinh).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Cosh).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Asinh).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Acosh).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Atanh).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(Shrink).inputs(1, 1).outputs(1, 1).since(9).shape(same_as_input0);
OPENACL_REGISTER_OP(BitwiseNot).inputs(1, 1).outputs(1, 1).since(18).shape(same_as_input0);
OPENACL_REGISTER_OP(Identity).inputs(1, 1).outputs(1, 1).shape(same_as_input0);

OPENACL_REGISTER_OP(Not).inputs(1, 1).outputs(1, 1).shape(not_shape);
OPENACL_REGISTER_OP(IsNaN).inputs(1, 1).outputs(1, 1).since(9).shape(isnan_shape);
OPENACL_REGISTER_OP(IsInf).inputs(1, 1).outputs(1, 1).since(10).shape(isnan_shape);

OPENACL_REGISTER_OP(Dropout).inputs(1, 3).outputs(1, 2).shape(dropout_shape);
OPENACL_REGISTER_OP(Clip).inputs(1, 3).outputs(1, 1).shape(clip_shape);
OPENACL_REGISTER_OP(Cast).inputs(1, 1).outputs(1, 1).shape(cast_shape);
OPENACL_REGISTER_OP(CastLike).inputs(2, 2).outputs(1, 1).since(15).shape(castlike_shape);

}  // namespace
}  // namespace openacl::graph
