// Attention (opset 23+): scaled dot-product attention over Q, K, V given as
// 4-D [batch, heads, seq, head_size] or 3-D [batch, seq, heads * head_size]
// (then q_num_heads / kv_num_heads say how to split), with optional mask,
// KV cache (past_key/past_value -> present_key/present_value) and the
// qk_matmul_output diagnostic output.
#include "graph/ops/nn_common.h"
#include "graph/passes.h"

namespace openacl::graph::nn {
namespace {

Status attention_shape(ShapeContext& ctx) {
  // graph::fuse_attention_split's form: input 0 is q | k | v along its last
  // axis, inputs 1 and 2 absent.
  TensorType part;
  const bool packed = ctx.attrs().get_int(kPackedQkvAttr, 0) != 0;
  if (packed) {
    const TensorType& qkv = ctx.input(0);
    if (!qkv.has_rank() || qkv.rank() != 3)
      return ctx.fail("a packed QKV input must be 3-D, not %s", qkv.str().c_str());
    const Dim w = (*qkv.shape)[2];
    if (w.known() && w.value % 3 != 0) return ctx.fail("a packed QKV input's last dim must divide by 3");
    part = TensorType{qkv.dtype, Shape{(*qkv.shape)[0], (*qkv.shape)[1], dim_div(w, 3)}};
  }
  const TensorType& q = packed ? part : ctx.input(0);
  const TensorType& k = packed ? part : ctx.input(1);
  const TensorType& v = packed ? part : ctx.input(2);
  int64_t r = q.has_rank() ? q.rank() : k.has_rank() ? k.rank() : v.has_rank() ? v.rank() : -1;
  if (r != -1 && r != 3 && r != 4) return ctx.fail("Q %s must be 3-D or 4-D", q.str().c_str());
  for (const TensorType* t : {&q, &k, &v})
    if (t->has_rank() && t->rank() != r) return ctx.fail("Q, K and V must have the same rank");
  const int64_t qh = ctx.attrs().get_int("q_num_heads", 0), kvh = ctx.attrs().get_int("kv_num_heads", 0);
  const TensorType& past = ctx.input(4);
  if (r == -1) {
    set_out(ctx, 0, q.dtype, std::nullopt);
    set_out(ctx, 1, q.dtype, Shape(4));
    set_out(ctx, 2, q.dtype, Shape(4));
    set_out(ctx, 3, q.dtype, Shape(4));
    return Status::Ok();
  }
  Dim batch, hq, sq, hkv, skv, dk, dv;
  Shape qs = dims_or_unknown(q, r), ks = dims_or_unknown(k, r), vs = dims_or_unknown(v, r);
  if (r == 4) {
    batch = qs[0], hq = qs[1], sq = qs[2];
    hkv = ks[1], skv = ks[2], dk = ks[3], dv = vs[3];
  } else {
    if (qh < 1 || kvh < 1) return ctx.fail("3-D inputs need q_num_heads and kv_num_heads >= 1");
    batch = qs[0], sq = qs[1], hq = Dim(qh), hkv = Dim(kvh), skv = ks[1];
    dk = dim_div(ks[2], kvh);
    dv = dim_div(vs[2], kvh);
    if (ks[2].known() && ks[2].value % kvh != 0) return ctx.fail("K hidden size is not divisible by kv_num_heads");
    if (vs[2].known() && vs[2].value % kvh != 0) return ctx.fail("V hidden size is not divisible by kv_num_heads");
  }
  if (hq.known() && hkv.known() && (hkv.value == 0 || hq.value % hkv.value != 0))
    return ctx.fail("q heads (%lld) must be a multiple of kv heads (%lld)", ll(hq.value), ll(hkv.value));
  Dim total = skv;
  if (ctx.has_input(4)) {
    if (past.has_rank() && past.rank() != 4) return ctx.fail("past_key %s must be 4-D", past.str().c_str());
    const Dim p = past.has_rank() ? (*past.shape)[2] : Dim();
    total = p.known() && skv.known() ? Dim(p.value + skv.value) : Dim();
  }
  if (r == 4) set_out(ctx, 0, q.dtype, Shape{batch, hq, sq, dv});
  else set_out(ctx, 0, q.dtype, Shape{batch, sq, hq.known() && dv.known() ? Dim(hq.value * dv.value) : Dim()});
  set_out(ctx, 1, q.dtype, Shape{batch, hkv, total, dk});
  set_out(ctx, 2, q.dtype, Shape{batch, hkv, total, dv});
  set_out(ctx, 3, q.dtype, Shape{batch, hq, sq, total});
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(Attention).since(23).inputs(3, 7).outputs(1, 4).shape(attention_shape);

}  // namespace openacl::graph::nn
