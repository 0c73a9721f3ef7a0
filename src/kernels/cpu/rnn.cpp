// RNN, GRU and LSTM (opset 7..22): one time loop per direction sharing the
// input projection (X·Wᵀ for all steps at once) and a per-step recurrent
// projection (H·Rᵀ), followed by the cell's gate arithmetic.
//
// Gate orders (ONNX): RNN i; GRU z, r, h; LSTM i, o, f, c; peepholes i, o, f.
// sequence_lens: a batch entry stops at its length; later Y rows are zero and
// Y_h / Y_c keep the state of its last valid step (reverse runs len-1 .. 0).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

enum class Cell { kRnn, kGru, kLstm };

struct Act {
  enum Kind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus };
  Kind kind = kTanh;
  float alpha = 0, beta = 0;
  template <class C>
  C operator()(C x) const {
    switch (kind) {
      case kRelu: return x > 0 ? x : C(0);
      case kTanh: return std::tanh(x);
      case kSigmoid: return C(1) / (C(1) + std::exp(-x));
      case kAffine: return C(alpha) * x + C(beta);
      case kLeakyRelu: return x >= 0 ? x : C(alpha) * x;
      case kThresholdedRelu: return x > C(alpha) ? x : C(0);
      case kScaledTanh: return C(alpha) * std::tanh(C(beta) * x);
      case kHardSigmoid: return std::clamp(C(alpha) * x + C(beta), C(0), C(1));
      case kElu: return x >= 0 ? x : C(alpha) * (std::exp(x) - C(1));
      case kSoftsign: return x / (C(1) + std::fabs(x));
      case kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

bool parse_act(std::string name, float alpha, float beta, bool has_alpha, bool has_beta, Act* a) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  a->alpha = alpha;
  a->beta = beta;
  if (name == "relu") a->kind = Act::kRelu;
  else if (name == "tanh") a->kind = Act::kTanh;
  else if (name == "sigmoid") a->kind = Act::kSigmoid;
  else if (name == "affine") { a->kind = Act::kAffine; if (!has_alpha) a->alpha = 1; }
  else if (name == "leakyrelu") { a->kind = Act::kLeakyRelu; if (!has_alpha) a->alpha = 0.01f; }
  else if (name == "thresholdedrelu") { a->kind = Act::kThresholdedRelu; if (!has_alpha) a->alpha = 1; }
  else if (name == "scaledtanh") { a->kind = Act::kScaledTanh; if (!has_alpha) a->alpha = 1; if (!has_beta) a->beta = 1; }
  else if (name == "hardsigmoid") { a->kind = Act::kHardSigmoid; if (!has_alpha) a->alpha = 0.2f; if (!has_beta) a->beta = 0.5f; }
  else if (name == "elu") { a->kind = Act::kElu; if (!has_alpha) a->alpha = 1; }
  else if (name == "softsign") a->kind = Act::kSoftsign;
  else if (name == "softplus") a->kind = Act::kSoftplus;
  else return false;
  return true;
}

// out[m, n] = sum_k a[m, k] * b[n, k] (+= when accumulate).
template <class C>
void matmul_bt(const C* a, const C* b, C* out, int64_t m, int64_t n, int64_t k, bool accumulate) {
  parallel_for(m * n, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, k)), [&](int64_t s, int64_t e) {
    for (int64_t idx = s; idx < e; ++idx) {
      const C* ar = a + (idx / n) * k;
      const C* br = b + (idx % n) * k;
      C acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int64_t j = 0; j < k; ++j) acc += ar[j] * br[j];
      out[idx] = accumulate ? out[idx] + acc : acc;
    }
  });
}

template <class T, class C>
std::vector<C> to_compute(const Tensor& t) {
  std::vector<C> v(static_cast<size_t>(t.elements()));
  const T* p = t.as<T>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<C>(load(p[i]));
  return v;
}

