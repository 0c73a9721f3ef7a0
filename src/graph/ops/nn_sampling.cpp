// Spatial resampling and patch ops: GridSample, AffineGrid, Col2Im,
// CenterCropPad, MaxUnpool.
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

// GridSample(X [N, C, D1..Dr], grid [N, O1..Or, r]) -> [N, C, O1..Or].
Status grid_sample_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& grid = ctx.input(1);
  if (x.has_rank() && x.rank() < 3) return ctx.fail("X %s must have rank >= 3", x.str().c_str());
  if (grid.has_rank() && grid.rank() < 3) return ctx.fail("grid %s must have rank >= 3", grid.str().c_str());
  if (x.has_rank() && grid.has_rank() && grid.rank() != x.rank())
    return ctx.fail("grid %s must have the rank of X %s", grid.str().c_str(), x.str().c_str());
  if (!grid.has_rank()) {
    set_out(ctx, 0, x.dtype, x.has_rank() ? std::optional<Shape>(unknown_dims(x.rank())) : std::nullopt);
    return Status::Ok();
  }
  const Shape& g = *grid.shape;
  const Dim& last = g.back();
  if (last.known() && last.value != grid.rank() - 2)
    return ctx.fail("grid %s must end in %lld coordinates", grid.str().c_str(), ll(grid.rank() - 2));
  Dim n = g[0];
  if (x.has_rank() && !merge_dim((*x.shape)[0], g[0], &n))
    return ctx.fail("X %s and grid %s differ in batch", x.str().c_str(), grid.str().c_str());
  Shape out{n, x.has_rank() ? (*x.shape)[1] : Dim()};
  out.insert(out.end(), g.begin() + 1, g.end() - 1);
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

// AffineGrid(theta [N, 2, 3] | [N, 3, 4], size [N, C, H, W] | [N, C, D, H, W]).
Status affine_grid_shape(ShapeContext& ctx) {
  const TensorType& theta = ctx.input(0);
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "size"));
  if (theta.has_rank() && theta.rank() != 3) return ctx.fail("theta %s must be 3-D [N, 2, 3] or [N, 3, 4]", theta.str().c_str());
  if (auto size = const_ints(ctx, 1)) {
    if (size->size() != 4 && size->size() != 5) return ctx.fail("size %s must have 4 or 5 entries", ints_str(*size).c_str());
    for (int64_t v : *size)
      if (v < 0) return ctx.fail("size %s has a negative entry", ints_str(*size).c_str());
    Shape out{Dim((*size)[0])};
    for (size_t i = 2; i < size->size(); ++i) out.push_back(Dim((*size)[i]));
    out.push_back(Dim(static_cast<int64_t>(size->size()) - 2));
    set_out(ctx, 0, theta.dtype, std::move(out));
    return Status::Ok();
  }
  const int64_t len = known_length_1d(ctx, 1);
  if (len == 4 || len == 5) {
    Shape out = unknown_dims(len);  // [N, spatial..., len - 2]
    out.back() = Dim(len - 2);
    if (theta.has_rank()) out[0] = (*theta.shape)[0];
    set_out(ctx, 0, theta.dtype, std::move(out));
  } else {
    set_out(ctx, 0, theta.dtype, std::nullopt);
  }
  return Status::Ok();
}

