// Attention (opset 23..25): softmax(Q·Kᵀ·scale [softcap] + bias)·V per query
// row, where bias gathers the attention mask, the causal and sliding-window
// limits and the nonpad_kv_seqlen padding. K/V heads are shared across query
// heads (GQA). Arithmetic is in float (double for float64).
//
// A row whose bias is -inf everywhere (fully masked) yields zeros, as the spec
// requires, instead of NaN.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include <dnnl.h>

#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/simd8.h"
#include "kernels/cpu/softmax_row.h"

namespace openacl::kernels::cpu {
namespace {

// Element (b, h, s, d) of a Q/K/V input seen as [B, H, S, D].
struct HeadView {
  int64_t sb, sh, ss;  // strides (d stride is 1)
};

HeadView view_of(const Tensor& t, int64_t heads, int64_t d) {
  if (t.rank() == 4) return {t.dims[1] * t.dims[2] * t.dims[3], t.dims[2] * t.dims[3], t.dims[3]};
  return {t.dims[1] * heads * d, d, heads * d};  // 3-D [B, S, H*D]
}

template <class T>
float as_float(const void* p, int64_t i) {
  return static_cast<float>(load(static_cast<const T*>(p)[i]));
}

// s[j] += m[j] (m may be null); returns the row's max (NaN ignored).
OPENACL_AVX2_CLONES float add_mask_max(float* s, const float* m, int64_t n) {
  v8f mv = v8f{} - std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    v8f x = ld8(s + j);
    if (m) {
      x += ld8(m + j);
      st8(s + j, x);
    }
    mv = x > mv ? x : mv;
  }
  float mx = mv[0];
  for (int l = 1; l < 8; ++l) mx = std::max(mx, mv[l]);
  for (; j < n; ++j) {
    if (m) s[j] += m[j];
    mx = std::max(mx, s[j]);
  }
  return mx;
}

// The float32 case real models reach (a plain or fused encoder attention: no
// cache, no causal or window limits, no softcap, only output 0, an additive
// float mask covering every key): per (batch, head, block of query rows) one
// sgemm for the scores, mask and softmax while they are in cache, one sgemm
// into Y. Q, K, V and Y are read and written through their strides, so the
// 3-D [B, S, H*D] form needs no copies. A fully masked row gives zeros.
struct FastAttention {
  const float *q, *k, *v, *mask;
  float* y;
  HeadView qv, kv, vv, yv;
  int64_t ms[3];  // mask strides over batch, head, query row (keys: 1)
  int64_t batch, hq, group, sq, skv, dk, dv;
  float scale;
};

Status run_fast(const KernelContext& ctx, const FastAttention& a) {
  constexpr int64_t kRows = 64;  // a 64 x skv score block stays in L2
  const int64_t blocks = (a.sq + kRows - 1) / kRows;
  std::atomic<bool> failed{false};
  parallel_for(a.batch * a.hq * blocks, 1, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> buf;
    if (buf.size() < static_cast<size_t>(kRows * a.skv)) buf.resize(static_cast<size_t>(kRows * a.skv));
    float* s = buf.data();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t blk = t % blocks, h = (t / blocks) % a.hq, b = t / (blocks * a.hq), kh = h / a.group;
      const int64_t i0 = blk * kRows, m = std::min(kRows, a.sq - i0);
      const float* qp = a.q + b * a.qv.sb + h * a.qv.sh + i0 * a.qv.ss;
      const float* kp = a.k + b * a.kv.sb + kh * a.kv.sh;
      const float* vp = a.v + b * a.vv.sb + kh * a.vv.sh;
      float* yp = a.y + b * a.yv.sb + h * a.yv.sh + i0 * a.yv.ss;
      bool ok = dnnl_sgemm('N', 'T', m, a.skv, a.dk, a.scale, qp, a.qv.ss, kp, a.kv.ss, 0.f, s, a.skv) == dnnl_success;
      for (int64_t r = 0; r < m && ok; ++r) {
        float* row = s + r * a.skv;
        const float* mrow = a.mask ? a.mask + b * a.ms[0] + h * a.ms[1] + (i0 + r) * a.ms[2] : nullptr;
        if (add_mask_max(row, mrow, a.skv) == -std::numeric_limits<float>::infinity())
          std::fill(row, row + a.skv, 0.f);
        else
          softmax_row_f32(row, row, a.skv, false);
      }
      ok = ok && dnnl_sgemm('N', 'N', m, a.dv, a.skv, 1.f, s, a.skv, vp, a.vv.ss, 0.f, yp, a.yv.ss) == dnnl_success;
      if (!ok) failed = true;
    }
  });
  return failed ? ctx.fail("oneDNN sgemm failed") : Status::Ok();
}

