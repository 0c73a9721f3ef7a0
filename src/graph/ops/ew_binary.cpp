// Binary and variadic elementwise ops: arithmetic, comparison, logical, Where,
// Sum/Mean/Min/Max. Numpy broadcasting from opset 7 (8 for the variadic ones);
// before that the legacy `broadcast`/`axis` attributes, where B is stretched onto A.
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::opset_of;

// Opset < 7 arithmetic: without broadcast=1 the shapes must match; with it B is
// stretched onto A, so the output is A's shape.
Status legacy_binary_shape(ShapeContext& ctx, std::optional<Shape>* out) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  *out = a.shape;
  if (ctx.attrs().get_int("broadcast", 0) != 0 || !a.has_rank() || !b.has_rank()) return Status::Ok();
  if (a.rank() != b.rank())
    return ctx.fail("shapes %s and %s differ and broadcast=0 (opset %d)", shape_str(*a.shape).c_str(),
                    shape_str(*b.shape).c_str(), ctx.opset());
  for (size_t i = 0; i < a.shape->size(); ++i) {
    const Dim& da = (*a.shape)[i];
    const Dim& db = (*b.shape)[i];
    if (da.known() && db.known() && da.value != db.value)
      return ctx.fail("shapes %s and %s differ and broadcast=0 (opset %d)", shape_str(*a.shape).c_str(),
                      shape_str(*b.shape).c_str(), ctx.opset());
    if (!da.known() && db.known()) (**out)[i] = db;
  }
  return Status::Ok();
}

// The shared type T of inputs [0, n): the first one known.
DType first_known_dtype(const ShapeContext& ctx, size_t n) {
  for (size_t i = 0; i < n && i < ctx.num_inputs(); ++i)
    if (ctx.input(i).dtype != DType::kUndefined) return ctx.input(i).dtype;
  return DType::kUndefined;
}

// Output 0: broadcast of inputs 0 and 1, with element type `dtype`.
Status binary_with_dtype(ShapeContext& ctx, DType dtype) {
  TensorType& y = ctx.output(0);
  y.dtype = dtype;
  if (opset_of(ctx) < 7) return legacy_binary_shape(ctx, &y.shape);
  return ew::broadcast_inputs(ctx, 0, 2, &y.shape);
}

// Add/Sub/Mul/Div: one type T for both inputs and the output.
Status arithmetic(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  return binary_with_dtype(ctx, first_known_dtype(ctx, 2));
}

Status pow_shape(ShapeContext& ctx) {
  // Opset 12 lets the exponent have its own type (T1); before, both are T.
  if (opset_of(ctx) < 12) OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  return binary_with_dtype(ctx, ctx.input(0).dtype);
}

Status mod_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  const DType t = first_known_dtype(ctx, 2);
  const int64_t fmod = ctx.attrs().get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.fail("attribute 'fmod' must be 0 or 1, got %lld", static_cast<long long>(fmod));
  // Opset 28 defines the floor-style mod for floats too.
  if (dtype_is_float(t) && fmod == 0 && opset_of(ctx) < 28)
    return ctx.fail("Mod on %s inputs needs fmod=1 before opset 28 (integer-style mod is defined for integer types only)",
                    dtype_name(t));
  return binary_with_dtype(ctx, t);
}

Status bitshift_shape(ShapeContext& ctx) {
  const std::string dir = ctx.attrs().get_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return ctx.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir.c_str());
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  const DType t = first_known_dtype(ctx, 2);
  // Signed types (arithmetic right shift) arrive with opset 28.
  const bool is_unsigned = t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
  if (t != DType::kUndefined && !is_unsigned && !(dtype_is_integer(t) && opset_of(ctx) >= 28))
    return ctx.fail("BitShift takes %s integer inputs at opset %d, got %s",
                    opset_of(ctx) >= 28 ? "signed or unsigned" : "unsigned", ctx.opset(), dtype_name(t));
  return binary_with_dtype(ctx, t);
}

// Equal/Less/...: same T on both sides, bool out.
Status comparison(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  return binary_with_dtype(ctx, DType::kBool);
}

// And/Or/Xor: bool in, bool out.
Status logical(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 0, DType::kBool, "A"));
  OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 1, DType::kBool, "B"));
  return binary_with_dtype(ctx, DType::kBool);
}

