// Indexing ops: Slice, Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND, Compress.
#include <algorithm>
#include <climits>

#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

// Length of one sliced axis of known size d (ONNX clamping rules).
int64_t slice_len(int64_t d, int64_t start, int64_t end, int64_t step) {
  if (d == 0) return 0;
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    return end > start ? (end - start - 1) / step + 1 : 0;
  }
  start = std::clamp<int64_t>(start, 0, d - 1);
  end = std::clamp<int64_t>(end, -1, d - 1);
  if (start <= end) return 0;
  if (step == INT64_MIN) return 1;
  return (start - end - 1) / (-step) + 1;
}

// Whether a slice of an axis of unknown size provably takes all of it.
bool slice_takes_all(int64_t start, int64_t end, int64_t step) {
  if (step == 1) return start == 0 && end >= INT_MAX;
  if (step == -1) return start == -1 && end <= INT_MIN;
  return false;
}

Status slice_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  bool axes_given = false;
  if (ctx.opset() > 0 && ctx.opset() < 10) {
    starts = ctx.attrs().get_ints("starts");
    ends = ctx.attrs().get_ints("ends");
    if (!starts || !ends) return ctx.fail("the starts and ends attributes are required before opset 10");
    axes = ctx.attrs().get_ints("axes");
    axes_given = axes.has_value();
  } else {
    if (!ctx.has_input(1) || !ctx.has_input(2)) return ctx.fail("the starts and ends inputs are required");
    static const char* const kNames[] = {"", "starts", "ends", "axes", "steps"};
    for (size_t i = 1; i <= 4; ++i) OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, i, kNames[i]));
    starts = const_ints(ctx, 1);
    ends = const_ints(ctx, 2);
    axes_given = ctx.has_input(3);
    if (axes_given) axes = const_ints(ctx, 3);
    if (ctx.has_input(4)) {
      steps = const_ints(ctx, 4);
      if (!steps) {  // unknown steps: every sliced axis is unknown
        starts.reset();
      }
    }
  }
  if (axes_given && !axes) {  // which axes are sliced is unknown
    set_out(ctx, 0, x.dtype, unknown_dims(r));
    return Status::Ok();
  }
  if (!starts || !ends) {
    Shape out = *x.shape;
    if (axes) {
      for (int64_t a : *axes) {
        int64_t n;
        if (!normalize_axis(a, r, &n)) return ctx.fail("axis %lld is out of range for %s", ll(a), x.str().c_str());
        out[n] = Dim();
      }
    } else {
      out = unknown_dims(r);
    }
    set_out(ctx, 0, x.dtype, std::move(out));
    return Status::Ok();
  }
  const size_t n = starts->size();
  if (ends->size() != n)
    return ctx.fail("starts %s and ends %s differ in length", ints_str(*starts).c_str(), ints_str(*ends).c_str());
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < n; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps) steps = std::vector<int64_t>(n, 1);
  if (axes->size() != n || steps->size() != n)
    return ctx.fail("starts %s, ends %s, axes %s and steps %s must have the same length", ints_str(*starts).c_str(),
                    ints_str(*ends).c_str(), ints_str(*axes).c_str(), ints_str(*steps).c_str());
  Shape out = *x.shape;
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a;
    if (!normalize_axis((*axes)[i], r, &a)) return ctx.fail("axis %lld is out of range for %s", ll((*axes)[i]), x.str().c_str());
    if (seen[a]) return ctx.fail("axes %s repeat axis %lld", ints_str(*axes).c_str(), ll(a));
    seen[a] = true;
    const int64_t step = (*steps)[i];
    if (step == 0) return ctx.fail("steps %s contain 0", ints_str(*steps).c_str());
    const Dim& d = (*x.shape)[a];
    if (d.known()) out[a] = Dim(slice_len(d.value, (*starts)[i], (*ends)[i], step));
    else if (!slice_takes_all((*starts)[i], (*ends)[i], step)) out[a] = Dim();
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status gather_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "indices"));
  const TensorType& x = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  if (!x.has_rank() || !idx.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  int64_t a;
  if (!normalize_axis(axis_attr, x.rank(), &a)) return ctx.fail("axis %lld is out of range for data %s", ll(axis_attr), x.str().c_str());
  const Dim& ad = (*x.shape)[a];
  if (ad.known()) {
    if (auto iv = const_ints(ctx, 1))
      for (int64_t v : *iv)
        if (v < -ad.value || v >= ad.value)
          return ctx.fail("index %lld is out of range for axis %lld of size %lld", ll(v), ll(a), ll(ad.value));
  }
  Shape out(x.shape->begin(), x.shape->begin() + a);
  out.insert(out.end(), idx.shape->begin(), idx.shape->end());
  out.insert(out.end(), x.shape->begin() + a + 1, x.shape->end());
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status gather_elements_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "indices"));
  const TensorType& x = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  if (x.has_rank() && idx.has_rank() && x.rank() != idx.rank())
    return ctx.fail("indices %s and data %s must have the same rank", idx.str().c_str(), x.str().c_str());
  if (x.has_rank()) {
    int64_t a;
    const int64_t axis = ctx.attrs().get_int("axis", 0);
    if (!normalize_axis(axis, x.rank(), &a)) return ctx.fail("axis %lld is out of range for data %s", ll(axis), x.str().c_str());
  }
  set_out(ctx, 0, x.dtype, idx.shape);
  return Status::Ok();
}