template <class T>
Status recurrent_typed(KernelContext& ctx, Cell cell) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  const graph::AttributeMap& at = ctx.attrs();
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& rw = ctx.input(2);
  const std::string direction = at.get_string("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = at.get_int("layout", 0);
  if (x.rank() != 3 || w.rank() != 3 || rw.rank() != 3) return ctx.fail("X, W and R must be 3-D");
  for (size_t i = 1; i < ctx.num_inputs(); ++i)
    if (i != 4 && ctx.has_input(i) && ctx.input(i).dtype != x.dtype) return ctx.fail("input %zu must have X's dtype", i);
  const int64_t seq = x.dims[layout ? 1 : 0], batch = x.dims[layout ? 0 : 1], in = x.dims[2];
  if (w.dims[0] != dirs || w.dims[1] % gates != 0) return ctx.fail("W does not match the direction count or gates");
  const int64_t hid = w.dims[1] / gates, gh = gates * hid;
  if (w.dims[2] != in) return ctx.fail("W's input size %lld differs from X's %lld", (long long)w.dims[2], (long long)in);
  if (rw.dims != std::vector<int64_t>{dirs, gh, hid}) return ctx.fail("R must be [num_directions, %lld, %lld]", (long long)gh, (long long)hid);
  auto input_if = [&](size_t i) -> const Tensor* {
    return ctx.has_input(i) && ctx.input(i).elements() > 0 ? &ctx.input(i) : nullptr;
  };
  const Tensor* bias = input_if(3);
  const Tensor* lens = input_if(4);
  const Tensor* h0 = input_if(5);
  const Tensor* c0 = cell == Cell::kLstm ? input_if(6) : nullptr;
  const Tensor* peep = cell == Cell::kLstm ? input_if(7) : nullptr;
  if (bias && bias->elements() != dirs * 2 * gh) return ctx.fail("B must be [num_directions, %lld]", (long long)(2 * gh));
  if (peep && peep->elements() != dirs * 3 * hid) return ctx.fail("P must be [num_directions, %lld]", (long long)(3 * hid));
  const std::vector<int64_t> state_dims = layout ? std::vector<int64_t>{batch, dirs, hid} : std::vector<int64_t>{dirs, batch, hid};
  if (h0 && h0->dims != state_dims) return ctx.fail("initial_h has the wrong shape");
  if (c0 && c0->dims != state_dims) return ctx.fail("initial_c has the wrong shape");
  std::vector<int64_t> seq_len(static_cast<size_t>(batch), seq);
  if (lens) {
    if (lens->elements() != batch) return ctx.fail("sequence_lens must have batch_size entries");
    if (lens->dtype != DType::kInt32 && lens->dtype != DType::kInt64) return ctx.fail("sequence_lens must be int32");
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t v = lens->dtype == DType::kInt64 ? lens->as<int64_t>()[b] : lens->as<int32_t>()[b];
      if (v < 0 || v > seq) return ctx.fail("sequence_lens[%lld] = %lld is out of range", (long long)b, (long long)v);
      seq_len[b] = v;
    }
  }
  // Activations: per direction, `per` functions.
  const size_t per = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
  std::vector<Act> acts(per * dirs);
  {
    const graph::Attribute* na = at.find("activations");
    const std::vector<std::string>* names = na && na->kind == graph::Attribute::Kind::kStrings ? &na->strings : nullptr;
    auto alphas = at.get_floats("activation_alpha");
    auto betas = at.get_floats("activation_beta");
    static const char* defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const int ci = cell == Cell::kRnn ? 0 : cell == Cell::kGru ? 1 : 2;
    for (size_t i = 0; i < acts.size(); ++i) {
      std::string name = defaults[ci][i % per];
      if (names && !names->empty()) {
        if (names->size() != acts.size() && names->size() != per) return ctx.fail("activations has %zu entries", names->size());
        name = (*names)[i % names->size()];
      }
      const bool ha = alphas && i < alphas->size(), hb = betas && i < betas->size();
      if (!parse_act(name, ha ? (*alphas)[i] : 0.f, hb ? (*betas)[i] : 0.f, ha, hb, &acts[i]))
        return ctx.fail("activation '%s' is not supported", name.c_str());
    }
  }
  const bool has_clip = at.has("clip");
  const C clip = static_cast<C>(at.get_float("clip", 0.f));
  const bool lbr = at.get_int("linear_before_reset", 0) != 0;
  const bool input_forget = at.get_int("input_forget", 0) != 0;

  const std::vector<C> xv = to_compute<T, C>(x), wv = to_compute<T, C>(w), rv = to_compute<T, C>(rw);
  const std::vector<C> bv = bias ? to_compute<T, C>(*bias) : std::vector<C>();
  const std::vector<C> pv = peep ? to_compute<T, C>(*peep) : std::vector<C>();
  const std::vector<C> h0v = h0 ? to_compute<T, C>(*h0) : std::vector<C>(), c0v = c0 ? to_compute<T, C>(*c0) : std::vector<C>();

  Tensor* y = ctx.has_output(0) ? &ctx.output(0) : nullptr;
  Tensor* yh = ctx.has_output(1) ? &ctx.output(1) : nullptr;
  Tensor* yc = ctx.num_outputs() > 2 && ctx.has_output(2) ? &ctx.output(2) : nullptr;
  if (y) std::memset(y->data, 0, y->bytes());

  // X rows in time order: row (t, b) of [seq * batch, in].
  std::vector<C> xs(static_cast<size_t>(seq * batch * in));
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t b = 0; b < batch; ++b) {
      const C* src = xv.data() + (layout ? (b * seq + t) : (t * batch + b)) * in;
      std::copy(src, src + in, xs.data() + (t * batch + b) * in);
    }
  std::vector<C> xw(static_cast<size_t>(seq * batch * gh)), hr(static_cast<size_t>(batch * gh));
  std::vector<C> h(static_cast<size_t>(batch * hid)), c(static_cast<size_t>(batch * hid)), hn(h.size()), rh(h.size());
  auto state_at = [&](int64_t d, int64_t b) { return layout ? (b * dirs + d) * hid : (d * batch + b) * hid; };
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const C* wd = wv.data() + d * gh * in;
    const C* rd = rv.data() + d * gh * hid;
    const C* wb = bias ? bv.data() + d * 2 * gh : nullptr;
    const C* rb = bias ? wb + gh : nullptr;
    const C* pd = peep ? pv.data() + d * 3 * hid : nullptr;
    const Act* af = &acts[d * per];
    matmul_bt<C>(xs.data(), wd, xw.data(), seq * batch, gh, in, false);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hid; ++j) {
        h[b * hid + j] = h0 ? h0v[state_at(d, b) + j] : C(0);
        c[b * hid + j] = c0 ? c0v[state_at(d, b) + j] : C(0);
      }
    auto clipped = [&](C v) { return has_clip ? std::clamp(v, -clip, clip) : v; };
    for (int64_t step = 0; step < seq; ++step) {
      // H·Rᵀ for every gate; GRU's h gate needs (r ⊙ H)·Rhᵀ when linear_before_reset = 0.
      const int64_t rgates = cell == Cell::kGru && !lbr ? 2 : gates;
      matmul_bt<C>(h.data(), rd, hr.data(), batch, rgates * hid, hid, false);
      if (rgates != gates) {
        // hr is [batch, gh] but only the first 2*hid columns of each row were
        // written contiguously as [batch, 2*hid]: spread them out.
        for (int64_t b = batch - 1; b >= 0; --b)
          for (int64_t j = 2 * hid - 1; j >= 0; --j) hr[b * gh + j] = hr[b * 2 * hid + j];
      }
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = seq_len[b];
        if (step >= len) continue;
        const int64_t t = reverse ? len - 1 - step : step;
        const C* xg = xw.data() + (t * batch + b) * gh;
        C* hg = hr.data() + b * gh;
        C* hb = h.data() + b * hid;
        C* cb = c.data() + b * hid;
        C* out = hn.data() + b * hid;
        auto pre = [&](int64_t g, int64_t j) {
          C v = xg[g * hid + j] + hg[g * hid + j];
          if (wb) v += wb[g * hid + j] + rb[g * hid + j];
          return v;
        };
        if (cell == Cell::kRnn) {
          for (int64_t j = 0; j < hid; ++j) out[j] = af[0](clipped(pre(0, j)));
        } else if (cell == Cell::kGru) {
          C* r = rh.data() + b * hid;
          for (int64_t j = 0; j < hid; ++j) r[j] = af[0](clipped(pre(1, j)));
          if (!lbr) {
            // (r ⊙ H)·Rhᵀ for this batch row.
            const C* rh_w = rd + 2 * hid * hid;
            for (int64_t j = 0; j < hid; ++j) {
              C acc = 0;
              for (int64_t k = 0; k < hid; ++k) acc += r[k] * hb[k] * rh_w[j * hid + k];
              hg[2 * hid + j] = acc;
            }
          }
          for (int64_t j = 0; j < hid; ++j) {
            const C z = af[0](clipped(pre(0, j)));
            C hpre;
            if (lbr) {
              hpre = xg[2 * hid + j] + (wb ? wb[2 * hid + j] : C(0)) + r[j] * (hg[2 * hid + j] + (wb ? rb[2 * hid + j] : C(0)));
            } else {
              hpre = pre(2, j);
            }
            const C hh = af[1](clipped(hpre));
            out[j] = (C(1) - z) * hh + z * hb[j];
          }
        } else {
          for (int64_t j = 0; j < hid; ++j) {
            const C cprev = cb[j];
            C ig = pre(0, j), fg = pre(2, j), og = pre(1, j);
            if (pd) {
              ig += pd[j] * cprev;
              fg += pd[2 * hid + j] * cprev;
            }
            const C i = af[0](clipped(ig));
            const C f = input_forget ? C(1) - i : af[0](clipped(fg));
            const C g = af[1](clipped(pre(3, j)));
            const C cn = f * cprev + i * g;
            if (pd) og += pd[hid + j] * cn;
            const C o = af[0](clipped(og));
            cb[j] = cn;
            out[j] = o * af[2](cn);
          }
        }
        std::copy(out, out + hid, hb);
        if (y) {
          T* yd = y->as<T>() + (layout ? ((b * seq + t) * dirs + d) : ((t * dirs + d) * batch + b)) * hid;
          for (int64_t j = 0; j < hid; ++j) yd[j] = store<T>(hb[j]);
        }
      }
    }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hid; ++j) {
        if (yh) yh->as<T>()[state_at(d, b) + j] = store<T>(h[b * hid + j]);
        if (yc) yc->as<T>()[state_at(d, b) + j] = store<T>(c[b * hid + j]);
      }
  }
  return Status::Ok();
}

template <Cell K>
Status recurrent(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = recurrent_typed<typename decltype(tag)::type>(ctx, K); }))
    return ctx.fail("X must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(RNN, "cpu").types(float_types()).run(recurrent<Cell::kRnn>);
OPENACL_REGISTER_KERNEL(GRU, "cpu").types(float_types()).run(recurrent<Cell::kGru>);
OPENACL_REGISTER_KERNEL(LSTM, "cpu").types(float_types()).run(recurrent<Cell::kLstm>);

}  // namespace
}  // namespace openacl::kernels::cpu
