// Pooling: MaxPool (+ Indices, storage_order), AveragePool
// (count_include_pad), LpPool, all with dilations / ceil_mode / auto_pad, and
// the Global variants. float32 MaxPool (without Indices) and AveragePool run
// on oneDNN's pooling where it computes exactly what the reference does (see
// dnnl_pool_ok); everything else takes direct loops parallel over (N, C)
// planes: pooling is memory-bound, the windows are small, and each plane is
// one contiguous read. MaxPool / AveragePool / GlobalAveragePool also read and
// write the blocked layouts of blocked_layout.h when the layout pass marks
// their tensors.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/simd8.h"

namespace openacl::kernels::cpu {
namespace {

enum class PoolKind { kMax, kAvg, kLp };

struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;
  int64_t p = 2;
  bool col_major = false;  // MaxPool storage_order = 1
};

template <class T>
void pool_ref(const WindowGeom& g, const PoolParams& pp, const T* x, T* y, int64_t* indices) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t isz = g.in_size(), osz = g.out_size();
  parallel_for(g.N * g.C, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, osz * g.k_size())), [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const T* xp = x + nc * isz;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            const int64_t st[3] = {o0 * g.s[0] - g.pb[0], o1 * g.s[1] - g.pb[1], o2 * g.s[2] - g.pb[2]};
            Acc acc = pp.kind == PoolKind::kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
            int64_t best = -1, counted = 0, padded = 0;
            for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
              const int64_t i0 = st[0] + k0 * g.d[0];
              if (i0 >= g.in[0] + g.pe[0]) break;
              const bool in0 = i0 >= 0 && i0 < g.in[0];
              for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                const int64_t i1 = st[1] + k1 * g.d[1];
                if (i1 >= g.in[1] + g.pe[1]) break;
                const bool in1 = in0 && i1 >= 0 && i1 < g.in[1];
                for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                  const int64_t i2 = st[2] + k2 * g.d[2];
                  if (i2 >= g.in[2] + g.pe[2]) break;
                  ++padded;
                  if (!in1 || i2 < 0 || i2 >= g.in[2]) continue;
                  const int64_t off = (i0 * g.in[1] + i1) * g.in[2] + i2;
                  const Acc v = static_cast<Acc>(load(xp[off]));
                  ++counted;
                  if (pp.kind == PoolKind::kMax) {
                    if (v > acc || best < 0) {
                      acc = v;
                      best = pp.col_major ? i0 + i1 * g.in[0] + i2 * g.in[0] * g.in[1] : off;
                    }
                  } else if (pp.kind == PoolKind::kAvg) {
                    acc += v;
                  } else {
                    acc += static_cast<Acc>(std::pow(std::fabs(v), static_cast<Acc>(pp.p)));
                  }
                }
              }
            }
            const int64_t oi = (o0 * g.out[1] + o1) * g.out[2] + o2;
            if (pp.kind == PoolKind::kAvg) {
              const int64_t n = pp.count_include_pad ? padded : counted;
              acc = n > 0 ? acc / static_cast<Acc>(n) : Acc(0);
            } else if (pp.kind == PoolKind::kLp) {
              acc = static_cast<Acc>(std::pow(acc, Acc(1) / static_cast<Acc>(pp.p)));
            }
            y[nc * osz + oi] = store<T>(acc);
            if (indices) indices[nc * osz + oi] = best < 0 ? -1 : nc * isz + best;
          }
    }
  });
}

PoolParams pool_params(const graph::AttributeMap& a, PoolKind kind) {
  PoolParams pp;
  pp.kind = kind;
  pp.count_include_pad = a.get_int("count_include_pad", 0) != 0;
  pp.p = a.get_int("p", 2);
  pp.col_major = a.get_int("storage_order", 0) != 0;
  return pp;
}

#if OPENACL_HAVE_DNNL
// oneDNN pooling for one input shape; ok false: use the reference.
struct PoolEntry {
  bool ok = false;
  dnnl::primitive prim;
  dnnl::memory::desc src, dst, scratch_md;  // src / dst: the tensors' layouts
  size_t scratch_bytes = 0;
  // oneDNN's plain-layout pooling is a slow generic loop: a plain X / Y then
  // goes through the blocked layout around the primitive (src_int, dst_int).
  bool reorder_src = false, reorder_dst = false;
  dnnl::memory::desc src_int, dst_int;
  dnnl_util::Reorder src_reorder, dst_reorder;
  dnnl_util::ArgSets args;  // the primitive's execute arguments, reused
};