Status gather_nd_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "indices"));
  const TensorType& x = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  const int64_t b = ctx.attrs().get_int("batch_dims", 0);
  if (b < 0) return ctx.fail("batch_dims %lld must be >= 0", ll(b));
  if (!x.has_rank() || !idx.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank(), q = idx.rank();
  if (r < 1 || q < 1) return ctx.fail("data %s and indices %s must have rank >= 1", x.str().c_str(), idx.str().c_str());
  if (b >= std::min(r, q)) return ctx.fail("batch_dims %lld must be less than the ranks of data %s and indices %s", ll(b), x.str().c_str(), idx.str().c_str());
  Shape out;
  for (int64_t i = 0; i < b; ++i) {
    Dim m;
    if (!merge_dim((*x.shape)[i], (*idx.shape)[i], &m))
      return ctx.fail("batch dim %lld differs between data %s and indices %s", ll(i), x.str().c_str(), idx.str().c_str());
  }
  const Dim& k = (*idx.shape)[q - 1];
  if (!k.known()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  if (k.value < 1 || k.value > r - b)
    return ctx.fail("indices %s index %lld dims; data %s with batch_dims %lld has %lld", idx.str().c_str(), ll(k.value),
                    x.str().c_str(), ll(b), ll(r - b));
  out.assign(idx.shape->begin(), idx.shape->end() - 1);
  out.insert(out.end(), x.shape->begin() + b + k.value, x.shape->end());
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status scatter_elements_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "indices"));
  const TensorType& x = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  const TensorType& upd = ctx.input(2);
  if (x.has_rank() && idx.has_rank() && x.rank() != idx.rank())
    return ctx.fail("indices %s and data %s must have the same rank", idx.str().c_str(), x.str().c_str());
  if (idx.has_rank() && upd.has_rank()) {
    if (idx.rank() != upd.rank())
      return ctx.fail("updates %s and indices %s must have the same shape", upd.str().c_str(), idx.str().c_str());
    for (int64_t i = 0; i < idx.rank(); ++i) {
      Dim m;
      if (!merge_dim((*idx.shape)[i], (*upd.shape)[i], &m))
        return ctx.fail("updates %s and indices %s must have the same shape", upd.str().c_str(), idx.str().c_str());
    }
  }
  if (x.has_rank()) {
    int64_t a;
    const int64_t axis = ctx.attrs().get_int("axis", 0);
    if (!normalize_axis(axis, x.rank(), &a)) return ctx.fail("axis %lld is out of range for data %s", ll(axis), x.str().c_str());
  }
  set_out(ctx, 0, x.dtype, x.shape);
  return Status::Ok();
}

