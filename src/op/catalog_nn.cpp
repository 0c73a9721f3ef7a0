// The neural-network and reduction part of the op catalogue: matrix products,
// convolution, pooling, reductions, arg-max / top-k and normalisations, with
// the Ascend input, output and attribute names (they mirror the TensorFlow ops
// of the same names), each built from the engine's ONNX ops.
//
// Conventions the entries share:
//  - data_format decides the layout of 4-D image tensors. The engine's
//    Conv / pooling / BatchNormalization kernels are channel-first, so an NHWC
//    op is Transpose -> op -> Transpose. When the caller did not set
//    data_format, an x described as NCHW or NHWC (aclTensorDesc format) says
//    which layout it is; otherwise the Ascend default applies.
//  - 4-entry window attributes (strides, ksize, dilations) are in data_format
//    order; pads are [top, bottom, left, right]. Bad lengths or values are
//    100023 with the attribute, the value and what is expected.
//  - Values the ONNX node needs at compile time (an arg-max dimension, a
//    convolution's channel count) come from attributes, constant inputs
//    (aclSetTensorConst) or known dims; when they are missing the entry says
//    which input must be constant.
//  - int64 results of ONNX ops (ArgMax, TopK indices) are cast to the index
//    type the Ascend op reports: its dtype / indices_dtype attribute when set,
//    else the output desc's int32 / int64, else the op's default.
//  - Reductions with an axes input follow CANN's noop_with_empty_axes
//    (default true: [] returns x); the D forms reduce every dim for [].
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "op/catalog.h"

