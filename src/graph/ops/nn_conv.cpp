// Conv and ConvTranspose: [N, C, D1..Dn] inputs, kernel sizes from the weight
// (or kernel_shape), auto_pad / pads / strides / dilations / group.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "graph/ops/nn_common.h"
#include "graph/passes.h"

namespace openacl::graph::nn {
namespace {

struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
};

// Reads kernel_shape/strides/dilations/pads for `n` spatial axes; `kernel`
// holds the weight-derived sizes (-1 where unknown) unless the attribute is set.
Status read_window(const ShapeContext& ctx, size_t n, std::vector<int64_t> kernel_from_weight, WindowAttrs* w) {
  const AttributeMap& a = ctx.attrs();
  w->kernel = ints_or(ctx, "kernel_shape", std::move(kernel_from_weight));
  w->strides = ints_or(ctx, "strides", std::vector<int64_t>(n, 1));
  w->dilations = ints_or(ctx, "dilations", std::vector<int64_t>(n, 1));
  w->pads = ints_or(ctx, "pads", std::vector<int64_t>(2 * n, 0));
  w->auto_pad = a.get_string("auto_pad", "NOTSET");
  if (w->kernel.size() != n) return ctx.fail("kernel_shape %s has %zu entries; the input has %zu spatial axes", ints_str(w->kernel).c_str(), w->kernel.size(), n);
  if (w->strides.size() != n) return ctx.fail("strides %s has %zu entries; the input has %zu spatial axes", ints_str(w->strides).c_str(), w->strides.size(), n);
  if (w->dilations.size() != n) return ctx.fail("dilations %s has %zu entries; the input has %zu spatial axes", ints_str(w->dilations).c_str(), w->dilations.size(), n);
  if (w->pads.size() != 2 * n) return ctx.fail("pads %s has %zu entries; expected %zu (begin and end per spatial axis)", ints_str(w->pads).c_str(), w->pads.size(), 2 * n);
  return Status::Ok();
}

// Where a conv-like op keeps its operands (QLinearConv interleaves scales and
// zero points) and what its output dtype is (kUndefined: X's).
struct ConvOperands {
  size_t x = 0, w = 1, b = 2;
  DType out = DType::kUndefined;
};

// Spatial rank from X / W ranks; -1 when neither is known. Fails on mismatch.
Status spatial_rank(const ShapeContext& ctx, const ConvOperands& ops, int64_t* n) {
  const TensorType& x = ctx.input(ops.x);
  const TensorType& w = ctx.input(ops.w);
  *n = -1;
  if (x.has_rank()) {
    if (x.rank() < 3) return ctx.fail("input X %s must have rank >= 3 ([N, C, spatial...])", x.str().c_str());
    *n = x.rank() - 2;
  }
  if (w.has_rank()) {
    if (w.rank() < 3) return ctx.fail("weight W %s must have rank >= 3", w.str().c_str());
    if (*n >= 0 && w.rank() - 2 != *n)
      return ctx.fail("weight W %s and input X %s differ in rank", w.str().c_str(), x.str().c_str());
    *n = w.rank() - 2;
  }
  if (*n < 0) {
    if (auto ks = ctx.attrs().get_ints("kernel_shape")) *n = static_cast<int64_t>(ks->size());
  }
  return Status::Ok();
}

std::vector<int64_t> weight_kernel(const TensorType& w, size_t n) {
  std::vector<int64_t> k(n, -1);
  if (w.has_rank())
    for (size_t i = 0; i < n; ++i) k[i] = (*w.shape)[i + 2].value;
  return k;
}

Status conv_like_shape(ShapeContext& ctx, const ConvOperands& ops) {
  const TensorType& x = ctx.input(ops.x);
  const TensorType& w = ctx.input(ops.w);
  const DType dt = ops.out != DType::kUndefined ? ops.out : x.dtype;
  int64_t n = -1;
  OPENACL_RETURN_IF_ERROR(spatial_rank(ctx, ops, &n));
  if (n < 0) {
    set_out(ctx, 0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t group = ctx.attrs().get_int("group", 1);
  if (group < 1) return ctx.fail("group %lld must be >= 1", ll(group));
  Dim batch, cin, m, wc;
  if (x.has_rank()) batch = (*x.shape)[0], cin = (*x.shape)[1];
  if (w.has_rank()) m = (*w.shape)[0], wc = (*w.shape)[1];
  int64_t expect_cin = 0;
  if (cin.known() && wc.known() && (!mul_ok(wc.value, group, &expect_cin) || cin.value != expect_cin))
    return ctx.fail("input channels %lld != weight channels %lld x group %lld (X %s, W %s)", ll(cin.value),
                    ll(wc.value), ll(group), x.str().c_str(), w.str().c_str());
  if (cin.known() && cin.value % group != 0)
    return ctx.fail("input channels %lld are not divisible by group %lld", ll(cin.value), ll(group));
  if (m.known() && m.value % group != 0)
    return ctx.fail("output channels %lld (W dim 0) are not divisible by group %lld", ll(m.value), ll(group));
  if (ctx.has_input(ops.b) && ctx.input(ops.b).has_rank()) {
    const TensorType& b = ctx.input(ops.b);
    if (b.rank() != 1) return ctx.fail("bias B %s must be 1-D", b.str().c_str());
    if ((*b.shape)[0].known() && m.known() && (*b.shape)[0].value != m.value)
      return ctx.fail("bias B %s does not match %lld output channels", b.str().c_str(), ll(m.value));
  }
  WindowAttrs wa;
  OPENACL_RETURN_IF_ERROR(read_window(ctx, static_cast<size_t>(n), weight_kernel(w, n), &wa));
  Shape out{batch, m};
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    if (w.has_rank() && (*w.shape)[i + 2].known() && wa.kernel[i] >= 0 && (*w.shape)[i + 2].value != wa.kernel[i])
      return ctx.fail("kernel_shape %s disagrees with weight W %s", ints_str(wa.kernel).c_str(), w.str().c_str());
    const Dim in = x.has_rank() ? (*x.shape)[i + 2] : Dim();
    Dim o;
    if (wa.kernel[i] < 0) {  // kernel size unknown
      o = Dim();
      if (wa.auto_pad == "SAME_UPPER" || wa.auto_pad == "SAME_LOWER")
        OPENACL_RETURN_IF_ERROR(window_out(ctx, in, 1, wa.strides[i], 1, 0, 0, wa.auto_pad, false, i, &o));
    } else {
      OPENACL_RETURN_IF_ERROR(window_out(ctx, in, wa.kernel[i], wa.strides[i], wa.dilations[i], wa.pads[i],
                                         wa.pads[i + n], wa.auto_pad, false, i, &o));
    }
    out.push_back(o);
  }
  set_out(ctx, 0, dt, std::move(out));
  return Status::Ok();
}

Status conv_transpose_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  const DType dt = x.dtype;
  int64_t n = -1;
  OPENACL_RETURN_IF_ERROR(spatial_rank(ctx, ConvOperands{}, &n));
  if (n < 0) {
    set_out(ctx, 0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t group = ctx.attrs().get_int("group", 1);
  if (group < 1) return ctx.fail("group %lld must be >= 1", ll(group));
  Dim batch, cin, wc_in, wm;
  if (x.has_rank()) batch = (*x.shape)[0], cin = (*x.shape)[1];
  if (w.has_rank()) wc_in = (*w.shape)[0], wm = (*w.shape)[1];
  if (cin.known() && wc_in.known() && cin.value != wc_in.value)
    return ctx.fail("input channels %lld != weight dim 0 %lld (X %s, W %s)", ll(cin.value), ll(wc_in.value),
                    x.str().c_str(), w.str().c_str());
  if (cin.known() && cin.value % group != 0)
    return ctx.fail("input channels %lld are not divisible by group %lld", ll(cin.value), ll(group));
  const Dim m = dim_mul(wm, group);
  WindowAttrs wa;
  OPENACL_RETURN_IF_ERROR(read_window(ctx, static_cast<size_t>(n), weight_kernel(w, n), &wa));
  std::vector<int64_t> out_pad = ints_or(ctx, "output_padding", std::vector<int64_t>(n, 0));
  if (out_pad.size() != static_cast<size_t>(n))
    return ctx.fail("output_padding %s has %zu entries; the input has %lld spatial axes", ints_str(out_pad).c_str(),
                    out_pad.size(), ll(n));
  auto output_shape = ctx.attrs().get_ints("output_shape");
  if (output_shape && output_shape->size() != static_cast<size_t>(n)) {
    if (output_shape->size() == static_cast<size_t>(n + 2)) output_shape->erase(output_shape->begin(), output_shape->begin() + 2);
    else return ctx.fail("output_shape %s has %zu entries; the input has %lld spatial axes",
                         ints_str(*output_shape).c_str(), output_shape->size(), ll(n));
  }
  if (wa.auto_pad != "NOTSET" && wa.auto_pad != "SAME_UPPER" && wa.auto_pad != "SAME_LOWER" && wa.auto_pad != "VALID")
    return ctx.fail("auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", wa.auto_pad.c_str());
  Shape out{batch, m};
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    const int64_t s = wa.strides[i], d = wa.dilations[i], k = wa.kernel[i];
    if (s < 1 || d < 1) return ctx.fail("strides %s and dilations %s must be >= 1", ints_str(wa.strides).c_str(), ints_str(wa.dilations).c_str());
    if (out_pad[i] < 0 || out_pad[i] >= std::max(s, d))
      return ctx.fail("output_padding %lld on spatial axis %zu must be in [0, max(stride, dilation))", ll(out_pad[i]), i);
    if (output_shape) {
      if ((*output_shape)[i] < 0) return ctx.fail("output_shape %s has a negative size", ints_str(*output_shape).c_str());
      out.push_back(Dim((*output_shape)[i]));
      continue;
    }
    const Dim in = x.has_rank() ? (*x.shape)[i + 2] : Dim();
    if (!in.known() || (k < 0 && wa.auto_pad.rfind("SAME", 0) != 0)) {
      out.push_back(Dim());
      continue;
    }
    __int128 o;  // wide: hostile attributes must not overflow
    if (wa.auto_pad == "SAME_UPPER" || wa.auto_pad == "SAME_LOWER") {
      o = static_cast<__int128>(in.value) * s;
    } else {
      const int64_t pb = wa.auto_pad == "VALID" ? 0 : wa.pads[i], pe = wa.auto_pad == "VALID" ? 0 : wa.pads[i + n];
      o = static_cast<__int128>(s) * (in.value - 1) + out_pad[i] + static_cast<__int128>(k - 1) * d + 1 - pb - pe;
    }
    if (o < 0) return ctx.fail("spatial axis %zu: computed output size %lld is negative", i, ll(static_cast<int64_t>(o)));
    if (o > INT64_MAX) return ctx.fail("spatial axis %zu: output size overflows", i);
    out.push_back(Dim(static_cast<int64_t>(o)));
  }
  set_out(ctx, 0, dt, std::move(out));
  return Status::Ok();
}

// A 1x1 Conv that absorbed the depthwise 3x3 Conv after it
// (graph::fuse_conv_depthwise): inputs 4 and 5 are the depthwise W [C, 1, 3,
// 3] and B [C]; the output is the depthwise one (padding 1, the stride
// attribute's).
Status fused_depthwise_shape(ShapeContext& ctx) {
  const int64_t s = ctx.attrs().get_int(kFusedDwStrideAttr, 0);
  if (s != 1 && s != 2) return ctx.fail("fused depthwise stride %lld must be 1 or 2", ll(s));
  if (ctx.has_input(3) && !ctx.attrs().has(kFusedProjectAttr))
    return ctx.fail("a Conv with a fused depthwise takes no residual input");
  if (!ctx.has_input(4)) return ctx.fail("the fused depthwise weights (input 4) are missing");
  // The first half is a plain 1x1: its output has X's spatial size.
  const AttributeMap& a = ctx.attrs();
  auto all_are = [&](const char* name, int64_t v) {
    const auto x = a.get_ints(name);
    return !x || std::all_of(x->begin(), x->end(), [&](int64_t e) { return e == v; });
  };
  const TensorType& w = ctx.input(1);
  const bool one_by_one = !w.shape || (w.shape->size() == 4 && (*w.shape)[2] == Dim(1) && (*w.shape)[3] == Dim(1));
  if (!one_by_one || a.get_int("group", 1) != 1 || !all_are("strides", 1) || !all_are("dilations", 1) ||
      !all_are("pads", 0) || a.get_string("auto_pad", "NOTSET") != "NOTSET")
    return ctx.fail("a fused depthwise follows a 1x1 Conv only (group 1, stride 1, no padding)");
  OPENACL_RETURN_IF_ERROR(conv_like_shape(ctx, ConvOperands{}));
  TensorType& y = ctx.output(0);
  if (!y.shape || y.shape->size() != 4) return ctx.fail("a fused depthwise needs a 4-D output");
  const Dim c = (*y.shape)[1];
  for (size_t i : {size_t{4}, size_t{5}}) {
    if (!ctx.has_input(i)) continue;
    const TensorType& t = ctx.input(i);
    const Shape want = i == 4 ? Shape{c, Dim(1), Dim(3), Dim(3)} : Shape{c};
    if (t.dtype != y.dtype || (t.shape && c.known() && !(*t.shape == want)))
      return ctx.fail("fused depthwise input %zu must be %s [%s]", i, dtype_name(y.dtype), i == 4 ? "C, 1, 3, 3" : "C");
  }
  for (size_t axis : {size_t{2}, size_t{3}})
    if ((*y.shape)[axis].known()) (*y.shape)[axis] = Dim(((*y.shape)[axis].value - 1) / s + 1);
  return Status::Ok();
}

// A Conv that absorbed the projecting 1x1 Conv after it
// (graph::fuse_inverted_residual): a 1x1 with its depthwise (inputs 4 and 5,
// the dw attributes) or a depthwise, then the projection's W [M, C, 1, 1]
// and B [M] (inputs 6 and 7), and input 3 the residual added to the output
// [N, M, H, W] (kFusedSumAttr).
Status fused_project_shape(ShapeContext& ctx) {
  const bool sum = ctx.attrs().get_int(kFusedSumAttr, 0) != 0;
  if (!ctx.has_input(6)) return ctx.fail("the fused projection's weights (input 6) are missing");
  if (ctx.has_input(3) != sum)
    return ctx.fail("a fused residual (input 3) goes with the sum attribute, and only with it");
  if (ctx.attrs().has(kFusedDwStrideAttr)) {
    OPENACL_RETURN_IF_ERROR(fused_depthwise_shape(ctx));
  } else {
    if (ctx.has_input(4) || ctx.has_input(5)) return ctx.fail("inputs 4 and 5 go with a fused depthwise only");
    OPENACL_RETURN_IF_ERROR(conv_like_shape(ctx, ConvOperands{}));
  }
  TensorType& y = ctx.output(0);
  if (!y.shape || y.shape->size() != 4) return ctx.fail("a fused projection needs a 4-D output");
  const Dim c = (*y.shape)[1];
  const TensorType& w = ctx.input(6);
  if (w.dtype != y.dtype || (w.shape && (w.shape->size() != 4 || (c.known() && !((*w.shape)[1] == c)) ||
                                         !((*w.shape)[2] == Dim(1)) || !((*w.shape)[3] == Dim(1)))))
    return ctx.fail("the fused projection's weights (input 6) must be %s [M, C, 1, 1]", dtype_name(y.dtype));
  (*y.shape)[1] = w.shape ? (*w.shape)[0] : Dim();
  if (ctx.has_input(7)) {
    const TensorType& b = ctx.input(7);
    if (b.dtype != y.dtype || (b.shape && !(*b.shape == Shape{(*y.shape)[1]})))
      return ctx.fail("the fused projection's bias (input 7) must be %s [M]", dtype_name(y.dtype));
  }
  if (sum && (ctx.input(3).dtype != y.dtype || (ctx.input(3).shape && !(*ctx.input(3).shape == *y.shape))))
    return ctx.fail("the fused residual input must have the block output's type %s", y.str().c_str());
  return Status::Ok();
}

Status conv_shape(ShapeContext& ctx) {
  if (ctx.attrs().has(kFusedProjectAttr)) return fused_project_shape(ctx);
  if (ctx.attrs().has(kFusedDwStrideAttr)) return fused_depthwise_shape(ctx);
  // Input 3 exists only on Convs that absorbed a residual Add (graph::fuse_conv_add).
  if (ctx.num_inputs() > 3) {
    if (!ctx.attrs().has(kFusedSumAttr)) return ctx.fail("Conv takes at most 3 inputs (X, W, B)");
    OPENACL_RETURN_IF_ERROR(conv_like_shape(ctx, ConvOperands{}));
    if (!ctx.has_input(3) || ctx.input(3).dtype != ctx.output(0).dtype ||
        (ctx.input(3).shape && ctx.output(0).shape && !(*ctx.input(3).shape == *ctx.output(0).shape)))
      return ctx.fail("the fused residual input must have the Conv output's type %s", ctx.output(0).str().c_str());
    return Status::Ok();
  }
  return conv_like_shape(ctx, ConvOperands{});
}

// ConvInteger(x, w, x_zero_point, w_zero_point): int32 output, no bias.
Status conv_integer_shape(ShapeContext& ctx) {
  return conv_like_shape(ctx, ConvOperands{0, 1, SIZE_MAX, DType::kInt32});
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): y_zp's dtype.
Status qlinear_conv_shape(ShapeContext& ctx) {
  DType out = ctx.input(7).dtype != DType::kUndefined ? ctx.input(7).dtype : ctx.input(0).dtype;
  return conv_like_shape(ctx, ConvOperands{0, 3, 8, out});
}

// DeformConv(X, W, offset, B, mask): Conv's output shape.
Status deform_conv_shape(ShapeContext& ctx) { return conv_like_shape(ctx, ConvOperands{0, 1, 3, DType::kUndefined}); }

}  // namespace

OPENACL_REGISTER_OP(DeformConv).inputs(3, 5).outputs(1, 1).shape(deform_conv_shape);
OPENACL_REGISTER_OP(ConvInteger).inputs(2, 4).outputs(1, 1).shape(conv_integer_shape);
OPENACL_REGISTER_OP(QLinearConv).inputs(8, 9).outputs(1, 1).shape(qlinear_conv_shape);
OPENACL_REGISTER_OP(Conv).inputs(2, 8).outputs(1, 1).shape(conv_shape);
OPENACL_REGISTER_OP(ConvTranspose).inputs(2, 3).outputs(1, 1).shape(conv_transpose_shape);

}  // namespace openacl::graph::nn
