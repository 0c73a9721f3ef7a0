// Pad, Resize and Upsample.
#include <algorithm>
#include <climits>
#include <cmath>

#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

// Normalised, duplicate-free axes for a rank-r input; all axes when `axes` is nullopt.
Status axes_list(const ShapeContext& ctx, const std::optional<std::vector<int64_t>>& axes, int64_t r,
                 std::vector<int64_t>* out) {
  out->clear();
  if (!axes) {
    for (int64_t i = 0; i < r; ++i) out->push_back(i);
    return Status::Ok();
  }
  std::vector<bool> seen(r, false);
  for (int64_t a : *axes) {
    int64_t n;
    if (!normalize_axis(a, r, &n)) return ctx.fail("axis %lld is out of range for rank %lld", ll(a), ll(r));
    if (seen[n]) return ctx.fail("axes %s repeat axis %lld", ints_str(*axes).c_str(), ll(n));
    seen[n] = true;
    out->push_back(n);
  }
  return Status::Ok();
}

Status pad_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const std::string mode = ctx.attrs().get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return ctx.fail("mode '%s' is not one of constant, reflect, edge, wrap", mode.c_str());
  const bool pads_attr = ctx.opset() > 0 && ctx.opset() < 11;
  std::optional<std::vector<int64_t>> pads;
  if (pads_attr) {
    pads = ctx.attrs().get_ints(ctx.opset() < 2 ? "paddings" : "pads");
    if (!pads) pads = ctx.attrs().get_ints(ctx.opset() < 2 ? "pads" : "paddings");
    if (!pads) return ctx.fail("the pads attribute is required before opset 11");
  } else {
    if (!ctx.has_input(1)) return ctx.fail("the pads input is required");
    OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "pads"));
    OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 3, "axes"));
    pads = const_ints(ctx, 1);
  }
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  std::optional<std::vector<int64_t>> axes_in;
  if (!pads_attr && ctx.has_input(3)) {
    axes_in = const_ints(ctx, 3);
    if (!axes_in) {
      set_out(ctx, 0, x.dtype, unknown_dims(r));
      return Status::Ok();
    }
  }
  std::vector<int64_t> axes;
  OPENACL_RETURN_IF_ERROR(axes_list(ctx, axes_in, r, &axes));
  Shape out = *x.shape;
  if (!pads) {
    for (int64_t a : axes) out[a] = Dim();
    set_out(ctx, 0, x.dtype, std::move(out));
    return Status::Ok();
  }
  const size_t n = axes.size();
  if (pads->size() != 2 * n)
    return ctx.fail("pads %s has %zu entries; expected %zu for %s", ints_str(*pads).c_str(), pads->size(), 2 * n,
                    x.str().c_str());
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes[i];
    const Dim& d = (*x.shape)[a];
    const __int128 total = static_cast<__int128>((*pads)[i]) + (*pads)[i + n];
    if (total == 0) continue;
    if (!d.known()) {
      out[a] = Dim();
      continue;
    }
    const __int128 v = d.value + total;
    if (v < 0)
      return ctx.fail("pads %s make axis %lld of %s negative (%lld)", ints_str(*pads).c_str(), ll(a), x.str().c_str(),
                      ll(static_cast<int64_t>(v)));
    if (v > INT64_MAX) return ctx.fail("pads %s overflow axis %lld", ints_str(*pads).c_str(), ll(a));
    out[a] = Dim(static_cast<int64_t>(v));
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

// floor(in * scale) computed in float, as runtimes do.
Dim scaled(const Dim& in, double scale) {
  if (scale == 1.0) return in;
  if (!in.known()) return Dim();
  const float v = std::floor(static_cast<float>(in.value) * static_cast<float>(scale));
  if (!(v < 9.0e18f)) return Dim();  // absurd scale; the kernel layer refuses it
  return Dim(static_cast<int64_t>(v));
}