namespace openacl::op {
namespace {

using graph::Value;
using Kind = AttrValue::Kind;

constexpr int kFormatHWCN = 16;  // aclFormat ACL_FORMAT_HWCN (TensorFlow filters)
constexpr int kAclInt32 = 3;     // aclDataType values for the dtype attributes
constexpr int kAclInt64 = 9;

// ---------------------------------------------------------------------------
// Small helpers

graph::AttributeMap amap(std::initializer_list<std::pair<const char*, graph::Attribute>> kv) {
  graph::AttributeMap m;
  for (const auto& [k, v] : kv) m.set(k, v);
  return m;
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

long long ll(int64_t v) { return static_cast<long long>(v); }

Value* transpose(BuildContext& c, Value* v, std::vector<int64_t> perm) {
  return c.add1("Transpose", {v}, amap({{"perm", onnx_ints(std::move(perm))}}));
}

Value* cast_to(BuildContext& c, Value* v, DType to) {
  return c.add1("Cast", {v}, amap({{"to", onnx_int(static_cast<int64_t>(to))}}));
}

// `v` (of element type `from`) as `to`; no node when they already agree.
Value* cast_if(BuildContext& c, Value* v, DType from, DType to) { return from == to ? v : cast_to(c, v, to); }

// The rank of input i; kernels of these ops need it when the graph is built
// (which dims to transpose, which axis is the channel).
Status known_rank(const BuildContext& c, size_t i, const char* name, int64_t* rank) {
  const TensorSpec& s = c.input_spec(i);
  if (s.unknown_rank())
    return c.unsupported("input %s has an unknown rank (dims [-2]); this op needs the rank when it is compiled: "
                         "describe %s with its rank (-1 for unknown dims)",
                         name, name);
  *rank = static_cast<int64_t>(s.dims.size());
  return Status::Ok();
}

// axis in [-rank, rank) -> [0, rank).
bool norm_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

// Constant integer data of input i (aclSetTensorConst), if any.
std::optional<std::vector<int64_t>> const_ints(const BuildContext& c, size_t i) {
  const TensorSpec& s = c.input_spec(i);
  if (!s.constant) return std::nullopt;
  return s.constant->to_int64();
}

// Index results: the attribute when the caller set it; else the output
// desc's dtype when it is an index type; else the op's default.
Status index_dtype(const BuildContext& c, const char* attr, size_t out_index, DType fallback, DType* out) {
  DType t = fallback;
  if (c.attr_set_by_caller(attr)) {
    t = c.get_dtype(attr);
  } else if (out_index < c.num_outputs()) {
    const DType want = c.output_spec(out_index).dtype;
    if (want == DType::kInt32 || want == DType::kInt64) t = want;
  }
  if (t != DType::kInt32 && t != DType::kInt64)
    return c.bad_attr("%s must be int32 (%d) or int64 (%d), got %s", attr, kAclInt32, kAclInt64, graph::dtype_name(t));
  *out = t;
  return Status::Ok();
}

// Optional bias added to `y` (broadcast on the last axis), cast to y's type.
Value* add_bias(BuildContext& c, Value* y, DType ydt, size_t bias_index) {
  Value* b = c.input(bias_index);
  if (!b) return y;
  return c.add1("Add", {y, cast_if(c, b, c.input_spec(bias_index).dtype, ydt)});
}

// Quantised weights (offset_w) would need int8 kernels with a weight offset.
Status reject_offset_w(const BuildContext& c, size_t i) {
  if (c.input(i))
    return c.unsupported("the offset_w input (int8 quantisation offset) is not supported; pass float weights "
                         "and omit offset_w");
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Layouts and window attributes

enum class Layout { kNCHW, kNHWC };

const char* layout_name(Layout l) { return l == Layout::kNCHW ? "NCHW" : "NHWC"; }

// data_format of a 4-D image op whose image is input `xi` (see the file
// comment for the desc fallback).
Status image_layout(const BuildContext& c, Layout* out, size_t xi = 0) {
  std::string f = c.get_string("data_format");
  if (!c.attr_set_by_caller("data_format")) {
    const int fmt = c.input_spec(xi).format;
    if (fmt == kFormatNCHW) f = "NCHW";
    if (fmt == kFormatNHWC) f = "NHWC";
  }
  if (f == "NCHW") *out = Layout::kNCHW;
  else if (f == "NHWC") *out = Layout::kNHWC;
  else return c.bad_attr("data_format \"%s\" is not supported: use \"NCHW\" or \"NHWC\"", f.c_str());
  return Status::Ok();
}

// The image input must be 4-D when its rank is known.
Status check_image_rank(const BuildContext& c, Layout l, size_t xi = 0) {
  const TensorSpec& s = c.input_spec(xi);
  if (!s.unknown_rank() && s.dims.size() != 4)
    return c.bad_input("x must be 4-D (%s), got %s", layout_name(l), s.str().c_str());
  return Status::Ok();
}

Value* to_nchw(BuildContext& c, Value* x, Layout l) { return l == Layout::kNHWC ? transpose(c, x, {0, 3, 1, 2}) : x; }
Value* from_nchw(BuildContext& c, Value* y, Layout l) { return l == Layout::kNHWC ? transpose(c, y, {0, 2, 3, 1}) : y; }

// A 4-entry attribute in data_format order -> its {H, W} entries, each >= min;
// the N and C entries must be 1 (windows never span batch or channels).
Status hw_of(const BuildContext& c, const char* name, Layout l, int64_t min, std::array<int64_t, 2>* out) {
  const std::vector<int64_t> v = c.get_ints(name);
  const char* order = l == Layout::kNCHW ? "[N, C, H, W]" : "[N, H, W, C]";
  if (v.size() != 4)
    return c.bad_attr("%s must have 4 entries in data_format order %s, got %zu: %s", name, order, v.size(),
                      ints_str(v).c_str());
  const size_t n = 0, ch = l == Layout::kNCHW ? 1 : 3, h = l == Layout::kNCHW ? 2 : 1, w = h + 1;
  if (v[n] != 1 || v[ch] != 1)
    return c.bad_attr("%s %s: the N and C entries (order %s) must be 1", name, ints_str(v).c_str(), order);
  if (v[h] < min || v[w] < min)
    return c.bad_attr("%s %s: the H and W entries must be >= %lld", name, ints_str(v).c_str(), ll(min));
  *out = {v[h], v[w]};
  return Status::Ok();
}

// Ascend pads [top, bottom, left, right] -> ONNX [top, left, bottom, right].
Status onnx_pads(const BuildContext& c, const char* name, std::vector<int64_t>* out) {
  const std::vector<int64_t> p = c.get_ints(name);
  if (p.size() != 4)
    return c.bad_attr("%s must have 4 entries [top, bottom, left, right], got %zu: %s", name, p.size(),
                      ints_str(p).c_str());
  for (int64_t v : p)
    if (v < 0) return c.bad_attr("%s %s: padding must be >= 0", name, ints_str(p).c_str());
  *out = {p[0], p[2], p[1], p[3]};
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Matrix products

// y = op(x1) @ op(x2) (+ bias): op transposes the last two dims when asked.
// `batched`: x1/x2 may have batch dims (broadcast as numpy does); else 2-D.
Status build_matmul(BuildContext& c, const char* t1_attr, const char* t2_attr, bool batched, int bias_index,
                    int offset_w_index) {
  if (offset_w_index >= 0) OPENACL_RETURN_IF_ERROR(reject_offset_w(c, static_cast<size_t>(offset_w_index)));
  Value* xs[2] = {c.input(0), c.input(1)};
  const bool trans[2] = {c.get_bool(t1_attr), c.get_bool(t2_attr)};
  const char* names[2] = {"x1", "x2"};
  for (size_t i = 0; i < 2; ++i) {
    int64_t r = 0;
    OPENACL_RETURN_IF_ERROR(known_rank(c, i, names[i], &r));
    if (!batched && r != 2)
      return c.bad_input("%s must be 2-D, got %s (use BatchMatMulV2 for batches)", names[i],
                         c.input_spec(i).str().c_str());
    if (batched && r < 2) return c.bad_input("%s must have rank >= 2, got %s", names[i], c.input_spec(i).str().c_str());
    if (trans[i]) {
      std::vector<int64_t> perm(static_cast<size_t>(r));
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      xs[i] = transpose(c, xs[i], std::move(perm));
    }
  }
  if (c.input_spec(0).dtype != c.input_spec(1).dtype)
    return c.bad_input("x1 (%s) and x2 (%s) must have the same dtype", graph::dtype_name(c.input_spec(0).dtype),
                       graph::dtype_name(c.input_spec(1).dtype));
  Value* y = c.add1("MatMul", {xs[0], xs[1]});
  if (bias_index >= 0) y = add_bias(c, y, c.input_spec(0).dtype, static_cast<size_t>(bias_index));
  c.set_output(0, y);
  return Status::Ok();
}

const std::vector<DType>& matmul_types() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16, DType::kInt32};
  return t;
}

// ---------------------------------------------------------------------------
// Convolution

// The filter as ONNX OIHW. Its layout comes from its desc format (NCHW, NHWC,
// HWCN); an ND filter follows data_format ([Cout, Cin/g, kH, kW] for NCHW,
// [Cout, kH, kW, Cin/g] for NHWC).
Value* filter_oihw(BuildContext& c, Layout l, size_t wi = 1) {
  Value* w = c.input(wi);
  const int fmt = c.input_spec(wi).format;
  if (fmt == kFormatHWCN) return transpose(c, w, {3, 2, 0, 1});
  if (fmt == kFormatNHWC || (fmt != kFormatNCHW && l == Layout::kNHWC)) return transpose(c, w, {0, 3, 1, 2});
  return w;
}

struct ConvGeom {
  Layout layout = Layout::kNHWC;
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1};
  std::vector<int64_t> pads;  // ONNX order
};

Status conv_geom(const BuildContext& c, ConvGeom* g, size_t xi = 0) {
  OPENACL_RETURN_IF_ERROR(image_layout(c, &g->layout, xi));
  OPENACL_RETURN_IF_ERROR(check_image_rank(c, g->layout, xi));
  OPENACL_RETURN_IF_ERROR(hw_of(c, "strides", g->layout, 1, &g->strides));
  OPENACL_RETURN_IF_ERROR(hw_of(c, "dilations", g->layout, 1, &g->dilations));
  return onnx_pads(c, "pads", &g->pads);
}

Value* conv_node(BuildContext& c, const ConvGeom& g, Value* x_nchw, Value* w_oihw, int64_t group) {
  std::vector<Value*> ins = {x_nchw, w_oihw};
  if (Value* b = c.input(2)) ins.push_back(cast_if(c, b, c.input_spec(2).dtype, c.input_spec(0).dtype));
  return c.add1("Conv", std::move(ins),
                amap({{"strides", onnx_ints({g.strides[0], g.strides[1]})},
                      {"dilations", onnx_ints({g.dilations[0], g.dilations[1]})},
                      {"pads", onnx_ints(g.pads)},
                      {"group", onnx_int(group)}}));
}

Status build_conv2d(BuildContext& c) {
  OPENACL_RETURN_IF_ERROR(reject_offset_w(c, 3));
  ConvGeom g;
  OPENACL_RETURN_IF_ERROR(conv_geom(c, &g));
  const int64_t groups = c.get_int("groups");
  if (groups < 1) return c.bad_attr("groups must be >= 1, got %lld", ll(groups));
  Value* y = conv_node(c, g, to_nchw(c, c.input(0), g.layout), filter_oihw(c, g.layout), groups);
  c.set_output(0, from_nchw(c, y, g.layout));
  return Status::Ok();
}

// DepthwiseConv2D: filter [kH, kW, C, K] (TensorFlow's layout; ND or HWCN),
// output channel c*K + k. As ONNX: group = C, W = [C*K, 1, kH, kW].
Status build_depthwise(BuildContext& c) {
  OPENACL_RETURN_IF_ERROR(reject_offset_w(c, 3));
  ConvGeom g;
  OPENACL_RETURN_IF_ERROR(conv_geom(c, &g));
  const TensorSpec& fs = c.input_spec(1);
  if (fs.format != kFormatND && fs.format != kFormatHWCN && fs.format != kFormatUndefined)
    return c.unsupported("filter format %d: DepthwiseConv2D takes its filter as [kH, kW, C, K] (ND or HWCN)",
                         fs.format);
  if (!fs.unknown_rank() && fs.dims.size() != 4)
    return c.bad_input("filter must be 4-D [kH, kW, C, K], got %s", fs.str().c_str());
  int64_t channels = fs.unknown_rank() ? -1 : fs.dims[2];
  const TensorSpec& xs = c.input_spec(0);
  if (channels < 0 && !xs.unknown_rank()) channels = xs.dims[g.layout == Layout::kNCHW ? 1 : 3];
  if (channels < 0)
    return c.unsupported("the channel count is unknown (x and filter have -1 there); DepthwiseConv2D needs it "
                         "when it is compiled");
  Value* w = transpose(c, c.input(1), {2, 3, 0, 1});                  // [C, K, kH, kW]
  w = c.add1("Reshape", {w, c.const_i64({-1, 1, 0, 0})});            // [C*K, 1, kH, kW]
  Value* y = conv_node(c, g, to_nchw(c, c.input(0), g.layout), w, channels);
  c.set_output(0, from_nchw(c, y, g.layout));
  return Status::Ok();
}

// Conv2DTranspose: the gradient of Conv2D with respect to its input, whose
// shape input_size gives. The filter is the forward convolution's ([x's
// channels, y's channels / groups, kH, kW] as NCHW), which is ONNX
// ConvTranspose's W. ONNX derives the output size from pads and
// output_padding, so input_size must be constant and fixes output_padding.
Status build_conv2d_transpose(BuildContext& c) {
  OPENACL_RETURN_IF_ERROR(reject_offset_w(c, 4));
  // The op's first input is input_size, so the catalogue's dtype list (which
  // checks input 0) cannot say this.
  const DType xt = c.input_spec(1).dtype;
  if (xt != DType::kFloat32 && xt != DType::kFloat16)
    return c.unsupported("x has dtype %s; Conv2DTranspose takes float32 or float16", graph::dtype_name(xt));
  const DType st = c.input_spec(0).dtype;
  if (st != DType::kInt32 && st != DType::kInt64)
    return c.bad_input("input_size must be int32 or int64, got %s", graph::dtype_name(st));
  ConvGeom g;
  OPENACL_RETURN_IF_ERROR(conv_geom(c, &g, 1));
  const int64_t groups = c.get_int("groups");
  if (groups < 1) return c.bad_attr("groups must be >= 1, got %lld", ll(groups));
  const std::vector<int64_t> op = c.get_ints("output_padding");
  if (op.size() != 4)
    return c.bad_attr("output_padding must have 4 entries in data_format order, got %zu: %s", op.size(),
                      ints_str(op).c_str());
  const auto size = const_ints(c, 0);
  if (!size)
    return c.unsupported("input_size must be a constant (aclSetTensorConst / acl.set_tensor_const): the output "
                         "shape is fixed when the op is compiled");
  if (size->size() != 4)
    return c.bad_input("input_size must hold 4 values (the output shape in data_format order), got %s",
                       ints_str(*size).c_str());
  const TensorSpec& xs = c.input_spec(1);
  const TensorSpec& ws = c.input_spec(2);
  if (xs.unknown_rank() || ws.unknown_rank() || ws.dims.size() != 4)
    return c.unsupported("x and filter need known 4-D shapes to relate input_size to the pads");
  const size_t hi = g.layout == Layout::kNCHW ? 2 : 1;
  // kH, kW by the filter's layout (see filter_oihw).
  const int fmt = ws.format;
  std::array<int64_t, 2> k{};
  if (fmt == kFormatHWCN) k = {ws.dims[0], ws.dims[1]};
  else if (fmt == kFormatNHWC || (fmt != kFormatNCHW && g.layout == Layout::kNHWC)) k = {ws.dims[1], ws.dims[2]};
  else k = {ws.dims[2], ws.dims[3]};
  std::vector<int64_t> out_pad(2);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = xs.dims[hi + i], want = (*size)[hi + i];
    if (in < 0 || k[i] < 0)
      return c.unsupported("x's and filter's H and W must be known to relate input_size to the pads");
    const int64_t base = g.strides[i] * (in - 1) + g.dilations[i] * (k[i] - 1) + 1 - g.pads[i] - g.pads[i + 2];
    out_pad[i] = want - base;
    if (out_pad[i] < 0 || out_pad[i] >= std::max(g.strides[i], g.dilations[i]))
      return c.bad_input("input_size %s does not fit x %s with this filter, strides, pads and dilations: %s %lld "
                         "is out of reach (from %lld to %lld)",
                         ints_str(*size).c_str(), xs.str().c_str(), i ? "W" : "H", ll(want), ll(base),
                         ll(base + std::max(g.strides[i], g.dilations[i]) - 1));
  }
  std::vector<Value*> ins = {to_nchw(c, c.input(1), g.layout), filter_oihw(c, g.layout, 2)};
  if (Value* b = c.input(3)) ins.push_back(cast_if(c, b, c.input_spec(3).dtype, xs.dtype));
  Value* y = c.add1("ConvTranspose", std::move(ins),
                    amap({{"strides", onnx_ints({g.strides[0], g.strides[1]})},
                          {"dilations", onnx_ints({g.dilations[0], g.dilations[1]})},
                          {"pads", onnx_ints(g.pads)},
                          {"output_padding", onnx_ints(out_pad)},
                          {"group", onnx_int(groups)}}));
  c.set_output(0, from_nchw(c, y, g.layout));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Pooling

struct PoolGeom {
  Layout layout = Layout::kNCHW;
  std::array<int64_t, 2> k{1, 1}, s{1, 1};
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> pads{0, 0, 0, 0};
  bool ceil_mode = false;
  bool global = false;
};

// MaxPool / AvgPool: padding "SAME" / "VALID".
Status pool_geom_v1(const BuildContext& c, PoolGeom* g) {
  OPENACL_RETURN_IF_ERROR(image_layout(c, &g->layout));
  OPENACL_RETURN_IF_ERROR(check_image_rank(c, g->layout));
  OPENACL_RETURN_IF_ERROR(hw_of(c, "ksize", g->layout, 1, &g->k));
  OPENACL_RETURN_IF_ERROR(hw_of(c, "strides", g->layout, 1, &g->s));
  const std::string p = c.get_string("padding");
  // TensorFlow's SAME puts the odd pad at the end: ONNX SAME_UPPER.
  if (p == "SAME") g->auto_pad = "SAME_UPPER";
  else if (p == "VALID") g->auto_pad = "VALID";
  else return c.bad_attr("padding \"%s\" is not supported: use \"SAME\" or \"VALID\"", p.c_str());
  return Status::Ok();
}

// MaxPoolV3 / AvgPoolV2: padding_mode CALCULATED (explicit pads) / SAME /
// VALID, global_pooling, ceil_mode.
Status pool_geom_v2(const BuildContext& c, PoolGeom* g) {
  OPENACL_RETURN_IF_ERROR(image_layout(c, &g->layout));
  OPENACL_RETURN_IF_ERROR(check_image_rank(c, g->layout));
  g->global = c.get_bool("global_pooling");
  if (g->global) return Status::Ok();  // ksize, strides and pads are ignored
  OPENACL_RETURN_IF_ERROR(hw_of(c, "ksize", g->layout, 1, &g->k));
  OPENACL_RETURN_IF_ERROR(hw_of(c, "strides", g->layout, 1, &g->s));
  g->ceil_mode = c.get_bool("ceil_mode");
  const std::string mode = c.get_string("padding_mode");
  if (mode == "CALCULATED" || mode == "CALCULATE") {
    OPENACL_RETURN_IF_ERROR(onnx_pads(c, "pads", &g->pads));
    // A pad as large as the window would make windows of padding only.
    for (size_t i = 0; i < 4; ++i)
      if (g->pads[i] >= g->k[i % 2])
        return c.bad_attr("pads %s: each pad must be smaller than the window (ksize H %lld, W %lld)",
                          ints_str(c.get_ints("pads")).c_str(), ll(g->k[0]), ll(g->k[1]));
    return Status::Ok();
  }
  if (mode == "SAME") g->auto_pad = "SAME_UPPER";
  else if (mode == "VALID") g->auto_pad = "VALID";
  else return c.bad_attr("padding_mode \"%s\" is not supported: use \"CALCULATED\", \"SAME\" or \"VALID\"", mode.c_str());
  if (g->ceil_mode) return c.bad_attr("ceil_mode=true needs padding_mode \"CALCULATED\" (got \"%s\")", mode.c_str());
  return Status::Ok();
}

// ONNX `onnx_op` on x with the window of g (global windows reduce H, W).
Value* pool_node(BuildContext& c, const PoolGeom& g, const char* onnx_op, bool count_include_pad) {
  Value* x = c.input(0);
  const bool is_max = std::string(onnx_op) == "MaxPool";
  if (g.global) {
    // A reduction over H and W works in either layout without transposes.
    const std::vector<int64_t> axes = g.layout == Layout::kNCHW ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 2};
    return c.add1(is_max ? "ReduceMax" : "ReduceMean", {x, c.const_i64(axes)}, amap({{"keepdims", onnx_int(1)}}));
  }
  graph::AttributeMap a = amap({{"kernel_shape", onnx_ints({g.k[0], g.k[1]})},
                                {"strides", onnx_ints({g.s[0], g.s[1]})},
                                {"ceil_mode", onnx_int(g.ceil_mode ? 1 : 0)}});
  if (g.auto_pad != "NOTSET") a.set("auto_pad", onnx_string(g.auto_pad));
  else a.set("pads", onnx_ints(g.pads));
  if (!is_max) a.set("count_include_pad", onnx_int(count_include_pad ? 1 : 0));
  return from_nchw(c, c.add1(onnx_op, {to_nchw(c, x, g.layout)}, std::move(a)), g.layout);
}

const std::vector<DType>& max_pool_types() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kUInt8};
  return t;
}

