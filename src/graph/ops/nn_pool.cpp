// Pooling: MaxPool (optional int64 Indices), AveragePool, LpPool and the
// global variants, on [N, C, D1..Dn] inputs.
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status pool_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const AttributeMap& a = ctx.attrs();
  auto kernel = a.get_ints("kernel_shape");
  if (!kernel) return ctx.fail("the kernel_shape attribute is required");
  const size_t n = kernel->size();
  if (x.has_rank() && x.rank() != static_cast<int64_t>(n) + 2)
    return ctx.fail("input X %s must have rank %zu (kernel_shape %s has %zu spatial axes)", x.str().c_str(), n + 2,
                    ints_str(*kernel).c_str(), n);
  const std::vector<int64_t> strides = ints_or(ctx, "strides", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> dilations = ints_or(ctx, "dilations", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> pads = ints_or(ctx, "pads", std::vector<int64_t>(2 * n, 0));
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  const bool ceil_mode = a.get_int("ceil_mode", 0) != 0;
  if (strides.size() != n) return ctx.fail("strides %s has %zu entries; expected %zu", ints_str(strides).c_str(), strides.size(), n);
  if (dilations.size() != n) return ctx.fail("dilations %s has %zu entries; expected %zu", ints_str(dilations).c_str(), dilations.size(), n);
  if (pads.size() != 2 * n) return ctx.fail("pads %s has %zu entries; expected %zu", ints_str(pads).c_str(), pads.size(), 2 * n);
  Shape out;
  if (x.has_rank()) out = {(*x.shape)[0], (*x.shape)[1]};
  else out = {Dim(), Dim()};
  for (size_t i = 0; i < n; ++i) {
    const Dim in = x.has_rank() ? (*x.shape)[i + 2] : Dim();
    Dim o;
    OPENACL_RETURN_IF_ERROR(window_out(ctx, in, (*kernel)[i], strides[i], dilations[i], pads[i], pads[i + n], auto_pad,
                                       ceil_mode, i, &o));
    out.push_back(o);
  }
  set_out(ctx, 0, x.dtype, out);
  set_out(ctx, 1, DType::kInt64, out);  // MaxPool's Indices
  return Status::Ok();
}

Status global_pool_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  if (x.rank() < 2) return ctx.fail("input X %s must have rank >= 2 ([N, C, spatial...])", x.str().c_str());
  Shape out = *x.shape;
  for (size_t i = 2; i < out.size(); ++i) out[i] = Dim(1);
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(MaxPool).inputs(1, 1).outputs(1, 2).shape(pool_shape);
OPENACL_REGISTER_OP(AveragePool).inputs(1, 1).outputs(1, 1).shape(pool_shape);
OPENACL_REGISTER_OP(LpPool).inputs(1, 1).outputs(1, 1).shape(pool_shape);
OPENACL_REGISTER_OP(GlobalAveragePool).inputs(1, 1).outputs(1, 1).shape(global_pool_shape);
OPENACL_REGISTER_OP(GlobalMaxPool).inputs(1, 1).outputs(1, 1).shape(global_pool_shape);
OPENACL_REGISTER_OP(GlobalLpPool).inputs(1, 1).outputs(1, 1).shape(global_pool_shape);

}  // namespace openacl::graph::nn
