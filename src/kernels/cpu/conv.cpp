// Conv: oneDNN convolution for float32 (primitive built once at compile time
// when the shapes are known, weights reordered once into the primitive's
// preferred layout when they are constant; built lazily per input shape
// otherwise), the reference loops for float64 and for cases oneDNN declines.
// float16/bfloat16 are widened to float and take the float32 path.
// Layouts: see conv_dnnl.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/page_alloc.h"
#include "graph/passes.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_fused.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/matmul_common.h"

namespace openacl::kernels::cpu {
namespace {

#if OPENACL_HAVE_DNNL
// With a residual sum and/or act.op set, the entry tries them as post-ops
// first (sum, then the activation); e->fused says whether it got them all.
// xb / yb: the blocks of X and Y (blocked_layout.h; 0 = plain).
std::shared_ptr<const ConvEntry> build_conv(const WindowGeom& g, const std::vector<int64_t>& xd,
                                            const std::vector<int64_t>& wd, bool has_bias, const float* const_w,
                                            const Activation& act, bool sum, int64_t xb, int64_t yb,
                                            bool with_post_op = true, PackCache* packs = nullptr) {
  auto e = std::make_shared<ConvEntry>();
  e->sum = with_post_op && sum;
  if (g.N == 0 || g.C == 0 || g.M == 0 || g.out_size() == 0) return e;
  try {
    using dnnl::memory;
    const int first = kMaxSpatial - g.nsp;
    memory::dims strides, dil, pl, pr;
    for (int i = first; i < kMaxSpatial; ++i) {
      strides.push_back(g.s[i]);
      dil.push_back(g.d[i] - 1);
      pl.push_back(g.pb[i]);
      pr.push_back(g.pe[i]);
    }
    std::vector<int64_t> wdims = wd;
    if (g.G > 1) {
      wdims[0] = g.M / g.G;
      wdims.insert(wdims.begin(), g.G);
    }
    const std::vector<int64_t> yd = geom_out_dims(g);
    e->src = dnnl_util::f32_desc(xd, xb);
    e->dst = dnnl_util::f32_desc(yd, yb);
    e->wei_user = dnnl_util::plain_f32(wdims);
    const memory::desc wei_any(dnnl_util::to_dims(wdims), memory::data_type::f32, memory::format_tag::any);
    if (has_bias) e->bias = dnnl_util::plain_f32({g.M});
    finish_conv_entry<dnnl::convolution_forward>(e.get(), xd, yd, const_w, [&](const memory::desc& src, const memory::desc& dst) {
      const auto desc = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                   dnnl::algorithm::convolution_direct, src, wei_any,
                                                                   e->bias, dst, strides, dil, pl, pr)
                                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                   dnnl::algorithm::convolution_direct, src, wei_any,
                                                                   dst, strides, dil, pl, pr);
      dnnl::primitive_attr attr = dnnl_util::base_attr();
      e->fused = false;
      if (with_post_op && (sum || !act.op.empty())) {
        dnnl::post_ops ops;
        if (sum) ops.append_sum(1.f);
        e->fused = act.op.empty() || act.add_post_op(&ops);
        if (e->fused) attr.set_post_ops(ops);
      }
      e->sum = e->fused && sum;
      return dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_util::engine());
    }, packs, g.nsp == 2 && prefers_channels_last(g.G, g.k_size(), xb, yb));
  } catch (const dnnl::error&) {
    e->ok = false;
  }
  if (!e->ok && with_post_op && (sum || !act.op.empty()))
    return build_conv(g, xd, wd, has_bias, const_w, act, sum, xb, yb, false, packs);
  return e;
}