// ---------------------------------------------------------------------------
// Reductions

// Normalises constant axes against x's rank: in range, no repeats. `name`:
// the attribute or input that holds them.
Status check_axes(const BuildContext& c, const std::vector<int64_t>& axes, bool from_attr, const char* name = "axes") {
  const TensorSpec& xs = c.input_spec(0);
  if (xs.unknown_rank()) return Status::Ok();
  const int64_t r = static_cast<int64_t>(xs.dims.size());
  std::vector<int64_t> seen;
  for (int64_t a : axes) {
    int64_t n = 0;
    // A scalar has one reducible "axis" in TensorFlow's convention (0 / -1).
    const bool ok = r == 0 ? (a == 0 || a == -1) : norm_axis(a, r, &n);
    if (!ok || std::find(seen.begin(), seen.end(), n) != seen.end()) {
      const char* why = ok ? "repeats an axis" : "is out of range";
      if (from_attr)
        return c.bad_attr("%s %s %s for x %s (valid: [%lld, %lld])", name, ints_str(axes).c_str(), why,
                          xs.str().c_str(), ll(-std::max<int64_t>(r, 1)), ll(std::max<int64_t>(r, 1) - 1));
      return c.bad_input("%s %s %s for x %s (valid: [%lld, %lld])", name, ints_str(axes).c_str(), why,
                         xs.str().c_str(), ll(-std::max<int64_t>(r, 1)), ll(std::max<int64_t>(r, 1) - 1));
    }
    seen.push_back(n);
  }
  return Status::Ok();
}

