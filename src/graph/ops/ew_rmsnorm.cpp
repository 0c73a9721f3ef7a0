// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over dims [axis, r)) + epsilon) * scale.
// X has type T, scale type V; Y has X's shape and scale's type (V).
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

Status rmsnorm_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (stash <= 0 || stash > static_cast<int64_t>(DType::kInt4))
    return ctx.fail("stash_type %lld is not a tensor element type", static_cast<long long>(stash));
  if (x.has_rank()) {
    int64_t a = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", ctx.attrs().get_int("axis", -1), x.rank(), &a));
  }
  TensorType& y = ctx.output(0);
  y.shape = x.shape;
  y.dtype = ctx.input(1).dtype != DType::kUndefined ? ctx.input(1).dtype : x.dtype;
  return Status::Ok();
}

OPENACL_REGISTER_OP(RMSNormalization).inputs(2, 2).outputs(1, 1).since(23).shape(rmsnorm_shape);

}  // namespace
}  // namespace openacl::graph
