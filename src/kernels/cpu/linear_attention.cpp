// LinearAttention (opset 27): the token-by-token recurrence over a per-KV-head
// state S [d_k, d_v]:
//   gated:  S *= exp(g_t)                         (g per head or per key dim)
//   delta:  v_t = beta_t * (v_t - S^T k_t)        (after the decay)
//   write:  S += k_t ⊗ v_t
//   read:   o_t = scale * q_t^T S                 (for each query head of the group)
// The state and all arithmetic are float32 whatever the activation type, as
// the spec's reference does; present_state is stored in past_state's type
// (query's when there is no past_state). Parallel over (batch, KV head): the
// heads' recurrences are independent.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

// Input `t` as float: its own buffer when it is float32, else converted into `buf`.
const float* as_floats(const Tensor& t, std::vector<float>& buf) {
  if (t.dtype == DType::kFloat32) return t.as<const float>();
  buf.resize(static_cast<size_t>(t.elements()));
  dispatch<kFloats>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.as<const T>();
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(load(p[i]));
  });
  return buf.data();
}

void store_floats(const float* src, Tensor& out) {
  const int64_t n = out.elements();
  dispatch<kFloats>(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.as<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = store<T>(src[i]);
  });
}

Status linear_attention(KernelContext& ctx) {
  const graph::AttributeMap& at = ctx.attrs();
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const int64_t hq = at.get_int("q_num_heads", 0), hkv = at.get_int("kv_num_heads", 0);
  if (hq < 1 || hkv < 1 || hq % hkv != 0) return ctx.fail("q_num_heads must be a positive multiple of kv_num_heads");
  const std::string rule = at.get_string("update_rule", "gated_delta");
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (!gated && !delta && rule != "linear") return ctx.fail("unknown update_rule '%s'", rule.c_str());
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3) return ctx.fail("query, key and value must be 3-D (B, T, H*D)");
  const int64_t B = q.dims[0], T = q.dims[1];
  if (k.dims[0] != B || v.dims[0] != B || k.dims[1] != T || v.dims[1] != T)
    return ctx.fail("query, key and value disagree on batch or sequence length");
  if (q.dims[2] % hq || v.dims[2] % hkv) return ctx.fail("hidden sizes are not divisible by the head counts");
  const int64_t dk = q.dims[2] / hq, dv = v.dims[2] / hkv, group = hq / hkv;
  if (k.dims[2] != hkv * dk) return ctx.fail("key hidden size %lld is not kv_num_heads * d_k", (long long)k.dims[2]);
  for (size_t i : {1, 2, 4, 5})
    if (ctx.has_input(i) && ctx.input(i).dtype != q.dtype) return ctx.fail("input %zu must have query's dtype", i);

  const bool has_past = ctx.has_input(3), has_decay = ctx.has_input(4), has_beta = ctx.has_input(5);
  if (gated != has_decay) return ctx.fail("update_rule '%s' %s the decay input", rule.c_str(), gated ? "needs" : "forbids");
  if (delta != has_beta) return ctx.fail("update_rule '%s' %s the beta input", rule.c_str(), delta ? "needs" : "forbids");
  int64_t decay_w = 0, beta_w = 0;  // last-dim widths
  if (has_decay) {
    const Tensor& d = ctx.input(4);
    decay_w = d.rank() == 3 ? d.dims[2] : -1;
    if (d.rank() != 3 || d.dims[0] != B || d.dims[1] != T || (decay_w != hkv && decay_w != hkv * dk))
      return ctx.fail("decay must be (B, T, kv_num_heads) or (B, T, kv_num_heads * d_k)");
  }
  if (has_beta) {
    const Tensor& b = ctx.input(5);
    beta_w = b.rank() == 3 ? b.dims[2] : -1;
    if (b.rank() != 3 || b.dims[0] != B || b.dims[1] != T || (beta_w != hkv && beta_w != 1))
      return ctx.fail("beta must be (B, T, kv_num_heads) or (B, T, 1)");
  }
  if (has_past) {
    const Tensor& p = ctx.input(3);
    if (p.dims != std::vector<int64_t>{B, hkv, dk, dv})
      return ctx.fail("past_state must be (%lld, %lld, %lld, %lld)", (long long)B, (long long)hkv, (long long)dk,
                      (long long)dv);
  }
  float scale = at.get_float("scale", 0.0f);
  if (scale == 0.0f) scale = dk > 0 ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;

  std::vector<float> qb, kb, vb, pb, db, bb;
  const float* qf = as_floats(q, qb);
  const float* kf = as_floats(k, kb);
  const float* vf = as_floats(v, vb);
  const float* pf = has_past ? as_floats(ctx.input(3), pb) : nullptr;
  const float* df = has_decay ? as_floats(ctx.input(4), db) : nullptr;
  const float* bf = has_beta ? as_floats(ctx.input(5), bb) : nullptr;

  Tensor& y = ctx.output(0);
  const bool y_f32 = y.dtype == DType::kFloat32;
  std::vector<float> yb(y_f32 ? 0 : static_cast<size_t>(y.elements()));
  float* yf = y_f32 ? y.as<float>() : yb.data();
  const bool want_state = ctx.has_output(1);
  std::vector<float> states(static_cast<size_t>(B * hkv * dk * dv));

  parallel_for(B * hkv, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> kt(static_cast<size_t>(dk)), vt(static_cast<size_t>(dv)), g(static_cast<size_t>(dk));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / hkv, h = bh % hkv;
      float* S = states.data() + bh * dk * dv;
      for (int64_t i = 0; i < dk * dv; ++i) S[i] = pf ? pf[bh * dk * dv + i] : 0.0f;
      for (int64_t t = 0; t < T; ++t) {
        const int64_t row = b * T + t;
        const float* kr = kf + row * hkv * dk + h * dk;
        const float* vr = vf + row * hkv * dv + h * dv;
        for (int64_t d = 0; d < dk; ++d) kt[d] = kr[d];
        for (int64_t m = 0; m < dv; ++m) vt[m] = vr[m];
        if (df) {
          for (int64_t d = 0; d < dk; ++d)
            g[d] = std::exp(decay_w == hkv ? df[row * hkv + h] : df[row * hkv * dk + h * dk + d]);
          for (int64_t d = 0; d < dk; ++d) {
            float* s = S + d * dv;
            const float gd = g[d];
#pragma omp simd
            for (int64_t m = 0; m < dv; ++m) s[m] *= gd;
          }
        }
        if (bf) {
          const float beta = bf[row * beta_w + (beta_w == 1 ? 0 : h)];
          // vt <- beta * (vt - S^T k)
          for (int64_t d = 0; d < dk; ++d) {
            const float* s = S + d * dv;
            const float kd = kt[d];
#pragma omp simd
            for (int64_t m = 0; m < dv; ++m) vt[m] -= s[m] * kd;
          }
          for (int64_t m = 0; m < dv; ++m) vt[m] *= beta;
        }
        for (int64_t d = 0; d < dk; ++d) {
          float* s = S + d * dv;
          const float kd = kt[d];
#pragma omp simd
          for (int64_t m = 0; m < dv; ++m) s[m] += kd * vt[m];
        }
        for (int64_t j = 0; j < group; ++j) {
          const int64_t qh = h * group + j;
          const float* qr = qf + row * hq * dk + qh * dk;
          float* o = yf + row * hq * dv + qh * dv;
          for (int64_t m = 0; m < dv; ++m) o[m] = 0.0f;
          for (int64_t d = 0; d < dk; ++d) {
            const float* s = S + d * dv;
            const float qd = qr[d];
#pragma omp simd
            for (int64_t m = 0; m < dv; ++m) o[m] += qd * s[m];
          }
          for (int64_t m = 0; m < dv; ++m) o[m] *= scale;
        }
      }
    }
  });
  if (!y_f32) store_floats(yf, y);
  if (want_state) store_floats(states.data(), ctx.output(1));
  return Status::Ok();
}