Status where_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 0, DType::kBool, "condition"));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 1, 2));
  TensorType& y = ctx.output(0);
  y.dtype = ctx.input(1).dtype != DType::kUndefined ? ctx.input(1).dtype : ctx.input(2).dtype;
  return ew::broadcast_inputs(ctx, 0, 3, &y.shape);
}

// Sum/Mean/Min/Max: all inputs T; numpy broadcasting from opset 8, equal shapes
// before (checked through the same broadcast, which then must not stretch).
Status variadic(ShapeContext& ctx) {
  // Compare each input with the first typed one, so an untyped input 0 hides nothing.
  size_t first = 0;
  while (first + 1 < ctx.num_inputs() && ctx.input(first).dtype == DType::kUndefined) ++first;
  for (size_t i = first + 1; i < ctx.num_inputs(); ++i) OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, first, i));
  TensorType& y = ctx.output(0);
  y.dtype = ctx.input(first).dtype;
  OPENACL_RETURN_IF_ERROR(ew::broadcast_inputs(ctx, 0, ctx.num_inputs(), &y.shape));
  if (opset_of(ctx) < 8 && y.shape) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const TensorType& t = ctx.input(i);
      if (t.has_rank() && fully_known(*t.shape) && fully_known(*y.shape) && !(*t.shape == *y.shape))
        return ctx.fail("input %zu has shape %s but opset %d needs all inputs of shape %s (no broadcasting before opset 8)",
                        i, shape_str(*t.shape).c_str(), ctx.opset(), shape_str(*y.shape).c_str());
    }
  }
  return Status::Ok();
}

OPENACL_REGISTER_OP(Add).inputs(2, 2).outputs(1, 1).shape(arithmetic);
OPENACL_REGISTER_OP(Sub).inputs(2, 2).outputs(1, 1).shape(arithmetic);
OPENACL_REGISTER_OP(Mul).inputs(2, 2).outputs(1, 1).shape(arithmetic);
OPENACL_REGISTER_OP(Div).inputs(2, 2).outputs(1, 1).shape(arithmetic);
OPENACL_REGISTER_OP(Pow).inputs(2, 2).outputs(1, 1).shape(pow_shape);
OPENACL_REGISTER_OP(Mod).inputs(2, 2).outputs(1, 1).since(10).shape(mod_shape);
OPENACL_REGISTER_OP(BitShift).inputs(2, 2).outputs(1, 1).since(11).shape(bitshift_shape);
OPENACL_REGISTER_OP(BitwiseAnd).inputs(2, 2).outputs(1, 1).since(18).shape(arithmetic);
OPENACL_REGISTER_OP(BitwiseOr).inputs(2, 2).outputs(1, 1).since(18).shape(arithmetic);
OPENACL_REGISTER_OP(BitwiseXor).inputs(2, 2).outputs(1, 1).since(18).shape(arithmetic);

OPENACL_REGISTER_OP(Equal).inputs(2, 2).outputs(1, 1).shape(comparison);
OPENACL_REGISTER_OP(Less).inputs(2, 2).outputs(1, 1).shape(comparison);
OPENACL_REGISTER_OP(LessOrEqual).inputs(2, 2).outputs(1, 1).since(12).shape(comparison);
OPENACL_REGISTER_OP(Greater).inputs(2, 2).outputs(1, 1).shape(comparison);
OPENACL_REGISTER_OP(GreaterOrEqual).inputs(2, 2).outputs(1, 1).since(12).shape(comparison);

OPENACL_REGISTER_OP(And).inputs(2, 2).outputs(1, 1).shape(logical);
OPENACL_REGISTER_OP(Or).inputs(2, 2).outputs(1, 1).shape(logical);
OPENACL_REGISTER_OP(Xor).inputs(2, 2).outputs(1, 1).shape(logical);

OPENACL_REGISTER_OP(Where).inputs(3, 3).outputs(1, 1).since(9).shape(where_shape);

OPENACL_REGISTER_OP(Sum).inputs(1, INT32_MAX).outputs(1, 1).shape(variadic);
OPENACL_REGISTER_OP(Mean).inputs(1, INT32_MAX).outputs(1, 1).shape(variadic);
OPENACL_REGISTER_OP(Min).inputs(1, INT32_MAX).outputs(1, 1).shape(variadic);
OPENACL_REGISTER_OP(Max).inputs(1, INT32_MAX).outputs(1, 1).shape(variadic);

}  // namespace
}  // namespace openacl::graph