// ReduceX (axes input, keep_dims, noop_with_empty_axes) and ReduceXD (axes
// attribute). Empty axes: the D forms reduce every dim; the input forms follow
// noop_with_empty_axes (CANN's default true: the input is returned as is).
Status build_reduce(BuildContext& c, const char* onnx_op, bool axes_attr) {
  Value* x = c.input(0);
  const int64_t keep = c.get_bool("keep_dims") ? 1 : 0;
  const TensorSpec& xs = c.input_spec(0);
  // ONNX reduces a scalar to itself; TensorFlow allows axis 0 / -1 there.
  const bool scalar = !xs.unknown_rank() && xs.dims.empty();
  std::optional<std::vector<int64_t>> axes;
  if (axes_attr) {
    axes = c.get_ints("axes");
    OPENACL_RETURN_IF_ERROR(check_axes(c, *axes, true));
    if (axes->empty() || scalar) {  // every dim
      c.set_output(0, c.add1(onnx_op, {x}, amap({{"keepdims", onnx_int(keep)}})));
      return Status::Ok();
    }
    c.set_output(0, c.add1(onnx_op, {x, c.const_i64(*axes)}, amap({{"keepdims", onnx_int(keep)}})));
    return Status::Ok();
  }
  const bool noop = c.get_bool("noop_with_empty_axes");
  axes = const_ints(c, 1);
  // An axes tensor of 0 elements is empty whatever its buffer holds (and
  // aclSetTensorConst refuses 0 bytes, so this is how callers pass []).
  if (!axes && c.input_spec(1).elements() == 0) axes = std::vector<int64_t>{};
  if (axes) {
    OPENACL_RETURN_IF_ERROR(check_axes(c, *axes, false));
    if (axes->empty() && noop) {
      c.set_output(0, c.add1("Identity", {x}));
      return Status::Ok();
    }
    if (axes->empty() || scalar) {
      c.set_output(0, c.add1(onnx_op, {x}, amap({{"keepdims", onnx_int(keep)}})));
      return Status::Ok();
    }
    c.set_output(0, c.add1(onnx_op, {x, c.const_i64(*axes)}, amap({{"keepdims", onnx_int(keep)}})));
    return Status::Ok();
  }
  // Axes known only when the op runs: int64, 1-D for ONNX.
  const DType at = c.input_spec(1).dtype;
  if (at != DType::kInt32 && at != DType::kInt64)
    return c.bad_input("axes must be int32 or int64, got %s", graph::dtype_name(at));
  Value* a = c.add1("Reshape", {cast_if(c, c.input(1), at, DType::kInt64), c.const_i64({-1})});
  c.set_output(0, c.add1(onnx_op, {x, a},
                         amap({{"keepdims", onnx_int(keep)}, {"noop_with_empty_axes", onnx_int(noop ? 1 : 0)}})));
  return Status::Ok();
}

const std::vector<DType>& reduce_types() { return numeric_types(); }
const std::vector<DType>& bool_types() {
  static const std::vector<DType> t = {DType::kBool};
  return t;
}

