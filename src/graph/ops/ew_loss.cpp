// Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+).
// Input is [N, C] or [N, C, d1, ..., dk], target [N] or [N, d1, ..., dk]
// (the class index per sample), weight an optional [C]. The loss is target's
// shape with reduction "none" and a scalar otherwise; SoftmaxCrossEntropyLoss's
// optional second output (log_prob) has the input's type and shape.
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

Status loss_shape(ShapeContext& ctx) {
  const std::string reduction = ctx.attrs().get_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.fail("reduction '%s' is not one of none, sum, mean", reduction.c_str());
  const TensorType& x = ctx.input(0);
  const TensorType& t = ctx.input(1);
  if (x.dtype != DType::kUndefined && !dtype_is_float(x.dtype))
    return ctx.fail("input 0 must be a float tensor, got %s", dtype_name(x.dtype));
  if (t.dtype != DType::kUndefined && t.dtype != DType::kInt32 && t.dtype != DType::kInt64)
    return ctx.fail("target (input 1) must be int32 or int64, got %s", dtype_name(t.dtype));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 2));
  if (x.has_rank() && x.rank() < 2)
    return ctx.fail("input must have rank >= 2 (N x C x ...), got shape %s", shape_str(*x.shape).c_str());
  if (x.has_rank() && t.has_rank()) {
    if (t.rank() != x.rank() - 1)
      return ctx.fail("target shape %s must be input shape %s without the class dim", shape_str(*t.shape).c_str(),
                      shape_str(*x.shape).c_str());
    for (int64_t i = 0; i < t.rank(); ++i) {
      const Dim& dt = (*t.shape)[i];
      const Dim& dx = (*x.shape)[i == 0 ? 0 : i + 1];
      if (dt.known() && dx.known() && dt.value != dx.value)
        return ctx.fail("target shape %s does not match input shape %s", shape_str(*t.shape).c_str(),
                        shape_str(*x.shape).c_str());
    }
  }
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.input(2);
    if (w.has_rank() && w.rank() != 1) return ctx.fail("weight must be 1-D, got shape %s", shape_str(*w.shape).c_str());
    if (w.has_rank() && x.has_rank() && (*w.shape)[0].known() && (*x.shape)[1].known() &&
        (*w.shape)[0].value != (*x.shape)[1].value)
      return ctx.fail("weight has %lld elements but input has %lld classes",
                      static_cast<long long>((*w.shape)[0].value), static_cast<long long>((*x.shape)[1].value));
  }
  TensorType& y = ctx.output(0);
  y.dtype = x.dtype;
  if (reduction == "none") {
    if (t.has_rank()) {
      y.shape = t.shape;
    } else if (x.has_rank()) {
      Shape s = *x.shape;
      s.erase(s.begin() + 1);
      y.shape = std::move(s);
    } else {
      y.shape.reset();
    }
  } else {
    y.shape = Shape{};
  }
  if (ctx.num_outputs() > 1) ctx.output(1) = x;
  return Status::Ok();
}

OPENACL_REGISTER_OP(NegativeLogLikelihoodLoss).inputs(2, 3).outputs(1, 1).since(12).shape(loss_shape);
OPENACL_REGISTER_OP(SoftmaxCrossEntropyLoss).inputs(2, 3).outputs(1, 2).since(12).shape(loss_shape);

}  // namespace
}  // namespace openacl::graph