bool slow_pool_impl(const dnnl::primitive_desc& pd) {
  const std::string name = pd.impl_info_str();
  return name.find("simple") != std::string::npos || name.find("ref") != std::string::npos;
}

// Whether oneDNN's pooling computes what pool_ref does for this geometry, and
// its right padding (*pr, per promoted axis). oneDNN derives the output size
// with floor, so ceil_mode becomes a larger right pad. The cases that differ:
//  - a window with no tap inside the input (max: the reference gives -inf,
//    average: 0; oneDNN's results there are not specified): refused;
//  - count_include_pad: the reference counts taps inside the *explicit* pads
//    only, oneDNN divides by the whole window: refused when a window reaches
//    past the explicit right pad (ceil_mode).
bool dnnl_pool_ok(const WindowGeom& g, const PoolParams& pp, int64_t pr[kMaxSpatial]) {
  if (pp.kind == PoolKind::kLp) return false;
  for (int i = 0; i < kMaxSpatial; ++i) {
    const int64_t eff = (g.k[i] - 1) * g.d[i] + 1;
    const int64_t need = (g.out[i] - 1) * g.s[i] + eff - g.in[i] - g.pb[i];  // right pad the last window reaches
    if (g.pb[i] < 0 || g.pe[i] < 0) return false;
    if (pp.kind == PoolKind::kAvg && pp.count_include_pad && need > g.pe[i]) return false;
    pr[i] = std::max(need, g.pe[i]);
    for (int64_t o = 0; o < g.out[i]; ++o) {
      bool inside = false;
      for (int64_t k = 0; k < g.k[i] && !inside; ++k) {
        const int64_t at = o * g.s[i] - g.pb[i] + k * g.d[i];
        inside = at >= 0 && at < g.in[i];
      }
      if (!inside) return false;
    }
  }
  return true;
}

// xb / yb: the blocks of X and Y (0: plain).
std::shared_ptr<const PoolEntry> build_pool(const WindowGeom& g, const PoolParams& pp, const std::vector<int64_t>& xd,
                                            int64_t xb, int64_t yb) {
  auto e = std::make_shared<PoolEntry>();
  int64_t pr[kMaxSpatial];
  if (g.N == 0 || g.C == 0 || g.out_size() == 0 || !dnnl_pool_ok(g, pp, pr)) return e;
  try {
    using dnnl::memory;
    memory::dims strides, kernel, dil, pl, prd;
    for (int i = kMaxSpatial - g.nsp; i < kMaxSpatial; ++i) {
      strides.push_back(g.s[i]);
      kernel.push_back(g.k[i]);
      dil.push_back(g.d[i] - 1);
      pl.push_back(g.pb[i]);
      prd.push_back(pr[i]);
    }
    e->src = dnnl_util::f32_desc(xd, xb);
    e->dst = dnnl_util::f32_desc(geom_out_dims(g), yb);
    const dnnl::algorithm alg = pp.kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                : pp.count_include_pad    ? dnnl::algorithm::pooling_avg_include_padding
                                                          : dnnl::algorithm::pooling_avg_exclude_padding;
    auto make_pd = [&](const memory::desc& src, const memory::desc& dst) {
      const dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel, dil,
                                             pl, prd);
      return dnnl::pooling_v2_forward::primitive_desc(d, dnnl_util::base_attr(), dnnl_util::engine());
    };
    auto pd = make_pd(e->src, e->dst);
    const int64_t cb = channel_block();
    if (slow_pool_impl(pd) && cb && g.C % cb == 0 && (!xb || !yb)) {
      try {
        auto bpd = make_pd(dnnl_util::f32_desc(xd, cb), dnnl_util::f32_desc(geom_out_dims(g), cb));
        if (!slow_pool_impl(bpd)) {
          pd = bpd;
          e->reorder_src = xb == 0;
          e->reorder_dst = yb == 0;
          e->src_int = pd.src_desc();
          e->dst_int = pd.dst_desc();
          if (e->reorder_src) e->src_reorder.init(e->src, e->src_int);
          if (e->reorder_dst) e->dst_reorder.init(e->dst_int, e->dst);
        }
      } catch (const dnnl::error&) {
      }
    }
    e->scratch_md = pd.scratchpad_desc();
    e->scratch_bytes = e->scratch_md.get_size();
    e->prim = dnnl::pooling_v2_forward(pd);
    e->args.add(DNNL_ARG_SRC, e->reorder_src ? e->src_int : e->src);
    e->args.add(DNNL_ARG_DST, e->reorder_dst ? e->dst_int : e->dst);
    if (e->scratch_bytes) e->args.add(DNNL_ARG_SCRATCHPAD, e->scratch_md);
    e->ok = true;
  } catch (const dnnl::error&) {
    e->ok = false;
  }
  return e;
}
#endif