Status resize_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  const bool v10 = ctx.opset() > 0 && ctx.opset() < 11;
  const size_t scales_at = v10 ? 1 : 2, sizes_at = 3;
  const bool has_sizes = !v10 && input_present(ctx, sizes_at);
  // Exporters pass an empty scales tensor beside sizes; only two known
  // non-empty inputs are a definite error.
  if (has_sizes && known_length_1d(ctx, scales_at) > 0 && known_length_1d(ctx, sizes_at) > 0)
    return ctx.fail("only one of scales and sizes may be given");
  const bool has_scales = !has_sizes && input_present(ctx, scales_at);
  if (!has_scales && !has_sizes) return ctx.fail("one of scales and sizes is required");
  std::vector<int64_t> axes;
  OPENACL_RETURN_IF_ERROR(axes_list(ctx, ctx.attrs().get_ints("axes"), r, &axes));
  Shape out = *x.shape;
  if (has_sizes) {
    OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, sizes_at, "sizes"));
    auto sizes = const_ints(ctx, sizes_at);
    if (!sizes) {
      for (int64_t a : axes) out[a] = Dim();
      set_out(ctx, 0, x.dtype, std::move(out));
      return Status::Ok();
    }
    if (sizes->size() != axes.size())
      return ctx.fail("sizes %s has %zu entries; expected %zu", ints_str(*sizes).c_str(), sizes->size(), axes.size());
    for (int64_t s : *sizes)
      if (s < 0) return ctx.fail("sizes %s has a negative entry", ints_str(*sizes).c_str());
    const std::string policy = ctx.attrs().get_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = Dim((*sizes)[i]);
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double scale = policy == "not_larger" ? INFINITY : 0.0;
      bool known = true;
      for (size_t i = 0; i < axes.size(); ++i) {
        const Dim& d = (*x.shape)[axes[i]];
        if (!d.known() || d.value == 0) { known = false; break; }
        const double s = static_cast<double>((*sizes)[i]) / static_cast<double>(d.value);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        const Dim& d = (*x.shape)[axes[i]];
        const double v = std::round(scale * static_cast<double>(d.value));
        out[axes[i]] = known && v < 9.0e18 ? Dim(static_cast<int64_t>(v)) : Dim();
      }
    } else {
      return ctx.fail("keep_aspect_ratio_policy '%s' is not one of stretch, not_larger, not_smaller", policy.c_str());
    }
  } else {
    auto scales = const_doubles(ctx, scales_at);
    if (!scales) {
      for (int64_t a : axes) out[a] = Dim();
      set_out(ctx, 0, x.dtype, std::move(out));
      return Status::Ok();
    }
    if (scales->size() != axes.size())
      return ctx.fail("scales has %zu entries; expected %zu for %s", scales->size(), axes.size(), x.str().c_str());
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!((*scales)[i] > 0)) return ctx.fail("scale %g on axis %lld must be > 0", (*scales)[i], ll(axes[i]));
      out[axes[i]] = scaled((*x.shape)[axes[i]], (*scales)[i]);
    }
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status upsample_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  std::optional<std::vector<double>> scales;
  bool scales_unknown = false;
  if (ctx.has_input(1)) {
    scales = const_doubles(ctx, 1);
    scales_unknown = !scales;
  } else if (auto f = ctx.attrs().get_floats("scales")) {
    scales.emplace(f->begin(), f->end());
  } else if (ctx.attrs().has("height_scale") || ctx.attrs().has("width_scale")) {  // opset 1
    scales = std::vector<double>{1.0, 1.0, ctx.attrs().get_float("height_scale", 1.f),
                                 ctx.attrs().get_float("width_scale", 1.f)};
  } else {
    return ctx.fail("scales are required");
  }
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  if (scales_unknown) {
    set_out(ctx, 0, x.dtype, unknown_dims(x.rank()));
    return Status::Ok();
  }
  if (static_cast<int64_t>(scales->size()) != x.rank())
    return ctx.fail("scales has %zu entries for %s", scales->size(), x.str().c_str());
  Shape out = *x.shape;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!((*scales)[i] >= 1.0)) return ctx.fail("scale %g on axis %zu must be >= 1", (*scales)[i], i);
    out[i] = scaled(out[i], (*scales)[i]);
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(Pad).inputs(1, 4).outputs(1, 1).shape(pad_shape);
OPENACL_REGISTER_OP(Resize).inputs(1, 4).outputs(1, 1).shape(resize_shape);
OPENACL_REGISTER_OP(Upsample).inputs(1, 2).outputs(1, 1).shape(upsample_shape);

}  // namespace openacl::graph::nn
