// Shape-producing and data-dependent ops: Shape, Size, ConstantOfShape, Range,
// OneHot, NonZero, Trilu, NonMaxSuppression, RoiAlign, ReverseSequence,
// EyeLike, Unique, and the random generators.
#include <algorithm>
#include <cmath>

#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status shape_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (!x.has_rank()) {
    set_out(ctx, 0, DType::kInt64, Shape{Dim()});
    return Status::Ok();
  }
  const int64_t r = x.rank();
  int64_t start = ctx.attrs().get_int("start", 0), end = ctx.attrs().get_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  set_out(ctx, 0, DType::kInt64, Shape{Dim(std::max<int64_t>(end - start, 0))});
  return Status::Ok();
}

Status size_shape(ShapeContext& ctx) {
  set_out(ctx, 0, DType::kInt64, Shape{});
  return Status::Ok();
}

Status constant_of_shape_shape(ShapeContext& ctx) {
  DType dt = DType::kFloat32;
  if (const Attribute* v = ctx.attrs().find("value")) {
    if (v->kind != Attribute::Kind::kTensor || !v->t) return ctx.fail("the value attribute must be a tensor");
    if (v->t->elements() != 1) return ctx.fail("the value attribute must hold one element, not %lld", ll(v->t->elements()));
    dt = v->t->dtype;
  }
  const TensorType& in = ctx.input(0);
  if (in.has_rank() && in.rank() != 1) return ctx.fail("the shape input %s must be 1-D", in.str().c_str());
  if (in.dtype != DType::kUndefined && in.dtype != DType::kInt64)
    return ctx.fail("the shape input must be int64, not %s", dtype_name(in.dtype));
  if (auto dims = const_ints(ctx, 0)) {
    Shape out;
    for (int64_t d : *dims) {
      if (d < 0) return ctx.fail("shape %s has a negative size", ints_str(*dims).c_str());
      out.push_back(Dim(d));
    }
    set_out(ctx, 0, dt, std::move(out));
    return Status::Ok();
  }
  const int64_t len = known_length_1d(ctx, 0);
  set_out(ctx, 0, dt, dims_of_rank(len));
  return Status::Ok();
}

Status range_shape(ShapeContext& ctx) {
  const DType dt = ctx.input(0).dtype;
  for (size_t i = 0; i < 3; ++i) {
    const TensorType& t = ctx.input(i);
    if (t.has_rank() && !(t.rank() == 0 || (t.rank() == 1 && ((*t.shape)[0].value == 1 || !(*t.shape)[0].known()))))
      return ctx.fail("input %zu %s must be a scalar", i, t.str().c_str());
  }
  auto start = const_ints(ctx, 0), limit = const_ints(ctx, 1), delta = const_ints(ctx, 2);
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
    const int64_t s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
    if (d == 0) return ctx.fail("delta must not be 0");
    // Wide arithmetic: limit - start may not fit in int64.
    const __int128 span = d > 0 ? static_cast<__int128>(l) - s : static_cast<__int128>(s) - l;
    const __int128 step = d > 0 ? static_cast<__int128>(d) : -static_cast<__int128>(d);
    const __int128 n = span > 0 ? (span + step - 1) / step : 0;
    set_out(ctx, 0, dt, Shape{Dim(static_cast<int64_t>(n))});
    return Status::Ok();
  }
  auto fs = const_doubles(ctx, 0), fl = const_doubles(ctx, 1), fd = const_doubles(ctx, 2);
  if (fs && fl && fd && fs->size() == 1 && fl->size() == 1 && fd->size() == 1) {
    const double d = (*fd)[0];
    if (d == 0) return ctx.fail("delta must not be 0");
    const double n = std::ceil(((*fl)[0] - (*fs)[0]) / d);
    if (!(n < 9.0e18)) {  // NaN or absurd: not a size we can state
      set_out(ctx, 0, dt, Shape{Dim()});
      return Status::Ok();
    }
    set_out(ctx, 0, dt, Shape{Dim(n > 0 ? static_cast<int64_t>(n) : 0)});
    return Status::Ok();
  }
  set_out(ctx, 0, dt, Shape{Dim()});
  return Status::Ok();
}

