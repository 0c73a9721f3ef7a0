// Activation functions: all keep the input's type and shape; PRelu's slope is
// broadcast onto X (unidirectionally, from opset 7).
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::same_as_input0;

Status prelu_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  const TensorType& x = ctx.input(0);
  const TensorType& slope = ctx.input(1);
  if (x.has_rank() && slope.has_rank() && ew::opset_of(ctx) >= 7) {
    const Shape& xs = *x.shape;
    const Shape& ss = *slope.shape;
    bool ok = ss.size() <= xs.size();
    for (size_t i = 0; ok && i < ss.size(); ++i) {
      const Dim& s = ss[i];
      const Dim& d = xs[xs.size() - ss.size() + i];
      if (s.known() && s.value != 1 && d.known() && d.value != s.value) ok = false;
    }
    if (!ok)
      return ctx.fail("slope of shape %s does not broadcast to X of shape %s", shape_str(ss).c_str(),
                      shape_str(xs).c_str());
  }
  return same_as_input0(ctx);
}

Status gelu_shape(ShapeContext& ctx) {
  const std::string approx = ctx.attrs().get_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return ctx.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"", approx.c_str());
  return same_as_input0(ctx);
}

OPENACL_REGISTER_OP(Relu).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Sigmoid).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Tanh).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(LeakyRelu).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(PRelu).inputs(2, 2).outputs(1, 1).shape(prelu_shape);
OPENACL_REGISTER_OP(Elu).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Selu).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Celu).inputs(1, 1).outputs(1, 1).since(12).shape(same_as_input0);
OPENACL_REGISTER_OP(Gelu).inputs(1, 1).outputs(1, 1).since(20).shape(gelu_shape);
OPENACL_REGISTER_OP(HardSigmoid).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(HardSwish).inputs(1, 1).outputs(1, 1).since(14).shape(same_as_input0);
OPENACL_REGISTER_OP(Mish).inputs(1, 1).outputs(1, 1).since(18).shape(same_as_input0);
OPENACL_REGISTER_OP(Softplus).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(Softsign).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
OPENACL_REGISTER_OP(ThresholdedRelu).inputs(1, 1).outputs(1, 1).since(10).shape(same_as_input0);

}  // namespace
}  // namespace openacl::graph