// Col2Im(input [N, C*prod(block), L], image_shape, block_shape) -> [N, C, image...].
Status col2im_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.has_rank() && x.rank() != 3) return ctx.fail("input %s must be 3-D [N, C*prod(block_shape), L]", x.str().c_str());
  auto image = const_ints(ctx, 1), block = const_ints(ctx, 2);
  Dim n = x.has_rank() ? (*x.shape)[0] : Dim();
  if (!image) {
    const int64_t len = known_length_1d(ctx, 1);
    if (len < 0 || len > kMaxDerivedRank) {
      set_out(ctx, 0, x.dtype, std::nullopt);
      return Status::Ok();
    }
    Shape out = unknown_dims(len + 2);
    out[0] = n;
    set_out(ctx, 0, x.dtype, std::move(out));
    return Status::Ok();
  }
  Dim c;
  if (block && x.has_rank()) {
    if (block->size() != image->size())
      return ctx.fail("block_shape %s and image_shape %s differ in length", ints_str(*block).c_str(), ints_str(*image).c_str());
    int64_t prod = 1;
    for (int64_t b : *block) {
      if (b < 1 || !mul_ok(prod, b, &prod)) return ctx.fail("block_shape %s is invalid", ints_str(*block).c_str());
    }
    const Dim& cb = (*x.shape)[1];
    if (cb.known()) {
      if (cb.value % prod != 0)
        return ctx.fail("input dim 1 (%lld) is not divisible by prod(block_shape) = %lld", ll(cb.value), ll(prod));
      c = Dim(cb.value / prod);
    }
  }
  Shape out{n, c};
  for (int64_t v : *image) {
    if (v < 0) return ctx.fail("image_shape %s has a negative size", ints_str(*image).c_str());
    out.push_back(Dim(v));
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

// CenterCropPad(input, shape): the given axes take the requested sizes.
Status center_crop_pad_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "shape"));
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  std::vector<int64_t> axes;
  if (auto a = ctx.attrs().get_ints("axes")) {
    std::vector<bool> seen(r, false);
    for (int64_t v : *a) {
      int64_t n;
      if (!normalize_axis(v, r, &n)) return ctx.fail("axis %lld is out of range for %s", ll(v), x.str().c_str());
      if (seen[n]) return ctx.fail("axes %s repeat axis %lld", ints_str(*a).c_str(), ll(n));
      seen[n] = true;
      axes.push_back(n);
    }
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  Shape out = *x.shape;
  auto shape = const_ints(ctx, 1);
  if (!shape) {
    for (int64_t a : axes) out[a] = Dim();
  } else {
    if (shape->size() != axes.size())
      return ctx.fail("shape %s has %zu entries for %zu axes", ints_str(*shape).c_str(), shape->size(), axes.size());
    for (size_t i = 0; i < axes.size(); ++i) {
      if ((*shape)[i] < 0) return ctx.fail("shape %s has a negative size", ints_str(*shape).c_str());
      out[axes[i]] = Dim((*shape)[i]);
    }
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

// MaxUnpool(X, I, output_shape?): output_shape when given, else the inverse of pooling.
Status max_unpool_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (ctx.has_input(2)) {
    OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 2, "output_shape"));
    if (auto s = const_ints(ctx, 2)) {
      Shape out;
      for (int64_t v : *s) {
        if (v < 0) return ctx.fail("output_shape %s has a negative size", ints_str(*s).c_str());
        out.push_back(Dim(v));
      }
      set_out(ctx, 0, x.dtype, std::move(out));
      return Status::Ok();
    }
    set_out(ctx, 0, x.dtype, x.has_rank() ? std::optional<Shape>(unknown_dims(x.rank())) : std::nullopt);
    return Status::Ok();
  }
  auto kernel = ctx.attrs().get_ints("kernel_shape");
  if (!kernel) return ctx.fail("the kernel_shape attribute is required");
  const size_t n = kernel->size();
  if (x.has_rank() && x.rank() != static_cast<int64_t>(n) + 2)
    return ctx.fail("X %s must have rank %zu for kernel_shape %s", x.str().c_str(), n + 2, ints_str(*kernel).c_str());
  const std::vector<int64_t> strides = ints_or(ctx, "strides", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> pads = ints_or(ctx, "pads", std::vector<int64_t>(2 * n, 0));
  if (strides.size() != n || pads.size() != 2 * n)
    return ctx.fail("strides %s / pads %s do not match kernel_shape %s", ints_str(strides).c_str(), ints_str(pads).c_str(),
                    ints_str(*kernel).c_str());
  Shape out = x.has_rank() ? Shape{(*x.shape)[0], (*x.shape)[1]} : Shape{Dim(), Dim()};
  for (size_t i = 0; i < n; ++i) {
    const Dim in = x.has_rank() ? (*x.shape)[i + 2] : Dim();
    if (!in.known()) {
      out.push_back(Dim());
      continue;
    }
    const __int128 o = static_cast<__int128>(in.value - 1) * strides[i] + (*kernel)[i] - pads[i] - pads[i + n];
    if (o < 0 || o > INT64_MAX) return ctx.fail("spatial axis %zu: output size is out of range", i);
    out.push_back(Dim(static_cast<int64_t>(o)));
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(GridSample).inputs(2, 2).outputs(1, 1).shape(grid_sample_shape);
OPENACL_REGISTER_OP(AffineGrid).inputs(2, 2).outputs(1, 1).shape(affine_grid_shape);
OPENACL_REGISTER_OP(Col2Im).inputs(3, 3).outputs(1, 1).shape(col2im_shape);
OPENACL_REGISTER_OP(CenterCropPad).inputs(2, 2).outputs(1, 1).shape(center_crop_pad_shape);
OPENACL_REGISTER_OP(MaxUnpool).inputs(2, 3).outputs(1, 1).shape(max_unpool_shape);

}  // namespace openacl::graph::nn