Status one_hot_shape(ShapeContext& ctx) {
  const TensorType& idx = ctx.input(0);
  const TensorType& values = ctx.input(2);
  if (values.has_rank() && !(values.rank() == 1 && (!(*values.shape)[0].known() || (*values.shape)[0].value == 2)))
    return ctx.fail("values %s must be 1-D with 2 elements [off, on]", values.str().c_str());
  if (!idx.has_rank()) {
    set_out(ctx, 0, values.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = idx.rank() + 1, axis_attr = ctx.attrs().get_int("axis", -1);
  int64_t axis;
  if (!normalize_axis(axis_attr, r, &axis)) return ctx.fail("axis %lld is out of range for output rank %lld", ll(axis_attr), ll(r));
  Dim depth;
  if (auto d = const_doubles(ctx, 1)) {
    if (d->size() != 1) return ctx.fail("depth must hold one element, not %zu", d->size());
    if (!((*d)[0] >= 1 && (*d)[0] < 9.0e18)) return ctx.fail("depth %g must be >= 1", (*d)[0]);
    depth = Dim(static_cast<int64_t>((*d)[0]));
  }
  Shape out = *idx.shape;
  out.insert(out.begin() + axis, depth);
  set_out(ctx, 0, values.dtype, std::move(out));
  return Status::Ok();
}

Status non_zero_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  set_out(ctx, 0, DType::kInt64, Shape{x.has_rank() ? Dim(x.rank()) : Dim(), Dim()});
  return Status::Ok();
}

Status trilu_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank() && x.rank() < 2) return ctx.fail("input %s must have rank >= 2", x.str().c_str());
  const TensorType& k = ctx.input(1);
  if (ctx.has_input(1) && k.has_rank() && k.rank() != 0 && !(k.rank() == 1 && (*k.shape)[0].value == 1))
    return ctx.fail("k %s must be a scalar", k.str().c_str());
  set_out(ctx, 0, x.dtype, x.shape);
  return Status::Ok();
}

Status nms_shape(ShapeContext& ctx) {
  const TensorType& boxes = ctx.input(0);
  const TensorType& scores = ctx.input(1);
  if (boxes.has_rank() && (boxes.rank() != 3 || ((*boxes.shape)[2].known() && (*boxes.shape)[2].value != 4)))
    return ctx.fail("boxes %s must be [batch, boxes, 4]", boxes.str().c_str());
  if (scores.has_rank() && scores.rank() != 3)
    return ctx.fail("scores %s must be [batch, classes, boxes]", scores.str().c_str());
  set_out(ctx, 0, DType::kInt64, Shape{Dim(), Dim(3)});
  return Status::Ok();
}

Status roi_align_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& rois = ctx.input(1);
  const TensorType& bi = ctx.input(2);
  if (x.has_rank() && x.rank() != 4) return ctx.fail("input X %s must be 4-D [N, C, H, W]", x.str().c_str());
  if (rois.has_rank() && (rois.rank() != 2 || ((*rois.shape)[1].known() && (*rois.shape)[1].value != 4)))
    return ctx.fail("rois %s must be [num_rois, 4]", rois.str().c_str());
  if (bi.has_rank() && bi.rank() != 1) return ctx.fail("batch_indices %s must be 1-D", bi.str().c_str());
  Dim num;
  if (rois.has_rank()) num = (*rois.shape)[0];
  if (bi.has_rank() && !merge_dim(num, (*bi.shape)[0], &num))
    return ctx.fail("rois %s and batch_indices %s disagree on the number of rois", rois.str().c_str(), bi.str().c_str());
  const int64_t oh = ctx.attrs().get_int("output_height", 1), ow = ctx.attrs().get_int("output_width", 1);
  if (oh < 1 || ow < 1) return ctx.fail("output_height %lld and output_width %lld must be >= 1", ll(oh), ll(ow));
  set_out(ctx, 0, x.dtype, Shape{num, x.has_rank() ? (*x.shape)[1] : Dim(), Dim(oh), Dim(ow)});
  return Status::Ok();
}

Status reverse_sequence_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank() && x.rank() < 2) return ctx.fail("input %s must have rank >= 2", x.str().c_str());
  const int64_t ba = ctx.attrs().get_int("batch_axis", 1), ta = ctx.attrs().get_int("time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
    return ctx.fail("batch_axis %lld and time_axis %lld must be 0 and 1 in some order", ll(ba), ll(ta));
  set_out(ctx, 0, x.dtype, x.shape);
  return Status::Ok();
}

// The dtype attribute when present, else `def`.
DType dtype_attr(const ShapeContext& ctx, DType def) {
  return ctx.attrs().has("dtype") ? static_cast<DType>(ctx.attrs().get_int("dtype", 1)) : def;
}

Status eye_like_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank() && x.rank() != 2) return ctx.fail("input %s must be 2-D", x.str().c_str());
  set_out(ctx, 0, dtype_attr(ctx, x.dtype), x.has_rank() ? x.shape : std::optional<Shape>(unknown_dims(2)));
  return Status::Ok();
}

Status unique_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  std::optional<Shape> y = Shape{Dim()};
  Dim inverse;
  if (ctx.attrs().has("axis")) {
    if (!x.has_rank()) {
      y.reset();
    } else {
      const int64_t axis = ctx.attrs().get_int("axis", 0);
      int64_t a;
      if (!normalize_axis(axis, x.rank(), &a)) return ctx.fail("axis %lld is out of range for %s", ll(axis), x.str().c_str());
      y = *x.shape;
      (*y)[a] = Dim();
      inverse = (*x.shape)[a];
    }
  } else if (x.has_rank()) {
    inverse = dim_product(*x.shape, 0, x.shape->size());
  }
  set_out(ctx, 0, x.dtype, y);
  set_out(ctx, 1, DType::kInt64, Shape{Dim()});
  set_out(ctx, 2, DType::kInt64, Shape{inverse});
  set_out(ctx, 3, DType::kInt64, Shape{Dim()});
  return Status::Ok();
}

