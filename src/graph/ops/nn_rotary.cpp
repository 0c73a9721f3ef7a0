// RotaryEmbedding (opset 23): rotates pairs of features of X by the angles in
// cos_cache/sin_cache; the output has X's type and shape.
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status rotary_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank() && x.rank() != 3 && x.rank() != 4)
    return ctx.fail("input %s must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_size]", x.str().c_str());
  if (x.has_rank() && x.rank() == 3 && ctx.attrs().get_int("num_heads", 0) < 1)
    return ctx.fail("a 3-D input needs num_heads >= 1");
  set_out(ctx, 0, x.dtype, x.shape);
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(RotaryEmbedding).since(23).inputs(3, 4).outputs(1, 1).shape(rotary_shape);

}  // namespace openacl::graph::nn
