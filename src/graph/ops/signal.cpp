// Signal ops: DFT, STFT, the window generators (HannWindow, HammingWindow,
// BlackmanWindow) and MelWeightMatrix.
//
// Complex values are carried as a trailing dim of 2 (real, imaginary); a real
// signal has a trailing dim of 1. Output lengths depend on scalar inputs
// (dft_length, frame_step, size, ...): when those are not constant the dims
// stay unknown and the executor re-infers them with the actual values.
#include <optional>

#include "graph/ops/ew_common.h"

namespace openacl::graph {
namespace {

using ew::opset_of;

// The single integer held by constant input i, if any.
std::optional<int64_t> const_scalar(const ShapeContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  auto v = ew::const_ints(ctx, i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

Status check_int_scalar(const ShapeContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const TensorType& t = ctx.input(i);
  if (t.dtype != DType::kUndefined && t.dtype != DType::kInt32 && t.dtype != DType::kInt64)
    return ctx.fail("%s (input %zu) must be int32 or int64, got %s", what, i, dtype_name(t.dtype));
  if (t.has_rank() && t.rank() > 1)
    return ctx.fail("%s (input %zu) must be a scalar, got shape %s", what, i, shape_str(*t.shape).c_str());
  return Status::Ok();
}

Status check_float_input(const ShapeContext& ctx, size_t i) {
  const DType t = ctx.input(i).dtype;
  if (t != DType::kUndefined && !dtype_is_float(t))
    return ctx.fail("input %zu must be a float tensor, got %s", i, dtype_name(t));
  return Status::Ok();
}

// DFT-17 takes `axis` as an attribute (default 1); DFT-20 as input 2 (default -2).
Status dft_shape(ShapeContext& ctx) {
  const bool axis_input = opset_of(ctx) >= 20;
  if (!axis_input && ctx.num_inputs() > 2) return ctx.fail("DFT takes 'axis' as an input from opset 20 only");
  if (axis_input && ctx.attrs().has("axis")) return ctx.fail("DFT takes 'axis' as an input from opset 20");
  OPENACL_RETURN_IF_ERROR(check_float_input(ctx, 0));
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 1, "dft_length"));
  if (axis_input) OPENACL_RETURN_IF_ERROR(ew::check_dtype(ctx, 2, DType::kInt64, "axis"));
  const bool inverse = ctx.attrs().get_int("inverse", 0) != 0;
  const bool onesided = ctx.attrs().get_int("onesided", 0) != 0;
  const TensorType& x = ctx.input(0);
  TensorType& y = ctx.output(0);
  y.dtype = x.dtype;
  if (!x.has_rank()) {
    y.shape.reset();
    return Status::Ok();
  }
  const int64_t r = x.rank();
  if (r < 2) return ctx.fail("DFT input needs rank >= 2 ([..., 1 or 2]), got %s", shape_str(*x.shape).c_str());
  const Dim& c = (*x.shape)[r - 1];
  if (c.known() && c.value != 1 && c.value != 2)
    return ctx.fail("DFT input's last dim must be 1 (real) or 2 (complex), got %lld", static_cast<long long>(c.value));
  std::optional<int64_t> axis;
  if (!axis_input)
    axis = ctx.attrs().get_int("axis", 1);
  else if (!ctx.has_input(2))
    axis = -2;
  else
    axis = const_scalar(ctx, 2);
  Shape s = *x.shape;
  s[r - 1] = Dim(inverse && onesided ? 1 : 2);
  if (!axis) {
    for (int64_t i = 0; i < r - 1; ++i) s[i] = Dim();
    y.shape = std::move(s);
    return Status::Ok();
  }
  int64_t a = *axis < 0 ? *axis + r : *axis;
  if (a < 0 || a > r - 2)
    return ctx.fail("DFT axis %lld is out of range for rank %lld (the last dim holds the complex parts)",
                    static_cast<long long>(*axis), static_cast<long long>(r));
  std::optional<int64_t> len;
  if (ctx.has_input(1)) {
    len = const_scalar(ctx, 1);
  } else if ((*x.shape)[a].known()) {
    const int64_t n = (*x.shape)[a].value;
    len = inverse && onesided ? 2 * (n - 1) : n;
  }
  if (len && *len <= 0) return ctx.fail("dft_length %lld must be positive", static_cast<long long>(*len));
  if (!len)
    s[a] = Dim();
  else
    s[a] = Dim(onesided && !inverse ? *len / 2 + 1 : *len);
  y.shape = std::move(s);
  return Status::Ok();
}

// STFT: signal [batch, length, 1 or 2] -> [batch, frames, bins, 2].
Status stft_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(check_float_input(ctx, 0));
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 1, "frame_step"));
  OPENACL_RETURN_IF_ERROR(ew::check_same_dtype(ctx, 0, 2));
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 3, "frame_length"));
  const bool onesided = ctx.attrs().get_int("onesided", 1) != 0;
  const TensorType& x = ctx.input(0);
  TensorType& y = ctx.output(0);
  y.dtype = x.dtype;
  Shape s{Dim(), Dim(), Dim(), Dim(2)};
  std::optional<int64_t> sig_len;
  if (x.has_rank()) {
    if (x.rank() != 3)
      return ctx.fail("STFT signal must be [batch, length, 1 or 2], got %s", shape_str(*x.shape).c_str());
    const Dim& c = (*x.shape)[2];
    if (c.known() && c.value != 1 && c.value != 2)
      return ctx.fail("STFT signal's last dim must be 1 or 2, got %lld", static_cast<long long>(c.value));
    s[0] = (*x.shape)[0];
    if ((*x.shape)[1].known()) sig_len = (*x.shape)[1].value;
  }
  std::optional<int64_t> win_len;
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.input(2);
    if (w.has_rank() && w.rank() != 1) return ctx.fail("window must be 1-D, got %s", shape_str(*w.shape).c_str());
    if (w.has_rank() && (*w.shape)[0].known()) win_len = (*w.shape)[0].value;
  }
  std::optional<int64_t> frame_len;
  if (ctx.has_input(3))
    frame_len = const_scalar(ctx, 3);
  else if (ctx.has_input(2))
    frame_len = win_len;
  else
    frame_len = sig_len;
  if (frame_len && win_len && *frame_len != *win_len)
    return ctx.fail("frame_length %lld differs from the window's length %lld", static_cast<long long>(*frame_len),
                    static_cast<long long>(*win_len));
  const std::optional<int64_t> step = const_scalar(ctx, 1);
  if (step && *step <= 0) return ctx.fail("frame_step %lld must be positive", static_cast<long long>(*step));
  if (frame_len && *frame_len <= 0)
    return ctx.fail("frame_length %lld must be positive", static_cast<long long>(*frame_len));
  if (frame_len) {
    if (sig_len && *frame_len > *sig_len)
      return ctx.fail("frame_length %lld is longer than the signal (%lld)", static_cast<long long>(*frame_len),
                      static_cast<long long>(*sig_len));
    s[2] = Dim(onesided ? *frame_len / 2 + 1 : *frame_len);
    if (sig_len && step) s[1] = Dim((*sig_len - *frame_len) / *step + 1);
  }
  y.shape = std::move(s);
  return Status::Ok();
}

