// Reductions (Reduce*), ArgMax/ArgMin, TopK, CumSum.
//
// Reduce* take `axes` as an attribute up to opset 17 (ReduceSum: 12) and as an
// optional second input after, where `noop_with_empty_axes` also appears. When
// the axes input is not a constant, the output rank is still known with
// keepdims=1 (each dim either stays or becomes 1) and unknown otherwise.
#include <cstring>

#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::opset_of;

// Opset from which the op reads axes from an input.
int axes_input_since(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

Status reduce_shape(ShapeContext& ctx) {
  const int since = axes_input_since(ctx.node().op_type);
  const bool axes_as_input = opset_of(ctx) >= since;
  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  const bool noop_if_empty = axes_as_input && ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
  const TensorType& x = ctx.input(0);
  TensorType& y = ctx.output(0);
  y.dtype = x.dtype;

  std::vector<int64_t> axes;
  bool axes_unknown = false;
  if (axes_as_input) {
    if (ctx.attrs().has("axes"))
      return ctx.fail("%s takes axes as an input from opset %d; the 'axes' attribute is not allowed at opset %d",
                      ctx.node().op_type.c_str(), since, ctx.opset());
    if (ctx.has_input(1)) {
      OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 1, DType::kInt64, "axes"));
      const TensorType& at = ctx.input(1);
      if (auto c = ew::const_ints(ctx, 1)) {
        axes = *c;
      } else if (at.has_rank() && at.rank() == 1 && (*at.shape)[0].known() && (*at.shape)[0].value == 0) {
        // A non-constant but provably empty axes tensor.
      } else {
        axes_unknown = true;
      }
    }
  } else {
    if (ctx.num_inputs() > 1)
      return ctx.fail("%s takes axes as an input from opset %d only (opset %d uses the 'axes' attribute)",
                      ctx.node().op_type.c_str(), since, ctx.opset());
    axes = ctx.attrs().get_ints("axes").value_or(std::vector<int64_t>{});
  }

  if (axes_unknown) {
    if (keepdims && x.has_rank()) {
      Shape s;
      for (const Dim& d : *x.shape) s.push_back(d.known() && d.value == 1 ? Dim(1) : Dim());
      y.shape = std::move(s);
    } else {
      y.shape.reset();
    }
    return Status::Ok();
  }
  if (axes.empty()) {
    if (noop_if_empty) {
      y.shape = x.shape;
    } else if (!keepdims) {
      y.shape = Shape{};  // everything reduced: a scalar, whatever the input rank
    } else if (x.has_rank()) {
      y.shape = Shape(x.shape->size(), Dim(1));
    } else {
      y.shape.reset();
    }
    return Status::Ok();
  }
  if (!x.has_rank()) {
    y.shape.reset();
    return Status::Ok();
  }
  const int64_t r = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    int64_t n = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", a, r, &n));
    reduced[static_cast<size_t>(n)] = true;
  }
  Shape s;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[static_cast<size_t>(i)]) s.push_back((*x.shape)[static_cast<size_t>(i)]);
    else if (keepdims) s.push_back(Dim(1));
  }
  y.shape = std::move(s);
  return Status::Ok();
}

// ArgMax/ArgMin: int64 indices, `axis` reduced (kept as 1 with keepdims).
// select_last_index (opset 12) changes values only.
Status arg_shape(ShapeContext& ctx) {
  const int64_t axis = ctx.attrs().get_int("axis", 0);
  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  const TensorType& x = ctx.input(0);
  TensorType& y = ctx.output(0);
  y.dtype = DType::kInt64;
  if (!x.has_rank()) {
    y.shape.reset();
    return Status::Ok();
  }
  int64_t a = 0;
  OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", axis, x.rank(), &a));
  Shape s = *x.shape;
  if (keepdims) s[static_cast<size_t>(a)] = Dim(1);
  else s.erase(s.begin() + a);
  y.shape = std::move(s);
  return Status::Ok();
}