// Depthwise causal Conv1d: out[b,c,l] = bias[c] + sum_j w[c,0,j] * padded[b,c,l+j],
// padded = concat(past_state or zeros (k-1 columns), input). present_state is
// padded's last k-1 columns. Optional SiLU (alias swish) on the output.
template <class T>
Status causal_conv_typed(KernelContext& ctx) {
  using C = ComputeType<T>;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const std::string act = ctx.attrs().get_string("activation", "none");
  const bool silu = act == "silu" || act == "swish";
  if (!silu && act != "none") return ctx.fail("unknown activation '%s'", act.c_str());
  if (x.rank() != 3) return ctx.fail("input must be 3-D (batch, channels, length)");
  const int64_t B = x.dims[0], Ch = x.dims[1], L = x.dims[2];
  if (w.rank() != 3 || w.dims[0] != Ch || w.dims[1] != 1 || w.dims[2] < 1)
    return ctx.fail("weight must be (channels, 1, k) with k >= 1");
  const int64_t K = w.dims[2], P = K - 1;
  for (size_t i : {1, 2, 3})
    if (ctx.has_input(i) && ctx.input(i).dtype != x.dtype) return ctx.fail("input %zu must have input 0's dtype", i);
  const T* bias = nullptr;
  if (ctx.has_input(2)) {
    const Tensor& bt = ctx.input(2);
    if (bt.elements() != Ch || bt.rank() != 1) return ctx.fail("bias must be (channels)");
    bias = bt.as<const T>();
  }
  const T* past = nullptr;
  if (ctx.has_input(3)) {
    const Tensor& p = ctx.input(3);
    if (p.dims != std::vector<int64_t>{B, Ch, P}) return ctx.fail("past_state must be (batch, channels, k - 1)");
    past = p.as<const T>();
  }
  const T* xd = x.as<const T>();
  const T* wd = w.as<const T>();
  T* yd = ctx.output(0).as<T>();
  T* sd = ctx.has_output(1) ? ctx.output(1).as<T>() : nullptr;
  parallel_for(B * Ch, 4, [&](int64_t begin, int64_t end) {
    std::vector<C> pad(static_cast<size_t>(P + L));
    for (int64_t bc = begin; bc < end; ++bc) {
      const int64_t c = bc % Ch;
      for (int64_t j = 0; j < P; ++j) pad[j] = past ? load(past[bc * P + j]) : C(0);
      for (int64_t l = 0; l < L; ++l) pad[P + l] = load(xd[bc * L + l]);
      const T* wc = wd + c * K;
      const C b0 = bias ? load(bias[c]) : C(0);
      for (int64_t l = 0; l < L; ++l) {
        C acc = b0;
        for (int64_t j = 0; j < K; ++j) acc += load(wc[j]) * pad[l + j];
        if (silu) {
          // Rounded to T first, like the reference (conv then activation).
          const C r = load(store<T>(acc));
          acc = r / (C(1) + std::exp(-r));
        }
        yd[bc * L + l] = store<T>(acc);
      }
      if (sd)
        for (int64_t j = 0; j < P; ++j) sd[bc * P + j] = store<T>(pad[L + j]);
    }
  });
  return Status::Ok();
}

Status causal_conv(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = causal_conv_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("input must be a float tensor");
  return st;
}

const std::vector<DType> kLinearTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

OPENACL_REGISTER_KERNEL(LinearAttention, "cpu").types(kLinearTypes).run(linear_attention);
OPENACL_REGISTER_KERNEL(CausalConvWithState, "cpu").types(kLinearTypes).run(causal_conv);

}  // namespace
}  // namespace openacl::kernels::cpu