Status scatter_nd_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "indices"));
  const TensorType& x = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  const TensorType& upd = ctx.input(2);
  if (x.has_rank() && idx.has_rank() && upd.has_rank() && idx.rank() >= 1) {
    const Dim& k = (*idx.shape)[idx.rank() - 1];
    if (k.known()) {
      if (k.value > x.rank())
        return ctx.fail("indices %s index %lld dims of data %s", idx.str().c_str(), ll(k.value), x.str().c_str());
      const int64_t want = idx.rank() - 1 + x.rank() - k.value;
      if (upd.rank() != want)
        return ctx.fail("updates %s must have rank %lld (indices %s, data %s)", upd.str().c_str(), ll(want),
                        idx.str().c_str(), x.str().c_str());
    }
  }
  set_out(ctx, 0, x.dtype, x.shape);
  return Status::Ok();
}

Status compress_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& cond = ctx.input(1);
  if (cond.has_rank() && cond.rank() != 1) return ctx.fail("condition %s must be 1-D", cond.str().c_str());
  if (!ctx.attrs().has("axis")) {  // over the flattened input
    Dim n;
    if (auto c = const_ints(ctx, 1)) {
      const Dim total = x.has_rank() ? dim_product(*x.shape, 0, x.shape->size()) : Dim();
      if (total.known() && static_cast<int64_t>(c->size()) > total.value)
        return ctx.fail("condition has %zu entries; the input %s has %lld elements", c->size(), x.str().c_str(),
                        ll(total.value));
      if (total.known() || c->empty()) n = Dim(static_cast<int64_t>(std::count_if(c->begin(), c->end(), [](int64_t v) { return v != 0; })));
    }
    set_out(ctx, 0, x.dtype, Shape{n});
    return Status::Ok();
  }
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t axis = ctx.attrs().get_int("axis", 0);
  int64_t a;
  if (!normalize_axis(axis, x.rank(), &a)) return ctx.fail("axis %lld is out of range for %s", ll(axis), x.str().c_str());
  Shape out = *x.shape;
  out[a] = Dim();
  if (auto c = const_ints(ctx, 1)) {
    const Dim& d = (*x.shape)[a];
    if (d.known() && static_cast<int64_t>(c->size()) > d.value)
      return ctx.fail("condition has %zu entries; axis %lld has size %lld", c->size(), ll(a), ll(d.value));
    if (d.known() || c->empty()) {
      int64_t n = 0;
      for (int64_t v : *c) n += v != 0;
      out[a] = Dim(n);
    }
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(Slice).inputs(1, 5).outputs(1, 1).shape(slice_shape);
OPENACL_REGISTER_OP(Gather).inputs(2, 2).outputs(1, 1).shape(gather_shape);
OPENACL_REGISTER_OP(GatherElements).inputs(2, 2).outputs(1, 1).shape(gather_elements_shape);
OPENACL_REGISTER_OP(GatherND).inputs(2, 2).outputs(1, 1).shape(gather_nd_shape);
OPENACL_REGISTER_OP(Scatter).inputs(3, 3).outputs(1, 1).shape(scatter_elements_shape);
OPENACL_REGISTER_OP(ScatterElements).inputs(3, 3).outputs(1, 1).shape(scatter_elements_shape);
OPENACL_REGISTER_OP(ScatterND).inputs(3, 3).outputs(1, 1).shape(scatter_nd_shape);
OPENACL_REGISTER_OP(Compress).inputs(2, 2).outputs(1, 1).shape(compress_shape);

}  // namespace openacl::graph::nn