// TopK: k is an attribute before opset 10, a 1-element int64 input after.
Status topk_shape(ShapeContext& ctx) {
  std::optional<int64_t> k;
  if (opset_of(ctx) < 10) {
    if (ctx.num_inputs() > 1)
      return ctx.fail("TopK takes K as an input from opset 10 only (opset %d uses the 'k' attribute)", ctx.opset());
    if (!ctx.attrs().has("k")) return ctx.fail("TopK (opset %d) needs attribute 'k'", ctx.opset());
    k = ctx.attrs().get_int("k", 0);
  } else {
    if (!ctx.has_input(1)) return ctx.fail("TopK (opset %d) needs input K", ctx.opset());
    OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 1, DType::kInt64, "K"));
    if (auto c = ew::const_ints(ctx, 1)) {
      if (c->size() != 1) return ctx.fail("K must hold exactly one value, it holds %zu", c->size());
      k = (*c)[0];
    }
  }
  if (k && *k < 0) return ctx.fail("k = %lld must not be negative", static_cast<long long>(*k));
  const TensorType& x = ctx.input(0);
  ctx.output(0).dtype = x.dtype;
  if (ctx.num_outputs() > 1) ctx.output(1).dtype = DType::kInt64;
  std::optional<Shape> shape;
  if (x.has_rank()) {
    int64_t a = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", ctx.attrs().get_int("axis", -1), x.rank(), &a));
    Shape s = *x.shape;
    Dim& d = s[static_cast<size_t>(a)];
    if (k && d.known() && *k > d.value)
      return ctx.fail("k = %lld is larger than dim %lld of input %s", static_cast<long long>(*k),
                      static_cast<long long>(a), shape_str(*x.shape).c_str());
    d = k ? Dim(*k) : Dim();
    shape = std::move(s);
  }
  ctx.output(0).shape = shape;
  if (ctx.num_outputs() > 1) ctx.output(1).shape = shape;
  return Status::Ok();
}

Status cumsum_shape(ShapeContext& ctx) {
  const TensorType& at = ctx.input(1);
  if (at.dtype != DType::kUndefined && at.dtype != DType::kInt32 && at.dtype != DType::kInt64)
    return ctx.fail("axis (input 1) must be int32 or int64, got %s", dtype_name(at.dtype));
  if (at.has_rank() && at.rank() > 1)
    return ctx.fail("axis (input 1) must be a scalar or 1-element tensor, got shape %s", shape_str(*at.shape).c_str());
  const TensorType& x = ctx.input(0);
  if (auto c = ew::const_ints(ctx, 1); c && x.has_rank()) {
    if (c->size() != 1) return ctx.fail("axis must hold exactly one value, it holds %zu", c->size());
    int64_t a = 0;
    OPENACL_RETURN_IF_ERROR(ew::axis_in_range(ctx, "axis", (*c)[0], x.rank(), &a));
  }
  return ew::same_as_input0(ctx);
}

OPENACL_REGISTER_OP(ReduceSum).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceMean).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceMax).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceMin).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceProd).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceL1).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceL2).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceLogSum).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceLogSumExp).inputs(1, 2).outputs(1, 1).shape(reduce_shape);
OPENACL_REGISTER_OP(ReduceSumSquare).inputs(1, 2).outputs(1, 1).shape(reduce_shape);

OPENACL_REGISTER_OP(ArgMax).inputs(1, 1).outputs(1, 1).shape(arg_shape);
OPENACL_REGISTER_OP(ArgMin).inputs(1, 1).outputs(1, 1).shape(arg_shape);
OPENACL_REGISTER_OP(TopK).inputs(1, 2).outputs(2, 2).shape(topk_shape);
OPENACL_REGISTER_OP(CumSum).inputs(2, 2).outputs(1, 1).since(11).shape(cumsum_shape);
// CumProd (opset 26) takes its axis exactly as CumSum does.
OPENACL_REGISTER_OP(CumProd).inputs(2, 2).outputs(1, 1).since(26).shape(cumsum_shape);

}  // namespace
}  // namespace openacl::graph