Status output_datatype(const ShapeContext& ctx, DType* out) {
  const int64_t t = ctx.attrs().get_int("output_datatype", 1);
  const DType d = static_cast<DType>(t);
  if (t <= 0 || t > static_cast<int64_t>(DType::kBFloat16) || !(dtype_is_float(d) || dtype_is_integer(d)))
    return ctx.fail("output_datatype %lld is not a numeric element type", static_cast<long long>(t));
  *out = d;
  return Status::Ok();
}

// Hann/Hamming/BlackmanWindow: a 1-D window of `size` (scalar input 0).
Status window_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 0, "size"));
  TensorType& y = ctx.output(0);
  OPENACL_RETURN_IF_ERROR(output_datatype(ctx, &y.dtype));
  const std::optional<int64_t> n = const_scalar(ctx, 0);
  if (n && *n < 0) return ctx.fail("window size %lld is negative", static_cast<long long>(*n));
  y.shape = Shape{n ? Dim(*n) : Dim()};
  return Status::Ok();
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins].
Status mel_shape(ShapeContext& ctx) {
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 0, "num_mel_bins"));
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 1, "dft_length"));
  OPENACL_RETURN_IF_ERROR(check_int_scalar(ctx, 2, "sample_rate"));
  OPENACL_RETURN_IF_ERROR(check_float_input(ctx, 3));
  OPENACL_RETURN_IF_ERROR(check_float_input(ctx, 4));
  TensorType& y = ctx.output(0);
  OPENACL_RETURN_IF_ERROR(output_datatype(ctx, &y.dtype));
  const std::optional<int64_t> bins = const_scalar(ctx, 0), len = const_scalar(ctx, 1);
  if (bins && *bins <= 0) return ctx.fail("num_mel_bins %lld must be positive", static_cast<long long>(*bins));
  if (len && *len <= 0) return ctx.fail("dft_length %lld must be positive", static_cast<long long>(*len));
  y.shape = Shape{len ? Dim(*len / 2 + 1) : Dim(), bins ? Dim(*bins) : Dim()};
  return Status::Ok();
}

OPENACL_REGISTER_OP(DFT).inputs(1, 3).outputs(1, 1).since(17).shape(dft_shape);
OPENACL_REGISTER_OP(STFT).inputs(2, 4).outputs(1, 1).since(17).shape(stft_shape);
OPENACL_REGISTER_OP(HannWindow).inputs(1, 1).outputs(1, 1).since(17).shape(window_shape);
OPENACL_REGISTER_OP(HammingWindow).inputs(1, 1).outputs(1, 1).since(17).shape(window_shape);
OPENACL_REGISTER_OP(BlackmanWindow).inputs(1, 1).outputs(1, 1).since(17).shape(window_shape);
OPENACL_REGISTER_OP(MelWeightMatrix).inputs(5, 5).outputs(1, 1).since(17).shape(mel_shape);

}  // namespace
}  // namespace openacl::graph