// MaxPool / AveragePool / LpPool. float32 goes through oneDNN where
// dnnl_pool_ok allows; X and Y may be blocked (then their shapes are static).
class PoolKernel final : public Kernel {
 public:
  PoolKernel(const KernelInit& init, PoolKind kind) : pp_(pool_params(init.attrs(), kind)) {
    with_indices_ = kind == PoolKind::kMax && init.num_outputs() > 1 && init.output(1).dtype != DType::kUndefined;
    const graph::TensorType& xt = init.input(0);
    if (init.num_outputs() > 0) {
      xb_ = blocked_block(init.attrs(), false, 0, xt);
      yb_ = blocked_block(init.attrs(), true, 0, init.output(0));
    }
    if ((xb_ || yb_) && xt.shape)
      for (const auto& d : *xt.shape) static_dims_.push_back(d.value);
    // A static shape's geometry and output dims, once (run() then reads no
    // attribute and allocates nothing for them).
    if (xt.shape && graph::fully_known(*xt.shape)) {
      for (const auto& d : *xt.shape) geom_dims_.push_back(d.value);
      geom_ok_ = pool_geom(init.attrs(), geom_dims_, &geom_).empty();
      if (geom_ok_) geom_od_ = geom_out_dims(geom_);
    }
#if OPENACL_HAVE_DNNL
    if (xt.dtype == DType::kFloat32 && !with_indices_ && geom_ok_)
      cache_.put_static(geom_dims_, {}, 0, build_pool(geom_, pp_, geom_dims_, xb_, yb_));
#endif
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    WindowGeom g = geom_;
    std::vector<int64_t> other_od;  // the output dims of a shape other than the compiled one
    if (!geom_ok_ || x.dims != geom_dims_) {
      const std::string err = pool_geom(ctx.attrs(), x.dims, &g);
      if (!err.empty()) return ctx.fail("%s", err.c_str());
      other_od = geom_out_dims(g);
    }
    const std::vector<int64_t>& od = other_od.empty() ? geom_od_ : other_od;
    if (pp_.kind == PoolKind::kLp && pp_.p < 1) return ctx.fail("p must be >= 1");
    if ((xb_ || yb_) && x.dims != static_dims_)
      return ctx.fail("blocked input of a shape other than the compiled one (internal error)");
    Tensor* y = &ctx.output(0);
    if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
    Tensor* ind = nullptr;
    if (pp_.kind == PoolKind::kMax && ctx.has_output(1)) {
      ind = &ctx.output(1);
      if (!ind->data || ind->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(1, od, &ind));
    }
    if (y->elements() == 0) return Status::Ok();
#if OPENACL_HAVE_DNNL
    if (x.dtype == DType::kFloat32 && !ind) {
      const std::shared_ptr<const PoolEntry> e =
          cache_.get(x.dims, {}, 0, [&] { return build_pool(g, pp_, x.dims, xb_, yb_); });  // blocked: compiled dims only
      if (e && e->ok) {
        using namespace dnnl_util;
        // One per-thread buffer: scratchpad, then the internal blocked X and Y.
        const size_t s_bytes = align64(e->scratch_bytes);
        const size_t x_bytes = e->reorder_src ? align64(e->src_int.get_size()) : 0;
        const size_t y_bytes = e->reorder_dst ? align64(e->dst_int.get_size()) : 0;
        char* buf = static_cast<char*>(scratch(s_bytes + x_bytes + y_bytes));
        const void* xi = x.data;
        void* yo = e->reorder_dst ? buf + s_bytes + x_bytes : y->data;
        if (e->reorder_src) {
          xi = buf + s_bytes;
          e->src_reorder.run(x.data, buf + s_bytes);
        }
        {
          ArgSets::Lease a = e->args.take();
          a.bind(DNNL_ARG_SRC, xi);
          a.bind(DNNL_ARG_DST, yo);
          if (e->scratch_bytes) a.bind(DNNL_ARG_SCRATCHPAD, buf);
          a.execute(e->prim);
        }
        if (e->reorder_dst) e->dst_reorder.run(yo, y->data);
        stream().wait();
        return Status::Ok();
      }
    }
#endif
    int64_t* ip = ind ? ind->as<int64_t>() : nullptr;
    if (xb_ || yb_) {  // the reference reads and writes plain: convert around it (rare: oneDNN declined)
      std::vector<float> xp(static_cast<size_t>(x.elements())), yp(static_cast<size_t>(y->elements()));
      if (xb_) blocked_to_plain(x.as<float>(), xp.data(), x.dims, xb_);
      else std::copy(x.as<float>(), x.as<float>() + x.elements(), xp.data());
      pool_ref<float>(g, pp_, xp.data(), yp.data(), ip);
      if (yb_) plain_to_blocked(yp.data(), y->as<float>(), od, yb_);
      else std::copy(yp.begin(), yp.end(), y->as<float>());
      return Status::Ok();
    }
    const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      pool_ref<T>(g, pp_, x.as<T>(), y->as<T>(), ip);
    });
    return ok ? Status::Ok() : ctx.fail("unsupported type");
  }

 private:
  PoolParams pp_;
  bool with_indices_ = false;
  int64_t xb_ = 0, yb_ = 0;  // blocks of X and Y (0: plain)
  std::vector<int64_t> static_dims_;  // X's dims when blocked
  std::vector<int64_t> geom_dims_, geom_od_;  // a static X's dims and the output dims for them
  WindowGeom geom_;                           // and its geometry (valid where geom_ok_)
  bool geom_ok_ = false;