#endif

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const KernelInit& init)
      : attrs_(init.attrs()),
        act_(Activation::of(init.attrs())),
        sum_(init.attrs().get_int(graph::kFusedSumAttr, 0) != 0) {
    w_const_ = init.constant(1) != nullptr;
    xb_ = blocked_block(init.attrs(), false, 0, init.input(0));
    if (init.num_outputs() > 0) yb_ = blocked_block(init.attrs(), true, 0, init.output(0));
    rb_ = sum_ ? blocked_block(init.attrs(), false, 3, init.input(3)) : yb_;
    if ((xb_ || yb_) && init.input(0).shape)
      for (const auto& d : *init.input(0).shape) static_dims_.push_back(d.value);
    // Shapes known at compile time: the geometry once, not per run.
    const graph::TensorType& wt = init.input(1);
    if (init.input(0).shape && graph::fully_known(*init.input(0).shape) && wt.shape && graph::fully_known(*wt.shape)) {
      for (const auto& d : *init.input(0).shape) geom_xd_.push_back(d.value);
      for (const auto& d : *wt.shape) geom_wd_.push_back(d.value);
      geom_ok_ = conv_geom(attrs_, geom_xd_, geom_wd_, &geom_).empty();
      if (geom_ok_) geom_od_ = geom_out_dims(geom_);
    }
    // Over a 1x1 plane no primitive is built: run() takes plane_1x1 instead,
    // with W packed for streaming where it is a float32 constant.
    if (geom_ok_ && is_plane_1x1(geom_)) {
      gemv_ = GemvPacked::make(const_f32(init.constant(1)), geom_.M, geom_.C, init.packs());
      return;
    }
#if OPENACL_HAVE_DNNL
    // Pointwise or depthwise over blocked activations: our loops, no
    // primitive (conv_1x1.h, conv_dw.h).
    if (geom_ok_ && init.input(0).dtype == DType::kFloat32 && rb_ == yb_ &&
        (Conv1x1::applies(geom_, xb_, yb_) || ConvDepthwise::applies(geom_, xb_, yb_))) {
      const graph::TensorData* bc = init.has_input(2) ? init.constant(2) : nullptr;
      const float* wf = dnnl_util::const_f32(init.constant(1));
      const float* bf = bc ? dnnl_util::const_f32(bc) : nullptr;
      if (wf && (!init.has_input(2) || bf)) {
        pointwise_ = Conv1x1::make(geom_, wf, bf, xb_, yb_, act_, init.packs());
        if (!pointwise_) depthwise_ = ConvDepthwise::make(geom_, wf, bf, xb_, yb_, act_, init.packs());
      }
      if (pointwise_ || depthwise_) return;
    }
    // Shapes known at compile time: build now, so run() only binds memory.
    const graph::TensorType& xt = init.input(0);
    const graph::TensorData* wc = init.constant(1);
    if (xt.dtype == DType::kFloat32 && xt.shape && graph::fully_known(*xt.shape) && dnnl_util::const_f32(wc)) {
      std::vector<int64_t> xd;
      for (const auto& d : *xt.shape) xd.push_back(d.value);
      WindowGeom g;
      if (conv_geom(attrs_, xd, wc->dims, &g).empty()) {
        const graph::TensorData* bc = init.has_input(2) ? init.constant(2) : nullptr;
        if (WinogradConv::applies(g) && (!init.has_input(2) || dnnl_util::const_f32(bc))) {
          wino_ = WinogradConv::make(g, dnnl_util::const_f32(wc), bc ? dnnl_util::const_f32(bc) : nullptr,
                                     static_cast<int>(xb_), static_cast<int>(yb_), init.packs());
          if (wino_) wino_dims_ = xd;
        }
        if (!wino_)
          cache_.put_static(xd, wc->dims, init.has_input(2),
                            build_conv(g, xd, wc->dims, init.has_input(2), dnnl_util::const_f32(wc), act_, sum_, xb_,
                                       yb_, true, init.packs()));
      }
    }
#endif
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const bool has_b = ctx.has_input(2) && ctx.input(2).data;
    const bool compiled = geom_ok_ && x.dims == geom_xd_ && w.dims == geom_wd_;
    WindowGeom g = geom_;
    if (!compiled) {
      const std::string err = conv_geom(attrs_, x.dims, w.dims, &g);
      if (!err.empty()) return ctx.fail("%s", err.c_str());
    }
    if (has_b && ctx.input(2).elements() != g.M) return ctx.fail("bias has %lld values, expected %lld",
                                                                  static_cast<long long>(ctx.input(2).elements()),
                                                                  static_cast<long long>(g.M));
    if (w.dtype != x.dtype || (has_b && ctx.input(2).dtype != x.dtype)) return ctx.fail("X, W and B types differ");
    if ((xb_ || yb_) && x.dims != static_dims_)
      return ctx.fail("blocked input of a shape other than the compiled one (internal error)");
    if (rb_ != yb_) return ctx.fail("the fused residual's layout differs from the output's (internal error)");
    Tensor* y = &ctx.output(0);
    if (compiled) {
      if (!y->data || y->dims != geom_od_) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, geom_od_, &y));
    } else {
      const std::vector<int64_t> od = geom_out_dims(g);
      if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
    }
    if (y->elements() == 0) return Status::Ok();
    const float* bf = has_b ? ctx.input(2).as<float>() : nullptr;
    const float* rf = nullptr;  // the fused residual (graph::fuse_conv_add)
    if (sum_) {
      if (!ctx.has_input(3) || ctx.input(3).dims != y->dims || ctx.input(3).dtype != DType::kFloat32 ||
          x.dtype != DType::kFloat32)
        return ctx.fail("the fused residual must be float32 of the output's shape (internal error)");
      rf = ctx.input(3).as<float>();
    }
    switch (x.dtype) {
      case DType::kFloat32:
        run_f32(g, x, w, x.as<float>(), w.as<float>(), bf, y->as<float>(), rf);
        return Status::Ok();
      case DType::kFloat64:
        if (!act_.op.empty()) return ctx.fail("fused activations are float32/float16 only (internal error)");
        conv_ref<double>(g, x.as<double>(), w.as<double>(), has_b ? ctx.input(2).as<double>() : nullptr,
                         y->as<double>());
        return Status::Ok();
      case DType::kFloat16:
      case DType::kBFloat16: {
        const std::vector<float> xf = load_as<float>(x), wf = load_as<float>(w);
        std::vector<float> bv = has_b ? load_as<float>(ctx.input(2)) : std::vector<float>();
        std::vector<float> yf(static_cast<size_t>(y->elements()));
        run_f32(g, x, w, xf.data(), wf.data(), has_b ? bv.data() : nullptr, yf.data());
        store_from(yf, *y);
        return Status::Ok();
      }
      default:
        return ctx.fail("unsupported type");
    }
  }

 private:
  // rp: the fused residual (nullptr without one); it may be yp itself (the
  // planner put the output over the residual's memory).
  void run_f32(const WindowGeom& g, const Tensor& x, const Tensor& w, const float* xp, const float* wp, const float* bp,
               float* yp, const float* rp = nullptr) const {
    const int64_t n = g.N * g.M * g.out_size();
    if (is_plane_1x1(g)) {
      // The packed W where these are the compiled shapes and float32 weights.
      const bool packed = gemv_ && x.dtype == DType::kFloat32 && x.dims == geom_xd_ && w.dims == geom_wd_;
      run_plane_1x1(g, xp, wp, packed ? gemv_.get() : nullptr, bp, yp, rp);
      return;
    }
#if OPENACL_HAVE_DNNL
    // Y's storage: more than n where its blocks pad the channels.
    const int64_t ny = yb_ ? g.N * ((g.M + yb_ - 1) / yb_ * yb_) * g.out_size() : n;
    if ((pointwise_ || depthwise_) && x.dims == geom_xd_ && w.dims == geom_wd_) {
      // built at compile time with the constant weights and bias
      if (pointwise_) pointwise_->run(xp, yp, rp);
      else depthwise_->run(xp, yp, rp);
      return;
    }
    if (wino_ && x.dims == wino_dims_) {  // built at compile time with the constant weights and bias
      wino_->run(xp, yp, rp, &act_);
      return;
    }
    // Constant weights may be prepacked from any run's copy (a float16
    // model's widened copy holds the same values every run).
    const std::shared_ptr<const ConvEntry> e = cache_.get(
        x.dims, w.dims, bp != nullptr,
        // Blocked X / Y only come with the compiled shape (checked in run), so
        // an entry built here (weights not constant: no entry at compile time)
        // takes the kernel's layouts.
        [&] { return build_conv(g, x.dims, w.dims, bp != nullptr, w_const_ ? wp : nullptr, act_, sum_, xb_, yb_); });
    if (e && e->ok) {
      if (rp && e->fused) {
        // The sum post-op adds what the output holds: the residual.
        if (rp != yp) parallel_for(ny, 1 << 15, [&](int64_t lo, int64_t hi) {
            std::memcpy(yp + lo, rp + lo, static_cast<size_t>(hi - lo) * sizeof(float));
          });
        run_conv_entry(*e, xp, wp, bp, yp);
        return;
      }
      if (!rp) {
        run_conv_entry(*e, xp, wp, bp, yp);
        if (!e->fused) act_.apply(yp, ny);
        return;
      }
      std::vector<float> conv(static_cast<size_t>(ny));  // no post-ops: conv, then + residual, then act
      run_conv_entry(*e, xp, wp, bp, conv.data());
      add_residual(conv.data(), rp, yp, ny);
      return;
    }
#endif
    (void)x, (void)w;
    if (xb_ || yb_) {  // the reference loops read and write plain: convert around them (oneDNN declined)
      std::vector<float> xpl(static_cast<size_t>(x.elements())), ypl(static_cast<size_t>(n)), rpl;
      if (xb_) blocked_to_plain(xp, xpl.data(), x.dims, xb_);
      else std::copy(xp, xp + x.elements(), xpl.data());
      const std::vector<int64_t> od = geom_out_dims(g);
      if (rp) {
        rpl.resize(static_cast<size_t>(n));
        if (yb_) blocked_to_plain(rp, rpl.data(), od, yb_);
        else std::copy(rp, rp + n, rpl.data());
      }
      run_ref(g, xpl.data(), wp, bp, ypl.data(), rp ? rpl.data() : nullptr, n);
      if (yb_) plain_to_blocked(ypl.data(), yp, od, yb_);
      else std::copy(ypl.begin(), ypl.end(), yp);
      return;
    }
    run_ref(g, xp, wp, bp, yp, rp, n);
  }

  // A convolution over a 1x1 plane with a 1x1 window and no padding (a
  // squeeze-excite gate's, or a classifier written as a Conv): per image, a
  // matrix-vector product of W [M, C] with the C channels, which lie
  // contiguous in every layout (blocked ones pad them to the block). Run by
  // GemvPacked where W is a float32 constant (else gemv_bt_rows) rather than
  // a oneDNN primitive, whose code generation took 0.2-0.5 ms of the load
  // for each such layer (LR-ASPP has sixteen); its kernel streamed W from
  // memory somewhat faster than gemv_bt_rows (0.065 against 0.095 ms for
  // 240 x 960: docs/graph-engine.md, "Convolutions over a 1x1 plane");
  // GemvPacked as fast or faster (672 x 168 from L3: 6.6 against 11.5 us).
  static bool is_plane_1x1(const WindowGeom& g) {
    for (int i = 0; i < kMaxSpatial; ++i)
      if (g.pb[i] != 0 || g.pe[i] != 0) return false;
    return g.G == 1 && g.in_size() == 1 && g.k_size() == 1 && g.out_size() == 1 && g.C > 0 && g.M > 0;
  }

  // y = act(W x + b + r) for each image; the padding lanes of a blocked Y
  // are zeros, as oneDNN leaves them (the next convolution multiplies them
  // by its zero-padded weights, so they must not be NaN or Inf). rp may be
  // yp. gemv: W packed (GemvPacked), or nullptr to read wp as it is.
  void run_plane_1x1(const WindowGeom& g, const float* xp, const float* wp, const GemvPacked* gemv, const float* bp,
                     float* yp, const float* rp) const {
    const int64_t M = g.M, C = g.C;
    const int64_t xs = xb_ ? (C + xb_ - 1) / xb_ * xb_ : C;  // one image's floats in X
    const int64_t ys = yb_ ? (M + yb_ - 1) / yb_ * yb_ : M;  // ... and in Y (and the residual)
    if (gemv) {
      for (int64_t img = 0; img < g.N; ++img) {
        float* y = yp + img * ys;
        const float* r = rp ? rp + img * ys : nullptr;
        if (r && r != y) std::memcpy(y, r, static_cast<size_t>(M) * sizeof(float));
        gemv->run(xp + img * xs, 1.f, r != nullptr, y);
        if (bp)
          for (int64_t m = 0; m < M; ++m) y[m] += bp[m];
        act_.apply_range(y, 0, M);
      }
    } else {
      parallel_for(g.N * M, std::max<int64_t>(16, 65536 / C), [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi;) {
          const int64_t img = i / M, m0 = i % M, m1 = std::min(M, m0 + (hi - i));
          float* y = yp + img * ys;
          const float* r = rp ? rp + img * ys : nullptr;
          if (r && r != y) std::memcpy(y + m0, r + m0, static_cast<size_t>(m1 - m0) * sizeof(float));
          gemv_bt_rows(xp + img * xs, wp, C, m0, m1, 1.f, r != nullptr, y);
          if (bp)
            for (int64_t m = m0; m < m1; ++m) y[m] += bp[m];
          act_.apply_range(y, m0, m1);
          i += m1 - m0;
        }
      });
    }
    if (ys > M)
      for (int64_t img = 0; img < g.N; ++img) std::fill(yp + img * ys + M, yp + (img + 1) * ys, 0.f);
  }

  void run_ref(const WindowGeom& g, const float* xp, const float* wp, const float* bp, float* yp, const float* rp,
               int64_t n) const {
    if (!rp) {
      conv_ref<float>(g, xp, wp, bp, yp);
      act_.apply(yp, n);
      return;
    }
    std::vector<float> conv(static_cast<size_t>(n));
    conv_ref<float>(g, xp, wp, bp, conv.data());
    add_residual(conv.data(), rp, yp, n);
  }

  // y = act(conv + r); y may be r.
  void add_residual(const float* conv, const float* rp, float* yp, int64_t n) const {
    parallel_for(n, 1 << 14, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) yp[i] = conv[i] + rp[i];
    });
    act_.apply(yp, n);
  }

  graph::AttributeMap attrs_;
  Activation act_;
  bool sum_ = false;  // input 3 is a fused residual (graph::fuse_conv_add)
  bool w_const_ = false;
  // Blocks of X, Y and the fused residual (blocked_layout.h; 0 = plain),
  // decided once here; blocked tensors have static shapes (static_dims_: X's).
  int64_t xb_ = 0, yb_ = 0, rb_ = 0;
  std::vector<int64_t> static_dims_;
  // The geometry of the compile-time shapes (geom_ok_: they were known and valid).
  bool geom_ok_ = false;
  WindowGeom geom_;
  std::vector<int64_t> geom_xd_, geom_wd_, geom_od_;
  std::shared_ptr<const GemvPacked> gemv_;  // a 1x1 plane's constant float32 W, packed (AVX-512)