Status like_input_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  set_out(ctx, 0, dtype_attr(ctx, x.dtype), x.shape);
  return Status::Ok();
}

Status random_shape(ShapeContext& ctx) {
  auto shape = ctx.attrs().get_ints("shape");
  if (!shape) return ctx.fail("the shape attribute is required");
  Shape out;
  for (int64_t d : *shape) {
    if (d < 0) return ctx.fail("shape %s has a negative size", ints_str(*shape).c_str());
    out.push_back(Dim(d));
  }
  set_out(ctx, 0, dtype_attr(ctx, DType::kFloat32), std::move(out));
  return Status::Ok();
}

// Constant: exactly one of value / value_float(s) / value_int(s) / value_string(s).
Status constant_shape(ShapeContext& ctx) {
  const AttributeMap& a = ctx.attrs();
  int given = 0;
  for (const char* k : {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                        "value_strings", "sparse_value"})
    given += a.has(k);
  if (given != 1) return ctx.fail("exactly one value attribute is required, %d given", given);
  if (const Attribute* v = a.find("value")) {
    if (v->kind != Attribute::Kind::kTensor || !v->t) return ctx.fail("the value attribute must be a tensor");
    set_out(ctx, 0, v->t->dtype, Shape(v->t->dims.begin(), v->t->dims.end()));
  } else if (a.has("value_float")) {
    set_out(ctx, 0, DType::kFloat32, Shape{});
  } else if (const Attribute* f = a.find("value_floats")) {
    set_out(ctx, 0, DType::kFloat32, Shape{Dim(static_cast<int64_t>(f->floats.size()))});
  } else if (a.has("value_int")) {
    set_out(ctx, 0, DType::kInt64, Shape{});
  } else if (const Attribute* i = a.find("value_ints")) {
    set_out(ctx, 0, DType::kInt64, Shape{Dim(static_cast<int64_t>(i->ints.size()))});
  } else if (a.has("value_string")) {
    set_out(ctx, 0, DType::kString, Shape{});
  } else if (const Attribute* st = a.find("value_strings")) {
    set_out(ctx, 0, DType::kString, Shape{Dim(static_cast<int64_t>(st->strings.size()))});
  } else {
    return ctx.fail("sparse_value is not supported");
  }
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(Constant).inputs(0, 0).outputs(1, 1).shape(constant_shape);

OPENACL_REGISTER_OP(Shape).inputs(1, 1).outputs(1, 1).shape(shape_shape);
OPENACL_REGISTER_OP(Size).inputs(1, 1).outputs(1, 1).shape(size_shape);
OPENACL_REGISTER_OP(ConstantOfShape).inputs(1, 1).outputs(1, 1).shape(constant_of_shape_shape);
OPENACL_REGISTER_OP(Range).inputs(3, 3).outputs(1, 1).shape(range_shape);
OPENACL_REGISTER_OP(OneHot).inputs(3, 3).outputs(1, 1).shape(one_hot_shape);
OPENACL_REGISTER_OP(NonZero).inputs(1, 1).outputs(1, 1).shape(non_zero_shape);
OPENACL_REGISTER_OP(Trilu).inputs(1, 2).outputs(1, 1).shape(trilu_shape);
OPENACL_REGISTER_OP(NonMaxSuppression).inputs(2, 5).outputs(1, 1).shape(nms_shape);
OPENACL_REGISTER_OP(RoiAlign).inputs(3, 3).outputs(1, 1).shape(roi_align_shape);
OPENACL_REGISTER_OP(ReverseSequence).inputs(2, 2).outputs(1, 1).shape(reverse_sequence_shape);
OPENACL_REGISTER_OP(EyeLike).inputs(1, 1).outputs(1, 1).shape(eye_like_shape);
OPENACL_REGISTER_OP(Unique).inputs(1, 1).outputs(1, 4).shape(unique_shape);
OPENACL_REGISTER_OP(Bernoulli).inputs(1, 1).outputs(1, 1).shape(like_input_shape);
OPENACL_REGISTER_OP(RandomNormalLike).inputs(1, 1).outputs(1, 1).shape(like_input_shape);
OPENACL_REGISTER_OP(RandomUniformLike).inputs(1, 1).outputs(1, 1).shape(like_input_shape);
OPENACL_REGISTER_OP(RandomNormal).inputs(0, 0).outputs(1, 1).shape(random_shape);
OPENACL_REGISTER_OP(RandomUniform).inputs(0, 0).outputs(1, 1).shape(random_shape);

}  // namespace openacl::graph::nn