template <class T>
Status attention_typed(KernelContext& ctx) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const C ninf = -std::numeric_limits<C>::infinity();
  const graph::AttributeMap& at = ctx.attrs();
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const int64_t r = q.rank();
  if ((r != 3 && r != 4) || k.rank() != r || v.rank() != r) return ctx.fail("Q, K, V must all be 3-D or all 4-D");
  const int64_t batch = q.dims[0];
  int64_t hq, hkv, sq, skv, dk, dv, dq;
  if (r == 4) {
    hq = q.dims[1], sq = q.dims[2], dq = q.dims[3];
    hkv = k.dims[1], skv = k.dims[2], dk = k.dims[3], dv = v.dims[3];
    if (v.dims[1] != hkv || v.dims[2] != skv) return ctx.fail("K and V disagree on heads or length");
  } else {
    hq = at.get_int("q_num_heads", 0), hkv = at.get_int("kv_num_heads", 0);
    if (hq < 1 || hkv < 1) return ctx.fail("3-D inputs need q_num_heads and kv_num_heads");
    if (q.dims[2] % hq || k.dims[2] % hkv || v.dims[2] % hkv) return ctx.fail("hidden sizes are not divisible by the head counts");
    sq = q.dims[1], dq = q.dims[2] / hq, skv = k.dims[1], dk = k.dims[2] / hkv, dv = v.dims[2] / hkv;
    if (v.dims[1] != skv) return ctx.fail("K and V disagree on length");
  }
  if (k.dims[0] != batch || v.dims[0] != batch) return ctx.fail("Q, K, V disagree on batch");
  for (size_t i : {1, 2, 4, 5})
    if (ctx.has_input(i) && ctx.input(i).dtype != q.dtype) return ctx.fail("input %zu must have Q's dtype", i);
  if (dq != dk) return ctx.fail("Q head size %lld differs from K's %lld", (long long)dq, (long long)dk);
  if (hkv == 0 || hq % hkv) return ctx.fail("q heads must be a multiple of kv heads");
  const bool has_past = ctx.has_input(4) && ctx.has_input(5);
  if (ctx.has_input(4) != ctx.has_input(5)) return ctx.fail("past_key and past_value come together");
  int64_t past = 0;
  if (has_past) {
    const Tensor& pk = ctx.input(4);
    const Tensor& pv = ctx.input(5);
    if (pk.rank() != 4 || pv.rank() != 4 || pk.dims[0] != batch || pk.dims[1] != hkv || pk.dims[3] != dk ||
        pv.dims != std::vector<int64_t>{batch, hkv, pk.dims[2], dv})
      return ctx.fail("past_key/past_value must be [batch, kv_heads, past, head_size]");
    past = pk.dims[2];
  }
  const int64_t total = past + skv;
  // K, V with the cache in front: [B, Hkv, total, D], in compute type.
  std::vector<C> kall, vall;  // sized by gather (the fast path needs neither)
  auto gather = [&](const Tensor& src, const Tensor* pst, int64_t d, std::vector<C>& dst, Tensor* present) {
    const HeadView sv = view_of(src, hkv, d);
    dst.resize(static_cast<size_t>(batch * hkv * total * d));
    const T* s = src.as<T>();
    T* pr = present ? present->as<T>() : nullptr;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < hkv; ++h)
        for (int64_t t = 0; t < total; ++t) {
          const int64_t o = ((b * hkv + h) * total + t) * d;
          const T* row = t < past ? pst->as<T>() + ((b * hkv + h) * past + t) * d
                                  : s + b * sv.sb + h * sv.sh + (t - past) * sv.ss;
          for (int64_t j = 0; j < d; ++j) dst[o + j] = static_cast<C>(load(row[j]));
          if (pr) std::copy(row, row + d, pr + o);
        }
  };
  Tensor* present_k = ctx.num_outputs() > 1 && ctx.has_output(1) ? &ctx.output(1) : nullptr;
  Tensor* present_v = ctx.num_outputs() > 2 && ctx.has_output(2) ? &ctx.output(2) : nullptr;

  // Mask: right-aligned broadcast to [B, Hq, Sq, Tm]; keys past Tm are masked.
  const Tensor* mask = ctx.has_input(3) && ctx.input(3).data ? &ctx.input(3) : nullptr;
  int64_t mstride[4] = {0, 0, 0, 0};
  int64_t mlen = total;
  if (mask) {
    if (mask->rank() < 1 || mask->rank() > 4) return ctx.fail("attn_mask must have rank 1..4");
    const int64_t full[4] = {batch, hq, sq, mask->dims.back()};
    const int64_t off = 4 - mask->rank();
    int64_t own = 1;  // row-major stride of mask dim i
    for (int64_t i = mask->rank() - 1; i >= 0; --i) {
      const int64_t md = mask->dims[i], fd = full[off + i];
      if (md != 1 && md != fd) return ctx.fail("attn_mask does not broadcast to [batch, heads, q_seq, kv_seq]");
      mstride[off + i] = md == 1 ? 0 : own;
      own *= md;
    }
    mlen = mask->dims.back();
    if (mlen > total) return ctx.fail("attn_mask's last dim %lld exceeds the key length %lld", (long long)mlen, (long long)total);
    if (mask->dtype != DType::kBool && mask->dtype != DType::kFloat32 && mask->dtype != DType::kFloat16 &&
        mask->dtype != DType::kBFloat16 && mask->dtype != DType::kFloat64)
      return ctx.fail("attn_mask must be bool or float");
  }
  const Tensor* nonpad = ctx.num_inputs() > 6 && ctx.has_input(6) ? &ctx.input(6) : nullptr;
  std::vector<int64_t> valid;  // keys per batch entry, with nonpad_kv_seqlen only
  if (nonpad) {
    valid.assign(static_cast<size_t>(batch), total);
    if (has_past) return ctx.fail("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    if (nonpad->elements() != batch) return ctx.fail("nonpad_kv_seqlen must have batch entries");
    if (nonpad->dtype != DType::kInt64 && nonpad->dtype != DType::kInt32) return ctx.fail("nonpad_kv_seqlen must be int64");
    for (int64_t b = 0; b < batch; ++b)
      valid[b] = nonpad->dtype == DType::kInt64 ? nonpad->as<int64_t>()[b] : nonpad->as<int32_t>()[b];
  }
  const bool causal = at.get_int("is_causal", 0) != 0;
  // Keys longer than a short string holds, built once (this runs per execute).
  static const std::string kLeft = "left_window_size", kRight = "right_window_size",
                           kMode = "qk_matmul_output_mode";
  const int64_t left = at.get_int(kLeft, -1), right = at.get_int(kRight, -1);
  const bool window = left >= 0 || right >= 0;
  const float softcap = at.get_float("softcap", 0.f);
  const int64_t mode = at.get_int(kMode, 0);
  float scale = at.get_float("scale", 0.f);
  if (!at.has("scale")) scale = 1.f / std::sqrt(static_cast<float>(dq));
  if constexpr (std::is_same_v<T, float>) {
    const bool extra_outputs = present_k || present_v || (ctx.num_outputs() > 3 && ctx.has_output(3));
    if (!has_past && !nonpad && !causal && !window && softcap == 0.f && !extra_outputs && total > 0 &&
        (!mask || (mask->dtype == DType::kFloat32 && mlen == total))) {
      FastAttention a{q.as<float>(), k.as<float>(), v.as<float>(), mask ? mask->as<float>() : nullptr,
                      ctx.output(0).as<float>(), view_of(q, hq, dq), view_of(k, hkv, dk), view_of(v, hkv, dv),
                      r == 4 ? HeadView{hq * sq * dv, sq * dv, dv} : HeadView{sq * hq * dv, dv, hq * dv},
                      {mstride[0], mstride[1], mstride[2]}, batch, hq, hq / hkv, sq, skv, dk, dv, scale};
      return run_fast(ctx, a);
    }
  }
  gather(k, has_past ? &ctx.input(4) : nullptr, dk, kall, present_k);
  gather(v, has_past ? &ctx.input(5) : nullptr, dv, vall, present_v);
  Tensor& y = ctx.output(0);
  Tensor* qk_out = ctx.num_outputs() > 3 && ctx.has_output(3) ? &ctx.output(3) : nullptr;
  const HeadView qv = view_of(q, hq, dq);
  const HeadView yv = r == 4 ? HeadView{hq * sq * dv, sq * dv, dv} : HeadView{sq * hq * dv, dv, hq * dv};
  const int64_t group = hq / hkv;
  const T* qd = q.as<T>();
  T* yd = y.as<T>();
  const DType mdt = mask ? mask->dtype : DType::kUndefined;
  // 16-bit inputs: round where the spec's reference rounds (it computes in the
  // input type), so bfloat16 results agree to the last bit more often.
  constexpr bool k16 = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  auto rnd = [](C x) -> C {
    if constexpr (k16) return static_cast<C>(load(store<T>(x)));
    else return x;
  };
  const C sqrt_scale = rnd(static_cast<C>(std::sqrt(static_cast<double>(scale))));
  if constexpr (k16) {
    for (C& e : kall) e = rnd(e * sqrt_scale);
  }

  parallel_for(batch * hq * sq, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, total * (dq + dv))), [&](int64_t s0, int64_t s1) {
    std::vector<C> bias(static_cast<size_t>(total)), score(static_cast<size_t>(total)), qrow(static_cast<size_t>(dq)), acc(static_cast<size_t>(dv));
    for (int64_t row = s0; row < s1; ++row) {
      const int64_t i = row % sq, h = (row / sq) % hq, b = row / (sq * hq);
      const int64_t kh = h / group;
      const int64_t offset = nonpad && !has_past ? valid[b] - sq : past;
      // Bias for this query row.
      bool any_open = false;
      for (int64_t j = 0; j < total; ++j) {
        C bj = 0;
        if (mask) {
          if (j >= mlen) {
            bj = ninf;
          } else {
            const int64_t mi = b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3];
            if (mdt == DType::kBool) bj = static_cast<const uint8_t*>(mask->data)[mi] ? C(0) : ninf;
            else if (mdt == DType::kFloat32) bj = static_cast<C>(as_float<float>(mask->data, mi));
            else if (mdt == DType::kFloat16) bj = static_cast<C>(as_float<Half>(mask->data, mi));
            else if (mdt == DType::kBFloat16) bj = static_cast<C>(as_float<BFloat16>(mask->data, mi));
            else bj = static_cast<C>(static_cast<const double*>(mask->data)[mi]);
          }
        }
        if (causal && j > i + offset) bj = ninf;
        if (window) {
          const int64_t diff = i + offset - j;
          if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) bj = ninf;
        }
        if (nonpad && j >= valid[b]) bj = ninf;
        bias[j] = bj;
        any_open = any_open || bj != ninf;
      }
      const T* qp = qd + b * qv.sb + h * qv.sh + i * qv.ss;
      for (int64_t d = 0; d < dq; ++d) qrow[d] = static_cast<C>(load(qp[d]));
      if constexpr (k16) {
        for (int64_t d = 0; d < dq; ++d) qrow[d] = rnd(qrow[d] * sqrt_scale);
      }
      const C* kb = kall.data() + (b * hkv + kh) * total * dk;
      C mx = ninf;
      const bool raw_needed = qk_out && mode < 2;
      for (int64_t j = 0; j < total; ++j) {
        if (bias[j] == ninf && !raw_needed) {  // masked key: its product cannot matter
          if (qk_out && mode == 2) qk_out->as<T>()[row * total + j] = store<T>(ninf);
          score[j] = ninf;
          continue;
        }
        const C* kr = kb + j * dk;
        C dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int64_t d = 0; d < dq; ++d) dot += qrow[d] * kr[d];
        C sc = k16 ? rnd(dot) : dot * static_cast<C>(scale);
        if (softcap > 0) sc = rnd(static_cast<C>(softcap) * rnd(std::tanh(rnd(sc / static_cast<C>(softcap)))));
        if (qk_out && mode < 2) qk_out->as<T>()[row * total + j] = store<T>(sc);
        sc = rnd(sc + bias[j]);
        if (qk_out && mode == 2) qk_out->as<T>()[row * total + j] = store<T>(sc);
        score[j] = sc;
        mx = std::max(mx, sc);
      }
      C sum = 0;
      const C shift = mx == ninf ? C(0) : mx;
      for (int64_t j = 0; j < total; ++j) {
        score[j] = rnd(std::exp(rnd(score[j] - shift)));
        // numpy sums float16 in float, but ml_dtypes' bfloat16 step by step.
        sum = std::is_same_v<T, BFloat16> ? rnd(sum + score[j]) : sum + score[j];
      }
      sum = rnd(sum);
      if (!any_open || sum == 0) std::fill(score.begin(), score.end(), C(0));
      else if constexpr (k16) for (int64_t j = 0; j < total; ++j) score[j] = rnd(score[j] / sum);
      else for (int64_t j = 0; j < total; ++j) score[j] /= sum;
      if (qk_out && mode == 3)
        for (int64_t j = 0; j < total; ++j) qk_out->as<T>()[row * total + j] = store<T>(score[j]);
      std::fill(acc.begin(), acc.end(), C(0));
      const C* vb = vall.data() + (b * hkv + kh) * total * dv;
      for (int64_t j = 0; j < total; ++j) {
        const C p = score[j];
        if (p == 0) continue;
        const C* vr = vb + j * dv;
#pragma omp simd
        for (int64_t d = 0; d < dv; ++d) acc[d] += p * vr[d];
      }
      T* yp = yd + b * yv.sb + h * yv.sh + i * yv.ss;
      for (int64_t d = 0; d < dv; ++d) yp[d] = store<T>(acc[d]);
    }
  });
  return Status::Ok();
}

Status attention(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = attention_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("Q must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(Attention, "cpu").types(float_types()).run(attention);

}  // namespace
}  // namespace openacl::kernels::cpu
