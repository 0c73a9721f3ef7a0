// Newer attention-style ops:
//  - LinearAttention (opset 27): recurrent linear attention over packed
//    [B, T, H*D] Q/K/V with a [B, H_kv, d_k, d_v] state;
//  - CausalConvWithState (opset 27): depthwise causal Conv1d carrying the last
//    k-1 input columns as state;
//  - FlexAttention (ai.onnx.preview 1): 4-D scaled dot-product attention with
//    optional score_mod / prob_mod subgraphs.
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status linear_attention_shape(ShapeContext& ctx) {
  const TensorType& q = ctx.input(0);
  const TensorType& k = ctx.input(1);
  const TensorType& v = ctx.input(2);
  for (const TensorType* t : {&q, &k, &v})
    if (t->has_rank() && t->rank() != 3) return ctx.fail("query, key and value must be 3-D (B, T, H*D)");
  const int64_t hq = ctx.attrs().get_int("q_num_heads", 0), hkv = ctx.attrs().get_int("kv_num_heads", 0);
  if (hq < 1 || hkv < 1 || hq % hkv != 0)
    return ctx.fail("q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)", ll(hq), ll(hkv));
  const std::string rule = ctx.attrs().get_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return ctx.fail("unknown update_rule '%s'", rule.c_str());
  Shape qs = dims_or_unknown(q, 3), vs = dims_or_unknown(v, 3);
  if (qs[2].known() && qs[2].value % hq != 0) return ctx.fail("query hidden size is not divisible by q_num_heads");
  if (vs[2].known() && vs[2].value % hkv != 0) return ctx.fail("value hidden size is not divisible by kv_num_heads");
  const Dim dk = dim_div(qs[2], hq), dv = dim_div(vs[2], hkv);
  const DType state_t = ctx.has_input(3) && ctx.input(3).dtype != DType::kUndefined ? ctx.input(3).dtype : q.dtype;
  set_out(ctx, 0, q.dtype, Shape{qs[0], qs[1], dv.known() ? Dim(dv.value * hq) : Dim()});
  set_out(ctx, 1, state_t, Shape{qs[0], Dim(hkv), dk, dv});
  return Status::Ok();
}

Status causal_conv_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  if (x.has_rank() && x.rank() != 3) return ctx.fail("input must be 3-D (batch, channels, length)");
  if (w.has_rank() && w.rank() != 3) return ctx.fail("weight must be 3-D (channels, 1, k)");
  const std::string act = ctx.attrs().get_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") return ctx.fail("unknown activation '%s'", act.c_str());
  Shape xs = dims_or_unknown(x, 3), ws = dims_or_unknown(w, 3);
  set_out(ctx, 0, x.dtype, xs);
  set_out(ctx, 1, x.dtype, Shape{xs[0], xs[1], ws[2].known() ? Dim(ws[2].value - 1) : Dim()});
  return Status::Ok();
}

Status flex_attention_shape(ShapeContext& ctx) {
  const TensorType& q = ctx.input(0);
  const TensorType& k = ctx.input(1);
  const TensorType& v = ctx.input(2);
  for (const TensorType* t : {&q, &k, &v})
    if (t->has_rank() && t->rank() != 4) return ctx.fail("Q, K and V must be 4-D");
  Shape qs = dims_or_unknown(q, 4), ks = dims_or_unknown(k, 4), vs = dims_or_unknown(v, 4);
  if (qs[1].known() && ks[1].known() && (ks[1].value == 0 || qs[1].value % ks[1].value != 0))
    return ctx.fail("q heads (%lld) must be a multiple of kv heads (%lld)", ll(qs[1].value), ll(ks[1].value));
  set_out(ctx, 0, q.dtype, Shape{qs[0], qs[1], qs[2], vs[3]});
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(LinearAttention).since(27).inputs(3, 6).outputs(1, 2).shape(linear_attention_shape);
OPENACL_REGISTER_OP(CausalConvWithState).since(27).inputs(2, 4).outputs(1, 2).shape(causal_conv_shape);
[[maybe_unused]] static OpRegistration flex_attention_registration =
    OpRegistration("FlexAttention", "ai.onnx.preview").since(1).inputs(3, 3).outputs(1, 1).shape(flex_attention_shape);

}  // namespace openacl::graph::nn
