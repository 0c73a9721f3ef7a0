// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D at
// `axis` (default 1); from 13 the op runs along one axis (default -1). Opsets
// 11+ restrict axis to [-r, r-1]; before 11 the coercion point may also sit
// after the last dim (axis = r: [a0*...*a(r-1), 1]). The output has the
// input's type and shape either way.
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

Status softmax_shape(ShapeContext& ctx) {
  const bool per_axis = ew::opset_of(ctx) >= 13;
  const int64_t axis = ctx.attrs().get_int("axis", per_axis ? -1 : 1);
  const TensorType& x = ctx.input(0);
  if (x.has_rank()) {
    const int64_t r = x.rank();
    const int64_t hi = ew::opset_of(ctx) >= 11 ? r - 1 : r;
    if (axis < -r || axis > hi)
      return ctx.fail("axis %lld is out of range for rank %lld (valid: [%lld, %lld] at opset %d)",
                      static_cast<long long>(axis), static_cast<long long>(r), static_cast<long long>(-r),
                      static_cast<long long>(hi), ctx.opset());
  }
  return ew::same_as_input0(ctx);
}

OPENACL_REGISTER_OP(Softmax).inputs(1, 1).outputs(1, 1).shape(softmax_shape);
OPENACL_REGISTER_OP(LogSoftmax).inputs(1, 1).outputs(1, 1).shape(softmax_shape);
OPENACL_REGISTER_OP(Hardmax).inputs(1, 1).outputs(1, 1).shape(softmax_shape);

}  // namespace
}  // namespace openacl::graph
