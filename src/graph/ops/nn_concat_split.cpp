// Concat and Split.
#include <algorithm>

#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status concat_shape(ShapeContext& ctx) {
  DType dt = DType::kUndefined;
  int64_t rank = -1;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (dt == DType::kUndefined) dt = t.dtype;
    if (!t.has_rank()) continue;
    if (rank >= 0 && t.rank() != rank)
      return ctx.fail("input %zu %s has rank %lld; input 0 %s has rank %lld", i, t.str().c_str(), ll(t.rank()),
                      ctx.input(0).str().c_str(), ll(rank));
    rank = t.rank();
  }
  if (rank < 0) {
    set_out(ctx, 0, dt, std::nullopt);
    return Status::Ok();
  }
  if (rank == 0) return ctx.fail("cannot concatenate scalars");
  int64_t axis = ctx.attrs().get_int("axis", ctx.opset() > 0 && ctx.opset() < 4 ? 1 : INT64_MIN);
  if (axis == INT64_MIN) return ctx.fail("the axis attribute is required");
  int64_t a;
  if (!normalize_axis(axis, rank, &a)) return ctx.fail("axis %lld is out of range for rank %lld", ll(axis), ll(rank));
  Shape out(rank);
  bool first = true, sum_known = true;
  int64_t sum = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (!t.has_rank()) {
      sum_known = false;
      continue;
    }
    for (int64_t d = 0; d < rank; ++d) {
      const Dim& x = (*t.shape)[d];
      if (d == a) {
        if (x.known()) {
          if (!add_ok(sum, x.value, &sum)) return ctx.fail("the concatenated axis size overflows");
        }
        else sum_known = false;
        continue;
      }
      if (first) {
        out[d] = x;
      } else if (!merge_dim(out[d], x, &out[d])) {
        return ctx.fail("input %zu %s differs from the others in dim %lld (%lld vs %lld)", i, t.str().c_str(), ll(d),
                        ll(x.value), ll(out[d].value));
      }
    }
    first = false;
  }
  out[a] = sum_known ? Dim(sum) : Dim();
  if (!sum_known && ctx.num_inputs() == 1 && ctx.input(0).has_rank()) out[a] = (*ctx.input(0).shape)[a];
  set_out(ctx, 0, dt, std::move(out));
  return Status::Ok();
}

Status split_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const size_t outs = ctx.num_outputs();
  if (!x.has_rank()) {
    for (size_t i = 0; i < outs; ++i) set_out(ctx, i, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  const int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  int64_t axis;
  if (!normalize_axis(axis_attr, r, &axis)) return ctx.fail("axis %lld is out of range for %s", ll(axis_attr), x.str().c_str());
  const Dim total = (*x.shape)[axis];
  std::optional<std::vector<int64_t>> split;
  bool split_unknown = false;
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "split"));
  if (ctx.opset() >= 13 || (ctx.opset() == 0 && ctx.has_input(1))) {
    if (ctx.has_input(1)) {
      split = const_ints(ctx, 1);
      if (!split) split_unknown = true;
    }
  } else {
    split = ctx.attrs().get_ints("split");
    if (!split && ctx.has_input(1)) {  // opset 1 allowed split as an input
      split = const_ints(ctx, 1);
      if (!split) split_unknown = true;
    }
  }
  if (split && split->empty()) split.reset();
  std::vector<Dim> sizes(outs);
  if (split) {
    if (split->size() != outs)
      return ctx.fail("split %s has %zu entries for %zu outputs", ints_str(*split).c_str(), split->size(), outs);
    int64_t sum = 0;
    for (size_t i = 0; i < outs; ++i) {
      if ((*split)[i] < 0) return ctx.fail("split %s has a negative size", ints_str(*split).c_str());
      if (!add_ok(sum, (*split)[i], &sum)) return ctx.fail("split %s overflows", ints_str(*split).c_str());
      sizes[i] = Dim((*split)[i]);
    }
    if (total.known() && sum != total.value)
      return ctx.fail("split %s sums to %lld but axis %lld of %s has size %lld", ints_str(*split).c_str(), ll(sum),
                      ll(axis), x.str().c_str(), ll(total.value));
  } else if (!split_unknown) {
    const int64_t num = ctx.attrs().get_int("num_outputs", 0);
    if (ctx.attrs().has("num_outputs")) {
      if (num < 1 || static_cast<size_t>(num) != outs)
        return ctx.fail("num_outputs %lld does not match the node's %zu outputs", ll(num), outs);
      if (total.known()) {
        // Chunks of ceil(size / n); the last one takes what is left.
        const int64_t chunk = ceil_div(total.value, num);
        int64_t left = total.value;
        for (size_t i = 0; i < outs; ++i) {
          const int64_t s = std::max<int64_t>(std::min(chunk, left), 0);
          sizes[i] = Dim(s);
          left -= s;
        }
      }
    } else if (total.known()) {
      if (total.value % static_cast<int64_t>(outs) != 0)
        return ctx.fail("axis %lld of %s (size %lld) does not split evenly into %zu outputs", ll(axis),
                        x.str().c_str(), ll(total.value), outs);
      for (Dim& d : sizes) d = Dim(total.value / static_cast<int64_t>(outs));
    } else if (outs == 1) {
      sizes[0] = total;
    }
  }
  for (size_t i = 0; i < outs; ++i) {
    Shape s = *x.shape;
    s[axis] = sizes[i];
    set_out(ctx, i, x.dtype, std::move(s));
  }
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(Concat).inputs(1, 1 << 20).outputs(1, 1).shape(concat_shape);
OPENACL_REGISTER_OP(Split).inputs(1, 2).outputs(1, 1 << 20).shape(split_shape);

}  // namespace openacl::graph::nn