#if OPENACL_HAVE_DNNL
  dnnl_util::ShapeCache<ConvEntry> cache_;
  std::shared_ptr<const Conv1x1> pointwise_;  // 1x1 stride-1 layers over blocked X and Y, constant W (and B)
  std::shared_ptr<const ConvDepthwise> depthwise_;  // depthwise layers over 16-blocks, constant W (and B)
  std::shared_ptr<const WinogradConv> wino_;  // 3x3 stride-1 layers with constant W (and B)
  std::vector<int64_t> wino_dims_;            // the input dims it was built for
#endif
};

Status make_conv(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  *out = make_any_conv(init);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Kernel> make_plain_conv(const KernelInit& init) { return std::make_unique<ConvKernel>(init); }

std::unique_ptr<Kernel> make_any_conv(const KernelInit& init) {
  if (init.attrs().has(graph::kFusedProjectAttr)) return make_conv_block(init);
  if (init.attrs().has(graph::kFusedDwStrideAttr)) return make_conv_depthwise(init);
  return make_plain_conv(init);
}

namespace {

// Output 0 may take over input 3's memory (the fused residual, when it dies here).
OPENACL_REGISTER_KERNEL(Conv, "cpu").types(float_types()).in_place(3, 0).create(make_conv);

}  // namespace
}  // namespace openacl::kernels::cpu