#if OPENACL_HAVE_DNNL
  dnnl_util::ShapeCache<PoolEntry> cache_;
#endif
};

template <PoolKind K>
Status make_pool(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  *out = std::make_unique<PoolKernel>(init, K);
  return Status::Ok();
}

// GlobalAveragePool in float32, four independent 8-lane sums (the add
// latency, not the loads, bounds one accumulator). Rows [lo, hi) of sp
// contiguous values.
OPENACL_AVX2_CLONES void average_rows_f32(const float* x, float* y, int64_t lo, int64_t hi, int64_t sp) {
  for (int64_t i = lo; i < hi; ++i) {
    const float* v = x + i * sp;
    v8f a0 = {}, a1 = {}, a2 = {}, a3 = {};
    int64_t j = 0;
    for (; j + 32 <= sp; j += 32) {
      a0 += ld8(v + j);
      a1 += ld8(v + j + 8);
      a2 += ld8(v + j + 16);
      a3 += ld8(v + j + 24);
    }
    for (; j + 8 <= sp; j += 8) a0 += ld8(v + j);
    float s = hsum8((a0 + a1) + (a2 + a3));
    for (; j < sp; ++j) s += v[j];
    y[i] = sp ? s / static_cast<float>(sp) : 0.f;
  }
}

// The same over a blocked X (layout pass): channel blocks [lo, hi) of b (8 or
// 16) channels, sp spatial vectors each, C channels per image (the last
// block's padding lanes, where b does not divide C, are summed and dropped);
// Y ([N, C, 1..]) is plain.
OPENACL_AVX2_CLONES void average_blocked_f32(const float* x, float* y, int64_t lo, int64_t hi, int64_t sp,
                                             int64_t b, int64_t C) {
  const int64_t blocks = (C + b - 1) / b;  // per image
  for (int64_t nb = lo; nb < hi; ++nb)
    for (int64_t c0 = 0; c0 < b; c0 += 8) {
      const float* v = x + nb * sp * b + c0;
      v8f a0 = {}, a1 = {}, a2 = {}, a3 = {};
      int64_t j = 0;
      for (; j + 4 <= sp; j += 4) {
        a0 += ld8(v + j * b);
        a1 += ld8(v + (j + 1) * b);
        a2 += ld8(v + (j + 2) * b);
        a3 += ld8(v + (j + 3) * b);
      }
      for (; j < sp; ++j) a0 += ld8(v + j * b);
      const v8f s = (a0 + a1) + (a2 + a3);
      const int64_t ch = nb % blocks * b + c0;  // channel of lane 0
      float* out = y + nb / blocks * C + ch;
      for (int c = 0; c < 8 && ch + c < C; ++c) out[c] = sp ? s[c] / static_cast<float>(sp) : 0.f;
    }
}

