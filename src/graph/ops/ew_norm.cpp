// Normalisation ops: BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, LRN, MeanVarianceNormalization.
// Y always has X's type and shape; the extra outputs are per-channel
// (BatchNormalization) or X's shape reduced from `axis` on (LayerNormalization).
#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::opset_of;

// The channel dim (dim 1) of X, or unknown.
Dim channels_of(const TensorType& x) { return x.has_rank() && x.rank() >= 2 ? (*x.shape)[1] : Dim(); }

// Fails when a 1-D per-channel input (scale, bias, mean, var) has a known length
// that differs from a known channel count.
Status check_per_channel(const ShapeContext& ctx, size_t i, const char* what, const Dim& c) {
  if (!ctx.has_input(i) || !c.known()) return Status::Ok();
  const TensorType& t = ctx.input(i);
  if (!t.has_rank() || t.rank() != 1 || !(*t.shape)[0].known()) return Status::Ok();
  if ((*t.shape)[0].value != c.value)
    return ctx.fail("%s (input %zu) has %lld elements but X has %lld channels", what, i,
                    static_cast<long long>((*t.shape)[0].value), static_cast<long long>(c.value));
  return Status::Ok();
}

Status x_rank_at_least_2(const ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank() && x.rank() < 2)
    return ctx.fail("X must have rank >= 2 (N x C x ...), got shape %s", shape_str(*x.shape).c_str());
  return Status::Ok();
}

// BatchNormalization, inference form plus the optional extra outputs: opset 14+
// has Y, running_mean, running_var (1..3); before, up to 5 (saved mean/var too).
// The extras are per-channel vectors typed like `mean`.
Status batchnorm_shape(ShapeContext& ctx) {
  const int v = opset_of(ctx);
  if (v >= 14 && ctx.num_outputs() > 3)
    return ctx.fail("BatchNormalization has at most 3 outputs from opset 14, got %zu", ctx.num_outputs());
  OPENACL_RETURN_IF_ERROR(x_rank_at_least_2(ctx));
  const TensorType& x = ctx.input(0);
  const Dim c = channels_of(x);
  // spatial=0 (opsets 7-8) makes scale/B/mean/var [C x D1 x ...]; not checked then.
  if (ctx.attrs().get_int("spatial", 1) != 0 || v >= 9) {
    static const char* kNames[] = {"scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i) OPENACL_RETURN_IF_ERROR(check_per_channel(ctx, i, kNames[i - 1], c));
  }
  if (v < 15) {
    for (size_t i = 1; i < 5; ++i) OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, i));
  } else {
    OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 1, 2));
    OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 3, 4));
  }
  ew::copy_input(ctx, 0, 0);
  const DType stat = ctx.input(3).dtype != DType::kUndefined ? ctx.input(3).dtype : x.dtype;
  for (size_t o = 1; o < ctx.num_outputs(); ++o) {
    ctx.output(o).dtype = stat;
    ctx.output(o).shape = ctx.input(3).has_rank() ? ctx.input(3).shape : std::optional<Shape>(Shape{c});
  }
  return Status::Ok();
}

Status instancenorm_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(x_rank_at_least_2(ctx));
  const Dim c = channels_of(ctx.input(0));
  OPENACL_RETURN_IF_ERROR(check_per_channel(ctx, 1, "scale", c));
  OPENACL_RETURN_IF_ERROR(check_per_channel(ctx, 2, "B", c));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 2));
  return ew::same_as_input0(ctx);
}

// LayerNormalization (opset 17): Mean and InvStdDev keep X's rank with the
// normalised dims [axis, r) set to 1, typed by stash_type (default float32).
Status layernorm_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const int64_t axis = ctx.attrs().get_int("axis", -1);
  const int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (stash <= 0 || stash > static_cast<int64_t>(DType::kInt4))
    return ctx.fail("stash_type %lld is not a tensor element type", static_cast<long long>(stash));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 1));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 2));
  std::optional<Shape> stats;
  if (x.has_rank()) {
    int64_t a = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", axis, x.rank(), &a));
    Shape s = *x.shape;
    for (size_t i = static_cast<size_t>(a); i < s.size(); ++i) s[i] = Dim(1);
    stats = std::move(s);
  }
  ew::copy_input(ctx, 0, 0);
  for (size_t o = 1; o < ctx.num_outputs(); ++o) {
    ctx.output(o).dtype = static_cast<DType>(stash);
    ctx.output(o).shape = stats;
  }
  return Status::Ok();
}

// GroupNormalization (opset 18; 21 changed scale/bias from [num_groups] to [C]).
Status groupnorm_shape(ShapeContext& ctx) {
  if (!ctx.attrs().has("num_groups")) return ctx.fail("GroupNormalization needs attribute 'num_groups'");
  const int64_t g = ctx.attrs().get_int("num_groups", 0);
  if (g <= 0) return ctx.fail("num_groups = %lld must be positive", static_cast<long long>(g));
  OPENACL_RETURN_IF_ERROR(x_rank_at_least_2(ctx));
  const Dim c = channels_of(ctx.input(0));
  if (c.known() && c.value % g != 0)
    return ctx.fail("channel count %lld is not divisible by num_groups %lld", static_cast<long long>(c.value),
                    static_cast<long long>(g));
  const Dim per = opset_of(ctx) >= 21 ? c : Dim(g);
  OPENACL_RETURN_IF_ERROR(check_per_channel(ctx, 1, "scale", per));
  OPENACL_RETURN_IF_ERROR(check_per_channel(ctx, 2, "bias", per));
  return ew::same_as_input0(ctx);
}

Status lrn_shape(ShapeContext& ctx) {
  if (!ctx.attrs().has("size")) return ctx.fail("LRN needs attribute 'size'");
  if (ctx.attrs().get_int("size", 0) <= 0)
    return ctx.fail("LRN size = %lld must be positive", static_cast<long long>(ctx.attrs().get_int("size", 0)));
  OPENACL_RETURN_IF_ERROR(x_rank_at_least_2(ctx));
  return ew::same_as_input0(ctx);
}

Status mvn_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank()) {
    const std::vector<int64_t> axes = ctx.attrs().get_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
    for (int64_t a : axes) {
      int64_t n = 0;
      OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", a, x.rank(), &n));
    }
  }
  return ew::same_as_input0(ctx);
}

OPENACL_REGISTER_OP(BatchNormalization).inputs(5, 5).outputs(1, 5).shape(batchnorm_shape);
OPENACL_REGISTER_OP(InstanceNormalization).inputs(3, 3).outputs(1, 1).shape(instancenorm_shape);
OPENACL_REGISTER_OP(LayerNormalization).inputs(2, 3).outputs(1, 3).since(17).shape(layernorm_shape);
OPENACL_REGISTER_OP(GroupNormalization).inputs(3, 3).outputs(1, 1).since(18).shape(groupnorm_shape);
OPENACL_REGISTER_OP(LRN).inputs(1, 1).outputs(1, 1).shape(lrn_shape);
OPENACL_REGISTER_OP(MeanVarianceNormalization).inputs(1, 1).outputs(1, 1).since(9).shape(mvn_shape);

}  // namespace
}  // namespace openacl::graph