// aclopInferShape bounds for the input forms: with constant axes the shape
// is exact; with axes known only at run time each dim is either kept or
// reduced, so with keep_dims it lies in [min(1, d), d] and without it even
// the rank is open.
Status reduce_bounds(const std::vector<TensorSpec>& in, const OpAttrs& attrs, std::vector<TensorSpec>* out) {
  if (in.size() < 2 || out->empty()) return Status::Ok();
  const TensorSpec& x = in[0];
  TensorSpec& y = (*out)[0];
  y.dtype = x.dtype;
  if (x.unknown_rank()) {
    y.dims = {-2};
    y.range.clear();
    return Status::Ok();
  }
  const auto it = attrs.find("keep_dims");
  const bool keep = it != attrs.end() && it->second.i != 0;
  const auto nit = attrs.find("noop_with_empty_axes");
  const bool noop = nit == attrs.end() || nit->second.i != 0;
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::optional<std::vector<int64_t>> axes;
  if (in[1].constant) axes = in[1].constant->to_int64();
  else if (in[1].elements() == 0) axes = std::vector<int64_t>{};
  y.range.clear();
  if (axes) {
    std::vector<bool> reduced(static_cast<size_t>(r), axes->empty() && !noop);
    for (int64_t a : *axes) {
      int64_t n = 0;
      if (norm_axis(a, r, &n)) reduced[static_cast<size_t>(n)] = true;
    }
    y.dims.clear();
    for (int64_t i = 0; i < r; ++i) {
      if (!reduced[static_cast<size_t>(i)]) y.dims.push_back(x.dims[static_cast<size_t>(i)]);
      else if (keep) y.dims.push_back(1);
    }
    bool open = false;
    for (int64_t d : y.dims) open = open || d < 0;
    if (open)
      for (int64_t d : y.dims) y.range.push_back(d < 0 ? std::pair<int64_t, int64_t>{0, -1} : std::pair{d, d});
    return Status::Ok();
  }
  if (!keep) {
    y.dims = {-2};
    return Status::Ok();
  }
  y.dims.assign(static_cast<size_t>(r), -1);
  for (int64_t d : x.dims) y.range.push_back({d < 0 ? 0 : std::min<int64_t>(1, d), d});
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Arg-max / arg-min / top-k

// The reduced dimension: attribute `dimension` (D forms) or constant input 1.
Status arg_dimension(const BuildContext& c, bool from_attr, int64_t* dim) {
  int64_t d = 0;
  if (from_attr) {
    d = c.get_int("dimension");
  } else {
    const auto v = const_ints(c, 1);
    if (!v)
      return c.unsupported("the dimension input must be a constant (aclSetTensorConst / acl.set_tensor_const): "
                           "the axis is fixed when the op is compiled");
    if (v->size() != 1) return c.bad_input("dimension must hold one value, got %s", ints_str(*v).c_str());
    d = (*v)[0];
  }
  int64_t r = 0;
  OPENACL_RETURN_IF_ERROR(known_rank(c, 0, "x", &r));
  if (r == 0) return c.bad_input("x must have rank >= 1, got a scalar");
  if (!norm_axis(d, r, dim)) {
    if (from_attr)
      return c.bad_attr("dimension %lld is out of range for x %s (valid: [%lld, %lld])", ll(d),
                        c.input_spec(0).str().c_str(), ll(-r), ll(r - 1));
    return c.bad_input("dimension %lld is out of range for x %s (valid: [%lld, %lld])", ll(d),
                       c.input_spec(0).str().c_str(), ll(-r), ll(r - 1));
  }
  return Status::Ok();
}

// ArgMaxV2 / ArgMaxD / ArgMin / ArgMinD: indices along one dimension, which
// the output drops; dtype picks int32 / int64.
Status build_arg(BuildContext& c, const char* onnx_op, bool dim_attr, DType default_dtype) {
  int64_t axis = 0;
  OPENACL_RETURN_IF_ERROR(arg_dimension(c, dim_attr, &axis));
  DType out = default_dtype;
  OPENACL_RETURN_IF_ERROR(index_dtype(c, "dtype", 0, default_dtype, &out));
  Value* i = c.add1(onnx_op, {c.input(0)}, amap({{"axis", onnx_int(axis)}, {"keepdims", onnx_int(0)}}));
  c.set_output(0, cast_if(c, i, DType::kInt64, out));
  return Status::Ok();
}

// ArgMaxWithValue / ArgMinWithValue: (indice int32, values).
Status build_arg_with_value(BuildContext& c, bool is_max) {
  int64_t axis = 0;
  OPENACL_RETURN_IF_ERROR(arg_dimension(c, true, &axis));
  const int64_t keep = c.get_bool("keep_dims") ? 1 : 0;
  Value* i = c.add1(is_max ? "ArgMax" : "ArgMin", {c.input(0)},
                    amap({{"axis", onnx_int(axis)}, {"keepdims", onnx_int(keep)}}));
  c.set_output(0, cast_to(c, i, DType::kInt32));
  c.set_output(1, c.add1(is_max ? "ReduceMax" : "ReduceMin", {c.input(0), c.const_i64({axis})},
                         amap({{"keepdims", onnx_int(keep)}})));
  return Status::Ok();
}

// TopK / TopKV2: the k largest (or smallest) along `dim`; values, indices.
Status build_topk(BuildContext& c, bool v2) {
  int64_t r = 0;
  OPENACL_RETURN_IF_ERROR(known_rank(c, 0, "x", &r));
  if (r == 0) return c.bad_input("x must have rank >= 1, got a scalar");
  const int64_t dim_attr = c.get_int("dim");
  int64_t axis = 0;
  if (!norm_axis(dim_attr, r, &axis))
    return c.bad_attr("dim %lld is out of range for x %s (valid: [%lld, %lld])", ll(dim_attr),
                      c.input_spec(0).str().c_str(), ll(-r), ll(r - 1));
  Value* k = nullptr;
  if (const auto kv = const_ints(c, 1)) {
    if (kv->size() != 1) return c.bad_input("k must hold one value, got %s", ints_str(*kv).c_str());
    const int64_t kval = (*kv)[0];
    const int64_t n = c.input_spec(0).dims[static_cast<size_t>(axis)];
    if (kval < 0 || (n >= 0 && kval > n))
      return c.bad_input("k = %lld is out of range: x %s has %lld elements along dim %lld", ll(kval),
                         c.input_spec(0).str().c_str(), ll(n), ll(axis));
    k = c.const_i64({kval});
  } else {
    const DType kt = c.input_spec(1).dtype;
    if (kt != DType::kInt32 && kt != DType::kInt64)
      return c.bad_input("k must be int32 or int64, got %s", graph::dtype_name(kt));
    k = c.add1("Reshape", {cast_if(c, c.input(1), kt, DType::kInt64), c.const_i64({1})});
  }
  DType idx = DType::kInt32;
  if (v2) {
    const int64_t want = c.get_int("indices_dtype");
    if (want != kAclInt32 && want != kAclInt64)
      return c.bad_attr("indices_dtype must be %d (int32) or %d (int64), got %lld", kAclInt32, kAclInt64, ll(want));
    idx = want == kAclInt64 ? DType::kInt64 : DType::kInt32;
  }
  // The engine's TopK always sorts, which sorted=false allows.
  auto outs = c.add("TopK", {c.input(0), k},
                    amap({{"axis", onnx_int(axis)},
                          {"largest", onnx_int(c.get_bool("largest") ? 1 : 0)},
                          {"sorted", onnx_int(1)}}),
                    2);
  c.set_output(0, outs[0]);
  c.set_output(1, cast_if(c, outs[1], DType::kInt64, idx));
  return Status::Ok();
}

// aclopInferShape bounds for TopK / TopKV2: k (when not constant) decides
// the size along dim, at most x's size there.
Status topk_bounds(const std::vector<TensorSpec>& in, const OpAttrs& attrs, std::vector<TensorSpec>* out, bool v2) {
  if (in.size() < 2 || out->size() < 2) return Status::Ok();
  const TensorSpec& x = in[0];
  DType idx = DType::kInt32;
  if (v2) {
    const auto it = attrs.find("indices_dtype");
    if (it != attrs.end() && it->second.i == kAclInt64) idx = DType::kInt64;
  }
  (*out)[0].dtype = x.dtype;
  (*out)[1].dtype = idx;
  if (x.unknown_rank() || x.dims.empty()) {
    for (TensorSpec& o : *out) o.dims = x.dims, o.range.clear();
    return Status::Ok();
  }
  const auto dit = attrs.find("dim");
  const int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t axis = r - 1;
  if (dit != attrs.end() && !norm_axis(dit->second.i, r, &axis)) return Status::Ok();  // build() reports it
  std::vector<int64_t> dims = x.dims;
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  std::optional<std::vector<int64_t>> k;
  if (in[1].constant) k = in[1].constant->to_int64();
  dims[static_cast<size_t>(axis)] = k && k->size() == 1 ? (*k)[0] : -1;
  std::vector<std::pair<int64_t, int64_t>> range;
  bool open = false;
  for (int64_t d : dims) open = open || d < 0;
  if (open)
    for (size_t i = 0; i < dims.size(); ++i)
      range.push_back(dims[i] >= 0 ? std::pair{dims[i], dims[i]}
                                   : std::pair<int64_t, int64_t>{0, i == static_cast<size_t>(axis) ? n : -1});
  for (size_t o = 0; o < 2; ++o) (*out)[o].dims = dims, (*out)[o].range = range;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Normalisation

// LayerNorm: x normalised over dims [begin_norm_axis, rank); gamma and beta
// cover dims [begin_params_axis, rank). Outputs y, mean and variance (the
// statistics keep the normalised dims as 1s). ONNX LayerNormalization gives
// Mean and InvStdDev (float32): variance = 1 / InvStdDev^2 - epsilon.
Status build_layer_norm(BuildContext& c) {
  int64_t r = 0;
  OPENACL_RETURN_IF_ERROR(known_rank(c, 0, "x", &r));
  if (r == 0) return c.bad_input("x must have rank >= 1, got a scalar");
  int64_t na = 0, pa = 0;
  const int64_t bna = c.get_int("begin_norm_axis"), bpa = c.get_int("begin_params_axis");
  if (!norm_axis(bna, r, &na))
    return c.bad_attr("begin_norm_axis %lld is out of range for x %s (valid: [%lld, %lld])", ll(bna),
                      c.input_spec(0).str().c_str(), ll(-r), ll(r - 1));
  if (!norm_axis(bpa, r, &pa))
    return c.bad_attr("begin_params_axis %lld is out of range for x %s (valid: [%lld, %lld])", ll(bpa),
                      c.input_spec(0).str().c_str(), ll(-r), ll(r - 1));
  const float eps = c.get_float("epsilon");
  if (!(eps >= 0)) return c.bad_attr("epsilon must be >= 0, got %g", static_cast<double>(eps));
  const DType xt = c.input_spec(0).dtype;
  Value* gamma = cast_if(c, c.input(1), c.input_spec(1).dtype, xt);
  Value* beta = cast_if(c, c.input(2), c.input_spec(2).dtype, xt);
  const graph::AttributeMap a = amap({{"axis", onnx_int(na)}, {"epsilon", onnx_float(eps)}, {"stash_type", onnx_int(1)}});
  std::vector<Value*> outs;
  if (pa >= na) {
    // gamma/beta lie inside the normalised dims: the kernel broadcasts them.
    outs = c.add("LayerNormalization", {c.input(0), gamma, beta}, a, 3);
  } else {
    // gamma/beta also vary over leading dims: normalise with scale 1, then
    // scale and shift with broadcasting.
    outs = c.add("LayerNormalization", {c.input(0), c.const_scalar(xt, 1.0)}, a, 3);
    outs[0] = c.add1("Add", {c.add1("Mul", {outs[0], gamma}), beta});
  }
  c.set_output(0, outs[0]);
  c.set_output(1, cast_if(c, outs[1], DType::kFloat32, xt));
  Value* inv2 = c.add1("Mul", {outs[2], outs[2]});
  Value* var = c.add1("Sub", {c.add1("Reciprocal", {inv2}), c.const_scalar(DType::kFloat32, eps)});
  // Rounding can leave a tiny negative value where the variance is 0.
  c.set_output(2, cast_if(c, c.add1("Relu", {var}), DType::kFloat32, xt));
  return Status::Ok();
}

// BatchNorm: per channel y = (x - mean) / sqrt(variance + epsilon) * scale +
// offset, on [N, C, ...] (NCHW, NCDHW) or [N, ..., C] (NHWC, NDHWC).
//  - inference (is_training=false): the mean / variance inputs; outputs 1..4
//    repeat them (what CANN reports then).
//  - training: the batch's mean and (biased) variance normalise x;
//    batch_mean / batch_variance are the moving statistics updated with
//    exponential_avg_factor f: (1 - f) * old + f * batch, the batch variance
//    with Bessel's correction, old mean 0 and old variance 1 when the inputs
//    are omitted; reserve_space_1 is the batch mean and reserve_space_2 the
//    saved 1 / sqrt(epsilon + variance).
// reserve_space_3 is one unused element (TensorFlow compatibility).
Status build_batch_norm(BuildContext& c) {
  const bool training = c.get_bool("is_training");
  if (!training && (!c.input(3) || !c.input(4)))
    return c.bad_input("inference (is_training=false) needs the mean and variance inputs");
  std::string f = c.get_string("data_format");
  if (!c.attr_set_by_caller("data_format")) {
    if (c.input_spec(0).format == kFormatNCHW) f = "NCHW";
    if (c.input_spec(0).format == kFormatNHWC) f = "NHWC";
  }
  bool channel_last = false;
  if (f == "NHWC" || f == "NDHWC") channel_last = true;
  else if (f != "NCHW" && f != "NCDHW")
    return c.bad_attr("data_format \"%s\" is not supported: use \"NHWC\", \"NCHW\", \"NDHWC\" or \"NCDHW\"", f.c_str());
  int64_t r = 0;
  OPENACL_RETURN_IF_ERROR(known_rank(c, 0, "x", &r));
  if (r < 2) return c.bad_input("x must have rank >= 2 ([N, ..., C] or [N, C, ...]), got %s", c.input_spec(0).str().c_str());
  const float eps = c.get_float("epsilon");
  if (!(eps >= 0)) return c.bad_attr("epsilon must be >= 0, got %g", static_cast<double>(eps));
  const float factor = c.get_float("exponential_avg_factor");
  if (!(factor >= 0 && factor <= 1))
    return c.bad_attr("exponential_avg_factor must be in [0, 1], got %g", static_cast<double>(factor));
  Value* x = c.input(0);
  std::vector<int64_t> to_cf(static_cast<size_t>(r)), from_cf(static_cast<size_t>(r));
  if (channel_last) {
    // [N, D..., C] -> [N, C, D...] and back.
    to_cf[0] = 0, to_cf[1] = r - 1;
    for (int64_t i = 2; i < r; ++i) to_cf[static_cast<size_t>(i)] = i - 1;
    from_cf[0] = 0, from_cf[static_cast<size_t>(r - 1)] = 1;
    for (int64_t i = 1; i < r - 1; ++i) from_cf[static_cast<size_t>(i)] = i + 1;
    x = transpose(c, x, to_cf);
  }
  Value* mean = c.input(3);
  Value* var = c.input(4);
  std::vector<Value*> stats(5, nullptr);  // outputs 1..4
  if (training) {
    // Elements per channel, for Bessel's correction.
    int64_t n = 1;
    const std::vector<int64_t>& d = c.input_spec(0).dims;
    for (int64_t i = 0; i < r; ++i)
      if (i != (channel_last ? r - 1 : 1)) {
        if (d[static_cast<size_t>(i)] < 0)
          return c.unsupported("is_training=true needs x's dims (other than C) known when compiled, got %s",
                               c.input_spec(0).str().c_str());
        n *= d[static_cast<size_t>(i)];
      }
    if (n == 0) return c.bad_input("is_training=true needs a non-empty batch, got x %s", c.input_spec(0).str().c_str());
    std::vector<int64_t> axes = {0};
    for (int64_t i = 2; i < r; ++i) axes.push_back(i);
    // Statistics in float32 whatever x is (scale, offset and the stats are float32).
    Value* xf = cast_if(c, x, c.input_spec(0).dtype, DType::kFloat32);
    const graph::AttributeMap keep = amap({{"keepdims", onnx_int(1)}});
    Value* mk = c.add1("ReduceMean", {xf, c.const_i64(axes)}, keep);
    Value* dev = c.add1("Sub", {xf, mk});
    Value* vk = c.add1("ReduceMean", {c.add1("Mul", {dev, dev}), c.const_i64(axes)}, keep);
    Value* bmean = c.add1("Reshape", {mk, c.const_i64({-1})});
    Value* bvar = c.add1("Reshape", {vk, c.const_i64({-1})});
    const double bessel = static_cast<double>(n) / static_cast<double>(std::max<int64_t>(n - 1, 1));
    Value* unbiased = c.add1("Mul", {bvar, c.const_scalar(DType::kFloat32, bessel)});
    auto blend = [&](Value* batch, Value* old, double old_default) -> Value* {
      if (factor == 1.0f) return c.add1("Identity", {batch});
      Value* fresh = c.add1("Mul", {batch, c.const_scalar(DType::kFloat32, factor)});
      Value* kept = old ? c.add1("Mul", {old, c.const_scalar(DType::kFloat32, 1.0 - factor)})
                        : c.const_scalar(DType::kFloat32, (1.0 - factor) * old_default);
      return c.add1("Add", {kept, fresh});
    };
    stats[1] = blend(bmean, mean, 0.0);
    stats[2] = blend(unbiased, var, 1.0);
    stats[3] = c.add1("Identity", {bmean});
    stats[4] = c.add1("Reciprocal", {c.add1("Sqrt", {c.add1("Add", {bvar, c.const_scalar(DType::kFloat32, eps)})})});
    mean = bmean;
    var = bvar;
  } else {
    for (size_t o = 1; o < 5; ++o) stats[o] = c.add1("Identity", {o % 2 ? mean : var});
  }
  Value* y = c.add1("BatchNormalization", {x, c.input(1), c.input(2), mean, var}, amap({{"epsilon", onnx_float(eps)}}));
  if (channel_last) y = transpose(c, y, from_cf);
  c.set_output(0, y);
  for (size_t o = 1; o < 5 && o < c.num_outputs(); ++o) c.set_output(o, stats[o]);
  if (c.num_outputs() > 5) c.set_output(5, c.add1("Identity", {c.const_f32({0.0f}, {1})}));
  return Status::Ok();
}

// L2Normalize: y = x / sqrt(max(sum(x^2 over axis), eps)); axis [] = all dims.
Status build_l2_normalize(BuildContext& c) {
  std::vector<int64_t> axes = c.get_ints("axis");
  OPENACL_RETURN_IF_ERROR(check_axes(c, axes, true, "axis"));
  const float eps = c.get_float("eps");
  if (!(eps >= 0)) return c.bad_attr("eps must be >= 0, got %g", static_cast<double>(eps));
  const DType xt = c.input_spec(0).dtype;
  std::vector<Value*> ins = {c.input(0)};
  if (!axes.empty()) ins.push_back(c.const_i64(axes));
  Value* ss = c.add1("ReduceSumSquare", std::move(ins), amap({{"keepdims", onnx_int(1)}}));
  Value* norm = c.add1("Sqrt", {c.add1("Max", {ss, c.const_scalar(xt, eps)})});
  c.set_output(0, c.add1("Div", {c.input(0), norm}));
  return Status::Ok();
}

// SoftmaxCrossEntropyWithLogits: per row, loss = -sum(labels *
// log_softmax(features)) and backprop = softmax(features) - labels.
Status build_softmax_ce(BuildContext& c) {
  for (size_t i = 0; i < 2; ++i) {
    const TensorSpec& s = c.input_spec(i);
    if (!s.unknown_rank() && s.dims.size() != 2)
      return c.bad_input("%s must be 2-D [batch, classes], got %s", i ? "labels" : "features", s.str().c_str());
  }
  const DType ft = c.input_spec(0).dtype;
  Value* labels = cast_if(c, c.input(1), c.input_spec(1).dtype, ft);
  Value* logp = c.add1("LogSoftmax", {c.input(0)}, amap({{"axis", onnx_int(-1)}}));
  Value* sum = c.add1("ReduceSum", {c.add1("Mul", {labels, logp}), c.const_i64({-1})}, amap({{"keepdims", onnx_int(0)}}));
  c.set_output(0, c.add1("Neg", {sum}));
  c.set_output(1, c.add1("Sub", {c.add1("Softmax", {c.input(0)}, amap({{"axis", onnx_int(-1)}})), labels}));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Registrations

OPENACL_REGISTER_ASCEND_OP(MatMul)
    .summary("Matrix product of two 2-D tensors, either transposed, plus an optional bias")
    .input("x1").input("x2").optional_input("bias")
    .output("y")
    .attr_bool("transpose_x1", false).attr_bool("transpose_x2", false)
    .dtypes(matmul_types())
    .build([](BuildContext& c) { return build_matmul(c, "transpose_x1", "transpose_x2", false, 2, -1); });

OPENACL_REGISTER_ASCEND_OP(MatMulV2)
    .summary("Matrix product of two 2-D tensors, either transposed, plus an optional bias")
    .input("x1").input("x2").optional_input("bias").optional_input("offset_w")
    .output("y")
    .attr_bool("transpose_x1", false).attr_bool("transpose_x2", false).attr_int("offset_x", 0)
    .dtypes(matmul_types())
    .build([](BuildContext& c) { return build_matmul(c, "transpose_x1", "transpose_x2", false, 2, 3); });

OPENACL_REGISTER_ASCEND_OP(BatchMatMul)
    .summary("Batched matrix product over the last two dims (batch dims broadcast), either side adjoint")
    .input("x1").input("x2")
    .output("y")
    .attr_bool("adj_x1", false).attr_bool("adj_x2", false)
    .dtypes(matmul_types())
    .build([](BuildContext& c) { return build_matmul(c, "adj_x1", "adj_x2", true, -1, -1); });

OPENACL_REGISTER_ASCEND_OP(BatchMatMulV2)
    .summary("Batched matrix product over the last two dims (batch dims broadcast) plus an optional bias")
    .input("x1").input("x2").optional_input("bias").optional_input("offset_w")
    .output("y")
    .attr_bool("adj_x1", false).attr_bool("adj_x2", false).attr_int("offset_x", 0)
    .dtypes(matmul_types())
    .build([](BuildContext& c) { return build_matmul(c, "adj_x1", "adj_x2", true, 2, 3); });

OPENACL_REGISTER_ASCEND_OP(BiasAdd)
    .summary("Adds a 1-D bias along the channel dim of x (last for NHWC/NDHWC, dim 1 for NCHW/NCDHW)")
    .input("x").input("bias")
    .output("y")
    .attr_string("data_format", "NHWC")
    .dtypes(numeric_types())
    .build([](BuildContext& c) -> Status {
      const std::string f = c.get_string("data_format");
      const bool channel_first = f == "NCHW" || f == "NCDHW";
      if (!channel_first && f != "NHWC" && f != "NDHWC")
        return c.bad_attr("data_format \"%s\" is not supported: use \"NHWC\", \"NCHW\", \"NDHWC\" or \"NCDHW\"",
                          f.c_str());
      const TensorSpec& bs = c.input_spec(1);
      if (!bs.unknown_rank() && bs.dims.size() != 1) return c.bad_input("bias must be 1-D, got %s", bs.str().c_str());
      Value* b = cast_if(c, c.input(1), bs.dtype, c.input_spec(0).dtype);
      if (channel_first) {
        int64_t r = 0;
        OPENACL_RETURN_IF_ERROR(known_rank(c, 0, "x", &r));
        if (r < 2) return c.bad_input("x must have rank >= 2 for %s, got %s", f.c_str(), c.input_spec(0).str().c_str());
        // [C] -> [C, 1, ..., 1] so it lines up with dim 1.
        std::vector<int64_t> shape(static_cast<size_t>(r - 1), 1);
        shape[0] = -1;
        b = c.add1("Reshape", {b, c.const_i64(shape)});
      }
      c.set_output(0, c.add1("Add", {c.input(0), b}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Conv2D)
    .summary("2-D convolution (NCHW or NHWC), grouped and dilated, explicit pads [top, bottom, left, right]")
    .input("x").input("filter").optional_input("bias").optional_input("offset_w")
    .output("y")
    .required_attr("strides", Kind::kListInt)
    .required_attr("pads", Kind::kListInt)
    .attr_ints("dilations", {1, 1, 1, 1})
    .attr_int("groups", 1)
    .attr_string("data_format", "NHWC")
    .attr_int("offset_x", 0)
    .dtypes(float_types())
    .build(build_conv2d);

OPENACL_REGISTER_ASCEND_OP(Conv2DTranspose)
    .summary("Transposed 2-D convolution (gradient of Conv2D w.r.t. its input) to the constant input_size; "
             "x and filter float32 or float16")
    .input("input_size").input("x").input("filter").optional_input("bias").optional_input("offset_w")
    .output("y")
    .required_attr("strides", Kind::kListInt)
    .required_attr("pads", Kind::kListInt)
    .attr_ints("dilations", {1, 1, 1, 1})
    .attr_int("groups", 1)
    .attr_string("data_format", "NHWC")
    .attr_ints("output_padding", {0, 0, 0, 0})
    .attr_int("offset_x", 0)
    .build(build_conv2d_transpose);

OPENACL_REGISTER_ASCEND_OP(DepthwiseConv2D)
    .summary("Depth-wise 2-D convolution, filter [kH, kW, C, multiplier]")
    .input("x").input("filter").optional_input("bias").optional_input("offset_w")
    .output("y")
    .required_attr("strides", Kind::kListInt)
    .attr_ints("dilations", {1, 1, 1, 1})
    .required_attr("pads", Kind::kListInt)
    .attr_string("data_format", "NHWC")
    .attr_int("offset_x", 0)
    .dtypes(float_types())
    .build(build_depthwise);

OPENACL_REGISTER_ASCEND_OP(MaxPool)
    .summary("2-D max pooling, padding SAME or VALID")
    .input("x")
    .output("y")
    .required_attr("ksize", Kind::kListInt)
    .required_attr("strides", Kind::kListInt)
    .required_attr("padding", Kind::kString)
    .attr_string("data_format", "NHWC")
    .dtypes(max_pool_types())
    .build([](BuildContext& c) -> Status {
      PoolGeom g;
      OPENACL_RETURN_IF_ERROR(pool_geom_v1(c, &g));
      c.set_output(0, pool_node(c, g, "MaxPool", false));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(AvgPool)
    .summary("2-D average pooling, padding SAME or VALID (padding not counted)")
    .input("x")
    .output("y")
    .required_attr("ksize", Kind::kListInt)
    .required_attr("strides", Kind::kListInt)
    .required_attr("padding", Kind::kString)
    .attr_string("data_format", "NHWC")
    .dtypes(float_types())
    .build([](BuildContext& c) -> Status {
      PoolGeom g;
      OPENACL_RETURN_IF_ERROR(pool_geom_v1(c, &g));
      c.set_output(0, pool_node(c, g, "AveragePool", false));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(MaxPoolV3)
    .summary("2-D max pooling with explicit pads, SAME/VALID, ceil_mode or global pooling")
    .input("x")
    .output("y")
    .required_attr("ksize", Kind::kListInt)
    .required_attr("strides", Kind::kListInt)
    .attr_string("padding_mode", "CALCULATED")
    .attr_ints("pads", {0, 0, 0, 0})
    .attr_string("data_format", "NCHW")
    .attr_bool("global_pooling", false)
    .attr_bool("ceil_mode", false)
    .dtypes(max_pool_types())
    .build([](BuildContext& c) -> Status {
      PoolGeom g;
      OPENACL_RETURN_IF_ERROR(pool_geom_v2(c, &g));
      c.set_output(0, pool_node(c, g, "MaxPool", false));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(AvgPoolV2)
    .summary("2-D average pooling with explicit pads, SAME/VALID, ceil_mode, exclusive or global pooling")
    .input("x")
    .output("y")
    .required_attr("ksize", Kind::kListInt)
    .required_attr("strides", Kind::kListInt)
    .attr_string("padding_mode", "CALCULATED")
    .attr_ints("pads", {0, 0, 0, 0})
    .attr_string("data_format", "NCHW")
    .attr_bool("global_pooling", false)
    .attr_bool("ceil_mode", false)
    .attr_bool("exclusive", true)
    .attr_int("divisor_override", 0)
    .dtypes(float_types())
    .build([](BuildContext& c) -> Status {
      PoolGeom g;
      OPENACL_RETURN_IF_ERROR(pool_geom_v2(c, &g));
      const int64_t div = c.get_int("divisor_override");
      if (div < 0) return c.bad_attr("divisor_override must be >= 0 (0: no override), got %lld", ll(div));
      if (div == 0 || g.global) {
        c.set_output(0, pool_node(c, g, "AveragePool", !c.get_bool("exclusive")));
        return Status::Ok();
      }
      // sum / divisor: the padded average times the window size is the sum
      // when every window has the full size, i.e. without ceil_mode.
      if (g.ceil_mode)
        return c.unsupported("divisor_override with ceil_mode=true is not supported (partial windows)");
      const double scale = static_cast<double>(g.k[0] * g.k[1]) / static_cast<double>(div);
      c.set_output(0, c.add1("Mul", {pool_node(c, g, "AveragePool", true), c.const_scalar(c.input_spec(0).dtype, scale)}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(GlobalAveragePool)
    .summary("Mean over every spatial dim of [N, C, D1, ...]; the output keeps them as 1s")
    .input("x")
    .output("y")
    .dtypes(float_types())
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("GlobalAveragePool", {c.input(0)}));
      return Status::Ok();
    });

// Reductions: the input form (axes tensor) and the D form (axes attribute).
// Registered through one function (not the macro, which names its object by
// line) so each family member is one line below.
void register_reduce(const char* ascend, const char* onnx, const char* what, const std::vector<DType>& types) {
  OpDefRegistration(ascend)
      .summary(std::string(what) + " over the dims in the axes input (empty: see noop_with_empty_axes)")
      .input("x").input("axes")
      .output("y")
      .attr_bool("keep_dims", false)
      .attr_bool("noop_with_empty_axes", true)
      .dtypes(types)
      .bounds(reduce_bounds)
      .build([onnx](BuildContext& c) { return build_reduce(c, onnx, false); });
  OpDefRegistration((std::string(ascend) + "D").c_str())
      .summary(std::string(what) + " over the dims in the axes attribute ([] = every dim)")
      .input("x")
      .output("y")
      .required_attr("axes", Kind::kListInt)
      .attr_bool("keep_dims", false)
      .dtypes(types)
      .build([onnx](BuildContext& c) { return build_reduce(c, onnx, true); });
}

[[maybe_unused]] const bool kReductionsRegistered = [] {
  register_reduce("ReduceSum", "ReduceSum", "Sum", reduce_types());
  register_reduce("ReduceMean", "ReduceMean", "Mean", reduce_types());
  register_reduce("ReduceMax", "ReduceMax", "Maximum", reduce_types());
  register_reduce("ReduceMin", "ReduceMin", "Minimum", reduce_types());
  register_reduce("ReduceProd", "ReduceProd", "Product", reduce_types());
  // On booleans min is "all" and max is "any".
  register_reduce("ReduceAll", "ReduceMin", "Logical and", bool_types());
  register_reduce("ReduceAny", "ReduceMax", "Logical or", bool_types());
  return true;
}();

OPENACL_REGISTER_ASCEND_OP(ArgMaxV2)
    .summary("Index of the largest value along the (constant) dimension input")
    .input("x").input("dimension")
    .output("y")
    .attr("dtype", AttrValue::of_data_type(kAclInt64))
    .dtypes(numeric_types())
    .build([](BuildContext& c) { return build_arg(c, "ArgMax", false, DType::kInt64); });

OPENACL_REGISTER_ASCEND_OP(ArgMaxD)
    .summary("Index of the largest value along the dimension attribute")
    .input("x")
    .output("y")
    .required_attr("dimension", Kind::kInt)
    .attr("dtype", AttrValue::of_data_type(kAclInt32))
    .dtypes(numeric_types())
    .build([](BuildContext& c) { return build_arg(c, "ArgMax", true, DType::kInt32); });

OPENACL_REGISTER_ASCEND_OP(ArgMin)
    .summary("Index of the smallest value along the (constant) dimension input")
    .input("x").input("dimension")
    .output("y")
    .attr("dtype", AttrValue::of_data_type(kAclInt64))
    .dtypes(numeric_types())
    .build([](BuildContext& c) { return build_arg(c, "ArgMin", false, DType::kInt64); });

OPENACL_REGISTER_ASCEND_OP(ArgMinD)
    .summary("Index of the smallest value along the dimension attribute")
    .input("x")
    .output("y")
    .required_attr("dimension", Kind::kInt)
    .attr("dtype", AttrValue::of_data_type(kAclInt32))
    .dtypes(numeric_types())
    .build([](BuildContext& c) { return build_arg(c, "ArgMin", true, DType::kInt32); });

OPENACL_REGISTER_ASCEND_OP(ArgMaxWithValue)
    .summary("Index (int32) and value of the largest element along a dimension")
    .input("x")
    .output("indice").output("values")
    .required_attr("dimension", Kind::kInt)
    .attr_bool("keep_dims", false)
    .dtypes(float_types())
    .build([](BuildContext& c) { return build_arg_with_value(c, true); });

OPENACL_REGISTER_ASCEND_OP(ArgMinWithValue)
    .summary("Index (int32) and value of the smallest element along a dimension")
    .input("x")
    .output("indice").output("values")
    .required_attr("dimension", Kind::kInt)
    .attr_bool("keep_dims", false)
    .dtypes(float_types())
    .build([](BuildContext& c) { return build_arg_with_value(c, false); });

OPENACL_REGISTER_ASCEND_OP(TopK)
    .summary("The k largest (or smallest) values along dim and their int32 indices")
    .input("x").input("k")
    .output("values").output("indices")
    .attr_bool("sorted", true).attr_bool("largest", true).attr_int("dim", -1)
    .dtypes(numeric_types())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs& a, std::vector<TensorSpec>* out) {
      return topk_bounds(in, a, out, false);
    })
    .build([](BuildContext& c) { return build_topk(c, false); });

OPENACL_REGISTER_ASCEND_OP(TopKV2)
    .summary("The k largest (or smallest) values along dim and their indices (indices_dtype int32 or int64)")
    .input("x").input("k")
    .output("values").output("indices")
    .attr_bool("sorted", true).attr_int("dim", -1).attr_bool("largest", true).attr_int("indices_dtype", kAclInt32)
    .dtypes(numeric_types())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs& a, std::vector<TensorSpec>* out) {
      return topk_bounds(in, a, out, true);
    })
    .build([](BuildContext& c) { return build_topk(c, true); });

OPENACL_REGISTER_ASCEND_OP(LayerNorm)
    .summary("Layer normalisation from begin_norm_axis with gamma/beta; also returns mean and variance")
    .input("x").input("gamma").input("beta")
    .output("y").output("mean").output("variance")
    .attr_int("begin_norm_axis", 0).attr_int("begin_params_axis", 0).attr_float("epsilon", 1e-7f)
    .dtypes(float_types())
    .build(build_layer_norm);

OPENACL_REGISTER_ASCEND_OP(BatchNorm)
    .summary("Batch normalisation: batch statistics (is_training) or the given mean/variance (inference)")
    .input("x").input("scale").input("offset").optional_input("mean").optional_input("variance")
    .output("y").output("batch_mean").output("batch_variance").output("reserve_space_1").output("reserve_space_2")
    .optional_output("reserve_space_3")
    .attr_float("epsilon", 1e-4f).attr_string("data_format", "NHWC").attr_bool("is_training", true)
    .attr_float("exponential_avg_factor", 1.0f)
    .dtypes(float_types())
    .build(build_batch_norm);

OPENACL_REGISTER_ASCEND_OP(L2Normalize)
    .summary("x / sqrt(max(sum(x^2 over axis), eps)); axis [] normalises over every dim")
    .input("x")
    .output("y")
    .attr_ints("axis", {}).attr_float("eps", 1e-4f)
    .dtypes(float_types())
    .build(build_l2_normalize);

OPENACL_REGISTER_ASCEND_OP(SoftmaxCrossEntropyWithLogits)
    .summary("Per-row softmax cross-entropy of [batch, classes] logits and labels, with its gradient")
    .input("features").input("labels")
    .output("loss").output("backprop")
    .dtypes(float_types())
    .build(build_softmax_ce);

}  // namespace
}  // namespace openacl::op