template <PoolKind K>
Status global_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("input must have rank >= 2");
  int64_t sp = 1;
  for (size_t i = 2; i < x.dims.size(); ++i) sp *= x.dims[i];
  Tensor* y = &ctx.output(0);
  // Y is [N, C, 1, ...]: checked in place (a planned Y needs no vector per run).
  bool planned = y->data && y->dims.size() == x.dims.size() && y->dims[0] == x.dims[0] && y->dims[1] == x.dims[1];
  for (size_t i = 2; planned && i < y->dims.size(); ++i) planned = y->dims[i] == 1;
  if (!planned) {
    std::vector<int64_t> od = x.dims;
    std::fill(od.begin() + 2, od.end(), int64_t{1});
    OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
  }
  const int64_t p = ctx.attrs().get_int("p", 2);
  if (K == PoolKind::kMax && sp == 0 && y->elements() > 0) return ctx.fail("GlobalMaxPool of an empty window");
  if constexpr (K == PoolKind::kAvg) {
    // A blocked X (layout pass): per block of channels, sum the spatial
    // vectors; Y ([N, C, 1..]) is plain (for it plain and blocked coincide).
    if (const int64_t b = blocked_block(ctx.attrs(), false, 0, x.dtype, x.dims)) {
      const float* xp = x.as<float>();
      float* yp = y->as<float>();
      const int64_t C = x.dims[1], blocks = x.dims[0] * ((C + b - 1) / b);  // padded blocks too
      parallel_for(blocks, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, sp * b)),
                   [&](int64_t lo, int64_t hi) { average_blocked_f32(xp, yp, lo, hi, sp, b, C); });
      return Status::Ok();
    }
  }
  if (K == PoolKind::kAvg && x.dtype == DType::kFloat32) {
    const float* xp = x.as<float>();
    float* yp = y->as<float>();
    parallel_for(y->elements(), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, sp)),
                 [&](int64_t b, int64_t e) { average_rows_f32(xp, yp, b, e, sp); });
    return Status::Ok();
  }
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* xp = x.as<T>();
    T* yp = y->as<T>();
    parallel_for(y->elements(), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, sp)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* v = xp + i * sp;
        Acc acc = K == PoolKind::kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
        for (int64_t j = 0; j < sp; ++j) {
          const Acc a = static_cast<Acc>(load(v[j]));
          if constexpr (K == PoolKind::kMax) acc = a > acc ? a : acc;
          else if constexpr (K == PoolKind::kAvg) acc += a;
          else acc += static_cast<Acc>(std::pow(std::fabs(a), static_cast<Acc>(p)));
        }
        if constexpr (K == PoolKind::kAvg) acc = sp ? acc / static_cast<Acc>(sp) : Acc(0);
        if constexpr (K == PoolKind::kLp) acc = static_cast<Acc>(std::pow(acc, Acc(1) / static_cast<Acc>(p)));
        yp[i] = store<T>(acc);
      }
    });
  });
  return ok ? Status::Ok() : ctx.fail("unsupported type");
}


std::vector<DType> max_pool_types() {
  std::vector<DType> t = float_types();
  t.push_back(DType::kInt8);
  t.push_back(DType::kUInt8);
  return t;
}

OPENACL_REGISTER_KERNEL(MaxPool, "cpu").types(max_pool_types()).create(make_pool<PoolKind::kMax>);
OPENACL_REGISTER_KERNEL(AveragePool, "cpu").types(float_types()).create(make_pool<PoolKind::kAvg>);
OPENACL_REGISTER_KERNEL(LpPool, "cpu").types(float_types()).create(make_pool<PoolKind::kLp>);
OPENACL_REGISTER_KERNEL(GlobalAveragePool, "cpu").types(float_types()).run(global_pool<PoolKind::kAvg>);
OPENACL_REGISTER_KERNEL(GlobalMaxPool, "cpu").types(float_types()).run(global_pool<PoolKind::kMax>);
OPENACL_REGISTER_KERNEL(GlobalLpPool, "cpu").types(float_types()).run(global_pool<PoolKind::kLp>);

}  // namespace
}  // namespace openacl::kernels::cpu
